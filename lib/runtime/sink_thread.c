// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The thread-buffer sink: each thread fills one buffer of the shared queue
 * (bufq.h) at a time, starting with the preamble llvm-xray expects.  Its
 * fast path is the trampolines' FDR_FAST: it appends while t->pos <
 * t->end.  Record times are relative to the last NewCPUId or TSCWrap
 * (thread.h), and event payloads are padded to 8 bytes, so that the fast
 * path's records stay aligned after the thread's name (or any event); the
 * drain makes each buffer a log buffer (logbuf.h) in a scratch buffer of
 * its own, splitting it where the log's needs more room.
 *
 * This file holds the sink's start, its drain and streaming, which no
 * recording path calls, and its operations; the writer is
 * sink_thread_write.c, built without vector registers (see fdr.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "logbuf.h"
#include "sink_thread.h"
#include "state.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE

static uint8_t *scratch; /* the drain's log buffer */
static size_t scratch_size;
/* Streaming (q.keep_full): the writer's log buffer (the flush's may run
 * meanwhile, in a signal handler) */
static uint8_t *stream_scratch;
static size_t stream_scratch_size;
/* Snapshots: the copy of the queue, and their own log buffer (a fatal
 * signal's flush may run meanwhile) */
static struct rt_bufq snap;
static struct rt_last_times snap_last;
static uint8_t *snap_scratch;
static size_t snap_scratch_size;

/* This sink's part of a drain (rt_drain's sink_state): the buffers'
 * indexes, in the order they go out; where their log buffers are built;
 * the base of record times and the CPU at the drain's position; whether
 * the walk holds the queue's lock. */
struct thread_drain {
	const struct rt_bufq *q; /* the sink's queue, or a snapshot's copy */
	const uint32_t *order;
	uint8_t *scratch;
	size_t scratch_size;
	uint64_t base;
	uint32_t cpu;
	bool locked;
	/* where what the walk skips as written over is counted: the
	 * stream's writer has a count of its own */
	uint64_t *damaged;
	/* each thread's last time: its next buffer goes on from there
	 * (whether or not the TSCs of the CPUs it ran on agree) */
	struct rt_last_times *last;
};

_Static_assert(sizeof(struct thread_drain) <=
		       sizeof(((struct rt_drain *)0)->sink_state),
	       "a thread drain fits in rt_drain");

static struct thread_drain *own(struct rt_drain *d)
{
	return (struct thread_drain *)(void *)d->sink_state;
}

static int thread_start(const struct rt_options *o, size_t capacity,
			uint32_t gen, pid_t owner, char *err, size_t errlen)
{
	static struct rt_bufq previous;
	int ret;

	/* A thread may still be in the C path with a buffer of the last
	 * trace (not the fast path: the trace was quiesced), so its queue is
	 * not reused; it is released when the next trace starts. */
	if (rt_tsink.q.mem) {
		rt_bufq_destroy(&previous);
		previous = rt_tsink.q;
		madvise(previous.mem, previous.map_size, MADV_DONTNEED);
		memset(&rt_tsink.q, 0, sizeof(rt_tsink.q));
	}
	if (rt_logbuf_scratch(&scratch, &scratch_size, capacity)) {
		snprintf(err, errlen, "cannot map the drain's buffer");
		return -ENOMEM;
	}
	if (o->stream && rt_logbuf_scratch(&stream_scratch,
					   &stream_scratch_size, capacity)) {
		snprintf(err, errlen, "cannot map the stream's buffer");
		return -ENOMEM;
	}
	ret = rt_bufq_init(&rt_tsink.q, capacity, o->buffer_max);
	if (!ret && rt_last_times_init(&rt_tsink.last, o->buffer_max)) {
		rt_bufq_destroy(&rt_tsink.q);
		ret = -ENOMEM;
	}
	if (ret) {
		snprintf(err, errlen, "cannot map %llu buffers of %llu bytes",
			 (unsigned long long)o->buffer_max,
			 (unsigned long long)o->buffer_size);
		return ret;
	}
	rt_tsink.q.generation = gen;
	rt_tsink.q.keep_full = o->stream;
	rt_tsink.version = o->version;
	rt_tsink.damaged = 0;
	rt_tsink.stream_damaged = 0;
	rt_tsink.pid = (int32_t)owner;
	return 0;
}

/* The length of the record at @p with @left bytes from it, 0 if it makes
 * no sense there. */
static size_t record_len(const uint8_t *p, size_t left)
{
	uint32_t size;

	if (left < FN)
		return 0;
	if (!fdr_is_metadata(p[0], false))
		return FN;
	if (left < MD)
		return 0;
	switch (fdr_md_kind(p[0], false)) {
	case XRAYFDR_MD_NEW_CPU_ID:
	case XRAYFDR_MD_TSC_WRAP:
	case XRAYFDR_MD_CALL_ARGUMENT:
		return MD;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		size = get32(p + MD_OFF_BODY, false);
		return size && ALIGN8((size_t)size) <= left - MD ?
			       MD + ALIGN8((size_t)size) :
			       0;
	default:
		return 0;
	}
}

static void thread_drain_begin(struct rt_drain *d, bool wait)
{
	struct thread_drain *td = own(d);

	d->next = 0;
	d->count = 0;
	d->offset = 0;
	td->locked = false;
	d->name_pending = false;
	td->q = &rt_tsink.q;
	td->order = rt_tsink.q.order;
	td->scratch = scratch;
	td->scratch_size = scratch_size;
	rt_tsink.damaged = 0; /* what this drain's walk skips */
	td->damaged = &rt_tsink.damaged;
	/* (after the stream, its threads go on from their streamed times) */
	if (!rt_tsink.q.keep_full)
		rt_last_times_clear(&rt_tsink.last);
	td->last = &rt_tsink.last;
	if (!rt_tsink.q.mem)
		return;
	if (wait)
		rt_bufq_lock(&rt_tsink.q);
	td->locked = wait || rt_bufq_trylock(&rt_tsink.q);
	d->count = rt_bufq_sort(&rt_tsink.q);
}

/* The metadata record at @p into @o, or the base and CPU it sets into @d
 * (fill_chunk() writes the function records).  False if it does not
 * fit. */
static bool out_md(struct rt_logbuf *o, struct rt_drain *d, const uint8_t *p)
{
	struct thread_drain *td = own(d);
	struct xrayfdr_metadata md;

	switch (fdr_md_kind(p[0], false)) {
	case XRAYFDR_MD_NEW_CPU_ID:
	case XRAYFDR_MD_TSC_WRAP:
		fdr_decode_metadata(p, false, rt_tsink.version, &md);
		if (md.kind == XRAYFDR_MD_NEW_CPU_ID)
			td->cpu = md.cpu;
		td->base = md.tsc;
		return true;
	case XRAYFDR_MD_CALL_ARGUMENT:
		return rt_logbuf_argument(o, p);
	default:
		/* (record_len() checked the size) */
		return rt_logbuf_marker(o, td->cpu, td->base, p, p + MD,
					get32(p + MD_OFF_BODY, false));
	}
}

/* Is the record at @p a thread-name event of thread @tid?  Then it is the
 * name the buffer holds last. */
static bool saw_name(struct rt_drain *d, uint32_t tid, const uint8_t *p)
{
	return fdr_md_kind(p[0], false) == XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
	       rt_logbuf_own_name(p + MD, get32(p + MD_OFF_BODY, false), tid,
				  d->name);
}

/* The next log buffer, from the drain's position: one queue buffer, or
 * its part that fits, or the name its live thread has now (when that did
 * not fit after its records).  False if it holds no event. */
static bool fill_chunk(struct rt_drain *d, struct rt_chunk *c)
{
	struct thread_drain *td = own(d);
	const struct rt_buf *b = &td->q->bufs[td->order[d->next]];
	bool bad = false;
	size_t used = rt_bufq_used(td->q, b, &bad),
	       preamble = fdr_preamble_size(rt_tsink.version);
	/* its thread is still there: the flush is the last chance to see a
	 * rename since the buffer began */
	bool live = b->state == RT_BUF_ACTIVE &&
		    __atomic_load_n(&b->owner_pos, __ATOMIC_ACQUIRE);
	struct rt_logbuf o;
	uint64_t names = 0; /* the buffer's own thread-name events */
	bool any = false;
	int ret;

	rt_logbuf_init(&o, td->scratch, td->scratch_size, rt_tsink.version,
		       d->trace->threshold_ticks);
	o.monotonic = true;
	o.last = rt_last_times_get(td->last, b->tid);
	/* A buffer is published with its preamble before its first record
	 * is: one read then (a fatal signal's flush while its thread is in
	 * the C path) has no record yet. */
	if (used <= preamble || !fdr_is_metadata(b->data[0], false) ||
	    fdr_md_kind(b->data[0], false) != XRAYFDR_MD_NEW_BUFFER) {
		/* (the process wrote over its length, its owner's position
		 * or its preamble) */
		*td->damaged += bad || used > preamble;
		d->offset = used;
		goto done;
	}
	memcpy(o.p, b->data, preamble);
	o.p += preamble;
	if (d->name_pending) {
		d->name_pending = false;
		any = rt_logbuf_name_now(&o, d->name_cpu, d->name_tsc, b->tid,
					 rt_drain_last_name(d)) > 0;
		goto done;
	}
	if (!d->offset) {
		d->offset = preamble;
		td->cpu = UINT32_MAX; /* a NewCPUId comes first */
		td->base = 0;
		d->name[0] = '\0';
	}
	while (d->offset < used) {
		const uint8_t *p = b->data + d->offset;
		size_t len;
		uint8_t *before = o.p;
		uint64_t w;

		/* mostly function records: those without a detour */
		if (used - d->offset >= FN && !(p[0] & 1)) {
			__builtin_memcpy(&w, p, sizeof(w));
			if (!rt_logbuf_function(&o, td->cpu,
						td->base + (w >> 32),
						(uint32_t)w)) {
				if (!any) /* (cannot be: it would fit) */
					d->offset += FN;
				goto split;
			}
			any = true;
			d->offset += FN;
			continue;
		}
		len = record_len(p, used - d->offset);
		if (!len) {
			++*td->damaged; /* (the process wrote over it) */
			d->offset = used;
			break;
		}
		if (!out_md(&o, d, p)) {
			if (!any) /* larger than a whole buffer */
				d->offset += len;
			goto split;
		}
		any = any || o.p != before;
		names += saw_name(d, b->tid, p);
		d->offset += len;
	}
	/* (a buffer with nothing left in it has nothing to name) */
	if (live && o.cpu != UINT32_MAX) {
		ret = rt_logbuf_name_now(&o, o.cpu, o.last, b->tid,
					 rt_drain_last_name(d));
		if (ret < 0) {
			d->name_pending = true;
			d->name_cpu = o.cpu;
			d->name_tsc = o.last;
			goto split;
		}
	}
done:
	d->next++;
	d->offset = 0;
split:
	rt_last_times_put(td->last, b->tid, o.last);
	c->data = td->scratch;
	c->used = (size_t)(o.p - td->scratch);
	c->events = o.events;
	/* a buffer whose calls were all rewound is left out, its name too */
	return any && o.events > names;
}

static bool thread_drain_next(struct rt_drain *d, struct rt_chunk *c)
{
	while (own(d)->scratch && d->next < d->count)
		if (fill_chunk(d, c))
			return true;
	return false;
}

/*
 * Copy the buffers of @q that hold records into @to (mapped with @q's
 * geometry) while @q's threads go on writing.  Each buffer is copied as
 * it is when the copy reaches it, up to its owner's last published record
 * (never a record half written).  The lock is held only to learn how
 * much to copy, not for the copy: a thread that needs a buffer meanwhile
 * never waits for one (nor for a snapshotting thread preempted in the
 * middle of one).  A buffer recycled since the copy began is left out:
 * rt_bufq_acquire() gives it a new seq, under the lock, before its new
 * owner writes in it, and x86 keeps stores in order, so a seq that is
 * the same after the copy means the copy holds the records it had.  The
 * copies are FULL, @to->order lists them by seq; return how many.  (Not
 * in bufq.c: the recording path's objects call no memcpy.)
 */
static size_t copy_queue(struct rt_bufq *q, struct rt_bufq *to)
{
	size_t n, kept = 0;

	if (to->count < q->count || to->capacity < q->capacity)
		return 0;
	/* (q->order is a flush's: one in a signal handler may use it) */
	rt_bufq_lock(q);
	n = rt_bufq_order(q, to->order);
	for (size_t i = 0; i < n; i++)
		to->bufs[i].seq = q->bufs[to->order[i]].seq;
	rt_bufq_unlock(q);
	for (size_t i = 0; i < n; i++) {
		const struct rt_buf *b = &q->bufs[to->order[i]];
		struct rt_buf *c = &to->bufs[kept];
		uint64_t seq = to->bufs[i].seq;
		size_t used = 0;
		uint32_t tid = 0;

		rt_bufq_lock(q);
		if (b->seq == seq &&
		    (b->state == RT_BUF_FULL || b->state == RT_BUF_ACTIVE ||
		     b->state == RT_BUF_WRITING)) {
			used = rt_bufq_used(q, b, NULL);
			tid = b->tid;
		}
		rt_bufq_unlock(q);
		if (!used)
			continue; /* recycled since the sort: gone */
		memcpy(c->data, b->data, used);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&b->seq, __ATOMIC_RELAXED) != seq)
			continue; /* recycled during the copy */
		c->tid = tid;
		c->seq = seq;
		c->used = used;
		c->owner_pos = NULL;
		c->state = RT_BUF_FULL;
		kept++;
	}
	for (size_t i = 0; i < kept; i++)
		to->order[i] = (uint32_t)i;
	for (size_t i = kept; i < to->count; i++)
		to->bufs[i].state = RT_BUF_FREE;
	return kept;
}

static int thread_snapshot_begin(struct rt_drain *d)
{
	struct thread_drain *td = own(d);
	const struct rt_bufq *q = &rt_tsink.q;

	if (!q->mem)
		return -ENODATA;
	if (snap.count != q->count || snap.capacity != q->capacity) {
		rt_bufq_destroy(&snap);
		if (rt_bufq_init(&snap, q->capacity, q->count))
			return -ENOMEM;
	}
	if (rt_logbuf_scratch(&snap_scratch, &snap_scratch_size, q->capacity) ||
	    rt_last_times_init(&snap_last, q->count))
		return -ENOMEM;
	d->next = 0;
	d->offset = 0;
	d->name_pending = false;
	*td = (struct thread_drain){ .q = &snap,
				     .order = snap.order,
				     .scratch = snap_scratch,
				     .scratch_size = snap_scratch_size,
				     .damaged = &rt_tsink.damaged,
				     .last = &snap_last };
	rt_tsink.damaged = 0; /* what this walk skips, as a drain's */
	d->count = copy_queue(&rt_tsink.q, &snap);
	return 0;
}

static void thread_snapshot_end(void)
{
	if (snap.mem)
		madvise(snap.mem, snap.map_size, MADV_DONTNEED);
}

static void thread_drain_end(struct rt_drain *d)
{
	if (own(d)->locked)
		rt_bufq_unlock(&rt_tsink.q);
	own(d)->locked = false;
}

static int thread_stream_one(int (*write)(void *ctx, const struct rt_chunk *c),
			     void *ctx)
{
	struct rt_buf *b = rt_bufq_take_full(&rt_tsink.q);
	struct rt_drain d = { .trace = &rt_live, /* only it streams */
			      .count = 1 };
	struct rt_chunk c;
	uint32_t index;
	int ret = 0;

	if (!b)
		return 0;
	index = (uint32_t)(b - rt_tsink.q.bufs);
	*own(&d) = (struct thread_drain){ .q = &rt_tsink.q,
					  .order = &index,
					  .scratch = stream_scratch,
					  .scratch_size = stream_scratch_size,
					  .damaged = &rt_tsink.stream_damaged,
					  .last = &rt_tsink.last };
	while (!ret && thread_drain_next(&d, &c))
		ret = write(ctx, &c);
	rt_bufq_release(&rt_tsink.q, b);
	return ret ? ret : 1;
}

/* The sleds call FDR_FAST (trampolines.S), which appends to t->pos. */
static const struct arch_tramps thread_tramps = {
	.entry = rt_tramp_entry,
	.exit = rt_tramp_exit,
	.tail = rt_tramp_tail,
	.args = rt_tramp_args,
};

static void thread_release(void)
{
	if (rt_tsink.q.mem)
		madvise(rt_tsink.q.mem, rt_tsink.q.map_size, MADV_DONTNEED);
}

const struct rt_sink rt_thread_sink = {
	.name = "thread",
	.tramps = &thread_tramps,
	.start = thread_start,
	.detach = rt_thread_detach,
	.reserve = rt_thread_reserve,
	.commit = rt_thread_commit,
	.arm = rt_thread_arm,
	.fork_prepare = rt_thread_fork_prepare,
	.fork_parent = rt_thread_fork_parent,
	.fork_child = rt_thread_fork_child,
	.counters = rt_thread_counters,
	.drain_begin = thread_drain_begin,
	.drain_next = thread_drain_next,
	.drain_end = thread_drain_end,
	.snapshot_begin = thread_snapshot_begin,
	.snapshot_end = thread_snapshot_end,
	.drain_locks = true,
	.fast_events = RT_FAST_EVENTS_BUFFER,
	.stream_one = thread_stream_one,
	.release = thread_release,
};
