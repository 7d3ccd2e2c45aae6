/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Library-internal logging.  Each file may define LOG_DOMAIN before
 * including this header so its messages say where they come from.
 */
#ifndef XRAYFDR_LIB_LOG_H
#define XRAYFDR_LIB_LOG_H

#include <xrayfdr/common.h>

#ifndef LOG_DOMAIN
#define LOG_DOMAIN "xrayfdr"
#endif

__attribute__((format(printf, 2, 3))) void
xrayfdr_log(enum xrayfdr_print_level level, const char *fmt, ...);

#define pr_warn(fmt, ...) \
	xrayfdr_log(XRAYFDR_WARN, LOG_DOMAIN ": " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) \
	xrayfdr_log(XRAYFDR_INFO, LOG_DOMAIN ": " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) \
	xrayfdr_log(XRAYFDR_DEBUG, LOG_DOMAIN ": " fmt, ##__VA_ARGS__)

#endif
