/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The dump of a kept session (dump.c), below xrayfdr_session_dump(). */
#ifndef XRAYFDR_LIB_RUNTIME_DUMP_H
#define XRAYFDR_LIB_RUNTIME_DUMP_H

#include <stdbool.h>
#include <stdint.h>

struct xrayfdr_trace_stats;

/*
 * Write the log of the session @fd maps (a file of the module attached to
 * session @id, a process's sealed rings, or any file laid out as the
 * module's mapping: the fuzz target's) to @path, replacing an existing
 * file only if @overwrite (out_create()), or, if @path is NULL, to @out.
 * With @snapshot (what asked, for the info event), the rings may be
 * being written: a consistent copy of them is read (rt_cpu_view_copy()).
 * Everything in the mapping but its header page is treated as hostile
 * (and the header too, but for a file of the module).  The caller holds
 * the API lock and traces nothing itself.  Return 0 or a negative errno,
 * the reason printed.
 */
int rt_dump_attached(int fd, uint32_t id, const char *path, int out,
		     bool overwrite, const char *snapshot,
		     struct xrayfdr_trace_stats *stats);

#endif
