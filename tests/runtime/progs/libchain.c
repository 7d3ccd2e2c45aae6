// SPDX-License-Identifier: GPL-2.0-only
/* An instrumented object that needs another (libtraced.so). */
#include "counts.h"

void lib_outer(int i);
void lib_print(void);

COUNTER(chain_outer);

TRACED void chain_outer(int i)
{
	HIT(chain_outer);
	lib_outer(i);
}

void chain_print(void)
{
	PRINT(chain_outer);
	lib_print();
}
