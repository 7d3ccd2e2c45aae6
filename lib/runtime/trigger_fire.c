// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The part of triggers the trampolines reach (trigger.h): it runs between
 * their general-register save and the instrumented code, so it touches no
 * vector register (built as fdr.c is) and keeps the program's errno.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "thread.h"
#include "trigger.h"

uint64_t rt_trig_min_cycles = UINT64_MAX;
uintptr_t rt_trig_next[4];
uint8_t *rt_trig_fn[RT_TRIG_OBJECTS];
uint32_t rt_trig_nfn[RT_TRIG_OBJECTS];
uint64_t rt_trig_cycles[RT_TRIG_MAX];
int rt_trig_efd = -1;

/* The event handed to the thread, published by busy 1 -> 2; the thread
 * sets it back to 0 when done. */
static struct rt_trig_event pending;
static uint32_t busy;
static uint64_t suppressed;

static uint32_t trigger_of(uint32_t id)
{
	uint32_t object = id >> 24, f = id & 0xffffffu;
	const uint8_t *fn;

	if (object >= RT_TRIG_OBJECTS || !f)
		return 0;
	fn = __atomic_load_n(&rt_trig_fn[object], __ATOMIC_ACQUIRE);
	if (!fn || f > rt_trig_nfn[object])
		return 0;
	return fn[f - 1];
}

static uint32_t gettid_raw(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

bool rt_trigger_fire(const struct rt_trig_event *ev)
{
	uint32_t idle = 0;
	uint64_t one = 1;
	int saved = errno;

	if (rt_trig_efd < 0 ||
	    !__atomic_compare_exchange_n(&busy, &idle, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&suppressed, 1, __ATOMIC_RELAXED);
		return false;
	}
	pending.kind = ev->kind;
	pending.trigger = ev->trigger;
	pending.tid = ev->tid;
	pending.function = ev->function;
	pending.cycles = ev->cycles;
	pending.end_tsc = ev->end_tsc;
	__atomic_store_n(&busy, 2, __ATOMIC_RELEASE);
	/* (an eventfd's write fails only past 2^64 - 2 unread) */
	if (write(rt_trig_efd, &one, sizeof(one)) < 0)
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	errno = saved;
	return true;
}

bool rt_trigger_take(struct rt_trig_event *ev)
{
	if (__atomic_load_n(&busy, __ATOMIC_ACQUIRE) != 2)
		return false;
	*ev = pending;
	return true;
}

void rt_trigger_done(void)
{
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

uint64_t rt_trigger_suppressed(void)
{
	return __atomic_load_n(&suppressed, __ATOMIC_RELAXED);
}

void rt_trigger_suppress(void)
{
	__atomic_add_fetch(&suppressed, 1, __ATOMIC_RELAXED);
}

void rt_trigger_exit(uint32_t word)
{
	struct rt_thread *t = &rt_self;
	uint32_t id = word >> RT_FUNC_ID_SHIFT, d = t->trig_depth, trig;
	uint64_t now = arch_tsc(), cycles;

	if (d >= RT_TRIG_STACK)
		return;
	if (t->trig_id[d] != id) {
		/* calls above it were unwound (longjmp, an exception): its
		 * entry is further down, or (entered before its sleds were
		 * patched) not there, and what was popped stays */
		uint32_t j = d;

		while (j > 0 && t->trig_id[j - 1] != id)
			j--;
		if (!j) {
			t->trig_depth = d + 1;
			return;
		}
		d = j - 1;
		t->trig_depth = d;
	}
	trig = trigger_of(id);
	cycles = now - t->trig_tsc[d];
	if (!trig || trig > RT_TRIG_MAX || cycles <= rt_trig_cycles[trig - 1])
		return;
	rt_trigger_fire(&(struct rt_trig_event){
		.kind = RT_TRIG_DURATION,
		.trigger = trig - 1,
		.tid = t->tid ? t->tid : gettid_raw(),
		.function = (int32_t)id,
		.cycles = cycles,
		.end_tsc = now,
	});
}
