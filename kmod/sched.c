// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduler records of traced threads.
 *
 * Linux 6.1 does not export sched_switch to modules, so the tracepoint is
 * found by name with for_each_kernel_tracepoint() and a probe attached with
 * tracepoint_probe_register().  The probes are registered when a session
 * first records and stay until the module goes: attaching and detaching
 * patches the scheduler's code on every CPU, which recording sessions
 * that start and stop often must not cause each time.  Before the first
 * recording the scheduler never calls us; afterwards a switch costs a load
 * of the number of recording sessions while none records, and while one
 * does, a load of each task's mm and one hash bucket (recording sessions
 * keyed by mm).
 *
 * A traced task is one using the mm of a recording session (the threads of
 * the process that opened it), excluding kernel threads and io_uring
 * workers.  Records name only the traced task: its switch-out says nothing
 * about what runs next.  Migrations are noticed at switch-in, on the new
 * CPU, from the CPU a per-session thread table remembers; the table is
 * preallocated (the probe runs under the runqueue lock and cannot
 * allocate) and a thread's slot is freed by the sched_process_exit probe.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/msr.h>

#include "xfdr.h"

static struct tracepoint *xfdr_tp_switch;
static struct tracepoint *xfdr_tp_exit;

/* Recording sessions by mm; changed under xfdr_lock, read under RCU. */
static DEFINE_HASHTABLE(xfdr_recording, 6);
static unsigned int xfdr_nr_recording;
static bool xfdr_probes_on;

struct xfdr_pcpu_stats {
	u64 switch_records;
	u64 migration_records;
	u64 records_lost;
};

static DEFINE_PER_CPU(struct xfdr_pcpu_stats, xfdr_stats);

static struct xfdr_session *xfdr_recording_session(struct mm_struct *mm)
{
	struct xfdr_session *s;

	hash_for_each_possible_rcu(xfdr_recording, s, mm_node,
				   (unsigned long)mm) {
		if (s->mm == mm)
			return s;
	}
	return NULL;
}

/* The session recording @t, if @t is a traced task. */
static struct xfdr_session *xfdr_traced(struct task_struct *t)
{
	struct mm_struct *mm = READ_ONCE(t->mm);

	if (!mm || (t->flags & (PF_KTHREAD | PF_IO_WORKER)))
		return NULL;
	return xfdr_recording_session(mm);
}

static u32 xfdr_thread_hash(struct xfdr_session *s, u32 key)
{
	return hash_32(key, 32) & s->thread_mask;
}

/*
 * A thread's slot lies within XFDR_THREAD_PROBES slots of its hash: a
 * lookup costs a few cache lines at most, however many threads came and
 * went.  Exits leave XFDR_THREAD_GONE, which a new thread may reuse; an
 * empty slot ends a search, since no key is ever placed beyond one.
 */
#define XFDR_THREAD_PROBES 32U

static u32 xfdr_thread_probes(struct xfdr_session *s)
{
	return min(XFDR_THREAD_PROBES, s->thread_mask + 1);
}

/* The slot of @key, or NULL. */
static struct xfdr_thread *xfdr_thread_find(struct xfdr_session *s, u32 key)
{
	u32 i = xfdr_thread_hash(s, key), n, probes = xfdr_thread_probes(s);
	struct xfdr_thread *slot;
	u32 k;

	for (n = 0; n < probes; n++, i = (i + 1) & s->thread_mask) {
		slot = &s->threads[i];
		k = READ_ONCE(slot->key);
		if (k == key)
			return slot;
		if (k == XFDR_THREAD_EMPTY)
			break;
	}
	return NULL;
}

/*
 * The slot of @t, claimed if new (*fresh set).  Only @t's own switches use
 * its slot and they never run at once, so only claiming needs an atomic
 * operation, against other threads claiming the same free slot.
 */
static struct xfdr_thread *xfdr_thread_get(struct xfdr_session *s,
					   struct task_struct *t, bool *fresh)
{
	u32 key = t->pid, i, n, k, probes = xfdr_thread_probes(s);
	struct xfdr_thread *slot, *free;
	int attempt;

	*fresh = false;
	for (attempt = 0; attempt < 4; attempt++) {
		free = NULL;
		i = xfdr_thread_hash(s, key);
		for (n = 0; n < probes; n++, i = (i + 1) & s->thread_mask) {
			slot = &s->threads[i];
			k = READ_ONCE(slot->key);
			if (k == key)
				return slot;
			if (k == XFDR_THREAD_GONE && !free)
				free = slot;
			if (k == XFDR_THREAD_EMPTY) {
				if (!free)
					free = slot;
				break;
			}
		}
		if (!free)
			return NULL;
		k = READ_ONCE(free->key);
		if ((k == XFDR_THREAD_EMPTY || k == XFDR_THREAD_GONE) &&
		    cmpxchg(&free->key, k, key) == k) {
			free->vtid =
				__task_pid_nr_ns(t, PIDTYPE_PID, s->pid_ns);
			free->vpid =
				__task_pid_nr_ns(t, PIDTYPE_TGID, s->pid_ns);
			*fresh = true;
			return free;
		}
	}
	return NULL;
}

static void xfdr_lost(struct xfdr_session *s, unsigned int cpu)
{
	struct xray_fdr_control *ctl = s->cpus[cpu].area;

	this_cpu_inc(xfdr_stats.records_lost);
	WRITE_ONCE(ctl->records_lost, ++s->cpus[cpu].records_lost);
}

static void xfdr_emit(struct xfdr_session *s, unsigned int cpu,
		      struct xray_fdr_sched_record *rec)
{
	struct xfdr_pcpu_stats *st = this_cpu_ptr(&xfdr_stats);
	struct xray_fdr_control *ctl = s->cpus[cpu].area;
	struct xfdr_cpu *c = &s->cpus[cpu];

	if (!xfdr_ring_append(s, cpu, rec, sizeof(*rec), rec->tsc)) {
		xfdr_lost(s, cpu);
	} else if (rec->type == XRAY_FDR_REC_TYPE(XRAY_FDR_REC_MIGRATE)) {
		st->migration_records++;
		WRITE_ONCE(ctl->migration_records, ++c->migration_records);
	} else {
		st->switch_records++;
		WRITE_ONCE(ctl->switch_records, ++c->switch_records);
	}
}

/* A record of @t's thread and process ids, from its slot if it has one. */
static void xfdr_record_init(struct xfdr_session *s,
			     struct xray_fdr_sched_record *rec,
			     enum xray_fdr_rec_kind kind, unsigned int cpu,
			     struct task_struct *t, struct xfdr_thread *th)
{
	memset(rec, 0, sizeof(*rec));
	rec->type = XRAY_FDR_REC_TYPE(kind);
	rec->len = sizeof(*rec) / 8;
	rec->cpu = cpu;
	rec->prev_cpu = cpu;
	if (th) {
		rec->tid = th->vtid;
		rec->pid = th->vpid;
	} else {
		rec->tid = __task_pid_nr_ns(t, PIDTYPE_PID, s->pid_ns);
		rec->pid = __task_pid_nr_ns(t, PIDTYPE_TGID, s->pid_ns);
	}
	rec->tsc = rdtsc_ordered();
}

static void xfdr_switch_out(struct xfdr_session *s, unsigned int cpu,
			    struct task_struct *t, bool runnable)
{
	struct xray_fdr_sched_record rec;
	struct xfdr_thread *th;
	bool fresh;

	th = xfdr_thread_get(s, t, &fresh);
	xfdr_record_init(s, &rec, XRAY_FDR_REC_SWITCH_OUT, cpu, t, th);
	if (runnable)
		rec.flags = XRAY_FDR_SCHED_PREEMPTED;
	if (th)
		th->last_cpu = cpu;
	xfdr_emit(s, cpu, &rec);
}

static void xfdr_switch_in(struct xfdr_session *s, unsigned int cpu,
			   struct task_struct *t)
{
	struct xray_fdr_sched_record rec;
	struct xfdr_thread *th;
	bool fresh;

	th = xfdr_thread_get(s, t, &fresh);
	if (!th) {
		/* Full table: whether it moved cannot be known. */
		xfdr_lost(s, cpu);
	} else if (!fresh && th->last_cpu != cpu) {
		xfdr_record_init(s, &rec, XRAY_FDR_REC_MIGRATE, cpu, t, th);
		rec.prev_cpu = th->last_cpu;
		xfdr_emit(s, cpu, &rec);
	}
	if (th)
		th->last_cpu = cpu;
	xfdr_record_init(s, &rec, XRAY_FDR_REC_SWITCH_IN, cpu, t, th);
	xfdr_emit(s, cpu, &rec);
}

/* Called by the scheduler on this CPU, runqueue locked, interrupts off. */
static void xfdr_probe_switch(void *data, bool preempt,
			      struct task_struct *prev,
			      struct task_struct *next, unsigned int prev_state)
{
	unsigned int cpu = smp_processor_id();
	struct xfdr_session *s;

	if (!READ_ONCE(xfdr_nr_recording) ||
	    unlikely(!READ_ONCE(xfdr_config.sched_records)))
		return;
	s = xfdr_traced(prev);
	if (s)
		xfdr_switch_out(s, cpu, prev,
				preempt || prev_state == TASK_RUNNING);
	s = xfdr_traced(next);
	if (s)
		xfdr_switch_in(s, cpu, next);
}

/*
 * A task exits: free its slot in any recording session.  Its mm is already
 * gone, so every recording session is searched; exits are rare next to
 * switches and while alive the task's pid names only it.
 */
static void xfdr_probe_exit(void *data, struct task_struct *t)
{
	struct xfdr_thread *th;
	struct xfdr_session *s;
	int bkt;

	if (!READ_ONCE(xfdr_nr_recording) ||
	    (t->flags & (PF_KTHREAD | PF_IO_WORKER)))
		return;
	rcu_read_lock();
	hash_for_each_rcu(xfdr_recording, bkt, s, mm_node) {
		th = xfdr_thread_find(s, t->pid);
		if (th)
			WRITE_ONCE(th->key, XFDR_THREAD_GONE);
	}
	rcu_read_unlock();
}

static int xfdr_probes_register(void)
{
	int err;

	if (xfdr_probes_on)
		return 0;
	err = tracepoint_probe_register(xfdr_tp_switch, xfdr_probe_switch,
					NULL);
	if (err)
		return err;
	err = tracepoint_probe_register(xfdr_tp_exit, xfdr_probe_exit, NULL);
	if (err)
		goto err_switch;
	xfdr_probes_on = true;
	return 0;

err_switch:
	tracepoint_probe_unregister(xfdr_tp_switch, xfdr_probe_switch, NULL);
	return err;
}

/**
 * xfdr_sched_attach() - start recording the scheduler events of @s
 * @s: a configured session; xfdr_lock held
 *
 * Return: 0, -EBUSY if another session records the same process, or the
 * error of tracepoint_probe_register().
 */
int xfdr_sched_attach(struct xfdr_session *s)
{
	struct xfdr_session *other;
	int err;

	lockdep_assert_held(&xfdr_lock);
	hash_for_each_possible(xfdr_recording, other, mm_node,
			       (unsigned long)s->mm) {
		if (other->mm == s->mm)
			return -EBUSY;
	}
	err = xfdr_probes_register();
	if (err)
		return err;
	/* No probe sees @s yet: forget threads from an earlier recording,
	 * whose pids may have been reused since.
	 */
	memset(s->threads, 0, (s->thread_mask + 1) * sizeof(*s->threads));
	WRITE_ONCE(xfdr_nr_recording, xfdr_nr_recording + 1);
	hash_add_rcu(xfdr_recording, &s->mm_node, (unsigned long)s->mm);
	return 0;
}

/**
 * xfdr_sched_detach() - stop recording @s
 * @s: a recording session; xfdr_lock and @s->lock held
 *
 * New probes no longer find @s; those already running may still write
 * into its rings until xfdr_sched_wait() returns, which the caller calls
 * after dropping xfdr_lock and before releasing @s->lock.
 */
void xfdr_sched_detach(struct xfdr_session *s)
{
	lockdep_assert_held(&xfdr_lock);
	lockdep_assert_held(&s->lock);
	hash_del_rcu(&s->mm_node);
	WRITE_ONCE(xfdr_nr_recording, xfdr_nr_recording - 1);
}

/**
 * xfdr_sched_wait() - wait for the probes that may still see a detached
 * session
 *
 * Probes run with preemption off: a grace period waits for them.  Never
 * called under xfdr_lock, which would make every other user wait too.
 */
void xfdr_sched_wait(void)
{
	lockdep_assert_not_held(&xfdr_lock);
	might_sleep();
	synchronize_rcu();
}

static void xfdr_find_tracepoint(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		xfdr_tp_switch = tp;
	else if (!strcmp(tp->name, "sched_process_exit"))
		xfdr_tp_exit = tp;
}

int xfdr_sched_init(void)
{
	for_each_kernel_tracepoint(xfdr_find_tracepoint, NULL);
	if (!xfdr_tp_switch || !xfdr_tp_exit) {
		pr_err("tracepoints sched_switch and sched_process_exit not found\n");
		return -ENOENT;
	}
	return 0;
}

void xfdr_sched_exit(void)
{
	WARN_ON_ONCE(xfdr_nr_recording);
	if (!xfdr_probes_on)
		return;
	WARN_ON_ONCE(tracepoint_probe_unregister(xfdr_tp_exit, xfdr_probe_exit,
						 NULL));
	WARN_ON_ONCE(tracepoint_probe_unregister(xfdr_tp_switch,
						 xfdr_probe_switch, NULL));
	/* no probe may still run once the module's code goes */
	tracepoint_synchronize_unregister();
}

void xfdr_stats_counts(struct xfdr_counts *counts)
{
	const struct xfdr_pcpu_stats *st;
	unsigned int cpu;

	memset(counts, 0, sizeof(*counts));
	for_each_possible_cpu(cpu) {
		st = per_cpu_ptr(&xfdr_stats, cpu);
		counts->switch_records += READ_ONCE(st->switch_records);
		counts->migration_records += READ_ONCE(st->migration_records);
		counts->records_lost += READ_ONCE(st->records_lost);
	}
	counts->bytes_mapped = atomic64_read(&xfdr_bytes_mapped);
}
