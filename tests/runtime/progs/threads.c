// SPDX-License-Identifier: GPL-2.0-only
/* Many threads, started in waves, each calling traced functions. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "counts.h"

volatile long sink;
COUNTER(work);
COUNTER(step);
COUNTER(worker);

TRACED void step(long i)
{
	HIT(step);
	sink += i;
}

TRACED void work(long i)
{
	HIT(work);
	step(i);
	step(i + 1);
}

TRACED void *worker(void *arg)
{
	long n = (long)(intptr_t)arg;

	HIT(worker);
	for (long i = 0; i < n; i++)
		work(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000;
	pthread_t t[16];

	for (int wave = 0; wave < 4; wave++) {
		for (int i = 0; i < 16; i++)
			pthread_create(&t[i], NULL, worker,
				       (void *)(intptr_t)(calls + i));
		for (int i = 0; i < 16; i++)
			pthread_join(t[i], NULL);
	}
	PRINT(work);
	PRINT(step);
	PRINT(worker);
	return 0;
}
