// SPDX-License-Identifier: GPL-2.0-only
/* Threads that call pthread_exit() three traced calls deep: their entries
 * have no exits, and their buffers must still reach the log. */
#include <pthread.h>
#include <stdint.h>

#include "counts.h"

volatile long sink;
COUNTER(level1);
COUNTER(level2);
COUNTER(level3);
COUNTER(finisher);

TRACED void finisher(long i)
{
	HIT(finisher);
	sink += i;
}

TRACED void level3(long i)
{
	HIT(level3);
	finisher(i);
	if (i % 2)
		pthread_exit(NULL);
}

TRACED void level2(long i)
{
	HIT(level2);
	level3(i);
	finisher(i);
}

TRACED void *level1(void *arg)
{
	HIT(level1);
	level2((long)(intptr_t)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, level1, (void *)(intptr_t)i);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	PRINT(level1);
	PRINT(level2);
	PRINT(level3);
	PRINT(finisher);
	return 0;
}
