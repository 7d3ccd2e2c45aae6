// SPDX-License-Identifier: GPL-2.0-only
/*
 * The runtime in CPU mode on the module's rings, in the test guest (run by
 * scripts/vm/vmtest.sh with xray_fdr.ko loaded).  Prints TAP.
 *
 * This program is built with clang -fxray-instrument and libxrayfdr.a, so
 * it is both the traced program and the checker: each scenario runs in a
 * child (this program again, with XRAYFDR_OPTIONS in its environment),
 * which prints what it did ("count NAME N", "id NAME ID", "tid NAME T");
 * the parent reads the child's log with xrayfdr's verifying reader and
 * compares.  Logs are also printed in base64 between XRAYFDR-FILE markers,
 * so the host can run llvm-xray fdr-dump -verify on them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>
#include <xrayfdr/runtime.h>
#include <xrayfdr/xray.h>

#include "../../include/uapi/linux/xray_fdr.h"

#define TRACED __attribute__((xray_always_instrument, noinline))

static int ntests, nfailed;
/* function events of the "threads" scenario, when none was lost */
static uint64_t threads_functions;

static void tap(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	nfailed += !ok;
}

/*
 * The child's side.
 */
static volatile long sink;
static long counts[8];

TRACED static void leaf(long i)
{
	__atomic_add_fetch(&counts[0], 1, __ATOMIC_RELAXED);
	sink += i;
}

TRACED static void work(long i)
{
	__atomic_add_fetch(&counts[1], 1, __ATOMIC_RELAXED);
	leaf(i);
	leaf(i + 1);
}

TRACED static void sleeper(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	__atomic_add_fetch(&counts[2], 1, __ATOMIC_RELAXED);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

TRACED static void spinner(void)
{
	uint64_t until = thread_ns() + 50 * 1000 * 1000;

	__atomic_add_fetch(&counts[3], 1, __ATOMIC_RELAXED);
	while (thread_ns() < until)
		sink++;
}

static void *worker(void *arg);

/* Logs its argument, so the dump shows which call it was. */
TRACED __attribute__((xray_log_args(1))) static void numbered(long i)
{
	sink += i;
}

/*
 * Calls numbered() forever, saying after each which one returned last,
 * and sleeps now and then, so that the kernel writes switch records into
 * the rings the calls fill (and must move on from a full sub-buffer now
 * and then).
 */
static void child_killme(void)
{
	FILE *f = fopen("/tmp/last", "w");

	for (long i = 1;; i++) {
		numbered(i);
		if (i % 32 == 0)
			usleep(1);
		if (f) {
			rewind(f);
			fprintf(f, "%ld\n", i);
			fflush(f);
		}
	}
}

/*
 * Has the stream's writer consumed every sub-buffer but the open one, on
 * every CPU of this process's rings (its mappings of the device)?  It
 * stores a ring's consumed word after its pass's writes: then, nothing
 * more written, it has nothing left to write.  1 if so, 0 if not, -1 if
 * the rings are not found.
 */
static int stream_caught_up(void)
{
	const struct xray_fdr_header *h = NULL;
	const uint8_t *areas = NULL;
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[256];
	int ret = 1;

	while (maps && fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "/dev/xrayfdr") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (strstr(line, "r--s"))
			h = (const void *)lo;
		else if (strstr(line, "rw-s"))
			areas = (const void *)lo;
	}
	if (maps)
		fclose(maps);
	if (!h || !areas)
		return -1;
	for (uint32_t c = 0; c < h->nr_cpus; c++) {
		const uint8_t *area = areas + c * h->area_size;
		const struct xray_fdr_control *ctl = (const void *)area;
		uint64_t commit =
			__atomic_load_n(&ctl->commit, __ATOMIC_ACQUIRE);
		uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit);
		const struct xray_fdr_subbuf *open;

		if (!off)
			return -1;
		open = (const void *)(area + h->control_size +
				      (size_t)((off - 1) / h->subbuf_size) *
					      h->subbuf_size);
		if (__atomic_load_n(&ctl->consumed, __ATOMIC_ACQUIRE) !=
		    open->seq)
			ret = 0;
	}
	return ret;
}

/*
 * STREAMED_CALLS calls of numbered(), then, once the stream's writer has
 * caught up, says so (the number of calls, or a negative
 * stream_caught_up() less 10) and waits to be killed.
 */
#define STREAMED_CALLS 20000
static void child_streamme(void)
{
	FILE *f = fopen("/tmp/last", "w");
	int idle = 0;

	for (long i = 1; i <= STREAMED_CALLS; i++) {
		numbered(i);
		if (i % 32 == 0)
			usleep(1);
	}
	for (int i = 0; i < 6000 && !(idle = stream_caught_up()); i++)
		usleep(10000);
	if (f) {
		fprintf(f, "%d\n", idle == 1 ? STREAMED_CALLS : idle - 10);
		fclose(f);
	}
	for (;;)
		pause();
}

/* Writes garbage over the second half of its rings, then goes on. */
static void child_scribble(void)
{
	char line[256];
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;

	worker((void *)2000);
	while (maps && fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "/dev/xrayfdr") || !strstr(line, "rw-s") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (unsigned long p = lo + (hi - lo) / 2; p + 8 <= hi; p += 8)
			*(volatile uint64_t *)p = p * 0x9e3779b97f4a7c15ul;
		printf("scribbled %lu\n", (hi - lo) / 2);
	}
	worker((void *)2000);
	printf("count work %ld\n", counts[1]);
	fflush(stdout);
	kill(getpid(), SIGKILL);
}

/*
 * What an attacker leaves for root to dump: in every CPU area, the open
 * sub-buffer's sequence number at 2^64 - 1 (a walk up to it would never
 * end), consumed at 2^64 - 1, counters about to wrap, and notes without
 * an end whose object lines carry a terminal escape.  Then SIGKILL.
 */
static void child_hostile(void)
{
	static const char evil[] = "\nobject=/tmp/\033]0;owned\007x\n";
	const struct xray_fdr_header *h = NULL;
	uint8_t *areas = NULL;
	char line[256];
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char perm[5];

	worker((void *)2000);
	while (maps && fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "/dev/xrayfdr") ||
		    sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) != 3)
			continue;
		if (!strcmp(perm, "r--s") && !h)
			h = (const void *)lo;
		else if (!strcmp(perm, "rw-s"))
			areas = (uint8_t *)lo;
	}
	for (uint32_t c = 0; h && areas && c < h->nr_cpus; c++) {
		uint8_t *a = areas + c * h->area_size;
		struct xray_fdr_control *ctl = (void *)a;
		uint32_t off = XRAY_FDR_COMMIT_OFFSET(ctl->commit);
		uint32_t open = off ? (off - 1) / h->subbuf_size : 0;
		struct xray_fdr_subbuf *sb =
			(void *)(a + h->page_size +
				 (uint64_t)(open % h->subbuf_count) *
					 h->subbuf_size);

		sb->seq = UINT64_MAX;
		ctl->consumed = UINT64_MAX;
		ctl->user_records_lost = UINT64_MAX - 1;
		memset(a + 64, 'x', 4016);
		memcpy(a + 64 + 2000, evil, sizeof(evil) - 1);
	}
	printf("hostile %s\n", h && areas ? "done" : "no mapping");
	fflush(stdout);
	kill(getpid(), SIGKILL);
}

static int32_t id_of(void (*fn)(void))
{
	for (size_t id = 1; id <= __xray_max_function_id(); id++)
		if (__xray_function_address((int32_t)id) == (uintptr_t)fn)
			return (int32_t)id;
	return 0;
}

static void print_ids(void)
{
	printf("id leaf %d\n", id_of((void (*)(void))leaf));
	printf("id work %d\n", id_of((void (*)(void))work));
	printf("id sleeper %d\n", id_of(sleeper));
	printf("id spinner %d\n", id_of(spinner));
	printf("id numbered %d\n", id_of((void (*)(void))numbered));
}

static void *worker(void *arg)
{
	for (long i = 0; i < (long)(intptr_t)arg; i++)
		work(i);
	return NULL;
}

/* More threads than CPUs, each making a known number of calls. */
static void child_threads(void)
{
	pthread_t t[8];

	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, worker,
			       (void *)(intptr_t)(2000 + i));
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("count leaf %ld\ncount work %ld\n", counts[0], counts[1]);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		printf("# sched_setaffinity(%d): %s\n", cpu, strerror(errno));
}

/* One thread moved from CPU 0 to CPU 1 between two runs of calls. */
static void child_migrate(void)
{
	pin(0);
	worker((void *)300);
	pin(1);
	worker((void *)300);
	printf("tid migrate %ld\n", (long)syscall(SYS_gettid));
	printf("count leaf %ld\ncount work %ld\n", counts[0], counts[1]);
}

/* A sleep and a spin of 50 ms each, on one CPU. */
static void child_onoff(void)
{
	pin(0);
	sleeper();
	spinner();
	printf("count sleeper %ld\ncount spinner %ld\n", counts[2], counts[3]);
}

/* Two threads on one CPU handing a token back and forth. */
static int ping[2], pong[2];

static void *ponger(void *arg)
{
	char c;

	(void)arg;
	pin(0);
	printf("tid pong %ld\n", (long)syscall(SYS_gettid));
	for (int i = 0; i < 50; i++) {
		if (read(ping[0], &c, 1) != 1)
			break;
		work(i);
		if (write(pong[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static void child_pingpong(void)
{
	pthread_t t;
	char c = 'x';

	if (pipe(ping) || pipe(pong))
		return;
	pin(0);
	printf("tid ping %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_create(&t, NULL, ponger, NULL);
	for (int i = 0; i < 50; i++) {
		work(i);
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
	}
	pthread_join(t, NULL);
	printf("count work %ld\n", counts[1]);
}

/*
 * The parent's side.
 */
struct said {
	char name[16];
	long value;
	char kind[8]; /* count, id, tid */
};

struct run_result {
	struct said said[32];
	int nsaid;
	int status;
	char log[64];
};

static long said(const struct run_result *r, const char *kind, const char *name)
{
	for (int i = 0; i < r->nsaid; i++)
		if (!strcmp(r->said[i].kind, kind) &&
		    !strcmp(r->said[i].name, name))
			return r->said[i].value;
	return -1;
}

/* Run this program as "child @scenario" with @options; collect what it
 * said. */
static int run_child(const char *scenario, const char *options,
		     struct run_result *r)
{
	char opts[256], line[256];
	int fds[2];
	FILE *f;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	snprintf(r->log, sizeof(r->log), "/tmp/%s.xray", scenario);
	unlink(r->log);
	snprintf(opts, sizeof(opts), "output=%s %s", r->log, options);
	if (pipe(fds))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("XRAYFDR_OPTIONS", opts, 1);
		execl("/proc/self/exe", "runtime_guest", "child", scenario,
		      NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		struct said *s = &r->said[r->nsaid];

		if (line[0] == '#') {
			fputs(line, stdout);
			continue;
		}
		if (r->nsaid < 32 && sscanf(line, "%7s %15s %ld", s->kind,
					    s->name, &s->value) == 3)
			r->nsaid++;
	}
	if (f)
		fclose(f);
	waitpid(pid, &r->status, 0);
	return 0;
}

struct tally {
	uint64_t hz;
	long entries[64]; /* by function id */
	long sched[4]; /* by enum xrayfdr_sched_kind */
	long names; /* thread-name events */
	uint64_t functions; /* entries and exits */
	int errors;
	char info[1024];
	uint32_t info_tid; /* the thread its info event names */
	char first_error[256];
};

/* Events of thread @tid (0: all) through @fn; count the rest. */
typedef void (*event_fn)(const struct xrayfdr_event *ev, void *ctx);

static int read_log(const char *path, struct tally *t, uint32_t tid,
		    event_fn fn, void *ctx)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, opts,
		     .flags = XRAYFDR_READ_NO_CALL_CHECK);
	struct xrayfdr_reader *r = xrayfdr_reader_open(path, &opts);
	const struct xrayfdr_file_header *hdr;
	const struct xrayfdr_event *ev;
	int ret;

	memset(t, 0, sizeof(*t));
	if (!r)
		return -errno;
	if (xrayfdr_reader_header(r, &hdr) == 0)
		t->hz = hdr->cycle_frequency;
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1) {
		char name[XRAYFDR_THREAD_NAME_MAX + 1];
		struct xrayfdr_sched_event se;
		uint32_t named;

		if (ev->kind == XRAYFDR_EV_CUSTOM && ev->data_size > 12 &&
		    !memcmp(ev->data, "xrayfdr-info", 12)) {
			size_t n = ev->data_size < sizeof(t->info) - 1 ?
					   ev->data_size :
					   sizeof(t->info) - 1;

			memcpy(t->info, ev->data, n);
			t->info_tid = ev->tid;
			continue;
		}
		if (tid && ev->tid != tid)
			continue;
		if (fn)
			fn(ev, ctx);
		t->functions += ev->kind <= XRAYFDR_EV_ENTRY_ARGS;
		if (ev->kind == XRAYFDR_EV_ENTRY && ev->func_id > 0 &&
		    ev->func_id < 64)
			t->entries[ev->func_id]++;
		if (ev->kind == XRAYFDR_EV_CUSTOM &&
		    xrayfdr_sched_decode(ev->data, ev->data_size, &se) &&
		    se.kind < 4)
			t->sched[se.kind]++;
		if (ev->kind == XRAYFDR_EV_CUSTOM &&
		    xrayfdr_thread_name_decode(ev->data, ev->data_size, &named,
					       name))
			t->names++;
	}
	if (ret < 0) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(r);

		t->errors++;
		snprintf(t->first_error, sizeof(t->first_error), "%s",
			 d ? d->message : strerror(-ret));
	}
	xrayfdr_reader_free(r);
	return 0;
}

/* Threads of a log with scheduler events but no function event: none
 * in a program whose every thread calls traced functions. */
struct idle_threads {
	uint32_t tid[64];
	bool sched[64], calls[64];
	int n;
};

static void see_thread(const struct xrayfdr_event *ev, void *ctx)
{
	struct idle_threads *it = ctx;
	struct xrayfdr_sched_event se;
	int i;

	for (i = 0; i < it->n && it->tid[i] != ev->tid; i++)
		;
	if (i == it->n) {
		if (it->n == 64)
			return;
		it->tid[it->n++] = ev->tid;
	}
	if (ev->kind <= XRAYFDR_EV_ENTRY_ARGS)
		it->calls[i] = true;
	else if (ev->kind == XRAYFDR_EV_CUSTOM &&
		 xrayfdr_sched_decode(ev->data, ev->data_size, &se))
		it->sched[i] = true;
}

static int idle_threads(const char *path, uint32_t *first)
{
	struct idle_threads it = { .n = 0 };
	struct tally t;
	int idle = 0;

	read_log(path, &t, 0, see_thread, &it);
	for (int i = 0; i < it.n; i++)
		if (it.sched[i] && !it.calls[i] && !idle++)
			*first = it.tid[i];
	return idle;
}

/* The log in base64, for the host's llvm-xray. */
static void export_log(const char *path)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned char in[57];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return;
	printf("XRAYFDR-FILE-BEGIN %s\n", strrchr(path, '/') + 1);
	while ((n = fread(in, 1, sizeof(in), f)) > 0) {
		char out[80];
		size_t o = 0;

		for (size_t i = 0; i < n; i += 3) {
			uint32_t v =
				(uint32_t)in[i] << 16 |
				(i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
				(i + 2 < n ? in[i + 2] : 0);

			out[o++] = b64[v >> 18 & 63];
			out[o++] = b64[v >> 12 & 63];
			out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
			out[o++] = i + 2 < n ? b64[v & 63] : '=';
		}
		out[o] = '\0';
		printf("%s\n", out);
	}
	printf("XRAYFDR-FILE-END\n");
	fclose(f);
}

static bool info_has(const struct tally *t, const char *line)
{
	char want[64];

	snprintf(want, sizeof(want), "\n%s\n", line);
	return strstr(t->info, want) != NULL;
}

static uint64_t info_u64(const struct tally *t, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\n%s=", key);
	p = strstr(t->info, want);
	return p ? strtoull(p + strlen(want), NULL, 10) : 0;
}

static void check_log_basics(const char *what, const struct run_result *r,
			     const struct tally *t)
{
	tap(WIFEXITED(r->status) && !WEXITSTATUS(r->status),
	    "%s: the traced child exits cleanly (status 0x%x)", what,
	    r->status);
	tap(!t->errors, "%s: the log passes the verifying reader%s%s", what,
	    t->errors ? ": " : "", t->first_error);
	tap(info_has(t, "mode=cpu") && info_has(t, "rings=module"),
	    "%s: recorded in CPU mode on the module's rings", what);
	export_log(r->log);
}

static void test_threads(void)
{
	struct run_result r;
	struct tally t;
	long leaf, work;

	run_child("threads", "mode=cpu", &r);
	read_log(r.log, &t, 0, NULL, NULL);
	check_log_basics("8 threads on 2 CPUs", &r, &t);
	leaf = said(&r, "id", "leaf");
	work = said(&r, "id", "work");
	tap(leaf > 0 && leaf < 64 && work > 0 && work < 64 &&
		    t.entries[leaf] == said(&r, "count", "leaf") &&
		    t.entries[work] == said(&r, "count", "work"),
	    "8 threads on 2 CPUs: every call is in the log (leaf %ld of %ld, work %ld of %ld)",
	    leaf > 0 && leaf < 64 ? t.entries[leaf] : -1,
	    said(&r, "count", "leaf"),
	    work > 0 && work < 64 ? t.entries[work] : -1,
	    said(&r, "count", "work"));
	if (!info_u64(&t, "dropped") && !info_u64(&t, "overwritten"))
		threads_functions = t.functions;
	tap(t.sched[XRAYFDR_SCHED_SWITCH_OUT] > 0 &&
		    t.sched[XRAYFDR_SCHED_SWITCH_IN] > 0,
	    "8 threads on 2 CPUs: the scheduler's switches are in the log (%ld out, %ld in, %ld migrations)",
	    t.sched[XRAYFDR_SCHED_SWITCH_OUT], t.sched[XRAYFDR_SCHED_SWITCH_IN],
	    t.sched[XRAYFDR_SCHED_MIGRATE]);
}

static uint64_t info_u64(const struct tally *t, const char *key);

/* A ring that keeps its oldest records drops the rest, and counts them. */
static void test_discard(void)
{
	struct run_result r;
	struct tally t;
	uint64_t made;

	run_child("discard",
		  "mode=cpu discard=true buffer_size=4096 buffer_max=8", &r);
	read_log(r.log, &t, 0, NULL, NULL);
	check_log_basics("discard geometry", &r, &t);
	/* every function event the scenario makes, as the complete log of
	 * the same run in test_threads holds them (the log's events also
	 * count the scheduler's) */
	made = threads_functions;
	tap(info_u64(&t, "dropped") > 0 && !info_u64(&t, "overwritten") &&
		    t.functions + info_u64(&t, "dropped") == made,
	    "discard geometry: kept + dropped = made (%llu + %llu of %llu), none overwritten",
	    (unsigned long long)t.functions,
	    (unsigned long long)info_u64(&t, "dropped"),
	    (unsigned long long)made);
}

struct cpus_seen {
	uint32_t cpus; /* bit per CPU of the thread's function events */
	int migrate_0_to_1;
};

static void see_cpus(const struct xrayfdr_event *ev, void *ctx)
{
	struct cpus_seen *c = ctx;
	struct xrayfdr_sched_event se;

	if (ev->kind <= XRAYFDR_EV_ENTRY_ARGS && ev->cpu < 32)
		c->cpus |= 1u << ev->cpu;
	if (ev->kind == XRAYFDR_EV_CUSTOM &&
	    xrayfdr_sched_decode(ev->data, ev->data_size, &se) &&
	    se.kind == XRAYFDR_SCHED_MIGRATE && se.prev_cpu == 0 && se.cpu == 1)
		c->migrate_0_to_1++;
}

static void test_migrate(void)
{
	struct cpus_seen c = { 0 };
	struct run_result r;
	struct tally t;
	long tid, work;

	run_child("migrate", "mode=cpu", &r);
	tid = said(&r, "tid", "migrate");
	read_log(r.log, &t, (uint32_t)tid, see_cpus, &c);
	check_log_basics("sched_setaffinity", &r, &t);
	work = said(&r, "id", "work");
	tap(work > 0 && work < 64 &&
		    t.entries[work] == said(&r, "count", "work"),
	    "sched_setaffinity: every call of the moved thread is in the log");
	tap((c.cpus & 3) == 3,
	    "sched_setaffinity: the thread's calls are on CPU 0, then CPU 1 (NewCPUId; CPUs seen 0x%x)",
	    c.cpus);
	tap(c.migrate_0_to_1 > 0,
	    "sched_setaffinity: the log has the migration from CPU 0 to CPU 1");
}

/* On-CPU and off-CPU time inside calls of one function. */
struct onoff {
	int32_t id;
	uint64_t entry, out_at;
	bool inside, out;
	uint64_t on, off; /* ticks */
};

static void see_onoff(const struct xrayfdr_event *ev, void *ctx)
{
	struct onoff *o = ctx;
	struct xrayfdr_sched_event se;

	if (ev->func_id == o->id && ev->kind == XRAYFDR_EV_ENTRY) {
		o->inside = true;
		o->out = false;
		o->entry = ev->tsc;
	} else if (ev->func_id == o->id && o->inside &&
		   ev->kind != XRAYFDR_EV_CUSTOM) {
		o->inside = false;
		o->on += ev->tsc - o->entry;
	} else if (o->inside && ev->kind == XRAYFDR_EV_CUSTOM &&
		   xrayfdr_sched_decode(ev->data, ev->data_size, &se)) {
		if (se.kind == XRAYFDR_SCHED_SWITCH_OUT && !o->out) {
			o->out = true;
			o->out_at = ev->tsc;
			o->on += ev->tsc - o->entry;
		} else if (se.kind == XRAYFDR_SCHED_SWITCH_IN && o->out) {
			o->out = false;
			o->off += ev->tsc - o->out_at;
			o->entry = ev->tsc;
		}
	}
}

static void test_onoff(void)
{
	struct run_result r;
	struct onoff sleep_t = { 0 }, spin_t = { 0 };
	struct tally t;
	double ms;

	run_child("onoff", "mode=cpu", &r);
	sleep_t.id = (int32_t)said(&r, "id", "sleeper");
	spin_t.id = (int32_t)said(&r, "id", "spinner");
	read_log(r.log, &t, 0, see_onoff, &sleep_t);
	read_log(r.log, &t, 0, see_onoff, &spin_t);
	check_log_basics("sleep and spin", &r, &t);
	/* Compared with each other, in ticks: a TCG guest's TSC frequency
	 * (the log's) may be off by tens of percent on a loaded host, and
	 * its sleep and syscalls slow. The spin's 50 ms of CPU time are
	 * the yardstick of the sleep's 50 ms, loosely: the spin's on-CPU
	 * ticks also hold the interrupts the guest took meanwhile, which
	 * under TCG can add a fifth or more. */
	ms = t.hz ? 1000.0 / (double)t.hz : 0;
	tap(spin_t.on && sleep_t.off >= spin_t.on / 2 &&
		    sleep_t.on < sleep_t.off / 4,
	    "a 50 ms sleep is off-CPU: %.1f ms off, %.1f ms on (the 50 ms spin: %.1f ms on)",
	    sleep_t.off * ms, sleep_t.on * ms, spin_t.on * ms);
	tap(spin_t.on && spin_t.off < spin_t.on / 4,
	    "a 50 ms spin is on-CPU: %.1f ms on, %.1f ms off", spin_t.on * ms,
	    spin_t.off * ms);
}

static void test_pingpong(void)
{
	struct run_result r;
	struct tally a, b;
	long work;

	run_child("pingpong", "mode=cpu", &r);
	read_log(r.log, &a, (uint32_t)said(&r, "tid", "ping"), NULL, NULL);
	read_log(r.log, &b, (uint32_t)said(&r, "tid", "pong"), NULL, NULL);
	check_log_basics("ping-pong on one CPU", &r, &a);
	work = said(&r, "id", "work");
	tap(work > 0 && work < 64 &&
		    a.entries[work] + b.entries[work] ==
			    said(&r, "count", "work"),
	    "ping-pong on one CPU: both threads' calls are in the log");
	tap(a.sched[XRAYFDR_SCHED_SWITCH_OUT] >= 40 &&
		    b.sched[XRAYFDR_SCHED_SWITCH_OUT] >= 40 &&
		    a.sched[XRAYFDR_SCHED_SWITCH_IN] >= 40 &&
		    b.sched[XRAYFDR_SCHED_SWITCH_IN] >= 40,
	    "ping-pong on one CPU: each thread's switches are in its stream (%ld/%ld out, %ld/%ld in)",
	    a.sched[XRAYFDR_SCHED_SWITCH_OUT],
	    b.sched[XRAYFDR_SCHED_SWITCH_OUT], a.sched[XRAYFDR_SCHED_SWITCH_IN],
	    b.sched[XRAYFDR_SCHED_SWITCH_IN]);
}

/* The session the runtime said it keeps, from the child's stderr. */
static long kept_session(const char *out)
{
	char line[256];
	FILE *f = fopen(out, "r");
	unsigned int id;
	long ret = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "xrayfdr: session %u is kept", &id) == 1)
			ret = id;
	if (f)
		fclose(f);
	return ret;
}

static long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Start "child @scenario" with stdout and stderr to @out. */
static pid_t spawn_child_as(uid_t uid, const char *scenario,
			    const char *options, const char *out)
{
	pid_t pid = fork();

	if (!pid) {
		int fd;

		if (uid && (setgid(uid) || setuid(uid)))
			_exit(126);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		setenv("XRAYFDR_OPTIONS", options, 1);
		execl("/proc/self/exe", "runtime_guest", "child", scenario,
		      NULL);
		_exit(127);
	}
	return pid;
}

static pid_t spawn_child(const char *scenario, const char *options,
			 const char *out)
{
	return spawn_child_as(0, scenario, options, out);
}

/*
 * Start "child killme" with @options, its output to @out, and wait until
 * its calls done (*@last) reach @n, 30 s at most.
 */
static pid_t spawn_killme(const char *options, const char *out, long n,
			  long *last)
{
	pid_t pid;

	unlink("/tmp/last");
	pid = spawn_child("killme", options, out);
	*last = -1;
	for (int i = 0; i < 3000 && *last < n; i++) {
		usleep(10000);
		*last = read_number("/tmp/last");
	}
	return pid;
}

/* xrayfdr-ctl with @args as user @uid; its exit status. */
static int ctl_as(uid_t uid, const char *args)
{
	char cmd[256];
	pid_t pid;
	int status;

	snprintf(cmd, sizeof(cmd), "xrayfdr-ctl %s >/tmp/ctl.out 2>&1", args);
	pid = fork();
	if (!pid) {
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

struct max_arg {
	int32_t id;
	long max;
};

static void see_args(const struct xrayfdr_event *ev, void *ctx)
{
	struct max_arg *m = ctx;

	if (ev->func_id == m->id && ev->kind == XRAYFDR_EV_ENTRY_ARGS &&
	    ev->nargs && (long)ev->args[0] > m->max)
		m->max = (long)ev->args[0];
}

/*
 * The user events the kernel overwrote in kept session @id, the sum of
 * its CPUs' user_events_overwritten; -1 if it cannot be read.
 */
static long long kernel_overwritten(long id)
{
	struct xray_fdr_attach at = { .size = sizeof(at),
				      .session_id = (uint32_t)id };
	const struct xray_fdr_header *h;
	long long sum = -1;
	size_t len = 0;
	uint8_t *areas;
	int fd = open("/dev/" XRAY_FDR_DEVICE_NAME, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	h = ioctl(fd, XRAY_FDR_IOC_ATTACH, &at) ?
		    MAP_FAILED :
		    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (h != MAP_FAILED) {
		len = h->area_size * h->nr_cpus;
		areas = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
			     (off_t)h->area_offset);
		if (areas != MAP_FAILED) {
			sum = 0;
			for (uint32_t c = 0; c < h->nr_cpus; c++)
				sum += ((const struct xray_fdr_control
						 *)(areas + c * h->area_size))
					       ->user_events_overwritten;
			munmap(areas, len);
		}
		munmap((void *)h, 4096);
	}
	close(fd);
	return sum;
}

/* SIGKILL, then the kept rings dumped: the last calls are there. */
static void test_killed(void)
{
	struct max_arg m = { 0 };
	struct run_result r = { 0 };
	char args[128];
	long id, last = -1, sched;
	uint64_t user;
	struct tally t;
	pid_t pid;

	pid = spawn_killme("mode=cpu keep=true buffer_size=4096 buffer_max=16",
			   "/tmp/killme.out", 20000, &last);
	kill(pid, SIGKILL);
	waitpid(pid, &r.status, 0);
	last = read_number("/tmp/last");
	id = kept_session("/tmp/killme.out");
	tap(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL && id > 0,
	    "SIGKILL: the child died of it (its %ld-th call done) and the runtime named its kept session %ld",
	    last, id);
	snprintf(args, sizeof(args), "dump %ld -o /tmp/nobody.xray", id);
	unlink("/tmp/nobody.xray");
	tap(ctl_as(65534, args) == 1 && access("/tmp/nobody.xray", F_OK),
	    "SIGKILL: another user cannot dump the session");
	snprintf(args, sizeof(args), "dump %ld -o /tmp/killed.xray", id);
	tap(ctl_as(0, args) == 0,
	    "SIGKILL: xrayfdr-ctl dump %ld writes its log", id);
	snprintf(r.log, sizeof(r.log), "/tmp/killed.xray");
	read_log(r.log, &t, 0, NULL, NULL);
	tap(!t.errors, "SIGKILL: the dump passes the verifying reader%s%s",
	    t.errors ? ": " : "", t.first_error);
	tap(info_has(&t, "mode=cpu") && info_has(&t, "rings=module") &&
		    strstr(t.info, "\nobject=0 1 "),
	    "SIGKILL: the dump's info event names the mode and the program's objects");
	tap(t.info_tid == (uint32_t)pid,
	    "SIGKILL: the dump's info event is the dead process's (thread %u), not a thread of xrayfdr-ctl's",
	    t.info_tid);
	/* the child's function ids: the same binary as this one */
	m.id = id_of((void (*)(void))numbered);
	read_log(r.log, &t, 0, see_args, &m);
	tap(m.max >= last && last > 0,
	    "SIGKILL: the dump holds the last call the child completed (%ld; last in the dump %ld)",
	    last, m.max);
	tap(info_u64(&t, "events") + info_u64(&t, "overwritten") +
			    info_u64(&t, "dropped") >=
		    2 * (uint64_t)last,
	    "SIGKILL: the dump accounts for every event made (%llu kept, %llu overwritten, %llu dropped; %ld calls)",
	    (unsigned long long)info_u64(&t, "events"),
	    (unsigned long long)info_u64(&t, "overwritten"),
	    (unsigned long long)info_u64(&t, "dropped"), last);
	/*
	 * Exactly: the events kept include the kernel's scheduler events,
	 * which the child did not make, and the thread-name events its
	 * runtime wrote, one where it began each sub-buffer; without them,
	 * the child made two per call and only a few more: those of main()
	 * and what it called before the loop, and of the call the kill cut
	 * short.  The names in the sub-buffers overwritten are counted with
	 * them: at most one per sub-buffer, which holds 256 events or more,
	 * so overwritten / 128 bounds them with room to spare.  All of it
	 * far fewer than a sub-buffer's events (about 500) counted twice or
	 * not at all.
	 */
	sched = t.sched[0] + t.sched[1] + t.sched[2] + t.sched[3];
	user = info_u64(&t, "events") - sched - (uint64_t)t.names +
	       info_u64(&t, "overwritten") + info_u64(&t, "dropped");
	tap(user >= 2 * (uint64_t)last &&
		    user <= 2 * (uint64_t)last + 32 +
				    info_u64(&t, "overwritten") / 128,
	    "SIGKILL: the user events kept, overwritten and dropped are those made, none counted twice (%lld more than 2 per call; %ld scheduler and %ld thread-name events kept; the kernel overwrote %lld, lost %llu records)",
	    (long long)(user - 2 * (uint64_t)last), sched, t.names,
	    kernel_overwritten(id),
	    (unsigned long long)info_u64(&t, "kernel_lost"));
	export_log(r.log);
	snprintf(args, sizeof(args), "dump %ld -o /tmp/again.xray --drop", id);
	tap(ctl_as(0, args) == 0,
	    "SIGKILL: dump --drop writes it again and drops it");
	snprintf(args, sizeof(args), "dump %ld -o /tmp/gone.xray", id);
	tap(ctl_as(0, args) == 1, "SIGKILL: a dropped session is gone");
}

/* How often each of numbered()'s calls 1..max is in the logs read. */
struct numbers {
	int32_t id;
	long max;
	uint8_t *seen;
};

static void see_numbers(const struct xrayfdr_event *ev, void *ctx)
{
	struct numbers *n = ctx;
	long v;

	if (ev->func_id != n->id || ev->kind != XRAYFDR_EV_ENTRY_ARGS ||
	    !ev->nargs)
		return;
	v = (long)ev->args[0];
	if (v > 0 && v <= n->max && n->seen[v] < 255)
		n->seen[v]++;
}

/*
 * Streamed in CPU mode with keep=true, SIGKILL once the writer is idle:
 * the log streamed so far and the dump of the kept rings hold every call
 * between them, and the dump begins where the writer's consumed word
 * says, so they share no more than the part of one sub-buffer a CPU the
 * writer had taken (at most 4096 / 32 calls of numbered()).
 */
static void test_killed_streamed(void)
{
	struct numbers n = { .max = STREAMED_CALLS };
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	long id, last = 0, missing = 0, twice = 0;
	int status = 0, idle;
	uint32_t idle_tid = 0;
	struct tally t;
	char args[128];
	pid_t pid;

	unlink("/tmp/last");
	unlink("/tmp/streamed.xray");
	pid = spawn_child(
		"streamme",
		"mode=cpu keep=true stream=true buffer_size=4096 buffer_max=16 output=/tmp/streamed.xray",
		"/tmp/streamme.out");
	/* (the child's writer catches up within a minute, or it says not) */
	for (int i = 0; i < 13000 && !last; i++) {
		usleep(10000);
		last = read_number("/tmp/last");
		last = last == -1 ? 0 : last;
	}
	id = kept_session("/tmp/streamme.out");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	tap(last == STREAMED_CALLS && id > 0,
	    "streamed, SIGKILL: the child made its %d calls and its writer caught up (%ld; -10: not yet, -11: no rings), its kept session %ld",
	    STREAMED_CALLS, last, id);
	snprintf(args, sizeof(args),
		 "dump %ld -o /tmp/streamed-rest.xray --drop", id);
	tap(ctl_as(0, args) == 0,
	    "streamed, SIGKILL: xrayfdr-ctl dump %ld writes the rest", id);
	n.id = id_of((void (*)(void))numbered);
	n.seen = calloc((size_t)n.max + 1, 1);
	if (!n.seen)
		return;
	idle = idle_threads("/tmp/streamed.xray", &idle_tid);
	tap(!idle,
	    "streamed: no thread with scheduler events only (the stream's writer is the runtime's: %d such, the first %u)",
	    idle, idle_tid);
	read_log("/tmp/streamed.xray", &t, 0, see_numbers, &n);
	read_log("/tmp/streamed-rest.xray", &t, 0, see_numbers, &n);
	tap(!t.errors,
	    "streamed, SIGKILL: the dump passes the verifying reader%s%s",
	    t.errors ? ": " : "", t.first_error);
	for (long i = 1; i <= n.max; i++) {
		missing += !n.seen[i];
		twice += n.seen[i] > 1;
	}
	tap(!missing && twice <= 128 * ncpus,
	    "streamed, SIGKILL: the streamed log and the dump hold all %ld calls (%ld missing), %ld of them both (at most %ld)",
	    n.max, missing, twice, 128 * ncpus);
	free(n.seen);
	export_log("/tmp/streamed-rest.xray");
}

/* A process that wrote over its own rings: a readable, damaged dump. */
static void test_scribble(void)
{
	struct run_result r = { 0 };
	char args[128];
	struct tally t;
	long id;
	pid_t pid;

	pid = spawn_child("scribble", "mode=cpu keep=true",
			  "/tmp/scribble.out");
	waitpid(pid, &r.status, 0);
	id = kept_session("/tmp/scribble.out");
	snprintf(args, sizeof(args), "dump %ld -o /tmp/scribbled.xray --drop",
		 id);
	tap(WIFSIGNALED(r.status) && id > 0 && ctl_as(0, args) == 0,
	    "scribbled rings: the dump of the killed process is written");
	snprintf(r.log, sizeof(r.log), "/tmp/scribbled.xray");
	read_log(r.log, &t, 0, NULL, NULL);
	tap(!t.errors && !info_has(&t, "damaged=0"),
	    "scribbled rings: the dump is valid and counts what it skipped as damaged%s%s",
	    t.errors ? ": " : "", t.first_error);
	export_log(r.log);
}

/*
 * Root dumps what a hostile user's process left (child_hostile()) into a
 * directory that user owns: through the user's symlink it writes nothing;
 * the dump it writes ends (the hung-task and soft-lockup detectors of the
 * debug kernel watch), is root's alone, verifies, and replaces nothing
 * unless asked.
 */
static void test_hostile_dump(void)
{
	struct run_result r = { 0 };
	char args[160], line[64] = "";
	struct stat st;
	struct tally t;
	FILE *f;
	long id;
	pid_t pid;
	int fd;

	mkdir("/tmp/hostile", 0755);
	chown("/tmp/hostile", 65534, 65534);
	fd = open("/tmp/precious", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		write(fd, "precious\n", 9);
		close(fd);
	}
	unlink("/tmp/hostile/crash.xray");
	symlink("/tmp/precious", "/tmp/hostile/crash.xray");
	lchown("/tmp/hostile/crash.xray", 65534, 65534);

	pid = spawn_child_as(65534, "hostile", "mode=cpu keep=true",
			     "/tmp/hostile/run.out");
	waitpid(pid, &r.status, 0);
	id = kept_session("/tmp/hostile/run.out");
	tap(WIFSIGNALED(r.status) && id > 0,
	    "hostile: nobody's process scribbled its rings and notes and died, session %ld kept",
	    id);
	snprintf(args, sizeof(args), "dump %ld -o /tmp/hostile/crash.xray", id);
	f = fopen("/tmp/precious", "r");
	if (f) {
		fgets(line, sizeof(line), f);
		fclose(f);
	}
	tap(ctl_as(0, args) != 0 && !strcmp(line, "precious\n"),
	    "hostile: root's dump does not write through the user's symlink");
	snprintf(args, sizeof(args), "dump %ld -o /tmp/hostile/new.xray", id);
	tap(ctl_as(0, args) == 0 && !stat("/tmp/hostile/new.xray", &st) &&
		    st.st_uid == 0 && (st.st_mode & 07777) == 0600,
	    "hostile: root's dump ends and writes a file of its own, mode 0600");
	snprintf(r.log, sizeof(r.log), "/tmp/hostile/new.xray");
	read_log(r.log, &t, 0, NULL, NULL);
	tap(!t.errors && !strchr(t.info, '\033'),
	    "hostile: the dump verifies, no terminal escape in its info event%s%s",
	    t.errors ? ": " : "", t.first_error);
	tap(ctl_as(0, args) != 0,
	    "hostile: a second dump to the same file is refused without --force");
	snprintf(args, sizeof(args),
		 "dump %ld -o /tmp/hostile/new.xray --force --drop", id);
	tap(ctl_as(0, args) == 0, "hostile: --force replaces root's own file");
	export_log(r.log);
}

/* The session whose owner is @pid, from xrayfdr-ctl list --json. */
static long session_of(pid_t pid)
{
	char line[4096], want[48];
	FILE *f;
	long id = -1;

	if (ctl_as(0, "--json list"))
		return -1;
	f = fopen("/tmp/ctl.out", "r");
	snprintf(want, sizeof(want), "\"pid\":%ld,", (long)pid);
	while (f && fgets(line, sizeof(line), f)) {
		/* one object per session: {"id":N,"pid":P,...} */
		for (char *p = strstr(line, "{\"id\":"); p;
		     p = strstr(p + 1, "{\"id\":")) {
			char *end = strchr(p, '}');

			if (end &&
			    memmem(p, (size_t)(end - p), want, strlen(want)))
				id = strtol(p + 6, NULL, 10);
		}
	}
	if (f)
		fclose(f);
	return id;
}

/*
 * A running CPU-mode process snapshotted from outside on the module's
 * rings, many times: xrayfdr-ctl snapshot ID, and what `xrayfdr snapshot
 * PID` does after finding the session (a read-only view, then
 * xrayfdr_rings_write()).  Each holds the last call the child completed
 * before it was taken, and they move forward; the child never stops.
 */
static void test_live_snapshot(void)
{
	struct xray_fdr_attach at = { .size = sizeof(at) };
	struct max_arg m = { .id = id_of((void (*)(void))numbered) };
	long id, last = -1, prev = 0, cut = 0;
	int bad = 0, verified = 0, n;
	char args[160], path[64], why[256] = "";
	struct tally t;
	pid_t pid;

	pid = spawn_killme("mode=cpu buffer_size=4096 buffer_max=256",
			   "/tmp/live.out", 2000, &last);
	id = session_of(pid);
	tap(id > 0 && last >= 2000,
	    "live: the running child's session %ld is listed with its pid", id);
	for (n = 0; n < 20; n++) {
		int fd = -1, out = -1, ok;

		last = read_number("/tmp/last");
		snprintf(path, sizeof(path), "/tmp/live-%d.xray", n);
		unlink(path);
		if (n % 2) { /* as xrayfdr snapshot PID does */
			XRAYFDR_OPTS(xrayfdr_dump_opts, o, .snapshot = "guest");
			fd = open("/dev/" XRAY_FDR_DEVICE_NAME,
				  O_RDONLY | O_CLOEXEC);
			at.session_id = (uint32_t)id;
			out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
			ok = fd >= 0 && out >= 0 &&
			     !ioctl(fd, XRAY_FDR_IOC_ATTACH, &at) &&
			     !xrayfdr_rings_write(fd, out, &o);
		} else {
			snprintf(args, sizeof(args), "snapshot %ld -o %s", id,
				 path);
			ok = ctl_as(0, args) == 0;
		}
		if (fd >= 0)
			close(fd);
		if (out >= 0)
			close(out);
		m.max = 0;
		read_log(path, &t, 0, see_args, &m);
		ok = ok && !t.errors && info_has(&t, "mode=cpu") &&
		     info_has(&t, "rings=module") &&
		     strstr(t.info, "\nsnapshot=") &&
		     strstr(t.info, "\ncut=") && t.info_tid == (uint32_t)pid &&
		     m.max >= last && m.max >= prev;
		if (!ok && !bad++)
			snprintf(
				why, sizeof(why),
				"snapshot %d: last done %ld, max in it %ld (before %ld), %d errors %s, info thread %u",
				n, last, m.max, prev, t.errors, t.first_error,
				t.info_tid);
		verified += !t.errors;
		cut += (long)info_u64(&t, "cut");
		prev = m.max;
		if (n < 2)
			export_log(path);
	}
	tap(!bad,
	    "live: 20 snapshots verify, each holds the last call done before it, they move forward, their info events are the child's (%d verified, %ld sub-buffers cut)%s%s",
	    verified, cut, bad ? ": " : "", why);
	snprintf(args, sizeof(args), "snapshot %ld -o /tmp/nobody-live.xray",
		 id);
	unlink("/tmp/nobody-live.xray");
	tap(ctl_as(65534, args) == 1 && access("/tmp/nobody-live.xray", F_OK),
	    "live: another user cannot snapshot the session");
	snprintf(args, sizeof(args), "dump %ld -o /tmp/live-dump.xray", id);
	tap(ctl_as(0, args) == 1,
	    "live: dump (not snapshot) of a live session is refused");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(args, sizeof(args), "snapshot %ld -o /tmp/live-gone.xray", id);
	tap(ctl_as(0, args) == 1,
	    "live: the session of a process gone (not kept) cannot be snapshotted");
}

/*
 * A trigger in a CPU-mode process on the module's rings: SIGUSR2 makes
 * the trigger thread copy the live rings in the process (no thread that
 * records stops) into a snapshot file that verifies, holds the calls
 * done before the signal, and says what fired.
 */
static void test_trigger_snapshot(void)
{
	struct max_arg m = { .id = id_of((void (*)(void))numbered) };
	char path[300] = "", why[256] = "";
	long last = -1;
	struct tally t = { 0 };
	DIR *dir = NULL;
	struct dirent *e;
	uint32_t idle_tid = 0;
	pid_t pid;
	int ok, idle = -1;

	mkdir("/tmp/trig", 0755);
	pid = spawn_killme(
		"mode=cpu buffer_size=4096 buffer_max=256 trigger=signal=USR2 snapshot_dir=/tmp/trig",
		"/tmp/trig.out", 2000, &last);
	kill(pid, SIGUSR2);
	/* the file has its name once whole (written as .NAME.part) */
	for (int i = 0; i < 3000 && !path[0]; i++) {
		usleep(10000);
		dir = opendir("/tmp/trig");
		while (dir && (e = readdir(dir)))
			if (e->d_name[0] != '.' && strstr(e->d_name, ".xray"))
				snprintf(path, sizeof(path), "/tmp/trig/%s",
					 e->d_name);
		if (dir)
			closedir(dir);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ok = path[0] && !read_log(path, &t, 0, see_args, &m);
	/* the trigger thread's own scheduler records are left out */
	if (ok)
		idle = idle_threads(path, &idle_tid);
	ok = ok && !t.errors && info_has(&t, "mode=cpu") &&
	     info_has(&t, "rings=module") && info_has(&t, "snapshot=trigger") &&
	     info_has(&t, "trigger=signal=USR2") && strstr(t.info, "\ncut=") &&
	     t.info_tid == (uint32_t)pid && m.max >= last && !idle;
	if (!ok)
		snprintf(
			why, sizeof(why),
			": file '%s', %d errors %s, last done %ld, max in it %ld, %d threads with only scheduler records (%u)",
			path, t.errors, t.errors ? t.first_error : "", last,
			m.max, idle, idle_tid);
	tap(ok,
	    "trigger: signal=USR2 in a CPU-mode process on the module's rings gives a snapshot that verifies, says what fired, holds the calls before it and no record of the trigger thread%s",
	    why);
	if (path[0])
		export_log(path);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} children[] = {
		{ "threads", child_threads },	{ "migrate", child_migrate },
		{ "onoff", child_onoff },	{ "pingpong", child_pingpong },
		{ "killme", child_killme },	{ "discard", child_threads },
		{ "scribble", child_scribble }, { "streamme", child_streamme },
		{ "hostile", child_hostile },
	};

	if (argc == 3 && !strcmp(argv[1], "child")) {
		print_ids();
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]);
		     i++)
			if (!strcmp(argv[2], children[i].name))
				children[i].fn();
		return 0;
	}
	printf("1..%d\n", 5 + 4 + 6 + 5 + 5 + 11 + 5 + 2 + 6 + 5 + 1);
	test_threads();
	test_discard();
	test_migrate();
	test_onoff();
	test_pingpong();
	test_killed();
	test_killed_streamed();
	test_scribble();
	test_hostile_dump();
	test_live_snapshot();
	test_trigger_snapshot();
	return nfailed ? 1 : 0;
}
