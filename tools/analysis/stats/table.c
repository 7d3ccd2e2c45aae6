// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include "table.h"

/* Where @key's slot is found next time. */
static void remember(struct table *t, uint64_t key, struct table_slot *s)
{
	if (key >= TABLE_DIRECT_KEYS) {
		unsigned int line = table_cache_line(key);

		t->cache[line].key = key;
		t->cache[line].slot = s;
		return;
	}
	/* without it, small keys are hashed as the others */
	if (!t->direct)
		t->direct = calloc(TABLE_DIRECT_KEYS, sizeof(*t->direct));
	if (t->direct)
		t->direct[key] = s;
}

void *table_get_slow(struct table *t, uint64_t key, uint32_t *index,
		     bool *created)
{
	struct table_slot *s = u64map_get(&t->map, key);

	if (created)
		*created = !s;
	if (s) {
		remember(t, key, s);
		*index = s->index;
		return s->align;
	}
	if (t->max && t->n >= t->max)
		return NULL;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		void **n = realloc(t->items, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->items = n;
		t->cap = cap;
	}
	s = calloc(1, sizeof(*s) + t->item_size);
	if (!s || u64map_put(&t->map, key, s)) {
		free(s);
		return NULL;
	}
	s->index = t->n;
	remember(t, key, s);
	t->items[t->n] = s->align;
	*index = t->n++;
	return s->align;
}

static int free_slot(void *ctx, void *value)
{
	(void)ctx;
	free(value);
	return 0;
}

void table_free(struct table *t)
{
	u64map_each(&t->map, free_slot, NULL);
	u64map_free(&t->map);
	free(t->items);
	t->items = NULL;
	t->n = t->cap = 0;
	memset(t->cache, 0, sizeof(t->cache));
	free(t->direct);
	t->direct = NULL;
}
