// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The library's one output channel, replaceable by the caller. */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static int default_print(enum xrayfdr_print_level level, const char *fmt,
			 va_list args)
{
	if (level > XRAYFDR_WARN && !getenv("XRAYFDR_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static xrayfdr_print_fn print_fn = default_print;

xrayfdr_print_fn xrayfdr_set_print(xrayfdr_print_fn fn)
{
	xrayfdr_print_fn old = print_fn;

	print_fn = fn;
	return old;
}

void xrayfdr_log(enum xrayfdr_print_level level, const char *fmt, ...)
{
	va_list args;

	if (!print_fn)
		return;
	va_start(args, fmt);
	print_fn(level, fmt, args);
	va_end(args);
}

const char *xrayfdr_version_string(void)
{
	return XRAYFDR_VERSION;
}
