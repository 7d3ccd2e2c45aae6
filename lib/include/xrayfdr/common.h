/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Conventions shared by every part of libxrayfdr.
 *
 * - Functions that can fail return a negative errno value (and set errno).
 *   Functions returning a pointer return NULL and set errno.
 * - Options structs start with "size_t sz"; fill them with XRAYFDR_OPTS() so
 *   a program built against an older header keeps working with a newer
 *   library, and a newer program gets -E2BIG from an older library only if
 *   it actually sets a field that library does not know.
 * - Messages go through one print callback (xrayfdr_set_print()).
 */
#ifndef XRAYFDR_COMMON_H
#define XRAYFDR_COMMON_H

#include <stddef.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef XRAYFDR_API
#define XRAYFDR_API __attribute__((visibility("default")))
#endif

/* Declare and zero-fill an options struct, setting its size field. */
#define XRAYFDR_OPTS(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

enum xrayfdr_print_level {
	XRAYFDR_WARN,
	XRAYFDR_INFO,
	XRAYFDR_DEBUG,
};

typedef int (*xrayfdr_print_fn)(enum xrayfdr_print_level level, const char *fmt,
				va_list args);

/**
 * xrayfdr_set_print() - route the library's messages to @fn.
 * @fn: the new callback, or NULL to silence the library.
 *
 * The default prints warnings to stderr, and info and debug messages too
 * when the environment variable XRAYFDR_DEBUG is set.
 *
 * Return: the previous callback.
 */
XRAYFDR_API xrayfdr_print_fn xrayfdr_set_print(xrayfdr_print_fn fn);

/**
 * xrayfdr_version_string() - the library version, e.g. "0.1.0".
 */
XRAYFDR_API const char *xrayfdr_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* XRAYFDR_COMMON_H */
