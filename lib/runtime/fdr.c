// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The FDR controller: what happens to an event that the trampolines' fast
 * path does not handle.
 *
 * The fast path (trampolines.S) appends plain function records while the
 * thread has room, stays on one CPU and the TSC's high half is its base's.
 * Everything else comes here: NewCPUId on a CPU change (and at the start
 * of a buffer, whose preamble the sink writes), TSCWrap, custom and typed
 * events.  The records go where the sink (sink.h) says, with times
 * relative to the thread's base (thread.h), which only a NewCPUId or
 * TSCWrap moves here (or the sink: CPU mode's sub-buffers); the drain
 * makes them FDR's deltas and applies LLVM's duration threshold
 * (logbuf.h), so the fast path stays on with a threshold.
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
 */
#include <sched.h>
#include <string.h>
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

__thread struct rt_thread rt_self
	__attribute__((tls_model("initial-exec"), aligned(64)));
/* Read by the trampolines (thread.h, arch.h). */
uint64_t rt_fast_key;
long rt_rseq_offset;
void (*volatile rt_handler_arg0)(int32_t, XRayEntryType);
void (*volatile rt_handler_arg1)(int32_t, XRayEntryType, uint64_t);
void (*volatile rt_handler_custom)(void *, size_t);
void (*volatile rt_handler_typed)(uint16_t, const void *, size_t);
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
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
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
	uint32_t gen = rt.sink->arm(t);

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->fast = gen ? rt_fast_word(t->cpu, gen) : RT_FAST_OFF;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* Records are staged at *@p, past what is committed, and committed
 * together: a flush or a ring reader sees all of an event or none. */
static void put_md(uint8_t **p, const struct xrayfdr_metadata *md)
{
	fdr_put_metadata(*p, false, rt.opts.version, md);
	*p += MD;
}

static void put_fn(uint8_t **p, unsigned int kind, int32_t id, uint64_t delta)
{
	uint64_t w =
		fdr_function_record_le(kind, (uint32_t)id, (uint32_t)delta);

	__builtin_memcpy(*p, &w, sizeof(w));
	*p += FN;
}

/* Make room for @need bytes of records at t->pos.  A new buffer's first
 * record brings a NewCPUId, and nothing before it can be rewound. */
static bool ensure_space(struct rt_thread *t, size_t need, uint64_t *tsc,
			 uint32_t cpu)
{
	switch (rt.sink->reserve(t, need, tsc, cpu)) {
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
	uint64_t tsc, base;
	uint32_t cpu;
	uint8_t *p;

	do {
		tsc = arch_tsc();
		cpu = thread_cpu(t);
		if (!ensure_space(t, need, &tsc, cpu)) {
			__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
			return;
		}
		p = t->pos;
		base = t->base;
		preamble(t, &p, tsc, cpu, &base);
		put_fn(&p, kind, id, tsc - base);
		if (kind == XRAYFDR_FUNC_ENTRY_ARGS)
			put_md(&p, &(struct xrayfdr_metadata){
					   .kind = XRAYFDR_MD_CALL_ARGUMENT,
					   .arg = arg });
	} while (!rt.sink->commit(t, p, NULL, 0));
	t->base = base;
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
	if (rt.status == XRAY_LOG_INITIALIZED)
		record_function(t, kinds[op], id, arg);
	end(t);
	return RT_LIGHT_DONE;
}

/* Why an event cannot be written; 0 if it can. */
static int event_problem(bool typed, size_t size)
{
	if (!size)
		return RT_LIGHT_WARN_EMPTY;
	if (typed && rt.opts.version < 2)
		return RT_LIGHT_WARN_V1;
	if (size > rt.capacity)
		return RT_LIGHT_WARN_BIG;
	return 0;
}

int rt_fdr_light_event(int typed, uint16_t type, const void *data, size_t size)
{
	struct rt_thread *t = &rt_self;
	struct xrayfdr_metadata md = { .event_size = (int32_t)size };
	uint64_t tsc, base;
	uint8_t *p;
	uint32_t cpu;
	int ret = RT_LIGHT_DONE, problem;

	if (needs_setup(t))
		return RT_LIGHT_SETUP;
	if (!begin(t))
		return RT_LIGHT_DONE;
	if (rt.status != XRAY_LOG_INITIALIZED)
		goto out;
	problem = event_problem(typed, size);
	if (problem) {
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
		if (!(__atomic_fetch_or(&rt_warned, problem, __ATOMIC_RELAXED) &
		      problem))
			ret = problem; /* the caller says why, once */
		goto out;
	}
	do {
		tsc = arch_tsc();
		cpu = thread_cpu(t);
		if (!ensure_space(t, 2 * MD + size, &tsc, cpu)) {
			__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
			goto out;
		}
		p = t->pos;
		base = t->base;
		preamble(t, &p, tsc, cpu, &base);
		if (typed) {
			md.kind = XRAYFDR_MD_TYPED_EVENT_MARKER;
			md.event_type = type;
			md.tsc_delta = (int32_t)(tsc - base);
		} else {
			md.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER;
			md.tsc = tsc; /* versions 1-4: absolute */
			md.cpu = (uint16_t)cpu;
			if (rt.opts.version >= 5)
				md.tsc_delta = (int32_t)(tsc - base);
		}
		put_md(&p, &md);
		/* the sink copies the payload after the marker */
	} while (!rt.sink->commit(t, p, data, size));
	t->base = base;
out:
	end(t);
	return ret;
}
