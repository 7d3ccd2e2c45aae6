// SPDX-License-Identifier: GPL-2.0-only
/*
 * Order statistics; see order_stats.h.
 *
 * In RAM: each value with its set, grouped by set at the end (a counting
 * sort on the set) and the wanted ranks found by quickselect.
 *
 * Past the memory given, through the external sort: the key is the set
 * number in the top 24 bits and the value in the low 40, so values up to
 * 2^40 (nine minutes of a 2 GHz TSC) sort by the key alone and travel
 * without bytes; larger ones carry their exact value and are put in order
 * within their set when read back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "order_stats.h"
#include "sorter.h"

#define VALUE_BITS 40
#define VALUE_SAT ((1ull << VALUE_BITS) - 1)

/* RAM per value in memory: its set, its value, and its grouped copy */
#define BYTES_PER_VALUE (sizeof(uint32_t) + 2 * sizeof(uint64_t))

struct order_stats {
	size_t memory;
	struct sorter *sorter; /* once the values do not fit in memory */
	uint32_t *sets;
	uint64_t *values;
	size_t n, cap;
	uint64_t *counts; /* values per set */
	uint32_t nsets, counts_cap;
};

struct order_stats *order_stats_new(size_t memory)
{
	struct order_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->memory = memory;
	return s;
}

void order_stats_free(struct order_stats *s)
{
	if (!s)
		return;
	sorter_free(s->sorter);
	free(s->sets);
	free(s->values);
	free(s->counts);
	free(s);
}

const char *order_stats_error(const struct order_stats *s)
{
	return s->sorter ? sorter_error(s->sorter) : "";
}

const char *order_stats_why(const struct order_stats *s, int err)
{
	return *order_stats_error(s) ? order_stats_error(s) : strerror(-err);
}

static int sort_add(struct order_stats *s, uint32_t set, uint64_t value)
{
	uint64_t key = (uint64_t)set << VALUE_BITS |
		       (value < VALUE_SAT ? value : VALUE_SAT);

	return sorter_add(s->sorter, key, &value, value < VALUE_SAT ? 0 : 8);
}

/* Memory is full: every value so far, and all later, to the sorter. */
static int spill(struct order_stats *s)
{
	int ret = 0;

	s->sorter = sorter_new(s->memory);
	if (!s->sorter)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && !ret; i++)
		ret = sort_add(s, s->sets[i], s->values[i]);
	free(s->sets);
	free(s->values);
	s->sets = NULL;
	s->values = NULL;
	s->n = s->cap = 0;
	return ret;
}

static int count_value(struct order_stats *s, uint32_t set)
{
	if (set >= s->counts_cap) {
		uint32_t cap = s->counts_cap ? s->counts_cap : 64;
		uint64_t *c;

		while (cap <= set)
			cap *= 2;
		c = realloc(s->counts, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		memset(c + s->counts_cap, 0,
		       (cap - s->counts_cap) * sizeof(*c));
		s->counts = c;
		s->counts_cap = cap;
	}
	if (set >= s->nsets)
		s->nsets = set + 1;
	s->counts[set]++;
	return 0;
}

int order_stats_add(struct order_stats *s, uint32_t set, uint64_t value)
{
	int ret;

	if (set >= ORDER_STATS_MAX_SETS)
		return -E2BIG;
	ret = count_value(s, set);
	if (ret)
		return ret;
	if (s->sorter)
		return sort_add(s, set, value);
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint32_t *sets;
		uint64_t *values;

		if (cap * BYTES_PER_VALUE > s->memory) {
			cap = s->memory / BYTES_PER_VALUE;
			if (cap <= s->n) {
				ret = spill(s);
				return ret ? ret : sort_add(s, set, value);
			}
		}
		sets = realloc(s->sets, cap * sizeof(*sets));
		if (!sets)
			return -ENOMEM;
		s->sets = sets;
		values = realloc(s->values, cap * sizeof(*values));
		if (!values)
			return -ENOMEM;
		s->values = values;
		s->cap = cap;
	}
	s->sets[s->n] = set;
	s->values[s->n++] = value;
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/*
 * Put the @k-th smallest of v[0..n) at v[k], smaller ones before it and
 * larger ones after (quickselect; a median of three picks the pivot).
 * Inputs that defeat the pivot get sorted instead, so time stays
 * O(n log n) at worst.
 */
static void select_nth(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	unsigned int rounds = 32;

	for (size_t m = n; m; m >>= 1)
		rounds += 2;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i, j;
		uint64_t pivot;

		if (v[mid] < v[lo])
			swap(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap(&v[hi], &v[mid]);
		if (!rounds--) {
			qsort(v + lo, hi - lo + 1, sizeof(*v), cmp_u64);
			return;
		}
		pivot = v[mid];
		/* Hoare's partition: [lo, j] <= pivot <= [j + 1, hi] */
		i = lo - 1;
		j = hi + 1;
		for (;;) {
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			swap(&v[i], &v[j]);
		}
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
}

/* The distinct ranks @ranks wants of @set, ascending; how many. */
static unsigned int
wanted_ranks(unsigned int (*ranks)(void *ctx, uint32_t set, uint64_t count,
				   uint64_t *out),
	     void *ctx, uint32_t set, uint64_t count, uint64_t *out)
{
	unsigned int n = ranks(ctx, set, count, out), k = 0;

	if (n > ORDER_STATS_MAX_RANKS)
		n = ORDER_STATS_MAX_RANKS;
	qsort(out, n, sizeof(*out), cmp_u64);
	for (unsigned int i = 0; i < n; i++)
		if (out[i] < count && (!k || out[i] != out[k - 1]))
			out[k++] = out[i];
	return k;
}

static int select_in_memory(struct order_stats *s,
			    unsigned int (*ranks)(void *ctx, uint32_t set,
						  uint64_t count,
						  uint64_t *out),
			    void (*visit)(void *ctx, uint32_t set,
					  uint64_t rank, uint64_t value),
			    void *ctx)
{
	uint64_t *grouped = malloc((s->n + 1) * sizeof(*grouped));
	uint64_t *at = calloc(s->nsets + 1, sizeof(*at));
	uint64_t want[ORDER_STATS_MAX_RANKS], pos = 0;

	if (!grouped || !at) {
		free(grouped);
		free(at);
		return -ENOMEM;
	}
	for (uint32_t set = 0; set < s->nsets; set++) {
		at[set] = pos;
		pos += s->counts[set];
	}
	for (size_t i = 0; i < s->n; i++)
		grouped[at[s->sets[i]]++] = s->values[i];
	pos = 0;
	for (uint32_t set = 0; set < s->nsets; set++) {
		uint64_t n = s->counts[set], *v = grouped + pos, done = 0;
		unsigned int k;

		pos += n;
		if (!n)
			continue;
		k = wanted_ranks(ranks, ctx, set, n, want);
		/* each selection leaves the larger values after its rank */
		for (unsigned int i = 0; i < k; i++) {
			select_nth(v + done, n - done, want[i] - done);
			visit(ctx, set, want[i], v[want[i]]);
			done = want[i];
		}
	}
	free(grouped);
	free(at);
	return 0;
}

/* Through the external sort: every value in order, the wanted ones
 * visited. */
static int select_sorted(struct order_stats *s,
			 unsigned int (*ranks)(void *ctx, uint32_t set,
					       uint64_t count, uint64_t *out),
			 void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				       uint64_t value),
			 void *ctx)
{
	uint64_t key, rank = 0, *big = NULL, want[ORDER_STATS_MAX_RANKS];
	size_t nbig = 0, bigcap = 0, len;
	unsigned int nwant = 0, next = 0;
	uint32_t set = 0;
	bool have = false;
	const void *data;
	int ret = sorter_finish(s->sorter);

	while (!ret) {
		ret = sorter_next(s->sorter, &key, &data, &len);
		if (ret < 0)
			break;
		if (ret == 0 || !have || key >> VALUE_BITS != set) {
			/* the set's large values, in order, after the others */
			if (nbig) {
				qsort(big, nbig, sizeof(*big), cmp_u64);
				for (size_t i = 0; i < nbig; i++, rank++)
					if (next < nwant && want[next] == rank)
						visit(ctx, set, want[next++],
						      big[i]);
			}
			nbig = 0;
			rank = 0;
			if (ret == 0)
				break;
			set = (uint32_t)(key >> VALUE_BITS);
			have = true;
			nwant = wanted_ranks(ranks, ctx, set, s->counts[set],
					     want);
			next = 0;
		}
		ret = 0;
		if ((key & VALUE_SAT) == VALUE_SAT && len == 8) {
			if (nbig == bigcap) {
				size_t cap = bigcap ? 2 * bigcap : 16;
				uint64_t *n = realloc(big, cap * sizeof(*n));

				if (!n) {
					ret = -ENOMEM;
					break;
				}
				big = n;
				bigcap = cap;
			}
			memcpy(&big[nbig++], data, 8);
			continue;
		}
		if (next < nwant && want[next] == rank)
			visit(ctx, set, want[next++], key & VALUE_SAT);
		rank++;
	}
	free(big);
	return ret;
}

int order_stats_select(struct order_stats *s,
		       unsigned int (*ranks)(void *ctx, uint32_t set,
					     uint64_t count, uint64_t *out),
		       void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				     uint64_t value),
		       void *ctx)
{
	if (s->sorter)
		return select_sorted(s, ranks, visit, ctx);
	return select_in_memory(s, ranks, visit, ctx);
}
