/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Instrumentation maps in YAML, as `llvm-xray extract` (and ours) write
 * them, which llvm-xray's -instr_map takes too: one flow mapping per sled,
 *
 *   - { id: 1, address: 0x1140, function: 0x1140, kind: function-enter,
 *       always-instrument: true, function-name: '', version: 2 }
 *
 * (on one line), after a "---" line (optional, and comment lines may come
 * before it), up to a "..." line.  version, always-instrument and
 * function-name may be left out (llvm-xray's own tests leave them out).  Keys may come in
 * any order; id, address, function and kind are required, ids start at 1
 * and a sled's id is its function's, which never goes back.  Like
 * llvm-xray, the tools name such functions by address: a YAML map has no
 * symbols.
 */
#ifndef XRAYFDR_TOOLS_YAML_MAP_H
#define XRAYFDR_TOOLS_YAML_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "../../../lib/xray/instr_map.h"

/* Does @len bytes at @text start a YAML document? */
bool yaml_map_looks_like(const char *text, size_t len);

/*
 * Parse the map at @text (@len bytes, not terminated) into @map.  Return
 * 0, or -EINVAL with "NAME: line N: why" in @err (@name: the file's).
 */
int yaml_map_parse(const char *text, size_t len, const char *name,
		   struct xray_instr_map *map, char *err, size_t errlen);

/* Read and parse the file @path; -errno if it cannot be read. */
int yaml_map_load(const char *path, struct xray_instr_map *map, char *err,
		  size_t errlen);

#endif
