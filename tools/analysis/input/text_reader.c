// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text readers (see text_reader.h): the dispatch to the format's
 * parser, yaml_reader.c or tracelog_reader.c, over the lines of
 * text_lines.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text_lines.h"
#include "text_reader.h"
#include "tracelog_reader.h"
#include "yaml_reader.h"

struct text_reader {
	struct text_lines lines;
	/* the format's parser: one of the two */
	struct yaml_reader *yaml;
	struct tracelog_reader *tracelog;

	struct trace_header hdr;
	int header_ret; /* 1 before reading */
};

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
