// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions: creation at open(), geometry and ring memory, the recording
 * states (start, stop, freeze), keep, retain and drop, and lookup by id for
 * ioctl and netlink.  Every change happens under the session's lock, with
 * xfdr_lock taken briefly inside it (xfdr.h); the header page mirrors the
 * state for the mapping process.
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
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <asm/msr.h>

#include "xfdr.h"

/* Guards the lists, the totals and each write of a session's state. */
DEFINE_MUTEX(xfdr_lock);
LIST_HEAD(xfdr_sessions);
LIST_HEAD(xfdr_users);
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

/* The entry of @uid, made from @spare if there is none; xfdr_lock held. */
static struct xfdr_user *xfdr_user_get(kuid_t uid, struct xfdr_user **spare)
{
	struct xfdr_user *u;

	lockdep_assert_held(&xfdr_lock);
	list_for_each_entry(u, &xfdr_users, node) {
		if (uid_eq(u->uid, uid)) {
			u->refs++;
			return u;
		}
	}
	u = *spare;
	*spare = NULL;
	u->uid = uid;
	u->refs = 1;
	list_add_tail(&u->node, &xfdr_users);
	return u;
}

static void xfdr_user_put(struct xfdr_user *u)
{
	lockdep_assert_held(&xfdr_lock);
	if (--u->refs)
		return;
	WARN_ON_ONCE(u->sessions || u->kept || u->bytes);
	list_del(&u->node);
	kfree(u);
}

/*
 * May @s take @sessions more sessions and @bytes more memory, and mark
 * @kept more sessions keep?  The global caps hold for everyone; the
 * reserves (of sessions, memory and keep slots) and the per-user limits
 * for the unprivileged.  xfdr_lock held.
 *
 * Return: 0, or the errno the caller reports.
 */
static int xfdr_session_may_take(const struct xfdr_session *s, u32 sessions,
				 u64 bytes, u32 kept)
{
	const struct xfdr_config *c = &xfdr_config;
	u32 open = xfdr_totals.sessions + xfdr_totals.retained;
	u64 total_bytes = xfdr_totals.bytes_allocated;
	const struct xfdr_user *u = s->user;

	lockdep_assert_held(&xfdr_lock);
	if (open + sessions > c->max_sessions)
		return -EMFILE;
	if (total_bytes + bytes > (u64)c->max_total_kb * 1024)
		return -ENOSPC;
	if (xfdr_totals.keep + kept > c->max_retained)
		return -ENOSPC;
	if (s->privileged)
		return 0;
	if (sessions &&
	    open + sessions + c->admin_reserve_sessions > c->max_sessions)
		return -EMFILE;
	if (bytes && total_bytes + bytes + (u64)c->admin_reserve_kb * 1024 >
			     (u64)c->max_total_kb * 1024)
		return -ENOSPC;
	if (kept && xfdr_totals.keep + kept + c->admin_reserve_retained >
			    c->max_retained)
		return -ENOSPC;
	if (u->sessions + sessions > c->max_user_sessions ||
	    u->bytes + bytes > (u64)c->max_user_kb * 1024 ||
	    u->kept + kept > c->max_user_retained)
		return -EDQUOT;
	return 0;
}

static void xfdr_session_publish(struct xfdr_session *s)
{
	lockdep_assert_held(&xfdr_lock);
	if (s->header)
		WRITE_ONCE(s->header->state, s->state);
}

/**
 * xfdr_session_create() - a new session for the calling process
 * @writable: its file was opened for writing (else it can only be read)
 *
 * Return: the session with the owner reference; -EMFILE at max_sessions
 * (less the admin reserve for the unprivileged), -EDQUOT at the user's
 * max_user_sessions, -EINVAL for a task without an mm, -ENOMEM.
 */
struct xfdr_session *xfdr_session_create(bool writable)
{
	struct xfdr_user *spare;
	struct xfdr_session_priv *p;
	struct xfdr_session *s;
	int id, err;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!spare) {
		kfree(p);
		return ERR_PTR(-ENOMEM);
	}
	s = &p->s;
	kref_init(&s->ref);
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->node);
	INIT_HLIST_NODE(&s->mm_node);
	mmgrab(current->mm);
	s->mm = current->mm;
	s->owner = get_pid(task_tgid(current));
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->owner_uid = current_euid();
	s->privileged = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	s->writable = writable;
	get_task_comm(s->comm, current);
	p->owner_vpid = task_tgid_vnr(current);
	p->owner_vuid = from_kuid_munged(current_user_ns(), s->owner_uid);

	mutex_lock(&xfdr_lock);
	s->user = xfdr_user_get(s->owner_uid, &spare);
	err = xfdr_session_may_take(s, 1, 0, 0);
	if (err)
		goto err_user;
	id = idr_alloc_cyclic(&xfdr_ids, s, 1, INT_MAX, GFP_KERNEL);
	if (id < 0) {
		err = id;
		goto err_user;
	}
	s->id = id;
	p->listed = true;
	list_add_tail(&s->node, &xfdr_sessions);
	xfdr_totals.sessions++;
	s->user->sessions++;
	mutex_unlock(&xfdr_lock);
	kfree(spare);
	return s;

err_user:
	xfdr_user_put(s->user);
	mutex_unlock(&xfdr_lock);
	kfree(spare);
	put_pid_ns(s->pid_ns);
	put_pid(s->owner);
	mmdrop(s->mm);
	mutex_destroy(&s->lock);
	kfree(p);
	return ERR_PTR(err);
}

/* The memory a geometry allocates, before it belongs to a session. */
struct xfdr_rings {
	struct xray_fdr_header *header;
	struct xfdr_cpu *cpus;
	struct xfdr_thread *threads;
};

static void xfdr_rings_free(struct xfdr_rings *r)
{
	unsigned int cpu;

	if (r->cpus) {
		for (cpu = 0; cpu < nr_cpu_ids; cpu++)
			vfree(r->cpus[cpu].area);
		kfree(r->cpus);
	}
	kvfree(r->threads);
	vfree(r->header);
}

static void xfdr_session_free_rings(struct xfdr_session *s)
{
	struct xfdr_rings r = {
		.header = s->header,
		.cpus = s->cpus,
		.threads = s->threads,
	};

	xfdr_rings_free(&r);
	s->header = NULL;
	s->cpus = NULL;
	s->threads = NULL;
}

/* kref release: called with xfdr_lock held, returns with it released. */
static void xfdr_session_release(struct kref *ref) __releases(&xfdr_lock)
{
	struct xfdr_session *s = container_of(ref, struct xfdr_session, ref);

	WARN_ON_ONCE(s->state & XRAY_FDR_STATE_ENABLED);
	idr_remove(&xfdr_ids, s->id);
	list_del(&s->node);
	if (s->state & XRAY_FDR_STATE_KEEP) {
		xfdr_totals.keep--;
		s->user->kept--;
	}
	xfdr_totals.bytes_allocated -= s->bytes;
	s->user->bytes -= s->bytes;
	xfdr_user_put(s->user);
	mutex_unlock(&xfdr_lock);

	xfdr_session_free_rings(s);
	put_pid_ns(s->pid_ns);
	put_pid(s->owner);
	if (s->mm)
		mmdrop(s->mm);
	mutex_destroy(&s->lock);
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

/*
 * No lock held: this can take long for large rings.  Everything is charged
 * to the caller's memory cgroup (the process setting the geometry), where
 * it stays, like tmpfs pages, after that process is gone.  6.1 exports no
 * accounted vmalloc that takes a node, so the rings lose their placement
 * on their CPU's node: accounting matters more than NUMA here.
 */
static int xfdr_rings_alloc(struct xfdr_rings *r, u64 area_size, u32 threads)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO;
	unsigned int cpu;

	r->header = __vmalloc(PAGE_SIZE, gfp);
	if (!r->header)
		return -ENOMEM;
	r->cpus = kcalloc(nr_cpu_ids, sizeof(*r->cpus), GFP_KERNEL_ACCOUNT);
	if (!r->cpus)
		return -ENOMEM;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		r->cpus[cpu].area = __vmalloc(area_size, gfp);
		if (!r->cpus[cpu].area)
			return -ENOMEM;
	}
	r->threads = kvcalloc(threads, sizeof(*r->threads), GFP_KERNEL_ACCOUNT);
	if (!r->threads)
		return -ENOMEM;
	return 0;
}

/**
 * xfdr_session_configure() - set the geometry and allocate the rings
 * @s: a session without geometry
 * @geom: the requested shape
 *
 * Return: 0; -EINVAL for a shape outside the limits, -EFBIG above the
 * per-session cap, -ENOSPC above the global cap (less the admin reserve
 * for the unprivileged), -EDQUOT above the user's cap, -EBUSY if already
 * set,
 * -ENOMEM.
 */
int xfdr_session_configure(struct xfdr_session *s,
			   const struct xray_fdr_geometry *geom)
{
	struct xfdr_rings r = {};
	u64 ring, area, bytes;
	unsigned int cpu;
	u32 threads;
	int err;

	if (geom->flags & ~XRAY_FDR_GEOM_DISCARD)
		return -EINVAL;

	mutex_lock(&s->lock);
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
	err = xfdr_session_may_take(s, 0, bytes, 0);
	if (err)
		goto out_unlock;

	/* Charged now, so that the caps hold while the rings are allocated. */
	xfdr_totals.bytes_allocated += bytes;
	s->user->bytes += bytes;
	mutex_unlock(&xfdr_lock);

	err = xfdr_rings_alloc(&r, area, threads);
	mutex_lock(&xfdr_lock);
	if (err) {
		xfdr_totals.bytes_allocated -= bytes;
		s->user->bytes -= bytes;
		mutex_unlock(&xfdr_lock);
		xfdr_rings_free(&r);
		goto out;
	}
	s->geom_flags = geom->flags;
	s->subbuf_size = geom->subbuf_size;
	s->subbuf_shift = ilog2(geom->subbuf_size);
	s->subbuf_count = geom->subbuf_count;
	s->ring_size = ring;
	s->area_size = area;
	s->thread_mask = threads - 1;
	s->header = r.header;
	s->cpus = r.cpus;
	s->threads = r.threads;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		xfdr_ring_init(s, cpu);
	s->bytes = bytes;
	s->state |= XRAY_FDR_STATE_CONFIGURED;
	xfdr_session_fill_header(s);
out_unlock:
	mutex_unlock(&xfdr_lock);
out:
	mutex_unlock(&s->lock);
	return err;
}

/*
 * Stop the scheduler records of @s; @s->lock and xfdr_lock held.  Returns
 * true if the caller must xfdr_sched_wait() once xfdr_lock is dropped.
 */
static bool xfdr_session_stop_locked(struct xfdr_session *s)
{
	if (!(s->state & XRAY_FDR_STATE_ENABLED))
		return false;
	xfdr_sched_detach(s);
	s->state &= ~XRAY_FDR_STATE_ENABLED;
	xfdr_session_publish(s);
	return true;
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

	mutex_lock(&s->lock);
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
	mutex_unlock(&s->lock);
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
	bool wait = false;
	int err = 0;

	mutex_lock(&s->lock);
	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (s->state & XRAY_FDR_STATE_ENABLED) {
		wait = xfdr_session_stop_locked(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_STOPPED);
	}
	mutex_unlock(&xfdr_lock);
	if (wait)
		xfdr_sched_wait();
	mutex_unlock(&s->lock);
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

	mutex_lock(&s->lock);
	mutex_lock(&xfdr_lock);
	if (!xfdr_priv(s)->listed)
		err = -ENOENT;
	else if (!(s->state & XRAY_FDR_STATE_CONFIGURED))
		err = -ENODATA;
	if (err || (s->state & XRAY_FDR_STATE_FROZEN))
		goto out_unlock;
	if (xfdr_session_stop_locked(s)) {
		/* no kernel record may follow FROZEN: wait, without xfdr_lock */
		mutex_unlock(&xfdr_lock);
		xfdr_sched_wait();
		mutex_lock(&xfdr_lock);
	}
	s->state |= XRAY_FDR_STATE_FROZEN;
	xfdr_session_publish(s);
	xfdr_netlink_notify(s, XRAY_FDR_EVENT_FROZEN);
out_unlock:
	mutex_unlock(&xfdr_lock);
	mutex_unlock(&s->lock);
	return err;
}

/**
 * xfdr_session_keep() - keep the rings after the owner's last close, or not
 * @s: the session
 * @keep: the new setting
 *
 * Return: 0; -ENOENT if no longer listed, -ESRCH if already retained,
 * -ENOSPC if max_retained sessions (less admin_reserve_retained for the
 * unprivileged) are already marked keep, -EDQUOT if max_user_retained of
 * the user's are.
 */
int xfdr_session_keep(struct xfdr_session *s, bool keep)
{
	bool kept;
	int err = 0;

	mutex_lock(&s->lock);
	mutex_lock(&xfdr_lock);
	kept = s->state & XRAY_FDR_STATE_KEEP;
	if (!xfdr_priv(s)->listed) {
		err = -ENOENT;
	} else if (s->state & XRAY_FDR_STATE_RETAINED) {
		err = -ESRCH;
	} else if (keep && !kept) {
		err = xfdr_session_may_take(s, 0, 0, 1);
		if (!err) {
			xfdr_totals.keep++;
			s->user->kept++;
			s->state |= XRAY_FDR_STATE_KEEP;
		}
	} else if (!keep && kept) {
		xfdr_totals.keep--;
		s->user->kept--;
		s->state &= ~XRAY_FDR_STATE_KEEP;
	}
	xfdr_session_publish(s);
	mutex_unlock(&xfdr_lock);
	mutex_unlock(&s->lock);
	return err;
}

/* Unlist a retained session; the caller then puts the retained reference. */
static void xfdr_session_unretain_locked(struct xfdr_session *s)
{
	s->state &= ~(XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_KEEP);
	xfdr_totals.retained--;
	xfdr_totals.keep--;
	s->user->kept--;
	s->user->sessions--;
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

	mutex_lock(&s->lock);
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
	mutex_unlock(&s->lock);
	if (!err)
		xfdr_session_put(s);
	return err;
}

/*
 * Expiry: a retained session of an unprivileged opener is freed
 * retained_max_age seconds after its process went, so dead processes of
 * users cannot hold memory and keep slots for ever.  One delayed work,
 * due when the oldest such session expires.
 */
static void xfdr_expire_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xfdr_expire_work, xfdr_expire_fn);

/* Is @s due to be freed at @now?  xfdr_lock held. */
static bool xfdr_session_expired(struct xfdr_session *s, time64_t now)
{
	u32 age = xfdr_config.retained_max_age;

	return age && xfdr_priv(s)->listed && !s->privileged &&
	       (s->state & XRAY_FDR_STATE_RETAINED) &&
	       now - s->retained_at >= age;
}

/* Run the work when the oldest session it may free is due.  xfdr_lock
 * held.
 */
static void xfdr_expire_schedule_locked(void)
{
	time64_t now = ktime_get_boottime_seconds(), due = TIME64_MAX;
	u32 age = xfdr_config.retained_max_age;
	struct xfdr_session *s;

	lockdep_assert_held(&xfdr_lock);
	if (!age)
		return;
	list_for_each_entry(s, &xfdr_sessions, node) {
		if (xfdr_priv(s)->listed && !s->privileged &&
		    (s->state & XRAY_FDR_STATE_RETAINED))
			due = min(due, s->retained_at + age);
	}
	if (due == TIME64_MAX)
		return;
	mod_delayed_work(system_wq, &xfdr_expire_work,
			 due <= now ? 0 : (unsigned long)(due - now) * HZ);
}

/* Free @s (a reference held) if it is still due. */
static void xfdr_session_expire(struct xfdr_session *s, time64_t now)
{
	bool expired;

	mutex_lock(&s->lock);
	mutex_lock(&xfdr_lock);
	expired = xfdr_session_expired(s, now);
	if (expired) {
		xfdr_session_unretain_locked(s);
		xfdr_totals.retained_expired++;
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_DROPPED);
	}
	mutex_unlock(&xfdr_lock);
	mutex_unlock(&s->lock);
	if (expired)
		xfdr_session_put(s);
}

/**
 * xfdr_sessions_expire() - free the retained sessions now due, and run
 * again when the next one is
 *
 * Called by the delayed work, and by config-set so that a shorter
 * retained_max_age applies at once.
 */
void xfdr_sessions_expire(void)
{
	struct xfdr_session *s, *due[16];
	time64_t now = ktime_get_boottime_seconds();
	unsigned int n = 0, i;

	/* in batches: each expiry takes the session's lock first */
	mutex_lock(&xfdr_lock);
	list_for_each_entry(s, &xfdr_sessions, node) {
		if (n < ARRAY_SIZE(due) && xfdr_session_expired(s, now)) {
			kref_get(&s->ref);
			due[n++] = s;
		}
	}
	mutex_unlock(&xfdr_lock);
	for (i = 0; i < n; i++) {
		xfdr_session_expire(due[i], now);
		xfdr_session_put(due[i]);
	}
	mutex_lock(&xfdr_lock);
	xfdr_expire_schedule_locked();
	mutex_unlock(&xfdr_lock);
}

static void xfdr_expire_fn(struct work_struct *work)
{
	xfdr_sessions_expire();
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
	bool retain;

	mutex_lock(&s->lock);
	mutex_lock(&xfdr_lock);
	if (xfdr_session_stop_locked(s)) {
		mutex_unlock(&xfdr_lock);
		xfdr_sched_wait();
		mutex_lock(&xfdr_lock);
	}
	xfdr_totals.sessions--;
	retain = (s->state & XRAY_FDR_STATE_KEEP) &&
		 (s->state & XRAY_FDR_STATE_CONFIGURED);
	if (retain) {
		s->state |= XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_FROZEN;
		s->retained_at = ktime_get_boottime_seconds();
		xfdr_totals.retained++;
		mmdrop(s->mm);
		s->mm = NULL;
		xfdr_session_publish(s);
		xfdr_netlink_notify(s, XRAY_FDR_EVENT_RETAINED);
		xfdr_expire_schedule_locked();
	} else {
		xfdr_priv(s)->listed = false;
		s->user->sessions--;
	}
	mutex_unlock(&xfdr_lock);
	mutex_unlock(&s->lock);
	if (!retain)
		xfdr_session_put(s);
}

/**
 * xfdr_session_attach() - may @s get a read-only view
 * @s: the session
 *
 * A retained session, or a live one whose rings exist (a snapshot of a
 * running process: its writers go on while the view reads).  The view
 * holds a reference, so the owner's close still retains or unlists the
 * session as usual and the memory stays until the last view closes.
 *
 * Return: 0 if it is retained or configured and listed, else -EBUSY
 * (no rings yet, or unlisted: going away).
 */
int xfdr_session_attach(struct xfdr_session *s)
{
	int err;

	mutex_lock(&xfdr_lock);
	if (xfdr_priv(s)->listed &&
	    (s->state & (XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_CONFIGURED)))
		err = 0;
	else
		err = -EBUSY;
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

	/* netlink is gone and no file is open: nothing schedules it again */
	cancel_delayed_work_sync(&xfdr_expire_work);
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
