// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attacks the module withstood when a hostile user tried them, kept as
 * regression tests: a process scribbling over its commit words and
 * sub-buffer headers while its threads switch (the kernel writes its
 * records there), and close, mmap, ioctl, netlink and sysfs racing each
 * other on the same sessions.  Each runs a fixed number of rounds, not a
 * time; what they prove is mostly that the kernel log stays clean (the host
 * fails the boot on any BUG, WARNING or KASAN line) and that the module
 * still answers and its totals come back to where they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

/* xorshift: a cheap, seeded stream of garbage */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct switcher {
	volatile int *stop;
	long rounds;
};

/* Sleep and wake, so the kernel writes switch records into the rings. */
static void *switch_a_lot(void *arg)
{
	struct switcher *w = arg;

	while (!*w->stop) {
		usleep(50);
		sched_yield();
		w->rounds++;
	}
	return NULL;
}

TEST(scribbled_commit_words_and_headers_hurt_only_the_scribbler)
{
	enum { THREADS = 6, ROUNDS = 20000 };
	struct switcher w[THREADS];
	pthread_t tid[THREADS];
	uint64_t before, after, x = 0x9e3779b97f4a7c15ull;
	volatile int stop = 0;
	struct xs_session s;
	struct ctl_nl nl;
	struct ctl_status st;
	unsigned int cpu;
	long i;

	ASSERT_EQ(0, xs_sysfs_u64("records_lost", &before));
	ASSERT_EQ(0, xs_setup(&s, 4096, 4, 0));
	ASSERT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct switcher){ .stop = &stop };
		ASSERT_EQ(0,
			  pthread_create(&tid[i], NULL, switch_a_lot, &w[i]));
	}
	for (i = 0; i < ROUNDS; i++) {
		uint64_t r = next_random(&x);
		uint8_t *ring;

		cpu = r % s.info.nr_cpus;
		ring = xs_ring(&s, cpu);
		switch ((r >> 8) % 4) {
		case 0: /* any commit word at all */
			xs_control(&s, cpu)->commit = next_random(&x);
			break;
		case 1: /* an offset just past the ring, or unaligned */
			xs_control(&s, cpu)->commit = XRAY_FDR_COMMIT(
				0, s.hdr->subbuf_size * s.hdr->subbuf_count +
					   (r >> 16) % 64);
			break;
		case 2: /* a sub-buffer header full of garbage */
			memset(ring + ((r >> 16) % s.hdr->subbuf_count) *
					       s.hdr->subbuf_size,
			       (int)(r >> 32), sizeof(struct xray_fdr_subbuf));
			break;
		default: /* the discard mode's consumed counter */
			xs_control(&s, cpu)->consumed = next_random(&x);
			break;
		}
		if (i % 64 == 0)
			usleep(100);
	}
	stop = 1;
	for (i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	EXPECT_EQ(0, xs_ioctl(&s, XRAY_FDR_IOC_FREEZE, 0));
	xs_close(&s);

	/* the module still serves, and counted what it could not write */
	ASSERT_EQ(0, ctl_nl_open(&nl));
	EXPECT_EQ(0, ctl_get_status(&nl, &st));
	ctl_nl_close(&nl);
	ASSERT_EQ(0, xs_sysfs_u64("records_lost", &after));
	TH_LOG("kernel records lost to the scribbling: %llu",
	       (unsigned long long)(after - before));
	EXPECT_LE(before, after);
}

struct racer {
	long rounds;
	int failures; /* results no call may give */
};

/* The newest id a racer opened: the others aim just below it. */
static uint32_t latest_id;

static uint32_t near_latest(uint64_t *x)
{
	uint32_t latest = __atomic_load_n(&latest_id, __ATOMIC_RELAXED);
	uint32_t back = next_random(x) % 16;

	return back < latest ? latest - back : latest; /* ids start at 1 */
}

/* Open, configure, map, start, close: a session's whole life, fast. */
static void *race_lifecycles(void *arg)
{
	struct racer *r = arg;
	struct xs_session s;
	long i;

	for (i = 0; i < r->rounds; i++) {
		if (xs_setup(&s, 4096, 2, 0)) {
			r->failures++;
			continue;
		}
		__atomic_store_n(&latest_id, s.info.session_id,
				 __ATOMIC_RELAXED);
		if (i % 2)
			xs_ioctl(&s, XRAY_FDR_IOC_START, 0);
		if (i % 3 == 0)
			xs_ioctl(&s, XRAY_FDR_IOC_KEEP, 1);
		xs_close(&s);
	}
	return NULL;
}

/* Netlink commands on ids the other racers are creating and closing. */
static void *race_netlink(void *arg)
{
	static const int cmds[] = {
		XRAY_FDR_CMD_SESSION_START,  XRAY_FDR_CMD_SESSION_STOP,
		XRAY_FDR_CMD_SESSION_FREEZE, XRAY_FDR_CMD_SESSION_KEEP,
		XRAY_FDR_CMD_SESSION_DROP,
	};
	struct racer *r = arg;
	struct ctl_session cs;
	struct ctl_status st;
	struct ctl_nl nl;
	uint64_t x = 12345;
	long i;
	int err;

	if (ctl_nl_open(&nl)) {
		r->failures++;
		return NULL;
	}
	for (i = 0; i < r->rounds; i++) {
		uint64_t v = next_random(&x);
		uint32_t id = near_latest(&x);
		int cmd = cmds[(v >> 8) % 5];

		err = ctl_nl_session_cmd(&nl, cmd, id,
					 cmd == XRAY_FDR_CMD_SESSION_KEEP ?
						 (int)((v >> 16) % 2) :
						 -1);
		/* the answers a session that comes and goes may give (EBADF:
		 * the readers' sessions are opened read-only)
		 */
		if (err && err != -ENOENT && err != -EBUSY && err != -ENODATA &&
		    err != -ESRCH && err != -ENOSPC && err != -EDQUOT &&
		    err != -EBADF) {
			fprintf(stderr, "# command %d on %u: %s\n", cmd, id,
				strerror(-err));
			r->failures++;
		}
		ctl_get_session(&nl, id, &cs);
		if (i % 8 == 0 && (err = ctl_get_status(&nl, &st))) {
			fprintf(stderr, "# status: %s\n", strerror(-err));
			r->failures++;
		}
	}
	ctl_nl_close(&nl);
	return NULL;
}

/* sysfs reads and attaches to whatever is retained at the moment. */
static void *race_readers(void *arg)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	struct racer *r = arg;
	uint64_t v, x = 777;
	char buf[4096];
	long i;
	int fd;

	for (i = 0; i < r->rounds; i++) {
		if (xs_sysfs_u64("sessions", &v))
			r->failures++;
		fd = open(XS_SYSFS "users", O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				r->failures++;
			close(fd);
		}
		fd = open(XS_DEVICE, O_RDONLY);
		if (fd < 0) {
			r->failures++;
			continue;
		}
		att.session_id = near_latest(&x);
		if (ioctl(fd, XRAY_FDR_IOC_ATTACH, &att) == 0) {
			void *h =
				mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

			if (h != MAP_FAILED)
				munmap(h, 4096);
		}
		close(fd);
	}
	return NULL;
}

TEST(close_mmap_ioctl_netlink_and_sysfs_race_cleanly)
{
	enum { ROUNDS = 300 };
	struct racer life[2], nl, rd;
	uint64_t sessions[2], retained[2], bytes[2];
	struct ctl_nl ctl;
	pthread_t t[4];
	struct xs_session probe;
	uint32_t first;
	int i;

	ASSERT_EQ(0, xs_sysfs_u64("sessions", &sessions[0]));
	ASSERT_EQ(0, xs_sysfs_u64("sessions_retained", &retained[0]));
	ASSERT_EQ(0, xs_sysfs_u64("bytes_allocated", &bytes[0]));
	ASSERT_EQ(0, xs_open(&probe));
	first = probe.info.session_id;
	latest_id = first;
	xs_close(&probe);
	for (i = 0; i < 2; i++)
		life[i] = (struct racer){ .rounds = ROUNDS };
	nl = (struct racer){ .rounds = 4 * ROUNDS };
	rd = (struct racer){ .rounds = ROUNDS };

	ASSERT_EQ(0, pthread_create(&t[0], NULL, race_lifecycles, &life[0]));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, race_lifecycles, &life[1]));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, race_netlink, &nl));
	ASSERT_EQ(0, pthread_create(&t[3], NULL, race_readers, &rd));
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, life[0].failures);
	EXPECT_EQ(0, life[1].failures);
	EXPECT_EQ(0, nl.failures);
	EXPECT_EQ(0, rd.failures);

	/* sessions kept by the racers stay retained: drop them, then the
	 * totals are back where they were
	 */
	ASSERT_EQ(0, ctl_nl_open(&ctl));
	/* every id the racers can have had: 2 lifecycles + 1 reader a round */
	for (i = 0; i < 4 * ROUNDS; i++)
		ctl_nl_session_cmd(&ctl, XRAY_FDR_CMD_SESSION_DROP, first + i,
				   -1);
	ctl_nl_close(&ctl);
	ASSERT_EQ(0, xs_sysfs_u64("sessions", &sessions[1]));
	ASSERT_EQ(0, xs_sysfs_u64("sessions_retained", &retained[1]));
	ASSERT_EQ(0, xs_sysfs_u64("bytes_allocated", &bytes[1]));
	EXPECT_EQ(sessions[0], sessions[1]);
	EXPECT_EQ(retained[0], retained[1]);
	EXPECT_EQ(bytes[0], bytes[1]);
}

TEST_HARNESS_MAIN
