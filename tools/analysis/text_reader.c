// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the text readers share (see text_reader.h): the line reader, errors
 * and skip accounting, and the dispatch to the format's parser,
 * yaml_reader.c or tracelog_reader.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text_reader.h"
#include "tracelog_reader.h"
#include "yaml_reader.h"

#define MAX_LINE (64u << 20)

struct text_reader {
	struct text_lines lines;
	/* the format's parser: one of the two */
	struct yaml_reader *yaml;
	struct tracelog_reader *tracelog;

	struct trace_header hdr;
	int header_ret; /* 1 before reading */
};

/*
 * Lines and errors.
 */
int text_error(struct text_lines *l, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(l->err, sizeof(l->err), "%s: line %" PRIu64 ": ",
			 l->name, l->lineno);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(l->err))
		vsnprintf(l->err + n, sizeof(l->err) - (size_t)n, fmt, ap);
	va_end(ap);
	l->stats.errors++;
	return -EBADMSG;
}

/* In keep-going mode, report a bad line and go on; else stop. */
int text_skip_bad_line(struct text_lines *l, int ret)
{
	if (ret != -EBADMSG || !l->keep_going)
		return ret;
	if (l->on_skip)
		l->on_skip(l->skip_ctx, l->err);
	l->stats.skipped_buffers++;
	l->stats.skipped_bytes += l->line_len;
	return 0;
}

/* The next line, without its line break: 1, 0 at the end, or -errno. */
int text_next_line(struct text_lines *l)
{
	size_t len = 0;
	int c;

	if (l->have_line) {
		l->have_line = false;
		return 1;
	}
	if (l->eof)
		return 0;
	for (;;) {
		c = getc_unlocked(l->f);
		if (c == EOF)
			break;
		l->stats.bytes++;
		if (c == '\n')
			break;
		if (len + 2 > l->line_cap) {
			size_t cap = l->line_cap ? 2 * l->line_cap : 256;
			char *n;

			if (cap > MAX_LINE + 2) {
				l->lineno++;
				return text_error(l,
						  "line longer than %u bytes",
						  MAX_LINE);
			}
			n = realloc(l->line, cap);
			if (!n)
				return -ENOMEM;
			l->line = n;
			l->line_cap = cap;
		}
		l->line[len++] = (char)c;
	}
	if (ferror(l->f)) {
		snprintf(l->err, sizeof(l->err), "%s: %s", l->name,
			 strerror(errno ? errno : EIO));
		return -EIO;
	}
	if (c == EOF) {
		l->eof = true;
		if (!len)
			return 0;
	}
	if (len && l->line[len - 1] == '\r')
		len--;
	if (!l->line)
		l->line = calloc(1, 1);
	if (!l->line)
		return -ENOMEM;
	l->line[len] = 0;
	l->line_len = len;
	l->lineno++;
	return 1;
}

size_t text_indent(const char *s)
{
	size_t i = 0;

	while (s[i] == ' ')
		i++;
	return i;
}

bool text_blank_or_comment(const char *s)
{
	s += text_indent(s);
	return !*s || *s == '#';
}

int text_append(struct text_lines *l, size_t *len, const void *b, size_t n)
{
	if (*len + n + 1 > l->data_cap) {
		size_t cap = l->data_cap ? l->data_cap : 64;
		char *d;

		while (cap < *len + n + 1)
			cap *= 2;
		d = realloc(l->data, cap);
		if (!d)
			return -ENOMEM;
		l->data = d;
		l->data_cap = cap;
	}
	memcpy(l->data + *len, b, n);
	*len += n;
	l->data[*len] = 0;
	return 0;
}
/*
 * The interface.
 */
struct text_reader *text_reader_new(enum text_kind kind, FILE *f,
				    const char *name, bool keep_going,
				    void (*on_skip)(void *ctx, const char *msg),
				    void *ctx)
{
	struct text_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->lines.f = f;
	r->lines.keep_going = keep_going;
	r->lines.on_skip = on_skip;
	r->lines.skip_ctx = ctx;
	r->header_ret = 1;
	r->hdr.format = kind == TEXT_YAML ? TRACE_YAML : TRACE_TRACELOG;
	r->lines.name = strdup(name);
	if (kind == TEXT_YAML)
		r->yaml = yaml_reader_new(&r->lines);
	else
		r->tracelog = tracelog_reader_new(&r->lines);
	if (!r->lines.name || (!r->yaml && !r->tracelog)) {
		text_reader_free(r);
		return NULL;
	}
	return r;
}

void text_reader_free(struct text_reader *r)
{
	if (!r)
		return;
	yaml_reader_free(r->yaml);
	tracelog_reader_free(r->tracelog);
	free(r->lines.line);
	free(r->lines.data);
	free(r->lines.name);
	free(r);
}

int text_reader_header(struct text_reader *r, struct trace_header *hdr)
{
	if (r->header_ret == 1)
		r->header_ret = r->yaml ? yaml_reader_header(r->yaml, &r->hdr) :
					  tracelog_reader_header(&r->hdr);
	*hdr = r->hdr;
	return r->header_ret;
}

int text_reader_next(struct text_reader *r, const struct xrayfdr_event **ev)
{
	struct trace_header hdr;
	int ret = r->header_ret == 1 ? text_reader_header(r, &hdr) :
				       r->header_ret;

	if (ret < 0)
		return ret;
	return r->yaml ? yaml_reader_next(r->yaml, ev) :
			 tracelog_reader_next(r->tracelog, ev);
}

const char *text_reader_error(const struct text_reader *r)
{
	return r->lines.err;
}

void text_reader_stats(const struct text_reader *r, struct trace_stats *st)
{
	st->bytes = r->lines.stats.bytes;
	st->errors = r->lines.stats.errors;
	st->skipped_bytes = r->lines.stats.skipped_bytes;
	st->skipped_buffers = r->lines.stats.skipped_buffers;
}

const char *text_reader_function_name(const struct text_reader *r,
				      int32_t func_id)
{
	return r->tracelog ?
		       tracelog_reader_function_name(r->tracelog, func_id) :
		       NULL;
}
