/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread recording state, shared by the C runtime and the assembly
 * trampolines (which include this file with __ASSEMBLER__ defined and use
 * only the offsets).
 *
 * The hot path appends one 8-byte function record to the thread's buffer
 * inside a restartable sequence (rseq): if the thread is preempted,
 * migrated or interrupted by a signal before its final store, the kernel
 * restarts it.  That final store, of the write position, commits the
 * record.  Nothing else changes there: a record's time is relative to the
 * thread's base (t->base, the TSC of the buffer's last NewCPUId or
 * TSCWrap, whose low half the C path makes zero), which only the C path
 * moves, so a restarted sequence has nothing to undo.  The drain turns these times into FDR's deltas from
 * the record before (logbuf.h), as the CPU rings' drain does.
 *
 * One compare checks both that the fast path may write and that the
 * thread is on the CPU its records name: t->fast is what the first eight
 * bytes of the rseq area (cpu_id_start, cpu_id) XOR rt_fast_key hold on
 * that CPU, for the key of the generation armed; rt_fast_key is 0 when
 * the fast path is off, and RT_FAST_OFF, where every thread's t->fast
 * starts, never matches.
 */
#ifndef XRAYFDR_LIB_RUNTIME_THREAD_H
#define XRAYFDR_LIB_RUNTIME_THREAD_H

/* Offsets in struct rt_thread used by the trampolines. */
#define RT_THREAD_POS 0
#define RT_THREAD_END 8
#define RT_THREAD_FAST 16 /* u64: the rseq area's first word, armed */
#define RT_THREAD_BASE 24 /* u64: the TSC record times are relative to */
#define RT_THREAD_CPU 32
#define RT_THREAD_TID 36
/* CPU mode: the tail's slot, the area of CPU RT_THREAD_CPU, the slot's
 * sub-buffer header, the rings' state word and room (struct rt_thread) */
#define RT_THREAD_SLOT 40
#define RT_THREAD_AREA 48
#define RT_THREAD_HDR 56
#define RT_THREAD_RING_STATE 64
#define RT_THREAD_ROOM 72
/* Duration triggers (trigger.h): the calls open in this thread of the
 * functions a trigger names, the innermost RT_TRIG_STACK of them kept as
 * (function id, entry TSC) */
#define RT_TRIG_STACK 16
#define RT_THREAD_TRIG_DEPTH 80
#define RT_THREAD_TRIG_ID 84
#define RT_THREAD_TRIG_TSC 152
/* CPU mode, discard: the commit word and consumed count of CPU
 * RT_THREAD_CPU's ring when the C path found it full (struct rt_thread) */
#define RT_THREAD_FULL_COMMIT 280
#define RT_THREAD_FULL_CONSUMED 288
/* CPU mode: the sequence number of the slot's sub-buffer (struct rt_thread) */
#define RT_THREAD_SLOT_SEQ 296
/* CPU mode: the room for events in the slot (struct rt_thread) */
#define RT_THREAD_EVENT_ROOM 304

/* The kernel's struct rseq (uapi/linux/rseq.h) as far as we use it. */
#define RT_RSEQ_CPU_ID_START 0
#define RT_RSEQ_CPU_ID 4
#define RT_RSEQ_CS 8
/* The signature that must precede an rseq abort handler; glibc's value. */
#define RT_RSEQ_SIG 0x53053053

/* Record words the trampolines build (little endian, see lib/fdr/records.h):
 * a patched sled loads %r10d with the first half of its function record,
 * function id << 4 | action << 1 (arch_sled_word()); the metadata kind
 * bytes of CallArgument and of the custom and typed event markers
 * (checked in sink_cpu_write.c). */
#define RT_FUNC_ID_SHIFT 4
#define RT_CALL_ARGUMENT_BYTE 0x0d
#define RT_CUSTOM_EVENT_BYTE 0x0b
#define RT_TYPED_EVENT_BYTE 0x11

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

#include <linux/xray_fdr.h>

#include "depth.h"

/* The state of our own rseq registration (in rt_rseq_area.flags). */
enum { RT_RSEQ_UNKNOWN, RT_RSEQ_REGISTERED, RT_RSEQ_NONE };

/* The kernel's struct rseq: our own registration when libc has none. */
struct rt_rseq_area {
	uint32_t cpu_id_start;
	uint32_t cpu_id;
	uint64_t rseq_cs;
	uint32_t flags;
	uint32_t pad[3];
} __attribute__((aligned(32)));

/* Room for a sink's own part of a thread's state, in 8-byte words. */
#define RT_THREAD_SINK_WORDS 40

struct rt_thread {
	/* hot: read and written by the trampolines */
	uint8_t *pos; /* next free byte of the buffer */
	uint8_t *end; /* a function record fits while pos < end */
	uint64_t fast; /* rt_fast_word() while the fast path may write */
	uint64_t base; /* the TSC the times of records are relative to */
	uint32_t cpu; /* CPU the buffer's records are attributed to */
	uint32_t tid;
	/* CPU mode: where the fast path may append.  The commit word minus
	 * slot (tid << 32 | the ring offset of a sub-buffer's first record)
	 * is at most room (rt_ring.slot_room) only while this thread owns
	 * the tail and the records end in that sub-buffer, with room for
	 * one more; hdr is that sub-buffer's header (whoever opened it last
	 * wrote it), area the control page of CPU cpu's ring, ring_state
	 * the state word of the rings' header.  Set by the C path; here so
	 * that a copy of the fast path reaches them at fixed offsets. */
	uint64_t slot;
	uint8_t *area;
	struct xray_fdr_subbuf *hdr;
	const uint32_t *ring_state;
	uint64_t room;
	/* duration triggers: written by their trampolines, which only the
	 * functions a trigger names call (trigger.h) */
	uint32_t trig_depth;
	uint32_t trig_id[RT_TRIG_STACK];
	uint64_t trig_tsc[RT_TRIG_STACK];
	/* CPU mode, discard: while the ring of CPU cpu still has this commit
	 * word and consumed count, it is as full as the C path found it,
	 * and the fast path drops what it cannot append (0: not full) */
	uint64_t full_commit;
	uint64_t full_consumed;
	/* CPU mode: the sequence number slot's sub-buffer had when the C
	 * path reserved there.  A ring that went round since (only the
	 * kernel opened sub-buffers, keeping this thread the tail's owner)
	 * may have the commit word in that sub-buffer again; the fast path
	 * does not write there (it may be the kernel's reserve:
	 * sink_cpu_write.c) */
	uint64_t slot_seq;
	/* CPU mode: the room the event fast path (trampolines.S, EVENT_FAST)
	 * compares as the function fast path compares room, or 0 where an
	 * event would need what only the C path writes: the slot's
	 * sub-buffer does not have the thread's name yet, or the thread's
	 * records there are not the latest stretch it began (set by arm) */
	uint64_t event_room;

	/* slow path only: what the controller and both sinks share (each
	 * sink's own part is in sink_state, at the end) */
	volatile uint32_t busy; /* the C path is updating this state */
	uint32_t setup_done; /* thread id, exit hook and rseq area set up */
	/* used when libc registered no rseq area */
	struct rt_rseq_area rseq;
	/* Thread-name events (fdr.c): the name last recorded ("" before the
	 * first); set by reserve when a buffer begins for the thread and its
	 * name must go first; set by the controller when the records being
	 * committed hold the name. */
	char name[16];
	uint8_t name_due;
	uint8_t name_in;
	/* max_depth: the calls open in this thread (depth.h) */
	struct rt_depth depth;
	/* The record sink's own part of the thread's state, laid out by
	 * that sink alone (sink_thread_write.c, sink_cpu_write.c) */
	uint64_t sink_state[RT_THREAD_SINK_WORDS];
};

_Static_assert(offsetof(struct rt_thread, pos) == RT_THREAD_POS, "pos");
_Static_assert(offsetof(struct rt_thread, end) == RT_THREAD_END, "end");
_Static_assert(offsetof(struct rt_thread, fast) == RT_THREAD_FAST, "fast");
_Static_assert(offsetof(struct rt_thread, base) == RT_THREAD_BASE, "base");
_Static_assert(offsetof(struct rt_thread, cpu) == RT_THREAD_CPU, "cpu");
_Static_assert(offsetof(struct rt_thread, tid) == RT_THREAD_TID, "tid");
_Static_assert(offsetof(struct rt_thread, slot) == RT_THREAD_SLOT, "slot");
_Static_assert(offsetof(struct rt_thread, area) == RT_THREAD_AREA, "area");
_Static_assert(offsetof(struct rt_thread, hdr) == RT_THREAD_HDR, "hdr");
_Static_assert(offsetof(struct rt_thread, ring_state) == RT_THREAD_RING_STATE,
	       "ring_state");
_Static_assert(offsetof(struct rt_thread, room) == RT_THREAD_ROOM, "room");
_Static_assert(offsetof(struct rt_thread, trig_depth) == RT_THREAD_TRIG_DEPTH,
	       "trig_depth");
_Static_assert(offsetof(struct rt_thread, trig_id) == RT_THREAD_TRIG_ID,
	       "trig_id");
_Static_assert(offsetof(struct rt_thread, trig_tsc) == RT_THREAD_TRIG_TSC,
	       "trig_tsc");
_Static_assert(offsetof(struct rt_thread, full_commit) == RT_THREAD_FULL_COMMIT,
	       "full_commit");
_Static_assert(offsetof(struct rt_thread, full_consumed) ==
		       RT_THREAD_FULL_CONSUMED,
	       "full_consumed");
_Static_assert(offsetof(struct rt_thread, slot_seq) == RT_THREAD_SLOT_SEQ,
	       "slot_seq");
_Static_assert(offsetof(struct rt_thread, event_room) == RT_THREAD_EVENT_ROOM,
	       "event_room");
_Static_assert(offsetof(struct rt_rseq_area, cpu_id_start) ==
		       RT_RSEQ_CPU_ID_START,
	       "rseq cpu_id_start");
_Static_assert(offsetof(struct rt_rseq_area, cpu_id) == RT_RSEQ_CPU_ID,
	       "rseq cpu_id");
_Static_assert(offsetof(struct rt_rseq_area, rseq_cs) == RT_RSEQ_CS, "rseq_cs");

/* Initial-exec TLS: the trampolines reach it with one %fs-relative load,
 * which is why libxrayfdr.so must be loaded at startup (not dlopen()ed). */
extern __thread struct rt_thread rt_self
	__attribute__((tls_model("initial-exec")));

/* Read by the trampolines. */
extern uint64_t rt_fast_key; /* generation << 32; 0: the C path only */
extern long rt_rseq_offset; /* thread pointer to the rseq area */
/* The payload sizes up to which the trampolines append custom ([0]) and
 * typed ([1]) events themselves, where the fast path may write: 0 but in
 * a trace of a sink that has an event fast path (rt_sink.fast_events)
 * and a log version whose marker it writes (trace.c) */
extern uint64_t rt_event_max[2];
/* Non-zero: they append them to thread buffers, not to rings. */
extern uint8_t rt_event_buffers;

/* t->fast when the fast path must not write: no rseq area holds it
 * (cpu_id_start is a CPU number, never 2^32 - 1). */
#define RT_FAST_OFF UINT64_MAX

/* t->fast for a thread whose records name @cpu, in generation @gen. */
static inline uint64_t rt_fast_word(uint32_t cpu, uint32_t gen)
{
	return ((uint64_t)cpu | (uint64_t)cpu << 32) ^ (uint64_t)gen << 32;
}

#endif /* __ASSEMBLER__ */
#endif
