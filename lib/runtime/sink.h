/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record sink: where the FDR controller (fdr.c) writes, as LLVM's
 * controller writes through the buffer writer it is given.
 *
 * The controller decides what records an event needs (NewCPUId, TSCWrap,
 * arguments, events); the sink owns the memory they go to:
 * taking and retiring buffers, what a buffer starts with, what survives
 * when memory runs out, fork, and turning what it holds into buffers of a
 * log (the drain, used by the flush, the emergency flush and LLVM's buffer
 * iterator).  Each sink comes with its own trampoline fast path, which
 * appends plain function records while the thread's state (struct
 * rt_thread) says it may.
 *
 * Thread buffers (sink_thread.c) are the first sink.  Both sinks keep
 * record times relative to a base and write FDR's deltas in the drain
 * (logbuf.h), and keep every record 8-byte aligned: an event's payload is
 * padded with zeros (commit does it).  Everything called from the
 * recording path (attach, detach, reserve, commit, arm) runs without
 * vector registers, like fdr.c.
 */
#ifndef XRAYFDR_LIB_RUNTIME_SINK_H
#define XRAYFDR_LIB_RUNTIME_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../arch/x86_64/arch.h"
#include "options.h"
#include "state.h"
#include "thread.h"

enum rt_reserve {
	RT_RESERVE_NONE, /* no room: the event is dropped */
	RT_RESERVE_SAME, /* room after the thread's last record */
	RT_RESERVE_NEW, /* room in a new buffer, after its preamble */
};

/* One buffer of a log: its records, preamble included. */
struct rt_chunk {
	const uint8_t *data;
	size_t used;
	uint64_t events; /* function records and events in it */
};

/*
 * Room a thread-name event takes before an event's records: its marker
 * and its payload (8 bytes and the name's 15 at most), padded to 8.
 */
#define RT_NAME_ROOM (16 + 24)

/* Both sinks keep event payloads padded to 8 bytes in memory, so that the
 * records after one stay aligned for the fast path's stores. */
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/*
 * A walk over the sink's buffers, in the order they go to the log: what
 * the log writer (flush.c, which rewinds it with next and offset) and
 * both sinks use.  The rest of a sink's state of the walk is its own, in
 * sink_state, laid out by the sink (thread buffers: sink_thread.c).
 */
struct rt_drain {
	/* the trace whose log it writes: set before drain_begin */
	const struct rt_trace *trace;
	size_t next, count;
	size_t offset; /* the sink's position inside item next */
	/* thread names at the flush (rt_logbuf_name_now()): the last name
	 * the records of the thread being drained hold, and, when the name
	 * it has now did not fit after them, that it goes in a buffer of its
	 * own, at name_tsc on name_cpu */
	char name[16];
	bool name_pending;
	uint32_t name_cpu;
	uint64_t name_tsc;
	uint64_t sink_state[8];
};

/* The name a drain's thread's records hold last (rt_logbuf_name_now()):
 * the exec name where they hold none (state.h). */
static inline const char *rt_drain_last_name(const struct rt_drain *d)
{
	return d->name[0] ? d->name : rt.exec_name;
}

struct rt_sink_counters {
	uint64_t overwritten; /* events lost when memory was reused */
	uint64_t recycled; /* buffers reused */
	uint64_t kernel_lost; /* the kernel's records it could not write */
	uint64_t damaged; /* what the drain skipped as senseless */
	/* a snapshot of rings being written: sub-buffers written over while
	 * it copied them, left out */
	uint64_t cut;
	/* events dropped that the controller did not count (rt_live.dropped):
	 * CPU mode's fast path's, in discard mode */
	uint64_t dropped;
	uint64_t ring_bytes; /* CPU mode: one CPU's ring, the most a thread
			      * that keeps to that CPU holds */
};

enum rt_fast_events {
	RT_FAST_EVENTS_NONE,
	RT_FAST_EVENTS_RING,
	RT_FAST_EVENTS_BUFFER,
};

struct rt_sink {
	const char *name;
	const struct arch_tramps *tramps; /* its fast path (arch.h) */
	/*
	 * A new trace of generation @gen by process @pid: memory for @o's
	 * geometry, with buffers of @capacity bytes of records.  No writer
	 * is running.  Return 0, or a negative errno with the reason in @err.
	 */
	int (*start)(const struct rt_options *o, size_t capacity, uint32_t gen,
		     pid_t pid, char *err, size_t errlen);
	/*
	 * The thread has set up its state; it may write from now on.  A
	 * sink keeps its private part of a thread's state in
	 * t->sink_state, laid out as only it knows (struct rt_thread's
	 * other fields are what the trampolines and the controller share),
	 * so that it works on whichever thread state it is given.
	 */
	void (*attach)(struct rt_thread *t);
	/* The thread is exiting: what it wrote stays for the flush. */
	void (*detach)(struct rt_thread *t);
	/*
	 * Room for @need bytes of records at t->pos (and the payload of an
	 * event, which commit copies) for an event at time *@tsc on @cpu,
	 * in the current trace (a sink may move the time up to a base it
	 * cannot go below).  A new buffer starts with its preamble, written
	 * here.  Record times are relative to t->base (thread.h): a sink
	 * that owns the base and the CPU (CPU rings: the sub-buffer's) sets
	 * t->base and t->cpu here, so that the controller writes no NewCPUId
	 * or TSCWrap, and makes sure the time's high half is the base's.
	 * It sets t->name_due when the thread's name must go first (a
	 * buffer begins for the thread, in which it has not recorded its
	 * name), having made RT_NAME_ROOM more bytes of room for it; else
	 * clears it.
	 */
	enum rt_reserve (*reserve)(struct rt_thread *t, size_t need,
				   uint64_t *tsc, uint32_t cpu);
	/*
	 * The records from t->pos to @end, then @size bytes of @payload,
	 * are complete: publish them.  Return false if the sink could not
	 * (the thread moved, or another writer came first): the event must
	 * be made again from reserve on.  Nothing is ever taken back:
	 * LLVM's rewinding of short calls is the drain's (logbuf.h), as
	 * the drain's trace says (rt_drain.trace->threshold_ticks).
	 */
	bool (*commit)(struct rt_thread *t, uint8_t *end, const void *payload,
		       size_t size);
	/*
	 * After the C path: set the fast path's bounds in @t and return the
	 * generation under which it may write (0: it may not).
	 */
	uint32_t (*arm)(struct rt_thread *t);
	/* The trace is over: nothing, the kernel included, may add to what
	 * the drain reads (may be NULL; async-signal-safe). */
	void (*finish)(void);
	/* fork(): the sink's locks around it; the child, process @pid,
	 * starts generation @gen with nothing recorded. */
	void (*fork_prepare)(void);
	void (*fork_parent)(void);
	void (*fork_child)(uint32_t gen, pid_t pid);
	/* Counters of what drain @d walks, or with @d NULL of the current
	 * trace (no lock taken). */
	void (*counters)(const struct rt_drain *d, struct rt_sink_counters *c);
	/* Whose memory the records drain @d walks are in (@d NULL: the
	 * current trace's), for the log ("module"); may be NULL. */
	const char *(*memory)(const struct rt_drain *d);
	/*
	 * A descriptor of the sink's memory that another process (`xrayfdr
	 * snapshot`, through the control channel) may map to copy it while
	 * the writers go on, or -1 (may be NULL): the CPU rings in memory
	 * of the runtime's own.
	 */
	int (*share)(void);
	/*
	 * The trace is flushed and nothing will record into this memory
	 * again unless a new trace starts (detach): close its descriptors
	 * and give back its pages; the mappings stay until the next start,
	 * for a straggler of the C path (may be NULL).
	 */
	void (*release)(void);
	/*
	 * The drain.  begin takes the sink's lock (only if free, unless
	 * @wait: a signal handler cannot wait for a thread it interrupted)
	 * and orders the buffers; next gives the non-empty ones, and may be
	 * called after end for a walk that does not need the lock (what it
	 * reads is checked for sense).  Memory the chunks point to stays
	 * valid until the next trace starts.  d->trace is the caller's.
	 */
	void (*drain_begin)(struct rt_drain *d, bool wait);
	bool (*drain_next)(struct rt_drain *d, struct rt_chunk *c);
	void (*drain_end)(struct rt_drain *d);
	/*
	 * A snapshot (NULL where the sink has none): copy what the sink
	 * holds while its writers go on, none of them waiting for the
	 * copy, and set @d to walk the copy with
	 * drain_next and drain_end.  The caller keeps the trace from ending
	 * meanwhile and takes one snapshot at a time.  Return 0 or a
	 * negative errno.
	 */
	int (*snapshot_begin)(struct rt_drain *d);
	/* After a snapshot's drain_end: the copy's pages go back to the
	 * system (its mapping stays for the next), so that a process that
	 * took one does not hold its buffers twice. */
	void (*snapshot_end)(void);
	/* drain_begin holds a lock the writers need (thread buffers): a
	 * running trace is better counted on a snapshot. */
	bool drain_locks;
	/* Its trampolines append custom and typed events too
	 * (trampolines.S, EVENT_FAST): to the CPU rings where arm gave
	 * t->event_room (RT_FAST_EVENTS_RING), or to the thread's buffer
	 * (RT_FAST_EVENTS_BUFFER). */
	uint8_t fast_events;
	/*
	 * Streaming (stream.c; NULL where the sink cannot): hand the oldest
	 * full buffer to @write(@ctx, log buffer) and free it.  Return 1 if
	 * there was one, 0 if none was full, or the first error of @write.
	 * Only the stream's writer calls it.
	 */
	int (*stream_one)(int (*write)(void *ctx, const struct rt_chunk *c),
			  void *ctx);
};

/* Thread buffers: a shared queue of fixed-size buffers (bufq.h). */
extern const struct rt_sink rt_thread_sink;
/* CPU rings (ring.h), of the module or in the runtime's own memory. */
extern const struct rt_sink rt_cpu_sink;

#endif
