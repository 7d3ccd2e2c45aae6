/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Record-time function filters: which functions "patch everything"
 * patches, from XRAYFDR_FILTER (what xrayfdr record -F and -N set).
 *
 * The variable holds rules, one per line: "+PATTERN" selects (-F), and
 * "-PATTERN" leaves out (-N).  A function is patched if no rule selects
 * or one does, and no rule leaves it out.  PATTERN is a shell glob
 * (fnmatch) or, between slashes, an extended regular expression; either
 * may end in "@OBJECT", a glob on the base name of the file the function
 * is in (the program or a shared object).  Names are those of the
 * objects' ELF symbol tables, demangled when the process has
 * __cxa_demangle (a C++ program): a pattern matches the name as written,
 * the demangled name, or the demangled name without its parameters.
 * Functions no symbol names are matched by "?" and "*" patterns only as
 * the empty name.  The program's own __xray_patch_function() calls are
 * not filtered.
 */
#ifndef XRAYFDR_LIB_RUNTIME_FILTER_H
#define XRAYFDR_LIB_RUNTIME_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../xray/instr_map.h"

/*
 * Parse the @len bytes of rules at @spec, in place of any before.  Return
 * 0, or -EINVAL (no rules then) with the rule and the reason in @err.
 */
int rt_filter_parse(const char *spec, size_t len, char *err, size_t errlen);

/*
 * Read XRAYFDR_FILTER once.  Return 0 (there may be no rules), or
 * -EINVAL with the rule and the reason in @err.
 */
int rt_filter_load(char *err, size_t errlen);

/* Are there rules? */
bool rt_filter_active(void);

/*
 * Which functions of the object in file @path, loaded at @bias, the rules
 * select: a byte per function of @map (1: patch it), or NULL if memory
 * runs out.  The caller frees it.
 */
uint8_t *rt_filter_select(const char *path, uintptr_t bias,
			  const struct xray_instr_map *map);

/* Does @name of a function in the file @path pass the rules?  (For
 * tools and tests.) */
bool rt_filter_match(const char *name, const char *path);

/* For tools that apply the rules to call trees (uftrace's -F and -N):
 * which kinds of rule @name in @path matches, and whether there are
 * selecting rules at all. */
#define RT_FILTER_SELECTED 1u /* a "+" rule */
#define RT_FILTER_LEFT_OUT 2u /* a "-" rule */
unsigned int rt_filter_classify(const char *name, const char *path);
bool rt_filter_selects(void);

#endif
