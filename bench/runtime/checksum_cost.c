// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the buffers' checksums cost the flush and the stream's writer
 * (make bench; Documentation/fdr-format.rst, "Checksums").
 *
 * THREADS threads make CALLS traced calls each, into a queue that holds
 * them all; then the trace is flushed.  Measured in thread CPU time (time
 * the machine's other tenants take is not counted): the flush, in the
 * thread that calls xrayfdr_trace_flush(); then, on the log it wrote,
 * what computing the checksums takes, buffer by buffer as the flush
 * does: from the cache, as the flush finds each buffer when it sums it
 * (right after write(2) read it: the cost), and with the caches emptied
 * first (an upper bound, the cost were it summed before the write).  The same
 * for a streamed trace, whose writer thread's CPU time is read through
 * its thread CPU clock while it is alive.  Medians over RUNS runs, with
 * the smallest and largest; the share is taken per run.  Nothing passes
 * or fails on a time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xrayfdr/runtime.h>

#include "../../lib/util/crc32c.h"

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))
#define THREADS 4
#define CALLS 400000
#define RUNS 7
#define BUFFER_SIZE (64u << 10)
#define BUFFER_MAX 1024u
#define EVICT (64u << 20) /* bytes written to empty the caches */
#define MAX_TASKS 64

volatile long sink;

TRACED void call(long i)
{
	sink += i;
}

UNTRACED static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < CALLS; i++)
		call(i);
	return NULL;
}

UNTRACED static uint64_t ns_of(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The thread CPU clock of thread @tid of this process (the kernel's
 * encoding: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED). */
UNTRACED static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6);
}

UNTRACED static size_t tasks(pid_t *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)) && n < MAX_TASKS)
		if (e->d_name[0] != '.')
			tid[n++] = (pid_t)atoi(e->d_name);
	if (d)
		closedir(d);
	return n;
}

UNTRACED static int run_workers(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, work, NULL))
			return -1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}

UNTRACED static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static uint8_t *evict;

/* CRCs of @log's buffers from @at on, @n of them at most, as the flush
 * computes them (one of the buffer, one of the header). */
UNTRACED static uint32_t sum_buffers(const uint8_t *log, off_t size, off_t at,
				     int n)
{
	uint32_t crc = 0;

	for (; at < size && n--; at += BUFFER_SIZE) {
		size_t len = (size_t)(size - at) < BUFFER_SIZE ?
				     (size_t)(size - at) :
				     BUFFER_SIZE;

		crc ^= crc32c(0, log + at, len) ^ crc32c(0, log, 32);
	}
	return crc;
}

/* One pass over @log's buffers: its CPU time.  @warm: eight buffers at a
 * time (half a megabyte, in the L2 cache), each group summed once before
 * it is timed. */
UNTRACED static uint64_t sum_pass(const uint8_t *log, off_t size, bool warm)
{
	uint64_t ns = 0;

	for (off_t at = 32; at < size; at += 8 * BUFFER_SIZE) {
		uint64_t t0;

		if (warm)
			sink += sum_buffers(log, size, at, 8);
		t0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
		sink += sum_buffers(log, size, at, 8);
		ns += ns_of(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	return ns;
}

/* CPU time of checksumming the log at @path's buffers after emptying the
 * caches (an upper bound), then again from the cache, as the flush sums
 * each buffer after writing it (the cost), in *@warm; @bytes gets the
 * log's size. */
UNTRACED static uint64_t sum_cost(const char *path, uint64_t *bytes,
				  uint64_t *warm)
{
	int fd = open(path, O_RDONLY);
	off_t size = fd < 0 ? -1 : lseek(fd, 0, SEEK_END);
	uint8_t *log;
	uint64_t cold;

	if (size <= 32)
		return 0;
	log = malloc((size_t)size);
	if (!log || pread(fd, log, (size_t)size, 0) != size)
		exit(1);
	close(fd);
	memset(evict, (int)(size & 0xff), EVICT);
	cold = sum_pass(log, size, false);
	*warm = sum_pass(log, size, true);
	free(log);
	*bytes = (uint64_t)size;
	return cold;
}

UNTRACED static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* median, min, max of @v (sorted in place) */
UNTRACED static void stats(uint64_t *v, double scale, double *out)
{
	qsort(v, RUNS, sizeof(*v), cmp_u64);
	out[0] = (double)v[RUNS / 2] / scale;
	out[1] = (double)v[0] / scale;
	out[2] = (double)v[RUNS - 1] / scale;
}

UNTRACED static void row(const char *name, uint64_t *v, double scale,
			 const char *unit)
{
	double s[3];

	stats(v, scale, s);
	printf("  %-26s %9.3f %9.3f %9.3f  %s\n", name, s[0], s[1], s[2], unit);
}

/* One flushed trace: the flush's CPU time; the log's path in @path. */
UNTRACED static int one_flush(const char *path, uint64_t *ns)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, o, .buffer_size = BUFFER_SIZE,
		     .buffer_max = BUFFER_MAX, .output = path);
	uint64_t t0;

	if (xrayfdr_trace_start(&o) || run_workers() || xrayfdr_trace_stop())
		return -1;
	t0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	if (xrayfdr_trace_flush(NULL, 0))
		return -1;
	*ns = ns_of(CLOCK_THREAD_CPUTIME_ID) - t0;
	return 0;
}

/* One streamed trace: its writer's CPU time until the log stops growing. */
UNTRACED static int one_stream(const char *path, uint64_t *ns)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, o, .buffer_size = BUFFER_SIZE,
		     .buffer_max = BUFFER_MAX / 8, .output = path,
		     .stream = true);
	pid_t before[MAX_TASKS], after[MAX_TASKS], writer = 0;
	size_t nb = tasks(before), na;
	struct timespec nap = { 0, 20000000 };
	off_t size = -1;
	int still = 0;

	if (xrayfdr_trace_start(&o))
		return -1;
	na = tasks(after);
	for (size_t i = 0; i < na && !writer; i++) {
		bool old = false;

		for (size_t j = 0; j < nb; j++)
			old |= after[i] == before[j];
		if (!old)
			writer = after[i];
	}
	if (!writer || run_workers())
		return -1;
	/* the writer's time when the log reached its size for good */
	while (still < 3) {
		off_t now = file_size(path);
		uint64_t cpu = ns_of(thread_clock(writer));

		if (now != size) {
			size = now;
			*ns = cpu;
			still = 0;
		} else {
			still++;
		}
		nanosleep(&nap, NULL);
	}
	if (xrayfdr_trace_stop() || xrayfdr_trace_flush(NULL, 0))
		return -1;
	return 0;
}

UNTRACED int main(void)
{
	char dir[] = "/tmp/xrayfdr-bench.XXXXXX", path[64];
	uint64_t flush[RUNS], fsum[RUNS], fshare[RUNS], fwarm[RUNS],
		fwshare[RUNS];
	uint64_t stream[RUNS], ssum[RUNS], sshare[RUNS], swarm[RUNS],
		swshare[RUNS], bytes = 0;
	double load[3] = { 0 };

	/* no lines per log written */
	xrayfdr_set_print(NULL);
	setenv("XRAYFDR_OPTIONS", "verbosity=0", 0);
	evict = malloc(EVICT);
	if (!evict || !mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/log", dir);
	for (int r = 0; r < RUNS; r++) {
		if (one_flush(path, &flush[r]))
			return 1;
		fsum[r] = sum_cost(path, &bytes, &fwarm[r]);
		fshare[r] = fsum[r] * 100000 / flush[r];
		fwshare[r] = fwarm[r] * 100000 / flush[r];
		unlink(path);
		if (one_stream(path, &stream[r]))
			return 1;
		ssum[r] = sum_cost(path, &bytes, &swarm[r]);
		sshare[r] = ssum[r] * 100000 / (stream[r] ? stream[r] : 1);
		swshare[r] = swarm[r] * 100000 / (stream[r] ? stream[r] : 1);
		unlink(path);
	}
	rmdir(dir);
	getloadavg(load, 3);
	printf("checksums (CRC32C, crc32 instruction: %s) against what writes "
	       "the buffers\n",
	       __builtin_cpu_supports("sse4.2") ? "yes" : "no, a table");
	printf("  %d runs, %d threads x %d calls, %u KiB buffers, logs of "
	       "%.1f MiB; load %.2f %.2f %.2f\n",
	       RUNS, THREADS, CALLS, BUFFER_SIZE >> 10,
	       (double)bytes / (1 << 20), load[0], load[1], load[2]);
	printf("  %-26s %9s %9s %9s  (thread CPU time)\n", "", "median", "min",
	       "max");
	row("flush", flush, 1e6, "ms");
	row("  checksums, cold caches", fsum, 1e6, "ms");
	row("  checksums, from cache", fwarm, 1e6, "ms");
	row("  share of the flush, cold", fshare, 1e3, "%");
	row("  share, from cache", fwshare, 1e3, "%");
	row("stream writer", stream, 1e6, "ms");
	row("  checksums, cold caches", ssum, 1e6, "ms");
	row("  checksums, from cache", swarm, 1e6, "ms");
	row("  share of the writer, cold", sshare, 1e3, "%");
	row("  share, from cache", swshare, 1e3, "%");
	return 0;
}
