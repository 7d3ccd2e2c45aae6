// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unloading the module: refused while a session is open or mapped, clean
 * with retained sessions (they are dropped), and the module loads again.
 * Runs last: it reloads the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

/* A retained session: a child keeps its session and is killed. */
static int make_retained(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct xs_session s;

		if (xs_setup(&s, 4096, 4, 0) ||
		    xs_ioctl(&s, XRAY_FDR_IOC_KEEP, 1) ||
		    xs_ioctl(&s, XRAY_FDR_IOC_START, 0))
			_exit(1);
		usleep(2000);
		raise(SIGKILL);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? 0 : -1;
}

TEST(unload_refused_while_a_session_is_open_or_mapped)
{
	struct xs_session s;
	int fd;

	ASSERT_EQ(0, xs_setup(&s, 4096, 2, 0));
	EXPECT_EQ(-EWOULDBLOCK, xs_module_unload());
	/* a mapping holds the module as the file does */
	fd = s.fd;
	s.fd = -1;
	close(fd);
	EXPECT_EQ(-EWOULDBLOCK, xs_module_unload());
	xs_close(&s);
	EXPECT_EQ(0, access(XS_DEVICE, F_OK));
}

TEST(unload_drops_retained_sessions_and_reload_works)
{
	uint64_t retained = 0, allocated = 1;
	int round;

	for (round = 0; round < 3; round++) {
		TH_LOG("round %d", round);
		ASSERT_EQ(0, make_retained());
		ASSERT_EQ(0, xs_sysfs_u64("sessions_retained", &retained));
		EXPECT_LE(1, retained);
		ASSERT_EQ(0, xs_module_unload());
		EXPECT_EQ(-1, access(XS_SYSFS "stats", F_OK));
		EXPECT_EQ(-1, access(XS_DEVICE, F_OK));
		ASSERT_EQ(0, xs_module_load(""));
		ASSERT_EQ(0, xs_sysfs_u64("sessions_retained", &retained));
		EXPECT_EQ(0, retained);
		ASSERT_EQ(0, xs_sysfs_u64("bytes_allocated", &allocated));
		EXPECT_EQ(0, allocated);
	}
	EXPECT_EQ(-EEXIST, xs_module_load(""));
}

/* What the pressure processes and the test share. */
struct pressure {
	int pause; /* asked to let go of the device */
	int paused; /* how many have */
};

/*
 * Open, configure, map and close, and ask netlink for the status, ignoring
 * the errors of a module that comes and goes, until killed; let go of
 * everything while asked to.  No start: registering the scheduler probe
 * patches kernel text with IPIs to every CPU, which under TCG on a busy
 * host can stall a vCPU long enough for the guest's soft-lockup and RCU
 * stall detectors; probes and unloading are test_sched's and the tests
 * above.
 */
static void pressure(struct pressure *p)
{
	struct ctl_status st;
	struct xs_session s;
	struct ctl_nl nl;

	for (;;) {
		if (__atomic_load_n(&p->pause, __ATOMIC_ACQUIRE)) {
			__atomic_add_fetch(&p->paused, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&p->pause, __ATOMIC_ACQUIRE))
				usleep(200);
			__atomic_sub_fetch(&p->paused, 1, __ATOMIC_RELEASE);
		}
		if (xs_setup(&s, 4096, 2, 0) == 0)
			xs_close(&s);
		if (ctl_nl_open(&nl) == 0) {
			ctl_get_status(&nl, &st);
			ctl_nl_close(&nl);
		}
	}
}

FIXTURE(pressured){};
FIXTURE_SETUP(pressured)
{
}
FIXTURE_TEARDOWN(pressured)
{
}

/*
 * rmmod and insmod in a loop while other processes hammer the device and
 * the netlink family: an unload either waits for its users (EWOULDBLOCK)
 * or goes through while they keep trying, and the load races their
 * open()s and requests.  The users let go on request, so that every round
 * unloads for sure rather than when the timing allows.
 */
TEST_F_TIMEOUT(pressured, unload_and_reload_while_in_use, 120)
{
	enum { USERS = 3, ROUNDS = 10 };
	struct pressure *p;
	pid_t pid[USERS];
	int i, round, refused = 0, err;

	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < USERS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			pressure(p);
			_exit(0);
		}
		ASSERT_LT(0, pid[i]);
	}
	for (round = 0; round < ROUNDS; round++) {
		usleep(3000);
		/* once while in use: refused or done, nothing else */
		err = xs_module_unload();
		if (err == -EWOULDBLOCK) {
			refused++;
			__atomic_store_n(&p->pause, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&p->paused, __ATOMIC_ACQUIRE) <
			       USERS)
				usleep(500);
			err = xs_module_unload();
			__atomic_store_n(&p->pause, 0, __ATOMIC_RELEASE);
		}
		ASSERT_EQ(0, err);
		/* the users hammer a missing module, then its loading */
		usleep(3000);
		ASSERT_EQ(0, xs_module_load(""));
	}
	for (i = 0; i < USERS; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	munmap(p, sizeof(*p));
	TH_LOG("%d reloads, %d unloads refused while in use", ROUNDS, refused);
	EXPECT_EQ(-EEXIST, xs_module_load(""));
}

TEST_HARNESS_MAIN
