// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * FDR mode's set-up and state changes: init, finalize, fork, a thread's
 * first event (exit hook, rseq area), and the LLVM-style handlers.  The
 * recording itself is in fdr.c.
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
	rt.sink->detach(t);
	t->setup_done = 0; /* events from later destructors re-arm it */
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		pr_warn("cannot create a thread-exit key; the buffers of exited threads stay in use\n");
}

/* Our own rseq area, when libc registered none.  Return whether the
 * thread has one (from libc or from us). */
static bool register_rseq(struct rt_thread *t)
{
	if (rt.own_rseq && !t->rseq.flags)
		t->rseq.flags = syscall(SYS_rseq, &t->rseq, sizeof(t->rseq), 0,
					RT_RSEQ_SIG) ?
					RT_RSEQ_NONE :
					RT_RSEQ_REGISTERED;
	return !rt.own_rseq || t->rseq.flags == RT_RSEQ_REGISTERED;
}

static void thread_setup(struct rt_thread *t)
{
	if (t->setup_done)
		return;
	if (!t->tid)
		t->tid = (uint32_t)syscall(SYS_gettid);
	register_rseq(t);
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, (void *)1);
	if (rt.sink->attach)
		rt.sink->attach(t);
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

void rt_fdr_update_fast(void)
{
	/* max_depth counts every call, on the C path (depth.h) */
	bool fast = rt.status == XRAY_LOG_INITIALIZED && !rt.opts.max_depth &&
		    rt_handler_arg0 == rt_fdr_handle_arg0 &&
		    (!rt_handler_arg1 || rt_handler_arg1 == rt_fdr_handle_arg1);

	arch_fast_key_store(fast ? (uint64_t)rt.generation << 32 : 0);
}

void rt_fdr_quiesce(void)
{
	arch_fast_key_store(0);
	/* Restart every critical section in flight: after this no fast path
	 * can still be past its check.  Without membarrier, a preempted one
	 * restarts when it resumes anyway; give running ones a moment. */
	if (!rt.membarrier ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0,
		    0)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	if (rt.sink->finish)
		rt.sink->finish();
}

/* The sink @o's mode asks for, where it can be had. */
static const struct rt_sink *choose_sink(const struct rt_options *o)
{
	const struct rt_sink *want = o->record_mode == RT_MODE_THREAD ?
					     &rt_thread_sink :
					     &rt_cpu_sink;

	/* (valgrind, a seccomp filter) */
	if (want == &rt_cpu_sink && !register_rseq(&rt_self)) {
		if (o->record_mode == RT_MODE_CPU)
			pr_warn("mode=cpu needs restartable sequences (rseq), which this system refuses; recording in thread mode\n");
		want = &rt_thread_sink;
	}
	/* the sleds call the trampolines of the sink they were patched for */
	if (want != rt.sink && rt_objects_targets_fixed()) {
		if (o->record_mode == RT_MODE_CPU)
			pr_warn("the sleds were patched for %s mode before the trace started; recording in %s mode\n",
				rt.sink->name, rt.sink->name);
		want = rt.sink;
	}
	return want;
}

/* Start @want; if it cannot start, say so once and start thread mode. */
static int start_sink(const struct rt_sink *want, const struct rt_options *o,
		      size_t capacity, char *err, size_t errlen)
{
	int ret = want->start(o, capacity, rt.generation + 1, getpid(), err,
			      errlen);

	if (ret && want != &rt_thread_sink && !rt_objects_targets_fixed()) {
		/* mode=auto without the module is thread mode, unsaid */
		if (ret != -ENODEV)
			pr_warn("%s mode: %s; recording in thread mode\n",
				want->name, err);
		want = &rt_thread_sink;
		ret = want->start(o, capacity, rt.generation + 1, getpid(), err,
				  errlen);
	}
	if (!ret)
		rt.sink = want;
	/* (thread mode, or rings in process memory) */
	if (!ret && o->keep &&
	    !(want->memory && !strcmp(want->memory(), "module")))
		pr_warn("keep=true needs the kernel module's rings (CPU mode); a killed process leaves no log\n");
	return ret;
}

int rt_fdr_init(const struct rt_options *o, char *err, size_t errlen)
{
	size_t capacity = o->version == 1 ? o->buffer_size - FDR_V1_RESERVE :
					    o->buffer_size;
	int ret;

	rt_rseq_ensure();
	rt_note_exec_name();
	ret = rt_tsc_ensure(o);
	if (ret < 0) {
		snprintf(err, errlen,
			 "no source of TSC facts answered (tsc_sources)");
		return ret;
	}
	if (ret == 1 && rt.tsc.source == RT_TSC_CALIBRATE)
		pr_info("TSC frequency calibrated against CLOCK_MONOTONIC_RAW (%llu Hz); the log says so\n",
			(unsigned long long)rt.tsc.hz);
	/* a streamed trace the last flush did not end: its writer reads
	 * the sink's memory */
	rt_stream_stop();
	rt_stream_close();
	ret = start_sink(choose_sink(o), o, capacity, err, errlen);
	if (ret)
		return ret;
	rt.generation++;
	rt.capacity = capacity;
	rt.opts = *o;
	rt.threshold_ticks = (uint64_t)((unsigned __int128)rt.tsc.hz *
					o->threshold_us / 1000000);
	rt.dropped = 0;
	rt.pid = getpid();
	if (o->stream) {
		ret = rt_stream_start(err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int rt_fdr_finalize(void)
{
	if (rt.status != XRAY_LOG_INITIALIZED)
		return rt.status;
	rt.status = XRAY_LOG_FINALIZING;
	rt_fdr_quiesce();
	rt.status = XRAY_LOG_FINALIZED;
	return XRAY_LOG_FINALIZED;
}

void rt_fdr_fork_prepare(void)
{
	rt.sink->fork_prepare();
}

void rt_fdr_fork_parent(void)
{
	rt.sink->fork_parent();
}

void rt_fdr_fork_child(void)
{
	rt.pid = getpid();
	rt_self.tid = 0; /* (its rseq registration is inherited) */
	rt_self.setup_done = 0;
	rt.sink->fork_child(++rt.generation, rt.pid);
	rt_stream_fork_child();
	rt.opts.stream = false;
	rt.dropped = 0;
	if (rt.opts.fork == RT_FORK_OFF && rt.status == XRAY_LOG_INITIALIZED)
		rt.status = XRAY_LOG_UNINITIALIZED;
	rt_fdr_update_fast();
}
