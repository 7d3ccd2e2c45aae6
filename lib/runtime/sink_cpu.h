/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the files of the CPU-ring sink share, and no other part of the
 * runtime sees: the state of the rings, the drain's runs, and the helpers
 * that both the writer (sink_cpu_write.c, built without vector
 * registers) and the rest use, inline so that each gets its own copy.
 *
 * The CPU-ring sink: every thread appends to the ring of the CPU it runs
 * on, following the module's commit protocol (kernel-module.rst, "The
 * commit protocol"), so memory grows with CPUs, not threads.  The rings
 * have the module's layout (include/uapi/linux/xray_fdr.h).  Without the
 * module they live in memory this sink maps itself, with a header page of
 * its own; the layout, the writers and the drain are the same.
 *
 * The trampolines append plain function records, and custom and typed
 * events (ring.h); the controller stages anything else in the thread's
 * state, and commit copies it into the ring in one rseq critical section
 * that starts by checking the CPU and the commit word, and ends with the
 * store of the new commit word.
 * A commit that finds either changed is refused and the event made again.
 *
 * The files: sink_cpu_rings.c (mapping, notes, the view, start and fork),
 * sink_cpu_write.c (reserve, commit, arm: the recording path),
 * sink_cpu_drain.c (the drain), sink_cpu_stream.c (streaming).
 */
#ifndef XRAYFDR_LIB_RUNTIME_SINK_CPU_H
#define XRAYFDR_LIB_RUNTIME_SINK_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "logbuf.h"
#include "ring.h"
#include "sink.h"
#include "state.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE
#define SUBBUF_HDR ((uint32_t)sizeof(struct xray_fdr_subbuf))

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
	/* one of the kernel's records: its time, and the order of the
	 * thread's run it goes before (rt_cpu_sort_runs()) */
	bool kernel;
	uint64_t tsc;
	uint32_t before;
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
	/* the module's session, or our rings' memfd (another process may map
	 * it for a snapshot), or -1 for rings in private memory */
	int fd;
	bool module; /* fd is the module's */
	uint32_t session_id;
};

/*
 * A view of a set of rings (ring.h): the geometry the drain walks by
 * (@ring: the rings the sink writes, rt_ring, or @own), the memory the
 * view maps itself (none for the sink's own rings), whose log it is, and
 * the drain's memory.
 */
struct rt_cpu_view {
	const struct rt_ring *ring;
	struct rt_ring own;
	struct rings mem;
	unsigned int version;
	int32_t pid;
	uint64_t damaged;
	uint64_t cut; /* a copy's: sub-buffers written over as it copied */
	/* the drain */
	uint8_t *scratch; /* one log buffer being built */
	size_t capacity;
	struct run *runs;
	size_t runs_size; /* bytes mapped for runs */
};

/* The sink's state (sink_cpu_rings.c defines it). */
struct rt_cpu_state {
	struct rings now, previous;
	struct xray_fdr_header own_header;
	uint32_t gen;
	bool user_discard; /* what the user asked for (not streaming) */
	/* stretches are numbered in the order they begin, process-wide */
	uint32_t stretch_clock;
	/* streaming: where the writer is in each ring (stream_at), where its
	 * pass got to (stream_to), its runs and its log buffer */
	bool streaming;
	/* streaming: the sub-buffers of each ring that user writers leave
	 * to the kernel's records (sink_cpu_write.c, "The kernel's
	 * reserve") */
	uint32_t reserve;
	struct ring_pos *stream_at, *stream_to;
	struct run *stream_runs;
	size_t stream_max, stream_map_size;
	uint8_t *stream_scratch;
	size_t stream_capacity;
	uint64_t stream_damaged;
	struct rt_last_times stream_last; /* pass.last */
	/* the rings now in use, as the flush's drain reads them (its ring
	 * is rt_ring; the log's version and pid are the trace's) */
	struct rt_cpu_view live;
	/* the copy of them a snapshot in this process walks */
	struct rt_cpu_view snap;
};

/* hidden, as it was when static: the writer reaches it PC-relative, not
 * through the GOT (-fvisibility=hidden covers definitions only) */
extern struct rt_cpu_state rt_cpu __attribute__((visibility("hidden")));

static inline struct xray_fdr_control *area_control(const struct rt_ring *r,
						    uint32_t cpu)
{
	return (struct xray_fdr_control *)(r->areas +
					   (size_t)cpu * r->area_size);
}

static inline struct xray_fdr_subbuf *area_subbuf(const struct rt_ring *r,
						  uint32_t cpu, uint32_t idx)
{
	return (struct xray_fdr_subbuf *)((uint8_t *)area_control(r, cpu) +
					  RT_RING_CONTROL_SIZE +
					  ((size_t)idx << r->shift));
}

/* The writer's: the rings the sink writes in. */
static inline struct xray_fdr_control *control(uint32_t cpu)
{
	return area_control(&rt_ring, cpu);
}

static inline uint8_t *ring_of(uint32_t cpu)
{
	return (uint8_t *)control(cpu) + RT_RING_CONTROL_SIZE;
}

static inline struct xray_fdr_subbuf *subbuf(uint32_t cpu, uint32_t idx)
{
	return area_subbuf(&rt_ring, cpu, idx);
}

static inline uint64_t wall_ns(void)
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
static inline size_t record_len(const uint8_t *p, size_t left, bool *event)
{
	unsigned int kind;
	size_t len;

	*event = false;
	if (left < 8)
		return 0;
	if (!(p[0] & XRAY_FDR_REC_EXTENDED)) {
		/* a function record: only four of its eight actions exist */
		if (((p[0] >> 1) & 7) > XRAYFDR_FUNC_ENTRY_ARGS)
			return 0;
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

/* Did stretch @a begin before stretch @b?  (The clock wraps.) */
static inline bool stretch_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* The rings (sink_cpu_rings.c): the sink's operations of the same names
 * but start, which sets up the stream's memory after these rings. */
int rt_cpu_rings_start(const struct rt_options *o, size_t capacity,
		       uint32_t gen, pid_t pid, char *err, size_t errlen);
void rt_cpu_fork_nothing(void);
void rt_cpu_fork_child(uint32_t gen, pid_t pid);
void rt_cpu_finish(void);
void rt_cpu_release(void);
int rt_cpu_share(void);
/*
 * For a snapshot taken in this process (a trigger, xrayfdr_snapshot()):
 * the rings now in use copied as `xrayfdr snapshot` copies them from
 * outside (copy_area()), so no writer waits, into a mapping kept for the
 * next one.  The copy's view, or NULL with errno (ENODATA: no rings;
 * ENOMEM).
 */
struct rt_cpu_view *rt_cpu_snapshot_copy(void);
/* Its pages back to the system once its log is written (the mapping
 * stays for the next). */
void rt_cpu_snapshot_release(void);

/* The writer (sink_cpu_write.c): the sink's operations of the same names. */
enum rt_reserve rt_cpu_reserve(struct rt_thread *t, size_t need, uint64_t *tsc,
			       uint32_t cpu);
bool rt_cpu_commit(struct rt_thread *t, uint8_t *end, const void *payload,
		   size_t size);
uint32_t rt_cpu_arm(struct rt_thread *t);
void rt_cpu_detach(struct rt_thread *t);

/*
 * The drain orders a thread's own runs by its stretches, not by time:
 * the TSCs of two CPUs may disagree (a kernel that found them out of
 * sync), while each takeover of a ring's tail numbers a new stretch of
 * the thread (in its NewBuffer record, or in the user_data word of the
 * sub-buffer header it opened).  Within a stretch, the order is the
 * ring's.  The kernel's records of a thread, which need not be in a
 * ring the thread writes in, go by their time among its runs: before
 * the first run that begins after them (rt_cpu_sort_runs()).
 */
struct walk {
	struct run *out;
	size_t max, n;
	uint32_t order;
	uint64_t damaged;
	/* the stream's writer: stop at a stretch that began at @stop or
	 * later, at a kernel record at @stop_tsc or later, or before a
	 * sub-buffer that might not fit in @max */
	bool stream;
	uint32_t stop;
	uint64_t stop_tsc;
};

/* What a walk over sorted runs makes its log buffers from and in. */
struct pass {
	const struct rt_cpu_view *v; /* the rings the runs are in */
	const struct run *runs;
	uint8_t *scratch;
	size_t capacity;
	bool names_now; /* the flush's: and the names threads have now */
	/* the stream's: each thread's last time in the passes before (a
	 * record stamped before a kernel record an earlier pass took, and
	 * committed after it, is put at that time) */
	struct rt_last_times *last;
	bool remember; /* and this pass's times go into it */
};

/*
 * The drain (sink_cpu_drain.c): the runs of CPU @cpu's ring of view @v
 * into @w (rt_cpu_walk_ring()); the @n runs at @r in the flush's order,
 * in place, without allocation (rt_cpu_sort_runs()); the next log buffer
 * from sorted runs (rt_cpu_fill_chunk()); the counters of what a drain
 * reads (rt_cpu_counters()).
 */
void rt_cpu_walk_ring(const struct rt_cpu_view *v, uint32_t cpu, struct walk *w,
		      const struct ring_pos *from, struct ring_pos *to);
void rt_cpu_sort_runs(struct run *r, size_t n, unsigned int version);
bool rt_cpu_fill_chunk(struct rt_drain *d, const struct pass *ps,
		       struct rt_chunk *c);
void rt_cpu_drain_begin(struct rt_drain *d, bool wait);
bool rt_cpu_drain_next(struct rt_drain *d, struct rt_chunk *c);
void rt_cpu_drain_end(struct rt_drain *d);
void rt_cpu_counters(const struct rt_drain *d, struct rt_sink_counters *c);
/* The view a drain of this sink walks. */
struct rt_cpu_view *rt_cpu_drain_view(const struct rt_drain *d);
/* The sink's memory operation. */
const char *rt_cpu_memory(const struct rt_drain *d);

/* Streaming (sink_cpu_stream.c): the writer's memory for the rings now in
 * use; the sink's stream_one. */
int rt_cpu_stream_setup(size_t capacity, char *err, size_t errlen);
int rt_cpu_stream_one(int (*write)(void *ctx, const struct rt_chunk *c),
		      void *ctx);

#endif
