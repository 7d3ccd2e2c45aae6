// SPDX-License-Identifier: GPL-2.0-only
/* setjmp/longjmp out of traced frames: the frames jumped over never
 * exit, the log must stay valid and the counts right. */
#include <setjmp.h>

#include "counts.h"

volatile long sink;
static jmp_buf env;
COUNTER(outer);
COUNTER(middle);
COUNTER(inner);

TRACED void inner(int i)
{
	HIT(inner);
	if (i % 3 == 0)
		longjmp(env, i + 1);
	sink += i;
}

TRACED void middle(int i)
{
	HIT(middle);
	inner(i);
	sink++;
}

TRACED void outer(int i)
{
	HIT(outer);
	if (setjmp(env)) {
		sink--;
		return;
	}
	middle(i);
}

int main(void)
{
	for (int i = 0; i < 300; i++)
		outer(i);
	PRINT(outer);
	PRINT(middle);
	PRINT(inner);
	return 0;
}
