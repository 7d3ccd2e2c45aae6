// SPDX-License-Identifier: GPL-2.0-only
/*
 * The server-like workload of make bench (bench_server.py): WORKERS
 * threads call handle(), which logs its argument (xray_log_args(1)), as
 * fast as they can for DURATION_MS, while the main thread wakes every
 * TICK_US to make one traced call, tick(), as a server's housekeeping
 * thread would.  On a CPU shared with a worker, every tick is another
 * thread taking the CPU: in CPU mode, another writer of its ring.
 *
 * Each worker times its own loop in its thread's CPU time (the time other
 * tenants held the CPU excluded).  Prints "workers N wall_ns W calls C
 * cpu_ns X ticks T": the workers' calls in all and the CPU time they
 * took in all.  Usage: server WORKERS DURATION_MS TICK_US [fdr OPTIONS]
 * (BENCH_LLVM builds: LLVM's FDR mode).
 */
#include <pthread.h>
#include <stdlib.h>

#include "bench.h"

/* One worker's results, alone in its cache line: workers share nothing
 * but the stop flag. */
struct worker {
	pthread_t thread;
	long calls;
	double cpu_ns;
} __attribute__((aligned(64)));

static pthread_barrier_t start;
static volatile int stop;
volatile long sink;

__attribute__((xray_always_instrument, xray_log_args(1), noinline)) long
handle(long request)
{
	return request * 3 + 1;
}

TRACED void tick(long n)
{
	sink += n;
}

NOT_TRACED static void *work(void *arg)
{
	struct worker *w = arg;
	long calls = 0, acc = 0;
	double c0;

	pthread_barrier_wait(&start);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	while (!stop)
		acc += handle(calls++);
	w->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	w->calls = calls;
	sink += acc;
	return NULL;
}

NOT_TRACED int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 1;
	double duration_ns = (argc > 2 ? atof(argv[2]) : 1000) * 1e6;
	long tick_ns = (argc > 3 ? atol(argv[3]) : 2000) * 1000, ticks = 0;
	struct timespec period = { tick_ns / 1000000000, tick_ns % 1000000000 };
	struct worker *w;
	double w0, calls = 0, cpu_ns = 0;

	if (workers < 1 || duration_ns <= 0 || tick_ns <= 0) {
		fprintf(stderr,
			"usage: server WORKERS DURATION_MS TICK_US [fdr OPTIONS]\n");
		return 2;
	}
	w = calloc((size_t)workers, sizeof(*w));
	if (!w || llvm_fdr_start(argc, argv, 4))
		return 1;
	pthread_barrier_init(&start, NULL, (unsigned int)workers + 1);
	for (int i = 0; i < workers; i++)
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			fprintf(stderr, "server: cannot start worker %d\n", i);
			return 1;
		}
	pthread_barrier_wait(&start);
	w0 = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) - w0 < duration_ns) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &period, NULL);
		tick(ticks++);
	}
	stop = 1;
	w0 = now_ns(CLOCK_MONOTONIC) - w0;
	for (int i = 0; i < workers; i++) {
		pthread_join(w[i].thread, NULL);
		calls += (double)w[i].calls;
		cpu_ns += w[i].cpu_ns;
	}
	llvm_fdr_stop(argc, argv, 4);
	printf("workers %d wall_ns %.0f calls %.0f cpu_ns %.0f ticks %ld\n",
	       workers, w0, calls, cpu_ns, ticks);
	free(w);
	return 0;
}
