/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Log buffers from what the sinks keep.  Both sinks store a record's time
 * relative to a base that only the slow path moves (thread mode: the
 * buffer's last NewCPUId or TSCWrap; CPU mode: the sub-buffer's base), so
 * the fast path needs no state of its own to commit.  A log wants FDR's
 * deltas from the record before, with NewCPUId where the CPU changes and
 * TSCWrap where a delta does not fit: the drains write their buffers
 * through this, which also applies LLVM's duration threshold (rewind.h)
 * as the records go out.
 */
#ifndef XRAYFDR_LIB_RUNTIME_LOGBUF_H
#define XRAYFDR_LIB_RUNTIME_LOGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rewind.h"

struct rt_logbuf {
	uint8_t *p, *end;
	uint64_t last; /* the time the next delta is taken from */
	uint32_t cpu; /* UINT32_MAX: none yet in this buffer */
	unsigned int version;
	uint64_t threshold; /* ticks; 0: nothing is rewound */
	uint64_t events; /* function records and events in it */
	/* the last record is an entry with arguments or an argument: only
	 * then may an argument follow (the reader's rule) */
	bool args_open;
	/* no record goes before the one before it, nor, at the start,
	 * before @last (the CPU drain's: a thread's time never goes back,
	 * whether or not the TSCs of its CPUs agree) */
	bool monotonic;
	struct rt_rewind rewind;
};

/*
 * Each thread's last time in what a drain wrote, for the drains that
 * write a thread's records in more than one go (a flush's buffers, one
 * after another; a stream's passes): the next goes on from there.  A
 * table of fixed size, so that a flush in a signal handler allocates
 * nothing; when it is three quarters full it starts over, and a thread
 * it forgot goes on from its own records.
 */
struct rt_last_time {
	uint64_t key; /* tid + 1; 0: free */
	uint64_t tsc;
};

struct rt_last_times {
	struct rt_last_time *slot;
	size_t cap; /* a power of two */
	size_t used;
};

/* Room for at least @threads threads (mapped); 0 or -ENOMEM. */
int rt_last_times_init(struct rt_last_times *m, size_t threads);
void rt_last_times_free(struct rt_last_times *m);
void rt_last_times_clear(struct rt_last_times *m);
/* @tid's last time, 0 if none is known. */
uint64_t rt_last_times_get(const struct rt_last_times *m, uint32_t tid);
/* @tid's last time is @tsc, if that is later than the one known. */
void rt_last_times_put(struct rt_last_times *m, uint32_t tid, uint64_t tsc);

/*
 * The drain's own buffer for building log buffers: *@buf of *@size bytes,
 * mapped anew unless it already has @capacity bytes.  Return 0 or
 * -ENOMEM (nothing mapped then).
 */
int rt_logbuf_scratch(uint8_t **buf, size_t *size, size_t capacity);

/* An empty buffer of @size bytes at @buf for a log of @version. */
void rt_logbuf_init(struct rt_logbuf *o, uint8_t *buf, size_t size,
		    unsigned int version, uint64_t threshold);

/*
 * NewCPUId or TSCWrap before a record at @tsc on @cpu, if it needs one.
 * Return 1 if one was written, 0 if none was needed, -1 if there is no
 * room for it and @need more bytes.
 */
int rt_logbuf_time(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc, size_t need,
		   bool signed_delta);

/*
 * The function record whose first word is @word at @tsc on @cpu (and for
 * an entry with an argument, room for its CallArgument); an exit that
 * ends a call shorter than the threshold erases it instead.  False if it
 * does not fit.
 */
bool rt_logbuf_function_slow(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
			     uint32_t word);

/* What the drains do most: a plain record, on the CPU of the one before,
 * whose delta fits, with no threshold, inline. */
static inline bool rt_logbuf_function(struct rt_logbuf *o, uint32_t cpu,
				      uint64_t tsc, uint32_t word)
{
	uint64_t delta = tsc - o->last;

	if (o->threshold || cpu != o->cpu || tsc < o->last ||
	    delta > UINT32_MAX || (size_t)(o->end - o->p) < 8 ||
	    ((word >> 1) & 7) == XRAYFDR_FUNC_ENTRY_ARGS)
		return rt_logbuf_function_slow(o, cpu, tsc, word);
	delta = delta << 32 | word;
	__builtin_memcpy(o->p, &delta, 8);
	o->p += 8;
	o->args_open = false;
	o->last = tsc;
	o->events++;
	return true;
}

/* A CallArgument record @md as it is (dropped, as damage, unless an
 * entry with arguments or another argument is the last record in this
 * buffer).  False if it does not fit. */
bool rt_logbuf_argument(struct rt_logbuf *o, const uint8_t *md);

/*
 * The custom or typed event whose marker is at @md, its @size bytes of
 * payload at @data, on @cpu: the marker's delta (typed events, custom
 * ones from version 5) is relative to @base.  False if it does not fit.
 */
bool rt_logbuf_marker(struct rt_logbuf *o, uint32_t cpu, uint64_t base,
		      const uint8_t *md, const void *data, size_t size);

/* A custom event of @size bytes at @tsc on @cpu.  False if it does not
 * fit. */
bool rt_logbuf_custom(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
		      const void *data, size_t size);

/*
 * At the flush, after the last records of thread @tid of this process:
 * the name the thread has now (its comm), as a thread-name event at
 * @tsc on @cpu, if it differs from @last, the name those records hold
 * last (rt.exec_name where they hold none).  Return 1 if it was written, 0 if there was none to write (the
 * same name, or the thread is gone), -1 if it does not fit.
 * Async-signal-safe.
 */
int rt_logbuf_name_now(struct rt_logbuf *o, uint32_t cpu, uint64_t tsc,
		       uint32_t tid, const char *last);

/*
 * Is the custom event payload of @size bytes at @payload a thread-name
 * event of thread @tid?  Then its name is in @name (which another
 * thread's name, senseless in @tid's records, clears).
 */
bool rt_logbuf_own_name(const uint8_t *payload, size_t size, uint32_t tid,
			char *name);

#endif
