/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Function ids to names: the binary's instrumentation map gives each id an
 * address, and the binary's symbol table and DWARF (read with libdw) give
 * the address a name and a source position.  Names are those llvm-xray
 * prints: the symbol, demangled; "@(hex address)" when nothing names the
 * address; "#id" when the id is not in the map (or no map was given).
 */
#ifndef XRAYFDR_TOOLS_SYMBOLS_H
#define XRAYFDR_TOOLS_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../lib/xray/instr_map.h"

struct symbols;

/*
 * Load the instrumentation map of @binary (NULL: none, ids stay numbers).
 * @demangle: C++ names demangled (llvm-xray's default).  On failure return
 * NULL with a message naming the file in @err.
 */
struct symbols *symbols_open(const char *binary, bool demangle, char *err,
			     size_t errlen);
void symbols_free(struct symbols *s);

/*
 * Function ids of a trace's shared objects are (object index << 24) | id
 * within the object (Documentation/runtime.rst, "Function ids"): name
 * those of object @index from the binary @path.  0, or a negative errno
 * with the reason in @err.
 */
#define SYMBOLS_OBJECT_SHIFT 24
#define SYMBOLS_OBJECTS 64
int symbols_add_object(struct symbols *s, unsigned int index, const char *path,
		       char *err, size_t errlen);

/* The map, or NULL without a binary. */
const struct xray_instr_map *symbols_map(const struct symbols *s);

/*
 * Names a trace carries itself (TraceLog's "fun nam"), used for ids the
 * map does not name; @fn returns NULL for an id it does not know.
 */
void symbols_use_trace_names(struct symbols *s,
			     const char *(*fn)(void *ctx, int32_t id),
			     void *ctx);

/* llvm-xray's name for a function id (cached; valid until symbols_free). */
const char *symbols_name(struct symbols *s, int32_t func_id);

/*
 * llvm-xray's "file:line:column" of a function's entry (the file's base
 * name), "<invalid>:0:0" without line information, "(unknown)" for an id
 * the map does not have.
 */
const char *symbols_location(struct symbols *s, int32_t func_id);

#endif
