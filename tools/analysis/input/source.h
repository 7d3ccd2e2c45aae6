/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The input of the analysis commands: a trace in any format they read,
 * as a stream of events (struct xrayfdr_event), read once, in file order,
 * in bounded memory.
 *
 *   - XRay logs, FDR versions 1-5 and basic mode, through lib/fdr's reader;
 *   - llvm-xray's YAML (`llvm-xray convert --output-format=yaml`);
 *   - CoreProfiler TraceLog text (what `xrayfdr convert
 *     --output-format=tracelog` writes).
 *
 * The format is recognised from the first bytes of the file.  Problems are
 * reported on stderr as "xrayfdr CMD: FILE: ..." with an offset or line;
 * in keep-going mode the damaged part is skipped and counted.  A progress
 * line is drawn on a terminal for long reads.
 */
#ifndef XRAYFDR_TOOLS_SOURCE_H
#define XRAYFDR_TOOLS_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include <xrayfdr/fdr.h>

enum trace_format {
	TRACE_AUTO,
	TRACE_XRAY, /* FDR or basic binary log */
	TRACE_YAML,
	TRACE_TRACELOG,
};

struct trace_header {
	enum trace_format format;
	uint16_t version; /* XRay or YAML header version */
	uint16_t type; /* 0 basic, 1 FDR (as the YAML header says) */
	bool constant_tsc;
	bool nonstop_tsc;
	uint64_t cycle_frequency; /* Hz; 0 if unknown */
	uint64_t buffer_size; /* XRay FDR: bytes a buffer (0: unknown) */
};

struct trace_opts {
	const char *cmd; /* "convert": messages start "xrayfdr convert: " */
	bool keep_going;
	bool quiet; /* no progress line */
	bool silent; /* say nothing on stderr (warnings still count) */
	enum trace_format format; /* TRACE_AUTO: recognise it */
	/* XRay FDR logs: only the buffers of the threads it keeps
	 * (xrayfdr_reader_opts.keep_thread) */
	int (*keep_thread)(void *ctx, uint32_t tid);
	void *keep_ctx;
};

struct trace_stats {
	uint64_t bytes; /* consumed */
	uint64_t events;
	uint64_t errors; /* > 1 only in keep-going mode */
	uint64_t warnings;
	uint64_t skipped_bytes;
	uint64_t skipped_buffers; /* XRay: buffers; text formats: lines */
	/* XRay: damage found by checksums (not in errors; trace_status()
	 * says it once, as a warning) */
	uint64_t sum_failed;
};

struct trace;

/* Open @path ("-": standard input, XRay or --input-format only).  On
 * failure print why and return NULL with errno set. */
struct trace *trace_open(const char *path, const struct trace_opts *opts);

/*
 * The header, read on demand.  Return 0, or a negative errno after
 * printing the problem.
 */
int trace_header(struct trace *t, const struct trace_header **hdr);

/* Next event: 1, 0 at the end, or negative errno (the problem printed). */
int trace_next(struct trace *t, const struct xrayfdr_event **ev);

/*
 * The next events at once, where they are function entries and exits of
 * one thread (xrayfdr_reader_next_calls()): how many, 0 where trace_next()
 * is to take the next one.
 */
size_t trace_next_calls(struct trace *t, struct xrayfdr_call_event *out,
			size_t max, const struct xrayfdr_event **last);

const struct trace_stats *trace_stats(const struct trace *t);

/*
 * The exit status a command should use after reading: EXIT_OK, or
 * EXIT_INVALID if the input had errors (a summary of what was skipped is
 * printed in keep-going mode), EXIT_USAGE if it could not be read.
 */
int trace_status(struct trace *t, int last_ret);

void trace_close(struct trace *t);

/* A function's name if the trace carries names (TraceLog), else NULL;
 * a callback for symbols_use_trace_names() with @ctx the trace. */
const char *trace_function_name(void *ctx, int32_t func_id);

/* Where a record of an input of @format is, for messages: "offset 8192
 * (0x2000)" in an XRay log, "line 12" in text (@offset holds the line). */
const char *trace_where(enum trace_format format, uint64_t offset, char *buf,
			size_t len);

/* "xray", "yaml", "tracelog": for --input-format. */
int trace_format_parse(const char *name, enum trace_format *out);

#endif
