/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Exact order statistics (medians, percentiles) of many sets of values
 * (durations per function, per edge...) in bounded memory.  Short values
 * of the first sets are counted in a row of counts per set; the others
 * are kept in RAM while they fit in the memory given, and the asked-for
 * ranks of each set are found by selection, in time linear in the values;
 * past that, they go through the external sort (sorter.h) keyed by set
 * then value, and are read back set by set in ascending order.  Either
 * way the answers are the same exact values.
 */
#ifndef XRAYFDR_TOOLS_ORDER_STATS_H
#define XRAYFDR_TOOLS_ORDER_STATS_H

#include <stddef.h>
#include <stdint.h>

#define ORDER_STATS_MAX_SETS (1u << 24)

struct order_stats;

/* @memory: RAM for the sort (sorter_new()). */
struct order_stats *order_stats_new(size_t memory);
void order_stats_free(struct order_stats *s);

/* Let order_stats_select() read a temporary file back with up to @jobs
 * threads (1 by default). */
void order_stats_jobs(struct order_stats *s, unsigned int jobs);

/*
 * For a caller that adds under a lock of its own, with other threads
 * waiting on it: where memory is full and the keys would be written to
 * the temporary file, order_stats_add() adds nothing and returns
 * -ENOBUFS; the caller takes the keys (order_stats_take_keys()) under its
 * lock, writes them (order_stats_spill_keys()) outside it, one thread at
 * a time, and adds again.  The keys in RAM are then at most half as many,
 * so that two arrays take the memory one took.
 */
struct order_stats_keys {
	uint64_t *keys;
	size_t n, bytes;
	uint32_t nsets;
};

void order_stats_defer_spills(struct order_stats *s);
void order_stats_take_keys(struct order_stats *s, struct order_stats_keys *k);
/* 0 or -errno (order_stats_why() says why); the keys are written either
 * way, and their array is to be given back (under the caller's lock). */
int order_stats_spill_keys(struct order_stats *s, struct order_stats_keys *k);
void order_stats_return_keys(struct order_stats *s, struct order_stats_keys *k);

/* Add @value to set @set (< ORDER_STATS_MAX_SETS).  0 or -errno. */
int order_stats_add(struct order_stats *s, uint32_t set, uint64_t value);

#define ORDER_STATS_MAX_RANKS 8

/*
 * For each set with values, in increasing set number: ask @ranks which
 * ranks (counting from 0, each < @count, at most ORDER_STATS_MAX_RANKS,
 * in any order, repeats allowed) of its @count values are wanted, then
 * call @visit once for each distinct one, in ascending rank order, with
 * the value at that rank.  0 or -errno.
 */
int order_stats_select(struct order_stats *s,
		       unsigned int (*ranks)(void *ctx, uint32_t set,
					     uint64_t count, uint64_t *out),
		       void (*visit)(void *ctx, uint32_t set, uint64_t rank,
				     uint64_t value),
		       void *ctx);

/* What went wrong with the temporary files, or "". */
const char *order_stats_error(const struct order_stats *s);

/* Why a call that returned @err failed: the temporary files' problem, or
 * @err's text. */
const char *order_stats_why(const struct order_stats *s, int err);

#endif
