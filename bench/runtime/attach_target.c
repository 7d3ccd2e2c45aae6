// SPDX-License-Identifier: GPL-2.0-only
/*
 * The target of bench_attach.py: N threads call a traced function in a
 * loop, each keeping, since the last "mark" on stdin, its iterations,
 * and the longest wall-clock gap between two of its iterations (a thread
 * stopped for the attach shows there); their CPU time is read through
 * their CPU-time clocks.  Built without any runtime (clang
 * -fxray-instrument -fnoxray-link-deps).  Commands: "mark"; "report"
 * prints "report ITERATIONS CPU_NS MAXGAP_NS" summed over the threads
 * (the gap: the longest of any); "quit".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))
#define MAX_THREADS 256

volatile long sink;

TRACED void work(long i)
{
	sink += i;
}

struct worker {
	pthread_t thread;
	_Atomic unsigned gen; /* bumped by "mark" */
	uint64_t iters, maxgap;
	uint64_t cpu_mark; /* its CPU time at the mark (main thread's) */
	char pad[64];
};

static struct worker workers[MAX_THREADS];
static _Atomic int stop;

UNTRACED static uint64_t ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

UNTRACED static uint64_t cpu_of(pthread_t t)
{
	clockid_t c;

	return pthread_getcpuclockid(t, &c) ? 0 : ns(c);
}

UNTRACED static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned seen = w->gen;
	uint64_t last = ns(CLOCK_MONOTONIC);

	while (!stop) {
		uint64_t now;

		for (int i = 0; i < 64; i++)
			work(i);
		w->iters += 64;
		now = ns(CLOCK_MONOTONIC);
		if (now - last > w->maxgap)
			w->maxgap = now - last;
		last = now;
		if (w->gen != seen) {
			seen = w->gen;
			w->iters = 0;
			w->maxgap = 0;
		}
	}
	return NULL;
}

UNTRACED int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	char line[64];

	if (n < 1 || n > MAX_THREADS)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < n; i++)
		pthread_create(&workers[i].thread, NULL, run, &workers[i]);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "mark", 4)) {
			for (int i = 0; i < n; i++) {
				workers[i].cpu_mark = cpu_of(workers[i].thread);
				workers[i].gen++;
			}
			printf("marked\n");
		} else if (!strncmp(line, "report", 6)) {
			uint64_t iters = 0, gap = 0, cpu = 0;

			/* a racy read of counters the threads own: figures */
			for (int i = 0; i < n; i++) {
				iters += workers[i].iters;
				cpu += cpu_of(workers[i].thread) -
				       workers[i].cpu_mark;
				if (workers[i].maxgap > gap)
					gap = workers[i].maxgap;
			}
			printf("report %llu %llu %llu\n",
			       (unsigned long long)iters,
			       (unsigned long long)cpu,
			       (unsigned long long)gap);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}
