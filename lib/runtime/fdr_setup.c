// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A thread's first event (its exit hook, its rseq area) and the handlers
 * LLVM's FDR mode installs, which come here when the fast path did not
 * take the event.  The recording itself is in fdr.c.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/frame.h"
#include "../log.h"
#include "controller.h"
#include "objects.h"
#include "sink.h"
#include "state.h"
#include "stream.h"

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
	struct rt_thread *t = &rt_self;

	(void)arg;
	rt_fdr_name_check(); /* a rename since its last buffer began */
	t->fast = RT_FAST_OFF;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rt_live.sink->detach(t);
	t->setup_done = 0; /* events from later destructors re-arm it */
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		pr_warn("cannot create a thread-exit key; the buffers of exited threads stay in use\n");
}

/* glibc 2.35 and later register an rseq area for every thread. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* Where the fast path reads the CPU and arms its critical sections. */
static void setup_rseq(void)
{
	if (&__rseq_size && __rseq_size) {
		rt_rseq_offset = (long)__rseq_offset;
		rt.own_rseq = false;
	} else {
		rt_rseq_offset = (long)((char *)&rt_self.rseq -
					(char *)__builtin_thread_pointer());
		rt.own_rseq = true;
		pr_info("libc registered no rseq area; registering our own\n");
	}
	rt.membarrier = !syscall(SYS_membarrier,
				 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
				 0, 0);
}

void rt_rseq_ensure(void)
{
	static bool rseq_known; /* (a forked child inherits it) */

	if (!rseq_known) {
		setup_rseq();
		rseq_known = true;
	}
}

bool rt_thread_rseq(struct rt_thread *t)
{
	if (rt.own_rseq && !t->rseq.flags)
		t->rseq.flags = syscall(SYS_rseq, &t->rseq, sizeof(t->rseq), 0,
					RT_RSEQ_SIG) ?
					RT_RSEQ_NONE :
					RT_RSEQ_REGISTERED;
	return !rt.own_rseq || t->rseq.flags == RT_RSEQ_REGISTERED;
}

void rt_tls_offsets(long *self, long *rseq)
{
	rt_rseq_ensure();
	*self = (long)((char *)&rt_self - (char *)__builtin_thread_pointer());
	*rseq = rt_rseq_offset;
}

static void thread_setup(struct rt_thread *t)
{
	if (t->setup_done)
		return;
	if (!t->tid)
		t->tid = (uint32_t)syscall(SYS_gettid);
	rt_thread_rseq(t);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, (void *)1);
	if (rt_live.sink->attach)
		rt_live.sink->attach(t);
	t->setup_done = 1;
}

static void report_drops(int why)
{
	if (why & RT_LIGHT_WARN_EMPTY)
		pr_warn("dropping events with an empty payload, which llvm-xray rejects\n");
	if (why & RT_LIGHT_WARN_BIG)
		pr_warn("dropping events larger than buffer_size\n");
	if (why & RT_LIGHT_WARN_V1)
		pr_warn("dropping typed events: FDR version 1 has none\n");
}

void rt_fdr_heavy(int op, int32_t id, uint64_t arg)
{
	thread_setup(&rt_self);
	rt_fdr_light(op, id, arg);
}

void rt_fdr_heavy_event(int typed, uint16_t type, const void *data, size_t size)
{
	int ret;

	thread_setup(&rt_self);
	ret = rt_fdr_light_event(typed, type, data, size);
	if (ret != RT_LIGHT_DONE && ret != RT_LIGHT_SETUP)
		report_drops(ret);
}

void rt_fdr_handle_arg0(int32_t id, enum XRayEntryType kind)
{
	/* LLVM's arg0 handler records a log-args entry as a plain one */
	rt_fdr_heavy(kind == LOG_ARGS_ENTRY ? ENTRY : kind, id, 0);
}

void rt_fdr_handle_arg1(int32_t id, enum XRayEntryType kind, uint64_t arg)
{
	rt_fdr_heavy(kind == ENTRY ? LOG_ARGS_ENTRY : kind, id, arg);
}

void rt_fdr_handle_custom(void *data, size_t size)
{
	rt_fdr_heavy_event(0, 0, data, size);
}

void rt_fdr_handle_typed(uint16_t type, const void *data, size_t size)
{
	rt_fdr_heavy_event(1, type, data, size);
}
