// SPDX-License-Identifier: GPL-2.0-only
/* The --jobs driver of account and graph; see shared_read.h. */
#include <errno.h>
#include <stdlib.h>

#include "../engine/calls.h"
#include "shared_read.h"

void read_facts_of(const struct replay *r, struct read_facts *facts)
{
	struct calls *calls = replay_calls(r);

	facts->freq = replay_input(r)->freq;
	facts->sched = calls_saw_sched(calls);
	facts->before = calls_unmatched(calls);
	facts->unwound = calls_unwound(calls);
}

/* In a worker's thread, once it has read its share: the last chunk. */
static int flush_rest(void *ctx)
{
	struct stats_feed *feed = ctx;

	return feed->n ? stats_feed_flush(feed) : 0;
}

int shared_read(const struct shared_read_ops *ops, void *m,
		const struct trace_opts *in, const char *path, unsigned int n,
		uint64_t min_ns, size_t memory, struct order_stats **durations,
		struct read_facts *facts)
{
	char *w = calloc(n, ops->size);
	struct replay **rs = calloc(n, sizeof(*rs));
	void **feeds = calloc(n, sizeof(*feeds));
	struct shared_stats sh;
	int ret = -ENOMEM;

	if (shared_stats_init(&sh, memory) || !w || !rs || !feeds)
		goto out;
	for (unsigned int k = 0; k < n; k++) {
		void *wk = w + k * ops->size;
		struct stats_feed *feed;

		ops->init(wk);
		feed = stats_feed_new(&sh, ops->key, wk);
		rs[k] = replay_new_share(ops->cmd, in, ops->hooks, wk, min_ns,
					 k, n);
		ops->attach(wk, rs[k], feed);
		if (!feed || !rs[k])
			goto out;
		feeds[k] = feed;
	}
	ret = replay_run_shared(rs, n, path, flush_rest, feeds);
	if (!ret && sh.failed)
		ret = 1;
	for (unsigned int k = 0; !ret && ops->alone && k < n; k++)
		if (ops->alone(w + k * ops->size))
			ret = 1;
	if (!ret)
		ret = ops->merge(m, w, n, &sh);
	if (ret)
		goto out;
	*durations = shared_stats_take(&sh);
	facts->freq = replay_input(rs[0])->freq;
	replay_shared_counts(rs, n, &facts->before, &facts->unwound);
	for (unsigned int k = 0; k < n; k++)
		facts->sched |= calls_saw_sched(replay_calls(rs[k]));
out:
	for (unsigned int k = 0; w && k < n; k++)
		ops->free(w + k * ops->size);
	free(w);
	free(rs);
	free(feeds);
	shared_stats_free(&sh);
	return ret;
}
