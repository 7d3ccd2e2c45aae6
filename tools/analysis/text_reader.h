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
 * share, the line reader below "For the format readers", is text_reader.c.
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

/*
 * For the format readers: the lines of the file, the last error and the
 * counts of what was read and skipped, owned by the text_reader.
 */
struct text_lines {
	FILE *f;
	char *name;
	bool keep_going;
	void (*on_skip)(void *ctx, const char *msg);
	void *skip_ctx;

	char *line; /* the current line, without its line break */
	size_t line_cap;
	size_t line_len;
	uint64_t lineno;
	bool eof;
	bool have_line; /* set: the next text_next_line() returns it again */
	char err[768];
	struct trace_stats stats;

	/* scratch for decoded strings (text_append()); NUL-terminated */
	char *data;
	size_t data_cap;
};

/* Set the error "FILE: line N: ..." and count it; returns -EBADMSG. */
int text_error(struct text_lines *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* In keep-going mode, count and report a bad line (-EBADMSG) and return
 * 0 to go on; any other @ret is returned as it is. */
int text_skip_bad_line(struct text_lines *l, int ret);

/* The next line into l->line: 1, 0 at the end, or -errno. */
int text_next_line(struct text_lines *l);

/* Append @n bytes to l->data, *len long so far. */
int text_append(struct text_lines *l, size_t *len, const void *b, size_t n);

size_t text_indent(const char *s);
bool text_blank_or_comment(const char *s);

/* A position in l->line. */
struct text_cursor {
	const char *p;
};

static inline void text_skip_spaces(struct text_cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

#endif
