/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The log file: opening it, its header, its buffers framed for the log's
 * version, and the info event that ends it.  The flush, the stream's
 * writer, LLVM's basic mode and the dump of a kept session all write
 * through this, each for the trace (struct rt_trace) it is given; it calls
 * nothing above it but the sink of that trace.  Async-signal-safe but for
 * what says otherwise: a fatal signal's flush writes through it.
 */
#ifndef XRAYFDR_LIB_RUNTIME_LOGFILE_H
#define XRAYFDR_LIB_RUNTIME_LOGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../fdr/records.h"
#include "sink.h"
#include "state.h"

struct rt_options;

/*
 * Open a new log as @o names it: its exact output path (suffixed with the
 * pid in a process it was not meant for; an existing file there replaced
 * only as out_create() allows), or a new <base><program>.<6 random>; the
 * name in @path.  Return the descriptor, or -1 with errno.
 */
int rt_open_log(const struct rt_options *o, char *path, size_t size);
/* All @len bytes of @data to @fd (a signal's EINTR retried): 0 or a
 * negative errno. */
int rt_write_all(int fd, const void *data, size_t len);

/* The header of @t's log: its version, TSC facts and buffer size. */
void rt_log_header(const struct rt_trace *t,
		   uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE]);
/* One buffer of @t's log, its records @c, framed for its version, to
 * @fd: 0 or a negative errno. */
int rt_log_chunk(const struct rt_trace *t, int fd, const struct rt_chunk *c);

struct rt_totals {
	uint64_t events, buffers; /* in the sink's buffers */
	/* its counters */
	uint64_t overwritten, recycled, kernel_lost, damaged, cut;
	/* the controller's drops and the sink's own */
	uint64_t dropped;
	uint64_t ring_bytes; /* CPU mode: one CPU's ring */
};

/* What a drain of @t's sink holds, from its start, and the sink's
 * counters; the drain is left at its start. */
void rt_log_count(const struct rt_trace *t, struct rt_drain *d,
		  struct rt_totals *tot);

/* What a log gets besides its sink's buffers. */
struct rt_log_extra {
	const char *objects; /* the info event's object lines */
	/* the header and these were written already (a streamed log) */
	bool streamed;
	uint64_t streamed_events, streamed_buffers;
	/* a snapshot of a running trace: what asked for it (the info
	 * event's snapshot=) */
	const char *snapshot;
};

/*
 * Write @t's log to @fd from @d, a drain of t->sink begun by the caller:
 * the header (unless streamed), every buffer, then the info event; what
 * was written counted in @tot.  Return 0 or the first negative errno; the
 * caller closes @fd.
 */
int rt_log_write(const struct rt_trace *t, int fd, struct rt_drain *d,
		 const struct rt_log_extra *x, struct rt_totals *tot);

#endif
