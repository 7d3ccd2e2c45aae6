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
				    w->n < w->max && w->npending < 64 &&
				    !internal(k_run.tid))
					w->pending[w->npending++] = w->n;
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

int rt_cpu_run_cmp(const void *a, const void *b)
{
	return run_before(a, b) ? -1 : run_before(b, a) ? 1 : 0;
}

/* Sift the run at @i down the heap of the @n runs at @r. */
static void sift_down(struct run *r, size_t i, size_t n)
{
	struct run v = r[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && run_before(&r[c], &r[c + 1]))
			c++;
		if (!run_before(&v, &r[c]))
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
static void sort_runs(struct run *r, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(r, i, n);
	for (size_t end = n; end > 1; end--) {
		struct run top = r[0];

		r[0] = r[end - 1];
		r[end - 1] = top;
		sift_down(r, 0, end - 1);
	}
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
	sort_runs(rt_cpu.runs, w.n);
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
				 .names_now = rt_cpu.pid == d->trace->pid };

	while (rt_cpu.runs && (d->next < d->count || d->name_pending))
		if (rt_cpu_fill_chunk(d, &ps, c))
			return true;
	return false;
}

void rt_cpu_drain_end(struct rt_drain *d)
{
	(void)d;
}
