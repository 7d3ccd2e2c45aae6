// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The trigger thread: what fired becomes a snapshot file (trigger.h). */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <xrayfdr/xray.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "../util/outfile.h"
#include "logfile.h"
#include "state.h"
#include "trace.h"
#include "trigger.h"

static pid_t thread_pid; /* the process the thread runs in */
static uint64_t taken; /* snapshots written */
static uint64_t last_ns; /* CLOCK_MONOTONIC of the last one */
static bool said_limit;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The trigger's text as a file name part: letters, digits, '-' and '_'. */
static void label(const struct rt_trig_spec *sp, char *out, size_t size)
{
	const char *src = sp->kind == RT_TRIG_DURATION ? sp->pattern : sp->text;
	size_t n = 0;

	for (; *src && n + 1 < size && n < 40; src++) {
		char c = *src;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '-' || c == '_';

		out[n++] = ok ? c : (c == '=' ? '-' : '_');
	}
	out[n] = '\0';
}

/*
 * The snapshot's file: @path, written as @tmp (a hidden name in the same
 * directory) and renamed when whole, so that whoever watches the
 * directory never reads half a log.
 */
static int open_file(const struct rt_trig_spec *sp, uint64_t n, char *path,
		     char *tmp, size_t size)
{
	const char *dir =
		rt_live.opts.snapshot_dir[0] ? rt_live.opts.snapshot_dir : ".";
	char what[48], when[32], name[160];
	time_t now = time(NULL);
	struct tm tm;

	label(sp, what, sizeof(what));
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	snprintf(name, sizeof(name), "%s.%ld.%" PRIu64 ".%s.%s.xray",
		 program_invocation_short_name, (long)getpid(), n, what, when);
	if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size ||
	    (size_t)snprintf(tmp, size, "%s/.%s.part", dir, name) >= size)
		return -ENAMETOOLONG;
	return out_create(tmp, 0644, 0);
}

/* Why a snapshot was taken, for its info event (snapshot=...). */
static void describe(const struct rt_trig_event *ev,
		     const struct rt_trig_spec *sp, uint64_t n, char *out,
		     size_t size)
{
	uint64_t hz = rt_live.tsc.hz ? rt_live.tsc.hz : 1000000000u;
	uint64_t ns =
		(uint64_t)((unsigned __int128)ev->cycles * 1000000000u / hz);

	if (ev->kind == RT_TRIG_DURATION)
		snprintf(out, size,
			 "trigger\ntrigger=%s\ntrigger_number=%" PRIu64
			 "\ntrigger_tid=%" PRIu32 "\ntrigger_function=%" PRId32
			 "\ntrigger_duration_ns=%" PRIu64
			 "\ntrigger_tsc=%" PRIu64,
			 sp->text, n, ev->tid, ev->function, ns, ev->end_tsc);
	else
		snprintf(out, size,
			 "trigger\ntrigger=%s\ntrigger_number=%" PRIu64
			 "\ntrigger_tsc=%" PRIu64,
			 sp->text, n, ev->end_tsc);
}

/* Within max_snapshots= and snapshot_interval=? */
static bool allowed(void)
{
	uint64_t max = rt_live.opts.max_snapshots;
	uint64_t gap = rt_live.opts.snapshot_interval_ns;

	if (max && taken >= max) {
		if (!said_limit && rt_live.opts.verbosity)
			pr_info("max_snapshots=%" PRIu64
				" reached: later triggers take no snapshot\n",
				max);
		said_limit = true;
		return false;
	}
	return !gap || !taken || monotonic_ns() - last_ns >= gap;
}

static void handle(const struct rt_trig_event *ev)
{
	const struct rt_trig_spec *sp = rt_trig_spec(ev->trigger);
	char path[PATH_MAX], tmp[PATH_MAX], why[512];
	struct rt_totals tot;
	int fd, ret;

	if (!sp || !allowed()) {
		rt_trigger_suppress();
		rt_trigger_done();
		return;
	}
	if (rt_live.opts.post_ns)
		sleep_ns(rt_live.opts.post_ns);
	fd = open_file(sp, taken + 1, path, tmp, sizeof(path));
	if (fd < 0) {
		rt_trigger_done();
		pr_warn("trigger %s: cannot create a snapshot file %s: %s\n",
			sp->text, tmp, strerror(-fd));
		return;
	}
	describe(ev, sp, taken + 1, why, sizeof(why));
	rt_api_lock();
	ret = rt_trace_snapshot(fd, why, &tot);
	rt_api_unlock();
	if (close(fd) && !ret)
		ret = -errno;
	/* the next trigger may fire before the file has its name: one who
	 * waits for the file then finds the trigger free */
	if (!ret)
		taken++;
	last_ns = monotonic_ns();
	rt_trigger_done();
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		if (ret != -ENODATA) /* (the trace ended meanwhile) */
			pr_warn("trigger %s: snapshot failed: %s\n", sp->text,
				strerror(-ret));
		return;
	}
	if (rt_live.opts.verbosity)
		pr_info("snapshot %" PRIu64 " (trigger %s) in %s\n", taken,
			sp->text, path);
}

static bool stopping; /* rt_trigger_stop(): the thread ends */

static void *trigger_thread(void *arg)
{
	int efd = (int)(intptr_t)arg;

	rt_internal_thread_begin();
	for (;;) {
		struct rt_trig_event ev;
		uint64_t n;

		if (read(efd, &n, sizeof(n)) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
			break;
		if (rt_trigger_take(&ev))
			handle(&ev);
	}
	if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		close(efd);
		__atomic_store_n(&stopping, false, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void on_signal(int sig)
{
	for (size_t i = 0; i < rt_trig_count(); i++) {
		const struct rt_trig_spec *sp = rt_trig_spec(i);

		if (sp->kind == RT_TRIG_SIGNAL && sp->signal == sig) {
			rt_trigger_fire(&(struct rt_trig_event){
				.kind = RT_TRIG_SIGNAL,
				.trigger = (uint32_t)i,
				.end_tsc = arch_tsc(),
			});
			return;
		}
	}
}

/* what the signal triggers replaced, by signal number */
static struct sigaction old_actions[_NSIG];
static bool replaced[_NSIG];

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < rt_trig_count(); i++) {
		const struct rt_trig_spec *sp = rt_trig_spec(i);

		if (sp->kind != RT_TRIG_SIGNAL || sp->signal <= 0 ||
		    sp->signal >= _NSIG || replaced[sp->signal])
			continue;
		if (sigaction(sp->signal, &sa, &old_actions[sp->signal]))
			pr_warn("trigger %s: %s\n", sp->text, strerror(errno));
		else
			replaced[sp->signal] = true;
	}
}

static int start_thread(void)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;
	int efd, ret;

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		return -errno;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&thread, &attr, trigger_thread,
			      (void *)(intptr_t)efd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		close(efd);
		return ret;
	}
	__atomic_store_n(&rt_trig_efd, efd, __ATOMIC_RELEASE);
	return 0;
}

void rt_trigger_trace_started(void)
{
	int ret;

	if (!rt_trig_count() || rt_live.status != XRAY_LOG_INITIALIZED ||
	    thread_pid == getpid())
		return;
	rt_trig_arm(rt_live.tsc.hz);
	ret = start_thread();
	if (ret) {
		pr_warn("cannot start the trigger thread: %s; triggers are off\n",
			strerror(-ret));
		return;
	}
	thread_pid = getpid();
	install_signals();
}

void rt_trigger_fork_child(void)
{
	/* the parent's thread is not in the child; its eventfd is */
	int efd = __atomic_exchange_n(&rt_trig_efd, -1, __ATOMIC_ACQ_REL);

	if (efd >= 0)
		close(efd);
	rt_trigger_done();
	taken = 0;
	said_limit = false;
}

void rt_trigger_stop(void)
{
	int efd = __atomic_exchange_n(&rt_trig_efd, -1, __ATOMIC_ACQ_REL);
	uint64_t one = 1;

	for (int sig = 1; sig < _NSIG; sig++) {
		struct sigaction now;

		if (!replaced[sig])
			continue;
		replaced[sig] = false;
		/* a handler the program has set since is the program's */
		if (!sigaction(sig, NULL, &now) &&
		    !(now.sa_flags & SA_SIGINFO) && now.sa_handler == on_signal)
			sigaction(sig, &old_actions[sig], NULL);
	}
	if (efd < 0 || thread_pid != getpid())
		return;
	/* the thread closes the eventfd as it ends */
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	if (write(efd, &one, sizeof(one)) < 0)
		pr_warn("cannot stop the trigger thread: %s\n",
			strerror(errno));
	thread_pid = 0;
}
