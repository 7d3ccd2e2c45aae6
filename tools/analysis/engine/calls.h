/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Call stacks rebuilt from a stream of events, one stack per thread: the
 * part every analysis shares.  Memory is per thread and per open frame,
 * never per event.
 *
 * Each completed call is reported with its inclusive and exclusive (self)
 * time and, where the trace has scheduler events (fdr.h, "XFSC"), the time
 * its thread spent off the CPU during the call.
 *
 * How an exit that does not match the top of the stack is handled depends
 * on the mode:
 *   CALLS_UNWIND   pop every frame above the matching one (a longjmp, an
 *                  exception, a tail call without its exit); an exit with
 *                  no matching frame is reported as unmatched and ignored;
 *   CALLS_STRICT   llvm-xray account: only the top frame may exit; any
 *                  other exit is unmatched and changes nothing;
 *   CALLS_DEDUCE   llvm-xray account --deduce-sibling-calls: as UNWIND;
 *   CALLS_CLEAR    llvm-xray stack: as UNWIND, but an exit with no
 *                  matching frame unwinds and reports the whole stack.
 */
#ifndef XRAYFDR_TOOLS_CALLS_H
#define XRAYFDR_TOOLS_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/fdr.h>

enum calls_mode {
	CALLS_UNWIND,
	CALLS_STRICT,
	CALLS_DEDUCE,
	CALLS_CLEAR,
};

struct call_frame {
	int32_t func_id;
	uint64_t entry_tsc;
	uint64_t child_time; /* inclusive time of its completed callees */
	uint64_t off_at_entry; /* the thread's off-CPU total at entry */
	uint64_t user; /* for the consumer (e.g. a node of its trie) */
};

struct call_thread {
	uint32_t pid, tid;
	uint32_t index; /* 0, 1, ... in order of first appearance */
	struct call_frame *stack;
	uint32_t depth, cap;
	uint32_t shown; /* with a minimum duration: the bottom frames whose
			 * enter hooks ran */
	/* scheduler state */
	bool off_cpu;
	uint64_t off_since, off_total;
	bool saw_sched;
	uint64_t first_tsc, last_tsc;
	bool last_was_exit; /* llvm-xray stack's Terminal/Intermediate */
	/* its name as of the last event, from the runtime's thread-name
	 * events (fdr.h); "" until one is seen */
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	void *user;
};

/* A completed call, reported as its frame leaves the stack. */
struct call_done {
	int32_t func_id;
	uint32_t depth; /* 0: a root */
	uint64_t entry_tsc, exit_tsc;
	uint64_t offset; /* of the exit that ended it; UINT64_MAX at the end */
	uint64_t dur; /* inclusive ticks, |exit_tsc - entry_tsc| */
	uint64_t self; /* exclusive ticks */
	uint64_t off_cpu; /* ticks its thread was off CPU, callees included */
	bool by_exit; /* its own exit (not unwound by another's) */
	bool deepest; /* the first frame an exit popped */
	bool at_end; /* still open at the end of the trace */
	struct call_frame *frame; /* still valid in the callback */
};

struct calls_ops {
	/* a frame was pushed (stack[depth]) */
	void (*enter)(void *ctx, struct call_thread *t, struct call_frame *f,
		      uint32_t depth, const struct xrayfdr_event *ev);
	/* a frame was popped */
	void (*done)(void *ctx, struct call_thread *t,
		     const struct call_done *d);
	/* an exit that matched nothing (it changed nothing, except in
	 * CALLS_CLEAR mode where the stack was unwound) */
	void (*unmatched)(void *ctx, struct call_thread *t,
			  const struct xrayfdr_event *ev);
	/* the thread went off (true) or on the CPU */
	void (*sched)(void *ctx, struct call_thread *t, bool off, uint64_t tsc);
	/* a new thread */
	void (*thread)(void *ctx, struct call_thread *t);
	/* @n entries and exits of @t are about to come, one by one, through
	 * enter and done (calls_batch()): a hint, for a consumer that can
	 * start its cache misses early */
	void (*ahead)(void *ctx, struct call_thread *t,
		      const struct xrayfdr_call_event *calls, size_t n);
	/* a custom or typed event (scheduler and thread-name events too,
	 * after their effect on the thread) */
	void (*other)(void *ctx, struct call_thread *t,
		      const struct xrayfdr_event *ev);
};

struct calls;

/* @by_tid: key threads by thread id alone, as llvm-xray does. */
struct calls *calls_new(enum calls_mode mode, bool by_tid,
			const struct calls_ops *ops, void *ctx);
void calls_free(struct calls *c);

/* Feed one event.  Return 0 or -ENOMEM / -E2BIG (a stack deeper than
 * CALLS_MAX_DEPTH frames). */
int calls_event(struct calls *c, const struct xrayfdr_event *ev);

/*
 * Feed @n function entries and exits of @last's thread at once (as
 * trace_next_calls() gives them): as calls_event() of each, with @last's
 * fields but its time, kind, function and offset.  *@seq is counted up
 * before each, for hooks that read it.  A hook that calls calls_stop()
 * ends the batch after its event.  Return as calls_event().
 */
int calls_batch(struct calls *c, const struct xrayfdr_event *last,
		const struct xrayfdr_call_event *calls, size_t n,
		uint64_t *seq);

/*
 * Show only calls that last at least @ticks (0: every call): the enter
 * and done hooks of a shorter call never run, and its time stays in its
 * caller's self time.  A call's enter hook then runs when the call is
 * known to be shown (its event is the entry's time, function and thread
 * alone), still before anything inside the call is reported.
 */
void calls_min_duration(struct calls *c, uint64_t ticks);

/* From a hook: no more events of the batch being fed. */
void calls_stop(struct calls *c);

/* Close every frame still open, at its thread's last timestamp
 * (reported with at_end).  Optional. */
void calls_close_all(struct calls *c);

#define CALLS_MAX_DEPTH (1u << 20)

/* Threads, in order of first appearance. */
uint32_t calls_nthreads(const struct calls *c);
struct call_thread *calls_thread(const struct calls *c, uint32_t index);

/* "NAME (TID)" if the thread has a name, else "thread TID", in @buf. */
const char *calls_thread_label(const struct call_thread *t, char *buf,
			       size_t len);

/* Whether any scheduler event was seen. */
bool calls_saw_sched(const struct calls *c);

/* Exits that matched no frame, so far. */
uint64_t calls_unmatched(const struct calls *c);

/* Frames popped by another function's exit (not at the end), so far. */
uint64_t calls_unwound(const struct calls *c);

#endif
