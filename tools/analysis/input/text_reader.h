/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Readers of the text trace formats, as streams of events:
 *
 *  - llvm-xray's YAML, as `llvm-xray convert --output-format=yaml` (and
 *    `xrayfdr convert`) write it: a header mapping and a records sequence
 *    of flow mappings, one per line; block-style records are read too.
 *    Any header version is accepted (llvm-xray reads only version 1).
 *  - CoreProfiler TraceLog: stack samples ("sam str") in instrumentation
 *    mode become function entries and exits.  Timestamps are milliseconds
 *    from the start of profiling, possibly negative: the trace's clock runs
 *    at 1000 Hz and its TSC is the millisecond plus 2^32.
 *
 * Both read one line at a time (lines up to 64 MiB), keep per-thread state
 * only, and report problems as "FILE: line N: ...".  In keep-going mode a
 * bad line is skipped and counted.
 *
 * The formats' parsers are yaml_reader.c and tracelog_reader.c; what they
 * share, the line reader, is text_lines.c, below them.
 */
#ifndef XRAYFDR_TOOLS_TEXT_READER_H
#define XRAYFDR_TOOLS_TEXT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "source.h"

enum text_kind {
	TEXT_YAML,
	TEXT_TRACELOG,
};

struct text_reader;

/*
 * @keep_going: a bad line is skipped, counted, and (if @on_skip is not
 * NULL) reported through it with its message.
 */
struct text_reader *text_reader_new(enum text_kind kind, FILE *f,
				    const char *name, bool keep_going,
				    void (*on_skip)(void *ctx, const char *msg),
				    void *ctx);
void text_reader_free(struct text_reader *r);

/* Read up to the first record.  0, or -EBADMSG/-EIO (see _error()). */
int text_reader_header(struct text_reader *r, struct trace_header *hdr);

/* 1 with an event, 0 at the end, negative errno on an error. */
int text_reader_next(struct text_reader *r, const struct xrayfdr_event **ev);

/* The message of the last error ("FILE: line N: ..."). */
const char *text_reader_error(const struct text_reader *r);

void text_reader_stats(const struct text_reader *r, struct trace_stats *st);

/* TraceLog names functions ("fun nam"): the name of @func_id, or NULL. */
const char *text_reader_function_name(const struct text_reader *r,
				      int32_t func_id);

#endif
