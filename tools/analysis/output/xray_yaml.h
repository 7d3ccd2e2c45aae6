/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * llvm-xray's YAML trace format, written record for record as `llvm-xray
 * convert --output-format=yaml` writes it for the same input.
 *
 * llvm-xray's loader does more than decode: it groups an FDR log's
 * buffers by thread in a DenseMap, orders each thread's buffers with a
 * comparator on their wall-clock time, replays each thread through a
 * state machine that lets a record inherit the type of the last typed
 * event and the function id of the last function record, and finally
 * sorts all records by TSC, stably.  We stream the log once and keep per
 * buffer only its wall time and what it leaves to the next; records go
 * through an external sort (sorter.h) and equal timestamps are put in
 * llvm-xray's order at the end, when every thread and buffer is known.
 */
#ifndef XRAYFDR_TOOLS_XRAY_YAML_H
#define XRAYFDR_TOOLS_XRAY_YAML_H

#include <stdbool.h>
#include <stdio.h>

#include "../input/source.h"
#include "../input/symbols.h"

struct xray_yaml_opts {
	FILE *out;
	const struct trace_header *hdr;
	struct symbols *syms; /* names for "function", or NULL: the id */
	bool sort; /* llvm-xray's order; else the file's */
	size_t memory; /* for the sort */
};

struct xray_yaml;

struct xray_yaml *xray_yaml_new(const struct xray_yaml_opts *opts);
/* Return 0 or -errno (message in xray_yaml_error()). */
int xray_yaml_event(struct xray_yaml *y, const struct xrayfdr_event *ev);
int xray_yaml_finish(struct xray_yaml *y);
const char *xray_yaml_error(const struct xray_yaml *y);
void xray_yaml_free(struct xray_yaml *y);

#endif
