// SPDX-License-Identifier: GPL-2.0-only
/* Function filters over a trace's names; see funcfilter.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcfilter.h"
#include "../cmdline/report.h"
#include "../input/symbols.h"

void func_filter_init(struct func_filter *f, const struct fn_filter *rules,
		      struct symbols *syms, const char *map_path)
{
	memset(f, 0, sizeof(*f));
	f->rules = rules;
	f->syms = syms;
	f->map_path = map_path ? map_path : "";
}

int func_filter_classify(struct func_filter *f, int32_t id)
{
	uintptr_t c = (uintptr_t)u64map_get(&f->classes, (uint32_t)id);
	const char *name, *paren;

	if (c)
		return (int)(c - 1);
	name = symbols_name(f->syms, id);
	c = fn_filter_classify(f->rules, name, f->map_path);
	/* the demangled name without its parameters */
	paren = strchr(name, '(');
	if (paren && paren != name) {
		char *bare = strndup(name, (size_t)(paren - name));

		if (!bare)
			return -ENOMEM;
		c |= fn_filter_classify(f->rules, bare, f->map_path);
		free(bare);
	}
	if (u64map_put(&f->classes, (uint32_t)id, (void *)(c + 1)))
		return -ENOMEM;
	return (int)c;
}

void func_filter_free(struct func_filter *f)
{
	u64map_free(&f->classes);
}

bool filter_add_rule(const char *cmd, char **filter, char sign,
		     const char *pattern)
{
	size_t n = strlen(pattern), old = *filter ? strlen(*filter) : 0;
	char line[PATH_MAX + 2], err[512];
	struct fn_filter *check;
	char *f;
	int ret;

	if (!n || strchr(pattern, '\n') || n > PATH_MAX) {
		tool_error(cmd, "-%c: '%s' is not a pattern",
			   sign == '+' ? 'F' : 'N', pattern);
		return false;
	}
	/* the runtime's own parser, so that what it would refuse is
	 * refused here */
	n = (size_t)snprintf(line, sizeof(line), "%c%s", sign, pattern);
	check = fn_filter_new();
	if (!check) {
		tool_error(cmd, "out of memory");
		return false;
	}
	ret = fn_filter_parse(check, line, n, err, sizeof(err));
	fn_filter_free(check);
	if (ret == -ENOMEM) {
		tool_error(cmd, "out of memory");
		return false;
	}
	if (ret) {
		tool_error(cmd, "-%c '%s': %s", sign == '+' ? 'F' : 'N',
			   pattern,
			   strchr(err, ':') ? strchr(err, ':') + 2 : err);
		return false;
	}
	f = realloc(*filter, old + n + 2);
	if (!f) {
		tool_error(cmd, "out of memory");
		return false;
	}
	snprintf(f + old, n + 2, "%s\n", line);
	*filter = f;
	return true;
}
