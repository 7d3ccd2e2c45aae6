/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The llvm-xray YAML trace reader behind text_reader.h: it parses the
 * lines of @l, a text_reader's, which also holds its errors and counts.
 */
#ifndef XRAYFDR_TOOLS_YAML_READER_H
#define XRAYFDR_TOOLS_YAML_READER_H

#include "text_lines.h"

struct yaml_reader;

struct yaml_reader *yaml_reader_new(struct text_lines *l);
void yaml_reader_free(struct yaml_reader *r);

/* Read up to "records:", filling @hdr.  0, or -errno (see l->err). */
int yaml_reader_header(struct yaml_reader *r, struct trace_header *hdr);

/* 1 with an event, 0 at the end, negative errno on an error. */
int yaml_reader_next(struct yaml_reader *r, const struct xrayfdr_event **ev);

#endif
