/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Function filters: which functions rules select.  The runtime keeps one,
 * from XRAYFDR_FILTER, for "patch everything" (what xrayfdr record -F and
 * -N set); the tools make their own for extract, replay and the analyses'
 * -F and -N.  A filter is an object, so that the tools can check a rule
 * or hold several without touching the runtime's.
 *
 * Rules are lines: "+PATTERN" selects (-F), and "-PATTERN" leaves out
 * (-N).  A function passes if no rule selects or one does, and no rule
 * leaves it out.  PATTERN is a shell glob (fnmatch) or, between slashes,
 * an extended regular expression; either may end in "@OBJECT", a glob on
 * the base name of the file the function is in (the program or a shared
 * object).  Names are those of the objects' ELF symbol tables, demangled
 * when the process has __cxa_demangle (a C++ program): a pattern matches
 * the name as written, the demangled name, or the demangled name without
 * its parameters.  Functions no symbol names are matched by "?" and "*"
 * patterns only as the empty name.
 */
#ifndef XRAYFDR_LIB_FILTER_FILTER_H
#define XRAYFDR_LIB_FILTER_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../xray/instr_map.h"

struct fn_filter;

/* A filter without rules (every function passes), or NULL with errno
 * set. */
struct fn_filter *fn_filter_new(void);

void fn_filter_free(struct fn_filter *f);

/*
 * Parse the @len bytes of rules at @spec into @f, in place of any before.
 * Return 0, or -EINVAL (no rules then) with the rule and the reason in
 * @err, or -ENOMEM.
 */
int fn_filter_parse(struct fn_filter *f, const char *spec, size_t len,
		    char *err, size_t errlen);

/* Are there rules? */
bool fn_filter_active(const struct fn_filter *f);

/* Are there selecting ("+") rules? */
bool fn_filter_selects(const struct fn_filter *f);

/*
 * Which functions of the object in file @path, loaded at @bias, @f
 * selects: *@selected, a byte per function of @map (1: it passes), for
 * the caller to free.  Return 0 or -ENOMEM.
 */
int fn_filter_select(const struct fn_filter *f, const char *path,
		     uintptr_t bias, const struct xray_instr_map *map,
		     uint8_t **selected);

/* Does @name of a function in the file @path pass @f? */
bool fn_filter_match(const struct fn_filter *f, const char *name,
		     const char *path);

/* For tools that apply the rules to call trees (uftrace's -F and -N):
 * which kinds of rule @name in @path matches. */
#define FN_FILTER_SELECTED 1u /* a "+" rule */
#define FN_FILTER_LEFT_OUT 2u /* a "-" rule */
unsigned int fn_filter_classify(const struct fn_filter *f, const char *name,
				const char *path);

#endif
