/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * xray_fdr.h - the contract between xray_fdr.ko and user space.
 *
 * Everything that crosses the boundary is defined here once: the ioctls of
 * /dev/xrayfdr, the layout of what mmap() returns (a read-only header page,
 * then one area per CPU: a control page and a ring of sub-buffers), the
 * records the kernel appends to the rings, and the generic netlink family
 * "xrayfdr" (described for tools in Documentation/netlink/specs/xrayfdr.yaml).
 * Documentation/kernel-module.rst explains how the pieces are used.
 *
 * Byte order is the machine's; every field is naturally aligned.  Structs
 * passed to ioctls start with their size and only ever grow at the end.
 */
#ifndef _UAPI_LINUX_XRAY_FDR_H
#define _UAPI_LINUX_XRAY_FDR_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped when a change is not backwards compatible; numbers never reused. */
#define XRAY_FDR_ABI_VERSION 1

/* The misc device: /dev/xrayfdr.  Each open() creates one session. */
#define XRAY_FDR_DEVICE_NAME "xrayfdr"

/*
 * ioctls.  The kernel matches a command by type, number and direction and
 * takes the struct's length from its leading @size field, not from the size
 * bits of the command: a caller built against an older or newer header
 * keeps working.  A @size smaller than the first published version is
 * EINVAL; a larger one is accepted if every byte the kernel does not know
 * is zero, else E2BIG; more than a page is E2BIG.
 */
#define XRAY_FDR_IOC_MAGIC 0xB8

/**
 * struct xray_fdr_info - what XRAY_FDR_IOC_INFO reports
 * @size: in: bytes the caller provides; out: bytes the kernel filled
 * @abi_version: %XRAY_FDR_ABI_VERSION of the module
 * @session_id: id of this file's session (netlink commands take it)
 * @nr_cpus: number of CPU areas in the mapping (possible CPU ids)
 * @page_size: the kernel's page size; mmap offsets are multiples of it
 * @header_size: bytes of struct xray_fdr_header the kernel fills
 * @control_size: bytes of a CPU area before its ring (one page)
 * @subbuf_header_size: bytes of struct xray_fdr_subbuf
 * @min_subbuf_size: smallest sub-buffer size XRAY_FDR_IOC_SET_GEOMETRY takes
 * @max_subbuf_size: largest sub-buffer size (a module setting)
 * @max_subbufs: most sub-buffers per ring (a module setting)
 * @state: XRAY_FDR_STATE_* flags of the session
 * @max_session_bytes: memory cap of one session, all CPUs together
 */
struct xray_fdr_info {
	__u32 size;
	__u32 abi_version;
	__u32 session_id;
	__u32 nr_cpus;
	__u32 page_size;
	__u32 header_size;
	__u32 control_size;
	__u32 subbuf_header_size;
	__u32 min_subbuf_size;
	__u32 max_subbuf_size;
	__u32 max_subbufs;
	__u32 state;
	__u64 max_session_bytes;
};

#define XRAY_FDR_INFO_SIZE_VER0 56

/* Geometry flags. */
/* When the ring is full, drop new records instead of the oldest sub-buffer. */
#define XRAY_FDR_GEOM_DISCARD (1U << 0)

/**
 * struct xray_fdr_geometry - ring shape for XRAY_FDR_IOC_SET_GEOMETRY
 * @size: sizeof(struct xray_fdr_geometry) as the caller knows it
 * @flags: XRAY_FDR_GEOM_* (0: overwrite the oldest sub-buffer when full)
 * @subbuf_size: bytes per sub-buffer: a power of two, at least
 *	%XRAY_FDR_SUBBUF_MIN_SIZE, at most the module's max_subbuf_size
 * @subbuf_count: sub-buffers per CPU ring: 2 to the module's max_subbufs
 *
 * Every possible CPU gets a ring of @subbuf_count * @subbuf_size bytes plus
 * a control page; the total must fit the per-session and global memory caps.
 * Geometry is set once per session.
 */
struct xray_fdr_geometry {
	__u32 size;
	__u32 flags;
	__u32 subbuf_size;
	__u32 subbuf_count;
};

#define XRAY_FDR_GEOMETRY_SIZE_VER0 16
#define XRAY_FDR_SUBBUF_MIN_SIZE 4096

/**
 * struct xray_fdr_attach - XRAY_FDR_IOC_ATTACH argument
 * @size: sizeof(struct xray_fdr_attach) as the caller knows it
 * @session_id: a session owned by the caller (any, for CAP_SYS_ADMIN):
 *	retained, or live with its geometry set
 *
 * Turns a freshly opened, unconfigured file into a read-only view of the
 * session, so its rings can be mapped (PROT_READ only) and read: dumped
 * when retained, copied while its owner writes when live (a snapshot:
 * Documentation/kernel-module.rst, "Live snapshots").  The view holds the
 * session: the owner's last close still retains or unlists it, and its
 * memory goes when the last view closes.  EBUSY for a session without
 * rings yet, EPERM for another user's.
 */
struct xray_fdr_attach {
	__u32 size;
	__u32 session_id;
};

#define XRAY_FDR_ATTACH_SIZE_VER0 8

#define XRAY_FDR_IOC_INFO _IOWR(XRAY_FDR_IOC_MAGIC, 0x00, struct xray_fdr_info)
#define XRAY_FDR_IOC_SET_GEOMETRY \
	_IOW(XRAY_FDR_IOC_MAGIC, 0x01, struct xray_fdr_geometry)
/* Start, stop or freeze recording (also reachable over netlink). */
#define XRAY_FDR_IOC_START _IO(XRAY_FDR_IOC_MAGIC, 0x02)
#define XRAY_FDR_IOC_STOP _IO(XRAY_FDR_IOC_MAGIC, 0x03)
#define XRAY_FDR_IOC_FREEZE _IO(XRAY_FDR_IOC_MAGIC, 0x04)
/* Argument 1: keep the rings after the last close; 0: do not. */
#define XRAY_FDR_IOC_KEEP _IO(XRAY_FDR_IOC_MAGIC, 0x05)
#define XRAY_FDR_IOC_ATTACH \
	_IOW(XRAY_FDR_IOC_MAGIC, 0x06, struct xray_fdr_attach)

/*
 * Session state flags (header page, XRAY_FDR_IOC_INFO, netlink).
 */
#define XRAY_FDR_STATE_CONFIGURED (1U << 0) /* geometry set, rings exist */
#define XRAY_FDR_STATE_ENABLED (1U << 1) /* recording */
#define XRAY_FDR_STATE_FROZEN (1U << 2) /* nobody writes: the rings are final */
#define XRAY_FDR_STATE_KEEP (1U << 3) /* keep the rings after the last close */
#define XRAY_FDR_STATE_RETAINED (1U << 4) /* the owner is gone, rings kept */
#define XRAY_FDR_STATE_READONLY (1U << 5) /* this file is an attached view */

/*
 * TSC facts (header page, netlink; sysfs has one file per fact).
 */
#define XRAY_FDR_TSC_CONSTANT (1U << 0) /* CPUID constant_tsc */
#define XRAY_FDR_TSC_NONSTOP (1U << 1) /* CPUID nonstop_tsc (invariant) */
#define XRAY_FDR_TSC_RELIABLE (1U << 2) /* kernel has not marked it unstable */
#define XRAY_FDR_TSC_CLOCKSOURCE (1U << 3) /* current clocksource reads TSC */
#define XRAY_FDR_TSC_KNOWN_FREQ (1U << 4) /* frequency from CPUID/firmware */

/*
 * The mapping.
 *
 * mmap offset 0, exactly one page, PROT_READ only: struct xray_fdr_header.
 * mmap offset @area_offset + c * @area_size: the area of CPU c, readable
 * and writable (read-only for attached views).  One mmap() may cover any
 * run of whole consecutive areas.  Every mapping must be MAP_SHARED,
 * without PROT_EXEC, and is unmapped as a whole (no partial munmap).
 * Anything else fails with EINVAL (EACCES for a forbidden PROT_WRITE,
 * EPERM for PROT_EXEC).
 *
 * A CPU area is a control page (struct xray_fdr_control) followed by the
 * ring: @subbuf_count sub-buffers of @subbuf_size bytes.
 */
#define XRAY_FDR_MAGIC 0x52444658 /* "XFDR" */

/**
 * struct xray_fdr_header - the read-only first page of a session's mapping
 * @magic: %XRAY_FDR_MAGIC
 * @abi_version: %XRAY_FDR_ABI_VERSION
 * @header_size: sizeof(struct xray_fdr_header) as the kernel knows it
 * @page_size: the kernel's page size
 * @session_id: the session's id
 * @nr_cpus: number of CPU areas
 * @geom_flags: XRAY_FDR_GEOM_* of the geometry
 * @subbuf_size: bytes per sub-buffer
 * @subbuf_count: sub-buffers per ring
 * @control_size: bytes of a CPU area before its ring
 * @area_offset: mmap offset of CPU 0's area
 * @area_size: bytes per CPU area (the stride between areas)
 * @state: XRAY_FDR_STATE_* flags; the kernel updates them as they change.
 *	User writers must not write while %XRAY_FDR_STATE_FROZEN is set.
 * @tsc_flags: XRAY_FDR_TSC_* facts when the geometry was set
 * @tsc_khz: TSC frequency in kHz (the kernel's calibration)
 * @owner_pid: process id of the opener, in its pid namespace
 * @owner_uid: effective uid of the opener, in its user namespace
 * @created_wall_ns: CLOCK_REALTIME when the geometry was set
 * @created_tsc: TSC at the same moment
 */
struct xray_fdr_header {
	__u32 magic;
	__u32 abi_version;
	__u32 header_size;
	__u32 page_size;
	__u32 session_id;
	__u32 nr_cpus;
	__u32 geom_flags;
	__u32 subbuf_size;
	__u32 subbuf_count;
	__u32 control_size;
	__u64 area_offset;
	__u64 area_size;
	__u32 state;
	__u32 tsc_flags;
	__u64 tsc_khz;
	__u32 owner_pid;
	__u32 owner_uid;
	__u64 created_wall_ns;
	__u64 created_tsc;
};

/*
 * The commit word.  Everything a writer must publish atomically lives in
 * one naturally aligned 64-bit word: the ring offset just past the last
 * committed record and the thread id owning the tail (the thread whose
 * records follow, until the next thread change).  A writer stores its
 * records past the committed offset, then publishes them with one store of
 * the commit word.
 *
 * The offset is in (0, ring size]: the open sub-buffer is the one holding
 * byte offset - 1, so a sub-buffer filled to its last byte is still open
 * until the next append moves on.  The kernel bounds-checks the word
 * before every use: a corrupt word loses the kernel's records (counted in
 * records_lost), never anything outside the ring.
 */
#define XRAY_FDR_COMMIT(tid, offset) \
	(((__u64)(__u32)(tid) << 32) | (__u64)(__u32)(offset))
#define XRAY_FDR_COMMIT_OFFSET(commit) ((__u32)(commit))
#define XRAY_FDR_COMMIT_TID(commit) ((__u32)((commit) >> 32))

/**
 * struct xray_fdr_control - the first page of a CPU area
 * @commit: the commit word (XRAY_FDR_COMMIT())
 * @consumed: discard mode: sequence number of the oldest sub-buffer the
 *	reader still needs.  A writer may open the sub-buffer with sequence
 *	number s only if s < @consumed + subbuf_count; otherwise it drops its
 *	record.  Ignored in overwrite mode.
 * @switch_records: switch-out and switch-in records the kernel wrote here
 * @migration_records: migration records the kernel wrote here
 * @records_lost: kernel records dropped (ring full in discard mode, corrupt
 *	commit word, thread table full, or, in overwrite mode, the oldest
 *	sub-buffer's user events not counted: see struct xray_fdr_subbuf)
 * @user_records_lost: for the user writer's own drop count
 * @user_events_overwritten: the user writer's events in the sub-buffers
 *	the kernel took over in overwrite mode (the sum of their
 *	@user_events counts); those the user writer overwrites itself are
 *	its own to count
 * @reserved: zero
 *
 * All of it is writable by the mapping process; the kernel keeps its own
 * copy of its counters and only mirrors them here.  The rest of the
 * control page, after this struct, belongs to the user writer: the kernel
 * neither reads nor writes it, and keeps it with a retained session
 * (xrayfdr's runtime keeps there what a dump of the session needs).
 */
struct xray_fdr_control {
	__u64 commit;
	__u64 consumed;
	__u64 switch_records;
	__u64 migration_records;
	__u64 records_lost;
	__u64 user_records_lost;
	__u64 user_events_overwritten;
	__u64 reserved;
};

/**
 * struct xray_fdr_subbuf - the header every sub-buffer starts with
 * @seq: sequence number in its ring: 0 for the first sub-buffer, +1 each
 *	time a writer moves on; the smallest surviving @seq is the oldest
 * @tsc: absolute TSC when the sub-buffer was opened
 * @wall_ns: CLOCK_REALTIME when it was opened
 * @cpu: the ring's CPU
 * @tid: thread owning the tail when it was opened (0: none yet)
 * @used: bytes from the start of the sub-buffer to the end of its last
 *	record, written when a writer moves on to the next sub-buffer; not
 *	meaningful for the open sub-buffer (read the commit word instead)
 * @flags: XRAY_FDR_SUBBUF_*
 * @user_data: the user writer's own word for a sub-buffer it opens; 0 when
 *	the kernel opens one
 * @user_events: %XRAY_FDR_SUBBUF_COUNTED | the number of events the user
 *	writer recorded in this sub-buffer (as that writer counts them), once
 *	it is closed and someone knows it; 0: not counted.  Whoever opens a
 *	sub-buffer writes 0.
 *
 * A sub-buffer is self-describing: a reader can start at any surviving
 * one, knowing its CPU, its thread and its absolute time.  Records follow
 * the header.
 *
 * In overwrite mode the kernel cannot count the user writer's events it
 * would destroy (their encoding is the writer's), so it takes over the
 * oldest sub-buffer only if @user_events says how many there are and
 * @seq is the one it expects; otherwise it drops its own record (counted
 * in records_lost) and leaves the ring alone.  It adds the count to
 * user_events_overwritten of struct xray_fdr_control.  The kernel marks
 * a sub-buffer that only it wrote %XRAY_FDR_SUBBUF_COUNTED (0 events)
 * when it moves on from it, and clears @user_events of any other it
 * closes; a user writer counts the others before the kernel may need
 * them, within its commits (Documentation/kernel-module.rst, "The commit
 * protocol").
 */
struct xray_fdr_subbuf {
	__u64 seq;
	__u64 tsc;
	__u64 wall_ns;
	__u32 cpu;
	__u32 tid;
	__u32 used;
	__u32 flags;
	__u32 user_data;
	__u32 user_events;
};

#define XRAY_FDR_SUBBUF_KERNEL (1U << 0) /* opened by the kernel */
/* In @user_events: the rest of the word is the count. */
#define XRAY_FDR_SUBBUF_COUNTED (1U << 31)

/*
 * Records.  Every record is a multiple of 8 bytes, 8-byte aligned, and
 * never crosses a sub-buffer.  Bit 0 of its first byte tells its form:
 *
 *   0  an 8-byte record of the user writer (its function records)
 *   1  an extended record: byte 0 is (kind << 1) | 1 and byte 1 its length
 *      in 8-byte units (at least 1), so a reader can skip unknown kinds.
 *
 * Kinds 0 to 63 belong to the user writer; 64 to 127 to the kernel.
 */
#define XRAY_FDR_REC_EXTENDED 0x1
#define XRAY_FDR_REC_TYPE(kind) ((__u8)(((kind) << 1) | XRAY_FDR_REC_EXTENDED))
#define XRAY_FDR_REC_KIND(type) ((__u8)(type) >> 1)
#define XRAY_FDR_REC_USER_KIND_MAX 63

enum xray_fdr_rec_kind {
	/* the traced thread left the CPU */
	XRAY_FDR_REC_SWITCH_OUT = 64,
	/* the traced thread got the CPU */
	XRAY_FDR_REC_SWITCH_IN = 65,
	/* the traced thread got the CPU after running elsewhere */
	XRAY_FDR_REC_MIGRATE = 66,
};

/* switch-out flags */
#define XRAY_FDR_SCHED_PREEMPTED (1U << 0) /* it was still runnable */

/**
 * struct xray_fdr_sched_record - switch-out, switch-in and migration
 * @type: XRAY_FDR_REC_TYPE(kind), kind one of enum xray_fdr_rec_kind
 * @len: 3: the record's length in 8-byte units
 * @flags: XRAY_FDR_SCHED_* (switch-out only; else 0)
 * @reserved: zero
 * @cpu: the CPU where it happened (the ring's CPU)
 * @prev_cpu: for a migration, the CPU the thread last ran on; else @cpu
 * @tid: the traced thread, in the session owner's pid namespace
 * @pid: its process, in the same namespace
 * @tsc: absolute TSC of the event
 *
 * Written from the scheduler on the ring's own CPU, for threads of the
 * traced process only; a record never names the task on the other side
 * of a switch.  On a switch-in after a move, the migration record comes
 * first, then the switch-in.
 */
struct xray_fdr_sched_record {
	__u8 type;
	__u8 len;
	__u8 flags;
	__u8 reserved;
	__u16 cpu;
	__u16 prev_cpu;
	__u32 tid;
	__u32 pid;
	__u64 tsc;
};

/*
 * Generic netlink family.  Requests name a session by id; mutating
 * commands on another user's session, and config-set, need CAP_SYS_ADMIN.
 */
#define XRAY_FDR_GENL_NAME "xrayfdr"
#define XRAY_FDR_GENL_VERSION 1
/* Multicast group of session notifications (CAP_SYS_ADMIN to join). */
#define XRAY_FDR_GENL_MCGRP_MONITOR "monitor"

enum xray_fdr_cmd {
	XRAY_FDR_CMD_UNSPEC,
	XRAY_FDR_CMD_STATUS_GET, /* do: global status and configuration */
	XRAY_FDR_CMD_SESSION_GET, /* do: one session; dump: every visible one */
	XRAY_FDR_CMD_CONFIG_SET, /* do: change global limits (admin) */
	XRAY_FDR_CMD_SESSION_START, /* do: start recording */
	XRAY_FDR_CMD_SESSION_STOP, /* do: stop recording */
	XRAY_FDR_CMD_SESSION_FREEZE, /* do: stop every writer, for a reader */
	XRAY_FDR_CMD_SESSION_KEEP, /* do: keep, or not, after the owner exits */
	XRAY_FDR_CMD_SESSION_DROP, /* do: free a retained session */
	XRAY_FDR_CMD_SESSION_NTF, /* notification on the monitor group */

	__XRAY_FDR_CMD_MAX,
	XRAY_FDR_CMD_MAX = (__XRAY_FDR_CMD_MAX - 1)
};

/* Attributes of XRAY_FDR_CMD_STATUS_GET replies. */
enum {
	XRAY_FDR_A_STATUS_UNSPEC,
	XRAY_FDR_A_STATUS_PAD,
	XRAY_FDR_A_STATUS_ABI_VERSION, /* u32 */
	XRAY_FDR_A_STATUS_NR_CPUS, /* u32 */
	XRAY_FDR_A_STATUS_SESSIONS, /* u32: open sessions */
	XRAY_FDR_A_STATUS_SESSIONS_RETAINED, /* u32 */
	XRAY_FDR_A_STATUS_SWITCH_RECORDS, /* u64 */
	XRAY_FDR_A_STATUS_MIGRATION_RECORDS, /* u64 */
	XRAY_FDR_A_STATUS_RECORDS_LOST, /* u64 */
	XRAY_FDR_A_STATUS_BYTES_ALLOCATED, /* u64: ring memory of all sessions */
	XRAY_FDR_A_STATUS_BYTES_MAPPED, /* u64 */
	XRAY_FDR_A_STATUS_TSC_KHZ, /* u64 */
	XRAY_FDR_A_STATUS_TSC_FLAGS, /* u32: XRAY_FDR_TSC_* */
	XRAY_FDR_A_STATUS_CONFIG, /* nest: XRAY_FDR_A_CONFIG_* */
	/*
	 * nest, one per user holding sessions: XRAY_FDR_A_USER_*; every user
	 * for CAP_SYS_ADMIN, else the caller's own (if it has any)
	 */
	XRAY_FDR_A_STATUS_USER,
	/* u64: retained sessions freed at retained_max_age */
	XRAY_FDR_A_STATUS_RETAINED_EXPIRED,

	__XRAY_FDR_A_STATUS_MAX,
	XRAY_FDR_A_STATUS_MAX = (__XRAY_FDR_A_STATUS_MAX - 1)
};

/* Global configuration: XRAY_FDR_CMD_CONFIG_SET, and nested in status. */
enum {
	XRAY_FDR_A_CONFIG_UNSPEC,
	XRAY_FDR_A_CONFIG_MAX_SESSION_KB, /* u32: memory cap of one session */
	XRAY_FDR_A_CONFIG_MAX_TOTAL_KB, /* u32: memory cap of all sessions */
	XRAY_FDR_A_CONFIG_MAX_SESSIONS, /* u32: open plus retained sessions */
	XRAY_FDR_A_CONFIG_MAX_RETAINED, /* u32: sessions marked keep */
	XRAY_FDR_A_CONFIG_SCHED_RECORDS, /* u8: 0 turns scheduler records off */
	/* Per-user limits; CAP_SYS_ADMIN is not held to them. */
	XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS, /* u32: open plus retained */
	XRAY_FDR_A_CONFIG_MAX_USER_KB, /* u32: memory of a user's sessions */
	XRAY_FDR_A_CONFIG_MAX_USER_RETAINED, /* u32: sessions marked keep */
	/* What only CAP_SYS_ADMIN may use of the global caps. */
	XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS, /* u32 */
	XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB, /* u32 */
	XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED, /* u32: sessions marked keep */
	/*
	 * u32: seconds a retained session of an unprivileged opener is kept
	 * before the module frees it (0: until dropped)
	 */
	XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE,

	__XRAY_FDR_A_CONFIG_MAX,
	XRAY_FDR_A_CONFIG_MAX = (__XRAY_FDR_A_CONFIG_MAX - 1)
};

/*
 * One user's use, nested in XRAY_FDR_A_STATUS_USER.  A session counts
 * against the user that opened it until it is dropped (kept ones too);
 * its memory until it is freed.
 */
enum {
	XRAY_FDR_A_USER_UNSPEC,
	XRAY_FDR_A_USER_PAD,
	XRAY_FDR_A_USER_UID, /* u32, in the reader's user namespace */
	XRAY_FDR_A_USER_SESSIONS, /* u32: open plus retained */
	XRAY_FDR_A_USER_RETAINED, /* u32: marked keep (retained included) */
	XRAY_FDR_A_USER_BYTES, /* u64: memory of its sessions */

	__XRAY_FDR_A_USER_MAX,
	XRAY_FDR_A_USER_MAX = (__XRAY_FDR_A_USER_MAX - 1)
};

/* Session events, in XRAY_FDR_A_SESSION_EVENT of notifications. */
enum xray_fdr_event {
	XRAY_FDR_EVENT_UNSPEC,
	XRAY_FDR_EVENT_STARTED,
	XRAY_FDR_EVENT_STOPPED,
	XRAY_FDR_EVENT_FROZEN,
	XRAY_FDR_EVENT_RETAINED, /* the owner is gone and the rings are kept */
	XRAY_FDR_EVENT_DROPPED,
};

/* Session attributes: requests name a session, replies describe it. */
enum {
	XRAY_FDR_A_SESSION_UNSPEC,
	XRAY_FDR_A_SESSION_PAD,
	XRAY_FDR_A_SESSION_ID, /* u32 */
	XRAY_FDR_A_SESSION_KEEP, /* u8: 0 or 1 (session-keep request) */
	XRAY_FDR_A_SESSION_OWNER_PID, /* u32, in the reader's pid namespace */
	XRAY_FDR_A_SESSION_OWNER_UID, /* u32, in the reader's user namespace */
	XRAY_FDR_A_SESSION_COMM, /* string: the opener's command name */
	XRAY_FDR_A_SESSION_STATE, /* u32: XRAY_FDR_STATE_* */
	XRAY_FDR_A_SESSION_GEOM_FLAGS, /* u32: XRAY_FDR_GEOM_* */
	XRAY_FDR_A_SESSION_SUBBUF_SIZE, /* u32 */
	XRAY_FDR_A_SESSION_SUBBUF_COUNT, /* u32 */
	XRAY_FDR_A_SESSION_NR_CPUS, /* u32 */
	XRAY_FDR_A_SESSION_BYTES, /* u64: memory of the session */
	XRAY_FDR_A_SESSION_SWITCH_RECORDS, /* u64 */
	XRAY_FDR_A_SESSION_MIGRATION_RECORDS, /* u64 */
	XRAY_FDR_A_SESSION_RECORDS_LOST, /* u64 */
	XRAY_FDR_A_SESSION_EVENT, /* u32: enum xray_fdr_event (notifications) */

	__XRAY_FDR_A_SESSION_MAX,
	XRAY_FDR_A_SESSION_MAX = (__XRAY_FDR_A_SESSION_MAX - 1)
};

#endif /* _UAPI_LINUX_XRAY_FDR_H */
