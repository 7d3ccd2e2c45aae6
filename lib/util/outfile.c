// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Output files a privileged caller may create safely (see outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

static int fail_close(int fd, int err)
{
	close(fd);
	return err;
}

int out_create(const char *path, mode_t mode, unsigned int flags)
{
	struct stat st;
	int fd;

	/* O_EXCL: a dangling symlink is not followed to create its target */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  mode);
	if (fd >= 0)
		return fd;
	if (errno != EEXIST)
		return -errno;
	if (!(flags & OUT_REPLACE)) {
		/* say symlink rather than "exists" when it is one */
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			return -ELOOP;
		return -EEXIST;
	}
	/* O_NONBLOCK: a FIFO put in its place must not hang the caller */
	fd = open(path,
		  O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENXIO ? -EPERM : -errno;
	if (fstat(fd, &st))
		return fail_close(fd, -errno);
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != geteuid())
		return fail_close(fd, -EPERM);
	if (fcntl(fd, F_SETFL, 0) || ftruncate(fd, 0))
		return fail_close(fd, -errno);
	return fd;
}

const char *out_create_reason(int err)
{
	switch (err) {
	case -ELOOP:
		return "it is a symbolic link, and a log is never written through one";
	case -EEXIST:
		return "it exists, and is replaced only when asked";
	case -EPERM:
		return "it exists and is not a regular file of yours with one link; not replaced";
	default:
		return NULL;
	}
}
