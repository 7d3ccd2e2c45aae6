/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CoreProfiler TraceLog reader behind text_reader.h: it parses the
 * lines of @l, a text_reader's, which also holds its errors and counts.
 */
#ifndef XRAYFDR_TOOLS_TRACELOG_READER_H
#define XRAYFDR_TOOLS_TRACELOG_READER_H

#include "text_lines.h"

struct tracelog_reader;

struct tracelog_reader *tracelog_reader_new(struct text_lines *l);
void tracelog_reader_free(struct tracelog_reader *r);

/* A TraceLog has no header: fill @hdr with its clock.  Returns 0. */
int tracelog_reader_header(struct trace_header *hdr);

/* 1 with an event, 0 at the end, negative errno on an error. */
int tracelog_reader_next(struct tracelog_reader *r,
			 const struct xrayfdr_event **ev);

/* The name "fun nam" gave @func_id, or NULL. */
const char *tracelog_reader_function_name(const struct tracelog_reader *r,
					  int32_t func_id);

#endif
