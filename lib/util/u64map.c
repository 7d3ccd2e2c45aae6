// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Fibonacci hashing spreads sequential thread ids across slots. */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].value)
			return NULL;
		if (m->slots[i].key == key)
			return m->slots[i].value;
	}
}

static int grow(struct u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	struct u64map_slot *slots = calloc(cap, sizeof(*slots));
	struct u64map_slot *old = m->slots;
	size_t old_cap = m->cap;

	if (!slots)
		return -ENOMEM;
	m->slots = slots;
	m->cap = cap;
	m->count = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].value)
			u64map_put(m, old[i].key, old[i].value);
	free(old);
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, void *value)
{
	size_t i;

	/* Keep the load factor under 3/4 so probes stay short. */
	if ((m->count + 1) * 4 > m->cap * 3) {
		int err = grow(m);

		if (err)
			return err;
	}
	for (i = slot_of(key, m->cap); m->slots[i].value;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			m->slots[i].value = value;
			return 0;
		}
	}
	m->slots[i].key = key;
	m->slots[i].value = value;
	m->count++;
	return 0;
}

void *u64map_del(struct u64map *m, uint64_t key)
{
	size_t i, j;
	void *value;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].value)
			return NULL;
		if (m->slots[i].key == key)
			break;
	}
	value = m->slots[i].value;
	m->slots[i].value = NULL;
	m->count--;
	/* Backward-shift the rest of the cluster so lookups stay correct. */
	for (j = (i + 1) & (m->cap - 1); m->slots[j].value;
	     j = (j + 1) & (m->cap - 1)) {
		size_t home = slot_of(m->slots[j].key, m->cap);

		/* Move j into the hole at i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			m->slots[j].value = NULL;
			i = j;
		}
	}
	return value;
}

int u64map_each(const struct u64map *m, int (*fn)(void *ctx, void *value),
		void *ctx)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].value) {
			int ret = fn(ctx, m->slots[i].value);

			if (ret)
				return ret;
		}
	}
	return 0;
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
	m->count = 0;
}

void u64map_free_values(struct u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].value);
	u64map_free(m);
}
