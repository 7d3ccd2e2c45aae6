// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduler records: switch-out/switch-in pairs of traced threads, the
 * preempted flag, migration records, nothing about untraced tasks, and the
 * commit protocol shared by the kernel and a user writer (rseq).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

FIXTURE(rec)
{
	struct xs_session s;
	struct xs_sched *v;
	long n;
	char err[256];
};

FIXTURE_SETUP(rec)
{
	/* 64 KiB per CPU: far more than any test here fills */
	ASSERT_EQ(0, xs_setup(&self->s, 4096, 16, 0));
	self->v = NULL;
}

FIXTURE_TEARDOWN(rec)
{
	free(self->v);
	xs_close(&self->s);
}

static long collect(struct xs_session *s, struct xs_sched **v, char *err)
{
	free(*v);
	*v = NULL;
	return xs_sched_records(s, v, err, 256);
}

/* Two threads on one CPU hand a token back and forth through pipes. */
struct pingpong {
	int a[2], b[2];
	int rounds;
	pid_t tid[2];
};

static void *pingpong_thread(void *p)
{
	struct pingpong *pp = p;
	int me = pp->tid[0] ? 1 : 0, i;
	char c = 0;

	pp->tid[me] = xs_gettid();
	if (xs_pin_cpu(0))
		return (void *)1;
	for (i = 0; i < pp->rounds; i++) {
		if (me == 0) {
			if (write(pp->a[1], &c, 1) != 1 ||
			    read(pp->b[0], &c, 1) != 1)
				return (void *)1;
		} else {
			if (read(pp->a[0], &c, 1) != 1 ||
			    write(pp->b[1], &c, 1) != 1)
				return (void *)1;
		}
	}
	return NULL;
}

static int run_pingpong(struct pingpong *pp, int rounds)
{
	pthread_t t[2];
	void *r0, *r1;

	memset(pp, 0, sizeof(*pp));
	pp->rounds = rounds;
	if (pipe(pp->a) || pipe(pp->b))
		return -errno;
	if (pthread_create(&t[0], NULL, pingpong_thread, pp))
		return -EAGAIN;
	while (!__atomic_load_n(&pp->tid[0], __ATOMIC_ACQUIRE))
		usleep(100);
	if (pthread_create(&t[1], NULL, pingpong_thread, pp))
		return -EAGAIN;
	pthread_join(t[0], &r0);
	pthread_join(t[1], &r1);
	close(pp->a[0]);
	close(pp->a[1]);
	close(pp->b[0]);
	close(pp->b[1]);
	return r0 || r1 ? -EIO : 0;
}

TEST_F(rec, pingpong_gives_matching_switch_pairs)
{
	int rounds = 300, i, t, handoffs = 0, outs[2] = { 0 }, ins[2] = { 0 };
	unsigned int last[2] = { 0 };
	uint64_t switches = xs_sysfs("switch_records"), tsc = 0, mine = 0;
	struct xs_sched *r, *prev = NULL;
	struct pingpong pp;
	unsigned int cpu;

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, run_pingpong(&pp, rounds));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	/* the statistics moved by what this session got, at least */
	for (cpu = 0; cpu < self->s.hdr->nr_cpus; cpu++)
		mine += xs_control(&self->s, cpu)->switch_records;
	EXPECT_LE(switches + mine, xs_sysfs("switch_records"));
	self->n = collect(&self->s, &self->v, self->err);
	ASSERT_LT(0, self->n) TH_LOG("%s", self->err);

	for (i = 0; i < self->n; i++) {
		r = &self->v[i];
		EXPECT_EQ((uint32_t)getpid(), r->pid);
		if (r->ring != 0)
			continue;
		/* one CPU's ring is in time order */
		EXPECT_LE(tsc, r->tsc);
		tsc = r->tsc;
		for (t = 0; t < 2; t++) {
			if (r->tid != (uint32_t)pp.tid[t])
				continue;
			/* a thread's records alternate in, out, in ... */
			if (r->kind == XRAY_FDR_REC_SWITCH_OUT) {
				EXPECT_NE(XRAY_FDR_REC_SWITCH_OUT, last[t]);
				outs[t]++;
			} else if (r->kind == XRAY_FDR_REC_SWITCH_IN) {
				EXPECT_NE(XRAY_FDR_REC_SWITCH_IN, last[t]);
				ins[t]++;
			}
			if (r->kind != XRAY_FDR_REC_MIGRATE)
				last[t] = r->kind;
			/* one switch: one thread out, the other in */
			if (prev && r->kind == XRAY_FDR_REC_SWITCH_IN &&
			    prev->kind == XRAY_FDR_REC_SWITCH_OUT &&
			    prev->tid == (uint32_t)pp.tid[!t])
				handoffs++;
		}
		prev = r;
	}
	for (t = 0; t < 2; t++) {
		/* each round blocks each thread once (but maybe the first) */
		EXPECT_LE(rounds - 1, outs[t]);
		EXPECT_GE(1, abs(outs[t] - ins[t]));
	}
	EXPECT_LE(rounds, handoffs);
	TH_LOG("%ld records, outs %d/%d, handoffs %d", self->n, outs[0],
	       outs[1], handoffs);
}

static void *spin_on_cpu0(void *p)
{
	uint64_t end = xs_now_ns() + 300000000u;
	volatile uint64_t x = 0;

	*(pid_t *)p = xs_gettid();
	if (xs_pin_cpu(0))
		return (void *)1;
	while (xs_now_ns() < end)
		x++;
	return NULL;
}

TEST_F(rec, preempted_flag_tells_preemption_from_blocking)
{
	int i, preempted = 0, blocked = 0, pp_blocked = 0;
	struct pingpong pp;
	pthread_t t[2];
	pid_t tid[2];

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, pthread_create(&t[0], NULL, spin_on_cpu0, &tid[0]));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, spin_on_cpu0, &tid[1]));
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	ASSERT_EQ(0, run_pingpong(&pp, 50));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	self->n = collect(&self->s, &self->v, self->err);
	ASSERT_LT(0, self->n) TH_LOG("%s", self->err);

	for (i = 0; i < self->n; i++) {
		struct xs_sched *r = &self->v[i];

		if (r->kind != XRAY_FDR_REC_SWITCH_OUT)
			continue;
		if (r->tid == (uint32_t)tid[0] || r->tid == (uint32_t)tid[1]) {
			if (r->flags & XRAY_FDR_SCHED_PREEMPTED)
				preempted++;
			else
				blocked++;
		}
		if ((r->tid == (uint32_t)pp.tid[0] ||
		     r->tid == (uint32_t)pp.tid[1]) &&
		    !(r->flags & XRAY_FDR_SCHED_PREEMPTED))
			pp_blocked++;
	}
	/* two spinners sharing a CPU for 300 ms get preempted, and rarely block */
	EXPECT_LE(4, preempted);
	EXPECT_GT(preempted, blocked);
	/* a ping-pong thread waiting for the token blocks */
	EXPECT_LE(50, pp_blocked);
	TH_LOG("spinners: %d preempted, %d blocked", preempted, blocked);
}

TEST_F(rec, untraced_busy_process_leaves_no_trace)
{
	uint64_t end;
	int status, i;
	pid_t child;

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		/* a copy of the address space: not the traced process */
		volatile uint64_t x = 0;

		if (xs_pin_cpu(0))
			_exit(1);
		end = xs_now_ns() + 300000000u;
		while (xs_now_ns() < end) {
			x++;
			if (!(x % 100000))
				sched_yield();
		}
		_exit(0);
	}
	ASSERT_EQ(0, xs_pin_cpu(0));
	for (i = 0; i < 100; i++)
		usleep(1000);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, status);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	self->n = collect(&self->s, &self->v, self->err);
	ASSERT_LT(0, self->n) TH_LOG("%s", self->err);

	for (i = 0; i < self->n; i++) {
		EXPECT_EQ((uint32_t)getpid(), self->v[i].pid);
		EXPECT_NE((uint32_t)child, self->v[i].tid);
		EXPECT_NE((uint32_t)child, self->v[i].pid);
	}
}

struct mover {
	pid_t tid;
	int err;
};

static void *move_cpu0_to_cpu1(void *p)
{
	struct mover *m = p;
	int i;

	m->tid = xs_gettid();
	m->err = xs_pin_cpu(0);
	for (i = 0; i < 5 && !m->err; i++)
		usleep(1000);
	if (!m->err)
		m->err = xs_pin_cpu(1);
	for (i = 0; i < 5 && !m->err; i++)
		usleep(1000);
	return NULL;
}

TEST_F(rec, affinity_change_gives_a_migration_record)
{
	uint64_t migrations = xs_sysfs("migration_records");
	struct mover m = { 0 };
	int i, found = 0;
	pthread_t t;

	if (xs_nr_online_cpus() < 2)
		SKIP(return, "needs two online CPUs, the guest has one");
	/* the thread starts on CPU 0 too: one move only */
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, pthread_create(&t, NULL, move_cpu0_to_cpu1, &m));
	pthread_join(t, NULL);
	ASSERT_EQ(0, m.err);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	self->n = collect(&self->s, &self->v, self->err);
	ASSERT_LT(0, self->n) TH_LOG("%s", self->err);

	for (i = 0; i < self->n; i++) {
		struct xs_sched *r = &self->v[i];

		if (r->tid != (uint32_t)m.tid ||
		    r->kind != XRAY_FDR_REC_MIGRATE)
			continue;
		EXPECT_EQ(1, r->cpu);
		EXPECT_EQ(0, r->prev_cpu);
		EXPECT_EQ(1, r->ring);
		/* then the switch-in it announces */
		ASSERT_LT(i + 1, self->n);
		EXPECT_EQ(XRAY_FDR_REC_SWITCH_IN, self->v[i + 1].kind);
		EXPECT_EQ((uint32_t)m.tid, self->v[i + 1].tid);
		found++;
	}
	EXPECT_EQ(1, found);
	EXPECT_EQ(found, (int)xs_control(&self->s, 1)->migration_records);
	EXPECT_LE(migrations + found, xs_sysfs("migration_records"));
}

TEST_F(rec, stop_and_freeze_stop_the_kernel)
{
	struct xray_fdr_control *ctl = xs_control(&self->s, 0);
	struct pingpong pp;
	uint64_t commit;
	char rec[16] = { XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND), 2 };

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, run_pingpong(&pp, 20));
	EXPECT_LT(0, ctl->switch_records);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	commit = ctl->commit;
	ASSERT_EQ(0, run_pingpong(&pp, 20));
	EXPECT_EQ(commit, ctl->commit);

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_FREEZE, 0));
	commit = ctl->commit;
	ASSERT_EQ(0, run_pingpong(&pp, 20));
	EXPECT_EQ(commit, ctl->commit);
	/* the test writer obeys the frozen flag too */
	EXPECT_EQ(-EAGAIN, xs_write(&self->s, rec, sizeof(rec), 1));
}

TEST_F(rec, corrupt_commit_words_lose_records_not_memory)
{
	static const uint64_t bad[] = {
		0, /* offset 0 */
		XRAY_FDR_COMMIT(7, 12), /* inside the sub-buffer header */
		XRAY_FDR_COMMIT(7, 4096 * 16 + 8), /* past the ring */
		XRAY_FDR_COMMIT(7, 100), /* not 8-byte aligned */
		UINT64_MAX,
	};
	uint64_t lost_before, lost_after;
	struct xray_fdr_control *ctl;
	struct pingpong pp;
	unsigned int i, cpu;

	ASSERT_EQ(0, xs_sysfs_u64("records_lost", &lost_before));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (cpu = 0; cpu < self->s.hdr->nr_cpus; cpu++)
			xs_control(&self->s, cpu)->commit = bad[i];
		ASSERT_EQ(0, run_pingpong(&pp, 10));
		ctl = xs_control(&self->s, 0);
		EXPECT_EQ(bad[i], ctl->commit);
	}
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	EXPECT_LE(50, xs_control(&self->s, 0)->records_lost);
	ASSERT_EQ(0, xs_sysfs_u64("records_lost", &lost_after));
	EXPECT_LE(lost_before + 50, lost_after);
	/* a scribbled sub-buffer header only costs the trace */
	xs_control(&self->s, 0)->commit = XRAY_FDR_COMMIT(0, 4096);
	((struct xray_fdr_subbuf *)xs_ring(&self->s, 0))->seq = UINT64_MAX;
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, run_pingpong(&pp, 10));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	EXPECT_LT(4096u,
		  XRAY_FDR_COMMIT_OFFSET(xs_control(&self->s, 0)->commit));
}

/*
 * The commit protocol: writer threads append test records with rseq while
 * the kernel appends scheduler records to the same rings.  Every record
 * must come back whole, each writer's sequence exactly once, in order
 * within a ring.
 */
#define WRITERS 4
#define PER_WRITER 20000

struct writer {
	const struct xs_session *s;
	int id;
	pid_t tid;
	int err;
	int cpus_used;
};

static void *writer_thread(void *p)
{
	struct writer *w = p;
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = sizeof(rec) / 8,
		.writer = w->id,
	};
	int cpu, used = 0, n;

	w->tid = xs_gettid();
	rec.tid = w->tid;
	for (n = 0; n < PER_WRITER; n++) {
		rec.seq = n;
		cpu = xs_write(w->s, &rec, sizeof(rec), w->tid);
		if (cpu < 0) {
			w->err = cpu;
			return NULL;
		}
		used |= 1 << cpu;
		/* move between CPUs now and then, and yield to the others */
		if (n % 2000 == 1999)
			xs_pin_cpu((n / 2000 + w->id) % xs_nr_online_cpus());
		else if (n % 100 == 99)
			sched_yield();
	}
	w->cpus_used = __builtin_popcount(used);
	return NULL;
}

struct check {
	uint64_t next[WRITERS];
	int bad;
	long sched;
	char *err;
};

static int check_record(void *p, unsigned int cpu, const uint8_t *rec,
			uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xs_test_record *t = (const void *)rec;
	struct check *c = p;

	(void)sb;
	if (!(rec[0] & XRAY_FDR_REC_EXTENDED))
		goto bad;
	if (XRAY_FDR_REC_KIND(rec[0]) >= XRAY_FDR_REC_SWITCH_OUT) {
		c->sched++;
		return 0;
	}
	if (XRAY_FDR_REC_KIND(rec[0]) != XS_REC_TEST_KIND ||
	    len != sizeof(*t) || t->writer >= WRITERS)
		goto bad;
	/* within one ring, a writer's seqs only rise */
	if (t->seq < c->next[t->writer])
		goto bad;
	c->next[t->writer] = t->seq + 1;
	return 0;
bad:
	snprintf(c->err, 256, "ring %u: bad record %02x %02x len %u", cpu,
		 rec[0], rec[1], len);
	c->bad = 1;
	return 1;
}

/* Every writer's records, whatever ring they are in: each seq once. */
struct seen {
	uint8_t *got[WRITERS];
	int dup;
};

static int mark_record(void *p, unsigned int cpu, const uint8_t *rec,
		       uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xs_test_record *t = (const void *)rec;
	struct seen *s = p;

	(void)cpu;
	(void)sb;
	if (len != sizeof(*t) || XRAY_FDR_REC_KIND(rec[0]) != XS_REC_TEST_KIND)
		return 0;
	if (t->writer >= WRITERS || t->seq >= PER_WRITER ||
	    s->got[t->writer][t->seq]++)
		s->dup++;
	return 0;
}

TEST_F_TIMEOUT(rec, rseq_writers_and_kernel_share_rings, 120)
{
	struct writer w[WRITERS];
	struct xs_session big;
	struct seen seen = { 0 };
	pthread_t t[WRITERS];
	unsigned int cpu;
	long total = 0, r, sched = 0;
	int i, k, missing = 0;
	uint64_t kernel = 0;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	/* room for everything: no record may be overwritten */
	ASSERT_EQ(0, xs_setup(&big, 65536, 32, 0));
	xs_close(&self->s);
	self->s = big;
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .s = &self->s, .id = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, writer_thread, &w[i]));
	}
	for (i = 0; i < WRITERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].err);
	}
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));

	for (i = 0; i < WRITERS; i++) {
		seen.got[i] = calloc(PER_WRITER, 1);
		ASSERT_NE(NULL, seen.got[i]);
	}
	for (cpu = 0; cpu < self->s.hdr->nr_cpus; cpu++) {
		struct check c = { .err = self->err };

		r = xs_walk_ring(&self->s, cpu, check_record, &c, self->err,
				 sizeof(self->err));
		ASSERT_LE(0, r) TH_LOG("%s", self->err);
		ASSERT_EQ(0, c.bad) TH_LOG("%s", self->err);
		ASSERT_LE(0, xs_walk_ring(&self->s, cpu, mark_record, &seen,
					  self->err, sizeof(self->err)));
		total += r;
		sched += c.sched;
	}
	EXPECT_EQ(0, seen.dup);
	for (i = 0; i < WRITERS; i++) {
		for (k = 0; k < PER_WRITER; k++)
			missing += !seen.got[i][k];
		free(seen.got[i]);
		if (xs_nr_online_cpus() > 1) {
			EXPECT_LE(2, w[i].cpus_used);
		}
	}
	EXPECT_EQ(0, missing);
	/* the kernel wrote its records into the same rings meanwhile, and
	 * every one it committed is still there: no user commit clobbered it
	 */
	EXPECT_LT(WRITERS * 2, sched);
	for (cpu = 0; cpu < self->s.hdr->nr_cpus; cpu++) {
		kernel += xs_control(&self->s, cpu)->switch_records +
			  xs_control(&self->s, cpu)->migration_records;
		EXPECT_EQ(0, xs_control(&self->s, cpu)->records_lost);
	}
	EXPECT_EQ(kernel, (uint64_t)sched);
	EXPECT_EQ(WRITERS * PER_WRITER + sched, total);
	TH_LOG("%ld records, %ld from the scheduler", total, sched);
}

TEST_F(rec, overwrite_keeps_the_newest_subbuffers)
{
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = 2,
	};
	const struct xray_fdr_subbuf *sb, *sb1;
	struct check c = { .err = self->err };
	struct xs_session small;
	int n, cpu;
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_setup(&small, 4096, 2, 0));
	xs_close(&self->s);
	self->s = small;
	/* 5000 records of 16 bytes: about 20 sub-buffers of 4 KiB */
	for (n = 0; n < 5000; n++) {
		rec.seq = n;
		cpu = xs_write(&self->s, &rec, sizeof(rec), xs_gettid());
		ASSERT_EQ(0, cpu);
	}
	sb = (const void *)xs_ring(&self->s, 0);
	sb1 = (const void *)(xs_ring(&self->s, 0) + 4096);
	EXPECT_LE(15, sb->seq > sb1->seq ? sb->seq : sb1->seq);
	r = xs_walk_ring(&self->s, 0, check_record, &c, self->err,
			 sizeof(self->err));
	ASSERT_LT(0, r) TH_LOG("%s", self->err);
	EXPECT_EQ(0, c.bad);
	/* what is left ends with the last record written */
	EXPECT_EQ(5000, c.next[0]);
	EXPECT_LE(256, r);
}

TEST_F(rec, discard_mode_drops_when_full_and_counts)
{
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = 2,
	};
	struct check c = { .err = self->err };
	struct xray_fdr_control *ctl;
	struct xs_session small;
	struct pingpong pp;
	int n, ret = 0;
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_setup(&small, 4096, 2, XRAY_FDR_GEOM_DISCARD));
	xs_close(&self->s);
	self->s = small;
	ctl = xs_control(&self->s, 0);
	for (n = 0; n < 1000 && ret >= 0; n++) {
		rec.seq = n;
		ret = xs_write(&self->s, &rec, sizeof(rec), xs_gettid());
	}
	/* two sub-buffers of (4096 - 48) / 16 = 253 records */
	EXPECT_EQ(-EAGAIN, ret);
	EXPECT_EQ(2 * 253 + 1, n);
	/* the kernel drops its records too, and counts them */
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, run_pingpong(&pp, 20));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	EXPECT_LE(40, ctl->records_lost);
	EXPECT_EQ(0, ctl->switch_records);
	r = xs_walk_ring(&self->s, 0, check_record, &c, self->err,
			 sizeof(self->err));
	EXPECT_EQ(2 * 253, r);
	EXPECT_EQ(2 * 253, c.next[0]);
	/* once the reader consumed the first sub-buffer, writing resumes */
	ctl->consumed = 1;
	rec.seq = 9999;
	EXPECT_EQ(0, xs_write(&self->s, &rec, sizeof(rec), xs_gettid()));
}

TEST_HARNESS_MAIN
