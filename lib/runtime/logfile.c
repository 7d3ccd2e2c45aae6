// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The log file (see logfile.h).  No stdio, no allocation: only open(2)
 * and write(2) and our own formatting, so that a fatal signal's flush can
 * write through it.  A log is the 32-byte header, the sink's buffers in
 * the order its drain gives them, then one buffer of our own holding an
 * "xrayfdr-info" custom event (TSC facts and their source, event counts,
 * the instrumented objects; Documentation/runtime.rst).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <xrayfdr/runtime.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/frame.h"
#include "../fdr/records.h"
#include "../util/opts.h"
#include "../util/outfile.h"
#include "logfile.h"
#include "state.h"
#include "trigger.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define INFO_MAX 16384

/* The info buffer's records: a log written at exit or from a fatal
 * signal's handler, where nothing may be allocated, writes them here;
 * a snapshot, which may run meanwhile, allocates its own. */
#define INFO_BUF_SIZE (INFO_MAX + 8 * MD)
static char info_buf[INFO_BUF_SIZE];

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
	int fd;

	path[0] = '\0';
	if (o->output[0]) {
		add(&t, o->output);
		if (o->output_pid && o->output_pid != (uint64_t)pid) {
			add(&t, ".");
			add(&t, rt_utoa((uint64_t)pid, num));
		}
		fd = out_create(path, 0644, OUT_REPLACE);
		if (fd < 0) {
			errno = -fd;
			return -1;
		}
		return fd;
	}
	for (int tries = 0; tries < 100; tries++) {
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

void rt_log_header(const struct rt_trace *t,
		   uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE])
{
	xrayfdr_encode_file_header(
		hdr, &(struct xrayfdr_file_header){
			     .version = (uint16_t)t->opts.version,
			     .type = XRAYFDR_FILE_FDR,
			     .constant_tsc = t->tsc.constant_tsc,
			     .nonstop_tsc = t->tsc.nonstop_tsc,
			     .cycle_frequency = t->tsc.hz,
			     .buffer_size = t->opts.buffer_size });
}

static void put_md(uint8_t **p, unsigned int version,
		   const struct xrayfdr_metadata *md)
{
	xrayfdr_encode_metadata(*p, false, version, md);
	*p += MD;
}

/* Our info buffer's records (without its frame) into @buf; returns their
 * size. */
static size_t build_info(const struct rt_trace *tr, const struct rt_drain *d,
			 const struct rt_totals *tot,
			 const struct rt_log_extra *x, char *buf)
{
	char text[INFO_MAX];
	struct text t = { text, 0, sizeof(text) };
	uint8_t *p = (uint8_t *)buf;
	struct timespec ts;
	pid_t tid;
	uint64_t tsc = arch_tsc();
	/* the preamble, NewCPUId and the event's marker go first */
	size_t room =
		tr->capacity - fdr_preamble_size(tr->opts.version) - 2 * MD;

	add(&t, "xrayfdr-info 1\ntsc_source=");
	add(&t, rt_tsc_source_name(tr->tsc.source));
	add(&t, "\ntsc_hz=");
	add_u64(&t, tr->tsc.hz);
	add(&t, "\nconstant_tsc=");
	add_u64(&t, tr->tsc.constant_tsc);
	add(&t, "\nnonstop_tsc=");
	add_u64(&t, tr->tsc.nonstop_tsc);
	add(&t, "\ntsc_reliable=");
	add_u64(&t, tr->tsc.reliable);
	add(&t, "\nevents=");
	add_u64(&t, tot->events);
	add(&t, "\noverwritten=");
	add_u64(&t, tot->overwritten);
	add(&t, "\ndropped=");
	add_u64(&t, tot->dropped);
	add(&t, "\nbuffers=");
	add_u64(&t, tot->buffers);
	add(&t, "\nrecycled=");
	add_u64(&t, tot->recycled);
	add(&t, "\nkernel_lost=");
	add_u64(&t, tot->kernel_lost);
	add(&t, "\ndamaged=");
	add_u64(&t, tot->damaged);
	add(&t, "\nmode=");
	add(&t, tr->sink->name);
	if (tr->sink->memory) {
		add(&t, "\nrings=");
		add(&t, tr->sink->memory(d));
	}
	if (tot->ring_bytes) {
		add(&t, "\nring_bytes=");
		add_u64(&t, tot->ring_bytes);
	}
	if (x->snapshot) {
		add(&t, "\nsnapshot=");
		add(&t, x->snapshot);
		add(&t, "\ncut=");
		add_u64(&t, tot->cut);
	}
	if (rt_trigger_suppressed()) {
		/* triggers that fired while another was handled, or
		 * beyond max_snapshots= or snapshot_interval= */
		add(&t, "\ntrigger_suppressed=");
		add_u64(&t, rt_trigger_suppressed());
	}
	add(&t, "\n");
	add(&t, x->objects);
	if (t.n > room)
		t.n = room;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* the thread that writes, when it is one of the traced process's
	 * own; else (a dump, a snapshot from outside or from the control
	 * channel's thread) its main thread, not a thread of no record */
	tid = tr->pid == getpid() && !x->snapshot ? (pid_t)syscall(SYS_gettid) :
						    tr->pid;
	p += fdr_put_preamble(p, false, tr->opts.version, (int32_t)tid,
			      (uint64_t)ts.tv_sec,
			      (uint32_t)(ts.tv_nsec / 1000), (int32_t)tr->pid);
	put_md(&p, tr->opts.version,
	       &(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
					   .tsc = tsc });
	put_md(&p, tr->opts.version,
	       &(struct xrayfdr_metadata){
		       .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
		       .event_size = (int32_t)t.n,
		       .tsc = tsc });
	memcpy(p, text, t.n);
	return (size_t)(p - (uint8_t *)buf) + t.n;
}

static int write_to(void *ctx, const void *data, size_t len)
{
	return rt_write_all(*(int *)ctx, data, len);
}

/* One buffer of @used bytes at @data, framed for the log's version, with
 * its checksum: computed here, as it is written out, never while
 * recording. */
static int write_buffer(const struct rt_trace *t, int fd, const void *data,
			size_t used)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];

	rt_log_header(t, hdr);
	return fdr_frame_write_sum(false, t->opts.version, t->opts.buffer_size,
				   hdr, data, used, write_to, &fd);
}

int rt_log_chunk(const struct rt_trace *t, int fd, const struct rt_chunk *c)
{
	return write_buffer(t, fd, c->data, c->used);
}

/* The counters of what @d walks into @tot, the rest zero. */
static void sink_totals(const struct rt_trace *t, const struct rt_drain *d,
			struct rt_totals *tot)
{
	struct rt_sink_counters ctr = { 0 };

	t->sink->counters(d, &ctr);
	*tot = (struct rt_totals){
		.overwritten = ctr.overwritten,
		.recycled = ctr.recycled,
		.kernel_lost = ctr.kernel_lost,
		.damaged = ctr.damaged,
		.cut = ctr.cut,
		.ring_bytes = ctr.ring_bytes,
		.dropped = __atomic_load_n(&t->dropped, __ATOMIC_RELAXED) +
			   ctr.dropped
	};
}

void rt_log_count(const struct rt_trace *t, struct rt_drain *d,
		  struct rt_totals *tot)
{
	struct rt_chunk c;
	uint64_t events = 0, buffers = 0;

	d->next = 0;
	d->offset = 0;
	while (t->sink->drain_next(d, &c)) {
		events += c.events;
		buffers++;
	}
	d->next = 0;
	d->offset = 0;
	/* after the walk: a drain counts what it skips as it goes */
	sink_totals(t, d, tot);
	tot->events = events;
	tot->buffers = buffers;
}

int rt_log_write(const struct rt_trace *t, int fd, struct rt_drain *d,
		 const struct rt_log_extra *x, struct rt_totals *tot)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	uint64_t events = 0, buffers = 0;
	struct rt_chunk c;
	size_t info;
	char *buf;
	int ret = 0;

	/* counted as they are written: the info event comes last */
	if (x->streamed) {
		events = x->streamed_events;
		buffers = x->streamed_buffers;
	} else {
		rt_log_header(t, hdr);
		ret = rt_write_all(fd, hdr, sizeof(hdr));
	}
	while (!ret && t->sink->drain_next(d, &c)) {
		ret = write_buffer(t, fd, c.data, c.used);
		events += c.events;
		buffers++;
	}
	/* after the walk: a drain counts what it skips as it goes */
	sink_totals(t, d, tot);
	tot->events = events;
	tot->buffers = buffers;
	/* last: it is the latest, and llvm-xray account wants the first
	 * record to be the earliest */
	if (ret)
		return ret;
	buf = x->snapshot ? malloc(INFO_BUF_SIZE) : info_buf;
	if (!buf)
		return -ENOMEM;
	info = build_info(t, d, tot, x, buf);
	ret = write_buffer(t, fd, buf, info);
	if (buf != info_buf)
		free(buf);
	return ret;
}

void rt_totals_give(struct xrayfdr_trace_stats *out,
		    const struct rt_totals *tot)
{
	struct xrayfdr_trace_stats s = {
		.sz = sizeof(s),
		.events = tot->events,
		.overwritten = tot->overwritten,
		.dropped = tot->dropped,
		.buffers = tot->buffers,
		.recycled = tot->recycled,
		.cut = tot->cut,
		.kernel_lost = tot->kernel_lost,
		.damaged = tot->damaged,
	};

	OPTS_PUT(out, &s);
}
