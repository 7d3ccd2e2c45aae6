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
static bool internal(const struct rt_cpu_view *v, uint32_t tid)
{
	return v->pid == rt_live.pid && rt_internal_thread(tid);
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
void rt_cpu_walk_ring(const struct rt_cpu_view *v, uint32_t cpu, struct walk *w,
		      const struct ring_pos *from, struct ring_pos *to)
{
	const struct rt_ring *g = v->ring;
	uint64_t commit = __atomic_load_n(&area_control(g, cpu)->commit,
					  __ATOMIC_ACQUIRE);
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit), open;
	uint32_t owner = 0, stretch = 0, skip = 0, at = 0;
	uint64_t open_seq, seq;

	if (!off || off > g->size || off % 8) {
		w->damaged++;
		return;
	}
	open = (off - 1) >> g->shift;
	open_seq = area_subbuf(g, cpu, open)->seq;
	seq = open_seq >= g->subbuf_count ? open_seq - g->subbuf_count + 1 : 0;
	if (from && from->seq >= seq && from->seq <= open_seq) {
		seq = from->seq;
		skip = from->off;
		owner = from->owner;
		stretch = from->stretch;
	} else if (from) {
		w->damaged++; /* the ring went on without the writer */
	} else if (g->discard) {
		/* what a reader consumed is not the log's (a dump of the
		 * session of a process that streamed) */
		uint64_t consumed = __atomic_load_n(
			&area_control(g, cpu)->consumed, __ATOMIC_ACQUIRE);

		if (consumed > seq && consumed <= open_seq)
			seq = consumed;
	}
	/* counted, not compared: open_seq is the process's to write, and
	 * seq <= UINT64_MAX always holds */
	for (uint64_t todo = open_seq - seq + 1; todo;
	     todo--, seq++, skip = 0) {
		uint32_t k = (uint32_t)(open_seq - seq);
		uint32_t idx = (open + g->subbuf_count - k) % g->subbuf_count;
		const struct xray_fdr_subbuf *sb = area_subbuf(g, cpu, idx);
		const uint8_t *recs = (const uint8_t *)sb + SUBBUF_HDR;
		const uint8_t *p = recs + skip;
		uint32_t used = k ? sb->used : off - (open << g->shift);
		struct run r = { .cpu = cpu,
				 .base = sb->tsc,
				 .wall_ns = sb->wall_ns,
				 .p = p };
		size_t left, len;
		bool ev;

		at = skip;
		if (sb->seq != seq || used < SUBBUF_HDR ||
		    used > g->subbuf_size || used % 8 || sb->cpu != cpu ||
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
				if (!internal(v, k_run.tid))
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

/* The time of the first record of run @r (of a log of @version) that has
 * one, into *@tsc. */
static bool run_start(const struct run *r, unsigned int version, uint64_t *tsc)
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
		    (kind == XRAYFDR_MD_CUSTOM_EVENT_MARKER && version >= 5)) {
			fdr_decode_metadata(p, false, version, &md);
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
static void place_kernel(struct run *u, size_t nu, size_t nk,
			 unsigned int version)
{
	struct run *k = u + nu;
	size_t i = 0;
	uint64_t start = 0;
	bool timed = false;

	for (size_t j = 0; j < nk; j++) {
		for (; i < nu; i++, timed = false) {
			if (!timed)
				timed = run_start(&u[i], version, &start);
			if (timed && start > k[j].tsc)
				break;
		}
		k[j].stretch = i < nu ? u[i].stretch :
			       nu     ? u[nu - 1].stretch :
					0;
		k[j].before = i < nu ? u[i].order : UINT32_MAX;
	}
}

void rt_cpu_sort_runs(struct run *r, size_t n, unsigned int version)
{
	heap_sort(r, n, apart_before);
	for (size_t a = 0, b; a < n; a = b) {
		size_t nu = 0;

		for (b = a; b < n && r[b].tid == r[a].tid; b++)
			nu += !r[b].kernel;
		for (size_t i = a; i < a + nu; i++)
			r[i].before = r[i].order;
		place_kernel(r + a, nu, b - a - nu, version);
	}
	heap_sort(r, n, run_before);
}

/* This sink's part of a drain (rt_drain's sink_state): the view it
 * walks; the thread of the last buffer (+1, 0: none), and its last
 * time. */
struct cpu_drain {
	struct rt_cpu_view *v;
	uint64_t tid;
	uint64_t last;
};

_Static_assert(sizeof(struct cpu_drain) <=
		       sizeof(((struct rt_drain *)0)->sink_state),
	       "a CPU drain fits in rt_drain");

static struct cpu_drain *own(struct rt_drain *d)
{
	return (struct cpu_drain *)(void *)d->sink_state;
}

/*
 * Set @d to walk view @v: its runs, from its oldest records or from where
 * each ring's @from says (the stream's writer), sorted in v->runs.
 */
static void view_drain(struct rt_cpu_view *v, struct rt_drain *d,
		       const struct ring_pos *from)
{
	const struct rt_ring *g = v->ring;
	struct walk w = { 0 };
	size_t size;

	*d = (struct rt_drain){ .trace = d->trace };
	own(d)->v = v;
	if (!g->header)
		return;
	if (v->runs)
		munmap(v->runs, v->runs_size);
	v->runs = NULL;
	for (uint32_t c = 0; c < g->ncpus; c++)
		rt_cpu_walk_ring(v, c, &w, from ? &from[c] : NULL, NULL);
	v->damaged = w.damaged;
	if (!w.n)
		return;
	/* Rings still written (xrayfdr_trace_stats() during a trace) may
	 * have more runs by the second walk: room to spare, and walk again
	 * in more room if even that was short. */
	for (int tries = 0; tries < 4; tries++) {
		size_t max = w.n + w.n / 4 + 64;

		size = max * sizeof(*v->runs);
		v->runs = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (v->runs == MAP_FAILED) {
			v->runs = NULL;
			return;
		}
		v->runs_size = size;
		w = (struct walk){ .out = v->runs, .max = max };
		for (uint32_t c = 0; c < g->ncpus; c++)
			rt_cpu_walk_ring(v, c, &w, from ? &from[c] : NULL,
					 NULL);
		v->damaged = w.damaged; /* counted once, by the walk kept */
		if (w.n <= w.max)
			break;
		munmap(v->runs, v->runs_size);
		v->runs = NULL;
	}
	if (!v->runs)
		return;
	rt_cpu_sort_runs(v->runs, w.n, v->version);
	d->count = w.n;
}

struct rt_cpu_view *rt_cpu_drain_view(const struct rt_drain *d)
{
	return ((const struct cpu_drain *)(const void *)d->sink_state)->v;
}

void rt_cpu_view_drain(struct rt_cpu_view *v, struct rt_drain *d)
{
	view_drain(v, d, NULL);
}

void rt_cpu_drain_begin(struct rt_drain *d, bool wait)
{
	(void)wait; /* no lock: the writers are quiesced, and what this
		     * reads is checked */
	/* each ring from where the stream's writer got to */
	view_drain(&rt_cpu.live, d, rt_cpu.streaming ? rt_cpu.stream_at : NULL);
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
	uint64_t streamed; /* its last time in the stream's passes */
	bool any = false, ev;
	size_t preamble;

	rt_logbuf_init(&o, ps->scratch, ps->capacity, ps->v->version,
		       d->trace->threshold_ticks);
	/* a thread's buffers go on from its time in the one before */
	o.monotonic = true;
	if (own(d)->tid == (uint64_t)tid + 1)
		o.last = own(d)->last;
	streamed = ps->last ? rt_last_times_get(ps->last, tid) : 0;
	if (streamed > o.last)
		o.last = streamed;
	preamble = fdr_put_preamble(
		o.p, false, ps->v->version, (int32_t)tid,
		first->wall_ns / 1000000000u,
		(uint32_t)(first->wall_ns % 1000000000u / 1000), ps->v->pid);
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
	own(d)->tid = (uint64_t)tid + 1;
	own(d)->last = o.last;
	if (ps->remember)
		rt_last_times_put(ps->last, tid, o.last);
	c->data = ps->scratch;
	c->used = (size_t)(o.p - ps->scratch);
	c->events = o.events;
	/* a buffer whose calls were all rewound is left out, names too */
	return any && o.events > names;
}

bool rt_cpu_drain_next(struct rt_drain *d, struct rt_chunk *c)
{
	const struct rt_cpu_view *v = own(d)->v;
	const struct pass ps = {
		.v = v,
		.runs = v->runs,
		.scratch = v->scratch,
		.capacity = v->capacity,
		.names_now = v->pid == d->trace->pid,
		/* after the stream: its times, no malloc() (a fatal signal's
		 * flush); not for a copy, which holds what was streamed too */
		.last = rt_cpu.stream_last.used && d->trace == &rt_live &&
					v == &rt_cpu.live ?
				&rt_cpu.stream_last :
				NULL
	};

	while (v->runs && (d->next < d->count || d->name_pending))
		if (rt_cpu_fill_chunk(d, &ps, c))
			return true;
	return false;
}

void rt_cpu_drain_end(struct rt_drain *d)
{
	(void)d;
}

/* @a + @b, or UINT64_MAX: counters in the rings are the process's to
 * write, and a sum that wraps would report a small count */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

uint64_t rt_cpu_user_lost(const struct rt_cpu_view *v)
{
	const struct rt_ring *g = v->ring;
	uint64_t n = 0;

	/* the C path's drops and the fast path's */
	for (uint32_t c = 0; g->header && c < g->ncpus; c++) {
		const struct xray_fdr_control *ctl = area_control(g, c);

		n = sat_add(n, ctl->user_records_lost);
		n = sat_add(n, *(const uint64_t *)((const uint8_t *)ctl +
						   RT_CTL_FAST_DROPPED));
	}
	return n;
}

/* The counters of the rings @d walks (NULL: the rings now in use). */
void rt_cpu_counters(const struct rt_drain *d, struct rt_sink_counters *c)
{
	const struct rt_cpu_view *v = d ? rt_cpu_drain_view(d) : &rt_cpu.live;
	const struct rt_ring *g = v->ring;

	c->overwritten = c->recycled = 0;
	c->damaged = v->damaged;
	if (v == &rt_cpu.live)
		c->damaged += rt_cpu.stream_damaged;
	c->cut = v->cut;
	c->kernel_lost = 0;
	c->dropped = 0;
	c->ring_bytes = g->header ? (uint64_t)g->subbuf_size * g->subbuf_count :
				    0;
	/* in the rings, so a dump of a dead process's session has them */
	for (uint32_t cpu = 0; g->header && cpu < g->ncpus; cpu++) {
		const struct xray_fdr_control *ctl = area_control(g, cpu);
		const uint8_t *raw = (const uint8_t *)ctl;

		c->kernel_lost = sat_add(c->kernel_lost, ctl->records_lost);
		/* the user writer's count, and the kernel's of its takeovers */
		c->overwritten = sat_add(
			c->overwritten,
			__atomic_load_n(
				(const uint64_t *)(raw + RT_CTL_OVERWRITTEN),
				__ATOMIC_RELAXED));
		c->overwritten =
			sat_add(c->overwritten,
				__atomic_load_n(&ctl->user_events_overwritten,
						__ATOMIC_RELAXED));
		c->recycled = sat_add(
			c->recycled,
			__atomic_load_n(
				(const uint64_t *)(raw + RT_CTL_RECYCLED),
				__ATOMIC_RELAXED));
		c->dropped = sat_add(
			c->dropped,
			__atomic_load_n(
				(const uint64_t *)(raw + RT_CTL_FAST_DROPPED),
				__ATOMIC_RELAXED));
	}
}

const char *rt_cpu_memory(const struct rt_drain *d)
{
	const struct rt_cpu_view *v = d ? rt_cpu_drain_view(d) : &rt_cpu.live;
	const struct rings *r = v == &rt_cpu.live ? &rt_cpu.now : &v->mem;

	return r->module ? "module" : "own";
}
