// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The FDR controller: what happens to an event that the trampolines' fast
 * path does not handle.
 *
 * The fast path (trampolines.S) appends plain function records while the
 * thread has room, stays on one CPU and the TSC's high half is its base's
 * (in CPU mode custom and typed events too, where the sub-buffer already
 * names the thread).  Everything else comes here: NewCPUId on a CPU
 * change (and at the start of a buffer, whose preamble the sink writes),
 * TSCWrap, the other events.  The records go where the sink (sink.h)
 * says, with times relative to the thread's base (thread.h), which only
 * a NewCPUId or TSCWrap moves here (or the sink: CPU mode's
 * sub-buffers); the drain makes them FDR's deltas and applies LLVM's
 * duration threshold (logbuf.h), so the fast path stays on with a
 * threshold.
 *
 * This file is built without vector registers (-mgeneral-regs-only) and
 * calls nothing that uses them (clock_gettime and getcpu are vDSO calls,
 * the rest system calls), so the trampolines call it saving only general
 * registers.  What needs more (a thread's first event: its exit hook, its
 * rseq area) returns RT_LIGHT_SETUP and is redone by fdr_setup.c after a
 * full save.  The objects' undefined symbols are checked by a test.
 *
 * The C path is not restartable, so it marks the thread busy; an event
 * that arrives meanwhile (a signal handler's) is counted as dropped rather
 * than allowed to interleave.
 *
 * Thread names: where a buffer begins for a thread (the sink says so with
 * t->name_due), the thread's name, read with prctl(PR_GET_NAME), goes
 * first, as a thread-name custom event (<xrayfdr/fdr.h>) committed with
 * the event that began the buffer, so every buffer the flight recorder
 * keeps names its thread.  Only the C path does this, once per buffer;
 * a rename in between is recorded at the next buffer, at the thread's
 * exit (rt_fdr_name_check()) or by the flush.
 */
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/records.h"
#include "controller.h"
#include "sink.h"
#include "state.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE

/* The unit tests build this file with a clock and CPU of their own. */
#ifdef RT_TEST_CLOCK
uint64_t rt_test_tsc(void);
uint32_t rt_test_cpu(void);
#define arch_tsc() rt_test_tsc()
#define thread_cpu(t) rt_test_cpu()
#endif

/* A thread starts with its fast path off: a zero word would match a key of
 * 0 (the fast path off) on CPU 0, and CPU mode's would use no area. */
__thread struct rt_thread rt_self __attribute__((
	tls_model("initial-exec"), aligned(64))) = { .fast = RT_FAST_OFF };
/* Read by the trampolines (thread.h). */
long rt_rseq_offset;
int rt_warned; /* enum rt_light bits already reported */

#ifndef RT_TEST_CLOCK
static void *thread_pointer(void)
{
	return __builtin_thread_pointer();
}

/* The CPU, as the fast path sees it (from the rseq area). */
static uint32_t thread_cpu(struct rt_thread *t)
{
	if (rt.own_rseq && t->rseq.flags == RT_RSEQ_NONE) {
		int cpu = sched_getcpu();

		/* as the kernel keeps them, for the fast path's compare */
		t->rseq.cpu_id = cpu < 0 ? 0 : (uint32_t)cpu;
		t->rseq.cpu_id_start = t->rseq.cpu_id;
	}
	return *(volatile uint32_t *)((char *)thread_pointer() +
				      rt_rseq_offset + RT_RSEQ_CPU_ID);
}
#endif

static bool begin(struct rt_thread *t)
{
	if (t->busy) {
		__atomic_add_fetch(&rt_live.dropped, 1, __ATOMIC_RELAXED);
		return false;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->fast = RT_FAST_OFF; /* nested events come here and are dropped */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return true;
}

static void end(struct rt_thread *t)
{
	uint32_t gen = rt_live.sink->arm(t);

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->fast = gen ? rt_fast_word(t->cpu, gen) : RT_FAST_OFF;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* Records are staged at *@p, past what is committed, and committed
 * together: a flush or a ring reader sees all of an event or none. */
static void put_md(uint8_t **p, const struct xrayfdr_metadata *md)
{
	fdr_put_metadata(*p, false, rt_live.opts.version, md);
	*p += MD;
}

static void put_fn(uint8_t **p, unsigned int kind, int32_t id, uint64_t delta)
{
	uint64_t w =
		fdr_function_record_le(kind, (uint32_t)id, (uint32_t)delta);

	__builtin_memcpy(*p, &w, sizeof(w));
	*p += FN;
}

/* The thread's name now, NUL-terminated in @name; its length, 0 if
 * unknown or empty.  (One system call, vector-free.) */
static size_t current_name(char name[16])
{
	size_t n = 0;

	if (prctl(PR_GET_NAME, (unsigned long)name, 0UL, 0UL, 0UL))
		name[0] = '\0';
	name[15] = '\0';
	while (name[n])
		n++;
	return n;
}

static bool same_name(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return *a == *b;
}

/* The payload of a thread-name event at @p, as xrayfdr_thread_name_encode()
 * writes it (which is not built vector-free); its size. */
static size_t put_name_payload(uint8_t *p, uint32_t tid, const char *name,
			       size_t n)
{
	p[0] = 'X', p[1] = 'F', p[2] = 'T', p[3] = 'N';
	put32(p + 4, tid, false);
	for (size_t i = 0; i < n; i++)
		p[8 + i] = (uint8_t)name[i];
	return 8 + n;
}

/* A name read once per event, however often the event is made again. */
struct name_now {
	char name[16];
	size_t len;
	bool read;
};

/* The marker of a custom event of @size bytes at @tsc on @cpu, whose
 * delta (version 5) is from @base. */
static void put_custom_marker(uint8_t **p, size_t size, uint64_t tsc,
			      uint64_t base, uint32_t cpu)
{
	struct xrayfdr_metadata md = {
		.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
		.event_size = (int32_t)size,
		.tsc = tsc, /* versions 1-4: absolute */
		.cpu = (uint16_t)cpu,
	};

	if (rt_live.opts.version >= 5)
		md.tsc_delta = (int32_t)(tsc - base);
	put_md(p, &md);
}

/*
 * The thread's name first, as a whole custom event at *@p, when reserve
 * began a buffer for it (t->name_due, with room for it), at the time of
 * the event that follows.
 */
static void name_first(struct rt_thread *t, uint8_t **p, uint64_t tsc,
		       uint64_t base, uint32_t cpu, struct name_now *nm)
{
	size_t size;

	t->name_in = 0;
	if (!t->name_due)
		return;
	if (!nm->read) {
		nm->len = current_name(nm->name);
		nm->read = true;
	}
	/* (the exec name, if the thread never had another: rt.exec_name) */
	if (!nm->len || (!t->name[0] && same_name(nm->name, rt.exec_name)))
		return;
	put_custom_marker(p, 8 + nm->len, tsc, base, cpu);
	size = put_name_payload(*p, t->tid, nm->name, nm->len);
	*p += size;
	/* the sinks keep each record 8-byte aligned (sink.h) */
	for (; size % 8; size++)
		*(*p)++ = 0;
	t->name_in = 1;
}

/* After the commit (@nm), or a drop (NULL): the name the records held is
 * the thread's last recorded. */
static void name_done(struct rt_thread *t, const struct name_now *nm)
{
	if (nm && t->name_in)
		__builtin_memcpy(t->name, nm->name, sizeof(t->name));
	t->name_in = 0;
	t->name_due = 0;
}

/* Make room for @need bytes of records at t->pos.  A new buffer's first
 * record brings a NewCPUId, and nothing before it can be rewound. */
static bool ensure_space(struct rt_thread *t, size_t need, uint64_t *tsc,
			 uint32_t cpu)
{
	switch (rt_live.sink->reserve(t, need, tsc, cpu)) {
	case RT_RESERVE_SAME:
		return true;
	case RT_RESERVE_NEW:
		t->cpu = UINT32_MAX;
		return true;
	default:
		return false;
	}
}

/*
 * NewCPUId or TSCWrap when the next record needs one: a new CPU, or a time
 * whose high half is not the base's (the fast path's condition).  The
 * record's TSC, the new *@base, is the time with its low half cleared:
 * then the fast path stores the TSC's low half as the time, and no CPU's
 * TSC can be behind the base of its own records.  (CPU mode's sink keeps
 * its base and CPU itself; neither record is written there.)
 */
static void preamble(struct rt_thread *t, uint8_t **p, uint64_t tsc,
		     uint32_t cpu, uint64_t *base)
{
	struct xrayfdr_metadata md = { .tsc = tsc & ~(uint64_t)UINT32_MAX };

	if (cpu != t->cpu) {
		md.kind = XRAYFDR_MD_NEW_CPU_ID;
		md.cpu = (uint16_t)cpu;
		t->cpu = cpu;
	} else if (tsc < *base || (tsc ^ *base) >> 32) {
		md.kind = XRAYFDR_MD_TSC_WRAP;
	} else {
		return;
	}
	put_md(p, &md);
	*base = md.tsc;
}

/*
 * One function event.  Only a sink that writes where other threads write
 * too (the CPU rings) can refuse a commit, and then the event is made
 * again, with a new time.
 */
static void record_function(struct rt_thread *t, unsigned int kind, int32_t id,
			    uint64_t arg)
{
	size_t need = MD + FN + (kind == XRAYFDR_FUNC_ENTRY_ARGS ? MD : 0);
	struct name_now nm = { .read = false };
	uint64_t tsc, base;
	uint32_t cpu;
	uint8_t *p;

	do {
		tsc = arch_tsc();
		cpu = thread_cpu(t);
		if (!ensure_space(t, need, &tsc, cpu)) {
			__atomic_add_fetch(&rt_live.dropped, 1,
					   __ATOMIC_RELAXED);
			name_done(t, NULL);
			return;
		}
		p = t->pos;
		base = t->base;
		preamble(t, &p, tsc, cpu, &base);
		name_first(t, &p, tsc, base, cpu, &nm);
		put_fn(&p, kind, id, tsc - base);
		if (kind == XRAYFDR_FUNC_ENTRY_ARGS)
			put_md(&p, &(struct xrayfdr_metadata){
					   .kind = XRAYFDR_MD_CALL_ARGUMENT,
					   .arg = arg });
	} while (!rt_live.sink->commit(t, p, NULL, 0));
	t->base = base;
	name_done(t, &nm);
}

/* A thread's first event needs set-up that is not vector-free. */
static bool needs_setup(const struct rt_thread *t)
{
	return !t->setup_done;
}

int rt_fdr_light(int op, int32_t id, uint64_t arg)
{
	static const unsigned int kinds[] = {
		[ENTRY] = XRAYFDR_FUNC_ENTRY,
		[EXIT] = XRAYFDR_FUNC_EXIT,
		[TAIL] = XRAYFDR_FUNC_TAIL_EXIT,
		[LOG_ARGS_ENTRY] = XRAYFDR_FUNC_ENTRY_ARGS,
	};
	struct rt_thread *t = &rt_self;

	if (op < ENTRY || op > LOG_ARGS_ENTRY)
		return RT_LIGHT_DONE;
	if (needs_setup(t))
		return RT_LIGHT_SETUP;
	if (!begin(t))
		return RT_LIGHT_DONE;
	if (rt_live.status == XRAY_LOG_INITIALIZED &&
	    (!rt_live.opts.max_depth ||
	     rt_depth_keeps(&t->depth, rt_live.generation,
			    op == ENTRY || op == LOG_ARGS_ENTRY, id,
			    (uint32_t)rt_live.opts.max_depth)))
		record_function(t, kinds[op], id, arg);
	end(t);
	return RT_LIGHT_DONE;
}

/* Why an event cannot be written; 0 if it can. */
static int event_problem(bool typed, size_t size)
{
	if (!size)
		return RT_LIGHT_WARN_EMPTY;
	if (typed && rt_live.opts.version < 2)
		return RT_LIGHT_WARN_V1;
	if (size > rt_live.capacity)
		return RT_LIGHT_WARN_BIG;
	return 0;
}

/*
 * A custom or typed event of @size bytes (the caller checked that it can
 * be written).  @is_name: it is the thread's name (@nm), which then does
 * not go first as well.
 */
static void record_event(struct rt_thread *t, int typed, uint16_t type,
			 const void *data, size_t size, struct name_now *nm,
			 bool is_name)
{
	struct xrayfdr_metadata md = { .event_size = (int32_t)size };
	uint64_t tsc, base;
	uint8_t *p;
	uint32_t cpu;

	do {
		tsc = arch_tsc();
		cpu = thread_cpu(t);
		if (!ensure_space(t, 2 * MD + size, &tsc, cpu)) {
			__atomic_add_fetch(&rt_live.dropped, 1,
					   __ATOMIC_RELAXED);
			name_done(t, NULL);
			return;
		}
		p = t->pos;
		base = t->base;
		preamble(t, &p, tsc, cpu, &base);
		if (is_name) {
			t->name_in = 1;
			put_custom_marker(&p, size, tsc, base, cpu);
		} else if (typed) {
			name_first(t, &p, tsc, base, cpu, nm);
			md.kind = XRAYFDR_MD_TYPED_EVENT_MARKER;
			md.event_type = type;
			md.tsc_delta = (int32_t)(tsc - base);
			put_md(&p, &md);
		} else {
			name_first(t, &p, tsc, base, cpu, nm);
			put_custom_marker(&p, size, tsc, base, cpu);
		}
		/* the sink copies the payload after the marker */
	} while (!rt_live.sink->commit(t, p, data, size));
	t->base = base;
	name_done(t, nm);
}

int rt_fdr_light_event(int typed, uint16_t type, const void *data, size_t size)
{
	struct rt_thread *t = &rt_self;
	struct name_now nm = { .read = false };
	int ret = RT_LIGHT_DONE, problem;

	if (needs_setup(t))
		return RT_LIGHT_SETUP;
	if (!begin(t))
		return RT_LIGHT_DONE;
	if (rt_live.status != XRAY_LOG_INITIALIZED)
		goto out;
	problem = event_problem(typed, size);
	if (problem) {
		__atomic_add_fetch(&rt_live.dropped, 1, __ATOMIC_RELAXED);
		if (!(__atomic_fetch_or(&rt_warned, problem, __ATOMIC_RELAXED) &
		      problem))
			ret = problem; /* the caller says why, once */
		goto out;
	}
	record_event(t, typed, type, data, size, &nm, false);
out:
	end(t);
	return ret;
}

void rt_fdr_name_check(void)
{
	struct rt_thread *t = &rt_self;
	struct name_now nm = { .read = true };
	uint8_t payload[8 + XRAYFDR_THREAD_NAME_MAX];
	size_t size;

	/* (a thread that never recorded its name has no events to name) */
	if (!t->setup_done || !t->name[0] ||
	    rt_live.status != XRAY_LOG_INITIALIZED)
		return;
	nm.len = current_name(nm.name);
	if (!nm.len || same_name(nm.name, t->name))
		return;
	size = put_name_payload(payload, t->tid, nm.name, nm.len);
	if (!begin(t))
		return;
	if (rt_live.status == XRAY_LOG_INITIALIZED &&
	    !event_problem(false, size))
		record_event(t, 0, 0, payload, size, &nm, true);
	end(t);
}
