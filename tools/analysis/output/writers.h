/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Streaming writers of call-level formats: each consumes events one at a
 * time (rebuilding call stacks with calls.h) and writes as calls end, so
 * memory stays per thread and per open frame.
 *
 *  - Chrome trace_event JSON (chrome://tracing, Perfetto): a complete event
 *    ("ph": "X") per call; time off the CPU, from scheduler events, as
 *    "off-CPU" slices on the thread; other custom and typed events as
 *    instant events; thread names as metadata.  Microseconds from the
 *    trace's first timestamp.
 *  - CoreProfiler TraceLog text: "sam str" stack changes per entry and
 *    exit (instrumentation mode), "thr cpu" from scheduler events,
 *    "fun nam" for each function, "thr crt"/"thr aos" for each thread.
 */
#ifndef XRAYFDR_TOOLS_WRITERS_H
#define XRAYFDR_TOOLS_WRITERS_H

#include <stdio.h>

#include "../input/source.h"
#include "../input/symbols.h"

enum call_writer_kind {
	WRITER_TRACE_EVENT,
	WRITER_TRACELOG,
};

struct call_writer;

/* @names: optional names for function ids (NULL: llvm-xray's "#id"). */
struct call_writer *call_writer_new(enum call_writer_kind kind, FILE *out,
				    const struct trace_header *hdr,
				    struct symbols *names);
/* Return 0, or -ENOMEM / -E2BIG (a stack too deep). */
int call_writer_event(struct call_writer *w, const struct xrayfdr_event *ev);
/* A run of one thread's calls (trace_next_calls()), after the first
 * event went through call_writer_event(); the same returns. */
int call_writer_calls(struct call_writer *w, const struct xrayfdr_event *last,
		      const struct xrayfdr_call_event *calls, size_t n);
/* Only calls that last @ticks or more (calls_min_duration()); before
 * the first event. */
void call_writer_min_duration(struct call_writer *w, uint64_t ticks);
int call_writer_finish(struct call_writer *w);
/* trace_event: the events written so far (0 for TraceLog). */
uint64_t call_writer_records(const struct call_writer *w);
/* Exits that matched no entry, left out. */
uint64_t call_writer_unmatched(const struct call_writer *w);
/* TraceLog: times too large for its fields, written as the largest
 * (or, for times before the first event, the smallest) int64_t. */
uint64_t call_writer_clamped(const struct call_writer *w);
void call_writer_free(struct call_writer *w);

#endif
