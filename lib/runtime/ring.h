/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CPU rings as the trampolines see them: the layout of the module's
 * mapping (include/uapi/linux/xray_fdr.h), whether the module made it or
 * the runtime mapped it itself.  Included by trampolines.S with
 * __ASSEMBLER__ defined, which uses only the offsets.
 *
 * The fast path of CPU mode appends one function record to the ring of
 * the CPU it runs on, in one rseq critical section ending in the store of
 * the commit word (kernel-module.rst, "The commit protocol"), when: the
 * session is not frozen, the thread owns the ring's tail (the commit
 * word's thread id is its own) in the sub-buffer it last reserved in
 * (struct rt_thread's slot), that sub-buffer has room, and the
 * time since the sub-buffer's base TSC fits 32 bits.  The process can
 * write the commit word: the slot bounds its offset to the sub-buffer
 * before anything is stored.  A function record in a ring is an FDR
 * function record whose time is that delta; the drain turns it into a
 * standard FDR delta.  A custom or typed event goes in the same way, its
 * marker's delta from the same base, where the C path would stage
 * nothing before it (struct rt_thread's event_room).  Everything else is
 * the slow path's (sink_cpu_write.c).
 */
#ifndef XRAYFDR_LIB_RUNTIME_RING_H
#define XRAYFDR_LIB_RUNTIME_RING_H

/* A CPU area starts with its control page; the ring follows. */
#define RT_RING_CONTROL_SIZE 4096
/* The rest of a control page is the user writer's (xray_fdr.h): the
 * runtime keeps there what a dump of the session needs (sink_cpu_rings.c): its
 * notes, then two counters of the ring at the end of the page. */
#define RT_NOTES_OFFSET 64
#define RT_NOTES_END 4072
#define RT_NOTES_MAX 16384
/* u64: events the fast path dropped, the ring full in discard mode (the
 * C path's drops are in rt_live.dropped and user_records_lost) */
#define RT_CTL_FAST_DROPPED 4072
#define RT_CTL_RECYCLED 4080 /* u64: sub-buffers reused */
/* u64: events in them; those of the kernel's takeovers are in
 * user_events_overwritten of struct xray_fdr_control */
#define RT_CTL_OVERWRITTEN 4088

/* In a ring's NewBuffer record: the stretch it starts (sink_cpu_write.c). */
#define RT_STRETCH_OFF 8

/* In the uapi structs: a sub-buffer's base TSC; the header's state (the
 * trampolines reach it through struct rt_thread's ring_state). */
#define RT_SUBBUF_TSC 8
/* struct xray_fdr_control's consumed */
#define RT_CTL_CONSUMED 8
#define RT_STATE_FROZEN 4

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/xray_fdr.h>

/* A set of rings: where they are and their geometry (the header's,
 * checked when they were mapped). */
struct rt_ring {
	uint8_t *areas; /* CPU 0's area */
	uint64_t area_size; /* the stride between areas */
	const struct xray_fdr_header *header;
	uint64_t size; /* bytes of one ring */
	uint32_t ncpus;
	uint32_t subbuf_size, subbuf_count, shift;
	bool discard; /* the writers wait for a reader (XRAY_FDR_GEOM_DISCARD) */
	/* a function record fits in a sub-buffer while the bytes after its
	 * header are at most this (struct rt_thread's slot) */
	uint64_t slot_room;
};

/* The rings this process's trace writes in (hidden: the CPU sink's
 * writer reaches it PC-relative). */
extern struct rt_ring rt_ring __attribute__((visibility("hidden")));

/*
 * A view of a set of rings, which the CPU sink's drain reads: the rings
 * this process writes (rt_cpu_live()), a copy of them, or a session of
 * the module that another process wrote (a dump), or the rings another
 * process shares (a snapshot).  Views are instances: any number coexist
 * with the trace of the process.
 */
struct rt_cpu_view;
struct rt_drain;

/* The rings this process's trace writes in, as a view. */
struct rt_cpu_view *rt_cpu_live(void);
/*
 * A new view of the attached file or the sealed memfd @fd, mapped
 * read-only, into *@out; then rt_cpu_view_setup() with the log's
 * version, the capacity of a log buffer and the writer's pid.  Return 0
 * or a negative errno (@err): -EFBIG for a process's rings larger than
 * half the machine's memory, which a copy would take.
 */
int rt_cpu_view_open(int fd, struct rt_cpu_view **out, char *err,
		     size_t errlen);
/*
 * The rings of view @v are being written (a live session, or another
 * process's own rings): read a consistent copy of them instead, each
 * sub-buffer whole or cut (written over while it was copied: left out and
 * counted in the view's counters).  Return 0 or -ENOMEM (@err).
 */
int rt_cpu_view_copy(struct rt_cpu_view *v, char *err, size_t errlen);
int rt_cpu_view_setup(struct rt_cpu_view *v, unsigned int version,
		      size_t capacity, pid_t pid);
/* Its header (checked: what is used is what was checked). */
const struct xray_fdr_header *rt_cpu_view_header(const struct rt_cpu_view *v);
/* Set @d (d->trace the caller's) to walk @v with the CPU sink's
 * drain_next, drain_end and counters. */
void rt_cpu_view_drain(struct rt_cpu_view *v, struct rt_drain *d);
/* Its mappings and memory given back. */
void rt_cpu_view_close(struct rt_cpu_view *v);
/* The session notes the writer left (text), into @out; their length. */
size_t rt_cpu_notes(const struct rt_cpu_view *v, char *out, size_t size);
/* Events the writer dropped, as its rings count them. */
uint64_t rt_cpu_user_lost(const struct rt_cpu_view *v);

_Static_assert(offsetof(struct xray_fdr_subbuf, tsc) == RT_SUBBUF_TSC,
	       "subbuf tsc");
_Static_assert(XRAY_FDR_STATE_FROZEN == RT_STATE_FROZEN, "frozen");
_Static_assert(offsetof(struct xray_fdr_control, commit) == 0, "commit");
_Static_assert(sizeof(struct xray_fdr_control) <= RT_NOTES_OFFSET, "notes");
_Static_assert(offsetof(struct xray_fdr_subbuf, flags) ==
		       offsetof(struct xray_fdr_subbuf, used) + 4,
	       "used and flags share a word");
/* a sub-buffer's count is stored with one word (sink_cpu_write.c) */
_Static_assert(offsetof(struct xray_fdr_subbuf, user_data) % 8 == 0 &&
		       offsetof(struct xray_fdr_subbuf, user_events) ==
			       offsetof(struct xray_fdr_subbuf, user_data) + 4,
	       "user_data and user_events share a word");

#endif /* __ASSEMBLER__ */
#endif
