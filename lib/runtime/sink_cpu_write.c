// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink's writer: reserve, commit and arm, the recording path
 * of the controller (fdr.c) in CPU mode.  A commit copies what the
 * controller staged into the ring of the thread's CPU in one rseq
 * critical section, following the module's commit protocol
 * (kernel-module.rst, "The commit protocol").
 *
 * Built without vector registers (see fdr.c): the trampolines call this
 * having saved only the general registers.
 */
#include <time.h>

#include "../arch/x86_64/arch.h"
#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "sink_cpu.h"
#include "stream.h"

/* A CPU-ring append between reserve and commit. */
struct rt_ring_pending {
	/* the commit word reserve saw, and the sequence number of the
	 * sub-buffer it was in: the pair, unlike the word alone, does not
	 * come back a lap later (rseq_commit()) */
	uint64_t expect;
	const __u64 *expect_seq_word;
	uint64_t expect_seq;
	uint8_t *dst; /* where the records go */
	uint64_t *close_word; /* the closed sub-buffer's used and flags */
	uint64_t close_val;
	struct xray_fdr_subbuf *open; /* the sub-buffer this append opens */
	struct xray_fdr_subbuf open_hdr;
	uint64_t reused_events; /* events of the sub-buffer it reuses */
	/* the header word (user_data, user_events) of the sub-buffer the
	 * ring reuses after the one it opens: its count for the kernel */
	uint64_t *count_word;
	uint64_t count_val;
	uint32_t cpu;
	uint32_t staged_before; /* bytes staged before t->pos */
	uint64_t seq; /* the sequence number of the sub-buffer it goes in */
};

/*
 * This sink's part of a thread's state, in t->sink_state (struct
 * rt_thread's other fields are what the trampolines and the controller
 * share).
 */
struct cpu_thread {
	/* the append being prepared, the number of the stretch of its
	 * records it is writing and the CPU of its ring, + 1 (0: none yet) */
	struct rt_ring_pending ring;
	uint32_t stretch;
	uint32_t stretch_ring;
	/* where the rings last got the thread's name (fdr.c): the sub-buffer
	 * with sequence number name_seq of CPU name_cpu, in the trace of
	 * generation name_gen */
	uint32_t name_cpu;
	uint32_t name_gen;
	uint64_t name_seq;
	/* the records of one event, staged for the rings: a NewBuffer, a
	 * thread-name event, then the event's own records */
	uint8_t stage[128] __attribute__((aligned(8)));
};

/* the marker bytes the event fast path writes (trampolines.S, EVENT_FAST) */
_Static_assert(RT_CALL_ARGUMENT_BYTE == (XRAYFDR_MD_CALL_ARGUMENT << 1 | 1) &&
		       RT_CUSTOM_EVENT_BYTE ==
			       (XRAYFDR_MD_CUSTOM_EVENT_MARKER << 1 | 1) &&
		       RT_TYPED_EVENT_BYTE ==
			       (XRAYFDR_MD_TYPED_EVENT_MARKER << 1 | 1) &&
		       MD_OFF_BODY == 1 && MD_OFF_EVENT_SECOND == 5 &&
		       MD_OFF_TYPED_TYPE == 9,
	       "marker layout");

_Static_assert(sizeof(struct cpu_thread) <=
		       sizeof(((struct rt_thread *)0)->sink_state),
	       "the CPU sink's part of a thread's state fits");

static inline struct cpu_thread *cpu_part(struct rt_thread *t)
{
	return (struct cpu_thread *)(void *)t->sink_state;
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
	if (used < SUBBUF_HDR || used > rt_ring.subbuf_size)
		return 0;
	n = count_events((const uint8_t *)sb + SUBBUF_HDR, used - SUBBUF_HDR);
	return n < XRAY_FDR_SUBBUF_COUNTED ? XRAY_FDR_SUBBUF_COUNTED | n : 0;
}

/* May this thread append?  Only inside rseq critical sections. */
static bool thread_can_write(const struct rt_thread *t)
{
	return t->tid && (!rt.own_rseq || t->rseq.flags == RT_RSEQ_REGISTERED);
}

/*
 * The count the kernel needs before it may move on from sub-buffer @nidx,
 * with sequence number @seq once this append commits, to the one after it
 * (kernel-module.rst, "The commit protocol").  That one is the oldest
 * then, and final: with two sub-buffers, the one at @idx, which this
 * append closes filled to @used if it opens @nidx.  The count goes into
 * its header in the same commit, so it is stored only while this thread is
 * on @cpu and nothing moved there: the kernel may reopen that sub-buffer
 * as soon as either changes.
 */
static void precount(struct rt_ring_pending *pd, uint32_t cpu, uint32_t idx,
		     uint32_t used, uint64_t seq, uint32_t nidx)
{
	uint32_t aidx = nidx + 1 == rt_ring.subbuf_count ? 0 : nidx + 1;
	struct xray_fdr_subbuf *after = subbuf(cpu, aidx);
	uint64_t old = seq - rt_ring.subbuf_count;
	uint32_t v;

	/* the kernel takes a virgin one freely; in discard mode it takes
	 * only what the reader consumed */
	if (seq + 1 < rt_ring.subbuf_count || rt_ring.discard)
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
 * An append that opens sub-buffer @nidx with sequence number @seq, closing
 * the one at @idx filled to @used: the user events it destroys, and the
 * count the kernel needs (precount()).  The events destroyed are the count
 * in @nidx's header when it has one (this writer's, or the kernel's 0 for
 * a sub-buffer it alone wrote), else counted here.
 */
static void reuse_and_precount(struct rt_ring_pending *pd, uint32_t cpu,
			       uint32_t idx, uint32_t used, uint64_t seq,
			       uint32_t nidx)
{
	const struct xray_fdr_subbuf *next = subbuf(cpu, nidx);
	uint64_t old = seq - rt_ring.subbuf_count;
	uint32_t v = next->user_events;

	if (seq >= rt_ring.subbuf_count &&
	    !rt_ring.discard) /* (else consumed) */
		pd->reused_events =
			next->seq == old && (v & XRAY_FDR_SUBBUF_COUNTED) ?
				v & ~XRAY_FDR_SUBBUF_COUNTED :
				subbuf_events(next, old, 0) &
					~XRAY_FDR_SUBBUF_COUNTED;
	precount(pd, cpu, idx, used, seq, nidx);
}

/*
 * The number of a stretch that begins: in the order they begin, so that
 * the stream's writer knows from the clock which stretches had all the
 * records of their thread's earlier ones committed (rt_cpu_stream_one()).
 * 0 means none (a sub-buffer the kernel opened).
 */
static uint32_t next_stretch(void)
{
	uint32_t v =
		__atomic_add_fetch(&rt_cpu.stretch_clock, 1, __ATOMIC_SEQ_CST);

	return v ? v :
		   __atomic_add_fetch(&rt_cpu.stretch_clock, 1,
				      __ATOMIC_SEQ_CST);
}

/*
 * The kernel's reserve.  Streaming, nothing may be lost, the kernel's
 * scheduler records included; but the kernel cannot wait for the
 * stream's writer, and a thread that waits for it is switched out and
 * in, records the kernel writes into rings that are full.  So user
 * writers leave it the last rt_cpu.reserve sub-buffers the reader
 * allows: they write in sub-buffer s only while s < consumed +
 * subbuf_count - reserve, while the kernel may open up to consumed +
 * subbuf_count (kernel-module.rst, "The commit protocol").  The C path
 * refuses to open a reserve sub-buffer or to write in one the kernel
 * opened; the fast path writes only in the sub-buffer the C path last
 * reserved in (the commit word and the header's sequence number tell),
 * which was not a reserve one then and is not later: consumed only
 * grows.  A thread that finds no room waits for the writer once, asleep
 * until the writer consumed some of that ring (stream.h), so what the
 * kernel writes meanwhile is a few records per waiting thread.
 */
static bool past_user_limit(uint64_t seq, uint64_t consumed)
{
	return (int64_t)(seq - consumed) >=
	       (int64_t)(rt_ring.subbuf_count - rt_cpu.reserve);
}

/* *@full is set when the ring has no room until a reader consumes. */
static enum rt_reserve reserve_in_ring(struct rt_thread *t, size_t need,
				       uint64_t *tsc, uint32_t cpu, bool *full)
{
	struct cpu_thread *ct = cpu_part(t);
	struct rt_ring_pending *pd = &ct->ring;
	const struct xray_fdr_header *hdr = rt_ring.header;
	struct xray_fdr_control *ctl;
	struct xray_fdr_subbuf *sb, *next;
	uint64_t commit, base, seq, consumed;
	uint32_t off, idx, used, nidx;
	size_t total;
	bool name_due;

	t->name_due = 0;
	t->full_commit = 0;
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
	idx = (off - 1) >> rt_ring.shift;
	used = off - (idx << rt_ring.shift);
	if (used < SUBBUF_HDR)
		return RT_RESERVE_NONE;
	sb = subbuf(cpu, idx);
	/* (before the base: a header is written seq first) */
	pd->expect_seq = __atomic_load_n(&sb->seq, __ATOMIC_RELAXED);
	base = __atomic_load_n(&sb->tsc, __ATOMIC_RELAXED);
	/* read before this sub-buffer opened, or on a CPU behind this one */
	if (*tsc < base)
		*tsc = base;
	/* A takeover of the tail starts a stretch (a refused commit may
	 * skip a number); so does coming back to a ring whose tail is still
	 * this thread's after writing in another, whose records came in
	 * between. */
	pd->staged_before = XRAY_FDR_COMMIT_TID(commit) != t->tid ||
					    ct->stretch_ring != cpu + 1 ?
				    (uint32_t)MD :
				    0;
	if (pd->staged_before)
		ct->stretch = next_stretch();
	/* The thread's name goes into each sub-buffer it writes in (any
	 * may be the oldest left), checked where the C path runs: where
	 * it takes over the tail, opens a sub-buffer, or writes first in
	 * one the kernel opened. */
	pd->seq = pd->expect_seq;
	if (rt_cpu.reserve) {
		/* the kernel opened it, in its reserve */
		consumed = __atomic_load_n(&ctl->consumed, __ATOMIC_ACQUIRE);
		if (past_user_limit(pd->seq, consumed)) {
			*full = true;
			if (cpu == t->cpu) {
				t->full_commit = commit;
				t->full_consumed = consumed;
			}
			return RT_RESERVE_NONE;
		}
	}
	t->name_due = ct->name_gen != rt_cpu.gen || ct->name_cpu != cpu ||
		      ct->name_seq != pd->seq;
	name_due = t->name_due;
	total = pd->staged_before + need + (t->name_due ? RT_NAME_ROOM : 0);
	pd->close_word = NULL;
	pd->open = NULL;
	pd->reused_events = 0;
	pd->count_word = NULL;
	/* the fast path needs the TSC's high half to be the base's */
	if (used + total > rt_ring.subbuf_size || (*tsc ^ base) >> 32) {
		if (SUBBUF_HDR + need > rt_ring.subbuf_size)
			return RT_RESERVE_NONE;
		/* a new sub-buffer: a new place to name the thread */
		t->name_due = SUBBUF_HDR + need + RT_NAME_ROOM <=
			      rt_ring.subbuf_size;
		seq = pd->expect_seq + 1;
		consumed = __atomic_load_n(&ctl->consumed, __ATOMIC_ACQUIRE);
		if (rt_ring.discard && past_user_limit(seq, consumed)) {
			*full = true;
			/* the fast path may drop while nothing moves, if the
			 * least it writes would not fit either */
			if (cpu == t->cpu &&
			    (used + pd->staged_before + FN +
					     (name_due ? RT_NAME_ROOM : 0) >
				     rt_ring.subbuf_size ||
			     (*tsc ^ base) >> 32)) {
				t->full_commit = commit;
				t->full_consumed = consumed;
			}
			return RT_RESERVE_NONE;
		}
		nidx = idx + 1 == rt_ring.subbuf_count ? 0 : idx + 1;
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
						  .user_data = ct->stretch };
		base = *tsc;
		off = (nidx << rt_ring.shift) + SUBBUF_HDR;
		pd->staged_before = 0; /* the header names the owner */
		pd->seq = seq;
	} else if (__atomic_load_n(&sb->flags, __ATOMIC_RELAXED) &
		   XRAY_FDR_SUBBUF_KERNEL) {
		/* The kernel opened this one, so nobody counted the one after
		 * it: without the count, the kernel could not move on again
		 * and would drop its records until a user writer did. */
		precount(pd, cpu, idx, 0, pd->seq, idx);
	}
	pd->dst = ring_of(cpu) + off;
	pd->expect = commit;
	pd->expect_seq_word = &sb->seq;
	pd->cpu = cpu;
	if (pd->staged_before) {
		fdr_put_metadata(ct->stage, false, rt_cpu.live.version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_NEW_BUFFER,
					 .tid = (int32_t)t->tid });
		put32(ct->stage + RT_STRETCH_OFF, ct->stretch, false);
	}
	t->pos = ct->stage + pd->staged_before;
	t->base = base;
	t->cpu = cpu;
	/* the fast path's, for this CPU: the sub-buffer these records go in */
	t->area = (uint8_t *)ctl;
	t->slot = (uint64_t)t->tid << 32 |
		  ((off >> rt_ring.shift << rt_ring.shift) + SUBBUF_HDR);
	t->slot_seq = pd->seq;
	t->hdr = subbuf(cpu, off >> rt_ring.shift);
	t->ring_state = &hdr->state;
	t->room = rt_ring.slot_room;
	return RT_RESERVE_SAME;
}

/*
 * A drop is counted in the ring too, for a dump of the session.
 * Streaming, a full ring waits for the writer while it writes (it
 * consumes every ring, whoever waits); the event then takes the time
 * the wait ended: the kernel's records of the thread sleeping are in
 * the ring before it, and the thread's time must not go back after them.
 */
enum rt_reserve rt_cpu_reserve(struct rt_thread *t, size_t need, uint64_t *tsc,
			       uint32_t cpu)
{
	bool full = false;
	enum rt_reserve ret = reserve_in_ring(t, need, tsc, cpu, &full);

	while (ret == RT_RESERVE_NONE && full && rt_cpu.streaming &&
	       rt_stream_writing()) {
		uint32_t passes = rt_stream_passes();

		/* (a pass may have made room since the last look) */
		full = false;
		ret = reserve_in_ring(t, need, tsc, cpu, &full);
		if (ret == RT_RESERVE_NONE && full) {
			rt_stream_wait(passes, rt_stream_ring_bit(cpu));
			*tsc = arch_tsc();
		}
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
 * The critical section: if this thread is on @pd's CPU, the commit word
 * is still the one reserve saw and the sub-buffer it is in still has the
 * sequence number it had, copy the segments and store @val in the commit
 * word.  Return 0 when committed, 1 when aborted or refused.
 *
 * The word alone can come back: a thread that fills a sub-buffer to its
 * end leaves the same word each lap, and a writer preempted between
 * reserve and commit meanwhile would open, with a stale sequence number,
 * a sub-buffer the ring has gone past (the stream's writer then finds
 * the ring behind where it read, and the writers lap what it had not).
 * The pair does not come back: a sequence number only grows, and within
 * one sub-buffer's life the commit word does.
 */
static int rseq_commit(const struct rt_ring_pending *pd, __u64 *commit,
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
		"cmpq %[expect_seq], %[seq_word]\n\t"
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
		: [cpu] "r"(pd->cpu),
		  [cpu_id] "m"(*(uint32_t *)(rs + RT_RSEQ_CPU_ID)),
		  [commit] "r"(commit), [expect] "r"(pd->expect),
		  [seq_word] "m"(*pd->expect_seq_word),
		  [expect_seq] "r"(pd->expect_seq), [val] "r"(val)
		: "rax", "rcx", "rsi", "rdi", "memory", "cc");
	return ret;
}

bool rt_cpu_commit(struct rt_thread *t, uint8_t *end, const void *payload,
		   size_t size)
{
	struct cpu_thread *ct = cpu_part(t);
	struct rt_ring_pending *pd = &ct->ring;
	const uint8_t *src = payload;
	size_t staged = (size_t)(end - ct->stage), rem = size % 8;
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
				 (const uint64_t *)ct->stage, staged / 8 };
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
	if (rseq_commit(pd, &control(pd->cpu)->commit, val, seg, n))
		return false;
	ct->stretch_ring = pd->cpu + 1;
	/* the name was looked at for this sub-buffer: written, or left out
	 * as the exec name (else a thread that keeps that name would read it
	 * again at every event of the C path) */
	if (t->name_in || t->name_due) {
		ct->name_gen = rt_cpu.gen;
		ct->name_cpu = pd->cpu;
		ct->name_seq = pd->seq;
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
	       !(start & (rt_ring.subbuf_size - 1)) &&
	       t->hdr == subbuf(t->cpu, start >> rt_ring.shift) &&
	       t->ring_state == &rt_ring.header->state &&
	       t->room == rt_ring.slot_room;
}

/*
 * The fast path may run once reserve has given the thread its CPU's area
 * (t->cpu, t->area) and a sub-buffer in this trace's rings.  Events too
 * (t->event_room) where the C path would stage nothing before one: the
 * thread's name is in that sub-buffer (reserve's name_due), and the
 * thread's last commit was in this ring, so that, owning the tail, it
 * continues its stretch (reserve's staged_before).
 */
uint32_t rt_cpu_arm(struct rt_thread *t)
{
	const struct cpu_thread *ct = cpu_part(t);
	bool armed = rt_ring.header && thread_can_write(t) && t->area &&
		     t->cpu < rt_ring.ncpus &&
		     t->area == (uint8_t *)control(t->cpu) && slot_current(t);

	t->end = NULL;
	t->event_room = armed && ct->name_gen == rt_cpu.gen &&
					ct->name_cpu == t->cpu &&
					ct->name_seq == t->slot_seq &&
					ct->stretch_ring == t->cpu + 1 ?
				rt_ring.slot_room :
				0;
	return armed ? rt_cpu.gen : 0;
}

void rt_cpu_detach(struct rt_thread *t)
{
	t->end = NULL; /* its records stay in the rings */
}
