/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The library's size-first structs (<xrayfdr/common.h>): options a caller
 * gives and results it receives, each starting with "size_t sz", so that
 * a program built against an older or newer header keeps working.  One
 * set of helpers for all of them, in libbpf's manner: OPTS_VALID() on the
 * way in, then OPTS_GET() of each field (the default where the caller's
 * struct stops short of it); OPTS_HAS() and OPTS_PUT() on the way out.
 */
#ifndef XRAYFDR_LIB_UTIL_OPTS_H
#define XRAYFDR_LIB_UTIL_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define OPTS_END(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

/* Are @ours bytes of a struct of @sz bytes at @opts all the caller
 * meant?  A longer struct (from a newer header) is, if the bytes we do
 * not know are zero. */
static inline bool opts_known(const void *opts, size_t sz, size_t ours)
{
	for (size_t i = ours; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return false;
	return true;
}

/* NULL (no options), or a struct whose every byte we know what to do with:
 * else the caller returns -E2BIG. */
#define OPTS_VALID(opts) \
	(!(opts) || opts_known((opts), (opts)->sz, sizeof(*(opts))))

/* Does the caller's struct reach @field? */
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= OPTS_END(__typeof__(*(opts)), field))

/* The caller's @field, or @fallback where its struct stops short. */
#define OPTS_GET(opts, field, fallback) \
	(OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* Our result @ours into the caller's struct, as far as its size field
 * says it reaches; that field then says how far that was. */
#define OPTS_PUT(opts, ours)                                                 \
	do {                                                                 \
		size_t sz_ = (opts)->sz < sizeof(*(ours)) ? (opts)->sz :     \
							    sizeof(*(ours)); \
                                                                             \
		memcpy((opts), (ours), sz_);                                 \
		(opts)->sz = sz_;                                            \
	} while (0)

#endif
