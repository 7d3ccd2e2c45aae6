// SPDX-License-Identifier: GPL-2.0-only
/* Order statistics fed by several threads; see shared_stats.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared_stats.h"

int shared_stats_init(struct shared_stats *s, size_t memory)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->spill_lock, NULL);
	table_init(&s->sets, sizeof(uint64_t), ORDER_STATS_MAX_SETS);
	s->stats = order_stats_new(memory);
	if (!s->stats)
		return -ENOMEM;
	order_stats_defer_spills(s->stats);
	return 0;
}

void shared_stats_free(struct shared_stats *s)
{
	order_stats_free(s->stats);
	table_free(&s->sets);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->spill_lock);
	memset(s, 0, sizeof(*s));
}

uint32_t shared_stats_nsets(const struct shared_stats *s)
{
	return s->sets.n;
}

uint64_t shared_stats_key(const struct shared_stats *s, uint32_t set)
{
	return *(const uint64_t *)table_at(&s->sets, set);
}

struct order_stats *shared_stats_take(struct shared_stats *s)
{
	struct order_stats *o = s->stats;

	s->stats = NULL;
	return o;
}

struct stats_feed *stats_feed_new(struct shared_stats *to,
				  uint64_t (*key)(void *ctx, uint32_t item),
				  void *ctx)
{
	struct stats_feed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->to = to;
	f->key = key;
	f->ctx = ctx;
	return f;
}

void stats_feed_free(struct stats_feed *f)
{
	if (!f)
		return;
	free(f->set_of);
	free(f);
}

/* @item's set (under the store's lock): 0 or -ENOMEM. */
static int set_of(struct stats_feed *f, uint32_t item, uint32_t *set)
{
	if (item >= f->cap) {
		uint32_t cap = item + 1 > 2 * f->cap ? item + 64 : 2 * f->cap;
		uint32_t *p = realloc(f->set_of, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + f->cap, 0xff, (cap - f->cap) * sizeof(*p));
		f->set_of = p;
		f->cap = cap;
	}
	if (f->set_of[item] == UINT32_MAX) {
		uint64_t key = f->key(f->ctx, item), *k;
		bool created;

		k = table_get(&f->to->sets, key, &f->set_of[item], &created);
		if (!k)
			return -ENOMEM;
		*k = key;
	}
	*set = f->set_of[item];
	return 0;
}

/* Under the store's lock: its full keys to the file, with the lock let
 * go meanwhile, so that the other workers go on adding. */
static int spill_unlocked(struct shared_stats *s)
{
	struct order_stats_keys k;
	int ret;

	order_stats_take_keys(s->stats, &k);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->spill_lock);
	ret = order_stats_spill_keys(s->stats, &k);
	pthread_mutex_unlock(&s->spill_lock);
	pthread_mutex_lock(&s->lock);
	order_stats_return_keys(s->stats, &k);
	return ret;
}

int stats_feed_flush(struct stats_feed *f)
{
	struct shared_stats *s = f->to;
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < f->n && !ret && !s->failed; i++) {
		uint32_t set = 0;

		ret = set_of(f, f->item[i], &set);
		if (!ret)
			ret = order_stats_add(s->stats, set, f->value[i]);
		/* another worker may fill the next array meanwhile */
		while (ret == -ENOBUFS) {
			ret = spill_unlocked(s);
			if (!ret)
				ret = order_stats_add(s->stats, set,
						      f->value[i]);
		}
	}
	if (ret || s->failed) {
		s->failed = true;
		ret = -EIO;
	}
	pthread_mutex_unlock(&s->lock);
	f->n = 0;
	return ret;
}
