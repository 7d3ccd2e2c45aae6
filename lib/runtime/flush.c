// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writing the log: at exit, on request, and from fatal signal handlers.
 *
 * One code path serves all three, so it is async-signal-safe: no stdio, no
 * allocation, only open(2) and write(2) and our own formatting.  The log
 * is the 32-byte header, every thread buffer in the order the threads
 * took them, then one buffer of our own holding an "xrayfdr-info" custom
 * event (TSC facts and their source, event counts, the instrumented
 * objects; Documentation/runtime.rst).
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/frame.h"
#include "../fdr/records.h"
#include "../log.h"
#include "controller.h"
#include "flush.h"
#include "objects.h"
#include "state.h"
#include "stream.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define INFO_MAX 16384

static char info_buf[INFO_MAX + 8 * MD]; /* the info buffer's records */
static int emergency_done;

/* A bounded string builder that never fails loudly. */
struct text {
	char *p;
	size_t n, cap;
};

static void add(struct text *t, const char *s)
{
	while (*s && t->n + 1 < t->cap)
		t->p[t->n++] = *s++;
	t->p[t->n] = '\0';
}

static void add_u64(struct text *t, uint64_t v)
{
	char num[24];

	add(t, rt_utoa(v, num));
}

int rt_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!k)
			return -EIO;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int rt_open_log(const struct rt_options *o, char *path, size_t size)
{
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct text t = { path, 0, size };
	pid_t pid = getpid();
	uint64_t seed = arch_tsc() ^ ((uint64_t)pid << 32);
	char num[24];

	path[0] = '\0';
	if (o->output[0]) {
		add(&t, o->output);
		if (o->output_pid && o->output_pid != (uint64_t)pid) {
			add(&t, ".");
			add(&t, rt_utoa((uint64_t)pid, num));
		}
		return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
	}
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		t.n = 0;
		add(&t, o->logfile_base);
		add(&t, program_invocation_short_name);
		add(&t, ".");
		for (int i = 0; i < 6; i++) {
			char c[2] = { 0, 0 };

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			c[0] = digits[seed % (sizeof(digits) - 1)];
			add(&t, c);
		}
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/* The log's header: our version, the TSC facts, the buffer size. */
static void encode_header(uint8_t *hdr)
{
	xrayfdr_encode_file_header(
		hdr, &(struct xrayfdr_file_header){
			     .version = (uint16_t)rt.opts.version,
			     .type = XRAYFDR_FILE_FDR,
			     .constant_tsc = rt.tsc.constant_tsc,
			     .nonstop_tsc = rt.tsc.nonstop_tsc,
			     .cycle_frequency = rt.tsc.hz,
			     .buffer_size = rt.opts.buffer_size });
}

static void put_md(uint8_t **p, const struct xrayfdr_metadata *md)
{
	xrayfdr_encode_metadata(*p, false, rt.opts.version, md);
	*p += MD;
}

/* Our info buffer's records (without its frame); returns its size. */
static size_t build_info(const struct rt_totals *tot, const char *objects)
{
	char text[INFO_MAX];
	struct text t = { text, 0, sizeof(text) };
	uint8_t *p = (uint8_t *)info_buf;
	struct timespec ts;
	uint64_t tsc = arch_tsc();
	/* the preamble, NewCPUId and the event's marker go first */
	size_t room = rt.capacity - fdr_preamble_size(rt.opts.version) - 2 * MD;

	add(&t, "xrayfdr-info 1\ntsc_source=");
	add(&t, rt_tsc_source_name(rt.tsc.source));
	add(&t, "\ntsc_hz=");
	add_u64(&t, rt.tsc.hz);
	add(&t, "\nconstant_tsc=");
	add_u64(&t, rt.tsc.constant_tsc);
	add(&t, "\nnonstop_tsc=");
	add_u64(&t, rt.tsc.nonstop_tsc);
	add(&t, "\ntsc_reliable=");
	add_u64(&t, rt.tsc.reliable);
	add(&t, "\nevents=");
	add_u64(&t, tot->events);
	add(&t, "\noverwritten=");
	add_u64(&t, tot->overwritten);
	add(&t, "\ndropped=");
	add_u64(&t, __atomic_load_n(&rt.dropped, __ATOMIC_RELAXED));
	add(&t, "\nbuffers=");
	add_u64(&t, tot->buffers);
	add(&t, "\nrecycled=");
	add_u64(&t, tot->recycled);
	add(&t, "\nkernel_lost=");
	add_u64(&t, tot->kernel_lost);
	add(&t, "\ndamaged=");
	add_u64(&t, tot->damaged);
	add(&t, "\nmode=");
	add(&t, rt.sink->name);
	if (rt.sink->memory) {
		add(&t, "\nrings=");
		add(&t, rt.sink->memory());
	}
	add(&t, "\n");
	add(&t, objects);
	if (t.n > room)
		t.n = room;

	clock_gettime(CLOCK_REALTIME, &ts);
	p += fdr_put_preamble(p, false, rt.opts.version,
			      (int32_t)syscall(SYS_gettid), (uint64_t)ts.tv_sec,
			      (uint32_t)(ts.tv_nsec / 1000), (int32_t)rt.pid);
	put_md(&p, &(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
					       .tsc = tsc });
	put_md(&p, &(struct xrayfdr_metadata){
			   .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
			   .event_size = (int32_t)t.n,
			   .tsc = tsc });
	memcpy(p, text, t.n);
	return (size_t)(p - (uint8_t *)info_buf) + t.n;
}

static int write_to(void *ctx, const void *data, size_t len)
{
	return rt_write_all(*(int *)ctx, data, len);
}

/* One buffer of @used bytes at @data, framed for the log's version. */
static int write_buffer(int fd, const void *data, size_t used)
{
	return fdr_frame_write(false, rt.opts.version, rt.opts.buffer_size,
			       data, used, write_to, &fd);
}

/* The sink's counters into @tot, the rest zero. */
static void sink_totals(struct rt_totals *tot)
{
	struct rt_sink_counters ctr = { 0 };

	rt.sink->counters(&ctr);
	*tot = (struct rt_totals){ .overwritten = ctr.overwritten,
				   .recycled = ctr.recycled,
				   .kernel_lost = ctr.kernel_lost,
				   .damaged = ctr.damaged };
}

void rt_drain_totals(struct rt_drain *d, struct rt_totals *tot)
{
	struct rt_chunk c;

	sink_totals(tot);
	d->next = 0;
	d->offset = 0;
	while (rt.sink->drain_next(d, &c)) {
		tot->events += c.events;
		tot->buffers++;
	}
	d->next = 0;
	d->offset = 0;
}

/* Write everything to the new log @fd, from @d; the sink's lock keeps
 * writers out of its states (or, in a signal handler, cannot).  @objects:
 * the info event's object lines. */
static int write_log(int fd, struct rt_drain *d, struct rt_totals *tot,
		     const char *objects, bool streamed)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	struct rt_chunk c;
	size_t info;
	int ret = 0;

	/* counted as they are written: the info event comes last */
	sink_totals(tot);
	if (streamed) {
		/* the header and what the writer appended are there */
		uint64_t events, buffers;

		rt_stream_totals(&events, &buffers);
		tot->events += events;
		tot->buffers += buffers;
	} else {
		encode_header(hdr);
		ret = rt_write_all(fd, hdr, sizeof(hdr));
	}
	while (!ret && rt.sink->drain_next(d, &c)) {
		ret = write_buffer(fd, c.data, c.used);
		tot->events += c.events;
		tot->buffers++;
	}
	/* last: it is the latest, and llvm-xray account wants the first
	 * record to be the earliest */
	info = build_info(tot, objects);
	if (!ret)
		ret = write_buffer(fd, info_buf, info);
	if (streamed)
		rt_stream_close();
	else if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* Open the log and write it, or append the rest to the streamed one. */
static int flush_to_log(struct rt_drain *d, struct rt_totals *tot)
{
	int fd = rt_stream_fd();

	if (fd >= 0)
		return write_log(fd, d, tot, rt_objects_text(), true);
	fd = rt_open_log(&rt.opts, rt.last_log, sizeof(rt.last_log));
	if (fd < 0) {
		rt_drain_totals(d, tot);
		return -errno;
	}
	return write_log(fd, d, tot, rt_objects_text(), false);
}

int rt_log_open_stream(char *err, size_t errlen)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	int fd = rt_open_log(&rt.opts, rt.last_log, sizeof(rt.last_log));
	int ret;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the log '%s': %s",
			 rt.last_log, strerror(errno));
		return ret;
	}
	/* the writer's appends and an emergency flush's stay whole */
	encode_header(hdr);
	ret = fcntl(fd, F_SETFL, O_APPEND) ? -errno :
					     rt_write_all(fd, hdr, sizeof(hdr));
	if (ret) {
		snprintf(err, errlen, "cannot write the log '%s': %s",
			 rt.last_log, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int rt_log_chunk(int fd, const struct rt_chunk *c)
{
	return write_buffer(fd, c->data, c->used);
}

int rt_write_log_file(const char *path, const char *objects,
		      struct rt_totals *tot)
{
	struct text name = { rt.last_log, 0, sizeof(rt.last_log) };
	struct rt_drain d;
	int fd, ret;

	add(&name, path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rt.sink->drain_begin(&d, true);
	ret = write_log(fd, &d, tot, objects, false);
	rt.sink->drain_end(&d);
	return ret;
}

static void report(int ret, const struct rt_totals *tot)
{
	char ev[24], ow[24], dr[24], err[24], pid[24];
	const char *parts[] = {
		/* LLVM's line, which scripts look for, then ours */
		"==",
		rt_utoa((uint64_t)rt.pid, pid),
		"==XRay: Log file in '",
		rt.last_log,
		"'\n",
		"xrayfdr: wrote ",
		rt_utoa(tot->events, ev),
		" events to '",
		rt.last_log,
		"' (",
		rt_utoa(tot->overwritten, ow),
		" overwritten, ",
		rt_utoa(__atomic_load_n(&rt.dropped, __ATOMIC_RELAXED), dr),
		" dropped)\n",
	};
	const char *fail[] = { "xrayfdr: cannot write the log '", rt.last_log,
			       "': error ", rt_utoa((uint64_t)-ret, err),
			       "\n" };

	if (ret)
		rt_say(fail, sizeof(fail) / sizeof(fail[0]));
	else if (rt.opts.verbosity)
		rt_say(parts, sizeof(parts) / sizeof(parts[0]));
}

enum XRayLogFlushStatus rt_flush(void)
{
	struct rt_drain d;
	struct rt_totals tot;
	int ret, stream_err;

	if (rt.status != XRAY_LOG_FINALIZED ||
	    rt.flush_status == XRAY_LOG_FLUSHING)
		return XRAY_LOG_NOT_FLUSHING;
	rt.flush_status = XRAY_LOG_FLUSHING;
	if (rt.opts.grace_period_ms) {
		struct timespec ts = { (time_t)(rt.opts.grace_period_ms / 1000),
				       (long)(rt.opts.grace_period_ms % 1000) *
					       1000000 };

		nanosleep(&ts, NULL);
	}
	if (rt.opts.no_file_flush) {
		rt.flush_status = XRAY_LOG_FLUSHED;
		rt.status = XRAY_LOG_UNINITIALIZED;
		return XRAY_LOG_FLUSHED;
	}
	/* (before the drain takes the lock the writer needs) */
	stream_err = rt_stream_stop();
	rt.sink->drain_begin(&d, true);
	ret = flush_to_log(&d, &tot);
	if (!ret)
		ret = stream_err;
	rt.sink->drain_end(&d);
	report(ret, &tot);
	rt.flush_status = ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
	rt.status = XRAY_LOG_UNINITIALIZED; /* LLVM: it can start again */
	return ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
}

void rt_flush_emergency(void)
{
	struct rt_drain d;
	struct rt_totals tot;
	int ret;

	if (__atomic_exchange_n(&emergency_done, 1, __ATOMIC_ACQ_REL))
		return;
	/* (a flush this signal interrupted has left its file, partial) */
	if (rt.status == XRAY_LOG_UNINITIALIZED || !rt.generation ||
	    rt.flush_status != XRAY_LOG_NOT_FLUSHING || rt.opts.no_file_flush)
		return;
	/* what the writer is writing is not the drain's to write again */
	rt_stream_halt();
	rt_fdr_quiesce();
	rt.status = XRAY_LOG_FINALIZED;
	/* the lock may be held by the thread that crashed: go on without */
	rt.sink->drain_begin(&d, false);
	ret = flush_to_log(&d, &tot);
	rt.sink->drain_end(&d);
	report(ret, &tot);
	rt.flush_status = XRAY_LOG_FLUSHED;
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
	rt_flush_emergency();
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

void rt_install_signal_handlers(void)
{
	static int installed;
	struct sigaction sa;

	if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
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

/*
 * __xray_log_process_buffers(): the header, then each buffer with its
 * BufferExtents record in front, from a copy we own.
 */
struct XRayBuffer rt_fdr_iterator(struct XRayBuffer prev)
{
	static uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	static uint8_t *copy;
	static size_t copy_size;
	static struct rt_drain d;
	struct fdr_frame f;
	struct rt_chunk c;

	if (rt.status != XRAY_LOG_FINALIZED || rt.opts.version < 2)
		return (struct XRayBuffer){ NULL, 0 };
	if (!prev.Data) {
		encode_header(hdr);
		rt.sink->drain_begin(&d, true);
		rt.sink->drain_end(&d);
		return (struct XRayBuffer){ hdr, sizeof(hdr) };
	}
	if (!rt.sink->drain_next(&d, &c)) {
		free(copy);
		copy = NULL;
		copy_size = 0;
		return (struct XRayBuffer){ NULL, 0 };
	}
	if (copy_size < c.used + MD) {
		free(copy);
		copy = malloc(rt.capacity + MD);
		copy_size = copy ? rt.capacity + MD : 0;
		if (!copy)
			return (struct XRayBuffer){ NULL, 0 };
	}
	fdr_frame_buffer(&f, false, rt.opts.version, c.used,
			 rt.opts.buffer_size);
	memcpy(copy, f.head, f.head_len);
	memcpy(copy + f.head_len, c.data, c.used);
	return (struct XRayBuffer){ copy, f.head_len + c.used };
}
