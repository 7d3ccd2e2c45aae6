// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink: every thread appends to the ring of the CPU it runs
 * on, following the module's commit protocol (kernel-module.rst, "The
 * commit protocol"), so memory grows with CPUs, not threads.
 *
 * The rings have the module's layout (include/uapi/linux/xray_fdr.h).
 * Without the module they live in memory this sink maps itself, with a
 * header page of its own; the layout, the writers and the drain are the
 * same.
 *
 * What a ring holds, user side: FDR records in the runtime's encoding
 * (little endian, the log's version), each padded to 8 bytes, with two
 * differences.  Times are relative to the open sub-buffer's base TSC
 * (its header), which needs no committed state: function records carry
 * that delta, and so do the markers of typed events and of version 5
 * custom events.  And a NewBuffer record says which thread the records
 * after it belong to, when the thread owning the ring's tail changes; a
 * sub-buffer's header names the owner when it opens.  NewCPUId, TSCWrap
 * and the rest never appear: the drain writes them.
 *
 * The trampolines append plain function records (ring.h); the controller
 * stages anything else in the thread's state, and commit copies it into
 * the ring in one rseq critical section that starts by checking the CPU
 * and the commit word, and ends with the store of the new commit word.
 * A commit that finds either changed is refused and the event made again.
 *
 * Built without vector registers (see fdr.c); cpu_start() and the drain,
 * which no recording path calls, may use the C library.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "../log.h"
#include "logbuf.h"
#include "objects.h"
#include "ring.h"
#include "sink.h"
#include "state.h"
#include "stream.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE
#define SUBBUF_HDR ((uint32_t)sizeof(struct xray_fdr_subbuf))

struct rt_ring rt_ring;

/* A stretch of one sub-buffer's records that belong to one thread. */
struct run {
	uint32_t tid;
	uint32_t cpu;
	uint32_t stretch; /* its thread's stretch: the order across CPUs */
	uint64_t base; /* its sub-buffer's base TSC */
	uint64_t wall_ns; /* its sub-buffer's wall-clock time */
	const uint8_t *p;
	uint32_t len;
	uint32_t order; /* its place in the rings, for equal times */
};

/*
 * Where the stream's writer is in a ring: @off bytes into the records of
 * the sub-buffer with sequence number @seq, where the tail was @owner's,
 * in stretch @stretch.
 */
struct ring_pos {
	uint64_t seq;
	uint32_t off;
	uint32_t owner, stretch;
};

/* The memory of one set of rings: the module's mapping or our own. */
struct rings {
	uint8_t *header; /* the header page */
	size_t header_size;
	uint8_t *areas; /* the CPU areas */
	size_t areas_size;
	int fd; /* the module's session, or -1 for rings of our own */
	uint32_t session_id;
};

static struct {
	struct rings now, previous;
	struct xray_fdr_header own_header;
	uint32_t subbuf_size, subbuf_count, shift;
	uint32_t gen;
	unsigned int version;
	int32_t pid;
	bool discard; /* the rings' geometry */
	bool user_discard; /* what the user asked for (not streaming) */
	uint64_t damaged;
	/* stretches are numbered in the order they begin, process-wide */
	uint32_t stretch_clock;
	/* streaming: where the writer is in each ring (stream_at), where its
	 * pass got to (stream_to), its runs and its log buffer */
	bool streaming;
	struct ring_pos *stream_at, *stream_to;
	struct run *stream_runs;
	size_t stream_max, stream_map_size;
	uint8_t *stream_scratch;
	size_t stream_capacity;
	uint64_t stream_damaged;
	/* the drain */
	uint8_t *scratch; /* one log buffer being built */
	size_t capacity;
	struct run *runs;
	size_t runs_size; /* bytes mapped for runs */
} cr = { .now = { .fd = -1 }, .previous = { .fd = -1 } };

static struct xray_fdr_control *control(uint32_t cpu)
{
	return (struct xray_fdr_control *)(rt_ring.areas +
					   (size_t)cpu * rt_ring.area_size);
}

static uint8_t *ring_of(uint32_t cpu)
{
	return (uint8_t *)control(cpu) + RT_RING_CONTROL_SIZE;
}

static struct xray_fdr_subbuf *subbuf(uint32_t cpu, uint32_t idx)
{
	return (struct xray_fdr_subbuf *)(ring_of(cpu) +
					  ((size_t)idx << cr.shift));
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The length of the user or kernel record at @p with @left bytes after
 * it, or 0 if it makes no sense there.  Sets *@event when it is an event
 * (a function record, a custom or typed event).
 */
static size_t record_len(const uint8_t *p, size_t left, bool *event)
{
	unsigned int kind;
	size_t len;

	*event = false;
	if (left < 8)
		return 0;
	if (!(p[0] & XRAY_FDR_REC_EXTENDED)) {
		*event = true;
		return 8;
	}
	kind = XRAY_FDR_REC_KIND(p[0]);
	if (kind > XRAY_FDR_REC_USER_KIND_MAX) {
		len = (size_t)p[1] * 8;
		return len && len <= left ? len : 0;
	}
	switch (kind) {
	case XRAYFDR_MD_NEW_BUFFER:
	case XRAYFDR_MD_CALL_ARGUMENT:
		len = MD;
		break;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		if (left < MD)
			return 0;
		len = MD + ALIGN8((size_t)get32(p + MD_OFF_BODY, false));
		*event = true;
		break;
	default:
		return 0;
	}
	return len <= left ? len : 0;
}

static uint64_t count_events(const uint8_t *p, size_t n)
{
	uint64_t events = 0;
	size_t len;
	bool ev;

	for (; n; p += len, n -= len) {
		len = record_len(p, n, &ev);
		if (!len)
			break;
		events += ev;
	}
	return events;
}

/*
 * The user events of sub-buffer @sb of CPU @cpu's ring, which should hold
 * sequence number @seq and end at @used (its own word if 0), for its
 * header's user_events: 0 if it is not that sub-buffer or makes no sense.
 */
static uint32_t subbuf_events(const struct xray_fdr_subbuf *sb, uint64_t seq,
			      uint32_t used)
{
	uint64_t n;

	if (sb->seq != seq)
		return 0;
	if (!used)
		used = sb->used;
	if (used < SUBBUF_HDR || used > cr.subbuf_size)
		return 0;
	n = count_events((const uint8_t *)sb + SUBBUF_HDR, used - SUBBUF_HDR);
	return n < XRAY_FDR_SUBBUF_COUNTED ? XRAY_FDR_SUBBUF_COUNTED | n : 0;
}

/* An empty ring: sub-buffer 0 open, no owner, nothing committed. */
static void ring_init(uint32_t cpu)
{
	struct xray_fdr_subbuf *sb = subbuf(cpu, 0);

	*sb = (struct xray_fdr_subbuf){ .tsc = arch_tsc(),
					.wall_ns = wall_ns(),
					.cpu = cpu };
	memset(control(cpu), 0, RT_RING_CONTROL_SIZE); /* counters too */
	control(cpu)->commit = XRAY_FDR_COMMIT(0, SUBBUF_HDR);
}

static uint32_t pow2_at_least(uint64_t v, uint32_t min)
{
	uint32_t p = min;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static void rings_free(struct rings *r)
{
	if (r->header && r->header != (uint8_t *)&cr.own_header)
		munmap(r->header, r->header_size);
	if (r->areas)
		munmap(r->areas, r->areas_size);
	if (r->fd >= 0)
		close(r->fd);
	*r = (struct rings){ .fd = -1 };
}

/* Point the fast path and the rest of this file at @r. */
static void rings_use(const struct rings *r)
{
	const struct xray_fdr_header *h = (const void *)r->header;

	cr.subbuf_size = h->subbuf_size;
	cr.subbuf_count = h->subbuf_count;
	cr.shift = (uint32_t)__builtin_ctz(h->subbuf_size);
	cr.discard = h->geom_flags & XRAY_FDR_GEOM_DISCARD;
	rt_ring = (struct rt_ring){
		.areas = r->areas,
		.area_size = h->area_size,
		.header = h,
		.ncpus = h->nr_cpus,
		.slot_room = h->subbuf_size - SUBBUF_HDR - FN,
		.size = h->subbuf_size * h->subbuf_count,
	};
}

/* Rings of our own, with the module's layout and a header of ours. */
static int own_rings(struct rings *r, uint32_t ncpus, uint32_t size,
		     uint32_t count, uint32_t flags)
{
	uint64_t area = RT_RING_CONTROL_SIZE + (uint64_t)size * count;

	*r = (struct rings){ .fd = -1 };
	r->areas_size = (size_t)(area * ncpus);
	r->areas = mmap(NULL, r->areas_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->areas == MAP_FAILED) {
		r->areas = NULL;
		return -ENOMEM;
	}
	cr.own_header = (struct xray_fdr_header){
		.magic = XRAY_FDR_MAGIC,
		.abi_version = XRAY_FDR_ABI_VERSION,
		.header_size = sizeof(struct xray_fdr_header),
		.page_size = RT_RING_CONTROL_SIZE,
		.nr_cpus = ncpus,
		.geom_flags = flags,
		.subbuf_size = size,
		.subbuf_count = count,
		.control_size = RT_RING_CONTROL_SIZE,
		.area_size = area,
		.state = XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_ENABLED,
	};
	r->header = (uint8_t *)&cr.own_header;
	rings_use(r);
	for (uint32_t c = 0; c < ncpus; c++)
		ring_init(c);
	return 0;
}

/*
 * A session of the module: geometry within its limits (@flags: discard
 * mode or not) (halving the
 * sub-buffer count while the memory caps refuse it), the header and every
 * CPU area mapped, recording started.  Return 0; -ENODEV if there is no
 * module to ask; another negative errno, with @err, if it refused.
 */
static int module_rings(struct rings *r, const struct rt_options *o,
			uint32_t size, uint32_t count, uint32_t flags,
			char *err, size_t errlen)
{
	struct xray_fdr_info info = { .size = sizeof(info) };
	struct xray_fdr_geometry geom = { .size = sizeof(geom) };
	const struct xray_fdr_header *h;
	const char *what;
	int ret;

	*r = (struct rings){ .fd = -1 };
	r->fd = open(o->device, O_RDWR | O_CLOEXEC);
	if (r->fd < 0)
		return errno == ENOENT || errno == ENODEV || errno == ENXIO ?
			       -ENODEV :
			       -errno;
	what = "XRAY_FDR_IOC_INFO";
	if (ioctl(r->fd, XRAY_FDR_IOC_INFO, &info))
		goto fail;
	geom.flags = flags;
	geom.subbuf_size = size < info.min_subbuf_size ? info.min_subbuf_size :
			   size > info.max_subbuf_size ? info.max_subbuf_size :
							 size;
	geom.subbuf_count = count > info.max_subbufs ? info.max_subbufs : count;
	what = "XRAY_FDR_IOC_SET_GEOMETRY";
	while ((ret = ioctl(r->fd, XRAY_FDR_IOC_SET_GEOMETRY, &geom)) &&
	       (errno == EFBIG || errno == ENOSPC || errno == EDQUOT ||
		errno == ENOMEM) &&
	       geom.subbuf_count > 2)
		geom.subbuf_count /= 2;
	if (ret)
		goto fail;
	what = "mmap of its header";
	r->header_size = info.page_size;
	r->header = mmap(NULL, r->header_size, PROT_READ, MAP_SHARED, r->fd, 0);
	if (r->header == MAP_FAILED) {
		r->header = NULL;
		goto fail;
	}
	h = (const void *)r->header;
	what = "its header";
	errno = EPROTO;
	if (h->magic != XRAY_FDR_MAGIC ||
	    h->control_size != RT_RING_CONTROL_SIZE || !h->nr_cpus ||
	    h->subbuf_size != geom.subbuf_size)
		goto fail;
	what = "mmap of its rings";
	r->areas_size = (size_t)(h->area_size * h->nr_cpus);
	r->areas = mmap(NULL, r->areas_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			r->fd, (off_t)h->area_offset);
	if (r->areas == MAP_FAILED) {
		r->areas = NULL;
		goto fail;
	}
	what = "XRAY_FDR_IOC_KEEP";
	if (o->keep && ioctl(r->fd, XRAY_FDR_IOC_KEEP, 1))
		goto fail;
	what = "XRAY_FDR_IOC_START";
	if (ioctl(r->fd, XRAY_FDR_IOC_START))
		goto fail;
	r->session_id = info.session_id;
	rings_use(r);
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "%s: %s refused: %s", o->device, what,
		 strerror(errno));
	rings_free(r);
	return ret;
}

/*
 * What a dump of the session needs and only this process knows, in the
 * free part of the control pages (rt_cpu_notes()): the program, the log's
 * version and buffer size, the TSC facts, the instrumented objects.
 */
static void write_notes(const struct rt_options *o, pid_t pid)
{
	static char text[RT_NOTES_MAX];
	char program[PATH_MAX];
	ssize_t plen = readlink("/proc/self/exe", program, sizeof(program) - 1);
	size_t n, done = 0;
	int k;

	program[plen > 0 ? plen : 0] = '\0';
	k = snprintf(text, sizeof(text),
		     "xrayfdr-session 1\npid=%ld\nprogram=%s\nversion=%u\n"
		     "buffer_size=%llu\ntsc_source=%s\ntsc_hz=%llu\n"
		     "constant_tsc=%d\nnonstop_tsc=%d\ntsc_reliable=%d\n%s",
		     (long)pid, program, o->version,
		     (unsigned long long)o->buffer_size,
		     rt_tsc_source_name(rt.tsc.source),
		     (unsigned long long)rt.tsc.hz, rt.tsc.constant_tsc,
		     rt.tsc.nonstop_tsc, rt.tsc.reliable, rt_objects_text());
	n = k < 0 ? 0 : (size_t)k < sizeof(text) ? (size_t)k : sizeof(text) - 1;
	for (uint32_t c = 0; c < rt_ring.ncpus; c++) {
		uint8_t *free_part = (uint8_t *)control(c) + RT_NOTES_OFFSET;
		size_t room = RT_NOTES_END - RT_NOTES_OFFSET;
		size_t k2 = n - done < room ? n - done : room;

		memcpy(free_part, text + done, k2);
		if (k2 < room)
			free_part[k2] = '\0';
		done += k2;
	}
}

size_t rt_cpu_notes(char *out, size_t size)
{
	size_t n = 0;

	for (uint32_t c = 0; rt_ring.header && c < rt_ring.ncpus; c++) {
		const uint8_t *free_part =
			(const uint8_t *)control(c) + RT_NOTES_OFFSET;

		for (size_t i = 0; i < RT_NOTES_END - RT_NOTES_OFFSET; i++) {
			if (!free_part[i] || n + 1 >= size)
				goto out;
			out[n++] = (char)free_part[i];
		}
	}
out:
	if (size)
		out[n] = '\0';
	return n;
}

int rt_cpu_view(int fd, char *err, size_t errlen)
{
	struct rings *r = &cr.now;
	const struct xray_fdr_header *h;
	long page = sysconf(_SC_PAGESIZE);

	rings_free(&cr.previous);
	rings_free(&cr.now);
	memset(&rt_ring, 0, sizeof(rt_ring));
	r->header_size = (size_t)page;
	r->header = mmap(NULL, r->header_size, PROT_READ, MAP_SHARED, fd, 0);
	if (r->header == MAP_FAILED) {
		r->header = NULL;
		snprintf(err, errlen, "cannot map the session's header: %s",
			 strerror(errno));
		return -errno;
	}
	h = (const void *)r->header;
	if (h->magic != XRAY_FDR_MAGIC ||
	    h->control_size != RT_RING_CONTROL_SIZE || !h->nr_cpus ||
	    h->subbuf_size < XRAY_FDR_SUBBUF_MIN_SIZE ||
	    (h->subbuf_size & (h->subbuf_size - 1)) || h->subbuf_count < 2) {
		snprintf(err, errlen, "the session's header makes no sense");
		rings_free(r);
		return -EPROTO;
	}
	r->areas_size = (size_t)(h->area_size * h->nr_cpus);
	r->areas = mmap(NULL, r->areas_size, PROT_READ, MAP_SHARED, fd,
			(off_t)h->area_offset);
	if (r->areas == MAP_FAILED) {
		r->areas = NULL;
		snprintf(err, errlen, "cannot map the session's rings: %s",
			 strerror(errno));
		rings_free(r);
		return -errno;
	}
	r->fd = dup(fd); /* (the module's rings, for the info event) */
	rings_use(r);
	return 0;
}

/* The drain's log buffer: @capacity bytes. */
static int scratch_for(size_t capacity)
{
	return rt_logbuf_scratch(&cr.scratch, &cr.capacity, capacity);
}

int rt_cpu_view_setup(unsigned int version, size_t capacity, pid_t pid)
{
	if (scratch_for(capacity))
		return -ENOMEM;
	cr.version = version;
	cr.pid = (int32_t)pid;
	cr.damaged = 0;
	return 0;
}

uint64_t rt_cpu_user_lost(void)
{
	uint64_t n = 0;

	for (uint32_t c = 0; rt_ring.header && c < rt_ring.ncpus; c++)
		n += control(c)->user_records_lost;
	return n;
}

/* The stream's writer's memory for the rings now in use. */
static int stream_setup(size_t capacity, char *err, size_t errlen)
{
	size_t pos = (size_t)rt_ring.ncpus * sizeof(struct ring_pos) * 2;
	size_t max = 4 * ((size_t)cr.subbuf_size / 8 + 1), size;
	uint8_t *m;

	if (max < 4096)
		max = 4096;
	size = pos + max * sizeof(struct run);
	if (cr.stream_map_size)
		munmap(cr.stream_at, cr.stream_map_size);
	cr.stream_map_size = 0;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED ||
	    rt_logbuf_scratch(&cr.stream_scratch, &cr.stream_capacity,
			      capacity)) {
		if (m != MAP_FAILED)
			munmap(m, size);
		snprintf(err, errlen, "cannot map the stream's %zu bytes",
			 size + capacity);
		return -ENOMEM;
	}
	/* every ring from its start: (mmap's zeros) */
	cr.stream_map_size = size;
	cr.stream_at = (struct ring_pos *)m;
	cr.stream_to = cr.stream_at + rt_ring.ncpus;
	cr.stream_runs = (struct run *)(m + pos);
	cr.stream_max = max;
	cr.stream_damaged = 0;
	cr.streaming = true;
	return 0;
}

/*
 * Rings for a new trace: the module's when it answers (mode=auto or cpu),
 * else ours (mode=cpu).  The sub-buffer is buffer_size rounded up to a
 * power of two from 4 KiB; the buffer_max sub-buffers are shared out
 * among the CPUs (at least 2 each), so the memory is thread mode's.
 * Return 0; -ENODEV for mode=auto without the module; another negative
 * errno, with @err, when the module refused.
 */
static int cpu_start(const struct rt_options *o, size_t capacity, uint32_t gen,
		     pid_t pid, char *err, size_t errlen)
{
	uint32_t ncpus = (uint32_t)get_nprocs_conf(), size, count;
	/* streaming, nothing is written over before the writer took it */
	uint32_t flags = o->discard || o->stream ? XRAY_FDR_GEOM_DISCARD : 0;
	int ret;

	if (sysconf(_SC_PAGESIZE) != RT_RING_CONTROL_SIZE) {
		snprintf(err, errlen, "CPU rings need %d-byte pages",
			 RT_RING_CONTROL_SIZE);
		return -ENOTSUP;
	}
	size = pow2_at_least(o->buffer_size, XRAY_FDR_SUBBUF_MIN_SIZE);
	count = (uint32_t)(o->buffer_max / (ncpus ? ncpus : 1));
	if (count < 2)
		count = 2;
	if (scratch_for(capacity)) {
		snprintf(err, errlen, "cannot map %zu bytes", capacity);
		return -ENOMEM;
	}
	cr.streaming = false;
	/* A thread may still be in the C path of the last trace: its rings
	 * go when the next trace starts. */
	rings_free(&cr.previous);
	cr.previous = cr.now;
	cr.now = (struct rings){ .fd = -1 };
	memset(&rt_ring, 0, sizeof(rt_ring));
	ret = module_rings(&cr.now, o, size, count, flags, err, errlen);
	if (ret == -ENODEV) {
		snprintf(err, errlen, "no %s", o->device);
		if (o->record_mode == RT_MODE_CPU) {
			ret = own_rings(&cr.now, ncpus, size, count, flags);
			if (ret)
				snprintf(
					err, errlen,
					"cannot map %u CPU rings of %u sub-buffers of %u bytes",
					ncpus, count, size);
		}
	}
	if (!ret && o->stream)
		ret = stream_setup(capacity, err, errlen);
	if (ret)
		return ret;
	cr.gen = gen;
	cr.version = o->version;
	cr.pid = (int32_t)pid;
	cr.damaged = 0;
	cr.user_discard = o->discard;
	write_notes(o, pid);
	if (o->keep && cr.now.fd >= 0)
		pr_warn("session %u is kept if this process dies: xrayfdr-ctl dump %u -o FILE writes its log\n",
			cr.now.session_id, cr.now.session_id);
	return 0;
}

/* May this thread append?  Only inside rseq critical sections. */
static bool thread_can_write(const struct rt_thread *t)
{
	return t->tid && (!rt.own_rseq || t->rseq.flags == RT_RSEQ_REGISTERED);
}

/*
 * An append that opens sub-buffer @nidx with sequence number @seq, closing
 * the one at @idx filled to @used: the user events it destroys, and the
 * count the kernel needs before it may take over the sub-buffer after it
 * (kernel-module.rst, "The commit protocol").  That one is the oldest
 * once this commits, and final: with two sub-buffers, the one this
 * closes.  The count goes into its header in the same commit, so it is
 * stored only while this thread is on @cpu and nothing moved there: the
 * kernel may reopen that sub-buffer as soon as either changes.
 *
 * The events destroyed are the count in @nidx's header when it has one
 * (this writer's, or the kernel's 0 for a sub-buffer it alone wrote),
 * else counted here.
 */
static void reuse_and_precount(struct rt_ring_pending *pd, uint32_t cpu,
			       uint32_t idx, uint32_t used, uint64_t seq,
			       uint32_t nidx)
{
	const struct xray_fdr_subbuf *next = subbuf(cpu, nidx);
	uint32_t aidx = nidx + 1 == cr.subbuf_count ? 0 : nidx + 1;
	struct xray_fdr_subbuf *after = subbuf(cpu, aidx);
	uint64_t old = seq - cr.subbuf_count;
	uint32_t v = next->user_events;

	if (seq >= cr.subbuf_count && !cr.discard) /* (else consumed) */
		pd->reused_events =
			next->seq == old && (v & XRAY_FDR_SUBBUF_COUNTED) ?
				v & ~XRAY_FDR_SUBBUF_COUNTED :
				subbuf_events(next, old, 0) &
					~XRAY_FDR_SUBBUF_COUNTED;
	/* the kernel takes a virgin one freely; in discard mode it takes
	 * only what the reader consumed */
	if (seq + 1 < cr.subbuf_count || cr.discard)
		return;
	/* counted already (the open one's count may be stale) */
	v = after->user_events;
	if (aidx != idx && after->seq == old + 1 &&
	    (v & XRAY_FDR_SUBBUF_COUNTED))
		return;
	v = subbuf_events(after, old + 1, aidx == idx ? used : 0);
	if (!v)
		return;
	pd->count_word = (uint64_t *)&after->user_data;
	pd->count_val = after->user_data | (uint64_t)v << 32;
}

/*
 * The number of a stretch that begins: in the order they begin, so that
 * the stream's writer knows from the clock which stretches had all the
 * records of their thread's earlier ones committed (cpu_stream_one()).
 * 0 means none (a sub-buffer the kernel opened).
 */
static uint32_t next_stretch(void)
{
	uint32_t v = __atomic_add_fetch(&cr.stretch_clock, 1, __ATOMIC_SEQ_CST);

	return v ? v :
		   __atomic_add_fetch(&cr.stretch_clock, 1, __ATOMIC_SEQ_CST);
}

/* Did stretch @a begin before stretch @b?  (The clock wraps.) */
static bool stretch_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* *@full is set when the ring has no room until a reader consumes. */
static enum rt_reserve reserve_in_ring(struct rt_thread *t, size_t need,
				       uint64_t *tsc, uint32_t cpu, bool *full)
{
	struct rt_ring_pending *pd = &t->ring;
	const struct xray_fdr_header *hdr = rt_ring.header;
	struct xray_fdr_control *ctl;
	struct xray_fdr_subbuf *sb, *next;
	uint64_t commit, base, seq;
	uint32_t off, idx, used, nidx;
	size_t total;

	t->name_due = 0;
	if (!hdr || !thread_can_write(t) || cpu >= rt_ring.ncpus ||
	    (__atomic_load_n(&hdr->state, __ATOMIC_RELAXED) &
	     XRAY_FDR_STATE_FROZEN))
		return RT_RESERVE_NONE;
	need = ALIGN8(need);
	ctl = control(cpu);
	commit = __atomic_load_n(&ctl->commit, __ATOMIC_RELAXED);
	off = XRAY_FDR_COMMIT_OFFSET(commit);
	if (!off || off > rt_ring.size || off % 8)
		return RT_RESERVE_NONE; /* the process wrote over it */
	idx = (off - 1) >> cr.shift;
	used = off - (idx << cr.shift);
	if (used < SUBBUF_HDR)
		return RT_RESERVE_NONE;
	sb = subbuf(cpu, idx);
	base = __atomic_load_n(&sb->tsc, __ATOMIC_RELAXED);
	/* read before this sub-buffer opened, or on a CPU behind this one */
	if (*tsc < base)
		*tsc = base;
	/* A takeover of the tail starts a stretch (a refused commit may
	 * skip a number); so does coming back to a ring whose tail is still
	 * this thread's after writing in another, whose records came in
	 * between. */
	pd->staged_before = XRAY_FDR_COMMIT_TID(commit) != t->tid ||
					    t->stretch_ring != cpu + 1 ?
				    (uint32_t)MD :
				    0;
	if (pd->staged_before)
		t->stretch = next_stretch();
	/* The thread's name goes into each sub-buffer it writes in (any
	 * may be the oldest left), checked where the C path runs: where
	 * it takes over the tail, opens a sub-buffer, or writes first in
	 * one the kernel opened. */
	pd->seq = __atomic_load_n(&sb->seq, __ATOMIC_RELAXED);
	t->name_due = t->name_gen != cr.gen || t->name_cpu != cpu ||
		      t->name_seq != pd->seq;
	total = pd->staged_before + need + (t->name_due ? RT_NAME_ROOM : 0);
	pd->close_word = NULL;
	pd->open = NULL;
	pd->reused_events = 0;
	pd->count_word = NULL;
	/* the fast path needs the TSC's high half to be the base's */
	if (used + total > cr.subbuf_size || (*tsc ^ base) >> 32) {
		if (SUBBUF_HDR + need > cr.subbuf_size)
			return RT_RESERVE_NONE;
		/* a new sub-buffer: a new place to name the thread */
		t->name_due = SUBBUF_HDR + need + RT_NAME_ROOM <=
			      cr.subbuf_size;
		seq = __atomic_load_n(&sb->seq, __ATOMIC_RELAXED) + 1;
		if (cr.discard &&
		    (int64_t)(seq - __atomic_load_n(&ctl->consumed,
						    __ATOMIC_ACQUIRE)) >=
			    (int64_t)cr.subbuf_count) {
			*full = true;
			return RT_RESERVE_NONE;
		}
		nidx = idx + 1 == cr.subbuf_count ? 0 : idx + 1;
		next = subbuf(cpu, nidx);
		reuse_and_precount(pd, cpu, idx, used, seq, nidx);
		pd->close_word = (uint64_t *)&sb->used;
		pd->close_val = used | (uint64_t)sb->flags << 32;
		pd->open = next;
		pd->open_hdr =
			(struct xray_fdr_subbuf){ .seq = seq,
						  .tsc = *tsc,
						  .wall_ns = wall_ns(),
						  .cpu = cpu,
						  .tid = t->tid,
						  .user_data = t->stretch };
		base = *tsc;
		off = (nidx << cr.shift) + SUBBUF_HDR;
		pd->staged_before = 0; /* the header names the owner */
		pd->seq = seq;
	}
	pd->dst = ring_of(cpu) + off;
	pd->expect = commit;
	pd->cpu = cpu;
	if (pd->staged_before) {
		fdr_put_metadata(t->stage, false, cr.version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_NEW_BUFFER,
					 .tid = (int32_t)t->tid });
		put32(t->stage + RT_STRETCH_OFF, t->stretch, false);
	}
	t->pos = t->stage + pd->staged_before;
	t->base = base;
	t->cpu = cpu;
	/* the fast path's, for this CPU: the sub-buffer these records go in */
	t->area = (uint8_t *)ctl;
	t->slot = (uint64_t)t->tid << 32 |
		  ((off >> cr.shift << cr.shift) + SUBBUF_HDR);
	t->hdr = subbuf(cpu, off >> cr.shift);
	t->ring_state = &hdr->state;
	t->room = rt_ring.slot_room;
	return RT_RESERVE_SAME;
}

/*
 * A drop is counted in the ring too, for a dump of the session.
 * Streaming, a full ring waits for the writer while it writes (it
 * consumes every ring, whoever waits); the time stays the event's.
 */
static enum rt_reserve cpu_reserve(struct rt_thread *t, size_t need,
				   uint64_t *tsc, uint32_t cpu)
{
	bool full = false;
	enum rt_reserve ret = reserve_in_ring(t, need, tsc, cpu, &full);

	while (ret == RT_RESERVE_NONE && full && cr.streaming &&
	       rt_stream_writing()) {
		struct timespec nap = { 0, 50000 };

		syscall(SYS_nanosleep, &nap, NULL);
		full = false;
		ret = reserve_in_ring(t, need, tsc, cpu, &full);
	}

	if (ret == RT_RESERVE_NONE && rt_ring.header && cpu < rt_ring.ncpus)
		__atomic_add_fetch(&control(cpu)->user_records_lost, 1,
				   __ATOMIC_RELAXED);
	return ret;
}

struct seg {
	uint64_t *dst;
	const uint64_t *src;
	size_t words;
};

/*
 * The critical section: if this thread is on @cpu and the commit word is
 * still @expect, copy the segments and store @val in the commit word.
 * Return 0 when committed, 1 when aborted or refused.
 */
static int rseq_commit(uint32_t cpu, __u64 *commit, uint64_t expect,
		       uint64_t val, const struct seg *seg, size_t nseg)
{
	char *rs = (char *)__builtin_thread_pointer() + rt_rseq_offset;
	int ret;

	__asm__ __volatile__(
		".pushsection .data.rel.ro, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0, 0\n\t"
		".quad 1f, (2f - 1f), 4f\n\t"
		".popsection\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %[rseq_cs]\n\t"
		"1:\n\t"
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"cmpq %[expect], (%[commit])\n\t"
		"jnz 4f\n\t"
		"5:\n\t"
		"testq %[nseg], %[nseg]\n\t"
		"jz 8f\n\t"
		"movq (%[seg]), %%rdi\n\t"
		"movq 8(%[seg]), %%rsi\n\t"
		"movq 16(%[seg]), %%rcx\n\t"
		"6:\n\t"
		"testq %%rcx, %%rcx\n\t"
		"jz 7f\n\t"
		"movq (%%rsi), %%rax\n\t"
		"movq %%rax, (%%rdi)\n\t"
		"addq $8, %%rsi\n\t"
		"addq $8, %%rdi\n\t"
		"decq %%rcx\n\t"
		"jmp 6b\n\t"
		"7:\n\t"
		"addq $24, %[seg]\n\t"
		"decq %[nseg]\n\t"
		"jmp 5b\n\t"
		"8:\n\t"
		"movq %[val], (%[commit])\n\t"
		"2:\n\t"
		"xorl %[ret], %[ret]\n\t"
		"jmp 9f\n\t"
		/* the signature the kernel checks before the abort handler */
		".byte 0x0f, 0xb9, 0x3d\n\t"
		".long 0x53053053\n\t"
		"4:\n\t"
		"movl $1, %[ret]\n\t"
		"9:\n\t"
		: [ret] "=&r"(ret), [seg] "+&r"(seg), [nseg] "+&r"(nseg),
		  [rseq_cs] "=m"(*(uint64_t *)(rs + RT_RSEQ_CS))
		: [cpu] "r"(cpu),
		  [cpu_id] "m"(*(uint32_t *)(rs + RT_RSEQ_CPU_ID)),
		  [commit] "r"(commit), [expect] "r"(expect), [val] "r"(val)
		: "rax", "rcx", "rsi", "rdi", "memory", "cc");
	return ret;
}

static bool cpu_commit(struct rt_thread *t, uint8_t *end, const void *payload,
		       size_t size)
{
	struct rt_ring_pending *pd = &t->ring;
	const uint8_t *src = payload;
	size_t staged = (size_t)(end - t->stage), rem = size % 8;
	uint64_t tail = 0, val;
	struct seg seg[6];
	size_t n = 0;
	uint32_t off;

	if (end < t->pos)
		return true; /* nothing is taken back in a ring (no threshold) */
	for (size_t i = 0; i < rem; i++)
		tail |= (uint64_t)src[size - rem + i] << (8 * i);
	if (pd->open)
		seg[n++] = (struct seg){ (uint64_t *)pd->open,
					 (const uint64_t *)&pd->open_hdr,
					 sizeof(pd->open_hdr) / 8 };
	if (pd->close_word)
		seg[n++] = (struct seg){ pd->close_word, &pd->close_val, 1 };
	if (pd->count_word)
		seg[n++] = (struct seg){ pd->count_word, &pd->count_val, 1 };
	seg[n++] = (struct seg){ (uint64_t *)pd->dst,
				 (const uint64_t *)t->stage, staged / 8 };
	if (size >= 8)
		seg[n++] = (struct seg){ (uint64_t *)(pd->dst + staged),
					 (const uint64_t *)payload, size / 8 };
	if (rem)
		seg[n++] = (struct seg){
			(uint64_t *)(pd->dst + staged + size - rem), &tail, 1
		};
	off = (uint32_t)(pd->dst - ring_of(pd->cpu)) + (uint32_t)staged +
	      (uint32_t)ALIGN8(size);
	val = XRAY_FDR_COMMIT(t->tid, off);
	if (rseq_commit(pd->cpu, &control(pd->cpu)->commit, pd->expect, val,
			seg, n))
		return false;
	t->stretch_ring = pd->cpu + 1;
	if (t->name_in) {
		t->name_gen = cr.gen;
		t->name_cpu = pd->cpu;
		t->name_seq = pd->seq;
	}
	if (pd->open && pd->reused_events) {
		uint8_t *ctl = (uint8_t *)control(pd->cpu);

		__atomic_add_fetch((uint64_t *)(ctl + RT_CTL_OVERWRITTEN),
				   pd->reused_events, __ATOMIC_RELAXED);
		__atomic_add_fetch((uint64_t *)(ctl + RT_CTL_RECYCLED), 1,
				   __ATOMIC_RELAXED);
	}
	return true;
}

/* Is t->slot a sub-buffer of this trace's rings, t->hdr its header?
 * (Rings of a later trace may be mapped where earlier ones were.) */
static bool slot_current(const struct rt_thread *t)
{
	uint32_t start = (uint32_t)t->slot - SUBBUF_HDR;

	return (uint32_t)t->slot >= SUBBUF_HDR && start < rt_ring.size &&
	       !(start & (cr.subbuf_size - 1)) &&
	       t->hdr == subbuf(t->cpu, start >> cr.shift) &&
	       t->ring_state == &rt_ring.header->state &&
	       t->room == rt_ring.slot_room;
}

/* The fast path may run once reserve has given the thread its CPU's area
 * (t->cpu, t->area) and a sub-buffer in this trace's rings. */
static uint32_t cpu_arm(struct rt_thread *t)
{
	t->end = NULL;
	return rt_ring.header && thread_can_write(t) && t->area &&
			       t->cpu < rt_ring.ncpus &&
			       t->area == (uint8_t *)control(t->cpu) &&
			       slot_current(t) ?
		       cr.gen :
		       0;
}

static void cpu_detach(struct rt_thread *t)
{
	t->end = NULL; /* its records stay in the rings */
}

static void cpu_fork_nothing(void)
{
}

/* The child writes a log of its own, into rings of its own: the
 * module's session is the parent's, not the child's to write. */
static void cpu_fork_child(uint32_t gen, pid_t pid)
{
	uint32_t flags = cr.user_discard ? XRAY_FDR_GEOM_DISCARD : 0;

	cr.pid = (int32_t)pid;
	cr.gen = gen;
	cr.damaged = 0;
	cr.streaming = false; /* (the writer is the parent's) */
	if (!rt_ring.header)
		return;
	if (cr.now.fd >= 0) {
		struct xray_fdr_header h = *rt_ring.header;

		rings_free(&cr.now);
		rings_free(&cr.previous);
		memset(&rt_ring, 0, sizeof(rt_ring));
		own_rings(&cr.now, h.nr_cpus, h.subbuf_size, h.subbuf_count,
			  flags);
		return;
	}
	cr.own_header.geom_flags = flags;
	rings_use(&cr.now);
	for (uint32_t c = 0; c < rt_ring.ncpus; c++)
		ring_init(c);
}

/* The module stops writing scheduler records into the rings, and no
 * kernel write is in progress once this returns. */
static void cpu_finish(void)
{
	if (cr.now.fd >= 0)
		ioctl(cr.now.fd, XRAY_FDR_IOC_FREEZE);
}

static const char *cpu_memory(void)
{
	return cr.now.fd >= 0 ? "module" : "own";
}

static void cpu_counters(struct rt_sink_counters *c)
{
	c->overwritten = c->recycled = 0;
	c->damaged = cr.damaged + cr.stream_damaged;
	c->kernel_lost = 0;
	/* in the rings, so a dump of a dead process's session has them */
	for (uint32_t cpu = 0; rt_ring.header && cpu < rt_ring.ncpus; cpu++) {
		const uint8_t *ctl = (const uint8_t *)control(cpu);

		c->kernel_lost += control(cpu)->records_lost;
		/* the user writer's count, and the kernel's of its takeovers */
		c->overwritten +=
			__atomic_load_n(
				(const uint64_t *)(ctl + RT_CTL_OVERWRITTEN),
				__ATOMIC_RELAXED) +
			__atomic_load_n(&control(cpu)->user_events_overwritten,
					__ATOMIC_RELAXED);
		c->recycled += __atomic_load_n(
			(const uint64_t *)(ctl + RT_CTL_RECYCLED),
			__ATOMIC_RELAXED);
	}
}

/*
 * The drain.  Each ring is read from its oldest surviving sub-buffer to
 * the open one, checking everything (the process can write anywhere in
 * its rings), and cut into runs: stretches of one thread's records.  The
 * runs are sorted by thread, then time, and each thread's become log
 * buffers of its own, with NewCPUId where the CPU changes, TSCWrap where
 * a delta does not fit, and the times made relative to the record before.
 */

/*
 * The drain orders a thread's runs by its stretches, not by time: the
 * TSCs of two CPUs may disagree (a kernel that found them out of sync),
 * while each takeover of a ring's tail numbers a new stretch of the
 * thread (in its NewBuffer record, or in the user_data word of the
 * sub-buffer header it opened).  Within a stretch, the order is the
 * ring's.  A kernel record of a thread that does not own the tail goes
 * with that thread's next stretch in the ring (it switched in and went
 * on to write there), else with its last one.
 */
struct walk {
	struct run *out;
	size_t max, n;
	uint32_t order;
	/* this ring: kernel records waiting for their thread's stretch */
	size_t pending[64];
	unsigned int npending;
	struct {
		uint32_t tid, stretch;
	} last[64]; /* the last stretch of each thread seen in this ring */
	unsigned int nlast;
	uint64_t damaged;
	/* the stream's writer: stop at a stretch that began at @stop or
	 * later, or before a sub-buffer that might not fit in @max */
	bool stream;
	uint32_t stop;
};

static void add_run(struct walk *w, const struct run *r)
{
	if (w->n < w->max) {
		w->out[w->n] = *r;
		w->out[w->n].order = w->order;
	}
	w->n++;
	w->order++;
}

static void saw_stretch(struct walk *w, uint32_t tid, uint32_t stretch)
{
	unsigned int i;

	for (i = 0; i < w->nlast && w->last[i].tid != tid; i++)
		;
	if (i == w->nlast && w->nlast < 64)
		w->nlast++;
	if (i < w->nlast)
		w->last[i].tid = tid, w->last[i].stretch = stretch;
	/* the kernel's records of this thread that came before it */
	for (unsigned int k = 0; k < w->npending;) {
		struct run *r = &w->out[w->pending[k]];

		if (r->tid != tid) {
			k++;
			continue;
		}
		r->stretch = stretch;
		w->pending[k] = w->pending[--w->npending];
	}
}

/* Kernel records still waiting at the end of a ring: their thread's last
 * stretch in it. */
static void settle_pending(struct walk *w)
{
	for (unsigned int k = 0; k < w->npending; k++) {
		struct run *r = &w->out[w->pending[k]];

		for (unsigned int i = 0; i < w->nlast; i++)
			if (w->last[i].tid == r->tid)
				r->stretch = w->last[i].stretch;
	}
	w->npending = 0;
	w->nlast = 0;
}

/*
 * The runs of CPU @cpu's ring, from its oldest surviving record or from
 * @from (where the stream's writer is), to its last committed one or to
 * where a streaming walk stops; that place into @to, if not NULL.  A run
 * ends where another thread takes over the tail (NewBuffer) and around
 * each of the kernel's records, which name their own thread.
 */
static void walk_ring(uint32_t cpu, struct walk *w, const struct ring_pos *from,
		      struct ring_pos *to)
{
	uint64_t commit =
		__atomic_load_n(&control(cpu)->commit, __ATOMIC_ACQUIRE);
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit), open;
	uint32_t owner = 0, stretch = 0, skip = 0, at = 0;
	uint64_t open_seq, seq;

	if (!off || off > rt_ring.size || off % 8) {
		w->damaged++;
		return;
	}
	open = (off - 1) >> cr.shift;
	open_seq = subbuf(cpu, open)->seq;
	seq = open_seq >= cr.subbuf_count ? open_seq - cr.subbuf_count + 1 : 0;
	if (from && from->seq >= seq && from->seq <= open_seq) {
		seq = from->seq;
		skip = from->off;
		owner = from->owner;
		stretch = from->stretch;
	} else if (from) {
		w->damaged++; /* the ring went on without the writer */
	} else if (cr.discard) {
		/* what a reader consumed is not the log's (a dump of the
		 * session of a process that streamed) */
		uint64_t consumed = __atomic_load_n(&control(cpu)->consumed,
						    __ATOMIC_ACQUIRE);

		if (consumed > seq && consumed <= open_seq)
			seq = consumed;
	}
	for (; seq <= open_seq; seq++, skip = 0) {
		uint32_t k = (uint32_t)(open_seq - seq);
		uint32_t idx = (open + cr.subbuf_count - k) % cr.subbuf_count;
		const struct xray_fdr_subbuf *sb = subbuf(cpu, idx);
		const uint8_t *recs = (const uint8_t *)sb + SUBBUF_HDR;
		const uint8_t *p = recs + skip;
		uint32_t used = k ? sb->used : off - (open << cr.shift);
		struct run r = { .cpu = cpu,
				 .base = sb->tsc,
				 .wall_ns = sb->wall_ns,
				 .p = p };
		size_t left, len;
		bool ev;

		at = skip;
		if (sb->seq != seq || used < SUBBUF_HDR ||
		    used > cr.subbuf_size || used % 8 || sb->cpu != cpu ||
		    skip > used - SUBBUF_HDR) {
			w->damaged++;
			continue;
		}
		/* no more runs than records, and one */
		if (w->stream && w->n + (used - SUBBUF_HDR) / 8 + 1 > w->max)
			goto stop;
		/* opened by its owner: a stretch number; by the kernel: the
		 * owner's stretch goes on */
		if (!skip && (sb->user_data || sb->tid != owner)) {
			if (w->stream && sb->user_data &&
			    !stretch_before(sb->user_data, w->stop))
				goto stop;
			owner = sb->tid;
			stretch = sb->user_data;
			if (w->out)
				saw_stretch(w, owner, stretch);
		}
		r.tid = owner;
		r.stretch = stretch;
		for (left = used - SUBBUF_HDR - skip; left;
		     p += len, left -= len) {
			unsigned int kind = XRAY_FDR_REC_KIND(p[0]);

			len = record_len(p, left, &ev);
			if (!len) {
				w->damaged++;
				break;
			}
			if (!(p[0] & XRAY_FDR_REC_EXTENDED) ||
			    (kind != XRAYFDR_MD_NEW_BUFFER &&
			     kind <= XRAY_FDR_REC_USER_KIND_MAX))
				continue;
			r.len = (uint32_t)(p - r.p);
			if (kind == XRAYFDR_MD_NEW_BUFFER && w->stream &&
			    !stretch_before(get32(p + RT_STRETCH_OFF, false),
					    w->stop)) {
				if (r.len)
					add_run(w, &r);
				at = (uint32_t)(p - recs);
				goto stop;
			}
			if (r.len)
				add_run(w, &r);
			if (kind == XRAYFDR_MD_NEW_BUFFER) {
				owner = get32(p + MD_OFF_BODY, false);
				stretch = get32(p + RT_STRETCH_OFF, false);
				r.tid = owner;
				r.stretch = stretch;
				if (w->out)
					saw_stretch(w, owner, stretch);
			} else if (len >=
				   sizeof(struct xray_fdr_sched_record)) {
				struct run k_run = r;

				k_run.tid = get32(
					p + offsetof(
						    struct xray_fdr_sched_record,
						    tid),
					false);
				k_run.p = p;
				k_run.len = (uint32_t)len;
				if (k_run.tid != owner && w->out &&
				    w->n < w->max && w->npending < 64)
					w->pending[w->npending++] = w->n;
				add_run(w, &k_run);
			}
			r.p = p + len;
		}
		r.len = (uint32_t)(p - r.p);
		if (r.len)
			add_run(w, &r);
		/* (past what made no sense: what comes is appended after) */
		at = used - SUBBUF_HDR;
	}
	seq = open_seq;
stop:
	if (to)
		*to = (struct ring_pos){ .seq = seq,
					 .off = at,
					 .owner = owner,
					 .stretch = stretch };
	if (w->out)
		settle_pending(w);
}

static bool run_before(const struct run *a, const struct run *b)
{
	if (a->tid != b->tid)
		return a->tid < b->tid;
	if (a->stretch != b->stretch)
		return stretch_before(a->stretch, b->stretch);
	return a->order < b->order;
}

static int run_cmp(const void *a, const void *b)
{
	return run_before(a, b) ? -1 : run_before(b, a) ? 1 : 0;
}

/* Where each ring's walk starts: where the stream's writer got to. */
static const struct ring_pos *walk_from(uint32_t cpu)
{
	return cr.streaming ? &cr.stream_at[cpu] : NULL;
}

static void cpu_drain_begin(struct rt_drain *d, bool wait)
{
	struct walk w = { 0 };
	size_t size;

	(void)wait; /* no lock: the writers are quiesced, and what this
		     * reads is checked */
	*d = (struct rt_drain){ 0 };
	if (!rt_ring.header)
		return;
	if (cr.runs)
		munmap(cr.runs, cr.runs_size);
	cr.runs = NULL;
	for (uint32_t c = 0; c < rt_ring.ncpus; c++)
		walk_ring(c, &w, walk_from(c), NULL);
	cr.damaged = w.damaged;
	if (!w.n)
		return;
	/* Rings still written (xrayfdr_trace_stats() during a trace) may
	 * have more runs by the second walk: room to spare, and walk again
	 * in more room if even that was short. */
	for (int tries = 0; tries < 4; tries++) {
		size_t max = w.n + w.n / 4 + 64;

		size = max * sizeof(*cr.runs);
		cr.runs = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cr.runs == MAP_FAILED) {
			cr.runs = NULL;
			return;
		}
		cr.runs_size = size;
		w = (struct walk){ .out = cr.runs, .max = max };
		for (uint32_t c = 0; c < rt_ring.ncpus; c++)
			walk_ring(c, &w, walk_from(c), NULL);
		cr.damaged = w.damaged; /* counted once, by the walk kept */
		if (w.n <= w.max)
			break;
		munmap(cr.runs, cr.runs_size);
		cr.runs = NULL;
	}
	if (!cr.runs)
		return;
	/* shell sort: in place, no recursion, fine for a signal handler */
	for (size_t gap = w.n / 2; gap; gap /= 2)
		for (size_t i = gap; i < w.n; i++) {
			struct run v = cr.runs[i];
			size_t j = i;

			for (; j >= gap && run_before(&v, &cr.runs[j - gap]);
			     j -= gap)
				cr.runs[j] = cr.runs[j - gap];
			cr.runs[j] = v;
		}
	d->count = w.n;
}

/*
 * One of the kernel's scheduler records, as the xrayfdr_sched_event
 * custom event of its thread (lib/include/xrayfdr/fdr.h).  Kinds it does
 * not know are left out.
 */
static bool out_sched(struct rt_logbuf *o, const struct run *r,
		      const uint8_t *p, size_t len)
{
	static const uint8_t kinds[] = {
		[XRAY_FDR_REC_SWITCH_OUT - 64] = XRAYFDR_SCHED_SWITCH_OUT,
		[XRAY_FDR_REC_SWITCH_IN - 64] = XRAYFDR_SCHED_SWITCH_IN,
		[XRAY_FDR_REC_MIGRATE - 64] = XRAYFDR_SCHED_MIGRATE,
	};
	unsigned int kind = XRAY_FDR_REC_KIND(p[0]);
	struct xray_fdr_sched_record rec;
	struct xrayfdr_sched_event se;
	uint8_t payload[XRAYFDR_SCHED_PAYLOAD_SIZE];

	if (len < sizeof(rec) || kind < XRAY_FDR_REC_SWITCH_OUT ||
	    kind > XRAY_FDR_REC_MIGRATE)
		return true;
	memcpy(&rec, p, sizeof(rec));
	se = (struct xrayfdr_sched_event){
		.kind = kinds[kind - 64],
		.flags = rec.flags & XRAY_FDR_SCHED_PREEMPTED ?
				 XRAYFDR_SCHED_PREEMPTED :
				 0,
		.cpu = rec.cpu,
		.prev_cpu = rec.prev_cpu,
		.tid = rec.tid,
	};
	xrayfdr_sched_encode(payload, &se);
	return rt_logbuf_custom(o, r->cpu, rec.tsc, payload, sizeof(payload));
}

/* Re-encode one ring record into @o; false if it does not fit. */
static bool out_record(struct rt_logbuf *o, const struct run *r,
		       const uint8_t *p, size_t len)
{
	unsigned int kind;

	if (!(p[0] & 1))
		return rt_logbuf_function(o, r->cpu,
					  r->base + get32(p + 4, false),
					  get32(p, false));
	kind = XRAY_FDR_REC_KIND(p[0]);
	if (kind == XRAYFDR_MD_CALL_ARGUMENT)
		return rt_logbuf_argument(o, p);
	rt_rewind_reset(&o->rewind); /* nothing before any other record */
	if (kind > XRAY_FDR_REC_USER_KIND_MAX)
		return out_sched(o, r, p, len);
	if (kind != XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
	    kind != XRAYFDR_MD_TYPED_EVENT_MARKER)
		return true;
	/* (record_len checked the size against the ring) */
	return rt_logbuf_marker(o, r->cpu, r->base, p, p + MD,
				get32(p + MD_OFF_BODY, false));
}

/* Is the ring record at @p a thread-name event of thread @tid?  Then it
 * is the name the thread's records hold last. */
static bool saw_name(struct rt_drain *d, uint32_t tid, const uint8_t *p,
		     size_t len)
{
	return (p[0] & XRAY_FDR_REC_EXTENDED) &&
	       XRAY_FDR_REC_KIND(p[0]) == XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
	       get32(p + MD_OFF_BODY, false) <= len - MD &&
	       rt_logbuf_own_name(p + MD, get32(p + MD_OFF_BODY, false), tid,
				  d->name);
}

/* What a walk over sorted runs makes its log buffers from and in. */
struct pass {
	const struct run *runs;
	uint8_t *scratch;
	size_t capacity;
	bool names_now; /* the flush's: and the names threads have now */
};

/* One thread's records from the drain's position into a log buffer, or
 * the name the thread has now (when that did not fit after them); false
 * if none of them were events. */
static bool fill_chunk(struct rt_drain *d, const struct pass *ps,
		       struct rt_chunk *c)
{
	bool pending = d->name_pending;
	const struct run *first = &ps->runs[d->next - pending];
	uint32_t tid = first->tid;
	struct rt_logbuf o;
	uint64_t names = 0; /* the thread's own thread-name events */
	bool any = false, ev;
	size_t preamble;

	rt_logbuf_init(&o, ps->scratch, ps->capacity, cr.version,
		       rt.threshold_ticks);
	preamble = fdr_put_preamble(
		o.p, false, cr.version, (int32_t)tid,
		first->wall_ns / 1000000000u,
		(uint32_t)(first->wall_ns % 1000000000u / 1000), cr.pid);
	o.p += preamble;
	if (pending) {
		d->name_pending = false;
		any = rt_logbuf_name_now(&o, d->name_cpu, d->name_tsc, tid,
					 rt_drain_last_name(d)) > 0;
		goto done;
	}
	if (!d->offset && (!d->next || ps->runs[d->next - 1].tid != tid))
		d->name[0] = '\0'; /* the thread's first buffer */
	for (; d->next < d->count && ps->runs[d->next].tid == tid;
	     d->next++, d->offset = 0) {
		const struct run *r = &ps->runs[d->next];

		while (d->offset < r->len) {
			const uint8_t *p = r->p + d->offset;
			size_t len = record_len(p, r->len - d->offset, &ev);
			uint8_t *before = o.p;

			if (!len)
				break; /* (walk_ring counted it) */
			if (!out_record(&o, r, p, len)) {
				if (!any) /* larger than a whole buffer */
					d->offset += len;
				goto done;
			}
			any = any || o.p != before;
			names += saw_name(d, tid, p, len);
			d->offset += len;
		}
	}
	/* All its records are out.  If the thread is still there (in this
	 * process: not a dump of another's session), the flush is the last
	 * chance to see a rename. */
	if (ps->names_now && o.cpu != UINT32_MAX &&
	    rt_logbuf_name_now(&o, o.cpu, o.last, tid, rt_drain_last_name(d)) <
		    0) {
		d->name_pending = true;
		d->name_cpu = o.cpu;
		d->name_tsc = o.last;
	}
done:
	c->data = ps->scratch;
	c->used = (size_t)(o.p - ps->scratch);
	c->events = o.events;
	/* a buffer whose calls were all rewound is left out, names too */
	return any && o.events > names;
}

static bool cpu_drain_next(struct rt_drain *d, struct rt_chunk *c)
{
	const struct pass ps = { .runs = cr.runs,
				 .scratch = cr.scratch,
				 .capacity = cr.capacity,
				 .names_now = cr.pid == rt.pid };

	while (cr.runs && (d->next < d->count || d->name_pending))
		if (fill_chunk(d, &ps, c))
			return true;
	return false;
}

static void cpu_drain_end(struct rt_drain *d)
{
	(void)d;
}

/* Has a sub-buffer closed that the stream's writer has not consumed? */
static bool stream_due(void)
{
	for (uint32_t c = 0; c < rt_ring.ncpus; c++) {
		uint64_t commit =
			__atomic_load_n(&control(c)->commit, __ATOMIC_ACQUIRE);
		uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit);

		if (off && off <= rt_ring.size &&
		    subbuf(c, (off - 1) >> cr.shift)->seq !=
			    cr.stream_at[c].seq)
			return true;
	}
	return false;
}

/*
 * Streaming: a pass over every ring from where the last one stopped to
 * what is committed, open sub-buffers included, once a sub-buffer has
 * closed.  Its runs become log buffers in the flush's order (thread, then
 * stretch), and what it took is then consumed: the writers may open
 * sub-buffers up to the one it stopped in.
 *
 * A thread's stretches must go out in order across passes, while it
 * writes on.  A stretch begins after every record of its thread's
 * earlier ones is committed, and takes its number from the clock then:
 * so a pass that reads the clock first, and stops each ring at the first
 * stretch numbered after it, has every earlier record of each thread
 * whose records it takes, and the next pass starts where it stopped.
 */
static int cpu_stream_one(int (*write)(void *ctx, const struct rt_chunk *c),
			  void *ctx)
{
	struct walk w = { .out = cr.stream_runs,
			  .max = cr.stream_max,
			  .stream = true };
	const struct pass ps = { .runs = cr.stream_runs,
				 .scratch = cr.stream_scratch,
				 .capacity = cr.stream_capacity };
	struct rt_drain d = { 0 };
	struct rt_chunk c;
	bool consumed = false;
	int ret = 0;

	if (!cr.streaming || !rt_ring.header || !stream_due())
		return 0;
	w.stop = __atomic_load_n(&cr.stretch_clock, __ATOMIC_SEQ_CST) + 1;
	for (uint32_t cpu = 0; cpu < rt_ring.ncpus; cpu++)
		walk_ring(cpu, &w, &cr.stream_at[cpu], &cr.stream_to[cpu]);
	cr.stream_damaged += w.damaged;
	qsort(cr.stream_runs, w.n, sizeof(*cr.stream_runs), run_cmp);
	d.count = w.n;
	while (!ret && d.next < d.count)
		if (fill_chunk(&d, &ps, &c))
			ret = write(ctx, &c);
	if (ret)
		return ret;
	for (uint32_t cpu = 0; cpu < rt_ring.ncpus; cpu++) {
		consumed |= cr.stream_to[cpu].seq != cr.stream_at[cpu].seq;
		cr.stream_at[cpu] = cr.stream_to[cpu];
		__atomic_store_n(&control(cpu)->consumed, cr.stream_at[cpu].seq,
				 __ATOMIC_RELEASE);
	}
	return consumed;
}

const struct rt_sink rt_cpu_sink = {
	.name = "cpu",
	.tramps = ARCH_TRAMPS_CPU,
	.start = cpu_start,
	.detach = cpu_detach,
	.reserve = cpu_reserve,
	.commit = cpu_commit,
	.arm = cpu_arm,
	.fork_prepare = cpu_fork_nothing,
	.fork_parent = cpu_fork_nothing,
	.fork_child = cpu_fork_child,
	.finish = cpu_finish,
	.counters = cpu_counters,
	.memory = cpu_memory,
	.drain_begin = cpu_drain_begin,
	.drain_next = cpu_drain_next,
	.drain_end = cpu_drain_end,
	.stream_one = cpu_stream_one,
};
