// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink's drain: the rings, read back into the buffers of a
 * standard FDR log, for the flush, the emergency flush, LLVM's buffer
 * iterator and dumps of a kept session.  Not on the recording path: built
 * normally.
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
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "logbuf.h"
#include "sink_cpu.h"

/*
 * The drain.  Each ring is read from its oldest surviving sub-buffer to
 * the open one, checking everything (the process can write anywhere in
 * its rings), and cut into runs: stretches of one thread's records.  The
 * runs are sorted by thread, then time, and each thread's become log
 * buffers of its own, with NewCPUId where the CPU changes, TSCWrap where
 * a delta does not fit, and the times made relative to the record before.
 */

/* The scheduler's records of a thread of the runtime's own, in the
 * rings of this process's trace (state.h): left out. */
static bool internal(uint32_t tid)
{
	return rt_cpu.pid == rt_live.pid && rt_internal_thread(tid);
}

static void add_run(struct walk *w, const struct run *r)
{
	if (w->n < w->max) {
		w->out[w->n] = *r;
		w->out[w->n].order = w->order;
	}
	w->n++;
	w->order++;
}

#define SCHED_OFF_TID offsetof(struct xray_fdr_sched_record, tid)
#define SCHED_OFF_TSC offsetof(struct xray_fdr_sched_record, tsc)

/*
 * May the stream's pass take the extended record at @p (@len bytes, of
 * @kind) and what follows it in its ring?  Not a stretch that began
 * after the pass read the clock: the thread's records in other rings
 * may not all be committed.  Nor a kernel record stamped after the pass
 * began: the thread's records before it, in the ring it left, were
 * perhaps committed after that ring was read (that the TSCs of the
 * CPUs agree is assumed here, and here only).
 */
static bool stream_takes(const struct walk *w, const uint8_t *p, size_t len,
			 unsigned int kind)
{
	if (kind == XRAYFDR_MD_NEW_BUFFER)
		return stretch_before(get32(p + RT_STRETCH_OFF, false),
				      w->stop);
	return len < sizeof(struct xray_fdr_sched_record) ||
	       get64(p + SCHED_OFF_TSC, false) < w->stop_tsc;
}

/*
 * The runs of CPU @cpu's ring, from its oldest surviving record or from
 * @from (where the stream's writer is), to its last committed one or to
 * where a streaming walk stops; that place into @to, if not NULL.  A run
 * ends where another thread takes over the tail (NewBuffer) and around
 * each of the kernel's records, which name their own thread.
 */
void rt_cpu_walk_ring(uint32_t cpu, struct walk *w, const struct ring_pos *from,
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
	open = (off - 1) >> rt_cpu.shift;
	open_seq = subbuf(cpu, open)->seq;
	seq = open_seq >= rt_cpu.subbuf_count ?
		      open_seq - rt_cpu.subbuf_count + 1 :
		      0;
	if (from && from->seq >= seq && from->seq <= open_seq) {
		seq = from->seq;
		skip = from->off;
		owner = from->owner;
		stretch = from->stretch;
	} else if (from) {
		w->damaged++; /* the ring went on without the writer */
	} else if (rt_cpu.discard) {
		/* what a reader consumed is not the log's (a dump of the
		 * session of a process that streamed) */
		uint64_t consumed = __atomic_load_n(&control(cpu)->consumed,
						    __ATOMIC_ACQUIRE);

		if (consumed > seq && consumed <= open_seq)
			seq = consumed;
	}
	/* counted, not compared: open_seq is the process's to write, and
	 * seq <= UINT64_MAX always holds */
	for (uint64_t todo = open_seq - seq + 1; todo;
	     todo--, seq++, skip = 0) {
		uint32_t k = (uint32_t)(open_seq - seq);
		uint32_t idx =
			(open + rt_cpu.subbuf_count - k) % rt_cpu.subbuf_count;
		const struct xray_fdr_subbuf *sb = subbuf(cpu, idx);
		const uint8_t *recs = (const uint8_t *)sb + SUBBUF_HDR;
		const uint8_t *p = recs + skip;
		uint32_t used = k ? sb->used : off - (open << rt_cpu.shift);
		struct run r = { .cpu = cpu,
				 .base = sb->tsc,
				 .wall_ns = sb->wall_ns,
				 .p = p };
		size_t left, len;
		bool ev;

		at = skip;
		if (sb->seq != seq || used < SUBBUF_HDR ||
		    used > rt_cpu.subbuf_size || used % 8 || sb->cpu != cpu ||
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
			if (w->stream && !stream_takes(w, p, len, kind)) {
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
			} else if (len >=
				   sizeof(struct xray_fdr_sched_record)) {
				struct run k_run = r;

				k_run.tid = get32(p + SCHED_OFF_TID, false);
				k_run.kernel = true;
				k_run.tsc = get64(p + SCHED_OFF_TSC, false);
				k_run.p = p;
				k_run.len = (uint32_t)len;
				if (!internal(k_run.tid))
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
}

/* The order of runs while the kernel's are set apart: a thread's own
 * runs by stretch, then its kernel records by time. */
static bool apart_before(const struct run *a, const struct run *b)
{
	if (a->tid != b->tid)
		return a->tid < b->tid;
	if (a->kernel != b->kernel)
		return b->kernel;
	if (a->kernel && a->tsc != b->tsc)
		return a->tsc < b->tsc;
	if (!a->kernel && a->stretch != b->stretch)
		return stretch_before(a->stretch, b->stretch);
	return a->order < b->order;
}

/* The flush's order: a thread's runs by stretch, each kernel record
 * before the run it was placed before, by time. */
static bool run_before(const struct run *a, const struct run *b)
{
	if (a->tid != b->tid)
		return a->tid < b->tid;
	if (a->stretch != b->stretch)
		return stretch_before(a->stretch, b->stretch);
	if (a->before != b->before)
		return a->before < b->before;
	if (a->kernel != b->kernel)
		return a->kernel;
	if (a->tsc != b->tsc)
		return a->tsc < b->tsc;
	return a->order < b->order;
}

typedef bool (*run_order)(const struct run *a, const struct run *b);

/* Sift the run at @i down the heap of the @n runs at @r. */
static void sift_down(struct run *r, size_t i, size_t n, run_order before)
{
	struct run v = r[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&r[c], &r[c + 1]))
			c++;
		if (!before(&v, &r[c]))
			break;
		r[i] = r[c];
		i = c;
	}
	r[i] = v;
}

/*
 * Heapsort: in place, without recursion or allocation (a fatal signal's
 * flush sorts), and n log n in whatever order the process that wrote the
 * rings left them (a dump runs as root on a dead user's rings).
 */
static void heap_sort(struct run *r, size_t n, run_order before)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(r, i, n, before);
	for (size_t end = n; end > 1; end--) {
		struct run top = r[0];

		r[0] = r[end - 1];
		r[end - 1] = top;
		sift_down(r, 0, end - 1, before);
	}
}

/* The time of the first record of run @r that has one, into *@tsc. */
static bool run_start(const struct run *r, uint64_t *tsc)
{
	struct xrayfdr_metadata md;
	size_t len;
	bool ev;

	for (uint32_t at = 0; at < r->len; at += (uint32_t)len) {
		const uint8_t *p = r->p + at;
		unsigned int kind = XRAY_FDR_REC_KIND(p[0]);

		len = record_len(p, r->len - at, &ev);
		if (!len)
			return false;
		if (!(p[0] & 1)) {
			*tsc = r->base + get32(p + 4, false);
			return true;
		}
		if (kind == XRAYFDR_MD_TYPED_EVENT_MARKER ||
		    (kind == XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
		     rt_cpu.version >= 5)) {
			fdr_decode_metadata(p, false, rt_cpu.version, &md);
			*tsc = r->base + (uint32_t)md.tsc_delta;
			return true;
		}
	}
	return false;
}

/*
 * Place the kernel records of the thread whose own runs are the @nu at
 * @u, and its kernel records the @nk after them: each before the first
 * own run that begins after it (a run without a time stays with the
 * one before), or after them all.
 */
static void place_kernel(struct run *u, size_t nu, size_t nk)
{
	struct run *k = u + nu;
	size_t i = 0;
	uint64_t start = 0;
	bool timed = false;

	for (size_t j = 0; j < nk; j++) {
		for (; i < nu; i++, timed = false) {
			if (!timed)
				timed = run_start(&u[i], &start);
			if (timed && start > k[j].tsc)
				break;
		}
		k[j].stretch = i < nu ? u[i].stretch :
			       nu     ? u[nu - 1].stretch :
					0;
		k[j].before = i < nu ? u[i].order : UINT32_MAX;
	}
}

void rt_cpu_sort_runs(struct run *r, size_t n)
{
	heap_sort(r, n, apart_before);
	for (size_t a = 0, b; a < n; a = b) {
		size_t nu = 0;

		for (b = a; b < n && r[b].tid == r[a].tid; b++)
			nu += !r[b].kernel;
		for (size_t i = a; i < a + nu; i++)
			r[i].before = r[i].order;
		place_kernel(r + a, nu, b - a - nu);
	}
	heap_sort(r, n, run_before);
}

/* Where each ring's walk starts: where the stream's writer got to. */
static const struct ring_pos *walk_from(uint32_t cpu)
{
	return rt_cpu.streaming ? &rt_cpu.stream_at[cpu] : NULL;
}

void rt_cpu_drain_begin(struct rt_drain *d, bool wait)
{
	struct walk w = { 0 };
	size_t size;

	(void)wait; /* no lock: the writers are quiesced, and what this
		     * reads is checked */
	*d = (struct rt_drain){ .trace = d->trace };
	if (!rt_ring.header)
		return;
	if (rt_cpu.runs)
		munmap(rt_cpu.runs, rt_cpu.runs_size);
	rt_cpu.runs = NULL;
	for (uint32_t c = 0; c < rt_ring.ncpus; c++)
		rt_cpu_walk_ring(c, &w, walk_from(c), NULL);
	rt_cpu.damaged = w.damaged;
	if (!w.n)
		return;
	/* Rings still written (xrayfdr_trace_stats() during a trace) may
	 * have more runs by the second walk: room to spare, and walk again
	 * in more room if even that was short. */
	for (int tries = 0; tries < 4; tries++) {
		size_t max = w.n + w.n / 4 + 64;

		size = max * sizeof(*rt_cpu.runs);
		rt_cpu.runs = mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rt_cpu.runs == MAP_FAILED) {
			rt_cpu.runs = NULL;
			return;
		}
		rt_cpu.runs_size = size;
		w = (struct walk){ .out = rt_cpu.runs, .max = max };
		for (uint32_t c = 0; c < rt_ring.ncpus; c++)
			rt_cpu_walk_ring(c, &w, walk_from(c), NULL);
		rt_cpu.damaged = w.damaged; /* counted once, by the walk kept */
		if (w.n <= w.max)
			break;
		munmap(rt_cpu.runs, rt_cpu.runs_size);
		rt_cpu.runs = NULL;
	}
	if (!rt_cpu.runs)
		return;
	rt_cpu_sort_runs(rt_cpu.runs, w.n);
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

/* The drain's sink_state: the thread of the last buffer (+1, 0: none),
 * and its last time. */
enum { DS_TID, DS_LAST };

/* @tid's last time, for the passes after this one (without memory, its
 * next buffers are only not clamped). */
static void remember_last(struct u64map *m, uint32_t tid, uint64_t tsc)
{
	uint64_t *last = u64map_get(m, tid);

	if (!last) {
		last = malloc(sizeof(*last));
		if (!last || u64map_put(m, tid, last)) {
			free(last);
			return;
		}
		*last = 0;
	}
	if (tsc > *last)
		*last = tsc;
}

/* One thread's records from the drain's position into a log buffer, or
 * the name the thread has now (when that did not fit after them); false
 * if none of them were events. */
bool rt_cpu_fill_chunk(struct rt_drain *d, const struct pass *ps,
		       struct rt_chunk *c)
{
	bool pending = d->name_pending;
	const struct run *first = &ps->runs[d->next - pending];
	uint32_t tid = first->tid;
	struct rt_logbuf o;
	uint64_t names = 0; /* the thread's own thread-name events */
	bool any = false, ev;
	size_t preamble;

	rt_logbuf_init(&o, ps->scratch, ps->capacity, rt_cpu.version,
		       d->trace->threshold_ticks);
	/* a thread's buffers go on from its time in the one before */
	o.monotonic = true;
	if (d->sink_state[DS_TID] == (uint64_t)tid + 1)
		o.last = d->sink_state[DS_LAST];
	if (ps->last) {
		const uint64_t *last = u64map_get(ps->last, tid);

		if (last && *last > o.last)
			o.last = *last;
	}
	preamble = fdr_put_preamble(
		o.p, false, rt_cpu.version, (int32_t)tid,
		first->wall_ns / 1000000000u,
		(uint32_t)(first->wall_ns % 1000000000u / 1000), rt_cpu.pid);
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
	d->sink_state[DS_TID] = (uint64_t)tid + 1;
	d->sink_state[DS_LAST] = o.last;
	if (ps->remember)
		remember_last(ps->last, tid, o.last);
	c->data = ps->scratch;
	c->used = (size_t)(o.p - ps->scratch);
	c->events = o.events;
	/* a buffer whose calls were all rewound is left out, names too */
	return any && o.events > names;
}

bool rt_cpu_drain_next(struct rt_drain *d, struct rt_chunk *c)
{
	const struct pass ps = { .runs = rt_cpu.runs,
				 .scratch = rt_cpu.scratch,
				 .capacity = rt_cpu.capacity,
				 .names_now = rt_cpu.pid == d->trace->pid,
				 /* after the stream: its times, no malloc() (a
				  * fatal signal's flush) */
				 .last = rt_cpu.stream_last.count &&
							 d->trace == &rt_live ?
						 &rt_cpu.stream_last :
						 NULL };

	while (rt_cpu.runs && (d->next < d->count || d->name_pending))
		if (rt_cpu_fill_chunk(d, &ps, c))
			return true;
	return false;
}

void rt_cpu_drain_end(struct rt_drain *d)
{
	(void)d;
}
