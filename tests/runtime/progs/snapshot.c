// SPDX-License-Identifier: GPL-2.0-only
/*
 * Snapshots of a running trace (xrayfdr_snapshot()).  Prints "ok - NAME"
 * lines; argv[1] is a directory for the logs.
 *
 * Four workers number their calls and publish the last one done; the main
 * thread takes 100 snapshots while they run, each after reading what every
 * worker has done.  The queue holds every call, so nothing may be missing
 * whatever the machine's load: each snapshot reads back without error,
 * holds each worker's call done before it was asked for, and no worker
 * goes back from one snapshot to the next.  The log written at the end
 * holds every call.  Then a small queue that wraps: a snapshot holds the
 * newest calls, counts what was overwritten, and the next one moves on.
 * With "memory" after the directory: memory() alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>
#include <xrayfdr/runtime.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
/* only numbered() records: the accounting counts its calls */
#define UNTRACED __attribute__((xray_never_instrument))
#define WORKERS 4
#define CALLS 20000
#define SNAPSHOTS 100

static int failures;

UNTRACED __attribute__((format(printf, 2, 3))) static void
check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !ok;
}

volatile long sink;

TRACED __attribute__((xray_log_args(1))) void numbered(long i)
{
	sink += i;
}

struct worker {
	pthread_t thread;
	long tid;
	long done; /* the last call that returned, published */
};

static struct worker workers[WORKERS];
static int started;

UNTRACED static void *work(void *arg)
{
	struct worker *w = arg;

	__atomic_store_n(&w->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
	for (long i = 1; i <= CALLS; i++) {
		numbered(i);
		__atomic_store_n(&w->done, i, __ATOMIC_RELEASE);
		if (!(i % 1000))
			usleep(200); /* so snapshots come while they run */
	}
	return NULL;
}

/* Per worker: the largest argument in a log; how many calls it has;
 * whether it reads to its end without error. */
struct seen {
	long max[WORKERS];
	long calls[WORKERS];
	int errors;
};

UNTRACED static void read_log(const char *path, struct seen *s)
{
	struct xrayfdr_reader *r = xrayfdr_reader_open(path, NULL);
	const struct xrayfdr_event *ev;
	int ret;

	memset(s, 0, sizeof(*s));
	if (!r) {
		s->errors = 1;
		return;
	}
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1) {
		if (ev->kind != XRAYFDR_EV_ENTRY_ARGS || !ev->nargs)
			continue;
		for (int k = 0; k < WORKERS; k++) {
			if (ev->tid != (uint32_t)workers[k].tid)
				continue;
			s->calls[k]++;
			if ((long)ev->args[0] > s->max[k])
				s->max[k] = (long)ev->args[0];
		}
	}
	s->errors = ret != 0;
	xrayfdr_reader_free(r);
}

UNTRACED static void while_running(const char *dir)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, opts, .buffer_size = 4096,
		     .buffer_max = 2048);
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	XRAYFDR_OPTS(xrayfdr_snapshot_opts, so, .stats = &st);
	char path[4096], log[4096], final[4096];
	long before[WORKERS], last[WORKERS] = { 0 };
	int bad_read = 0, missing = 0, backwards = 0, failed = 0;
	struct seen s;

	snprintf(final, sizeof(final), "%s/final.xray", dir);
	opts.output = final;
	check(xrayfdr_trace_start(&opts) == 0, "start");
	for (int k = 0; k < WORKERS; k++)
		pthread_create(&workers[k].thread, NULL, work, &workers[k]);
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < WORKERS)
		usleep(100);
	for (int i = 0; i < SNAPSHOTS; i++) {
		for (int k = 0; k < WORKERS; k++)
			before[k] = __atomic_load_n(&workers[k].done,
						    __ATOMIC_ACQUIRE);
		snprintf(path, sizeof(path), "%s/snap-%03d.xray", dir, i);
		if (xrayfdr_snapshot(path, &so)) {
			failed++;
			continue;
		}
		read_log(path, &s);
		bad_read += s.errors;
		for (int k = 0; k < WORKERS; k++) {
			missing += s.max[k] < before[k];
			backwards += s.max[k] < last[k];
			last[k] = s.max[k];
		}
	}
	check(!failed, "%d snapshots failed while the workers ran", failed);
	check(!bad_read, "%d snapshots do not read back", bad_read);
	check(!missing,
	      "%d times a snapshot missed a call done before it was asked",
	      missing);
	check(!backwards, "%d times a worker went back in the next one",
	      backwards);
	snprintf(log, sizeof(log), "%s/snap-000.xray", dir);
	check(xrayfdr_snapshot(log, &so) == -EEXIST,
	      "an existing file is not replaced: -EEXIST");
	so.overwrite = true;
	check(xrayfdr_snapshot(log, &so) == 0 && st.events > 0 &&
		      st.overwritten == 0,
	      "--overwrite replaces it; nothing was overwritten");
	for (int k = 0; k < WORKERS; k++)
		pthread_join(workers[k].thread, NULL);
	check(xrayfdr_trace_stop() == 0 && xrayfdr_trace_flush(NULL, 0) == 0,
	      "stop and flush");
	read_log(final, &s);
	missing = 0;
	for (int k = 0; k < WORKERS; k++)
		missing += s.calls[k] != CALLS || s.max[k] != CALLS;
	check(!s.errors && !missing,
	      "the log at the end has every call of every worker");
	check(xrayfdr_snapshot(log, &so) == -ENODATA,
	      "no snapshot once flushed: -ENODATA");
}

/* One thread, a queue of 8 buffers that wraps. */
UNTRACED static void wrapping(const char *dir)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, opts, .buffer_size = 4096,
		     .buffer_max = 8);
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	XRAYFDR_OPTS(xrayfdr_snapshot_opts, so, .stats = &st);
	char path[4096], final[4096];
	struct seen s;
	long i = 1;

	snprintf(final, sizeof(final), "%s/wrap-final.xray", dir);
	opts.output = final;
	workers[0].tid = syscall(SYS_gettid);
	check(xrayfdr_trace_start(&opts) == 0, "wrapping: start");
	for (int n = 1; n <= 2; n++) {
		for (long end = i + 10000; i < end; i++)
			numbered(i);
		snprintf(path, sizeof(path), "%s/wrap-%d.xray", dir, n);
		check(xrayfdr_snapshot(path, &so) == 0, "wrapping: snapshot %d",
		      n);
		read_log(path, &s);
		/* two events a call: the entry and the exit */
		check(!s.errors && s.max[0] == i - 1 && st.overwritten > 0 &&
			      st.events + st.overwritten ==
				      2 * (uint64_t)(i - 1),
		      "wrapping: snapshot %d holds the newest call, and kept + overwritten = made",
		      n);
		if (st.events + st.overwritten != 2 * (uint64_t)(i - 1))
			printf("# events %llu overwritten %llu calls %ld\n",
			       (unsigned long long)st.events,
			       (unsigned long long)st.overwritten, i - 1);
	}
	check(xrayfdr_trace_stop() == 0 && xrayfdr_trace_flush(NULL, 0) == 0,
	      "wrapping: stop and flush");
}

/* The process's resident memory, KiB (-1 if unknown). */
UNTRACED static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident = -1;

	if (f && fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	if (f)
		fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * The snapshot's copy gives its pages back once the log is written: 16
 * MiB of buffers (in CPU mode, rings shared out among the CPUs), all
 * written, then a snapshot that copies them; the process's resident
 * memory grows by less than a quarter of that.  Run alone (argv[2]
 * "memory"), in either mode.
 */
UNTRACED static void memory(const char *dir)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, opts, .buffer_size = 65536,
		     .buffer_max = 256);
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	XRAYFDR_OPTS(xrayfdr_snapshot_opts, so, .stats = &st);
	char path[4096], final[4096];
	cpu_set_t all, one;
	long before, after;

	snprintf(final, sizeof(final), "%s/memory-final.xray", dir);
	snprintf(path, sizeof(path), "%s/memory.xray", dir);
	opts.output = final;
	so.overwrite = true;
	check(xrayfdr_trace_start(&opts) == 0, "memory: start");
	/* 32 bytes a call (entry with its argument, exit): 19 MB on each
	 * CPU, so that every ring is written whole (a ring in a memfd gets
	 * its pages when the copy reads them) */
	CPU_ZERO(&all);
	check(!sched_getaffinity(0, sizeof(all), &all), "memory: affinity");
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		for (long i = 1; i <= 600000; i++)
			numbered(i);
	}
	sched_setaffinity(0, sizeof(all), &all);
	before = rss_kib();
	check(xrayfdr_snapshot(path, &so) == 0 && st.events > 0,
	      "memory: snapshot");
	after = rss_kib();
	check(before > 0 && after >= 0 && after - before < 4096,
	      "memory: the snapshot's copy is given back (resident memory %ld KiB before it, %ld after)",
	      before, after);
	check(xrayfdr_trace_stop() == 0 && xrayfdr_trace_flush(NULL, 0) == 0,
	      "memory: stop and flush");
}

UNTRACED int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";

	if (argc > 2 && !strcmp(argv[2], "memory")) {
		memory(dir);
		return failures ? 1 : 0;
	}
	while_running(dir);
	memset(workers, 0, sizeof(workers));
	wrapping(dir);
	return failures ? 1 : 0;
}
