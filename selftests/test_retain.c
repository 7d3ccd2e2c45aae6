// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions and processes: a session kept across SIGKILL is listed and
 * dumped intact through a read-only view, then dropped; one not kept goes
 * with its process; a live session is read through a view while its
 * owner writes, and its owner's exit with the view open leaks nothing; a fork of the session holder shares the rings but is
 * not traced.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define RECORDS 2000

/*
 * A child that opens a session, keeps it if @keep, records and writes
 * RECORDS test records on CPU 0, reports its session id and waits to be
 * killed.  Returns its pid; the id in *id.
 */
static pid_t recording_child(bool keep, uint32_t *id)
{
	int pipefd[2];
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct xs_test_record rec = {
			.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
			.len = sizeof(rec) / 8,
		};
		struct xs_session s;
		int n;

		close(pipefd[0]);
		if (xs_pin_cpu(0) || xs_setup(&s, 4096, 16, 0) ||
		    (keep && xs_ioctl(&s, XRAY_FDR_IOC_KEEP, 1)) ||
		    xs_ioctl(&s, XRAY_FDR_IOC_START, 0))
			_exit(1);
		rec.tid = xs_gettid();
		for (n = 0; n < RECORDS; n++) {
			rec.seq = n;
			if (xs_write(&s, &rec, sizeof(rec), rec.tid) != 0)
				_exit(2);
			if (n % 200 == 0)
				usleep(1000);
		}
		if (write(pipefd[1], &s.info.session_id, 4) != 4)
			_exit(3);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], id, 4) != 4) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

static void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

struct dumped {
	uint32_t tid;
	long test, next, sched, bad;
};

static int check_dump(void *p, unsigned int cpu, const uint8_t *rec,
		      uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xs_test_record *t = (const void *)rec;
	const struct xray_fdr_sched_record *r = (const void *)rec;
	struct dumped *d = p;

	(void)cpu;
	(void)sb;
	if (XRAY_FDR_REC_KIND(rec[0]) == XS_REC_TEST_KIND && len == 16) {
		if (t->seq != (uint64_t)d->next || t->tid != d->tid)
			d->bad++;
		d->next++;
		d->test++;
	} else if (XRAY_FDR_REC_KIND(rec[0]) >= XRAY_FDR_REC_SWITCH_OUT) {
		if (r->pid != d->tid)
			d->bad++;
		d->sched++;
	} else {
		d->bad++;
	}
	return 0;
}

TEST(kept_session_survives_sigkill_and_dumps_intact)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	uint64_t retained = xs_sysfs("sessions_retained");
	uint64_t allocated = xs_sysfs("bytes_allocated");
	struct dumped d = { 0 };
	struct ctl_session cs;
	struct xs_session v;
	struct ctl_nl nl;
	char err[256];
	uint32_t id;
	pid_t child;
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	child = recording_child(true, &id);
	ASSERT_LT(0, child);
	kill_child(child);

	/* still listed, as retained, with the dead process's pid */
	ASSERT_EQ(0, ctl_nl_open(&nl));
	ASSERT_EQ(0, ctl_get_session(&nl, id, &cs));
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_FROZEN |
			  XRAY_FDR_STATE_KEEP | XRAY_FDR_STATE_RETAINED,
		  cs.state);
	EXPECT_EQ((uint32_t)child, cs.owner_pid);
	EXPECT_LT(0, cs.switch_records);
	EXPECT_EQ(retained + 1, xs_sysfs("sessions_retained"));

	/* a new open attaches to it, read-only */
	ASSERT_EQ(0, xs_open(&v));
	att.session_id = id;
	ASSERT_EQ(0, xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	v.info.size = sizeof(v.info);
	ASSERT_EQ(0, xs_ioctl(&v, XRAY_FDR_IOC_INFO, (unsigned long)&v.info));
	EXPECT_EQ(id, v.info.session_id);
	EXPECT_TRUE(v.info.state & XRAY_FDR_STATE_READONLY);
	EXPECT_EQ(-EACCES, xs_map(&v, true));
	ASSERT_EQ(0, xs_map(&v, false));
	EXPECT_EQ(XRAY_FDR_MAGIC, v.hdr->magic);
	EXPECT_EQ(id, v.hdr->session_id);
	EXPECT_EQ((uint32_t)child, v.hdr->owner_pid);
	EXPECT_TRUE(v.hdr->state & XRAY_FDR_STATE_RETAINED);
	EXPECT_EQ(-1, mprotect(v.areas, v.areas_len, PROT_READ | PROT_WRITE));
	/* nothing changes through a view */
	EXPECT_EQ(-EPERM, xs_ioctl(&v, XRAY_FDR_IOC_START, 0));
	EXPECT_EQ(-EPERM, xs_ioctl(&v, XRAY_FDR_IOC_KEEP, 0));
	EXPECT_EQ(-EPERM, xs_configure(&v, 4096, 2, 0));

	/* every record the child wrote, in order, and its switches */
	d.tid = child;
	r = xs_walk_ring(&v, 0, check_dump, &d, err, sizeof(err));
	ASSERT_LT(0, r) TH_LOG("%s", err);
	EXPECT_EQ(0, d.bad);
	EXPECT_EQ(RECORDS, d.test);
	EXPECT_LT(0, d.sched);

	/* dropped: gone from the list, memory freed once the view closes */
	EXPECT_EQ(0,
		  ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP, id, -1));
	EXPECT_EQ(-ENOENT, ctl_get_session(&nl, id, &cs));
	EXPECT_EQ(-ENOENT,
		  ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP, id, -1));
	EXPECT_EQ(retained, xs_sysfs("sessions_retained"));
	EXPECT_EQ(XRAY_FDR_MAGIC, v.hdr->magic);
	xs_close(&v);
	EXPECT_EQ(allocated, xs_sysfs("bytes_allocated"));
	ctl_nl_close(&nl);
}

TEST(session_not_kept_goes_with_its_process)
{
	uint64_t sessions = xs_sysfs("sessions");
	uint64_t allocated = xs_sysfs("bytes_allocated");
	struct ctl_session cs;
	struct ctl_nl nl;
	uint32_t id;
	pid_t child;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	child = recording_child(false, &id);
	ASSERT_LT(0, child);
	EXPECT_EQ(sessions + 1, xs_sysfs("sessions"));
	kill_child(child);
	ASSERT_EQ(0, ctl_nl_open(&nl));
	EXPECT_EQ(-ENOENT, ctl_get_session(&nl, id, &cs));
	ctl_nl_close(&nl);
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
	EXPECT_EQ(allocated, xs_sysfs("bytes_allocated"));
}

TEST(attach_needs_rings_and_a_valid_request)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	struct xs_session fresh, v;
	struct {
		struct xray_fdr_attach a;
		uint32_t tail;
	} big = { { .size = sizeof(big) }, 1 };

	/* no geometry yet: nothing to view */
	ASSERT_EQ(0, xs_open(&fresh));
	ASSERT_EQ(0, xs_open(&v));
	att.session_id = fresh.info.session_id;
	EXPECT_EQ(-EBUSY,
		  xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	att.session_id = 0x7fffffff;
	EXPECT_EQ(-ENOENT,
		  xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	att.size = 4;
	EXPECT_EQ(-EINVAL,
		  xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	big.a.session_id = fresh.info.session_id;
	EXPECT_EQ(-E2BIG,
		  xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&big));
	xs_close(&v);
	xs_close(&fresh);
}

struct counted {
	long test;
};

static int count_test(void *p, unsigned int cpu, const uint8_t *rec,
		      uint32_t len, const struct xray_fdr_subbuf *sb)
{
	(void)cpu;
	(void)sb;
	if (XRAY_FDR_REC_KIND(rec[0]) == XS_REC_TEST_KIND && len == 16)
		((struct counted *)p)->test++;
	return 0;
}

/*
 * A snapshot's view: the owner of a live session attaches to it and reads
 * what the owner goes on writing; the owner's close with the view open
 * unlists the session and leaks nothing once the view closes.
 */
TEST(live_session_view_reads_while_the_owner_writes)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = sizeof(rec) / 8,
	};
	uint64_t sessions = xs_sysfs("sessions");
	uint64_t allocated = xs_sysfs("bytes_allocated");
	struct counted before = { 0 }, after = { 0 };
	struct xs_session live, v;
	struct ctl_session cs;
	struct ctl_nl nl;
	char err[256];
	int n;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_setup(&live, 4096, 64, 0));
	ASSERT_EQ(0, xs_ioctl(&live, XRAY_FDR_IOC_START, 0));
	rec.tid = xs_gettid();
	for (n = 0; n < 100; n++) {
		rec.seq = n;
		ASSERT_EQ(0, xs_write(&live, &rec, sizeof(rec), rec.tid));
	}

	ASSERT_EQ(0, xs_open(&v));
	att.session_id = live.info.session_id;
	ASSERT_EQ(0, xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	v.info.size = sizeof(v.info);
	ASSERT_EQ(0, xs_ioctl(&v, XRAY_FDR_IOC_INFO, (unsigned long)&v.info));
	EXPECT_EQ(live.info.session_id, v.info.session_id);
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_ENABLED |
			  XRAY_FDR_STATE_READONLY,
		  v.info.state);
	EXPECT_EQ(-EACCES, xs_map(&v, true));
	ASSERT_EQ(0, xs_map(&v, false));
	EXPECT_EQ((uint32_t)getpid(), v.hdr->owner_pid);
	EXPECT_EQ(-EPERM, xs_ioctl(&v, XRAY_FDR_IOC_FREEZE, 0));
	ASSERT_LT(0, xs_walk_ring(&v, 0, count_test, &before, err, sizeof(err)))
	TH_LOG("%s", err);
	EXPECT_EQ(100, before.test);

	/* the owner goes on, still recording, and the view sees it */
	EXPECT_FALSE(live.hdr->state & XRAY_FDR_STATE_FROZEN);
	for (; n < 200; n++) {
		rec.seq = n;
		ASSERT_EQ(0, xs_write(&live, &rec, sizeof(rec), rec.tid));
	}
	ASSERT_LT(0, xs_walk_ring(&v, 0, count_test, &after, err, sizeof(err)))
	TH_LOG("%s", err);
	EXPECT_EQ(200, after.test);

	/* the owner's close unlists it, the view keeps its memory alive */
	ASSERT_EQ(0, ctl_nl_open(&nl));
	xs_close(&live);
	EXPECT_EQ(-ENOENT, ctl_get_session(&nl, att.session_id, &cs));
	/* (the view's file has a session of its own, unconfigured) */
	EXPECT_EQ(sessions + 1, xs_sysfs("sessions"));
	EXPECT_EQ(XRAY_FDR_MAGIC, v.hdr->magic);
	after.test = 0;
	ASSERT_LT(0, xs_walk_ring(&v, 0, count_test, &after, err, sizeof(err)))
	TH_LOG("%s", err);
	EXPECT_EQ(200, after.test);
	/* an unlisted session takes no new view */
	{
		struct xs_session v2;

		ASSERT_EQ(0, xs_open(&v2));
		EXPECT_EQ(-ENOENT, xs_ioctl(&v2, XRAY_FDR_IOC_ATTACH,
					    (unsigned long)&att));
		xs_close(&v2);
	}
	xs_close(&v);
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
	EXPECT_EQ(allocated, xs_sysfs("bytes_allocated"));
	ctl_nl_close(&nl);
}

/* A kept live session with a view open is still retained at its
 * owner's exit, and dumps whole. */
TEST(kept_live_session_with_a_view_is_retained)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	uint64_t retained = xs_sysfs("sessions_retained");
	uint64_t allocated = xs_sysfs("bytes_allocated");
	struct counted c = { 0 };
	struct ctl_session cs;
	struct xs_session v;
	struct ctl_nl nl;
	char err[256];
	uint32_t id;
	pid_t child;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	child = recording_child(true, &id);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, xs_open(&v));
	att.session_id = id;
	ASSERT_EQ(0, xs_ioctl(&v, XRAY_FDR_IOC_ATTACH, (unsigned long)&att));
	ASSERT_EQ(0, xs_map(&v, false));
	EXPECT_FALSE(v.hdr->state & XRAY_FDR_STATE_RETAINED);
	kill_child(child);
	ASSERT_EQ(0, ctl_nl_open(&nl));
	ASSERT_EQ(0, ctl_get_session(&nl, id, &cs));
	EXPECT_TRUE(cs.state & XRAY_FDR_STATE_RETAINED);
	EXPECT_EQ(retained + 1, xs_sysfs("sessions_retained"));
	EXPECT_TRUE(v.hdr->state & XRAY_FDR_STATE_RETAINED);
	ASSERT_LT(0, xs_walk_ring(&v, 0, count_test, &c, err, sizeof(err)))
	TH_LOG("%s", err);
	EXPECT_EQ(RECORDS, c.test);
	EXPECT_EQ(0,
		  ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP, id, -1));
	xs_close(&v);
	EXPECT_EQ(retained, xs_sysfs("sessions_retained"));
	EXPECT_EQ(allocated, xs_sysfs("bytes_allocated"));
	ctl_nl_close(&nl);
}

TEST(keep_can_be_taken_back)
{
	uint64_t retained = xs_sysfs("sessions_retained");
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct xs_session s;

		if (xs_setup(&s, 4096, 2, 0) ||
		    xs_ioctl(&s, XRAY_FDR_IOC_KEEP, 1) ||
		    xs_ioctl(&s, XRAY_FDR_IOC_KEEP, 0))
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	EXPECT_EQ(retained, xs_sysfs("sessions_retained"));
}

TEST(fork_of_a_session_holder_shares_rings_but_is_not_traced)
{
	uint64_t sessions = xs_sysfs("sessions");
	struct xs_sched *v = NULL;
	struct xs_session s;
	struct dumped d = { 0 };
	char err[256];
	int status, i, child_records = 0;
	pid_t pid;
	long n;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_setup(&s, 4096, 16, 0));
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_START, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct xs_test_record rec = {
			.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
			.len = 2,
			.tid = getpid(),
		};

		/* its copy of the address space is not traced; it may
		 * still write into the shared rings
		 */
		for (i = 0; i < 100; i++) {
			rec.seq = i;
			if (xs_write(&s, &rec, sizeof(rec), rec.tid) != 0)
				_exit(1);
			usleep(500);
		}
		xs_close(&s);
		_exit(0);
	}
	for (i = 0; i < 20; i++)
		usleep(1000);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	/* the child closing its copy ended nothing */
	EXPECT_EQ(sessions + 1, xs_sysfs("sessions"));
	EXPECT_TRUE(s.hdr->state & XRAY_FDR_STATE_ENABLED);
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_STOP, 0));

	n = xs_sched_records(&s, &v, err, sizeof(err));
	ASSERT_LT(0, n) TH_LOG("%s", err);
	for (i = 0; i < n; i++) {
		EXPECT_EQ((uint32_t)getpid(), v[i].pid);
		child_records += v[i].tid == (uint32_t)pid;
	}
	free(v);
	EXPECT_EQ(0, child_records);
	d.tid = pid;
	ASSERT_LT(0, xs_walk_ring(&s, 0, check_dump, &d, err, sizeof(err)));
	EXPECT_EQ(100, d.test);
	xs_close(&s);
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
}

TEST_HARNESS_MAIN
