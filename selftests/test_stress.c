// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stress: many threads switching and writing while sessions start, stop
 * and come and go in other processes; thread churn that only works if
 * exiting threads give back their slot.  The host checks the kernel log
 * for warnings afterwards.
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

#define THREADS 16

struct worker {
	const struct xs_session *s;
	uint64_t end;
	int id;
	long written;
	int err;
};

static void *worker(void *p)
{
	struct worker *w = p;
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = 2,
		.writer = w->id,
	};
	int ret;

	rec.tid = xs_gettid();
	while (xs_now_ns() < w->end) {
		rec.seq = w->written;
		ret = xs_write(w->s, &rec, sizeof(rec), rec.tid);
		if (ret == -EAGAIN) {
			/* frozen for a moment by the main thread */
			usleep(100);
			continue;
		}
		if (ret < 0) {
			w->err = ret;
			break;
		}
		w->written++;
		switch (w->written % 64) {
		case 0:
			sched_yield();
			break;
		case 21:
			usleep(50);
			break;
		case 42:
			xs_pin_cpu((w->written / 64) % xs_nr_online_cpus());
			break;
		}
	}
	return NULL;
}

/* Within a ring, each writer's seqs rise; records are well formed. */
struct order {
	uint64_t next[THREADS];
	long bad, test, sched;
};

static int check_order(void *p, unsigned int cpu, const uint8_t *rec,
		       uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xs_test_record *t = (const void *)rec;
	struct order *o = p;

	(void)cpu;
	(void)sb;
	if (XRAY_FDR_REC_KIND(rec[0]) >= XRAY_FDR_REC_SWITCH_OUT) {
		o->sched++;
		return 0;
	}
	if (len != sizeof(*t) ||
	    XRAY_FDR_REC_KIND(rec[0]) != XS_REC_TEST_KIND ||
	    t->writer >= THREADS || t->seq < o->next[t->writer]) {
		o->bad++;
		return 0;
	}
	o->next[t->writer] = t->seq + 1;
	o->test++;
	return 0;
}

/* Other processes: sessions open, record, freeze and close in a loop. */
static pid_t churn_sessions(uint64_t end)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct xs_session s;

		while (xs_now_ns() < end) {
			if (xs_setup(&s, 4096, 4, 0) ||
			    xs_ioctl(&s, XRAY_FDR_IOC_START, 0))
				_exit(1);
			usleep(2000);
			xs_ioctl(&s, XRAY_FDR_IOC_FREEZE, 0);
			xs_close(&s);
		}
		_exit(0);
	}
	return pid;
}

FIXTURE(stress){};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, many_threads_switching_while_sessions_come_and_go, 120)
{
	uint64_t end = xs_now_ns() + 3000000000ull;
	uint64_t sessions = xs_sysfs("sessions");
	struct worker w[THREADS];
	pthread_t t[THREADS];
	struct order o = { 0 };
	struct xs_session s;
	unsigned int cpu;
	pid_t churn[3];
	long written = 0, r;
	char err[256];
	int i, status, toggles = 0;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	/* 256 KiB per CPU: overwrite mode wraps, which is part of the test */
	ASSERT_EQ(0, xs_setup(&s, 16384, 16, 0));
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < 3; i++) {
		churn[i] = churn_sessions(end);
		ASSERT_LT(0, churn[i]);
	}
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = &s, .end = end, .id = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker, &w[i]));
	}
	/* the main thread stops, freezes and restarts the recording */
	while (xs_now_ns() < end) {
		usleep(50000);
		EXPECT_EQ(0, xs_ioctl(&s,
				      toggles % 3 ? XRAY_FDR_IOC_STOP :
						    XRAY_FDR_IOC_FREEZE,
				      0));
		usleep(5000);
		EXPECT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_START, 0));
		toggles++;
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].err);
		written += w[i].written;
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(churn[i], waitpid(churn[i], &status, 0));
		EXPECT_EQ(0, status);
	}
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_FREEZE, 0));
	for (cpu = 0; cpu < s.hdr->nr_cpus; cpu++) {
		r = xs_walk_ring(&s, cpu, check_order, &o, err, sizeof(err));
		ASSERT_LE(0, r) TH_LOG("%s", err);
		memset(o.next, 0, sizeof(o.next));
	}
	EXPECT_EQ(0, o.bad);
	EXPECT_LT(0, o.sched);
	EXPECT_LT(1000, o.test);
	TH_LOG("%ld records written, %ld test and %ld scheduler records kept, %d toggles",
	       written, o.test, o.sched, toggles);
	xs_close(&s);
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
}

static void *short_lived(void *p)
{
	(void)p;
	usleep(100);
	return NULL;
}

TEST_F_TIMEOUT(stress, exiting_threads_free_their_slot, 120)
{
	uint64_t lost = xs_sysfs("records_lost");
	struct xs_session s;
	pthread_t t[8];
	int i, k;

	/* far more threads than the table's 1024 slots, a few at a time */
	ASSERT_EQ(0, xs_setup(&s, 65536, 4, XRAY_FDR_GEOM_DISCARD));
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < 3000 / 8; i++) {
		for (k = 0; k < 8; k++)
			ASSERT_EQ(0, pthread_create(&t[k], NULL, short_lived,
						    NULL));
		for (k = 0; k < 8; k++)
			pthread_join(t[k], NULL);
		/* the reader keeps up: nothing may be dropped for room */
		for (k = 0; k < (int)s.hdr->nr_cpus; k++) {
			const uint8_t *ring = xs_ring(&s, k);
			uint32_t off = XRAY_FDR_COMMIT_OFFSET(
				xs_control(&s, k)->commit);

			xs_control(&s, k)->consumed =
				((const struct xray_fdr_subbuf
					  *)(ring + (off - 1) / 65536 * 65536))
					->seq;
		}
	}
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_STOP, 0));
	for (k = 0; k < (int)s.hdr->nr_cpus; k++)
		EXPECT_EQ(0, xs_control(&s, k)->records_lost);
	EXPECT_EQ(lost, xs_sysfs("records_lost"));
	xs_close(&s);
}

TEST_HARNESS_MAIN
