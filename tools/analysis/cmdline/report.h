/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the analysis code and the commands above it say: the exit statuses
 * every subcommand uses, and messages on stderr.  Below the command line
 * (tools/xrayfdr.h), so that the analysis code needs nothing of it.
 */
#ifndef XRAYFDR_TOOLS_REPORT_H
#define XRAYFDR_TOOLS_REPORT_H

/* Exit statuses every subcommand uses. */
enum {
	EXIT_OK = 0,
	EXIT_INVALID = 1, /* the input is invalid, or a check failed */
	EXIT_USAGE = 2, /* bad command line, or an I/O error */
};

/* Print "xrayfdr CMD: message" to stderr. */
__attribute__((format(printf, 2, 3))) void tool_error(const char *cmd,
						      const char *fmt, ...);

#endif
