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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

static int unload(void)
{
	return syscall(SYS_delete_module, "xray_fdr", O_NONBLOCK) ? -errno : 0;
}

static int load(void)
{
	int fd = open(XS_MODULE_PATH, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		err = -errno;
	close(fd);
	return err;
}

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
	EXPECT_EQ(-EWOULDBLOCK, unload());
	/* a mapping holds the module as the file does */
	fd = s.fd;
	s.fd = -1;
	close(fd);
	EXPECT_EQ(-EWOULDBLOCK, unload());
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
		ASSERT_EQ(0, unload());
		EXPECT_EQ(-1, access(XS_SYSFS "stats", F_OK));
		EXPECT_EQ(-1, access(XS_DEVICE, F_OK));
		ASSERT_EQ(0, load());
		ASSERT_EQ(0, xs_sysfs_u64("sessions_retained", &retained));
		EXPECT_EQ(0, retained);
		ASSERT_EQ(0, xs_sysfs_u64("bytes_allocated", &allocated));
		EXPECT_EQ(0, allocated);
	}
	EXPECT_EQ(-EEXIST, load());
}

TEST_HARNESS_MAIN
