// SPDX-License-Identifier: GPL-2.0-only
/*
 * Order statistics through the external sort; see order_stats.h.  The
 * sort key is the set number in the top 24 bits and the value in the low
 * 40: values up to 2^40 (nine minutes of a 2 GHz TSC) sort by the key
 * alone and travel without bytes; larger ones carry their exact value and
 * are put in order within their set when read back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "order_stats.h"
#include "sorter.h"

#define VALUE_BITS 40
#define VALUE_SAT ((1ull << VALUE_BITS) - 1)

struct order_stats {
	struct sorter *sorter;
};

struct order_stats *order_stats_new(size_t memory)
{
	struct order_stats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->sorter = sorter_new(memory);
	if (!s->sorter) {
		free(s);
		return NULL;
	}
	return s;
}

void order_stats_free(struct order_stats *s)
{
	if (!s)
		return;
	sorter_free(s->sorter);
	free(s);
}

const char *order_stats_error(const struct order_stats *s)
{
	return sorter_error(s->sorter);
}

const char *order_stats_why(const struct order_stats *s, int err)
{
	return *sorter_error(s->sorter) ? sorter_error(s->sorter) :
					  strerror(-err);
}

int order_stats_add(struct order_stats *s, uint32_t set, uint64_t value)
{
	uint64_t key = (uint64_t)set << VALUE_BITS |
		       (value < VALUE_SAT ? value : VALUE_SAT);

	if (set >= ORDER_STATS_MAX_SETS)
		return -E2BIG;
	return sorter_add(s->sorter, key, &value, value < VALUE_SAT ? 0 : 8);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int order_stats_walk(struct order_stats *s,
		     void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				   uint64_t value),
		     void *ctx)
{
	uint64_t key, rank = 0, *big = NULL;
	size_t nbig = 0, bigcap = 0, len;
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
				for (size_t i = 0; i < nbig; i++)
					visit(ctx, set, rank++, big[i]);
			}
			nbig = 0;
			rank = 0;
			if (ret == 0)
				break;
			set = (uint32_t)(key >> VALUE_BITS);
			have = true;
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
		visit(ctx, set, rank++, key & VALUE_SAT);
	}
	free(big);
	return ret;
}
