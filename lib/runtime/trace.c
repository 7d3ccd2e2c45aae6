// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The process's trace, from start to log (see trace.h).  The flush serves
 * exit, requests and fatal signals with one code path, so it is
 * async-signal-safe: no stdio, no allocation.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/frame.h"
#include "../log.h"
#include "../util/losses.h"
#include "controller.h"
#include "handlers.h"
#include "logfile.h"
#include "objects.h"
#include "sink.h"
#include "state.h"
#include "stream.h"
#include "trace.h"

static int emergency_done;

void rt_trace_init(void)
{
	if (!rt_live.sink)
		rt_live.sink = &rt_thread_sink;
}

void rt_trace_quiesce(void)
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
	if (rt_live.sink->finish)
		rt_live.sink->finish();
}

/* The sink @o's mode asks for, where it can be had. */
static const struct rt_sink *choose_sink(const struct rt_options *o)
{
	const struct rt_sink *want = o->record_mode == RT_MODE_THREAD ?
					     &rt_thread_sink :
					     &rt_cpu_sink;

	/* (valgrind, a seccomp filter) */
	if (want == &rt_cpu_sink && !rt_thread_rseq(&rt_self)) {
		if (o->record_mode == RT_MODE_CPU)
			pr_warn("mode=cpu needs restartable sequences (rseq), which this system refuses; recording in thread mode\n");
		want = &rt_thread_sink;
	}
	/* the sleds call the trampolines of the sink they were patched for */
	if (want != rt_live.sink && rt_objects_targets_fixed()) {
		if (o->record_mode == RT_MODE_CPU)
			pr_warn("the sleds were patched for %s mode before the trace started; recording in %s mode\n",
				rt_live.sink->name, rt_live.sink->name);
		want = rt_live.sink;
	}
	return want;
}

/* Start @want; if it cannot start, say so once and start thread mode. */
static int start_sink(const struct rt_sink *want, const struct rt_options *o,
		      size_t capacity, char *err, size_t errlen)
{
	int ret = want->start(o, capacity, rt_live.generation + 1, getpid(),
			      err, errlen);

	if (ret && want != &rt_thread_sink && !rt_objects_targets_fixed()) {
		/* mode=auto without the module is thread mode, unsaid */
		if (ret != -ENODEV)
			pr_warn("%s mode: %s; recording in thread mode\n",
				want->name, err);
		want = &rt_thread_sink;
		ret = want->start(o, capacity, rt_live.generation + 1, getpid(),
				  err, errlen);
	}
	if (!ret)
		rt_live.sink = want;
	/* (thread mode, or rings in process memory) */
	if (!ret && o->keep &&
	    !(want->memory && !strcmp(want->memory(NULL), "module")))
		pr_warn("keep=true needs the kernel module's rings (CPU mode); a killed process leaves no log\n");
	return ret;
}

int rt_trace_start(const struct rt_options *o, char *err, size_t errlen)
{
	size_t capacity = fdr_frame_capacity(o->version, o->buffer_size);
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
	rt_live.generation++;
	rt_live.capacity = capacity;
	/* what the event fast path may take: a payload the C path would
	 * not refuse (fdr.c), under a marker it writes (custom events: the
	 * delta of version 5); no key of this generation is out yet */
	rt_event_max[0] =
		rt_live.sink->fast_events && o->version >= 5 ? capacity : 0;
	rt_event_max[1] =
		rt_live.sink->fast_events && o->version >= 2 ? capacity : 0;
	rt_event_buffers = rt_live.sink->fast_events == RT_FAST_EVENTS_BUFFER;
	rt_live.opts = *o;
	rt_live.tsc = rt.tsc;
	rt_live.threshold_ticks = (uint64_t)((unsigned __int128)rt.tsc.hz *
					     o->threshold_us / 1000000);
	rt_live.dropped = 0;
	rt_live.pid = getpid();
	if (o->stream) {
		ret = rt_stream_start(err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int rt_trace_stop(void)
{
	if (rt_live.status != XRAY_LOG_INITIALIZED)
		return rt_live.status;
	rt_live.status = XRAY_LOG_FINALIZING;
	rt_trace_quiesce();
	rt_live.status = XRAY_LOG_FINALIZED;
	return XRAY_LOG_FINALIZED;
}

/* Open the log and write it, or append the rest to the streamed one. */
static int flush_to_log(struct rt_drain *d, struct rt_totals *tot)
{
	struct rt_log_extra x = { .objects = rt_objects_text() };
	int fd = rt_stream_fd(), ret;

	if (fd >= 0) {
		x.streamed = true;
		rt_stream_totals(&x.streamed_events, &x.streamed_buffers);
		ret = rt_log_write(&rt_live, fd, d, &x, tot);
		rt_stream_close();
		return ret;
	}
	fd = rt_open_log(&rt_live.opts, rt_live.last_log,
			 sizeof(rt_live.last_log));
	if (fd < 0) {
		rt_log_count(&rt_live, d, tot);
		return -errno;
	}
	ret = rt_log_write(&rt_live, fd, d, &x, tot);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static void report(int ret, const struct rt_totals *tot)
{
	char ev[24], ow[24], dr[24], err[24], pid[24], ls[LOSSES_TEXT_MAX];
	/* LLVM's line, which scripts look for, then ours */
	const char *llvm[] = {
		"==",
		rt_utoa((uint64_t)rt_live.pid, pid),
		"==XRay: Log file in '",
		rt_live.last_log,
		"'\n",
	};
	const char *parts[] = {
		"xrayfdr: wrote ",
		rt_utoa(tot->events, ev),
		" events to '",
		rt_live.last_log,
		"' (",
		rt_utoa(tot->overwritten, ow),
		" overwritten, ",
		rt_utoa(tot->dropped, dr),
		" dropped",
		/* whatever was lost is on this line (CPU mode: the kernel's
		 * records, the damaged parts of the rings), not only in the
		 * log */
		losses_text(ls, tot->kernel_lost, tot->damaged),
		")\n",
	};
	const char *fail[] = { "xrayfdr: cannot write the log '",
			       rt_live.last_log, "': error ",
			       rt_utoa((uint64_t)-ret, err), "\n" };

	_Static_assert(sizeof(parts) / sizeof(parts[0]) <= RT_SAY_MAX,
		       "our line in one write");
	if (ret)
		rt_say(fail, sizeof(fail) / sizeof(fail[0]));
	else if (rt_live.opts.verbosity) {
		rt_say(llvm, sizeof(llvm) / sizeof(llvm[0]));
		rt_say(parts, sizeof(parts) / sizeof(parts[0]));
	}
}

enum XRayLogFlushStatus rt_trace_flush(void)
{
	struct rt_drain d = { .trace = &rt_live };
	struct rt_totals tot;
	int ret, stream_err;

	if (rt_live.status != XRAY_LOG_FINALIZED ||
	    rt_live.flush_status == XRAY_LOG_FLUSHING)
		return XRAY_LOG_NOT_FLUSHING;
	rt_live.flush_status = XRAY_LOG_FLUSHING;
	if (rt_live.opts.grace_period_ms) {
		struct timespec ts = {
			(time_t)(rt_live.opts.grace_period_ms / 1000),
			(long)(rt_live.opts.grace_period_ms % 1000) * 1000000
		};

		nanosleep(&ts, NULL);
	}
	if (rt_live.opts.no_file_flush) {
		rt_live.flush_status = XRAY_LOG_FLUSHED;
		rt_live.status = XRAY_LOG_UNINITIALIZED;
		return XRAY_LOG_FLUSHED;
	}
	/* (before the drain takes the lock the writer needs) */
	stream_err = rt_stream_stop();
	rt_live.sink->drain_begin(&d, true);
	ret = flush_to_log(&d, &tot);
	if (!ret)
		ret = stream_err;
	rt_live.sink->drain_end(&d);
	report(ret, &tot);
	rt_live.flush_status = ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
	rt_live.status = XRAY_LOG_UNINITIALIZED; /* LLVM: it can start again */
	return ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
}

void rt_trace_emergency(void)
{
	struct rt_drain d = { .trace = &rt_live };
	struct rt_totals tot;
	int ret;

	if (__atomic_exchange_n(&emergency_done, 1, __ATOMIC_ACQ_REL))
		return;
	/* (a flush this signal interrupted has left its file, partial) */
	if (rt_live.status == XRAY_LOG_UNINITIALIZED || !rt_live.generation ||
	    rt_live.flush_status != XRAY_LOG_NOT_FLUSHING ||
	    rt_live.opts.no_file_flush)
		return;
	/* what the writer is writing is not the drain's to write again */
	rt_stream_halt();
	rt_trace_quiesce();
	rt_live.status = XRAY_LOG_FINALIZED;
	/* the lock may be held by the thread that crashed: go on without */
	rt_live.sink->drain_begin(&d, false);
	ret = flush_to_log(&d, &tot);
	rt_live.sink->drain_end(&d);
	report(ret, &tot);
	rt_live.flush_status = XRAY_LOG_FLUSHED;
}

/*
 * Signals.  Fatal ones and SIGINT/SIGTERM/SIGHUP/SIGQUIT write the log and
 * then take their previous action, if that was the default; a program
 * that installs its own handlers keeps them (and its exit flushes).
 */
static const int flush_signals[] = { SIGSEGV, SIGBUS,  SIGILL, SIGFPE, SIGABRT,
				     SIGINT,  SIGTERM, SIGHUP, SIGQUIT };
#define NSIG_FLUSH (sizeof(flush_signals) / sizeof(flush_signals[0]))
static struct sigaction old_actions[NSIG_FLUSH];

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)uc;
	rt_trace_emergency();
	for (size_t i = 0; i < NSIG_FLUSH; i++)
		if (flush_signals[i] == sig)
			sigaction(sig, &old_actions[i], NULL);
	errno = saved;
	/* a fault re-executes the faulting instruction and meets the
	 * default action there; anything else is sent again */
	if (si->si_code <= 0 ||
	    (sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE))
		raise(sig);
}

void rt_trace_release(void)
{
	if (rt_live.status == XRAY_LOG_UNINITIALIZED && rt_live.sink &&
	    rt_live.sink->release)
		rt_live.sink->release();
}

static int handlers_installed;

void rt_trace_install_signal_handlers(void)
{
	struct sigaction sa;

	if (__atomic_exchange_n(&handlers_installed, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSIG_FLUSH; i++) {
		if (sigaction(flush_signals[i], NULL, &old_actions[i]) ||
		    old_actions[i].sa_handler != SIG_DFL)
			continue;
		sigaction(flush_signals[i], &sa, NULL);
	}
}

void rt_trace_remove_signal_handlers(void)
{
	if (!__atomic_exchange_n(&handlers_installed, 0, __ATOMIC_ACQ_REL))
		return;
	for (size_t i = 0; i < NSIG_FLUSH; i++) {
		struct sigaction now;

		/* a handler the program has set since is the program's */
		if (!sigaction(flush_signals[i], NULL, &now) &&
		    (now.sa_flags & SA_SIGINFO) &&
		    now.sa_sigaction == on_signal)
			sigaction(flush_signals[i], &old_actions[i], NULL);
	}
}

void rt_trace_totals(struct rt_totals *tot)
{
	struct rt_drain d = { .trace = &rt_live };
	const struct rt_sink *sink = rt_live.sink;
	bool copy;

	if (!sink) {
		*tot = (struct rt_totals){ 0 };
		return;
	}
	/* a running trace is counted on a snapshot's copy, so that no thread
	 * waits for the whole walk to get a buffer */
	copy = rt_live.status == XRAY_LOG_INITIALIZED && sink->drain_locks &&
	       sink->snapshot_begin && !sink->snapshot_begin(&d);
	if (!copy)
		sink->drain_begin(&d, true);
	rt_log_count(&rt_live, &d, tot);
	sink->drain_end(&d);
	if (copy && sink->snapshot_end)
		sink->snapshot_end();
}

int rt_trace_snapshot_ready(void)
{
	if ((rt_live.status != XRAY_LOG_INITIALIZED &&
	     rt_live.status != XRAY_LOG_FINALIZED) ||
	    rt_live.flush_status != XRAY_LOG_NOT_FLUSHING)
		return -ENODATA;
	if (!rt_live.sink || !rt_live.sink->snapshot_begin)
		return -ENOTSUP;
	return 0;
}

int rt_trace_snapshot(int fd, const char *why, struct rt_totals *tot)
{
	const struct rt_log_extra x = { .objects = rt_objects_text(),
					.snapshot = why };
	struct rt_drain d = { .trace = &rt_live };
	const struct rt_sink *sink = rt_live.sink;
	int ret = rt_trace_snapshot_ready();

	if (ret)
		return ret;
	ret = sink->snapshot_begin(&d);
	if (ret)
		return ret;
	ret = rt_log_write(&rt_live, fd, &d, &x, tot);
	sink->drain_end(&d);
	if (sink->snapshot_end)
		sink->snapshot_end();
	return ret;
}

void rt_trace_fork_prepare(void)
{
	rt_live.sink->fork_prepare();
}

void rt_trace_fork_parent(void)
{
	rt_live.sink->fork_parent();
}

void rt_trace_fork_child(void)
{
	rt_live.pid = getpid();
	rt_self.tid = 0; /* (its rseq registration is inherited) */
	rt_self.setup_done = 0;
	rt_live.sink->fork_child(++rt_live.generation, rt_live.pid);
	rt_stream_fork_child();
	rt_live.opts.stream = false;
	rt_live.dropped = 0;
	if (rt_live.opts.fork == RT_FORK_OFF &&
	    rt_live.status == XRAY_LOG_INITIALIZED)
		rt_live.status = XRAY_LOG_UNINITIALIZED;
	rt_update_fast();
}
