/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process's trace (rt_live, state.h) and its life, owned here alone:
 * start (the TSC facts, the sink, the stream), stop (quiesce the writers,
 * finish the sink), and the flush (stop the stream, write the log through
 * logfile.h), on request, at exit and from fatal signals.  Patching is
 * the caller's, after the start: LLVM's API keeps the two apart.
 */
#ifndef XRAYFDR_LIB_RUNTIME_TRACE_H
#define XRAYFDR_LIB_RUNTIME_TRACE_H

#include <stdbool.h>
#include <stddef.h>

#include <xrayfdr/xray.h>

#include "logfile.h"
#include "options.h"

/* Before any trace: the sink whose trampolines sleds patched without a
 * trace call (thread mode's). */
void rt_trace_init(void);

/*
 * Start a trace with @o (the API lock held; rt_live.status is
 * XRAY_LOG_INITIALIZING).  Return 0, or a negative errno with the reason
 * in @err.
 */
int rt_trace_start(const struct rt_options *o, char *err, size_t errlen);
/* Stop recording: no writer adds to what the flush reads.  Return the
 * status (enum XRayLogInitStatus). */
int rt_trace_stop(void);
/* Write the log of a stopped trace (the API lock held). */
enum XRayLogFlushStatus rt_trace_flush(void);
/* Async-signal-safe flush of whatever is recorded (fatal signals). */
void rt_trace_emergency(void);
/* Fatal signals and SIGINT/SIGTERM/SIGHUP/SIGQUIT flush first. */
void rt_trace_install_signal_handlers(void);
/* A flushed trace's memory and descriptors given back (detach). */
void rt_trace_release(void);
/* Give back what they replaced, where they are still ours (detach). */
void rt_trace_remove_signal_handlers(void);
/* Stop every writer (fast path off, wait for those in flight). */
void rt_trace_quiesce(void);
/* What the trace's sink holds now and its counters (takes the sink's
 * lock). */
void rt_trace_totals(struct rt_totals *tot);
/*
 * A snapshot of the trace (running, or stopped and not yet flushed): the
 * newest window as a log written to @fd, while the writers go on; @why,
 * what asked for it, goes into the info event.  The API lock held.
 * Return 0; -ENODATA without a trace; -ENOTSUP if its sink has no
 * snapshots; another negative errno.
 */
int rt_trace_snapshot(int fd, const char *why, struct rt_totals *tot);
/* Would rt_trace_snapshot() take one now?  0, -ENODATA or -ENOTSUP. */
int rt_trace_snapshot_ready(void);

/* fork(): around it, and the child's view of the trace. */
void rt_trace_fork_prepare(void);
void rt_trace_fork_parent(void);
void rt_trace_fork_child(void);

#endif
