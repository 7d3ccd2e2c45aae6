// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control channel (control.h; protocol: ../util/control_proto.h).
 * One thread, started with the first trace of a process, blocks in
 * accept() and serves one request at a time; all signals are blocked in
 * it, so the program's handlers never run there.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../log.h"
#include "../util/control_proto.h"
#include "control.h"
#include "sink.h"
#include "state.h"
#include "trace.h"

static struct {
	int fd; /* listening, or -1 */
	pid_t pid; /* the process that listens on it */
	rt_control_detach_fn detach; /* set while attached */
	void (*tick)(void); /* called now and then while attached */
} ch = { .fd = -1 };

static void reply(int conn, const char *text)
{
	send(conn, text, strlen(text), MSG_NOSIGNAL);
}

/* @text with the descriptor @fd (SCM_RIGHTS). */
static void reply_fd(int conn, const char *text, int fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)text, strlen(text) };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cm.space,
			    .msg_controllen = sizeof(cm.space) };
	struct cmsghdr *c;

	memset(&cm, 0, sizeof(cm));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	sendmsg(conn, &m, MSG_NOSIGNAL);
}

/* The request of @conn, and the descriptor that came with it (or -1). */
static ssize_t receive(int conn, char *buf, size_t size, int *fd)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { buf, size - 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cm.space,
			    .msg_controllen = sizeof(cm.space) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(conn, &m, MSG_CMSG_CLOEXEC);

	*fd = -1;
	for (c = n < 0 ? NULL : CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)) && *fd < 0)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static void snapshot(int conn, int fd, const struct ucred *peer)
{
	char why[64], text[CONTROL_MSG_MAX];
	struct rt_totals tot;
	int ret;

	if (fd < 0) {
		reply(conn, "error 22"); /* EINVAL: no file came */
		return;
	}
	snprintf(why, sizeof(why), "request(pid=%ld,uid=%ld)", (long)peer->pid,
		 (long)peer->uid);
	rt_api_lock();
	/* memory the requester can copy itself (rings()): then no thread of
	 * this process works for it */
	ret = rt_trace_snapshot_ready();
	if (!ret && rt_live.sink->share)
		ret = -ENOTSUP;
	if (!ret)
		ret = rt_trace_snapshot(fd, why, &tot);
	rt_api_unlock();
	if (ret)
		snprintf(text, sizeof(text), "error %d", -ret);
	else
		snprintf(
			text, sizeof(text),
			"ok events=%llu overwritten=%llu dropped=%llu buffers=%llu",
			(unsigned long long)tot.events,
			(unsigned long long)tot.overwritten,
			(unsigned long long)tot.dropped,
			(unsigned long long)tot.buffers);
	reply(conn, text);
}

/*
 * The sink's memory, for the requester to copy in its own process (CPU
 * rings without the module): no thread of this process stops or works.
 */
static void rings(int conn)
{
	int ret, fd = -1;

	rt_api_lock();
	if (rt_live.status != XRAY_LOG_INITIALIZED &&
	    rt_live.status != XRAY_LOG_FINALIZED)
		ret = -ENODATA;
	else if (!rt_live.sink || !rt_live.sink->share ||
		 (fd = rt_live.sink->share()) < 0)
		ret = -ENOTSUP;
	else
		ret = 0;
	if (ret) {
		char text[32];

		snprintf(text, sizeof(text), "error %d", -ret);
		reply(conn, text);
	} else {
		reply_fd(conn, "ok", fd);
	}
	rt_api_unlock();
}

static void info(int conn)
{
	char text[CONTROL_MSG_MAX];

	rt_api_lock();
	snprintf(
		text, sizeof(text),
		"ok mode=%s running=%d buffer_size=%llu buffer_max=%llu version=%u",
		rt_live.sink ? rt_live.sink->name : "none",
		rt_live.status == XRAY_LOG_INITIALIZED,
		(unsigned long long)rt_live.opts.buffer_size,
		(unsigned long long)rt_live.opts.buffer_max,
		rt_live.opts.version);
	rt_api_unlock();
	reply(conn, text);
}

/*
 * End an attached trace (xrayfdr detach): the log written, the channel
 * closed before the answer goes, so that the next attach can listen at
 * once.  True when the channel is closed.
 */
static bool detach(int conn)
{
	char text[CONTROL_MSG_MAX];
	rt_control_detach_fn fn = ch.detach;
	int ret;

	if (!fn) {
		reply(conn, "error 95"); /* not attached: nothing to detach */
		return false;
	}
	ret = fn();
	ch.detach = NULL;
	close(ch.fd);
	ch.fd = -1;
	snprintf(text, sizeof(text), ret ? "error %d" : "ok", -ret);
	reply(conn, text);
	return true;
}

/* Serve the request of @conn; true when the channel has closed. */
static bool serve(int conn)
{
	char buf[CONTROL_MSG_MAX];
	struct ucred peer;
	socklen_t len = sizeof(peer);
	bool closed = false;
	int fd;

	if (receive(conn, buf, sizeof(buf), &fd) < 0)
		return false;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) ||
	    (peer.uid != geteuid() && peer.uid != 0)) {
		reply(conn, "error 1"); /* EPERM: only the owner and root */
	} else if (!strcmp(buf, "detach")) {
		closed = detach(conn);
	} else if (!strcmp(buf, "snapshot")) {
		snapshot(conn, fd, &peer);
	} else if (!strcmp(buf, "rings")) {
		rings(conn);
	} else if (!strcmp(buf, "info")) {
		info(conn);
	} else {
		reply(conn, "error 95"); /* EOPNOTSUPP: a request we lack */
	}
	if (fd >= 0)
		close(fd);
	return closed;
}

static void *listener(void *arg)
{
	int fd = (int)(intptr_t)arg;
	bool closed;

	rt_internal_thread_begin();
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int conn;

		if (ch.detach && ch.tick &&
		    poll(&p, 1, RT_CONTROL_TICK_MS) == 0) {
			ch.tick();
			continue;
		}
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (conn < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break; /* (closed in a forked child: not ours) */
		}
		closed = serve(conn);
		close(conn);
		if (closed)
			break;
	}
	return NULL;
}

static int listen_once(void)
{
	struct sockaddr_un addr;
	socklen_t len;
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;
	pid_t pid = getpid();
	int fd, ret;

	if (ch.fd >= 0 && ch.pid == pid)
		return 0;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	len = control_address(&addr, pid);
	if (bind(fd, (struct sockaddr *)&addr, len) || listen(fd, 8)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&thread, &attr, listener, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret) {
		close(fd);
		return ret;
	}
	ch.fd = fd;
	ch.pid = pid;
	return 0;
}

void rt_control_trace_started(void)
{
	if (!rt_live.sink || rt_live.status != XRAY_LOG_INITIALIZED)
		return;
	if (ch.detach) {
		/* attached: the channel is how the trace ends */
		if (listen_once())
			pr_warn("no control channel: xrayfdr detach cannot reach this process\n");
		return;
	}
	if (!rt_live.opts.control)
		return;
	/* a snapshot of memory it shares, copied by the requester; else in
	 * the process, but not of the module's rings, which `xrayfdr
	 * snapshot` reads through the module */
	if (rt_live.sink->share ? rt_live.sink->share() < 0 :
				  !rt_live.sink->snapshot_begin)
		return;
	if (listen_once() && rt_live.opts.verbosity)
		pr_warn("no control channel: xrayfdr snapshot cannot reach this process\n");
}

void rt_control_fork_child(void)
{
	/* the parent's socket and thread: the child has only the socket */
	if (ch.fd >= 0)
		close(ch.fd);
	ch.fd = -1;
	ch.detach = NULL; /* the child's trace ends with it */
}

void rt_control_set_detach(rt_control_detach_fn fn)
{
	ch.detach = fn;
}

void rt_control_set_tick(void (*fn)(void))
{
	ch.tick = fn;
}

bool rt_control_listening(void)
{
	return ch.fd >= 0 && ch.pid == getpid();
}
