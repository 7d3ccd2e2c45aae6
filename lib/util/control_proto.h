/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control channel of a traced process (lib/runtime/control.c), as
 * `xrayfdr snapshot` (tools/cmd_snapshot.c) speaks it: a SOCK_SEQPACKET
 * Unix socket in the abstract namespace, "xrayfdr.<pid>", one request and
 * one reply per connection, each one message of text.
 *
 *   "snapshot"  with one file descriptor (SCM_RIGHTS), opened for writing
 *               by the requester: the runtime writes a snapshot of its
 *               trace to it.  Reply "ok events=N overwritten=N dropped=N
 *               buffers=N" or "error ERRNO".
 *               In CPU mode "error 95" (EOPNOTSUPP): ask "rings".
 *   "rings"     CPU mode on rings of the runtime's own (no module): reply
 *               "ok" with one descriptor, the rings' sealed memfd, which
 *               the requester maps read-only and copies while the
 *               process goes on (xrayfdr_rings_write()); "error 95" where
 *               there is none, "error 61" (ENODATA) when not tracing.
 *   "info"      reply "ok mode=M running=0|1 buffer_size=N buffer_max=N
 *               version=V".
 *
 * The runtime answers only a peer whose uid is its own effective uid, or
 * root (SO_PEERCRED); the requester checks that the peer is the process
 * it asked for, since anyone may bind an abstract name first.
 */
#ifndef XRAYFDR_LIB_UTIL_CONTROL_PROTO_H
#define XRAYFDR_LIB_UTIL_CONTROL_PROTO_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#define CONTROL_MSG_MAX 512

/* The abstract socket address "@name.@pid", and its length for bind()
 * and connect(). */
static inline socklen_t pid_socket_address(struct sockaddr_un *a,
					   const char *name, pid_t pid)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* abstract: sun_path[0] is NUL, the name follows, no terminator */
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s.%ld", name,
		     (long)pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)n);
}

/* The address of process @pid's channel. */
static inline socklen_t control_address(struct sockaddr_un *a, pid_t pid)
{
	return pid_socket_address(a, "xrayfdr", pid);
}

#endif
