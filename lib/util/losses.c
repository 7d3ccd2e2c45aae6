// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "decimal.h"
#include "losses.h"

static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *put_part(char *p, uint64_t n, const char *what)
{
	char digits[DECIMAL_MAX];

	if (!n)
		return p;
	p = put_str(p, ", ");
	p = put_str(p, u64_decimal(n, digits));
	return put_str(p, what);
}

const char *losses_text(char buf[LOSSES_TEXT_MAX], uint64_t kernel_lost,
			uint64_t damaged)
{
	char *p = put_part(buf, kernel_lost, " scheduler records lost");

	*put_part(p, damaged, " damaged parts of the rings skipped") = '\0';
	return buf;
}
