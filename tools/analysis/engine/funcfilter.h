/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * -F and -N of the analysis commands: which kinds of rule (FN_FILTER_*,
 * lib/filter/filter.h) a function of the trace matches, by its name as
 * written, and by its demangled name without its parameters.  The rules
 * are parsed as the runtime parses them; the answer is kept per function
 * id.
 */
#ifndef XRAYFDR_TOOLS_FUNCFILTER_H
#define XRAYFDR_TOOLS_FUNCFILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "../../../lib/filter/filter.h"
#include "../../../lib/util/u64map.h"

struct symbols;

struct func_filter {
	const struct fn_filter *rules;
	struct symbols *syms;
	const char *map_path; /* what "@OBJECT" in a rule matches */
	struct u64map classes; /* function id -> its class + 1 */
};

/* @rules stays the caller's and must outlive @f. */
void func_filter_init(struct func_filter *f, const struct fn_filter *rules,
		      struct symbols *syms, const char *map_path);

/* FN_FILTER_SELECTED and FN_FILTER_LEFT_OUT bits of @id, or -ENOMEM. */
int func_filter_classify(struct func_filter *f, int32_t id);

void func_filter_free(struct func_filter *f);

/*
 * Add the -F (@sign '+') or -N ('-') rule @pattern to *@filter, the
 * lines of XRAYFDR_FILTER (lib/filter/filter.h), checked by the
 * runtime's parser; false, said for @cmd, if it is bad.
 */
bool filter_add_rule(const char *cmd, char **filter, char sign,
		     const char *pattern);

#endif
