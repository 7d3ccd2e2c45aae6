// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a snapshot costs the threads it does not stop (make bench).
 *
 * N threads (1, 8, 64) each make CALLS traced calls, timing every call in
 * thread CPU time: a thread that waits for the queue's lock while a
 * snapshot copies a buffer spins, so the wait shows in its CPU time, and
 * time it spends preempted by other tenants does not.  First without
 * snapshots, then with the main thread taking snapshots back to back.
 * Printed, in thread CPU time: the slowest call, the bucket (powers of
 * two) below which 99.9% and 99.99% of the calls fall, the calls over
 * 100 us; the snapshots taken and what one took in the main thread (the
 * copy, and writing the log), per buffer.
 * In thread mode and in CPU mode (the runtime's own rings, copied by the
 * snapshotting thread while the writers go on: none of them should wait).
 * Nothing passes or fails on a time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xrayfdr/runtime.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))
#define CALLS 200000
/* bucket b: calls of [2^b, 2^(b+1)) ns of thread CPU time */
#define BUCKETS 40

volatile long sink;

TRACED void call(long i)
{
	sink += i;
}

struct worker {
	pthread_t thread;
	uint64_t hist[BUCKETS];
	uint64_t max_ns, over100us;
};

static volatile int done_workers;

UNTRACED static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

UNTRACED static void *work(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; i < CALLS; i++) {
		uint64_t t0 = cpu_ns(), d;

		call(i);
		d = cpu_ns() - t0;
		w->hist[d ? 63 - __builtin_clzll(d) : 0]++;
		w->over100us += d > 100000;
		if (d > w->max_ns)
			w->max_ns = d;
	}
	__atomic_add_fetch(&done_workers, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The upper end of the bucket holding the @num/@den quantile. */
UNTRACED static uint64_t percentile(const uint64_t *hist, uint64_t total,
				    uint64_t num, uint64_t den)
{
	uint64_t seen = 0;

	for (int b = 0; b < BUCKETS; b++) {
		seen += hist[b];
		if (seen * den >= total * num)
			return 2ull << b;
	}
	return 2ull << (BUCKETS - 1);
}

UNTRACED static void run(const char *mode, int threads, int snapshots,
			 const char *dir)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, opts);
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	XRAYFDR_OPTS(xrayfdr_snapshot_opts, so, .overwrite = true,
		     .stats = &st);
	struct worker *w = calloc((size_t)threads, sizeof(*w));
	uint64_t hist[BUCKETS] = { 0 }, max = 0, total = 0, over = 0;
	uint64_t snap_ns = 0, buffers = 0, taken = 0;
	char path[4096], final[4096];

	snprintf(path, sizeof(path), "%s/stall.xray", dir);
	snprintf(final, sizeof(final), "%s/stall-final.xray", dir);
	opts.output = final;
	done_workers = 0;

	if (!w || xrayfdr_trace_start(&opts)) {
		fprintf(stderr, "snapshot_stall: cannot start a trace: %s\n",
			strerror(errno));
		exit(1);
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	while (snapshots &&
	       __atomic_load_n(&done_workers, __ATOMIC_ACQUIRE) < threads) {
		uint64_t t0 = cpu_ns();

		if (xrayfdr_snapshot(path, &so))
			break;
		snap_ns += cpu_ns() - t0;
		buffers += st.buffers;
		taken++;
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		for (int b = 0; b < BUCKETS; b++)
			hist[b] += w[i].hist[b];
		if (w[i].max_ns > max)
			max = w[i].max_ns;
		over += w[i].over100us;
	}
	xrayfdr_trace_stop();
	xrayfdr_trace_flush(NULL, 0);
	total = (uint64_t)threads * CALLS;
	printf("| %-6s | %2d | %-3s | %8.1f | %7.2f | %7.2f | %6llu | %6llu | %9.1f | %8.2f |\n",
	       mode, threads, snapshots ? "yes" : "no", max / 1000.0,
	       percentile(hist, total, 999, 1000) / 1000.0,
	       percentile(hist, total, 9999, 10000) / 1000.0,
	       (unsigned long long)over, (unsigned long long)taken,
	       taken ? snap_ns / 1000.0 / taken : 0.0,
	       buffers ? snap_ns / 1000.0 / buffers : 0.0);
	free(w);
	unlink(path);
	unlink(final);
}

/* The rows of @mode, in a process of their own: the mode comes from the
 * environment, read once, and the sleds keep the trampolines of the
 * first trace's mode. */
UNTRACED static void run_mode(const char *self, const char *dir,
			      const char *mode)
{
	char env[64];
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("snapshot_stall: fork");
		exit(1);
	}
	if (!pid) {
		snprintf(env, sizeof(env), "mode=%s patch_premain=false", mode);
		setenv("XRAYFDR_OPTIONS", env, 1);
		execl(self, self, dir, mode, (char *)NULL);
		perror("snapshot_stall: exec");
		_exit(1);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

UNTRACED int main(int argc, char **argv)
{
	static const int threads[] = { 1, 8, 64 };
	static const char *const modes[] = { "thread", "cpu" };
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	double load[3] = { 0 };

	if (argc > 2) { /* one mode's rows (run_mode()) */
		for (size_t i = 0; i < sizeof(threads) / sizeof(threads[0]);
		     i++) {
			run(argv[2], threads[i], 0, dir);
			run(argv[2], threads[i], 1, dir);
		}
		return 0;
	}

	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("Snapshot stall, %d calls per thread, 64 KiB x 256 buffers (CPU mode: shared out among the CPUs' rings); load %.2f %.2f %.2f\n\n",
	       CALLS, load[0], load[1], load[2]);
	printf("| mode | threads | snapshots | slowest call (us) | 99.9%% below (us) | 99.99%% below (us) | calls > 100 us | snapshots | one snapshot, copy + write (us) | per buffer (us) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++)
		run_mode("/proc/self/exe", dir, modes[m]);
	return 0;
}
