// SPDX-License-Identifier: GPL-2.0-only
/* Custom and typed events from __xray_customevent and __xray_typedevent;
 * the pseudo-symbols @custom and @typed count them. */
#include <stdio.h>

#include "counts.h"

volatile long sink;
COUNTER(emit);
static unsigned long n_custom, n_typed;

TRACED void emit(int i)
{
	char msg[40];
	int n = snprintf(msg, sizeof(msg), "event number %d", i);

	HIT(emit);
	__xray_customevent(msg, (size_t)n);
	n_custom++;
	if (i % 2) {
		__xray_typedevent(7, msg, (size_t)n);
		n_typed++;
	}
}

int main(void)
{
	for (int i = 0; i < 200; i++)
		emit(i);
	PRINT(emit);
	printf("count %ld @custom %lu\n", (long)getpid(), n_custom);
	printf("count %ld @typed %lu\n", (long)getpid(), n_typed);
	return 0;
}
