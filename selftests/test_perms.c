// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may open /dev/xrayfdr: the dev_mode parameter.  The module is
 * reloaded with a restrictive mode; a user the mode leaves out gets
 * EACCES from open() while root opens, and a user of the node's group
 * (what 60-xrayfdr.rules sets up with udev, done here by hand: the guest
 * has no udev) opens and is still held to the per-user limits.  Bad modes
 * (and 0, which misc devices take as the kernel's 0600) stop the load.
 * Every test leaves the module loaded with its defaults.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define NOBODY 65534
/* The group the udev rule would give the node (any gid no user has). */
#define TRACERS 4242
#define PARAM "/sys/module/xray_fdr/parameters/dev_mode"

/* Reload the module with @params; 0 or -errno of the load. */
static int reload(const char *params)
{
	int err = xs_module_unload();

	if (err && err != -ENOENT)
		return err;
	return xs_module_load(params);
}

/* The permission bits of the device node, or -errno. */
static int node_mode(void)
{
	struct stat st;

	if (stat(XS_DEVICE, &st))
		return -errno;
	return st.st_mode & 07777;
}

/*
 * Reload with @params; 0 if the parameter file and the node then both say
 * mode @octal, else -1 (the reason printed).
 */
static int loaded_with(const char *params, const char *octal)
{
	char line[32];
	int err = reload(params);

	if (err) {
		printf("# load '%s': %s\n", params, strerror(-err));
		return -1;
	}
	err = xs_read_line(PARAM, line, sizeof(line));
	if (err || strcmp(line, octal) ||
	    node_mode() != (int)strtol(octal, NULL, 8)) {
		printf("# load '%s': %s says '%s', the node %04o; not %s\n",
		       params, PARAM, err ? strerror(-err) : line, node_mode(),
		       octal);
		return -1;
	}
	return 0;
}

/*
 * In a child as uid/gid NOBODY, with supplementary group @group (0: none),
 * open the device read-write @sessions + 1 times.  Exit 0 if @sessions is
 * 0 and the open() succeeded, or if the first @sessions succeeded and the
 * last got EDQUOT; else the errno that stopped it (254: all succeeded).
 */
static int open_as_nobody(gid_t group, int sessions)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		gid_t groups[] = { group };
		int i;

		if (setgroups(group ? 1 : 0, groups) || setgid(NOBODY) ||
		    setuid(NOBODY))
			_exit(255);
		for (i = 0; i <= sessions; i++)
			if (open(XS_DEVICE, O_RDWR | O_CLOEXEC) < 0)
				break;
		if (i > sessions) /* the sessions are closed at exit */
			_exit(sessions ? 254 : 0);
		_exit(i == sessions && errno == EDQUOT ? 0 : errno);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Root opens whatever the mode (CAP_DAC_OVERRIDE). */
static int open_as_root(void)
{
	int fd = open(XS_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

FIXTURE(perms){};
FIXTURE_SETUP(perms)
{
}
FIXTURE_TEARDOWN(perms)
{
	/* the next tests expect the defaults */
	reload("");
}

TEST_F(perms, default_mode_is_0666_and_open_to_every_user)
{
	ASSERT_EQ(0, loaded_with("", "0666"));
	EXPECT_EQ(0, open_as_nobody(0, 0));
	EXPECT_EQ(0, open_as_root());
}

TEST_F(perms, mode_0600_refuses_users_with_eacces_and_root_opens)
{
	ASSERT_EQ(0, loaded_with("dev_mode=0600", "0600"));
	EXPECT_EQ(EACCES, open_as_nobody(0, 0));
	EXPECT_EQ(EACCES, open_as_nobody(TRACERS, 0));
	EXPECT_EQ(0, open_as_root());
}

TEST_F(perms, mode_0660_lets_the_group_in_with_the_per_user_limits)
{
	ASSERT_EQ(0, loaded_with("dev_mode=0660 max_user_sessions=2", "0660"));
	/* what the udev rule does with GROUP="xrayfdr" */
	ASSERT_EQ(0, chown(XS_DEVICE, 0, TRACERS));
	EXPECT_EQ(0660, node_mode());
	EXPECT_EQ(EACCES, open_as_nobody(0, 0));
	EXPECT_EQ(0, open_as_nobody(TRACERS, 0));
	/* two sessions, and the third is EDQUOT as for anyone */
	EXPECT_EQ(0, open_as_nobody(TRACERS, 2));
	EXPECT_EQ(0, open_as_root());
}

TEST_F(perms, modes_beyond_read_and_write_stop_the_load)
{
	static const char *const bad[] = {
		"dev_mode=0777",  "dev_mode=04666", "dev_mode=01666",
		"dev_mode=10000", "dev_mode=0668",  "dev_mode=rw",
		"dev_mode=",	  "dev_mode=0",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		TH_LOG("%s", bad[i]);
		EXPECT_EQ(-EINVAL, reload(bad[i]));
		EXPECT_EQ(-1, access(XS_DEVICE, F_OK));
	}
	/* octal without the leading 0 too */
	ASSERT_EQ(0, loaded_with("dev_mode=644", "0644"));
}

TEST_HARNESS_MAIN
