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
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fdr/records.h"
#include "../log.h"
#include "runtime.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define INFO_MAX 16384

static char info_buf[INFO_MAX + 8 * MD]; /* the info buffer's records */
static const uint8_t zeros[4096];
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

static int write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t k = write(fd, p, len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static int write_zeros(int fd, size_t len)
{
	int ret = 0;

	while (len && !ret) {
		size_t k = len < sizeof(zeros) ? len : sizeof(zeros);

		ret = write_all(fd, zeros, k);
		len -= k;
	}
	return ret;
}

/* Open the log: the exact output path (suffixed with the pid in a
 * process it was not meant for), or <base><program>.<6 random>. */
static int open_log(char *path, size_t size)
{
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	struct text t = { path, 0, size };
	uint64_t seed = arch_tsc() ^ ((uint64_t)rt.pid << 32);
	char num[24];

	path[0] = '\0';
	if (rt.opts.output[0]) {
		add(&t, rt.opts.output);
		if (rt.opts.output_pid &&
		    rt.opts.output_pid != (uint64_t)rt.pid) {
			add(&t, ".");
			add(&t, rt_utoa((uint64_t)rt.pid, num));
		}
		return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
	}
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		t.n = 0;
		add(&t, rt.opts.logfile_base);
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

struct totals {
	uint64_t events, buffers;
};

static void put_md(uint8_t **p, const struct xrayfdr_metadata *md)
{
	xrayfdr_encode_metadata(*p, false, rt.opts.version, md);
	*p += MD;
}

/* Our info buffer's records (without BufferExtents); returns its size. */
static size_t build_info(const struct totals *tot)
{
	char text[INFO_MAX];
	struct text t = { text, 0, sizeof(text) };
	uint8_t *p = (uint8_t *)info_buf;
	struct timespec ts;
	uint64_t tsc = arch_tsc();
	size_t room = rt.q.capacity - 4 * MD - MD;

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
	add_u64(&t, rt.q.overwritten);
	add(&t, "\ndropped=");
	add_u64(&t, __atomic_load_n(&rt.dropped, __ATOMIC_RELAXED));
	add(&t, "\nbuffers=");
	add_u64(&t, tot->buffers);
	add(&t, "\nrecycled=");
	add_u64(&t, rt.q.recycled);
	add(&t, "\n");
	add(&t, rt_objects_text());
	if (t.n > room)
		t.n = room;

	clock_gettime(CLOCK_REALTIME, &ts);
	put_md(&p, &(struct xrayfdr_metadata){
			   .kind = XRAYFDR_MD_NEW_BUFFER,
			   .tid = (int32_t)syscall(SYS_gettid) });
	put_md(&p, &(struct xrayfdr_metadata){
			   .kind = XRAYFDR_MD_WALLTIME_MARKER,
			   .seconds = (uint64_t)ts.tv_sec,
			   .micros = (uint32_t)(ts.tv_nsec / 1000) });
	if (rt.opts.version >= 3)
		put_md(&p,
		       &(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_PID,
						   .pid = (int32_t)rt.pid });
	put_md(&p, &(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
					       .tsc = tsc });
	put_md(&p, &(struct xrayfdr_metadata){
			   .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
			   .event_size = (int32_t)t.n,
			   .tsc = tsc });
	memcpy(p, text, t.n);
	return (size_t)(p - (uint8_t *)info_buf) + t.n;
}

/* One buffer of @used bytes at @data, framed for the log's version. */
static int write_buffer(int fd, const void *data, size_t used)
{
	uint8_t md[MD];
	size_t pad;
	int ret;

	if (rt.opts.version >= 2) {
		xrayfdr_encode_metadata(
			md, false, rt.opts.version,
			&(struct xrayfdr_metadata){
				.kind = XRAYFDR_MD_BUFFER_EXTENTS,
				.extents = used });
		ret = write_all(fd, md, sizeof(md));
		return ret ? ret : write_all(fd, data, used);
	}
	/* version 1: EndOfBuffer, then padding up to buffer_size that
	 * llvm-xray can parse (a record covering it when it is not a whole
	 * number of function records; the reserve makes it at least 16) */
	ret = write_all(fd, data, used);
	xrayfdr_encode_metadata(
		md, false, 1,
		&(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_END_OF_BUFFER });
	if (!ret)
		ret = write_all(fd, md, sizeof(md));
	pad = rt.opts.buffer_size - used - MD;
	if (!ret && pad % XRAYFDR_FUNCTION_RECORD_SIZE) {
		xrayfdr_encode_metadata(
			md, false, 1,
			&(struct xrayfdr_metadata){
				.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
				.event_size = (int32_t)(pad - MD) });
		ret = write_all(fd, md, sizeof(md));
		pad -= MD;
	}
	return ret ? ret : write_zeros(fd, pad);
}

/* Write everything to a new log; the caller keeps writers out of the
 * queue's states (or, in a signal handler, cannot). */
static int write_log(struct totals *tot)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	size_t n = rt_bufq_sort(&rt.q), info;
	int fd, ret;

	*tot = (struct totals){ 0 };
	for (size_t i = 0; i < n; i++) {
		const struct rt_buf *b = &rt.q.bufs[rt.q.order[i]];
		size_t used = rt_bufq_used(&rt.q, b);

		tot->events += rt_count_events(b->data, used);
		tot->buffers += used != 0;
	}
	fd = open_log(rt.last_log, sizeof(rt.last_log));
	if (fd < 0)
		return -errno;
	encode_header(hdr);
	ret = write_all(fd, hdr, sizeof(hdr));
	for (size_t i = 0; i < n && !ret; i++) {
		const struct rt_buf *b = &rt.q.bufs[rt.q.order[i]];
		size_t used = rt_bufq_used(&rt.q, b);

		if (used)
			ret = write_buffer(fd, b->data, used);
	}
	/* last: it is the latest, and llvm-xray account wants the first
	 * record to be the earliest */
	info = build_info(tot);
	if (!ret)
		ret = write_buffer(fd, info_buf, info);
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

static void report(int ret, const struct totals *tot)
{
	char ev[24], ow[24], dr[24], err[24];
	const char *parts[] = {
		"xrayfdr: wrote ",
		rt_utoa(tot->events, ev),
		" events to '",
		rt.last_log,
		"' (",
		rt_utoa(rt.q.overwritten, ow),
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
	struct totals tot;
	int ret;

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
	rt_bufq_lock(&rt.q);
	ret = write_log(&tot);
	rt_bufq_unlock(&rt.q);
	report(ret, &tot);
	rt.flush_status = ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
	rt.status = XRAY_LOG_UNINITIALIZED; /* LLVM: it can start again */
	return ret ? XRAY_LOG_NOT_FLUSHING : XRAY_LOG_FLUSHED;
}

void rt_flush_emergency(void)
{
	struct totals tot;
	bool locked;
	int ret;

	if (__atomic_exchange_n(&emergency_done, 1, __ATOMIC_ACQ_REL))
		return;
	/* (a flush this signal interrupted has left its file, partial) */
	if (rt.status == XRAY_LOG_UNINITIALIZED || !rt.q.mem ||
	    rt.flush_status != XRAY_LOG_NOT_FLUSHING || rt.opts.no_file_flush)
		return;
	rt_fdr_quiesce();
	rt.status = XRAY_LOG_FINALIZED;
	/* the lock may be held by the thread that crashed: go on without */
	locked = rt_bufq_trylock(&rt.q);
	ret = write_log(&tot);
	if (locked)
		rt_bufq_unlock(&rt.q);
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
	static size_t copy_size, next, count;
	const struct rt_buf *b;
	size_t used;

	if (rt.status != XRAY_LOG_FINALIZED || rt.opts.version < 2)
		return (struct XRayBuffer){ NULL, 0 };
	if (!prev.Data) {
		encode_header(hdr);
		rt_bufq_lock(&rt.q);
		count = rt_bufq_sort(&rt.q);
		rt_bufq_unlock(&rt.q);
		next = 0;
		return (struct XRayBuffer){ hdr, sizeof(hdr) };
	}
	for (; next < count; next++) {
		b = &rt.q.bufs[rt.q.order[next]];
		used = rt_bufq_used(&rt.q, b);
		if (used)
			break;
	}
	if (next >= count) {
		free(copy);
		copy = NULL;
		copy_size = 0;
		return (struct XRayBuffer){ NULL, 0 };
	}
	if (copy_size < used + MD) {
		free(copy);
		copy = malloc(rt.q.capacity + MD);
		copy_size = copy ? rt.q.capacity + MD : 0;
		if (!copy)
			return (struct XRayBuffer){ NULL, 0 };
	}
	xrayfdr_encode_metadata(
		copy, false, rt.opts.version,
		&(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_BUFFER_EXTENTS,
					    .extents = used });
	memcpy(copy + MD, b->data, used);
	next++;
	return (struct XRayBuffer){ copy, used + MD };
}
