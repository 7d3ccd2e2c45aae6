// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's takeovers in overwrite mode: it overwrites the oldest
 * sub-buffer only if its header counts the user events there (and adds
 * the count to user_events_overwritten), else drops its own record; it
 * marks the sub-buffers only it wrote as holding none when it leaves
 * them; and nothing a process writes in a header makes it do more than
 * refuse or count.
 *
 * The test fills CPU 0's ring itself, pinned there, with the test writer
 * (16-byte records), then sleeps so that the scheduler writes switch
 * records of this thread into that ring.  Sub-buffers of 4 KiB hold 253
 * such records, or 168 of the kernel's (24 bytes).  Headers are written
 * with plain stores: this is the only traced thread and it runs on CPU 0,
 * so the kernel cannot be writing CPU 0's ring meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define SUBBUF 4096
#define COUNT 4
#define HDR ((uint32_t)sizeof(struct xray_fdr_subbuf))
#define PER_SUBBUF ((SUBBUF - HDR) / 16)
#define KERNEL_PER_SUBBUF ((SUBBUF - HDR) / 24)
#define COUNTED XRAY_FDR_SUBBUF_COUNTED

FIXTURE(take)
{
	struct xs_session s;
	struct xray_fdr_control *ctl;
	char err[256];
};

FIXTURE_SETUP(take)
{
	/* pinned before the session starts: no migration record */
	ASSERT_EQ(0, xs_pin_cpu(0));
	ASSERT_EQ(0, xs_setup(&self->s, SUBBUF, COUNT, 0));
	self->ctl = xs_control(&self->s, 0);
}

FIXTURE_TEARDOWN(take)
{
	xs_close(&self->s);
}

static struct xray_fdr_subbuf *subbuf(struct xs_session *s, unsigned int idx)
{
	return (struct xray_fdr_subbuf *)(xs_ring(s, 0) + idx * SUBBUF);
}

/* The open sub-buffer of CPU 0's ring. */
static struct xray_fdr_subbuf *open_subbuf(struct xs_session *s)
{
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(xs_control(s, 0)->commit);

	return subbuf(s, (off - 1) / SUBBUF);
}

/* @n test records into CPU 0's ring; the number written. */
static int fill(struct xs_session *s, int n)
{
	struct xs_test_record rec = {
		.type = XRAY_FDR_REC_TYPE(XS_REC_TEST_KIND),
		.len = sizeof(rec) / 8,
		.tid = (uint32_t)xs_gettid(),
	};
	int i;

	for (i = 0; i < n; i++) {
		rec.seq = i;
		if (xs_write(s, &rec, sizeof(rec), rec.tid) != 0)
			break;
	}
	return i;
}

/* Sleep @n times: a switch-out and a switch-in each, on CPU 0. */
static void switches(int n)
{
	while (n--)
		usleep(100);
}

struct tally {
	long user, sched;
	uint64_t next; /* the next test record's seq */
	int bad;
};

static int count_record(void *p, unsigned int cpu, const uint8_t *rec,
			uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xs_test_record *t = (const void *)rec;
	struct tally *c = p;

	(void)cpu;
	(void)sb;
	if (XRAY_FDR_REC_KIND(rec[0]) >= XRAY_FDR_REC_SWITCH_OUT) {
		c->sched++;
		return 0;
	}
	/* the test records of one fill, in order */
	if (len != sizeof(*t) ||
	    XRAY_FDR_REC_KIND(rec[0]) != XS_REC_TEST_KIND ||
	    (c->user && t->seq != c->next))
		c->bad++;
	c->next = t->seq + 1;
	c->user++;
	return 0;
}

/* The ring full to its last byte with test records: the kernel's next
 * record needs the oldest sub-buffer (sequence number 0, index 0). */
static int fill_to_the_brim(struct xs_session *s)
{
	if (fill(s, COUNT * PER_SUBBUF) != COUNT * PER_SUBBUF)
		return -EIO;
	return XRAY_FDR_COMMIT_OFFSET(xs_control(s, 0)->commit) ==
				       COUNT * SUBBUF &&
			       subbuf(s, COUNT - 1)->seq == COUNT - 1 ?
		       0 :
		       -EBADMSG;
}

TEST_F(take, uncounted_oldest_is_never_overwritten)
{
	struct tally c = { 0 };
	uint64_t commit;
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, fill_to_the_brim(&self->s));
	/* the test writer leaves sub-buffers uncounted */
	EXPECT_EQ(0, subbuf(&self->s, 0)->user_events);
	commit = self->ctl->commit;
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	switches(20);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));

	/* every switch record refused and counted, the ring untouched */
	EXPECT_LE(20, self->ctl->records_lost);
	EXPECT_EQ(0, self->ctl->switch_records);
	EXPECT_EQ(0, self->ctl->user_events_overwritten);
	EXPECT_EQ(commit, self->ctl->commit);
	EXPECT_EQ(0, subbuf(&self->s, 0)->seq);
	r = xs_walk_ring(&self->s, 0, count_record, &c, self->err,
			 sizeof(self->err));
	ASSERT_LE(0, r) TH_LOG("%s", self->err);
	EXPECT_EQ(COUNT * PER_SUBBUF, c.user);
	EXPECT_EQ(0, c.sched);
	EXPECT_EQ(0, c.bad);
	EXPECT_EQ(COUNT * PER_SUBBUF, c.next);
}

TEST_F(take, counted_oldest_is_overwritten_and_its_count_added)
{
	struct xray_fdr_subbuf *sb0 = subbuf(&self->s, 0);
	struct tally c = { 0 };
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, fill_to_the_brim(&self->s));
	/* what a user writer does before the kernel may need it */
	sb0->user_events = COUNTED | PER_SUBBUF;
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	switches(5);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));

	EXPECT_EQ(0, self->ctl->records_lost);
	EXPECT_LE(2, self->ctl->switch_records);
	EXPECT_EQ(PER_SUBBUF, self->ctl->user_events_overwritten);
	/* the kernel opened sequence number 4 there, uncounted */
	EXPECT_EQ(COUNT, sb0->seq);
	EXPECT_EQ(XRAY_FDR_SUBBUF_KERNEL, sb0->flags);
	EXPECT_EQ(0, sb0->user_events);
	EXPECT_EQ(0, sb0->user_data);
	EXPECT_EQ(sb0, open_subbuf(&self->s));
	/* and closed the full one, which held user records: no count */
	EXPECT_EQ(SUBBUF, subbuf(&self->s, COUNT - 1)->used);
	EXPECT_EQ(0, subbuf(&self->s, COUNT - 1)->user_events);
	r = xs_walk_ring(&self->s, 0, count_record, &c, self->err,
			 sizeof(self->err));
	ASSERT_LE(0, r) TH_LOG("%s", self->err);
	EXPECT_EQ((COUNT - 1) * PER_SUBBUF, c.user);
	EXPECT_EQ((long)self->ctl->switch_records, c.sched);
	EXPECT_EQ(0, c.bad);
}

/*
 * A ring only the kernel writes: each sub-buffer it leaves says it holds
 * no user event, so the kernel goes round the ring and over its own
 * records without losing one.
 */
TEST_F_TIMEOUT(take, kernel_only_subbuffers_are_marked_counted, 120)
{
	uint64_t open_seq = 0;
	unsigned int idx;
	int i;

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < 20000 && open_seq < COUNT + 2; i++) {
		switches(1);
		open_seq = open_subbuf(&self->s)->seq;
	}
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	ASSERT_LE(COUNT + 2, open_seq);
	EXPECT_EQ(0, self->ctl->records_lost);
	EXPECT_EQ(0, self->ctl->user_events_overwritten);
	for (idx = 0; idx < COUNT; idx++) {
		struct xray_fdr_subbuf *sb = subbuf(&self->s, idx);

		if (sb == open_subbuf(&self->s)) {
			EXPECT_EQ(0, sb->user_events);
			continue;
		}
		EXPECT_EQ(COUNTED, sb->user_events)
		TH_LOG("sub-buffer %u (seq %llu)", idx,
		       (unsigned long long)sb->seq);
		EXPECT_EQ(HDR + KERNEL_PER_SUBBUF * 24, sb->used);
	}
}

/*
 * One user record among the kernel's: the kernel leaves that sub-buffer
 * uncounted, goes on over the ones it alone wrote, and refuses it when
 * the ring comes round to it again.
 */
TEST_F_TIMEOUT(take, a_user_record_keeps_a_subbuffer_uncounted, 120)
{
	struct xray_fdr_subbuf *sb0 = subbuf(&self->s, 0);
	uint64_t open_seq = 0;
	int i;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	switches(3);
	ASSERT_EQ(1, fill(&self->s, 1));
	for (i = 0; i < 20000 && !self->ctl->records_lost; i++) {
		switches(1);
		open_seq = open_subbuf(&self->s)->seq;
	}
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	/* refused at sequence number 4, over sub-buffer 0 */
	EXPECT_LT(0, self->ctl->records_lost);
	EXPECT_EQ(COUNT - 1, open_seq);
	EXPECT_EQ(0, sb0->seq);
	EXPECT_EQ(0, sb0->user_events);
	EXPECT_EQ(0, self->ctl->user_events_overwritten);
	/* the kernel's own, closed on the way */
	EXPECT_EQ(COUNTED, subbuf(&self->s, 1)->user_events);
	EXPECT_EQ(COUNTED, subbuf(&self->s, 2)->user_events);
}

/* The oldest header as garbage made it. */
struct garbage {
	const char *what;
	uint64_t seq;
	uint32_t user_events;
};

TEST_F(take, garbage_in_the_header_makes_the_kernel_refuse)
{
	static const struct garbage cases[] = {
		{ "wrong seq", 1, COUNTED | PER_SUBBUF },
		{ "seq -1", UINT64_MAX, COUNTED | PER_SUBBUF },
		{ "seq of the new one", COUNT, COUNTED | PER_SUBBUF },
		{ "no COUNTED bit", 0, PER_SUBBUF },
		{ "nothing", 0, 0 },
		{ "wild", 0x9e3779b97f4a7c15ull, 0xffffffffu },
	};
	struct xray_fdr_subbuf *sb0 = subbuf(&self->s, 0), saved;
	uint64_t lost = 0, commit;
	struct tally c = { 0 };
	unsigned int i;
	long r;

	if (!xs_rseq_available())
		SKIP(return, "glibc did not register rseq for this thread");
	ASSERT_EQ(0, fill_to_the_brim(&self->s));
	commit = self->ctl->commit;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sb0->seq = cases[i].seq;
		sb0->user_events = cases[i].user_events;
		saved = *sb0;
		ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
		switches(3);
		ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
		EXPECT_LT(lost, self->ctl->records_lost)
		TH_LOG("%s", cases[i].what);
		EXPECT_EQ(0, memcmp(&saved, sb0, sizeof(saved)))
		TH_LOG("%s", cases[i].what);
		EXPECT_EQ(commit, self->ctl->commit)
		TH_LOG("%s", cases[i].what);
		EXPECT_EQ(0, self->ctl->switch_records);
		EXPECT_EQ(0, self->ctl->user_events_overwritten);
		lost = self->ctl->records_lost;
	}
	/* the records under the header are intact */
	sb0->seq = 0;
	r = xs_walk_ring(&self->s, 0, count_record, &c, self->err,
			 sizeof(self->err));
	ASSERT_LE(0, r) TH_LOG("%s", self->err);
	EXPECT_EQ(COUNT * PER_SUBBUF, c.user);
	EXPECT_EQ(0, c.bad);

	/* a count that lies only decides the counter */
	sb0->user_events = 0xffffffffu;
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	switches(3);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	EXPECT_EQ(lost, self->ctl->records_lost);
	EXPECT_EQ(COUNT, sb0->seq);
	EXPECT_EQ(0x7fffffffu, self->ctl->user_events_overwritten);
}

TEST_HARNESS_MAIN
