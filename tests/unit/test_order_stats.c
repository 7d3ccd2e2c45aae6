// SPDX-License-Identifier: GPL-2.0-only
/* Order statistics in memory and through the external sort, against a
 * plain sort of the same values. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "../../tools/analysis/stats/order_stats.h"

#define NSETS 40
#define MAX_VALUES 20000

struct model {
	uint64_t *values[NSETS];
	size_t n[NSETS];
	unsigned int visits, wrong;
	uint64_t last_rank[NSETS];
	uint32_t last_set;
	uint32_t stride; /* set i is added as i * stride */
};

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The first, last, median and percentiles, and a repeat. */
static unsigned int ranks(void *ctx, uint32_t set, uint64_t count,
			  uint64_t *out)
{
	(void)ctx;
	(void)set;
	out[0] = count - 1;
	out[1] = count / 2;
	out[2] = count * 9 / 10;
	out[3] = count * 99 / 100;
	out[4] = 0;
	out[5] = count / 2;
	return 6;
}

static void visit(void *ctx, uint32_t set, uint64_t rank, uint64_t value)
{
	struct model *m = ctx;

	m->visits++;
	if (set % m->stride)
		m->wrong++;
	set /= m->stride;
	/* sets ascending, ranks ascending and distinct within a set */
	if (set < m->last_set ||
	    (m->last_rank[set] && rank + 1 <= m->last_rank[set]))
		m->wrong++;
	m->last_set = set;
	m->last_rank[set] = rank + 1;
	if (set >= NSETS || rank >= m->n[set] || m->values[set][rank] != value)
		m->wrong++;
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Value i of set @set: each set its own shape, some beyond 2^40. */
static uint64_t value_of(uint32_t set, size_t i, size_t n, uint64_t *rnd)
{
	switch (set % 8) {
	case 0:
		return i; /* ascending */
	case 1:
		return n - i; /* descending */
	case 2:
		return 7; /* all equal */
	case 3:
		return i < n / 2 ? i : n - i; /* organ pipe */
	case 4:
		return next_random(rnd) % 5; /* few distinct */
	case 5:
		return (1ull << 40) + next_random(rnd) % 1000; /* large */
	case 6:
		return next_random(rnd) % 3 ? next_random(rnd) % 100 :
					      (1ull << 41) - i; /* mixed */
	default: /* every length, from 1 to 64 bits */
		return next_random(rnd) >> i % 64;
	}
}

/* As a caller of order_stats_defer_spills() does, with no lock to let go:
 * the full keys written, their array given back, the value added again */
static int add_deferred(struct order_stats *s, uint32_t set, uint64_t value,
			unsigned int *spills)
{
	int ret = order_stats_add(s, set, value);

	while (ret == -ENOBUFS) {
		struct order_stats_keys k;

		order_stats_take_keys(s, &k);
		assert_true(k.n > 0);
		ret = order_stats_spill_keys(s, &k);
		order_stats_return_keys(s, &k);
		++*spills;
		if (!ret)
			ret = order_stats_add(s, set, value);
	}
	return ret;
}

static void check_all(size_t memory, uint32_t stride, unsigned int jobs,
		      bool defer)
{
	struct order_stats *s = order_stats_new(memory);
	unsigned int spills = 0;
	struct model m = { .stride = stride };
	uint64_t rnd = 88172645463325252ull;
	unsigned int want_visits = 0;

	assert_non_null(s);
	order_stats_jobs(s, jobs);
	if (defer)
		order_stats_defer_spills(s);
	for (uint32_t set = 0; set < NSETS; set++) {
		/* set 13 stays empty: it is skipped */
		m.n[set] = set == 13 ? 0 : 1 + next_random(&rnd) % MAX_VALUES;
		m.values[set] = malloc((m.n[set] + 1) * sizeof(uint64_t));
		assert_non_null(m.values[set]);
		for (size_t i = 0; i < m.n[set]; i++)
			m.values[set][i] = value_of(set, i, m.n[set], &rnd);
	}
	/* added interleaved across sets, as calls end */
	for (size_t i = 0; i < MAX_VALUES; i++)
		for (uint32_t set = 0; set < NSETS; set++)
			if (i < m.n[set])
				assert_int_equal(add_deferred(s, set * stride,
							      m.values[set][i],
							      &spills),
						 0);
	for (uint32_t set = 0; set < NSETS; set++) {
		uint64_t r[ORDER_STATS_MAX_RANKS], n = m.n[set];
		unsigned int k = 0;

		qsort(m.values[set], n, sizeof(uint64_t), cmp_u64);
		if (!n)
			continue;
		ranks(NULL, set, n, r);
		qsort(r, 6, sizeof(*r), cmp_u64);
		for (unsigned int i = 0; i < 6; i++)
			k += !i || r[i] != r[i - 1];
		want_visits += k;
	}
	/* deferred, the file takes the keys in several writes */
	if (defer)
		assert_true(spills >= 2);
	assert_int_equal(order_stats_select(s, ranks, visit, &m), 0);
	assert_int_equal(m.wrong, 0);
	assert_int_equal(m.visits, want_visits);
	for (uint32_t set = 0; set < NSETS; set++)
		free(m.values[set]);
	order_stats_free(s);
}

static void check_jobs(size_t memory, uint32_t stride, unsigned int jobs)
{
	check_all(memory, stride, jobs, false);
}

static void check(size_t memory, uint32_t stride)
{
	check_jobs(memory, stride, 1);
}

static void test_in_memory(void **state)
{
	(void)state;
	check(256u << 20, 1);
}

/* Memory runs out part way, too small for the sets' histograms:
 * everything goes through the sort. */
static void test_spilled(void **state)
{
	(void)state;
	check(64u << 10, 1);
}

/* Memory runs out part way, with room for the histograms: the keys go to
 * a file and the wanted buckets are read back; with 1 MiB, more of them
 * than fit, which go through the sort in turn. */
static void test_bucketed(void **state)
{
	(void)state;
	check(4u << 20, 1);
	check(1u << 20, 1);
	/* set numbers past 255, so that the file's keys take two bytes */
	check(4u << 20, 9);
}

/* The file read back by two threads, cut at a place a key begins
 * (several spills at these sizes); at the smallest, a half's buckets
 * outgrow its half of the memory and one thread reads it all again. */
static void test_bucketed_two_threads(void **state)
{
	(void)state;
	check_jobs(2u << 20, 1, 2);
	check_jobs(1u << 20, 1, 2);
	check_jobs(512u << 10, 1, 2);
	check_jobs(2u << 20, 9, 2);
	check_jobs(1u << 20, 9, 3);
}

/* Full keys written by the caller (order_stats_defer_spills()), read
 * back by one thread and by two. */
static void test_deferred_spills(void **state)
{
	(void)state;
	check_all(2u << 20, 1, 1, true);
	check_all(4u << 20, 9, 2, true);
}

static void test_bad_set(void **state)
{
	struct order_stats *s = order_stats_new(1u << 20);

	(void)state;
	assert_int_equal(order_stats_add(s, ORDER_STATS_MAX_SETS, 1), -E2BIG);
	order_stats_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_memory),
		cmocka_unit_test(test_spilled),
		cmocka_unit_test(test_bucketed),
		cmocka_unit_test(test_bucketed_two_threads),
		cmocka_unit_test(test_deferred_spills),
		cmocka_unit_test(test_bad_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
