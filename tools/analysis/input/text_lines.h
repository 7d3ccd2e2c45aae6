/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the text format readers (yaml_reader.c, tracelog_reader.c): the
 * lines of the file, the last error and the counts of what was read and
 * skipped.  A text_reader (text_reader.h) owns them and hands them to the
 * format's parser; this layer knows neither.
 */
#ifndef XRAYFDR_TOOLS_TEXT_LINES_H
#define XRAYFDR_TOOLS_TEXT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "source.h"

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
