/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which events of a trace an analysis looks at: those of the threads
 * asked for (--tid), of the calls the function filters keep (-F, -N) and
 * in the time range (--time-range).  The others are dropped before any
 * call is matched: a range that begins in the middle of calls shows
 * their exits without entries, as a flight recorder's window does.
 *
 * With "+" rules (-F), only the events of the calls of matching functions
 * and of what they call are kept; the events of the calls of functions a
 * "-" rule (-N) matches, and of what they call, never are.  Each thread
 * follows its open calls of matching functions by a count, so an exit
 * unwound past (longjmp) keeps its call open for the filter.  Other
 * events than calls' pass the function filters.
 */
#ifndef XRAYFDR_TOOLS_EVFILTER_H
#define XRAYFDR_TOOLS_EVFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/fdr.h>

#include "../../../lib/util/u64map.h"
#include "funcfilter.h"

/* --time-range: [from, to], both included. */
struct replay_range {
	bool set;
	bool relative; /* nanoseconds from the input's first event; else
			* values of the trace's TSC */
	uint64_t from, to;
};

struct event_filter_opts {
	const char *cmd; /* for messages */
	bool by_tid; /* threads by id alone (else by process and id) */
	const uint32_t *tids; /* ntids 0: every thread */
	size_t ntids;
	struct replay_range range;
	/* rules ("+PATTERN" and "-PATTERN" lines), or NULL; names from
	 * @names, a rule's "@OBJECT" matches @map_path */
	const char *filter;
	struct symbols *names;
	const char *map_path;
};

struct event_filter {
	struct event_filter_opts o;
	bool active; /* anything to check */
	bool selects; /* there are "+" rules */
	struct fn_filter *rules; /* o.filter parsed, or NULL */
	struct func_filter funcs;
	struct u64map threads; /* thread key -> its open calls */
	bool *tid_seen; /* o.tids[i] had an event, in any input */
	/* the input being read */
	const char *path;
	double freq;
	bool seen_event;
	uint64_t from, to; /* the range in ticks */
};

/* 0, or -EINVAL or -ENOMEM after saying what is wrong (nothing to free
 * then). */
int event_filter_init(struct event_filter *f,
		      const struct event_filter_opts *o);

/* Another input: its name and TSC frequency (0: unknown), for a range
 * relative to its first event. */
void event_filter_input(struct event_filter *f, const char *path, double freq);

/* 1 to keep @ev, 0 to drop it, or -ENOMEM, or -EINVAL after saying that
 * a relative range needs the frequency the input does not give. */
int event_filter_check(struct event_filter *f, const struct xrayfdr_event *ev);

/*
 * After the last input: whether a thread asked for with --tid had no event
 * in any input (a mistyped id); if so, true with the first such id in *tid.
 */
bool event_filter_unseen_tid(const struct event_filter *f, uint32_t *tid);

void event_filter_free(struct event_filter *f);

#endif
