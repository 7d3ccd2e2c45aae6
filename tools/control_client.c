// SPDX-License-Identifier: GPL-2.0-only
/* The requesting side of a traced process's control channel. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../lib/util/control_proto.h"
#include "control_client.h"

/* Connect to the channel of @pid, checking that @pid is what answers. */
int control_connect(pid_t pid)
{
	struct sockaddr_un addr;
	struct ucred peer;
	socklen_t plen = sizeof(peer), len = control_address(&addr, pid);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, len)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* anyone may bind an abstract name: the listener must be @pid */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) ||
	    peer.pid != pid) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* Send @req (with @file if >= 0) and wait up to @timeout_ms for the
 * reply, into @buf, and the descriptor that came with it into *@got (if
 * not NULL; -1 if none).  0 or a negative errno (-ETIMEDOUT, -EPIPE if
 * the process went away). */
int control_ask(int fd, const char *req, int file, char *buf, size_t size,
		int timeout_ms, int *got)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)req, strlen(req) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (got)
		*got = -1;
	if (file >= 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		m.msg_control = cm.space;
		m.msg_controllen = sizeof(cm.space);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &file, sizeof(int));
	}
	if (sendmsg(fd, &m, MSG_NOSIGNAL) < 0)
		return -errno;
	n = poll(&p, 1, timeout_ms);
	if (n == 0)
		return -ETIMEDOUT;
	if (n < 0)
		return -errno;
	iov = (struct iovec){ buf, size - 1 };
	m = (struct msghdr){ .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cm.space,
			     .msg_controllen = sizeof(cm.space) };
	n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return n ? -errno : -EPIPE;
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		int passed;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&passed, CMSG_DATA(c), sizeof(int));
		if (got && *got < 0)
			*got = passed;
		else
			close(passed);
	}
	return 0;
}

/* The program of @pid, for names and the list. */
void proc_program(pid_t pid, char *out, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	f = fopen(path, "r");
	if (!f || !fgets(out, (int)size, f))
		snprintf(out, size, "unknown");
	if (f)
		fclose(f);
	out[strcspn(out, "\n/")] = '\0';
}
