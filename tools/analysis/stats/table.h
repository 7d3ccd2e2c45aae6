/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A table of records found by a 64-bit key (a thread, a function, an
 * edge) and numbered 0, 1, ... in the order they were created, which the
 * analyses need to reproduce llvm-xray's orders.
 */
#ifndef XRAYFDR_TOOLS_TABLE_H
#define XRAYFDR_TOOLS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../../lib/util/u64map.h"

/* The record's number lives right before it. */
struct table_slot {
	uint32_t index;
	uint64_t align[];
};

/* Direct-mapped, in front of the map: analyses look up a few hot keys. */
#define TABLE_CACHE_SLOTS 256

/* Keys below this (function ids) are found by indexing an array made at
 * the first of them, not by hashing: a lookup per call adds up. */
#define TABLE_DIRECT_KEYS 65536u

struct table {
	size_t item_size;
	uint32_t max; /* most records it may hold; 0: no limit */
	struct u64map map;
	void **items;
	uint32_t n, cap;
	struct {
		uint64_t key;
		struct table_slot *slot;
	} cache[TABLE_CACHE_SLOTS];
	struct table_slot **direct; /* TABLE_DIRECT_KEYS of them, or NULL */
};

static inline void table_init(struct table *t, size_t item_size, uint32_t max)
{
	*t = (struct table){ .item_size = item_size, .max = max };
}

/*
 * The record of @key, created zeroed (and *created set) if absent; its
 * number in *index.  NULL if out of memory or full.
 */
void *table_get_slow(struct table *t, uint64_t key, uint32_t *index,
		     bool *created);

static inline unsigned int table_cache_line(uint64_t key)
{
	/* Fibonacci hashing: the top bits depend on every bit of the key */
	return (unsigned int)(key * 0x9e3779b97f4a7c15ull >> 56) &
	       (TABLE_CACHE_SLOTS - 1);
}

/* The slot of @key where the direct array or the cache has it, else
 * NULL (table_get_slow() looks further). */
static inline struct table_slot *table_cached(const struct table *t,
					      uint64_t key)
{
	unsigned int line;

	if (key < TABLE_DIRECT_KEYS)
		return t->direct ? t->direct[key] : NULL;
	line = table_cache_line(key);
	return t->cache[line].key == key ? t->cache[line].slot : NULL;
}

/* The record of @key if the direct array or the cache holds it, else
 * NULL: for a caller's fast path in front of table_get(). */
static inline void *table_find_cached(const struct table *t, uint64_t key)
{
	struct table_slot *s = table_cached(t, key);

	return s ? s->align : NULL;
}

static inline void *table_get(struct table *t, uint64_t key, uint32_t *index,
			      bool *created)
{
	struct table_slot *s = table_cached(t, key);

	if (s) {
		if (created)
			*created = false;
		*index = s->index;
		return s->align;
	}
	return table_get_slow(t, key, index, created);
}

static inline void *table_at(const struct table *t, uint32_t i)
{
	return t->items[i];
}

void table_free(struct table *t);

#endif
