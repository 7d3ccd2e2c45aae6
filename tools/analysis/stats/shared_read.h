/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The --jobs driver of the commands whose answers are order statistics of
 * call durations (account, graph).  Workers each read a share of an FDR
 * log's threads in a thread of their own (replay_run_shared()), sending
 * durations to one store (shared_stats.h) and keeping the rest in state
 * of the command's own; then the command merges its workers' state, and
 * the store becomes its order statistics.  What differs between commands
 * is in their shared_read_ops.
 */
#ifndef XRAYFDR_TOOLS_SHARED_READ_H
#define XRAYFDR_TOOLS_SHARED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "order_stats.h"
#include "../engine/replay.h"
#include "shared_stats.h"
#include "../input/source.h"

/* What the output needs of the readers besides the command's rows. */
struct read_facts {
	double freq; /* the log's TSC frequency; 0: unknown */
	bool sched; /* scheduler events were seen */
	uint64_t before, unwound; /* replay_note_counts() */
};

/* The facts of @r, which read the whole log alone. */
void read_facts_of(const struct replay *r, struct read_facts *facts);

struct shared_read_ops {
	const char *cmd;
	const struct replay_hooks *hooks; /* their ctx: the worker */
	size_t size; /* of a worker's state */
	/* Set up the tables of @w (zeroed). */
	void (*init)(void *w);
	/* Give @w its driver and its way to the store (either NULL if
	 * memory ran out), which @free frees from then on. */
	void (*attach)(void *w, struct replay *r, struct stats_feed *feed);
	/* The key of @w's @item in the store (stats_feed_new()). */
	uint64_t (*key)(void *w, uint32_t item);
	/* Whether @w met what only one reader can say, or NULL. */
	bool (*alone)(const void *w);
	/* The @n workers at @w into @m, the store's sets in @sh: 0, or
	 * negative errno. */
	int (*merge)(void *m, void *w, unsigned int n,
		     const struct shared_stats *sh);
	void (*free)(void *w);
};

/*
 * Read @path (input options @in) with @n workers into @m, calls shorter
 * than @min_ns left out, the store's order statistics having @memory
 * (order_stats_new()).  Return 0 done, with *@durations the store's
 * statistics (the caller's) and @facts added to; 1 if one reader is to
 * read it instead (a worker met something to say, or could not start);
 * or negative errno.
 */
int shared_read(const struct shared_read_ops *ops, void *m,
		const struct trace_opts *in, const char *path, unsigned int n,
		uint64_t min_ns, size_t memory, struct order_stats **durations,
		struct read_facts *facts);

#endif
