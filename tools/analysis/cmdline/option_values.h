/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Values of command-line options, for the analysis options (cmdline.h)
 * and the commands: sizes, times and numbers.
 */
#ifndef XRAYFDR_TOOLS_OPTION_VALUES_H
#define XRAYFDR_TOOLS_OPTION_VALUES_H

#include <stdbool.h>
#include <stdint.h>

/* Parse "123", "64K", "16M", "1G" (powers of 1024).  Return 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);
/*
 * Parse a time such as "5us", "2.5ms", "1s" (also ns, sec, m, min) into
 * nanoseconds; a bare number is in @default_unit nanoseconds (0: a unit
 * is required).  Return 0 or -EINVAL.
 */
int parse_time_ns(const char *text, uint64_t default_unit, uint64_t *ns);
/* Parse an unsigned integer in [min, max].  Return 0 or -EINVAL. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
