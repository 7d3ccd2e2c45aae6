// SPDX-License-Identifier: GPL-2.0-only
/*
 * The record sinks through their common interface (lib/runtime/sink.h):
 * one table of scenarios, each run against the thread buffers and against
 * the CPU rings in the runtime's own memory (mode=cpu with a device path
 * that does not exist, so the module is never opened).
 *
 * The test plays the controller's part (fdr.c) with a clock of its own:
 * reserve, NewCPUId or TSCWrap where the base moves (thread buffers; the
 * rings keep their own base), the function record, commit, arm.  Whatever
 * the sink holds is drained into a log in memory, framed as the flush
 * frames it, and read back with our own reader: every record that comes
 * out must be one that went in, at exactly its time.
 *
 * The rings' first sub-buffers take their base from the real TSC when a
 * trace starts; the test moves those bases to its own clock's origin
 * before anything is written (rebase()), so that every layout is the same
 * on every run.  The process is pinned to one CPU: a ring's commit is an
 * rseq critical section that only the ring's CPU may run.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/xray_fdr.h>

#include "../../lib/arch/x86_64/arch.h"
#include "../../lib/fdr/frame.h"
#include "../../lib/fdr/records.h"
#include "../../lib/runtime/bufq.h"
#include "../../lib/runtime/ring.h"
#include "../../lib/runtime/controller.h"
#include "../../lib/runtime/sink.h"
#include "../../lib/runtime/sink_thread.h"
#include "../../lib/runtime/state.h"
#include "../../lib/runtime/thread.h"
#include "../fuzz/fuzz_dump.h"
#include "rtutil.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE

/* The test clock's origin: every time is T0 plus a small count. */
#define T0 (1ull << 40)
/* Thread ids no process has (above the kernel's largest pid_max), so
 * the drain finds no live thread to name. */
#define TID0 5000001u
#define MAX_THREADS 4
#define MAX_WANTS 8192
/* No drain of these scenarios has anywhere near this many buffers. */
#define MAX_CHUNKS 10000

/* ------------------------------------------------------------------ */
/* Checks that work in a forked child too (which must not longjmp back
 * into cmocka's runner) */

static bool in_child;

static void check_failed(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check_failed(const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (in_child) {
		fprintf(stderr, "# child: %s:%d: %s\n", file, line, msg);
		fflush(stderr);
		_exit(3);
	}
	print_error("%s\n", msg);
	_fail(file, line);
}

#define CHECK(cond, ...)                                               \
	do {                                                           \
		if (!(cond))                                           \
			check_failed(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/* ------------------------------------------------------------------ */
/* The trace: a sink started with options of its own */

static char dir[64];
static uint32_t cpu_pinned;
static uint32_t gen_clock = 100; /* generations handed to start */
static uint32_t gen_now;
static struct rt_options opts;
static struct rt_thread threads[MAX_THREADS];

static bool is_cpu(const struct rt_sink *s)
{
	return s == &rt_cpu_sink;
}

static struct xray_fdr_control *ring_control(uint32_t cpu)
{
	return (struct xray_fdr_control *)(rt_ring.areas +
					   (size_t)cpu * rt_ring.area_size);
}

static struct xray_fdr_subbuf *ring_subbuf(uint32_t cpu, uint32_t idx)
{
	return (struct xray_fdr_subbuf *)((uint8_t *)ring_control(cpu) +
					  RT_RING_CONTROL_SIZE +
					  (size_t)idx *
						  rt_ring.header->subbuf_size);
}

/* The rings' open sub-buffers begin at the test clock's origin. */
static void rebase(const struct rt_sink *s)
{
	if (!is_cpu(s))
		return;
	for (uint32_t c = 0; c < rt_ring.ncpus; c++)
		ring_subbuf(c, 0)->tsc = T0;
}

/* A thread as a fresh one is (fdr.c's rt_self), with tid TID0 + @i. */
static struct rt_thread *thread_new(const struct rt_sink *s, unsigned int i)
{
	struct rt_thread *t = &threads[i];

	memset(t, 0, sizeof(*t));
	t->fast = RT_FAST_OFF;
	t->tid = TID0 + i;
	/* libc registered no rseq area: ours (rt_self's) is the one the
	 * commit reads, registered in setup() */
	if (rt.own_rseq)
		t->rseq.flags = RT_RSEQ_REGISTERED;
	if (s->attach)
		s->attach(t);
	t->setup_done = 1;
	return t;
}

/* The trace the drains write: its threshold (0 but where a scenario sets
 * one); pid 0, not the process's own rings, so no thread's name is read
 * at the drain. */
static struct rt_trace drain_trace;
/* the next trace_start()'s: streamed (the writer is never started) */
static bool start_streamed;

/*
 * A new trace of @s, in @buffers buffers of @buffer_size bytes (for the
 * rings: @buffers sub-buffers in each CPU's ring, whatever the number of
 * CPUs).
 */
static void trace_start(const struct rt_sink *s, uint64_t buffer_size,
			uint64_t buffers)
{
	char err[256] = "";
	int ret;

	rt_options_defaults(&opts);
	opts.buffer_size = buffer_size;
	opts.buffer_max = is_cpu(s) ? buffers * (uint64_t)get_nprocs_conf() :
				      buffers;
	opts.buffer_max_set = true; /* as given: shared out in CPU mode */
	opts.verbosity = 0;
	opts.record_mode = is_cpu(s) ? RT_MODE_CPU : RT_MODE_THREAD;
	opts.stream = start_streamed;
	start_streamed = false;
	/* never the module's device: mode=cpu then maps rings of its own */
	snprintf(opts.device, sizeof(opts.device), "%s/no-xrayfdr-device", dir);
	gen_now = ++gen_clock;
	ret = s->start(&opts, opts.buffer_size, gen_now, getpid(), err,
		       sizeof(err));
	CHECK(ret == 0, "%s sink start: %d %s", s->name, ret, err);
	if (is_cpu(s)) {
		CHECK(s->memory && !strcmp(s->memory(NULL), "own"),
		      "the CPU sink is not on its own memory");
		CHECK(cpu_pinned < rt_ring.ncpus, "CPU %u has no ring",
		      cpu_pinned);
	}
	rebase(s);
	drain_trace = (struct rt_trace){ .pid = 0 };
	memset(threads, 0, sizeof(threads));
}

/* ------------------------------------------------------------------ */
/* What went in */

struct want {
	uint32_t tid;
	unsigned int kind;
	int32_t id;
	uint64_t tsc;
	bool dropped;
};

static struct want wants[MAX_WANTS];
static size_t nwants;
static uint64_t made, dropped;

static void wants_reset(void)
{
	nwants = 0;
	made = dropped = 0;
}

static void want_add(const struct rt_thread *t, unsigned int kind, int32_t id,
		     uint64_t tsc, bool drop)
{
	CHECK(nwants < MAX_WANTS, "too many events");
	wants[nwants++] = (struct want){ t->tid, kind, id, tsc, drop };
	made++;
	dropped += drop;
}

/* ------------------------------------------------------------------ */
/* The controller's part (fdr.c's record_function, in brief) */

/*
 * One function record of @t at @tsc on the pinned CPU through the C path:
 * reserve, the record (after a NewCPUId or TSCWrap where the thread's base
 * must move), commit (again from reserve if refused), arm.  Return whether
 * it was recorded.
 */
static bool emit(const struct rt_sink *s, struct rt_thread *t,
		 unsigned int kind, int32_t id, uint64_t tsc)
{
	uint32_t cpu = cpu_pinned;

	for (int tries = 0; tries < 1000; tries++) {
		uint64_t at = tsc, base;
		uint8_t *p;

		switch (s->reserve(t, MD + FN, &at, cpu)) {
		case RT_RESERVE_NONE:
			want_add(t, kind, id, tsc, true);
			s->arm(t);
			return false;
		case RT_RESERVE_NEW:
			t->cpu = UINT32_MAX; /* a NewCPUId comes first */
			break;
		case RT_RESERVE_SAME:
			break;
		}
		CHECK(at == tsc, "%s reserve moved the time %llu to %llu",
		      s->name, (unsigned long long)tsc, (unsigned long long)at);
		p = t->pos;
		base = t->base;
		if (cpu != t->cpu || tsc < base || (tsc ^ base) >> 32) {
			struct xrayfdr_metadata md = {
				.kind = cpu != t->cpu ? XRAYFDR_MD_NEW_CPU_ID :
							XRAYFDR_MD_TSC_WRAP,
				.cpu = (uint16_t)cpu,
				.tsc = tsc & ~(uint64_t)UINT32_MAX,
			};

			CHECK(!is_cpu(s), "the rings' base does not fit");
			xrayfdr_encode_metadata(p, false, opts.version, &md);
			p += MD;
			base = md.tsc;
			t->cpu = cpu;
		}
		xrayfdr_encode_function(p, false, kind, id,
					(uint32_t)(tsc - base));
		p += FN;
		if (s->commit(t, p, NULL, 0)) {
			t->base = base;
			want_add(t, kind, id, tsc, false);
			s->arm(t); /* (fdr.c's end()) */
			return true;
		}
	}
	CHECK(false, "%s commit refused 1000 times on the pinned CPU", s->name);
	return false;
}

/*
 * One function record through the trampolines' fast path, as
 * trampolines.S appends it with the bounds arm() set: thread buffers
 * while pos < end and the time's high half is the base's; a ring while
 * the commit word minus the slot is at most the room and the time is
 * in 32 bits of the sub-buffer header's base.  False where the fast
 * path would take the C path.
 */
static bool fast_append(const struct rt_sink *s, struct rt_thread *t,
			unsigned int kind, int32_t id, uint64_t tsc)
{
	uint8_t *p;
	uint32_t delta;

	if (!is_cpu(s)) {
		if ((tsc >> 32) != (t->base >> 32) || !t->end ||
		    t->pos >= t->end)
			return false;
		xrayfdr_encode_function(t->pos, false, kind, id, (uint32_t)tsc);
		t->pos += FN;
	} else {
		uint64_t commit;

		if (!t->area || !t->ring_state ||
		    (*t->ring_state & RT_STATE_FROZEN))
			return false;
		commit = *(volatile uint64_t *)t->area;
		if (commit - t->slot > t->room || t->hdr->seq != t->slot_seq ||
		    (tsc >> 32) != (t->hdr->tsc >> 32) ||
		    (uint32_t)tsc < (uint32_t)t->hdr->tsc)
			return false;
		delta = (uint32_t)tsc - (uint32_t)t->hdr->tsc;
		p = t->area + RT_RING_CONTROL_SIZE +
		    XRAY_FDR_COMMIT_OFFSET(commit);
		xrayfdr_encode_function(p, false, kind, id, delta);
		*(volatile uint64_t *)t->area = commit + FN;
	}
	want_add(t, kind, id, tsc, false);
	return true;
}

/* ------------------------------------------------------------------ */
/* What comes out */

struct drained {
	struct event_list ev; /* function events only */
	struct read_result res;
	size_t chunks;
	uint64_t chunk_events;
	uint64_t others; /* events that are not function records */
	struct rt_sink_counters ctr;
};

static int to_membuf(void *ctx, const void *p, size_t n)
{
	return membuf_write(ctx, p, n);
}

static const char *scenario_now;

/*
 * With XRAYFDR_DUMP_SEEDS=DIR, the rings as each drain of the CPU sink
 * finds them, as inputs of the dump's fuzz target (tests/fuzz/fuzz_dump.h):
 * real layouts, and the scribble scenario's hostile ones.
 */
static void save_seed(const struct rt_sink *s)
{
	static unsigned int n;
	const char *to = getenv("XRAYFDR_DUMP_SEEDS");
	char path[512];
	FILE *f;

	if (!to || !is_cpu(s) || !rt_ring.header)
		return;
	snprintf(path, sizeof(path), "%s/%s-%u", to, scenario_now, n++);
	f = fopen(path, "wb");
	CHECK(f, "%s: %s", path, strerror(errno));
	if (fuzz_dump_write(f, rt_ring.header, rt_ring.areas))
		remove(path); /* a geometry the target does not make */
	CHECK(!fclose(f), "%s: %s", path, strerror(errno));
}

/* A log's file header into @m, for this trace's options. */
static void log_begin(struct membuf *m)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];

	xrayfdr_encode_file_header(hdr,
				   &(struct xrayfdr_file_header){
					   .version = (uint16_t)opts.version,
					   .type = XRAYFDR_FILE_FDR,
					   .constant_tsc = true,
					   .nonstop_tsc = true,
					   .cycle_frequency = 1000000000,
					   .buffer_size = opts.buffer_size });
	CHECK(membuf_write(m, hdr, sizeof(hdr)) == 0, "membuf");
}

/* Drain the sink into a log in memory and read it back (with the call
 * check unless @no_call_check). */
static void drain(const struct rt_sink *s, struct drained *out,
		  bool no_call_check)
{
	struct membuf m = { 0 };
	struct event_list all = { 0 };
	struct rt_drain d = { .trace = &drain_trace };
	struct rt_chunk c;
	int ret;

	memset(out, 0, sizeof(*out));
	log_begin(&m);
	save_seed(s);
	s->drain_begin(&d, true);
	while (s->drain_next(&d, &c)) {
		CHECK(++out->chunks < MAX_CHUNKS,
		      "%s drain gives buffer after buffer", s->name);
		CHECK(c.used <= opts.buffer_size,
		      "%s drain: a buffer of %zu bytes", s->name, c.used);
		ret = fdr_frame_write(false, opts.version, opts.buffer_size,
				      c.data, c.used, to_membuf, &m);
		CHECK(ret == 0, "%s drain: a buffer that cannot be framed (%d)",
		      s->name, ret);
		out->chunk_events += c.events;
	}
	s->drain_end(&d);
	s->counters(&d, &out->ctr);
	read_all(m.data, m.len, no_call_check ? XRAYFDR_READ_NO_CALL_CHECK : 0,
		 &all, &out->res);
	membuf_free(&m);
	CHECK(out->res.ret == 0 && out->res.stats.errors == 0,
	      "%s drain: the reader says %s at %llu", s->name, out->res.rule,
	      (unsigned long long)out->res.offset);
	CHECK(out->res.stats.buffers == out->chunks,
	      "%s drain: %zu buffers given, the reader saw %llu", s->name,
	      out->chunks, (unsigned long long)out->res.stats.buffers);
	for (size_t i = 0; i < all.n; i++) {
		const struct xrayfdr_event *e = &all.ev[i];

		if (e->kind <= XRAYFDR_EV_ENTRY_ARGS) {
			CHECK(e->cpu == cpu_pinned, "event on CPU %u, not %u",
			      e->cpu, cpu_pinned);
			event_list_add(&out->ev, e);
		} else {
			out->others++;
		}
	}
	event_list_free(&all);
	/* the drain's count of what it gave is what the log holds */
	CHECK(out->chunk_events == out->ev.n + out->others,
	      "%s drain: chunks count %llu events, the log has %zu", s->name,
	      (unsigned long long)out->chunk_events, out->ev.n + out->others);
}

static bool same_event(const struct xrayfdr_event *e, const struct want *w)
{
	return e->tid == w->tid && e->kind == w->kind && e->func_id == w->id &&
	       e->tsc == w->tsc;
}

static void event_failed(const char *file, int line, const char *what, size_t i,
			 const struct xrayfdr_event *e, const struct want *w)
{
	if (!w)
		check_failed(
			file, line,
			"%s: event %zu (tid %u kind %u id %d tsc T0+%lld) is extra",
			what, i, e->tid, e->kind, e->func_id,
			(long long)(e->tsc - T0));
	else if (!e)
		check_failed(
			file, line,
			"%s: event %zu (tid %u kind %u id %d tsc T0+%lld) is missing",
			what, i, w->tid, w->kind, w->id,
			(long long)(w->tsc - T0));
	else
		check_failed(
			file, line,
			"%s: event %zu is tid %u kind %u id %d tsc T0+%lld, want tid %u kind %u id %d tsc T0+%lld",
			what, i, e->tid, e->kind, e->func_id,
			(long long)(e->tsc - T0), w->tid, w->kind, w->id,
			(long long)(w->tsc - T0));
}

enum match {
	EXACTLY, /* each thread's events are all those it recorded */
	NEWEST, /* the newest of them, none missing after the first kept */
	SOME, /* some of them, in their order */
};

/*
 * The function events in @got against wants[], thread by thread: every
 * event of thread T in the log is, in order, one that T recorded at that
 * time; and which of them come out is what @how says.  Return the
 * number of events kept.
 */
#define check_events(got, how) check_events_(got, how, __FILE__, __LINE__)
static size_t check_events_(const struct event_list *got, enum match how,
			    const char *file, int line)
{
	static const char *const names[] = { "exactly", "newest", "some" };
	size_t kept = 0;

	for (unsigned int k = 0; k < MAX_THREADS; k++) {
		uint32_t tid = TID0 + k;
		size_t j = 0, first = SIZE_MAX;

		for (size_t i = 0; i < got->n; i++) {
			const struct xrayfdr_event *e = &got->ev[i];

			if (e->tid != tid)
				continue;
			/* the next of the thread's, skipping what may be
			 * missing */
			for (; j < nwants; j++) {
				const struct want *w = &wants[j];

				if (w->tid != tid || w->dropped)
					continue;
				if (same_event(e, w))
					break;
				if (how == EXACTLY ||
				    (how == NEWEST && first != SIZE_MAX))
					event_failed(file, line, names[how], i,
						     e, w);
			}
			if (j == nwants)
				event_failed(file, line, names[how], i, e,
					     NULL);
			if (first == SIZE_MAX)
				first = j;
			j++;
			kept++;
		}
		/* nothing of the thread's missing at the end */
		for (; how != SOME && j < nwants; j++)
			if (wants[j].tid == tid && !wants[j].dropped)
				event_failed(file, line, names[how], got->n,
					     NULL, &wants[j]);
	}
	for (size_t i = 0; i < got->n; i++)
		if (got->ev[i].tid < TID0 ||
		    got->ev[i].tid >= TID0 + MAX_THREADS)
			event_failed(file, line, names[how], i, &got->ev[i],
				     NULL);
	return kept;
}

static void drained_free(struct drained *d)
{
	event_list_free(&d->ev);
}

/* ------------------------------------------------------------------ */
/* Scenarios */

/*
 * Calls three deep, times from T0 on, with a jump past 32 bits in the
 * middle: the ids, order and times come back exactly, through
 * NewCPUId/TSCWrap (thread buffers) or a new sub-buffer (rings), and the
 * deltas of the log are FDR's.
 */
static void sc_reserve_commit(const struct rt_sink *s)
{
	struct rt_thread *t;
	struct drained d;
	uint64_t at = T0 + 10;

	trace_start(s, 4096, 4);
	t = thread_new(s, 0);
	for (int i = 0; i < 100; i++) {
		if (i == 60)
			at += (1ull << 32) + 5; /* the high half moves */
		emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at++);
		emit(s, t, XRAYFDR_FUNC_ENTRY, 2 + i % 3, at);
		at += 7;
		emit(s, t, XRAYFDR_FUNC_ENTRY, 100 + i, at++);
		emit(s, t, XRAYFDR_FUNC_EXIT, 100 + i, at += 1000);
		emit(s, t, XRAYFDR_FUNC_EXIT, 2 + i % 3, at++);
		emit(s, t, i % 2 ? XRAYFDR_FUNC_EXIT : XRAYFDR_FUNC_TAIL_EXIT,
		     1, at++);
	}
	CHECK(dropped == 0, "%llu events dropped", (unsigned long long)dropped);
	drain(s, &d, false);
	CHECK(d.res.stats.warnings == 0, "the reader warned: %s",
	      d.res.last_warning_rule);
	CHECK(check_events(&d.ev, EXACTLY) == 600, "events lost");
	drained_free(&d);
}

/*
 * Rewinding, LLVM's duration threshold: the drain erases a call shorter
 * than the trace's threshold (rt_trace.threshold_ticks), entry and exit,
 * and keeps the calls around it (logbuf.h); the records were all
 * committed.
 */
static void sc_rewind(const struct rt_sink *s)
{
	struct rt_thread *t;
	struct drained d;
	size_t before;

	trace_start(s, 4096, 4);
	drain_trace.threshold_ticks = 50;
	t = thread_new(s, 0);
	emit(s, t, XRAYFDR_FUNC_ENTRY, 1, T0 + 100);
	before = nwants;
	emit(s, t, XRAYFDR_FUNC_ENTRY, 2, T0 + 101);
	emit(s, t, XRAYFDR_FUNC_EXIT, 2, T0 + 102);
	emit(s, t, XRAYFDR_FUNC_EXIT, 1, T0 + 200);
	emit(s, t, XRAYFDR_FUNC_ENTRY, 3, T0 + 300);
	emit(s, t, XRAYFDR_FUNC_EXIT, 3, T0 + 400);
	drain(s, &d, false);
	/* the call to 2 was too short: its two records go */
	wants[before].dropped = true;
	wants[before + 1].dropped = true;
	CHECK(check_events(&d.ev, EXACTLY) == 4, "events lost");
	drained_free(&d);
}

/*
 * arm(): no generation for a thread with nowhere to write; after the C
 * path, the trace's generation, and bounds that let the fast path append
 * exactly up to the end of the buffer or sub-buffer the C path wrote in,
 * no further; the C path goes on after them, and every record comes out.
 */
static void sc_arm(const struct rt_sink *s)
{
	struct rt_thread *t;
	struct drained d;
	uint64_t at = T0 + 50;
	size_t fast = 0, fast2 = 0;
	uint32_t gen;

	trace_start(s, 4096, 4);
	t = thread_new(s, 0);
	CHECK(s->arm(t) == 0, "armed a thread that never reserved");
	emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at++);
	gen = s->arm(t);
	CHECK(gen == gen_now, "arm gave generation %u, the trace is %u", gen,
	      gen_now);
	if (!is_cpu(s)) {
		/* the next record goes at pos, and fits while pos < end */
		CHECK(thread_part(t)->buf &&
			      t->pos > thread_part(t)->buf->data &&
			      t->end == thread_part(t)->buf->data +
						opts.buffer_size - (FN - 1),
		      "thread bounds: pos %p end %p", (void *)t->pos,
		      (void *)t->end);
	} else {
		uint64_t commit = ring_control(cpu_pinned)->commit;
		uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit);
		uint32_t sbsize = rt_ring.header->subbuf_size;

		/* the slot is the sub-buffer the commit word is in, owned */
		CHECK(t->area == (uint8_t *)ring_control(cpu_pinned) &&
			      t->cpu == cpu_pinned,
		      "ring bounds: another CPU's area");
		CHECK(t->hdr == ring_subbuf(cpu_pinned, (off - 1) / sbsize),
		      "ring bounds: the slot's header is not the open one");
		CHECK(XRAY_FDR_COMMIT_TID(commit) == t->tid &&
			      commit - t->slot ==
				      off % sbsize - sizeof(*t->hdr) &&
			      commit - t->slot <= t->room &&
			      t->room == sbsize - sizeof(*t->hdr) - FN,
		      "ring bounds: commit %llx slot %llx room %llu",
		      (unsigned long long)commit, (unsigned long long)t->slot,
		      (unsigned long long)t->room);
		CHECK(t->ring_state == &rt_ring.header->state,
		      "ring bounds: not the rings' state word");
	}
	/* the fast path up to where it must stop */
	while (fast_append(s, t,
			   fast % 2 ? XRAYFDR_FUNC_EXIT : XRAYFDR_FUNC_ENTRY, 2,
			   at++))
		CHECK(++fast < 4096, "the fast path never stops");
	CHECK(fast > 400, "the fast path stopped after %zu records", fast);
	if (!is_cpu(s)) {
		CHECK(t->pos == thread_part(t)->buf->data + opts.buffer_size,
		      "the fast path stopped %td bytes before the end",
		      thread_part(t)->buf->data + opts.buffer_size - t->pos);
	} else {
		uint64_t commit = ring_control(cpu_pinned)->commit;

		CHECK(XRAY_FDR_COMMIT_OFFSET(commit) %
				      rt_ring.header->subbuf_size ==
			      0,
		      "the fast path stopped before the sub-buffer's end");
	}
	/* the C path takes the next buffer; the fast path goes on there */
	CHECK(fast % 2 == 1, "(an exit of 2 is due)");
	emit(s, t, XRAYFDR_FUNC_EXIT, 2, at++);
	CHECK(s->arm(t) == gen_now, "not armed after a new buffer");
	while (fast2 < 10 &&
	       fast_append(s, t,
			   fast2 % 2 ? XRAYFDR_FUNC_EXIT : XRAYFDR_FUNC_ENTRY,
			   3, at++))
		fast2++;
	CHECK(fast2 == 10, "the fast path refused a new buffer");
	emit(s, t, XRAYFDR_FUNC_EXIT, 1, at++);
	CHECK(dropped == 0, "%llu events dropped", (unsigned long long)dropped);
	drain(s, &d, false);
	CHECK(check_events(&d.ev, EXACTLY) == nwants, "events lost");
	drained_free(&d);
}

/*
 * A flight recorder: in two buffers (or sub-buffers), the oldest are
 * written over, counted; what stays is the newest window, whole, and
 * kept + overwritten + dropped = made.
 */
static void sc_overwrite(const struct rt_sink *s)
{
	struct rt_thread *t;
	struct drained d;
	uint64_t at = T0 + 1;
	size_t kept;

	trace_start(s, 4096, 2);
	t = thread_new(s, 0);
	for (int i = 0; i < 1500; i++) {
		emit(s, t, XRAYFDR_FUNC_ENTRY, 1 + i % 7, at++);
		emit(s, t, XRAYFDR_FUNC_EXIT, 1 + i % 7, at++);
	}
	drain(s, &d, true);
	kept = check_events(&d.ev, NEWEST);
	CHECK(d.ctr.recycled > 0 && d.ctr.overwritten > 0,
	      "nothing recycled (%llu) or overwritten (%llu)",
	      (unsigned long long)d.ctr.recycled,
	      (unsigned long long)d.ctr.overwritten);
	CHECK(kept + d.ctr.overwritten + dropped == made,
	      "kept %zu + overwritten %llu + dropped %llu != made %llu", kept,
	      (unsigned long long)d.ctr.overwritten,
	      (unsigned long long)dropped, (unsigned long long)made);
	/* at most two buffers' worth are kept */
	CHECK(kept <= 2 * 4096 / FN, "kept %zu", kept);
	drained_free(&d);
}

/*
 * Several threads attached in turn, their calls interleaved in time (the
 * first one's deeper, so that it needs more than one buffer), one
 * detached half-way and another attached then: each thread's records
 * come out, all of them, in time order, under its own id, in buffers
 * the reader finds well-formed.
 */
static void sc_threads(const struct rt_sink *s)
{
	struct rt_thread *t[MAX_THREADS];
	struct drained d;
	uint64_t at = T0 + 7;
	size_t want = 0;

	trace_start(s, 4096, 16);
	for (unsigned int k = 0; k < 3; k++)
		t[k] = thread_new(s, k);
	t[3] = NULL;
	for (int i = 0; i < 450; i++) {
		unsigned int k = (unsigned int)i % 3;
		struct rt_thread *th = t[k] ? t[k] : t[3];
		int32_t id = 10 + (int32_t)(th->tid - TID0);

		if (i == 200) {
			s->detach(t[1]);
			t[1] = NULL;
			t[3] = thread_new(s, 3);
		}
		emit(s, th, XRAYFDR_FUNC_ENTRY, id, at++);
		if (k == 0) {
			emit(s, th, XRAYFDR_FUNC_ENTRY, 20, at++);
			emit(s, th, XRAYFDR_FUNC_EXIT, 20, at++);
			want += 2;
		}
		emit(s, th, XRAYFDR_FUNC_EXIT, id, at++);
		want += 2;
	}
	CHECK(dropped == 0, "%llu events dropped", (unsigned long long)dropped);
	drain(s, &d, false);
	CHECK(d.res.stats.warnings == 0, "the reader warned: %s",
	      d.res.last_warning_rule);
	CHECK(check_events(&d.ev, EXACTLY) == want, "events lost");
	CHECK(d.chunks >= 5, "%zu buffers: thread 0's fit one?", d.chunks);
	drained_free(&d);
}

/* The child's side of sc_fork(): a new generation, nothing recorded. */
static void fork_child_side(const struct rt_sink *s, struct rt_thread *t)
{
	struct drained d;
	uint32_t gen = ++gen_clock;

	in_child = true;
	s->fork_child(gen, getpid());
	gen_now = gen;
	rebase(s);
	drain(s, &d, false);
	CHECK(d.chunks == 0 && d.ev.n == 0, "the child inherited %zu events",
	      d.ev.n);
	CHECK(d.ctr.overwritten == 0 && d.ctr.recycled == 0 &&
		      d.ctr.damaged == 0,
	      "the child inherited counts");
	drained_free(&d);
	/* the parent's thread goes on in the child (the runtime gives it
	 * a new id; the sink must not trust its old state either way): arm
	 * keeps its fast path off (t->fast, which the trampolines check
	 * first: the parent's rings may be unmapped, as the module's and
	 * the shared ones are), or it writes nothing with the parent's
	 * bounds */
	wants_reset();
	CHECK(!s->arm(t) ||
		      !fast_append(s, t, XRAYFDR_FUNC_ENTRY, 41, T0 + 4000),
	      "the fast path wrote with the parent's state");
	emit(s, t, XRAYFDR_FUNC_ENTRY, 42, T0 + 5000);
	CHECK(s->arm(t) == gen, "not armed in the child's generation");
	emit(s, t, XRAYFDR_FUNC_EXIT, 42, T0 + 5001);
	drain(s, &d, false);
	CHECK(check_events(&d.ev, EXACTLY) == 2, "the child's events");
	drained_free(&d);
	_exit(0);
}

/*
 * fork() between fork_prepare and fork_parent/fork_child: the child
 * starts the generation it is given with nothing recorded and records
 * its own; the parent's records are all still there, and it goes on.
 */
static void sc_fork(const struct rt_sink *s)
{
	struct rt_thread *t;
	struct drained d;
	int status = 0;
	pid_t pid;

	trace_start(s, 4096, 4);
	t = thread_new(s, 0);
	for (int i = 0; i < 20; i++) {
		emit(s, t, XRAYFDR_FUNC_ENTRY, 5, T0 + 10 + 2 * (uint64_t)i);
		emit(s, t, XRAYFDR_FUNC_EXIT, 5, T0 + 11 + 2 * (uint64_t)i);
	}
	fflush(NULL);
	s->fork_prepare();
	pid = fork();
	if (pid == 0)
		fork_child_side(s, t);
	s->fork_parent();
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
	      "the child failed (status %#x)", status);
	emit(s, t, XRAYFDR_FUNC_ENTRY, 6, T0 + 100);
	CHECK(s->arm(t) == gen_now, "the parent's generation changed");
	emit(s, t, XRAYFDR_FUNC_EXIT, 6, T0 + 101);
	drain(s, &d, false);
	CHECK(check_events(&d.ev, EXACTLY) == 42, "the parent's events");
	drained_free(&d);
}

/* The drain of scribbled memory: bounded, an error-free log of records
 * that were made, and the damage counted. */
static void scribble_drain(const struct rt_sink *s, uint64_t *damaged,
			   size_t *kept)
{
	struct drained d;

	drain(s, &d, true);
	*kept = check_events(&d.ev, SOME);
	*damaged = d.ctr.damaged;
	drained_free(&d);
}

static void scribble_thread(const struct rt_sink *s, uint64_t *damaged)
{
	struct rt_thread *t[2];
	struct rt_buf *old;
	uint64_t at = T0 + 3, n = 0;
	size_t kept;

	trace_start(s, 4096, 8);
	t[0] = thread_new(s, 0);
	t[1] = thread_new(s, 1);
	/* thread 0: a full buffer and part of another */
	emit(s, t[0], XRAYFDR_FUNC_ENTRY, 1, at++);
	old = thread_part(t[0])->buf;
	while (thread_part(t[0])->buf == old)
		emit(s, t[0], XRAYFDR_FUNC_ENTRY + (n++ % 2), 1, at++);
	for (int i = 0; i < 20; i++)
		emit(s, t[1], XRAYFDR_FUNC_ENTRY + (i % 2), 2, at++);
	/* a retired buffer's length past its end */
	old->used = opts.buffer_size + 4096;
	/* a record of a kind that does not exist, in thread 1's buffer */
	thread_part(t[1])
		->buf->data[fdr_preamble_size(opts.version) + MD + 5 * FN] =
		1 | 15 << 1;
	scribble_drain(s, damaged, &kept);
	CHECK(kept > 0 && kept < made, "kept %zu of %llu", kept,
	      (unsigned long long)made);
	/* a live buffer's position outside it */
	t[0]->pos = thread_part(t[0])->buf->data + opts.buffer_size + 64;
	scribble_drain(s, damaged, &kept);
	t[0]->pos = (uint8_t *)8;
	scribble_drain(s, damaged, &kept);
	CHECK(kept == 5, "kept %zu: the rest of thread 1's is damaged", kept);
}

static void scribble_cpu(const struct rt_sink *s, uint64_t *damaged)
{
	struct rt_thread *t;
	struct xray_fdr_control *ctl;
	struct xray_fdr_subbuf *sb;
	uint32_t other, sbsize;
	uint64_t at = T0 + 3, was;
	size_t kept;

	trace_start(s, 4096, 64);
	t = thread_new(s, 0);
	ctl = ring_control(cpu_pinned);
	sbsize = rt_ring.header->subbuf_size;
	/* three sub-buffers' worth and a bit */
	while (ctl->commit << 32 >> 32 < 3 * (uint64_t)sbsize + 512)
		emit(s, t, XRAYFDR_FUNC_ENTRY + (made % 2), 1, at++);
	/* another ring's commit word past its end */
	other = (cpu_pinned + 1) % rt_ring.ncpus;
	if (other != cpu_pinned) {
		ring_control(other)->commit =
			XRAY_FDR_COMMIT(7, (uint32_t)rt_ring.size + 8);
		scribble_drain(s, damaged, &kept);
		CHECK(*damaged == 1, "damaged %llu",
		      (unsigned long long)*damaged);
		CHECK(kept == made, "kept %zu of %llu", kept,
		      (unsigned long long)made);
		ring_control(other)->commit = XRAY_FDR_COMMIT(0, 48);
	}
	/* the oldest sub-buffer's sequence number, the next one's used */
	sb = ring_subbuf(cpu_pinned, 0);
	sb->seq = 12345;
	sb = ring_subbuf(cpu_pinned, 1);
	sb->used = sbsize * 3;
	scribble_drain(s, damaged, &kept);
	CHECK(kept > 0 && kept < made, "kept %zu of %llu", kept,
	      (unsigned long long)made);
	CHECK(*damaged == 2, "damaged %llu", (unsigned long long)*damaged);
	/* a record of a user kind that does not exist in the third */
	*((uint8_t *)ring_subbuf(cpu_pinned, 2) + sizeof(*sb) + 8 * 10) =
		XRAY_FDR_REC_TYPE(31);
	scribble_drain(s, damaged, &kept);
	CHECK(*damaged == 3, "damaged %llu", (unsigned long long)*damaged);
	/* the commit word itself: not 8-aligned; writers stay out too */
	was = ctl->commit;
	ctl->commit = was + 3;
	scribble_drain(s, damaged, &kept);
	CHECK(kept == 0, "kept %zu from a ring whose commit word is wrong",
	      kept);
	CHECK(*damaged == 1, "damaged %llu", (unsigned long long)*damaged);
	CHECK(!emit(s, t, XRAYFDR_FUNC_ENTRY, 9, at++),
	      "wrote into a ring whose commit word is wrong");
	CHECK(ctl->commit == was + 3, "the commit word moved");
	ctl->commit = was;
	/* the open sub-buffer's sequence number at 2^64 - 1: a walk that
	 * compared up to it would never end (alarm() fails the test then) */
	ring_subbuf(cpu_pinned, 3)->seq = UINT64_MAX;
	alarm(60);
	scribble_drain(s, damaged, &kept);
	alarm(0);
	CHECK(kept <= made, "kept %zu of %llu", kept, (unsigned long long)made);
	/* counters at 2^64 - 1 on every CPU: their sums stop there */
	for (uint32_t c = 0; c < rt_ring.ncpus; c++) {
		ring_control(c)->user_records_lost = UINT64_MAX;
		ring_control(c)->records_lost = UINT64_MAX;
	}
	{
		struct rt_sink_counters ctr;

		s->counters(NULL, &ctr);
		CHECK(rt_cpu_user_lost(rt_cpu_live()) == UINT64_MAX &&
			      ctr.kernel_lost == UINT64_MAX,
		      "counters wrapped: %llu lost, %llu kernel_lost",
		      (unsigned long long)rt_cpu_user_lost(rt_cpu_live()),
		      (unsigned long long)ctr.kernel_lost);
	}
	/* notes without an end, with a terminal escape in an object line,
	 * on every CPU: nothing a drain reads, but the dump's fuzz target
	 * takes these rings as a seed (save_seed()) */
	for (uint32_t c = 0; c < rt_ring.ncpus; c++) {
		char *notes = (char *)ring_control(c) + RT_NOTES_OFFSET;
		size_t room = RT_NOTES_END - RT_NOTES_OFFSET;
		static const char evil[] = "\nobject=/tmp/\033[2Jx\n";

		memset(notes, 'x', room);
		memcpy(notes + room / 2, evil, sizeof(evil) - 1);
	}
	scribble_drain(s, damaged, &kept);
}

/*
 * Scribbled memory (the process can write over its own buffers and
 * rings): a thread buffer's length, its position, a record; a ring's
 * commit word, sub-buffer headers, a record.  The drain stays bounded,
 * gives a well-formed log of records that were made, and counts what it
 * skipped (counters().damaged).
 */
static void sc_scribble(const struct rt_sink *s)
{
	uint64_t damaged = 0;

	if (is_cpu(s))
		scribble_cpu(s, &damaged);
	else
		scribble_thread(s, &damaged);
	CHECK(damaged > 0, "%s sink: damage not counted", s->name);
}

/* One stream pass's buffer, framed, into the membuf @ctx. */
static int stream_to_membuf(void *ctx, const struct rt_chunk *c)
{
	return fdr_frame_write(false, opts.version, opts.buffer_size, c->data,
			       c->used, to_membuf, ctx);
}

/* Function records of one thread at @at on, until its ring has opened a
 * new sub-buffer (a stream pass is then due). */
static void fill_subbuf(const struct rt_sink *s, struct rt_thread *t,
			uint64_t *at)
{
	for (int i = 0; i < 4096 / FN; i++) {
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, (*at)++);
		emit(s, t, XRAYFDR_FUNC_EXIT, 3, (*at)++);
	}
}

/* How often a thread's time goes back from one event of @l to its next
 * (the first time printed). */
static uint64_t times_back(const struct event_list *l)
{
	uint64_t back = 0;

	for (size_t i = 1; i < l->n; i++)
		if (l->ev[i].tid == l->ev[i - 1].tid &&
		    l->ev[i].tsc < l->ev[i - 1].tsc && !back++)
			print_message("# event %zu at %llu after %llu\n", i,
				      (unsigned long long)l->ev[i].tsc,
				      (unsigned long long)l->ev[i - 1].tsc);
	return back;
}

/*
 * Streaming: a thread's time never goes back from one pass to the next.
 * In CPU rings, a record stamped before the time an earlier pass
 * gave the thread last (stamped, preempted, and committed after the
 * kernel's switch-out record that pass took) comes out at that time,
 * not before it.
 */
static void sc_stream_order(const struct rt_sink *s)
{
	struct membuf m = { 0 };
	struct event_list all = { 0 };
	struct read_result res;
	struct rt_thread *t;
	uint64_t at = T0 + 1000, last_out, back = 0;
	int ret;

	start_streamed = true;
	trace_start(s, 4096, 16);
	t = thread_new(s, 0);
	log_begin(&m);
	fill_subbuf(s, t, &at);
	for (int i = 0; i < 100; i++) /* into the new sub-buffer */
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at++);
	ret = s->stream_one(stream_to_membuf, &m);
	CHECK(ret > 0, "the first stream pass gave nothing (%d)", ret);
	last_out = at - 1;
	/* 40 ticks before the last record the first pass gave (thread
	 * buffers: each thread writes its own, in order: no such record) */
	emit(s, t, XRAYFDR_FUNC_ENTRY, 4, is_cpu(s) ? last_out - 40 : at++);
	emit(s, t, XRAYFDR_FUNC_EXIT, 4, at++);
	fill_subbuf(s, t, &at);
	ret = s->stream_one(stream_to_membuf, &m);
	CHECK(ret > 0, "the second stream pass gave nothing (%d)", ret);
	read_all(m.data, m.len, XRAYFDR_READ_NO_CALL_CHECK, &all, &res);
	CHECK(res.ret == 0, "the streamed log: %s at %llu", res.rule,
	      (unsigned long long)res.offset);
	back = times_back(&all);
	CHECK(back == 0, "the thread's time goes back %llu times",
	      (unsigned long long)back);
	event_list_free(&all);
	membuf_free(&m);
}

/* Bytes a C-path record still has in the thread's buffer (thread mode:
 * the fast path's end, as arm() left it). */
static size_t thread_room(const struct rt_thread *t)
{
	return t->end ? (size_t)(t->end + (FN - 1) - t->pos) : 0;
}

/*
 * A thread whose TSC goes back (it moved to a CPU whose TSC is behind the
 * last one's): none of its records comes out before the one before it,
 * in a buffer, and in thread mode at the start of its next buffer, in
 * the flush and from one stream pass to the next.  (The rings' own rule
 * at a new sub-buffer is stream_order's.)
 */
static void sc_time_back(const struct rt_sink *s)
{
	for (int streamed = 0; streamed < 2; streamed++) {
		struct membuf m = { 0 };
		struct event_list all = { 0 };
		struct read_result res = { 0 };
		struct drained out;
		struct rt_thread *t;
		uint64_t at = T0 + 1000, back;

		start_streamed = streamed;
		trace_start(s, 4096, 16);
		t = thread_new(s, 0);
		log_begin(&m);
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at);
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at - 5); /* in a buffer */
		at += 10;
		if (!is_cpu(s)) {
			/* the next C-path record opens a new buffer */
			while (thread_room(t) >= MD + FN)
				emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at++);
			emit(s, t, XRAYFDR_FUNC_ENTRY, 4, at - 40);
			if (streamed) {
				CHECK(s->stream_one(stream_to_membuf, &m) > 0,
				      "no stream pass after a buffer");
				while (thread_room(t) >= MD + FN)
					emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at++);
				emit(s, t, XRAYFDR_FUNC_ENTRY, 5, at - 40);
				CHECK(s->stream_one(stream_to_membuf, &m) > 0,
				      "no stream pass after a buffer");
				read_all(m.data, m.len,
					 XRAYFDR_READ_NO_CALL_CHECK, &all,
					 &res);
				CHECK(res.ret == 0 && all.n,
				      "the streamed log: %s at %llu", res.rule,
				      (unsigned long long)res.offset);
			}
		}
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at);
		drain(s, &out, true);
		back = times_back(&out.ev);
		CHECK(back == 0,
		      "%s: the thread's time goes back %llu times in the flush",
		      streamed ? "streamed" : "kept", (unsigned long long)back);
		back = times_back(&all);
		CHECK(back == 0,
		      "the thread's time goes back %llu times in the stream",
		      (unsigned long long)back);
		CHECK(!all.n || all.ev[all.n - 1].tsc <= out.ev.ev[0].tsc,
		      "the flush begins at %llu, before the stream's %llu",
		      (unsigned long long)out.ev.ev[0].tsc,
		      (unsigned long long)all.ev[all.n - 1].tsc);
		event_list_free(&out.ev);
		event_list_free(&all);
		membuf_free(&m);
	}
}

/* Where the module's last record ends, if nobody committed since. */
static struct {
	uint32_t off;
	uint64_t seq;
} kernel_own;

/*
 * A scheduler record of @tid at @tsc into CPU @cpu's ring as the module
 * appends one (kmod/ring.c): in the open sub-buffer, else in the next one
 * if the reader allows it (discard mode) or, overwriting, if that one's
 * user events were counted (then added to the kernel's count), keeping
 * the tail's owner.  A refusal counts in records_lost.
 */
static bool kernel_append(uint32_t cpu, uint32_t tid, uint64_t tsc)
{
	struct xray_fdr_control *ctl = ring_control(cpu);
	struct xray_fdr_sched_record rec = {
		.type = XRAY_FDR_REC_TYPE(XRAY_FDR_REC_SWITCH_OUT),
		.len = sizeof(rec) / 8,
		.cpu = (uint16_t)cpu,
		.prev_cpu = (uint16_t)cpu,
		.tid = tid,
		.tsc = tsc,
	};
	uint32_t size = rt_ring.header->subbuf_size;
	uint32_t count = rt_ring.header->subbuf_count;
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(ctl->commit);
	uint32_t owner = XRAY_FDR_COMMIT_TID(ctl->commit);
	uint32_t idx = (off - 1) / size, used = off - idx * size;
	struct xray_fdr_subbuf *sb = ring_subbuf(cpu, idx);
	bool own = kernel_own.off == off && kernel_own.seq == sb->seq;

	if (used + sizeof(rec) > size) {
		uint64_t seq = sb->seq + 1;
		struct xray_fdr_subbuf *next =
			ring_subbuf(cpu, (idx + 1) % count);
		uint32_t v = next->user_events;

		if (rt_ring.discard ?
			    (int64_t)(seq - ctl->consumed) >= (int64_t)count :
			    seq >= count && (next->seq != seq - count ||
					     !(v & XRAY_FDR_SUBBUF_COUNTED))) {
			ctl->records_lost++;
			return false;
		}
		if (!rt_ring.discard && seq >= count)
			ctl->user_events_overwritten +=
				v & ~XRAY_FDR_SUBBUF_COUNTED;
		sb->used = used;
		sb->user_events = own ? XRAY_FDR_SUBBUF_COUNTED : 0;
		idx = (idx + 1) % count;
		sb = next;
		*sb = (struct xray_fdr_subbuf){
			.seq = seq,
			.tsc = tsc,
			.cpu = cpu,
			.tid = owner,
			.flags = XRAY_FDR_SUBBUF_KERNEL
		};
		off = idx * size + sizeof(*sb);
	}
	memcpy((uint8_t *)ring_control(cpu) + RT_RING_CONTROL_SIZE + off, &rec,
	       sizeof(rec));
	ctl->commit = XRAY_FDR_COMMIT(owner, off + sizeof(rec));
	kernel_own.off = off + sizeof(rec);
	kernel_own.seq = sb->seq;
	return true;
}

/*
 * One 8-byte custom event of @t through the trampolines' event fast path
 * itself (trampolines.S, EVENT_FAST), as the CPU rings' trace would run
 * it: on rt_self, given @t's fast-path state, with the key, the sizes and
 * the handler of a trace of generation gen_now, and the C path dropping
 * whatever comes to it (busy).  The slot's base is the real TSC for the
 * call (the test clock's is too far from it).  Did it append?  What it
 * appended is taken back, so the drain sees the scenario's records only.
 */
static bool fast_event(const struct rt_sink *s, struct rt_thread *t)
{
	static const uint64_t payload = 0x5eedull;
	const size_t hot = offsetof(struct rt_thread, busy);
	struct xray_fdr_control *ctl = ring_control(cpu_pinned);
	uint64_t commit = ctl->commit, base = t->hdr->tsc;
	void (*handler)(void *, size_t) = rt_handler_custom;
	uint32_t busy = rt_self.busy, setup = rt_self.setup_done;
	void (*event)(const void *, size_t);
	struct rt_thread was;
	bool appended;

	if (!is_cpu(s))
		return false;
	memcpy(&was, &rt_self, hot);
	memcpy(&rt_self, t, hot);
	rt_self.fast = rt_fast_word(cpu_pinned, gen_now);
	rt_self.busy = 1;
	rt_self.setup_done = 1;
	arch_fast_key_store((uint64_t)gen_now << 32);
	rt_event_max[0] = opts.buffer_size;
	rt_handler_custom = rt_fdr_handle_custom;
	t->hdr->tsc = arch_tsc() - 1000;
	/* (the sleds' convention: data and size in rdi and rsi) */
	event = (void (*)(const void *, size_t))(uintptr_t)__xray_CustomEvent;
	event(&payload, sizeof(payload));
	appended = ctl->commit != commit;
	t->hdr->tsc = base;
	ctl->commit = commit;
	rt_handler_custom = handler;
	rt_event_max[0] = 0;
	arch_fast_key_store(0);
	memcpy(&rt_self, &was, hot);
	rt_self.busy = busy;
	rt_self.setup_done = setup;
	return appended;
}

/* The sequence number of the sub-buffer the commit word of @cpu is in. */
static uint64_t open_seq(uint32_t cpu)
{
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(ring_control(cpu)->commit);

	return ring_subbuf(cpu, (off - 1) / rt_ring.header->subbuf_size)->seq;
}

/*
 * Streaming, the user writers leave the kernel a reserve: the last
 * sub-buffer the reader allows (sink_cpu_write.c).  They stop one short
 * of it; the kernel opens it and writes on; neither the C path nor the
 * fast path writes in it, not even where the thread's slot is the same
 * place in the ring a round earlier; once the reader consumed one more,
 * it is theirs; and what the reader left comes out.  (The thread buffers
 * have no kernel writer: nothing to check there.)
 */
static void sc_kernel_reserve(const struct rt_sink *s)
{
	const uint32_t count = 4, cpu = cpu_pinned;
	struct xray_fdr_control *ctl;
	struct rt_thread *t;
	struct drained d;
	uint64_t at = T0 + 1, kernel = 0;
	int i;

	if (!is_cpu(s))
		return;
	start_streamed = true;
	trace_start(s, 4096, count);
	ctl = ring_control(cpu);
	t = thread_new(s, 0);
	for (i = 0; i < 10000 && emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at); i++)
		at++;
	CHECK(i < 10000 && open_seq(cpu) == count - 2,
	      "the writers stopped in sub-buffer %llu of %u, consumed %llu: "
	      "the last one is the kernel's",
	      (unsigned long long)open_seq(cpu), count,
	      (unsigned long long)ctl->consumed);
	/* the kernel writes on into its reserve, till it is full too */
	while (kernel_append(cpu, t->tid, at++))
		kernel++;
	CHECK(open_seq(cpu) == count - 1 && kernel > 100,
	      "the kernel wrote %llu records, into sub-buffer %llu",
	      (unsigned long long)kernel, (unsigned long long)open_seq(cpu));
	CHECK(!emit(s, t, XRAYFDR_FUNC_ENTRY, 2, at++),
	      "the C path wrote in the kernel's reserve");
	CHECK(!fast_append(s, t, XRAYFDR_FUNC_ENTRY, 3, at++),
	      "the fast path wrote in the kernel's reserve");
	CHECK(!fast_event(s, t),
	      "the event fast path wrote in the kernel's reserve");
	/* the reader took sub-buffer 0: the reserve is the next one, which
	 * the kernel opens at sub-buffer 0's place, a round later, with the
	 * thread still the tail's owner */
	ctl->consumed = 1;
	CHECK(kernel_append(cpu, t->tid, at++) && open_seq(cpu) == count,
	      "the kernel did not move on to sub-buffer %u", count);
	kernel++;
	/* (the thread's slot: sub-buffer 0, where the C path had it) */
	t->slot = (uint64_t)t->tid << 32 | sizeof(struct xray_fdr_subbuf);
	t->slot_seq = 0;
	t->hdr = ring_subbuf(cpu, 0);
	CHECK(!fast_append(s, t, XRAYFDR_FUNC_ENTRY, 4, at++),
	      "the fast path wrote in the kernel's reserve, a round later");
	CHECK(!fast_event(s, t),
	      "the event fast path wrote in the kernel's reserve, a round "
	      "later");
	CHECK(!emit(s, t, XRAYFDR_FUNC_ENTRY, 5, at++),
	      "the C path wrote in the kernel's reserve, a round later");
	/* consumed: the writers' again */
	ctl->consumed = 2;
	CHECK(emit(s, t, XRAYFDR_FUNC_ENTRY, 6, at++),
	      "the C path cannot write once the reader consumed");
	CHECK(fast_event(s, t),
	      "the event fast path cannot write once the reader consumed");
	/* (what the reader consumed is the stream's, not the drain's) */
	drain(s, &d, true);
	CHECK(check_events(&d.ev, NEWEST) > 0, "no event came out");
	CHECK(d.others >= kernel,
	      "%llu scheduler records went in, %llu came out",
	      (unsigned long long)kernel, (unsigned long long)d.others);
	drained_free(&d);
}

/* The kernel appends to the open sub-buffer of @cpu until it moves on
 * (true) or refuses (false). */
static bool kernel_moves_on(uint32_t cpu, uint32_t tid, uint64_t *at)
{
	uint64_t seq = open_seq(cpu);

	while (open_seq(cpu) == seq)
		if (!kernel_append(cpu, tid, (*at)++))
			return false;
	return true;
}

/*
 * Overwrite mode: the kernel may destroy the oldest sub-buffer only if a
 * user writer counted its events (kmod/ring.c).  The user writer that
 * opens a sub-buffer counts the one after it, and the first one that
 * writes in a sub-buffer the kernel opened counts the one after that: so
 * the kernel, moving on twice with only a user record between, loses
 * nothing, and kept + overwritten (the runtime's and the kernel's) +
 * dropped = made.
 */
static void sc_kernel_overwrite(const struct rt_sink *s)
{
	const uint32_t count = 4, cpu = cpu_pinned;
	struct xray_fdr_control *ctl;
	struct rt_thread *t;
	struct drained d;
	uint64_t at = T0 + 1;
	size_t kept;
	int i;

	if (!is_cpu(s))
		return;
	trace_start(s, 4096, count);
	ctl = ring_control(cpu);
	t = thread_new(s, 0);
	/* the user writer goes round the ring once */
	for (i = 0; i < 10000 && open_seq(cpu) < count; i++)
		emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at++);
	CHECK(open_seq(cpu) == count, "the user writer is in sub-buffer %llu",
	      (unsigned long long)open_seq(cpu));
	CHECK(kernel_moves_on(cpu, t->tid, &at),
	      "the kernel did not move on from the user writer's sub-buffer");
	CHECK(emit(s, t, XRAYFDR_FUNC_ENTRY, 2, at++),
	      "the C path did not write in the kernel's sub-buffer");
	CHECK(kernel_moves_on(cpu, t->tid, &at) && !ctl->records_lost,
	      "the kernel did not move on again from sub-buffer %llu (%llu of its records lost)",
	      (unsigned long long)open_seq(cpu),
	      (unsigned long long)ctl->records_lost);
	for (i = 0; i < 100; i++)
		emit(s, t, XRAYFDR_FUNC_ENTRY, 3, at++);
	drain(s, &d, true);
	kept = check_events(&d.ev, NEWEST);
	CHECK(d.ctr.kernel_lost == 0 && ctl->user_events_overwritten > 0,
	      "kernel_lost %llu, the kernel overwrote %llu user events",
	      (unsigned long long)d.ctr.kernel_lost,
	      (unsigned long long)ctl->user_events_overwritten);
	CHECK(kept + d.ctr.overwritten + dropped == made,
	      "kept %zu + overwritten %llu + dropped %llu != made %llu", kept,
	      (unsigned long long)d.ctr.overwritten,
	      (unsigned long long)dropped, (unsigned long long)made);
	drained_free(&d);
}

/*
 * A writer preempted between reserve and commit while the ring goes
 * round once, and its commit word comes back to the one reserve saw (a
 * thread that fills a sub-buffer to its end leaves the same word each
 * lap): the commit is refused, else it would open, with a sequence
 * number a lap old, the sub-buffer after, and the ring's would go back.
 */
static void sc_stale_commit(const struct rt_sink *s)
{
	const uint32_t count = 4, cpu = cpu_pinned;
	struct rt_thread *t, *late;
	struct drained d;
	uint64_t at = T0 + 1, tsc, seq, word;
	size_t kept;
	uint8_t *p;

	if (!is_cpu(s))
		return;
	trace_start(s, 4096, count);
	t = thread_new(s, 0);
	late = thread_new(s, 1);
	emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at++);
	while (fast_append(s, t, XRAYFDR_FUNC_ENTRY, 1, at++))
		;
	word = ring_control(cpu)->commit;
	seq = open_seq(cpu);
	CHECK(XRAY_FDR_COMMIT_OFFSET(word) % 4096 == 0,
	      "the fast path left its sub-buffer at %u, not at its end",
	      XRAY_FDR_COMMIT_OFFSET(word) % 4096);
	tsc = at++;
	CHECK(s->reserve(late, MD + FN, &tsc, cpu) != RT_RESERVE_NONE,
	      "the late thread has no room");
	p = late->pos;
	xrayfdr_encode_function(p, false, XRAYFDR_FUNC_ENTRY, 2, 0);
	p += FN;
	for (uint32_t lap = 0; lap < count; lap++) {
		emit(s, t, XRAYFDR_FUNC_ENTRY, 1, at++);
		while (fast_append(s, t, XRAYFDR_FUNC_ENTRY, 1, at++))
			;
	}
	CHECK(ring_control(cpu)->commit == word && open_seq(cpu) == seq + count,
	      "the ring is not where it was a lap earlier (commit %llx, sub-buffer %llu)",
	      (unsigned long long)ring_control(cpu)->commit,
	      (unsigned long long)open_seq(cpu));
	CHECK(!s->commit(late, p, NULL, 0),
	      "a commit prepared a lap earlier went in: the ring is back at sub-buffer %llu after %llu",
	      (unsigned long long)open_seq(cpu),
	      (unsigned long long)(seq + count));
	CHECK(emit(s, late, XRAYFDR_FUNC_ENTRY, 2, at++) &&
		      open_seq(cpu) == seq + count + 1,
	      "the late thread's retry is in sub-buffer %llu",
	      (unsigned long long)open_seq(cpu));
	drain(s, &d, true);
	kept = check_events(&d.ev, NEWEST);
	CHECK(kept + d.ctr.overwritten + dropped == made,
	      "kept %zu + overwritten %llu + dropped %llu != made %llu", kept,
	      (unsigned long long)d.ctr.overwritten,
	      (unsigned long long)dropped, (unsigned long long)made);
	drained_free(&d);
}

/* ------------------------------------------------------------------ */

struct scenario {
	const char *name;
	void (*run)(const struct rt_sink *s);
};

static const struct scenario scenarios[] = {
	{ "reserve_commit", sc_reserve_commit },
	{ "rewind", sc_rewind },
	{ "arm", sc_arm },
	{ "overwrite", sc_overwrite },
	{ "threads", sc_threads },
	{ "fork", sc_fork },
	{ "scribble", sc_scribble },
	{ "stream_order", sc_stream_order },
	{ "time_back", sc_time_back },
	{ "kernel_reserve", sc_kernel_reserve },
	{ "kernel_overwrite", sc_kernel_overwrite },
	{ "stale_commit", sc_stale_commit },
};

#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static const struct rt_sink *const sinks[] = { &rt_thread_sink, &rt_cpu_sink };

/* What each test runs: a scenario against a sink. */
struct run_ctx {
	const struct scenario *scenario;
	const struct rt_sink *sink;
};

static struct run_ctx runs[NSCENARIOS * 2];
static char names[NSCENARIOS * 2][64];

static void run_one(void **state)
{
	const struct run_ctx *r = *state;

	wants_reset();
	scenario_now = r->scenario->name;
	r->scenario->run(r->sink);
}

static int setup(void **state)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	(void)state;
	if (rt_tmpdir(dir, "sink") || cpu < 0)
		return -1;
	/* a ring's commit runs only on the ring's CPU: stay on one */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	cpu_pinned = (uint32_t)cpu;
	rt_rseq_ensure();
	if (rt.own_rseq && syscall(SYS_rseq, &rt_self.rseq,
				   sizeof(rt_self.rseq), 0, RT_RSEQ_SIG))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rt_rmdir(dir);
}

int main(void)
{
	static struct CMUnitTest tests[NSCENARIOS * 2];

	for (size_t i = 0; i < NSCENARIOS; i++)
		for (size_t k = 0; k < 2; k++) {
			size_t n = i * 2 + k;

			runs[n] = (struct run_ctx){ &scenarios[i], sinks[k] };
			snprintf(names[n], sizeof(names[n]), "%s/%s",
				 scenarios[i].name, sinks[k]->name);
			tests[n] = (struct CMUnitTest){
				.name = names[n],
				.test_func = run_one,
				.initial_state = &runs[n],
			};
		}
	return cmocka_run_group_tests_name("record sinks", tests, setup,
					   teardown);
}
