// SPDX-License-Identifier: GPL-2.0-only
/* An instrumented shared object (object 1: function ids 1 << 24 | n). */
#include "counts.h"

COUNTER(lib_inner);
COUNTER(lib_outer);

TRACED void lib_inner(int i)
{
	HIT(lib_inner);
	sink += i;
}

TRACED void lib_outer(int i)
{
	HIT(lib_outer);
	lib_inner(i);
	lib_inner(i + 1);
}

void lib_print(void)
{
	PRINT(lib_inner);
	PRINT(lib_outer);
}
