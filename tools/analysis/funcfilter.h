/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * -F and -N of the analysis commands: which kinds of rule (RT_FILTER_*,
 * lib/runtime/filter.h) a function of the trace matches, by its name as
 * written, and by its demangled name without its parameters.  The rules
 * are the runtime's own (rt_filter_parse()); the answer is kept per
 * function id.
 */
#ifndef XRAYFDR_TOOLS_FUNCFILTER_H
#define XRAYFDR_TOOLS_FUNCFILTER_H

#include <stdint.h>

#include "../../lib/runtime/filter.h"
#include "../../lib/util/u64map.h"

struct symbols;

struct func_filter {
	struct symbols *syms;
	const char *map_path; /* what "@OBJECT" in a rule matches */
	struct u64map classes; /* function id -> its class + 1 */
};

void func_filter_init(struct func_filter *f, struct symbols *syms,
		      const char *map_path);

/* RT_FILTER_SELECTED and RT_FILTER_LEFT_OUT bits of @id, or -ENOMEM. */
int func_filter_classify(struct func_filter *f, int32_t id);

void func_filter_free(struct func_filter *f);

#endif
