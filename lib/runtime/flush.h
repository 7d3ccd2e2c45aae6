/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing the log from what the sink drains: at exit, on request, from
 * fatal signals, and through LLVM's buffer iterator.
 */
#ifndef XRAYFDR_LIB_RUNTIME_FLUSH_H
#define XRAYFDR_LIB_RUNTIME_FLUSH_H

#include <stdint.h>

#include <xrayfdr/xray.h>

#include "sink.h"

struct rt_options;

/*
 * Open a new log as @o names it: its exact output path (suffixed with the
 * pid in a process it was not meant for), or <base><program>.<6 random>;
 * the name in @path.  Return the descriptor, or -1 with errno.
 * Async-signal-safe.
 */
int rt_open_log(const struct rt_options *o, char *path, size_t size);
/* All @len bytes of @data to @fd (a signal's EINTR retried): 0 or a
 * negative errno.  Async-signal-safe. */
int rt_write_all(int fd, const void *data, size_t len);

/* Streaming (stream.c): open the trace's log with its header, for
 * appending (the descriptor, or a negative errno with the reason in
 * @err); append one log buffer. */
int rt_log_open_stream(char *err, size_t errlen);
int rt_log_chunk(int fd, const struct rt_chunk *c);

enum XRayLogFlushStatus rt_flush(void);
/* Async-signal-safe flush of whatever is recorded (fatal signals). */
void rt_flush_emergency(void);
void rt_install_signal_handlers(void);
/* __xray_log_process_buffers() iterator */
struct XRayBuffer rt_fdr_iterator(struct XRayBuffer prev);

struct rt_totals {
	uint64_t events, buffers; /* in the sink's buffers */
	uint64_t overwritten, recycled, kernel_lost, damaged; /* its counters */
};

/* What a drain holds, from its start, and the sink's counters. */
void rt_drain_totals(struct rt_drain *d, struct rt_totals *tot);

/*
 * Write what rt.sink holds to the log @path, as the flush would, with
 * @objects as the info event's object lines (a dump of a session of
 * another process).  Return 0 or a negative errno.
 */
int rt_write_log_file(const char *path, const char *objects,
		      struct rt_totals *tot);

#endif
