/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Decimal digits with plain stores only, for what writes from a fatal
 * signal or from objects built without vector registers.
 */
#ifndef XRAYFDR_LIB_UTIL_DECIMAL_H
#define XRAYFDR_LIB_UTIL_DECIMAL_H

#include <stdint.h>

/* room for any uint64_t and the NUL */
#define DECIMAL_MAX 21

/* The decimal of @v into @buf, NUL-terminated; returns @buf. */
static inline char *u64_decimal(uint64_t v, char buf[DECIMAL_MAX])
{
	char tmp[DECIMAL_MAX];
	int n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return buf;
}

#endif
