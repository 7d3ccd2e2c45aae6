/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The requesting side of a traced process's control channel
 * (lib/util/control_proto.h): xrayfdr snapshot, attach and detach.
 */
#ifndef XRAYFDR_TOOLS_CONTROL_CLIENT_H
#define XRAYFDR_TOOLS_CONTROL_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

/* Connect to the channel of @pid, checking that @pid is what answers:
 * the socket, or a negative errno (-EACCES: another process holds the
 * name). */
int control_connect(pid_t pid);

/* Send @req (with @file if >= 0) and wait up to @timeout_ms for the
 * reply, into @buf, and the descriptor that came with it into *@got (if
 * not NULL; -1 if none).  0 or a negative errno (-ETIMEDOUT, -EPIPE if
 * the process went away). */
int control_ask(int fd, const char *req, int file, char *buf, size_t size,
		int timeout_ms, int *got);

/* The program of @pid (its comm), for names and lists. */
void proc_program(pid_t pid, char *out, size_t size);

#endif
