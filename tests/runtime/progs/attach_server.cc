// SPDX-License-Identifier: GPL-2.0-only
/*
 * A server-like program for xrayfdr attach (tests/runtime/test_attach.py),
 * built without any runtime: threads blocked in read(), sleeping,
 * spinning, allocating, throwing C++ exceptions through traced frames,
 * and workers waiting on a condition variable for rounds.  Each background
 * call is slow on purpose (at least a few microseconds), so that a window
 * of 64 MiB holds whatever one round adds.  Commands on stdin:
 *   round N   each of WORKERS workers calls counted() N times and
 *             counted_arg() N / 2 times; prints "done R counted=C
 *             counted_arg=A" when all are done
 *   load PATH dlopen()s PATH, a shared object with plugin_fn(); prints
 *             "loaded" (or "load failed")
 *   plugin N  calls plugin_fn() N times; prints "plugin N"
 *   quit      prints "result ok" if every thread did what it was asked
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

#define WORKERS 4

static std::atomic<long> sink;
static std::atomic<bool> stopping;
static std::atomic<long> caught, bytes_read, naps, allocs;
static int pipe_fd[2];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static long round_no, round_calls, finished;

static void busy_us(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 50; i++)
			sink.fetch_add(i, std::memory_order_relaxed);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000 +
			 (b.tv_nsec - a.tv_nsec) / 1000 <
		 us);
}

extern "C" __attribute__((noinline)) void counted(void)
{
	sink.fetch_add(1, std::memory_order_relaxed);
}

extern "C" [[clang::xray_log_args(1)]] __attribute__((noinline)) void
counted_arg(long i)
{
	sink.fetch_add(i, std::memory_order_relaxed);
}

extern "C" __attribute__((noinline)) void spin(void)
{
	busy_us(20);
}

extern "C" __attribute__((noinline)) void nap(void)
{
	struct timespec ts = { 0, 500000 };

	nanosleep(&ts, NULL);
	naps++;
}

extern "C" __attribute__((noinline)) void got_byte(char c)
{
	bytes_read += c ? 1 : 0;
}

extern "C" __attribute__((noinline)) void alloc_some(void)
{
	void *p = malloc(64 + (size_t)(rand() % 4096));

	memset(p, 1, 64);
	busy_us(5);
	free(p);
	allocs++;
}

extern "C" __attribute__((noinline)) void throw_deep(int n)
{
	busy_us(10);
	if (n == 0)
		throw std::runtime_error("deep");
	throw_deep(n - 1);
}

extern "C" __attribute__((noinline)) void catcher(void)
{
	try {
		throw_deep(3);
	} catch (const std::exception &) {
		caught++;
	}
}

static void *spinner(void *)
{
	while (!stopping)
		spin();
	return NULL;
}

static void *sleeper(void *)
{
	while (!stopping)
		nap();
	return NULL;
}

static void *reader(void *)
{
	char c;

	while (read(pipe_fd[0], &c, 1) == 1)
		got_byte(c);
	return NULL;
}

static void *allocator(void *)
{
	while (!stopping)
		alloc_some();
	return NULL;
}

static void *thrower(void *)
{
	while (!stopping)
		catcher();
	return NULL;
}

static void *worker(void *)
{
	long seen = 0;

	for (;;) {
		long calls;

		pthread_mutex_lock(&lock);
		while (round_no == seen && !stopping)
			pthread_cond_wait(&go, &lock);
		if (stopping) {
			pthread_mutex_unlock(&lock);
			return NULL;
		}
		seen = round_no;
		calls = round_calls;
		pthread_mutex_unlock(&lock);
		for (long i = 0; i < calls; i++) {
			counted();
			if (i % 2)
				counted_arg(i);
		}
		pthread_mutex_lock(&lock);
		finished++;
		pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&lock);
	}
}

int main(void)
{
	void *(*const bg[])(void *) = { spinner, sleeper, reader, allocator,
					thrower };
	pthread_t bgt[5], wt[WORKERS];
	long sent = 0, total_counted = 0, total_arg = 0;
	char line[4200];
	void (*plugin)(long) = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(pipe_fd))
		return 1;
	for (int i = 0; i < 5; i++)
		pthread_create(&bgt[i], NULL, bg[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&wt[i], NULL, worker, NULL);
	printf("pid %ld\n", (long)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		long n;

		if (sscanf(line, "round %ld", &n) == 1) {
			pthread_mutex_lock(&lock);
			finished = 0;
			round_calls = n;
			round_no++;
			pthread_cond_broadcast(&go);
			while (finished < WORKERS)
				pthread_cond_wait(&done_cv, &lock);
			pthread_mutex_unlock(&lock);
			if (write(pipe_fd[1], "x", 1) == 1)
				sent++;
			total_counted += n * WORKERS;
			total_arg += n / 2 * WORKERS;
			printf("done %ld counted=%ld counted_arg=%ld\n",
			       round_no, n * WORKERS, n / 2 * WORKERS);
		} else if (!strncmp(line, "load ", 5)) {
			void *h;

			line[strcspn(line, "\n")] = '\0';
			h = dlopen(line + 5, RTLD_NOW);
			plugin = h ? (void (*)(long))dlsym(h, "plugin_fn") :
				     NULL;
			printf("%s\n", plugin ? "loaded" : "load failed");
		} else if (sscanf(line, "plugin %ld", &n) == 1 && plugin) {
			for (long i = 0; i < n; i++)
				plugin(i);
			printf("plugin %ld\n", n);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		}
	}
	stopping = true;
	pthread_mutex_lock(&lock);
	pthread_cond_broadcast(&go);
	pthread_mutex_unlock(&lock);
	close(pipe_fd[1]);
	for (int i = 0; i < 5; i++)
		pthread_join(bgt[i], NULL);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(wt[i], NULL);
	/* every thread went on doing its work however often it was attached */
	if (bytes_read == sent && caught > 0 && naps > 0 && allocs > 0)
		printf("result ok rounds=%ld counted=%ld counted_arg=%ld\n",
		       round_no, total_counted, total_arg);
	else
		printf("result bad bytes=%ld/%ld caught=%ld naps=%ld allocs=%ld\n",
		       bytes_read.load(), sent, caught.load(), naps.load(),
		       allocs.load());
	return 0;
}
