// SPDX-License-Identifier: GPL-2.0-only
/*
 * More threads than CPUs, each doing what real programs do between
 * calls: spinning, sleeping, waiting on a lock another thread holds,
 * yielding, and moving to another CPU (sched_setaffinity) in the middle
 * of a call, so that the scheduler switches them often and a thread's
 * records end up in every CPU's ring.
 *
 *   mixed ROUNDS [THREADS]
 *
 * THREADS defaults to three per CPU; ROUNDS 0 runs until killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "counts.h"

volatile long sink;
COUNTER(one_round);
COUNTER(spin);
COUNTER(nap);
COUNTER(locked);
COUNTER(hop);
COUNTER(leaf);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_set_t allowed;
static int cpus[64], ncpus;
static long rounds;

TRACED long leaf(long x)
{
	HIT(leaf);
	sink = x;
	return x + 1;
}

TRACED long spin(long n)
{
	long r = 0;

	HIT(spin);
	for (long i = 0; i < n; i++)
		r += leaf(i);
	return r;
}

TRACED void nap(long us)
{
	HIT(nap);
	usleep((useconds_t)us);
}

/* Spins holding the lock: the others wait for it, asleep. */
TRACED long locked(long n)
{
	long r;

	HIT(locked);
	pthread_mutex_lock(&lock);
	r = spin(n);
	pthread_mutex_unlock(&lock);
	return r;
}

NOT_TRACED static void pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* Moves to another CPU in the middle of the call, and back to all. */
TRACED long hop(long i)
{
	long r;

	HIT(hop);
	pin(cpus[i % ncpus]);
	r = leaf(i);
	pin(cpus[(i + 1) % ncpus]);
	r += spin(5);
	sched_setaffinity(0, sizeof(allowed), &allowed);
	return r;
}

TRACED void one_round(long t, long i)
{
	HIT(one_round);
	switch ((t + i) % 5) {
	case 0:
		spin(100);
		break;
	case 1:
		nap(50 + i % 100);
		break;
	case 2:
		locked(20);
		break;
	case 3:
		hop(t + i);
		break;
	default:
		sched_yield();
		leaf(i);
		break;
	}
}

NOT_TRACED static void *worker(void *arg)
{
	long t = (long)arg;

	for (long i = 0; !rounds || i < rounds; i++)
		one_round(t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	long n;

	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE && ncpus < 64; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[ncpus++] = c;
	rounds = argc > 1 ? atol(argv[1]) : 200;
	n = argc > 2 ? atol(argv[2]) : 3L * ncpus;
	if (n < 1 || n > 64)
		n = 6;
	for (long i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (long i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	PRINT(one_round);
	PRINT(spin);
	PRINT(nap);
	PRINT(locked);
	PRINT(hop);
	PRINT(leaf);
	return 0;
}
