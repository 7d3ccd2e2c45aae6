/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small open-addressing hash map from 64-bit keys to pointers, for the
 * per-thread state of the reader and the writer (key: pid << 32 | tid).
 */
#ifndef XRAYFDR_LIB_UTIL_U64MAP_H
#define XRAYFDR_LIB_UTIL_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map_slot {
	uint64_t key;
	void *value; /* NULL marks an empty slot */
};

struct u64map {
	struct u64map_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t count;
};

void *u64map_get(const struct u64map *m, uint64_t key);
/* Insert or replace; @value must not be NULL.  Return 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, void *value);
/* Remove @key; return its value or NULL. */
void *u64map_del(struct u64map *m, uint64_t key);
/* Visit every value (in no particular order); stop early if @fn returns
 * non-zero and return that. */
int u64map_each(const struct u64map *m, int (*fn)(void *ctx, void *value),
		void *ctx);
void u64map_free(struct u64map *m);
/* u64map_free() of a map whose values each came from malloc(), and are
 * freed too. */
void u64map_free_values(struct u64map *m);

static inline uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

#endif
