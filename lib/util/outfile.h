/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Creating an output file the way a privileged tool must.  A log is often
 * written by root (a dump of a kept session, record under sudo) to a path
 * in a directory another user can write, so the last component is never
 * followed if it is a symbolic link, an existing file is never written
 * through a second name (a hard link), and only a file the caller owns is
 * ever replaced.  Only system calls: the runtime calls this from a fatal
 * signal's flush.
 */
#ifndef XRAYFDR_LIB_UTIL_OUTFILE_H
#define XRAYFDR_LIB_UTIL_OUTFILE_H

#include <sys/types.h>

enum out_flags {
	/* an existing regular file the caller owns, with one link, is
	 * emptied and written; without it, an existing file is EEXIST */
	OUT_REPLACE = 1u << 0,
};

/*
 * Open @path for writing, created with @mode if it does not exist.
 * Return the descriptor (close-on-exec), or a negative errno: -ELOOP for
 * a symbolic link, -EEXIST for an existing file without OUT_REPLACE,
 * -EPERM for one OUT_REPLACE may not replace (not a regular file, more
 * than one link, or another user's).
 */
int out_create(const char *path, mode_t mode, unsigned int flags);

/* A sentence for the errors of out_create() that strerror() says badly,
 * else NULL. */
const char *out_create_reason(int err);

#endif
