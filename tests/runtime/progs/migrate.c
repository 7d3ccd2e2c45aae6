// SPDX-License-Identifier: GPL-2.0-only
/*
 * Migration: threads that move between CPUs in the middle of calls, and
 * come back to a CPU whose ring they still own (nobody wrote there
 * since), so that the order of a thread's records spans rings.
 *
 *   migrate ROUNDS THREADS
 *
 * Each round of each thread: outer() calls leaf() on the first CPU of
 * the thread's mask, moves to the next, calls leaf() again, moves back,
 * and calls it once more.  With one CPU allowed, nothing moves.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "counts.h"

volatile long sink;
COUNTER(outer);
COUNTER(leaf);

static cpu_set_t allowed;
static int cpus[2], ncpus;

NOT_TRACED static void move_to(int i)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpus[i % ncpus], &one);
	sched_setaffinity(0, sizeof(one), &one);
}

TRACED long leaf(long x)
{
	HIT(leaf);
	sink = x;
	return x + 1;
}

TRACED long outer(long i)
{
	long r;

	HIT(outer);
	r = leaf(i);
	move_to(1);
	r += leaf(r);
	move_to(0);
	r += leaf(r);
	return r;
}

static long rounds;

NOT_TRACED static void *worker(void *arg)
{
	long r = 0;

	(void)arg;
	move_to(0);
	for (long i = 0; i < rounds; i++)
		r += outer(i);
	sink = r;
	sched_setaffinity(0, sizeof(allowed), &allowed);
	return NULL;
}

int main(int argc, char **argv)
{
	long nthreads = argc > 2 ? atol(argv[2]) : 1;
	pthread_t t[16];

	rounds = argc > 1 ? atol(argv[1]) : 100;
	if (nthreads < 1 || nthreads > 16)
		nthreads = 1;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[ncpus++] = c;
	for (long i = 1; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	worker(NULL);
	for (long i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	PRINT(outer);
	PRINT(leaf);
	return 0;
}
