// SPDX-License-Identifier: GPL-2.0-only
/*
 * A server-like program for `xrayfdr snapshot PID`: it handles numbered
 * requests until the file argv[1] exists, then prints how many it
 * handled.  Each request is a traced call that logs its number.
 *
 * With argv[2] = N and argv[3] = PROGRESS, N worker threads handle the
 * requests (numbered in one sequence), and after each call returns, a
 * worker stores its number at its own 8-byte slot of the file PROGRESS
 * (mapped shared): what a reader finds there was completed before it
 * read it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))
#define MAX_WORKERS 16

volatile long sink;
static const char *stop;
static long next_request, handled;
static volatile int64_t *progress;

TRACED __attribute__((xray_log_args(1))) void handle(long i)
{
	sink += i;
}

UNTRACED static void *worker(void *arg)
{
	long w = (long)arg;

	while (access(stop, F_OK)) {
		long i = __atomic_add_fetch(&next_request, 1, __ATOMIC_RELAXED);

		handle(i);
		__atomic_store_n(&progress[w], i, __ATOMIC_RELEASE);
		__atomic_add_fetch(&handled, 1, __ATOMIC_RELAXED);
		/* at most 1,000 a second each: a small window holds
		 * seconds of them */
		usleep(1000);
	}
	return NULL;
}

UNTRACED int main(int argc, char **argv)
{
	pthread_t threads[MAX_WORKERS];
	long nworkers = 0, i = 0;
	int fd;

	if (argc < 2)
		return 2;
	stop = argv[1];
	if (argc == 4) {
		nworkers = atol(argv[2]);
		fd = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (nworkers < 1 || nworkers > MAX_WORKERS || fd < 0 ||
		    ftruncate(fd, 8 * MAX_WORKERS))
			return 2;
		progress = mmap(NULL, 8 * MAX_WORKERS, PROT_READ | PROT_WRITE,
				MAP_SHARED, fd, 0);
		if (progress == MAP_FAILED)
			return 2;
		for (i = 0; i < nworkers; i++)
			if (pthread_create(&threads[i], NULL, worker,
					   (void *)i))
				return 2;
		for (i = 0; i < nworkers; i++)
			pthread_join(threads[i], NULL);
		printf("handled %ld\n", handled);
		return 0;
	}
	while (access(stop, F_OK)) {
		handle(++i);
		/* at most 10,000 a second, so a window can hold them all */
		if (!(i % 10))
			usleep(1000);
	}
	printf("handled %ld\n", i);
	return 0;
}
