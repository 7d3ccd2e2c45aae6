// SPDX-License-Identifier: GPL-2.0-only
/*
 * Thread names in the log: two threads named with pthread_setname_np()
 * before their first traced call, one of them renamed halfway (its new
 * name reaches the log at its next buffer, or at its exit), and the main
 * thread renamed after the others are done (its new name reaches the log
 * at the flush).
 * Prints "tid NAME TID" for each, and the counts.
 */
#define _GNU_SOURCE /* pthread_setname_np() */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "counts.h"

volatile long sink;
COUNTER(work);

TRACED void work(long i)
{
	HIT(work);
	sink += i;
}

struct named {
	const char *name, *rename; /* rename: NULL to keep the name */
	long calls;
	long tid;
};

/* Not traced: the name is set before the thread's first traced call. */
NOT_TRACED static void *run(void *arg)
{
	struct named *n = arg;

	n->tid = syscall(SYS_gettid);
	pthread_setname_np(pthread_self(), n->name);
	for (long i = 0; i < n->calls; i++) {
		if (n->rename && i == n->calls / 2)
			pthread_setname_np(pthread_self(), n->rename);
		work(i);
	}
	return NULL;
}

NOT_TRACED int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 2000;
	struct named a = { "alpha", "alpha-renamed", calls, 0 };
	struct named b = { "beta", NULL, calls, 0 };
	pthread_t ta, tb;

	work(-1); /* the main thread's name, as the program started */
	if (pthread_create(&ta, NULL, run, &a) ||
	    pthread_create(&tb, NULL, run, &b))
		return 1;
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	prctl(PR_SET_NAME, "main-renamed");
	printf("tid alpha %ld\ntid beta %ld\ntid main %ld\n", a.tid, b.tid,
	       (long)getpid());
	PRINT(work);
	return 0;
}
