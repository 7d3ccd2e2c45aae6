// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lines of a text trace, its errors and skip accounting (see
 * text_lines.h): what the format parsers share, below them and below the
 * text_reader that picks one of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"

#define MAX_LINE (64u << 20)

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
