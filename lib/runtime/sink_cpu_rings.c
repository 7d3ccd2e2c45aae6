// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink's rings: mapping them (the module's session, or rings
 * in the runtime's own memory with a header of its own), the notes a dump
 * of the session needs, the read-only view dump.c reads another process's
 * session through, and the sink's life around the writers (start, fork,
 * finish, counters).  sink_cpu.c gathers the sink's operations.
 *
 * No recording path calls this file: it is built normally and may use the
 * C library.
 *
 * Rings of our own are in a sealed memfd, laid out as the module's
 * mapping (the header page, then the CPU areas), so that `xrayfdr
 * snapshot` can map them from outside through the control channel
 * (rt_cpu_share()); in private memory where memfd_create() is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "logbuf.h"
#include "objects.h"
#include "sink_cpu.h"

struct rt_ring rt_ring;
struct rt_cpu_state rt_cpu = {
	.now = { .fd = -1 },
	.previous = { .fd = -1 },
	.live = { .ring = &rt_ring, .mem = { .fd = -1 } },
	.snap = { .ring = &rt_cpu.snap.own, .mem = { .fd = -1 } }
};

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
	if (r->header && r->header != (uint8_t *)&rt_cpu.own_header)
		munmap(r->header, r->header_size);
	if (r->areas)
		munmap(r->areas, r->areas_size);
	if (r->fd >= 0)
		close(r->fd);
	*r = (struct rings){ .fd = -1 };
}

/* The geometry of the rings @r maps (its header checked) into @g. */
static void geometry(struct rt_ring *g, const struct rings *r)
{
	const struct xray_fdr_header *h = (const void *)r->header;

	*g = (struct rt_ring){
		.areas = r->areas,
		.area_size = h->area_size,
		.header = h,
		.ncpus = h->nr_cpus,
		.subbuf_size = h->subbuf_size,
		.subbuf_count = h->subbuf_count,
		.shift = (uint32_t)__builtin_ctz(h->subbuf_size),
		.discard = h->geom_flags & XRAY_FDR_GEOM_DISCARD,
		.slot_room = h->subbuf_size - SUBBUF_HDR - FN,
		.size = (uint64_t)h->subbuf_size * h->subbuf_count,
	};
}

/* Point the fast path and the rest of this file at @r. */
static void rings_use(const struct rings *r)
{
	geometry(&rt_ring, r);
}

/*
 * The header page and the areas in a memfd of @areas_size bytes after
 * the header page, sealed against shrinking (a reader's mapping never
 * faults past its end) and growing.  0, or -1 to use private memory.
 */
static int shared_rings(struct rings *r)
{
	off_t len = (off_t)(RT_RING_CONTROL_SIZE + r->areas_size);

	r->fd = memfd_create("xrayfdr-rings", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0)
		return -1;
	if (ftruncate(r->fd, len) ||
	    fcntl(r->fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	r->header_size = RT_RING_CONTROL_SIZE;
	r->header = mmap(NULL, r->header_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, r->fd, 0);
	if (r->header == MAP_FAILED) {
		r->header = NULL;
		goto fail;
	}
	r->areas = mmap(NULL, r->areas_size, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_NORESERVE, r->fd,
			RT_RING_CONTROL_SIZE);
	if (r->areas == MAP_FAILED) {
		r->areas = NULL;
		goto fail;
	}
	return 0;
fail:
	if (r->header)
		munmap(r->header, r->header_size);
	close(r->fd);
	r->header = NULL;
	r->fd = -1;
	return -1;
}

/* Rings of our own, with the module's layout and a header of ours. */
static int own_rings(struct rings *r, uint32_t ncpus, uint32_t size,
		     uint32_t count, uint32_t flags)
{
	uint64_t area = RT_RING_CONTROL_SIZE + (uint64_t)size * count;

	*r = (struct rings){ .fd = -1 };
	r->areas_size = (size_t)(area * ncpus);
	if (shared_rings(r)) {
		r->areas = mmap(NULL, r->areas_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
				0);
		if (r->areas == MAP_FAILED) {
			r->areas = NULL;
			return -ENOMEM;
		}
		r->header = (uint8_t *)&rt_cpu.own_header;
	}
	*(struct xray_fdr_header *)r->header = (struct xray_fdr_header){
		.magic = XRAY_FDR_MAGIC,
		.abi_version = XRAY_FDR_ABI_VERSION,
		.header_size = sizeof(struct xray_fdr_header),
		.page_size = RT_RING_CONTROL_SIZE,
		.nr_cpus = ncpus,
		.geom_flags = flags,
		.subbuf_size = size,
		.subbuf_count = count,
		.control_size = RT_RING_CONTROL_SIZE,
		.area_offset = RT_RING_CONTROL_SIZE,
		.area_size = area,
		.state = XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_ENABLED,
		.owner_pid = (uint32_t)getpid(),
		.owner_uid = (uint32_t)geteuid(),
	};
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
	if (r->fd < 0) {
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
			return -ENODEV;
		ret = -errno;
		/* the administrator may keep the device to a group */
		snprintf(
			err, errlen, "cannot open %s: %s%s", o->device,
			strerror(errno),
			ret == -EACCES ?
				" (its mode and group say who may: kernel-module.rst)" :
				"");
		return ret;
	}
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
	r->module = true;
	rings_use(r);
	return 0;
fail:
	ret = -errno;
	snprintf(
		err, errlen, "%s: %s refused: %s%s", o->device, what,
		strerror(errno),
		(ret == -ENOSPC || ret == -EDQUOT) && o->keep &&
				!strcmp(what, "XRAY_FDR_IOC_KEEP") ?
			" (too many sessions are kept: xrayfdr-ctl list shows them, drop frees them; the last keep slots are root's)" :
			"");
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

size_t rt_cpu_notes(const struct rt_cpu_view *v, char *out, size_t size)
{
	const struct rt_ring *g = v->ring;
	size_t n = 0;

	for (uint32_t c = 0; g->header && c < g->ncpus; c++) {
		const uint8_t *free_part =
			(const uint8_t *)area_control(g, c) + RT_NOTES_OFFSET;

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

/*
 * Is the header @h a layout this reader can follow within @file_size bytes
 * (0: the module's file, whose size says nothing)?  A process's own rings
 * come from that process: every field is checked.
 */
static bool view_layout_ok(const struct xray_fdr_header *h, off_t file_size)
{
	uint64_t area = RT_RING_CONTROL_SIZE +
			(uint64_t)h->subbuf_size * h->subbuf_count;

	if (h->magic != XRAY_FDR_MAGIC ||
	    h->control_size != RT_RING_CONTROL_SIZE || !h->nr_cpus ||
	    h->nr_cpus > 65536 || h->subbuf_size < XRAY_FDR_SUBBUF_MIN_SIZE ||
	    h->subbuf_size > (1u << 30) ||
	    (h->subbuf_size & (h->subbuf_size - 1)) || h->subbuf_count < 2 ||
	    h->subbuf_count > 65536 || h->area_size != area ||
	    h->area_offset != RT_RING_CONTROL_SIZE)
		return false;
	return !file_size ||
	       (uint64_t)file_size >= h->area_offset + area * h->nr_cpus;
}

/* The largest rings of a process's own that a view copies. */
static size_t view_copy_max(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return (size_t)1 << 30;
	return (size_t)pages * (size_t)size / 2;
}

struct rt_cpu_view *rt_cpu_live(void)
{
	return &rt_cpu.live;
}

const struct xray_fdr_header *rt_cpu_view_header(const struct rt_cpu_view *v)
{
	return v->ring->header;
}

void rt_cpu_view_close(struct rt_cpu_view *v)
{
	if (!v || v == &rt_cpu.live)
		return;
	rings_free(&v->mem);
	if (v->scratch)
		munmap(v->scratch, v->capacity);
	if (v->runs)
		munmap(v->runs, v->runs_size);
	free(v);
}

/* A view of nothing yet, its memory its own. */
static struct rt_cpu_view *view_new(void)
{
	struct rt_cpu_view *v = calloc(1, sizeof(*v));

	if (v) {
		v->mem.fd = -1;
		v->ring = &v->own;
	}
	return v;
}

/* The rings of @fd into the new view @v (@err). */
static int view_map(struct rt_cpu_view *v, int fd, char *err, size_t errlen)
{
	struct rings *r = &v->mem;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	void *live;
	int ret;

	if (fstat(fd, &st))
		return -errno;
	/* the module's, or a process's memfd (sealed: it cannot shrink
	 * under this mapping and fault in the middle of a copy) */
	r->module = S_ISCHR(st.st_mode);
	if (!r->module && (!S_ISREG(st.st_mode) ||
			   !(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK))) {
		snprintf(err, errlen,
			 "not the module's session, nor sealed rings");
		return -EPROTO;
	}
	/* a copy of the header: what is checked is what is used */
	r->header_size = (size_t)page;
	r->header = mmap(NULL, r->header_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	live = r->header == MAP_FAILED ?
		       MAP_FAILED :
		       mmap(NULL, r->header_size, PROT_READ, MAP_SHARED, fd, 0);
	if (live == MAP_FAILED) {
		ret = -errno;
		if (r->header == MAP_FAILED)
			r->header = NULL;
		snprintf(err, errlen, "cannot map the session's header: %s",
			 strerror(-ret));
		rings_free(r);
		return ret;
	}
	memcpy(r->header, live, r->header_size);
	munmap(live, r->header_size);
	if (!view_layout_ok((const void *)r->header,
			    r->module ? 0 : st.st_size)) {
		snprintf(err, errlen, "the session's header makes no sense");
		rings_free(r);
		return -EPROTO;
	}
	r->areas_size =
		(size_t)(((const struct xray_fdr_header *)r->header)->area_size *
			 ((const struct xray_fdr_header *)r->header)->nr_cpus);
	/* A process's own rings are copied whole into this process, which
	 * may be root's: a sparse memfd must not make it take all memory. */
	if (!r->module && r->areas_size > view_copy_max()) {
		snprintf(
			err, errlen,
			"the rings are %zu MiB, more than half of this machine's memory (%zu MiB): not copied",
			r->areas_size >> 20, view_copy_max() >> 20);
		rings_free(r);
		return -EFBIG;
	}
	r->areas = mmap(NULL, r->areas_size, PROT_READ, MAP_SHARED, fd,
			RT_RING_CONTROL_SIZE);
	if (r->areas == MAP_FAILED) {
		ret = -errno;
		r->areas = NULL;
		snprintf(err, errlen, "cannot map the session's rings: %s",
			 strerror(-ret));
		rings_free(r);
		return ret;
	}
	r->fd = dup(fd); /* (whose rings, for the info event) */
	geometry(&v->own, r);
	return 0;
}

int rt_cpu_view_open(int fd, struct rt_cpu_view **out, char *err, size_t errlen)
{
	struct rt_cpu_view *v = view_new();
	int ret;

	*out = NULL;
	if (!v) {
		snprintf(err, errlen, "no memory for a view of the rings");
		return -ENOMEM;
	}
	ret = view_map(v, fd, err, errlen);
	if (ret) {
		rt_cpu_view_close(v);
		return ret;
	}
	*out = v;
	return 0;
}

/*
 * Copy CPU @cpu's area from @src (rings being written) to @dst; return
 * the sub-buffers cut.  The open sub-buffer is found from a commit word
 * read twice around its sequence number, both in it: its records up to
 * the second are committed, and that sequence number was the open one's
 * then.  After the copy, with the loads ordered, each sub-buffer's
 * sequence number is read again: writers store it first when they open
 * one, so one unchanged, and the one the ring's order expects, was not
 * written over while it was copied.  The others get an empty header in
 * the copy (the walk then finds nothing there, not damage).  A ring whose
 * open sub-buffer was taken over is cut whole.
 */
static uint64_t copy_area(const struct rt_ring *g, uint32_t cpu,
			  const uint8_t *src, uint8_t *dst)
{
	const struct xray_fdr_control *sctl = (const void *)src;
	struct xray_fdr_control *dctl = (void *)dst;
	const uint8_t *sring = src + RT_RING_CONTROL_SIZE;
	uint8_t *dring = dst + RT_RING_CONTROL_SIZE;
	uint32_t count = g->subbuf_count, shift = g->shift;
	uint32_t off = 0, open = 0;
	uint64_t commit = 0, open_seq = 0, cut = 0;
	bool found = false, lapped;

	/* the writer moves on once a sub-buffer: a few tries suffice */
	for (int tries = 0; tries < 64 && !found; tries++) {
		uint64_t again;

		commit = __atomic_load_n(&sctl->commit, __ATOMIC_ACQUIRE);
		off = XRAY_FDR_COMMIT_OFFSET(commit);
		if (!off || off > g->size || off % 8)
			break; /* (the walk counts it as damaged) */
		open = (off - 1) >> shift;
		open_seq = __atomic_load_n(
			&((const struct xray_fdr_subbuf *)(sring + ((size_t)open
								    << shift)))
				 ->seq,
			__ATOMIC_ACQUIRE);
		again = __atomic_load_n(&sctl->commit, __ATOMIC_ACQUIRE);
		found = XRAY_FDR_COMMIT_OFFSET(again) &&
			(XRAY_FDR_COMMIT_OFFSET(again) - 1) >> shift == open &&
			XRAY_FDR_COMMIT_OFFSET(again) <= g->size &&
			!(XRAY_FDR_COMMIT_OFFSET(again) % 8);
		if (found)
			commit = again;
	}
	memcpy(dring, sring, g->size);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(dst, src, RT_RING_CONTROL_SIZE); /* counters and notes, now */
	dctl->commit = commit;
	if (!off || off > g->size || off % 8)
		return 0;
	lapped = !found;
	for (uint32_t k = 0; k < count && k <= open_seq; k++) {
		uint32_t idx = (open + count - k) % count;
		size_t at = (size_t)idx << shift;
		const struct xray_fdr_subbuf *ssb = (const void *)(sring + at);
		struct xray_fdr_subbuf *dsb = (void *)(dring + at);
		uint64_t want = open_seq - k;

		if (!lapped && dsb->seq == want &&
		    __atomic_load_n(&ssb->seq, __ATOMIC_RELAXED) == want)
			continue;
		if (!k)
			lapped = true;
		*dsb = (struct xray_fdr_subbuf){ .seq = want,
						 .used = SUBBUF_HDR,
						 .cpu = cpu };
		cut++;
	}
	if (lapped) /* nothing of it: an empty ring */
		dctl->commit = XRAY_FDR_COMMIT(0, ((uint64_t)open << shift) +
							  SUBBUF_HDR);
	return cut;
}

/*
 * Copy the rings @g, being written, whose header is @header_size bytes,
 * into private memory @to (kept if it has their size already: a
 * snapshot's, for the next); the sub-buffers cut into *@cut.  Return 0
 * or -ENOMEM.
 */
static int copy_rings(const struct rt_ring *g, size_t header_size,
		      struct rings *to, uint64_t *cut)
{
	size_t areas_size = (size_t)(g->area_size * g->ncpus);

	if (!to->areas || to->areas_size != areas_size ||
	    to->header_size != header_size) {
		rings_free(to);
		to->header = mmap(NULL, header_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		to->areas = mmap(NULL, areas_size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		if (to->header == MAP_FAILED)
			to->header = NULL;
		if (to->areas == MAP_FAILED)
			to->areas = NULL;
		to->header_size = header_size;
		to->areas_size = areas_size;
		if (!to->header || !to->areas) {
			rings_free(to);
			return -ENOMEM;
		}
	}
	memcpy(to->header, g->header, header_size);
	*cut = 0;
	for (uint32_t c = 0; c < g->ncpus; c++)
		*cut += copy_area(g, c, g->areas + (size_t)c * g->area_size,
				  to->areas + (size_t)c * g->area_size);
	return 0;
}

int rt_cpu_view_copy(struct rt_cpu_view *v, char *err, size_t errlen)
{
	struct rings *r = &v->mem;
	struct rings copy = { .fd = -1 };
	uint64_t cut;

	if (copy_rings(v->ring, r->header_size, &copy, &cut)) {
		snprintf(err, errlen, "cannot map %zu bytes for the copy",
			 r->areas_size);
		return -ENOMEM;
	}
	copy.fd = r->fd; /* (now the copy's) */
	copy.module = r->module;
	r->fd = -1;
	rings_free(r);
	*r = copy;
	geometry(&v->own, r);
	v->cut = cut;
	return 0;
}

struct rt_cpu_view *rt_cpu_snapshot_copy(void)
{
	struct rt_cpu_view *v = &rt_cpu.snap;
	/* (no header page of its own: rings in private memory) */
	size_t header_size = rt_cpu.now.header_size ?
				     rt_cpu.now.header_size :
				     sizeof(struct xray_fdr_header);
	uint64_t cut;

	if (!rt_ring.header) {
		errno = ENODATA;
		return NULL;
	}
	if (copy_rings(&rt_ring, header_size, &v->mem, &cut) ||
	    rt_cpu_view_setup(v, rt_cpu.live.version, rt_cpu.live.capacity,
			      rt_cpu.live.pid)) {
		errno = ENOMEM;
		return NULL;
	}
	v->mem.module = rt_cpu.now.module;
	geometry(&v->own, &v->mem);
	v->cut = cut;
	return v;
}

void rt_cpu_snapshot_release(void)
{
	struct rings *r = &rt_cpu.snap.mem;

	if (r->areas)
		madvise(r->areas, r->areas_size, MADV_DONTNEED);
}

int rt_cpu_view_setup(struct rt_cpu_view *v, unsigned int version,
		      size_t capacity, pid_t pid)
{
	if (rt_logbuf_scratch(&v->scratch, &v->capacity, capacity))
		return -ENOMEM;
	v->version = version;
	v->pid = (int32_t)pid;
	v->damaged = 0;
	return 0;
}

/*
 * Sub-buffers a CPU's ring gets.  A buffer_max the user gave is shared out
 * among the CPUs, so the memory is what thread mode's queue would take.
 * By default each ring gets thread mode's whole default, as long as all
 * of them stay within RT_CPU_DEFAULT_BYTES: a thread that keeps to one
 * CPU (a single-threaded program) then keeps the history thread mode
 * would give it, on machines of up to RT_CPU_DEFAULT_BYTES / 16 MiB CPUs.
 */
static uint32_t default_count(const struct rt_options *o, uint32_t ncpus,
			      uint32_t size)
{
	uint64_t count = o->buffer_max / ncpus, most;

	if (!o->buffer_max_set) {
		most = RT_CPU_DEFAULT_BYTES / ((uint64_t)size * ncpus);
		if (most > o->buffer_max)
			most = o->buffer_max;
		if (most > count)
			count = most;
	}
	return count < 2 ? 2 : (uint32_t)count;
}

/*
 * Rings for a new trace (streaming set up by the caller): the module's when it answers (mode=auto or cpu),
 * else ours (mode=cpu).  The sub-buffer is buffer_size rounded up to a
 * power of two from 4 KiB; default_count() says how many a CPU gets.
 * Return 0; -ENODEV for mode=auto without the module; another negative
 * errno, with @err, when the module refused.
 */
int rt_cpu_rings_start(const struct rt_options *o, size_t capacity,
		       uint32_t gen, pid_t pid, char *err, size_t errlen)
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
	count = default_count(o, ncpus ? ncpus : 1, size);
	/* streaming, one is the kernel's reserve (sink_cpu_write.c) */
	if (o->stream && count < 3)
		count = 3;
	if (rt_logbuf_scratch(&rt_cpu.live.scratch, &rt_cpu.live.capacity,
			      capacity)) {
		snprintf(err, errlen, "cannot map %zu bytes", capacity);
		return -ENOMEM;
	}
	rt_cpu.streaming = false;
	rt_last_times_clear(&rt_cpu.stream_last);
	rt_cpu.reserve = 0;
	/* A thread may still be in the C path of the last trace: its rings
	 * go when the next trace starts. */
	rings_free(&rt_cpu.previous);
	rt_cpu.previous = rt_cpu.now;
	rt_cpu.now = (struct rings){ .fd = -1 };
	memset(&rt_ring, 0, sizeof(rt_ring));
	ret = module_rings(&rt_cpu.now, o, size, count, flags, err, errlen);
	if (ret == -ENODEV) {
		snprintf(err, errlen, "no %s", o->device);
		if (o->record_mode == RT_MODE_CPU) {
			ret = own_rings(&rt_cpu.now, ncpus, size, count, flags);
			if (ret)
				snprintf(
					err, errlen,
					"cannot map %u CPU rings of %u sub-buffers of %u bytes",
					ncpus, count, size);
		}
	}
	if (ret)
		return ret;
	rt_cpu.gen = gen;
	rt_cpu.live.version = o->version;
	rt_cpu.live.pid = (int32_t)pid;
	rt_cpu.live.damaged = 0;
	rt_cpu.user_discard = o->discard;
	write_notes(o, pid);
	if (o->keep && rt_cpu.now.fd >= 0)
		pr_warn("session %u is kept if this process dies: xrayfdr-ctl dump %u -o FILE writes its log\n",
			rt_cpu.now.session_id, rt_cpu.now.session_id);
	return 0;
}

void rt_cpu_fork_nothing(void)
{
}

/* The child writes a log of its own, into rings of its own: the
 * module's session, or the memfd the parent shares, is the parent's, not
 * the child's to write. */
void rt_cpu_fork_child(uint32_t gen, pid_t pid)
{
	uint32_t flags = rt_cpu.user_discard ? XRAY_FDR_GEOM_DISCARD : 0;

	rt_cpu.live.pid = (int32_t)pid;
	rt_cpu.gen = gen;
	rt_cpu.live.damaged = 0;
	rt_cpu.streaming = false; /* (the writer is the parent's) */
	rt_cpu.reserve = 0;
	if (!rt_ring.header)
		return;
	if (rt_cpu.now.fd >= 0) {
		struct xray_fdr_header h = *rt_ring.header;

		rings_free(&rt_cpu.now);
		rings_free(&rt_cpu.previous);
		memset(&rt_ring, 0, sizeof(rt_ring));
		own_rings(&rt_cpu.now, h.nr_cpus, h.subbuf_size, h.subbuf_count,
			  flags);
		return;
	}
	rt_cpu.own_header.geom_flags = flags;
	rings_use(&rt_cpu.now);
	for (uint32_t c = 0; c < rt_ring.ncpus; c++)
		ring_init(c);
}

/* The module stops writing scheduler records into the rings, and no
 * kernel write is in progress once this returns. */
void rt_cpu_finish(void)
{
	if (rt_cpu.now.module)
		ioctl(rt_cpu.now.fd, XRAY_FDR_IOC_FREEZE);
}

void rt_cpu_release(void)
{
	struct rings *r = &rt_cpu.now;

	/* the memfd's pages go with a hole punched in it; the module's
	 * session ends when its mapping goes, at the next start */
	if (r->fd >= 0 && !r->module && r->areas)
		madvise(r->areas, r->areas_size, MADV_REMOVE);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	rings_free(&rt_cpu.previous);
}

int rt_cpu_share(void)
{
	return rt_cpu.now.module ? -1 : rt_cpu.now.fd;
}
