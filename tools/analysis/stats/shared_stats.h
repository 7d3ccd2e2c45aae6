/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Order statistics (order_stats.h) fed by several threads at once: the
 * workers of --jobs, each reading a share of a log's threads, send
 * (item, value) pairs in chunks, an item being a number of the worker's
 * own (its function's index, say).  At an item's first chunk, the store
 * asks the worker for the item's key (its function id, say), which gives
 * it its set: every worker's items of one key share a set, numbered in
 * the order the store first saw them.  A worker remembers its items'
 * sets, so a chunk costs the store one lock, not a lookup per value.
 */
#ifndef XRAYFDR_TOOLS_SHARED_STATS_H
#define XRAYFDR_TOOLS_SHARED_STATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "order_stats.h"
#include "table.h"

struct shared_stats {
	pthread_mutex_t lock;
	/* a worker writing full keys to the file, outside the lock */
	pthread_mutex_t spill_lock;
	struct order_stats *stats;
	struct table sets; /* key -> set; the items are the keys */
	bool failed; /* an add failed: the answers are not to be used */
};

/* @memory: order_stats_new()'s.  0 or -ENOMEM. */
int shared_stats_init(struct shared_stats *s, size_t memory);
void shared_stats_free(struct shared_stats *s);

/* Sets so far, and the key of each. */
uint32_t shared_stats_nsets(const struct shared_stats *s);
uint64_t shared_stats_key(const struct shared_stats *s, uint32_t set);

/* The store's order statistics, which the caller owns from then on. */
struct order_stats *shared_stats_take(struct shared_stats *s);

#define STATS_FEED_CHUNK 4096

/* One worker's way into the store. */
struct stats_feed {
	struct shared_stats *to;
	uint64_t (*key)(void *ctx, uint32_t item);
	void *ctx;
	uint32_t *set_of; /* by item; UINT32_MAX: none yet */
	uint32_t cap;
	size_t n;
	uint32_t item[STATS_FEED_CHUNK];
	uint64_t value[STATS_FEED_CHUNK];
};

/* NULL if out of memory. */
struct stats_feed *stats_feed_new(struct shared_stats *to,
				  uint64_t (*key)(void *ctx, uint32_t item),
				  void *ctx);
void stats_feed_free(struct stats_feed *f);

/* The chunk into the store: 0, or -EIO if the store failed (its
 * answers are not to be used). */
int stats_feed_flush(struct stats_feed *f);

static inline int stats_feed_add(struct stats_feed *f, uint32_t item,
				 uint64_t value)
{
	f->item[f->n] = item;
	f->value[f->n++] = value;
	return f->n == STATS_FEED_CHUNK ? stats_feed_flush(f) : 0;
}

/* @item's set, once a chunk with it was flushed; else UINT32_MAX. */
static inline uint32_t stats_feed_set(const struct stats_feed *f, uint32_t item)
{
	return item < f->cap ? f->set_of[item] : UINT32_MAX;
}

#endif
