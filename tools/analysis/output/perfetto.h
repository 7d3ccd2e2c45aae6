/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A streaming writer of Perfetto's native protobuf trace format (a Trace
 * message: repeated TracePacket), for ui.perfetto.dev and trace_processor.
 * It consumes events one at a time (rebuilding call stacks with calls.h)
 * and writes each packet as it goes, so memory stays per thread, per open
 * frame and per function name a thread uses, never per event.
 *
 *  - one packet sequence per traced thread, holding a TrackDescriptor of
 *    its thread track (ThreadDescriptor: pid, tid, the name trace_event
 *    gives it) and its TrackEvents: a TYPE_SLICE_BEGIN at each entry and
 *    a TYPE_SLICE_END at each exit, names interned (InternedData);
 *  - time off the CPU, from scheduler events, as "off-CPU" slices on the
 *    thread's track; other custom and typed events as instant events;
 *  - a first sequence with a ClockSnapshot and one TrackDescriptor per
 *    process (ProcessDescriptor).
 *
 * Timestamps are nanoseconds of BOOTTIME, Perfetto's default trace clock,
 * computed as TSC * 1e9 / cycle_frequency (a tick is a nanosecond when
 * the frequency is unknown), i.e. since the TSC's zero as in trace_event.
 * Calls still open at the end end at their thread's last timestamp.
 */
#ifndef XRAYFDR_TOOLS_PERFETTO_H
#define XRAYFDR_TOOLS_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "../input/source.h"
#include "../input/symbols.h"

struct perfetto_writer;

/* @names: optional names for function ids (NULL: llvm-xray's "#id").
 * NULL if out of memory. */
struct perfetto_writer *perfetto_writer_new(FILE *out,
					    const struct trace_header *hdr,
					    struct symbols *names);
/* Return 0, or -ENOMEM, -E2BIG (a stack too deep) or -EIO (writing
 * failed: ferror(out) says why). */
int perfetto_writer_event(struct perfetto_writer *w,
			  const struct xrayfdr_event *ev);
/* A run of one thread's calls (trace_next_calls()), after the first
 * event went through perfetto_writer_event(); the same returns. */
int perfetto_writer_calls(struct perfetto_writer *w,
			  const struct xrayfdr_event *last,
			  const struct xrayfdr_call_event *calls, size_t n);
/* Only calls that last @ticks or more (calls_min_duration()); before
 * the first event.  A call's begin then follows, in the output, what
 * happened in it before it was known to be long enough. */
void perfetto_writer_min_duration(struct perfetto_writer *w, uint64_t ticks);
/* Close the calls and off-CPU slices still open; same returns. */
int perfetto_writer_finish(struct perfetto_writer *w);
/* The trace packets written so far. */
uint64_t perfetto_writer_packets(const struct perfetto_writer *w);
/* Exits that matched no entry, left out. */
uint64_t perfetto_writer_unmatched(const struct perfetto_writer *w);
void perfetto_writer_free(struct perfetto_writer *w);

#endif
