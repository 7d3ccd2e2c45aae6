// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions: creation at open(), geometry and ring memory, the recording
 * states (start, stop, freeze), keep, retain and drop, and lookup by id for
 * ioctl and netlink.  Every change happens under xfdr_lock; the header
 * page mirrors the state for the mapping process.
 *
 * A session is "listed" (found by id, shown by netlink) from open until its
 * owner file goes away, or, if it was kept, until it is dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/idr.h>
#include <linux/log2.h>
#include <linux/netlink.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/topology.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>

#include "xfdr.h"

/* Serialises every change of a session's state, the lists and the totals. */
DEFINE_MUTEX(xfdr_lock);
LIST_HEAD(xfdr_sessions);
struct xfdr_totals xfdr_totals;
static DEFINE_IDR(xfdr_ids);

/*
 * Fields not in struct xfdr_session itself because only this file needs
 * them: whether the session is listed, and the opener's ids as it sees
 * them, for the header page.
 */
struct xfdr_session_priv {
	struct xfdr_session s;
	bool listed;
	u32 owner_vpid;
	u32 owner_vuid;
};

static struct xfdr_session_priv *xfdr_priv(struct xfdr_session *s)
{
	return container_of(s, struct xfdr_session_priv, s);
}

static void xfdr_session_publish(struct xfdr_session *s)
{
	lockdep_assert_held(&xfdr_lock);
	if (s->header)
		WRITE_ONCE(s->header->state, s->state);
}

struct xfdr_session *xfdr_session_create(void)
{
	struct xfdr_session_priv *p;
	struct xfdr_session *s;
	int id, err;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	s = &p->s;
	kref_init(&s->ref);
	INIT_LIST_HEAD(&s->node);
	INIT_HLIST_NODE(&s->mm_node);
	mmgrab(current->mm);
	s->mm = current->mm;
	s->owner = get_pid(task_tgid(current));
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->owner_uid = current_euid();
	get_task_comm(s->comm, current);
	p->owner_vpid = task_tgid_vnr(current);
	p->owner_vuid = from_kuid_munged(current_user_ns(), s->owner_uid);

	mutex_lock(&xfdr_lock);
	if (xfdr_totals.sessions + xfdr_totals.retained >=
	    xfdr_config.max_sessions) {
		err = -EMFILE;
		goto err_unlock;
	}
	id = idr_alloc_cyclic(&xfdr_ids, s, 1, INT_MAX, GFP_KERNEL);
	if (id < 0) {
		err = id;
		goto err_unlock;
	}
	s->id = id;
	p->listed = true;
	list_add_tail(&s->node, &xfdr_sessions);
	xfdr_totals.sessions++;
	mutex_unlock(&xfdr_lock);
	return s;

err_unlock:
	mutex_unlock(&xfdr_lock);
	put_pid_ns(s->pid_ns);
	put_pid(s->owner);
	mmdrop(s->mm);
	kfree(p);
	return ERR_PTR(err);
}

static void xfdr_session_free_rings(struct xfdr_session *s)
{
	unsigned int cpu;

	if (s->cpus) {
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			vfree(s->cpus[cpu].area);
		kfree(s->cpus);
		s->cpus = NULL;
	}
	kvfree(s->threads);
	s->threads = NULL;
	vfree(s->header);
	s->header = NULL;
}

/* kref release: called with xfdr_lock held, returns with it released. */
static void xfdr_session_release(struct kref *ref) __releases(&xfdr_lock)
{
	struct xfdr_session *s = container_of(ref, struct xfdr_session, ref);

	WARN_ON_ONCE(s->state & XRAY_FDR_STATE_ENABLED);
	idr_remove(&xfdr_ids, s->id);
	list_del(&s->node);
	if (s->state & XRAY_FDR_STATE_KEEP)
		xfdr_totals.keep--;
	xfdr_totals.bytes_allocated -= s->bytes;
	mutex_unlock(&xfdr_lock);

	xfdr_session_free_rings(s);
	put_pid_ns(s->pid_ns);
	put_pid(s->owner);
	if (s->mm)
		mmdrop(s->mm);
	kfree(xfdr_priv(s));
}

void xfdr_session_get(struct xfdr_session *s)
{
	kref_get(&s->ref);
}

void xfdr_session_put(struct xfdr_session *s)
{
	kref_put_mutex(&s->ref, xfdr_session_release, &xfdr_lock);
}

/* A listed session with a reference for the caller, or NULL. */
struct xfdr_session *xfdr_session_find(u32 id)
{
	struct xfdr_session *s;

	if (!id || id > INT_MAX)
		return NULL;
	mutex_lock(&xfdr_lock);
	s = idr_find(&xfdr_ids, id);
	if (s && xfdr_priv(s)->listed)
		kref_get(&s->ref);
	else
		s = NULL;
	mutex_unlock(&xfdr_lock);
	return s;
}

/**
 * xfdr_session_may_control() - may the caller act on a session
 * @s: the session
 * @skb: the netlink request, or NULL for a system call
 *
 * Its owner may; anyone else needs CAP_SYS_ADMIN (for netlink, both the
 * sender and the socket's opener).
 *
 * Return: true if allowed.
 */
bool xfdr_session_may_control(const struct xfdr_session *s,
			      const struct sk_buff *skb)
{
	if (uid_eq(current_euid(), s->owner_uid))
		return true;
	return skb ? netlink_capable(skb, CAP_SYS_ADMIN) :
		     capable(CAP_SYS_ADMIN);
}

bool xfdr_session_listed(const struct xfdr_session *s)
{
	lockdep_assert_held(&xfdr_lock);
	return container_of(s, struct xfdr_session_priv, s)->listed;
}

static void xfdr_session_fill_header(struct xfdr_session *s)
{
	struct xray_fdr_header *h = s->header;

	h->magic = XRAY_FDR_MAGIC;
	h->abi_version = XRAY_FDR_ABI_VERSION;
	h->header_size = sizeof(*h);
	h->page_size = PAGE_SIZE;
	h->session_id = s->id;
	h->nr_cpus = nr_cpu_ids;
	h->geom_flags = s->geom_flags;
	h->subbuf_size = s->subbuf_size;
	h->subbuf_count = s->subbuf_count;
	h->control_size = PAGE_SIZE;
	h->area_offset = PAGE_SIZE;
	h->area_size = s->area_size;
	h->state = s->state;
	h->tsc_flags = xfdr_tsc_flags();
	h->tsc_khz = xfdr_tsc_khz();
	h->owner_pid = xfdr_priv(s)->owner_vpid;
	h->owner_uid = xfdr_priv(s)->owner_vuid;
	h->created_wall_ns = ktime_get_real_ns();
	h->created_tsc = rdtsc_ordered();
}

static int xfdr_session_alloc_rings(struct xfdr_session *s, u32 threads)
{
	unsigned int cpu;
	int node;

	s->header = vzalloc(PAGE_SIZE);
	if (!s->header)
		return -ENOMEM;
	s->cpus = kcalloc(nr_cpu_ids, sizeof(*s->cpus), GFP_KERNEL);
	if (!s->cpus)
		return -ENOMEM;
	/* A ring is written on its own CPU: keep it on that CPU's node. */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		node = cpu_possible(cpu) ? cpu_to_node(cpu) : NUMA_NO_NODE;
		s->cpus[cpu].area = vzalloc_node(s->area_size, node);
		if (!s->cpus[cpu].area)
			return -ENOMEM;
	}
	s->threads = kvcalloc(threads, sizeof(*s->threads), GFP_KERNEL);
	if (!s->threads)
		return -ENOMEM;
	return 0;
}

/**
 * xfdr_session_configure() - set the geometry and allocate the rings
 * @s: a session without geometry
 * @geom: the requested shape
 *
 * Return: 0; -EINVAL for a shape outside the limits, -EFBIG above the
 * per-session cap, -ENOSPC above the global cap, -EBUSY if already set,
 * -ENOMEM.
 */
int xfdr_session_configure(struct xfdr_session *s,
			   const struct xray_fdr_geometry *geom)
{
	u64 ring, area, bytes;
	unsigned int cpu;
	u32 threads;
	int err;

	if (geom->flags & ~XRAY_FDR_GEOM_DISCARD)
		return -EINVAL;

	mutex_lock(&xfdr_lock);
	if (s->state & XRAY_FDR_STATE_CONFIGURED) {
		err = -EBUSY;
		goto out_unlock;
	}
	if (!is_power_of_2(geom->subbuf_size) ||
	    geom->subbuf_size < XRAY_FDR_SUBBUF_MIN_SIZE ||
	    geom->subbuf_size > xfdr_config.max_subbuf_size ||
	    geom->subbuf_count < 2 ||
	    geom->subbuf_count > xfdr_config.max_subbufs) {
		err = -EINVAL;
		goto out_unlock;
	}
	ring = (u64)geom->subbuf_size * geom->subbuf_count;
	if (ring > XFDR_RING_MAX_BYTES) {
		err = -EINVAL;
		goto out_unlock;
	}
	area = PAGE_SIZE + ring;
	threads = roundup_pow_of_two(xfdr_config.max_threads);
	bytes = PAGE_SIZE + nr_cpu_ids * area +
		PAGE_ALIGN(threads * sizeof(struct xfdr_thread));
	if (bytes > (u64)xfdr_config.max_session_kb * 1024) {
		err = -EFBIG;
		goto out_unlock;
	}
	if (xfdr_totals.bytes_allocated + bytes >
	    (u64)xfdr_config.max_total_kb * 1024) {
		err = -ENOSPC;
		goto out_unlock;
	}

	s->geom_flags = geom->flags;
	s->subbuf_size = geom->subbuf_size;
	s->subbuf_shift = ilog2(geom->subbuf_size);
	s->subbuf_count = geom->subbuf_count;
	s->ring_size = ring;
	s->area_size = area;
	s->thread_mask = threads - 1;
	err = xfdr_session_alloc_rings(s, threads);
	if (err)
		goto err_free;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		xfdr_ring_init(s, cpu);
	s->bytes = bytes;
	xfdr_totals.bytes_allocated += bytes;
	s->state |= XRAY_FDR_STATE_CONFIGURED;
	xfdr_session_fill_header(s);
	mutex_unlock(&xfdr_lock);
	return 0;

err_free:
	xfdr_session_free_rings(s);
out_unlock:
	mutex_unlock(&xfdr_lock);
	return err;
}

/* Stop the scheduler records of @s; xfdr_lock held. */
static void xfdr_session_stop_locked(struct xfdr_session *s)
{
	if (!(s->state & XRAY_FDR_STATE_ENABLED))
		return;
	xfdr_sched_detach(s);
	s->state &= ~XRAY_FDR_STATE_ENABLED;
	xfdr_session_publish(s);
}

/**
 * xfdr_session_start() - start scheduler records
 * @s: the session
 *
 * Return: 0 (also if already recording); -ENOENT if no longer listed,
 * -ESRCH if retained (its process is gone), -ENODATA without geometry,
 * -EBUSY if another session already records the same process.
 */
int xfdr_session_start(struct xfdr_session *s)
{
	int err = 0;

	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed)
		err = -ENOENT;
	else if (s->state & XRAY_FDR_STATE_RETAINED)
		err = -ESRCH;
	else if (!(s->state & XRAY_FDR_STATE_CONFIGURED))
		err = -ENODATA;
	else if (!(s->state & XRAY_FDR_STATE_ENABLED))
		err = xfdr_sched_attach(s);
	if (!err && !(s->state & XRAY_FDR_STATE_ENABLED)) {
		s->state |= XRAY_FDR_STATE_ENABLED;
		s->state &= ~XRAY_FDR_STATE_FROZEN;
		xfdr_session_publish(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_STARTED);
	}
	mutex_unlock(&xfdr_lock);
	return err;
}

/**
 * xfdr_session_stop() - stop scheduler records
 * @s: the session
 *
 * Return: 0 (also if not recording); -ENOENT if no longer listed.
 */
int xfdr_session_stop(struct xfdr_session *s)
{
	int err = 0;

	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (s->state & XRAY_FDR_STATE_ENABLED) {
		xfdr_session_stop_locked(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_STOPPED);
	}
	mutex_unlock(&xfdr_lock);
	return err;
}

/**
 * xfdr_session_freeze() - stop every writer for a consistent read
 * @s: the session
 *
 * Stops the kernel's records and waits until none is being written, then
 * sets %XRAY_FDR_STATE_FROZEN, which user writers obey.
 *
 * Return: 0; -ENOENT if no longer listed, -ENODATA without geometry.
 */
int xfdr_session_freeze(struct xfdr_session *s)
{
	int err = 0;

	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (!(s->state & XRAY_FDR_STATE_CONFIGURED)) {
		err = -ENODATA;
	} else if (!(s->state & XRAY_FDR_STATE_FROZEN)) {
		xfdr_session_stop_locked(s);
		s->state |= XRAY_FDR_STATE_FROZEN;
		xfdr_session_publish(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_FROZEN);
	}
	mutex_unlock(&xfdr_lock);
	return err;
}

/**
 * xfdr_session_keep() - keep the rings after the owner's last close, or not
 * @s: the session
 * @keep: the new setting
 *
 * Return: 0; -ENOENT if no longer listed, -ESRCH if already retained,
 * -ENOSPC if max_retained sessions are already marked keep.
 */
int xfdr_session_keep(struct xfdr_session *s, bool keep)
{
	bool kept;
	int err = 0;

	mutex_lock(&xfdr_lock);
	kept = s->state & XRAY_FDR_STATE_KEEP;
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (s->state & XRAY_FDR_STATE_RETAINED) {
		err = -ESRCH;
	} else if (keep && !kept) {
		if (xfdr_totals.keep >= xfdr_config.max_retained) {
			err = -ENOSPC;
		} else {
			xfdr_totals.keep++;
			s->state |= XRAY_FDR_STATE_KEEP;
		}
	} else if (!keep && kept) {
		xfdr_totals.keep--;
		s->state &= ~XRAY_FDR_STATE_KEEP;
	}
	xfdr_session_publish(s);
	mutex_unlock(&xfdr_lock);
	return err;
}

/* Unlist a retained session; the caller then puts the retained reference. */
static void xfdr_session_unretain_locked(struct xfdr_session *s)
{
	s->state &= ~(XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_KEEP);
	xfdr_totals.retained--;
	xfdr_totals.keep--;
	xfdr_priv(s)->listed = false;
	xfdr_session_publish(s);
}

/**
 * xfdr_session_drop() - free a retained session
 * @s: the session, with a reference the caller still puts
 *
 * The memory goes when the last attached view closes.
 *
 * Return: 0; -ENOENT if no longer listed, -EBUSY if its owner still has
 * it open.
 */
int xfdr_session_drop(struct xfdr_session *s)
{
	int err = 0;

	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (!(s->state & XRAY_FDR_STATE_RETAINED)) {
		err = -EBUSY;
	} else {
		xfdr_session_unretain_locked(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_DROPPED);
	}
	mutex_unlock(&xfdr_lock);
	if (!err)
		xfdr_session_put(s);
	return err;
}

/**
 * xfdr_session_owner_gone() - the file open() created is being released
 * @s: its session
 *
 * The process closed its last reference (or exited).  A configured
 * session marked keep becomes retained: frozen, detached from the process,
 * still listed.  Any other is unlisted and its owner reference dropped.
 */
void xfdr_session_owner_gone(struct xfdr_session *s)
{
	mutex_lock(&xfdr_lock);
	xfdr_session_stop_locked(s);
	xfdr_totals.sessions--;
	if ((s->state & XRAY_FDR_STATE_KEEP) &&
	    (s->state & XRAY_FDR_STATE_CONFIGURED)) {
		s->state |= XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_FROZEN;
		xfdr_totals.retained++;
		mmdrop(s->mm);
		s->mm = NULL;
		xfdr_session_publish(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_RETAINED);
		mutex_unlock(&xfdr_lock);
		return;
	}
	xfdr_priv(s)->listed = false;
	mutex_unlock(&xfdr_lock);
	xfdr_session_put(s);
}

/**
 * xfdr_session_attach() - may @s get a read-only view
 * @s: the session
 *
 * Return: 0 if it is retained, else -EBUSY (its owner still has it).
 */
int xfdr_session_attach(struct xfdr_session *s)
{
	int err;

	mutex_lock(&xfdr_lock);
	err = (s->state & XRAY_FDR_STATE_RETAINED) ? 0 : -EBUSY;
	mutex_unlock(&xfdr_lock);
	return err;
}

void xfdr_session_counts(const struct xfdr_session *s,
			 struct xfdr_counts *counts)
{
	unsigned int cpu;

	memset(counts, 0, sizeof(*counts));
	if (!s->cpus)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		counts->switch_records +=
			READ_ONCE(s->cpus[cpu].switch_records);
		counts->migration_records +=
			READ_ONCE(s->cpus[cpu].migration_records);
		counts->records_lost += READ_ONCE(s->cpus[cpu].records_lost);
	}
}

/* Module unload: no file is open, so only retained sessions remain. */
void xfdr_sessions_drop_all(void)
{
	struct xfdr_session *s, *tmp;
	LIST_HEAD(dropped);

	mutex_lock(&xfdr_lock);
	list_for_each_entry_safe(s, tmp, &xfdr_sessions, node) {
		if (WARN_ON_ONCE(!(s->state & XRAY_FDR_STATE_RETAINED)))
			continue;
		xfdr_session_unretain_locked(s);
		list_move(&s->node, &dropped);
	}
	mutex_unlock(&xfdr_lock);

	list_for_each_entry_safe(s, tmp, &dropped, node)
		xfdr_session_put(s);
}
