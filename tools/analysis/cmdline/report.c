// SPDX-License-Identifier: GPL-2.0-only
/* Messages of the analysis code and the commands (see report.h). */
#include <stdarg.h>
#include <stdio.h>

#include "report.h"

void tool_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xrayfdr %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
