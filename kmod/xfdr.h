/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xray_fdr.ko internals, shared by the files of the module.
 *
 * A session is what one open() of /dev/xrayfdr creates.  It traces the
 * process that opened it (every task using its mm), owns a read-only header
 * page and, once its geometry is set, one area per possible CPU (a control
 * page and a ring).  Sessions are reference counted: the opening file holds
 * the owner reference, attached read-only views hold one each, and a
 * session marked keep turns the owner reference into the retained one when
 * the opening file goes away.
 *
 * Locking: a session's own @lock serialises its changes of state and is
 * the only lock held across long waits (ring allocation, the RCU grace
 * period that stopping needs), so one user's stop never delays another's
 * open.  xfdr_lock, taken inside it and only briefly, guards the lists,
 * the totals, the limits and every write of a session's state.  The
 * scheduler probe reads recording sessions under RCU only.
 */
#ifndef _XFDR_H
#define _XFDR_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xray_fdr.h>

#include "compat.h"

struct mm_struct;
struct pid;
struct pid_namespace;
struct sk_buff;

/* The largest ring: commit offsets are 32-bit. */
#define XFDR_RING_MAX_BYTES SZ_1G

/**
 * struct xfdr_config - global limits (module parameters, netlink config-set)
 * @max_session_kb: memory cap of one session, all CPUs together
 * @max_total_kb: memory cap of all sessions, retained ones included
 * @max_sessions: most sessions, open and retained together
 * @max_retained: most sessions marked keep
 * @max_subbuf_size: largest sub-buffer a geometry may ask for
 * @max_subbufs: most sub-buffers per ring
 * @max_threads: thread-table slots per session (rounded up to a power of 2)
 * @max_user_sessions: most sessions of one user, open and retained together
 * @max_user_kb: memory cap of one user's sessions
 * @max_user_retained: most sessions of one user marked keep
 * @admin_reserve_sessions: of @max_sessions, what only CAP_SYS_ADMIN may use
 * @admin_reserve_kb: of @max_total_kb, what only CAP_SYS_ADMIN may use
 * @admin_reserve_retained: of @max_retained, what only CAP_SYS_ADMIN may use
 * @retained_max_age: seconds before a retained session of an unprivileged
 *	opener is freed (0: never)
 * @sched_records: scheduler records allowed at all
 *
 * The per-user limits and the reserves do not apply to sessions opened
 * with CAP_SYS_ADMIN.
 * Changed under xfdr_lock; the probe reads @sched_records with READ_ONCE().
 */
struct xfdr_config {
	u32 max_session_kb;
	u32 max_total_kb;
	u32 max_sessions;
	u32 max_retained;
	u32 max_subbuf_size;
	u32 max_subbufs;
	u32 max_threads;
	u32 max_user_sessions;
	u32 max_user_kb;
	u32 max_user_retained;
	u32 admin_reserve_sessions;
	u32 admin_reserve_kb;
	u32 admin_reserve_retained;
	u32 retained_max_age;
	bool sched_records;
};

extern struct xfdr_config xfdr_config;
extern struct mutex xfdr_lock;

/**
 * struct xfdr_user - what the sessions of one user hold
 * @node: on xfdr_users
 * @uid: the effective uid their openers had
 * @refs: sessions pointing here; freed with the last
 * @sessions: listed sessions (open and retained)
 * @kept: sessions marked keep (retained ones included)
 * @bytes: memory of its sessions until each is freed
 *
 * Under xfdr_lock.
 */
struct xfdr_user {
	struct list_head node;
	kuid_t uid;
	u32 refs;
	u32 sessions;
	u32 kept;
	u64 bytes;
};

extern struct list_head xfdr_users;

/**
 * struct xfdr_cpu - one CPU of a session, kernel side
 * @area: control page then ring, mapped to user space
 * @switch_records: switch-out and switch-in records written
 * @migration_records: migration records written
 * @records_lost: kernel records dropped
 * @user_events_overwritten: user events in the sub-buffers the kernel took
 *	over (their counts, see struct xray_fdr_subbuf)
 * @own_seq: sequence number of the open sub-buffer, if only the kernel
 *	has written it since it opened it
 * @own_off: the commit offset the kernel's last record there left; 0 when
 *	the open sub-buffer is not known to hold kernel records only
 *
 * Only written by the probe on this CPU, interrupts off, and by
 * xfdr_ring_init() before the session first records.
 */
struct xfdr_cpu {
	void *area;
	u64 switch_records;
	u64 migration_records;
	u64 records_lost;
	u64 user_events_overwritten;
	u64 own_seq;
	u32 own_off;
} ____cacheline_aligned_in_smp;

/* Thread-table slot keys besides a pid. */
#define XFDR_THREAD_EMPTY 0U
#define XFDR_THREAD_GONE U32_MAX

/**
 * struct xfdr_thread - what the probe remembers of a traced thread
 * @key: global pid, XFDR_THREAD_EMPTY or XFDR_THREAD_GONE
 * @vtid: thread id in the owner's pid namespace
 * @vpid: process id in the owner's pid namespace
 * @last_cpu: CPU it last ran on, for migration records
 */
struct xfdr_thread {
	u32 key;
	u32 vtid;
	u32 vpid;
	u32 last_cpu;
};

/**
 * struct xfdr_session - one open of /dev/xrayfdr
 * @ref: owner file, attached views, netlink requests in flight
 * @lock: serialises this session's changes of state (outside xfdr_lock)
 * @id: id for netlink and XRAY_FDR_IOC_ATTACH
 * @state: XRAY_FDR_STATE_* (never READONLY, which belongs to a file)
 * @node: on xfdr_sessions
 * @mm_node: on the recording hash, keyed by @mm (RCU)
 * @mm: the traced address space (mmgrab()ed until the session is retained)
 * @owner: the opener's thread-group pid
 * @pid_ns: the opener's pid namespace, for the ids in records
 * @owner_uid: effective uid of the opener
 * @user: what @owner_uid's sessions hold, charged for this one
 * @privileged: the opener had CAP_SYS_ADMIN: no per-user limit, reserves
 * @writable: opened for writing, which every change of state needs
 * @comm: the opener's command name
 * @geom_flags: XRAY_FDR_GEOM_*
 * @subbuf_size: bytes per sub-buffer (a power of two)
 * @subbuf_shift: log2(@subbuf_size)
 * @subbuf_count: sub-buffers per ring
 * @ring_size: @subbuf_size * @subbuf_count
 * @area_size: control page plus ring
 * @bytes: memory charged to the global cap
 * @header: the header page
 * @cpus: nr_cpu_ids entries
 * @threads: thread table, @thread_mask + 1 slots
 * @thread_mask: slots - 1
 * @retained_at: boot-time seconds when it became retained
 */
struct xfdr_session {
	struct kref ref;
	struct mutex lock; /* this session's changes of state */
	u32 id;
	u32 state;
	struct list_head node;
	struct hlist_node mm_node;
	struct mm_struct *mm;
	struct pid *owner;
	struct pid_namespace *pid_ns;
	kuid_t owner_uid;
	struct xfdr_user *user;
	bool privileged;
	bool writable;
	char comm[TASK_COMM_LEN];

	u32 geom_flags;
	u32 subbuf_size;
	u32 subbuf_shift;
	u32 subbuf_count;
	u32 ring_size;
	u64 area_size;
	size_t bytes;
	struct xray_fdr_header *header;
	struct xfdr_cpu *cpus;
	struct xfdr_thread *threads;
	u32 thread_mask;
	time64_t retained_at;
};

/* Global statistics that are not per CPU; under xfdr_lock. */
struct xfdr_totals {
	u32 sessions;
	u32 retained;
	u32 keep;
	u64 bytes_allocated;
	u64 retained_expired;
};

extern struct xfdr_totals xfdr_totals;
extern struct list_head xfdr_sessions;
extern atomic64_t xfdr_bytes_mapped;

/* Sums of the per-CPU statistics. */
struct xfdr_counts {
	u64 switch_records;
	u64 migration_records;
	u64 records_lost;
	u64 bytes_mapped;
};

/* session.c */
struct xfdr_session *xfdr_session_create(bool writable);
void xfdr_session_get(struct xfdr_session *s);
void xfdr_session_put(struct xfdr_session *s);
struct xfdr_session *xfdr_session_find(u32 id);
bool xfdr_session_may_control(const struct xfdr_session *s,
			      const struct sk_buff *skb);
bool xfdr_session_listed(const struct xfdr_session *s);
int xfdr_session_configure(struct xfdr_session *s,
			   const struct xray_fdr_geometry *geom);
int xfdr_session_start(struct xfdr_session *s);
int xfdr_session_stop(struct xfdr_session *s);
int xfdr_session_freeze(struct xfdr_session *s);
int xfdr_session_keep(struct xfdr_session *s, bool keep);
int xfdr_session_drop(struct xfdr_session *s);
void xfdr_session_owner_gone(struct xfdr_session *s);
int xfdr_session_attach(struct xfdr_session *s);
void xfdr_session_counts(const struct xfdr_session *s,
			 struct xfdr_counts *counts);
void xfdr_sessions_drop_all(void);
void xfdr_sessions_expire(void);

/* ring.c */
void xfdr_ring_init(struct xfdr_session *s, unsigned int cpu);
bool xfdr_ring_append(struct xfdr_session *s, unsigned int cpu, const void *rec,
		      u32 len, u64 tsc);

/* sched.c */
int xfdr_sched_init(void);
void xfdr_sched_exit(void);
int xfdr_sched_attach(struct xfdr_session *s);
void xfdr_sched_detach(struct xfdr_session *s);
void xfdr_sched_wait(void);
void xfdr_stats_counts(struct xfdr_counts *counts);

/* tsc.c */
u32 xfdr_tsc_flags(void);
u64 xfdr_tsc_khz(void);

/* sysfs.c */
int xfdr_sysfs_init(void);
void xfdr_sysfs_exit(void);

/* netlink.c */
int xfdr_netlink_init(void);
void xfdr_netlink_exit(void);
void xfdr_netlink_notify(struct xfdr_session *s, enum xray_fdr_event event);

#endif /* _XFDR_H */
