// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's side of the commit protocol.
 *
 * A ring is shared with user writers that append with restartable
 * sequences: read the commit word, store records past its offset, publish
 * them with one store of the commit word, all on the ring's CPU.  The
 * kernel appends only from the scheduler probe, on the ring's CPU with
 * interrupts off.  A user writer interrupted there is aborted by rseq and
 * starts over from the commit word the kernel left, so the two never
 * interleave and the kernel needs no atomic operation: a release store of
 * the commit word orders its records for readers on other CPUs.
 *
 * The control page and sub-buffer headers are writable by the process, so
 * everything read from them is checked before it decides where a store
 * goes: a scribbling process loses its own records, nothing else.
 *
 * In overwrite mode, moving on destroys the oldest sub-buffer.  The kernel
 * cannot count the user writer's events there (their encoding is the
 * writer's), so it takes one over only if its header says how many there
 * are, and counts them; else it drops its own record.  Sub-buffers that
 * only the kernel wrote it marks as holding none when it leaves them, so
 * a ring written by the kernel alone never blocks it.
 */
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <asm/msr.h>

#include "xfdr.h"

static struct xray_fdr_control *xfdr_control(struct xfdr_session *s,
					     unsigned int cpu)
{
	return s->cpus[cpu].area;
}

static u8 *xfdr_ring(struct xfdr_session *s, unsigned int cpu)
{
	return (u8 *)s->cpus[cpu].area + PAGE_SIZE;
}

static struct xray_fdr_subbuf *xfdr_subbuf(struct xfdr_session *s,
					   unsigned int cpu, u32 idx)
{
	return (struct xray_fdr_subbuf *)(xfdr_ring(s, cpu) +
					  ((size_t)idx << s->subbuf_shift));
}

static void xfdr_subbuf_open(struct xfdr_session *s, unsigned int cpu, u32 idx,
			     u64 seq, u32 tid, u64 tsc)
{
	struct xray_fdr_subbuf *sb = xfdr_subbuf(s, cpu, idx);

	WRITE_ONCE(sb->seq, seq);
	/*
	 * The new sequence number before anything else here: a reader
	 * copying a live ring (a snapshot) that finds it unchanged after
	 * its copy read nothing that this opening wrote.
	 */
	smp_wmb();
	sb->tsc = tsc;
	sb->wall_ns = ktime_get_real_fast_ns();
	sb->cpu = cpu;
	sb->tid = tid;
	sb->used = 0;
	sb->flags = XRAY_FDR_SUBBUF_KERNEL;
	sb->user_data = 0;
	sb->user_events = 0;
}

/* An empty ring: sub-buffer 0 open, no owner, nothing committed. */
void xfdr_ring_init(struct xfdr_session *s, unsigned int cpu)
{
	struct xfdr_cpu *c = &s->cpus[cpu];

	xfdr_subbuf_open(s, cpu, 0, 0, 0, rdtsc_ordered());
	xfdr_control(s, cpu)->commit =
		XRAY_FDR_COMMIT(0, sizeof(struct xray_fdr_subbuf));
	/* empty, so far the kernel's alone */
	c->own_seq = 0;
	c->own_off = sizeof(struct xray_fdr_subbuf);
}

/*
 * May the kernel overwrite sub-buffer @idx, whose content should be
 * sequence number @old_seq?  Only if its header says how many user events
 * it holds: *@events.  The header is the process's to scribble on, so
 * what it says only decides this.
 */
static bool xfdr_subbuf_counted(struct xfdr_session *s, unsigned int cpu,
				u32 idx, u64 old_seq, u32 *events)
{
	struct xray_fdr_subbuf *sb = xfdr_subbuf(s, cpu, idx);
	u32 v = READ_ONCE(sb->user_events);

	if (READ_ONCE(sb->seq) != old_seq || !(v & XRAY_FDR_SUBBUF_COUNTED))
		return false;
	*events = v & ~XRAY_FDR_SUBBUF_COUNTED;
	return true;
}

/**
 * xfdr_ring_append() - append one record to a CPU's ring
 * @s: a recording session
 * @cpu: the current CPU, interrupts off
 * @rec: the record, a multiple of 8 bytes
 * @len: its length, much less than a sub-buffer
 * @tsc: now, for the header of a sub-buffer this append opens
 *
 * Moves on to the next sub-buffer when the record does not fit, unless the
 * ring is in discard mode and the reader has not consumed it, or in
 * overwrite mode and nobody counted the user events the next one holds.
 * The tail owner in the commit word stays: a kernel record names its own
 * thread.
 *
 * Return: true if written, false if dropped (ring full, user events not
 * counted, or commit word corrupt).
 */
bool xfdr_ring_append(struct xfdr_session *s, unsigned int cpu, const void *rec,
		      u32 len, u64 tsc)
{
	struct xray_fdr_control *ctl = xfdr_control(s, cpu);
	struct xfdr_cpu *c = &s->cpus[cpu];
	u64 commit = READ_ONCE(ctl->commit);
	u32 off = XRAY_FDR_COMMIT_OFFSET(commit);
	u32 tid = XRAY_FDR_COMMIT_TID(commit);
	struct xray_fdr_subbuf *sb;
	u32 idx, used, next, events = 0;
	bool own;
	u64 seq;

	if (unlikely(!off || off > s->ring_size || (off & 7)))
		return false;
	idx = (off - 1) >> s->subbuf_shift;
	used = off - (idx << s->subbuf_shift);
	if (unlikely(used < sizeof(struct xray_fdr_subbuf)))
		return false;
	sb = xfdr_subbuf(s, cpu, idx);
	seq = READ_ONCE(sb->seq);
	/* nobody committed here since the kernel's last record */
	own = c->own_off == off && c->own_seq == seq;

	if (used + len > s->subbuf_size) {
		seq++;
		next = idx + 1 == s->subbuf_count ? 0 : idx + 1;
		if (s->geom_flags & XRAY_FDR_GEOM_DISCARD) {
			if ((s64)(seq - READ_ONCE(ctl->consumed)) >=
			    (s64)s->subbuf_count)
				return false;
		} else if (seq >= s->subbuf_count &&
			   !xfdr_subbuf_counted(s, cpu, next,
						seq - s->subbuf_count,
						&events)) {
			return false;
		}
		WRITE_ONCE(sb->used, used);
		/*
		 * Only the kernel's records: no user event to count.  Else
		 * the user writer counts it; clear what an aborted commit of
		 * its may have left in the open sub-buffer.
		 */
		WRITE_ONCE(sb->user_events, own ? XRAY_FDR_SUBBUF_COUNTED : 0);
		xfdr_subbuf_open(s, cpu, next, seq, tid, tsc);
		if (events) {
			c->user_events_overwritten += events;
			WRITE_ONCE(ctl->user_events_overwritten,
				   c->user_events_overwritten);
		}
		idx = next;
		off = (idx << s->subbuf_shift) + sizeof(struct xray_fdr_subbuf);
		own = true;
		c->own_seq = seq;
	}

	memcpy(xfdr_ring(s, cpu) + off, rec, len);
	/* publish: readers on other CPUs acquire the commit word */
	smp_store_release(&ctl->commit, XRAY_FDR_COMMIT(tid, off + len));
	c->own_off = own ? off + len : 0;
	return true;
}
