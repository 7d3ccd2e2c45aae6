/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The replay driver: the one read path of the analysis commands that
 * rebuild calls (account, stack, graph, replay, convert's folded output).
 *
 * It opens each input, reads its header and events (source.h), feeds them
 * to the call matcher (calls.h) whose hooks are the command's, keeps
 * llvm-xray's thread order of every input, and turns what went wrong into
 * one message and one exit status by one table:
 *
 *   the input could not be read or is damaged   as trace_status() says
 *   a call stack deeper than CALLS_MAX_DEPTH     EXIT_INVALID
 *   out of memory                                EXIT_USAGE
 *   a hook reported the input bad (-EBADMSG)     EXIT_INVALID
 *   a hook failed otherwise (-EIO, said why)     EXIT_USAGE
 *   a relative --time-range, no TSC frequency    EXIT_USAGE
 *
 * Events of threads not asked for (--tid), of calls the function filters
 * leave out (-F, -N) and outside the time range (--time-range) are
 * dropped before the call matcher (evfilter.h); calls shorter than
 * --min-duration are left out by it.  Otherwise runs of one thread's calls
 * are decoded and matched a batch at a time (trace_next_calls(),
 * calls_batch()) unless the command looks at each event (an event hook).
 *
 * A command is a set of hooks: the call matcher's (enter, done, unmatched,
 * sched, thread), one per event before the matcher sees it, and one at the
 * end of each input.  Hooks report failure with replay_fail(); reading
 * stops at the event that failed.
 */
#ifndef XRAYFDR_TOOLS_REPLAY_H
#define XRAYFDR_TOOLS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls.h"
#include "evfilter.h"
#include "../input/source.h"

struct symbols;

struct replay;

struct replay_hooks {
	/* the call matcher's hooks; their ctx is replay_opts.ctx */
	struct calls_ops calls;
	/* every event, before the call matcher: 0 or negative errno */
	int (*event)(void *ctx, const struct xrayfdr_event *ev);
	/* the end of one input (its threads are ranked by then) */
	int (*input_done)(void *ctx);
};

struct replay_opts {
	size_t size; /* sizeof(struct replay_opts) */
	const char *cmd; /* for messages: "xrayfdr CMD: ..." */
	enum calls_mode mode;
	bool by_tid; /* key threads by thread id alone, as llvm-xray */
	struct trace_opts in;
	const struct replay_hooks *hooks;
	void *ctx;
	/* if set, given each input's own function names (TraceLog) */
	struct symbols *names;
	/* only these threads' events (ntids 0: every thread's) */
	const uint32_t *tids;
	size_t ntids;
	/* only the events in this time range */
	struct replay_range range;
	/* -F and -N: rules ("+PATTERN" and "-PATTERN" lines, as
	 * analysis_opts.filter), or NULL (evfilter.h); names from @names, a
	 * rule's "@OBJECT" matches @map_path */
	const char *filter;
	const char *map_path;
	/* --min-duration: only calls that last this long (calls.h's
	 * calls_min_duration(), in each input's ticks); 0: every call */
	uint64_t min_ns;
	/* share_count > 1: one of that many drivers reading one FDR log
	 * together, this one the threads whose id modulo share_count is
	 * share_index (replay_rank_shared()) */
	unsigned int share_index, share_count;
};

/* What the driver knows of the input being read. */
struct replay_input {
	const char *path;
	enum trace_format format; /* for trace_where() */
	uint16_t version; /* of the XRay log or YAML */
	bool fdr; /* an XRay FDR log (llvm-xray orders its threads) */
	double freq; /* cycles per second; 0 if the header does not say */
	uint64_t index; /* 0, 1, ... among the inputs */
	uint64_t seq; /* events read so far, of all inputs, from 1 */
	uint64_t first_tsc; /* of the input's first event */
};

/* NULL with errno set on a bad @opts or no memory. */
struct replay *replay_new(const struct replay_opts *opts);

/*
 * Read @path to its end, or to the first error; the input stays open
 * (a TraceLog names its functions) until replay_free().  Return the exit
 * status by the table above.
 */
int replay_file(struct replay *r, const char *path);

/* The same for a trace someone else opened (and will close). */
int replay_trace(struct replay *r, struct trace *t, const char *path);

/*
 * After the last input: EXIT_USAGE after naming a thread asked for with
 * --tid that no input had, else 0.
 */
int replay_check_tids(const struct replay *r);

/* Whether the last input stopped before its end (its status said why). */
bool replay_stopped(const struct replay *r);

/* Report a hook's failure: -ENOMEM, -EBADMSG (the hook said why) or -EIO
 * (the hook said why).  The first failure wins. */
void replay_fail(struct replay *r, int err);

const struct replay_input *replay_input(const struct replay *r);
struct calls *replay_calls(const struct replay *r);

/*
 * A call thread's place in llvm-xray's order: (input << 32 | rank), with
 * rank its place in the input's walk of (process, thread) buffers for FDR
 * logs, 0 for other formats, so inputs come in their order.  Threads
 * first seen in a later input than the one being read rank 0 until that
 * input ends.
 */
uint64_t replay_thread_rank(const struct replay *r, uint32_t thread_index);

/* Exits that matched nothing, so far. */
uint64_t replay_unmatched(const struct replay *r);

/* The warnings and errors of the inputs read, said or not. */
uint64_t replay_problems(const struct replay *r);

/*
 * After @n drivers that shared one log's threads out (share_count @n)
 * have read it: give each one's threads their ranks among all the
 * threads of the log (replay_thread_rank()), as one driver reading the
 * whole log would.  0 or -ENOMEM.
 */
int replay_rank_shared(struct replay *const *w, unsigned int n);

/*
 * Whether drivers can share @path's threads out (replay_opts.share_*):
 * an XRay FDR log in a file that can be cut into buffers (and, for
 * @min_ns, gives its TSC frequency).  Nothing is said.
 */
bool replay_can_share(const struct trace_opts *in, const char *path,
		      uint64_t min_ns);

/*
 * Read @path with the @n drivers @w (share_index 0 to @n - 1, their
 * inputs silent), each in a thread of its own, calling @after(@ctx[k])
 * in driver k's thread when it is done (0 or negative errno), then rank
 * their threads (replay_rank_shared()).  Return 0 when every one read its
 * share with nothing to say; 1 when one driver is to read the log again
 * and say what there is to say (a damaged log, a warning, a thread that
 * could not start); or -ENOMEM.
 */
/* The input options of shared driver @k of @in: silent, and quiet but
 * for the first, which walks the whole log and so shows the progress. */
struct trace_opts replay_share_in(const struct trace_opts *in, unsigned int k);

/* Shared driver @k of @n, for @cmd's @hooks: calls matched as
 * CALLS_UNWIND, threads keyed by id, input options as replay_share_in()
 * makes them of @in.  NULL if out of memory. */
struct replay *replay_new_share(const char *cmd, const struct trace_opts *in,
				const struct replay_hooks *hooks, void *ctx,
				uint64_t min_ns, unsigned int k,
				unsigned int n);

/* The sums of replay_note_counts()'s counts of @n shared drivers. */
void replay_shared_counts(struct replay *const *w, unsigned int n,
			  uint64_t *before, uint64_t *unwound);

int replay_run_shared(struct replay *const *w, unsigned int n, const char *path,
		      int (*after)(void *ctx), void *const *ctx);

/*
 * Say on stderr, in one line, what the call matcher made of a trace that
 * is not a whole run: exits of calls entered before the trace began (a
 * flight recorder's window starts inside calls; they are not counted)
 * and calls ended by unwinding (an exception or longjmp went through
 * them).  Neither is an error; nothing is said if there was none.
 */
void replay_note_window(const struct replay *r);

/* The same with the counts given (of drivers that shared @path out). */
void replay_note_counts(const char *cmd, const char *path, uint64_t before,
			uint64_t unwound);

/* --min-duration's @min_ns in ticks of a @hz clock, for
 * calls_min_duration(); a clock of unknown frequency (0) counts
 * nanoseconds, which is said on stderr for @path. */
uint64_t replay_min_ticks(const char *cmd, const char *path, uint64_t min_ns,
			  uint64_t hz);

void replay_free(struct replay *r);

#endif
