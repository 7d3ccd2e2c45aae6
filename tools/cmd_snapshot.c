// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr snapshot: the newest window of a running traced process, through
 * its control channel (lib/util/control_proto.h).  This command opens the
 * output file, with its own rights and as a privileged tool must
 * (out_create()), and hands the descriptor to the process, which writes
 * the log into it and goes on tracing.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util/control_proto.h"
#include "../lib/util/outfile.h"
#include "xrayfdr.h"

static void snapshot_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr snapshot [OPTIONS] PID\n"
		"       xrayfdr snapshot --list\n"
		"\n"
		"Write the newest window of process PID's trace as an XRay FDR log while\n"
		"the process goes on running and tracing; the next snapshot holds what\n"
		"came after.  PID must be traced by xrayfdr in thread mode (started by\n"
		"xrayfdr record, or a program linked with libxrayfdr) and be yours,\n"
		"unless you are root.  The log is created by this command (mode 0644,\n"
		"0600 when root runs it), never through a symbolic link; the process\n"
		"writes into it and gets no other file.\n"
		"\n"
		"Options:\n"
		"  -o, --output=FILE    the log (default: xray-snapshot.PROGRAM.PID.TIME\n"
		"                       here)\n"
		"  -f, --force          replace FILE if it exists (a regular file of yours)\n"
		"  -l, --list           the processes you may snapshot: pid, program,\n"
		"                       mode, whether tracing, window size\n"
		"  -t, --timeout=SEC    give up on a process that does not answer\n"
		"                       (default 60)\n"
		"  -q, --quiet          print nothing on success\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 written; 1 the process refused or failed (not traced,\n"
		"not yours, not in thread mode, exited); 2 bad usage or FILE cannot be\n"
		"created.\n");
}

/* Connect to the channel of @pid, checking that @pid is what answers. */
static int channel(pid_t pid)
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
 * reply, into @buf.  0 or a negative errno (-ETIMEDOUT, -EPIPE if the
 * process went away). */
static int ask(int fd, const char *req, int file, char *buf, size_t size,
	       int timeout_ms)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} cm;
	struct iovec iov = { (void *)req, strlen(req) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

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
	n = recv(fd, buf, size - 1, 0);
	if (n <= 0)
		return n ? -errno : -EPIPE;
	buf[n] = '\0';
	return 0;
}

/* The program of @pid, for names and the list. */
static void program_of(pid_t pid, char *out, size_t size)
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

/* Why @pid cannot be asked: no such process, or not traced. */
static void no_channel(pid_t pid, int err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld", (long)pid);
	if (access(path, F_OK))
		tool_error("snapshot", "no process %ld", (long)pid);
	else if (err == -EACCES)
		tool_error(
			"snapshot",
			"process %ld's channel is held by another process; not asked",
			(long)pid);
	else
		tool_error(
			"snapshot",
			"process %ld is not traced by xrayfdr in thread mode (no control channel: %s)",
			(long)pid, strerror(-err));
}

/* The pids with a channel, from /proc/net/unix ("@xrayfdr.PID"). */
static int list(void)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512], reply[CONTROL_MSG_MAX], prog[64];
	int shown = 0;

	if (!f) {
		tool_error("snapshot", "/proc/net/unix: %s", strerror(errno));
		return 1;
	}
	printf("%-8s %-16s %-7s %-8s %s\n", "PID", "PROGRAM", "MODE", "TRACING",
	       "WINDOW");
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, " @xrayfdr.");
		unsigned long long size = 0, max = 0;
		char mode[16] = "?";
		int running = 0, fd;
		long pid;

		if (!at || sscanf(at, " @xrayfdr.%ld", &pid) != 1 || pid <= 0)
			continue;
		fd = channel((pid_t)pid);
		if (fd < 0)
			continue;
		if (ask(fd, "info", -1, reply, sizeof(reply), 5000) ||
		    strncmp(reply, "ok ", 3)) {
			close(fd);
			continue; /* (not ours to ask) */
		}
		close(fd);
		sscanf(reply,
		       "ok mode=%15s running=%d buffer_size=%llu buffer_max=%llu",
		       mode, &running, &size, &max);
		program_of((pid_t)pid, prog, sizeof(prog));
		printf("%-8ld %-16s %-7s %-8s %llu x %llu bytes\n", pid, prog,
		       mode, running ? "yes" : "stopped", max, size);
		shown++;
	}
	fclose(f);
	if (!shown)
		printf("(no traced process you may snapshot)\n");
	return 0;
}

static int snapshot_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "list", no_argument, NULL, 'l' },
		{ "timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL;
	char path[PATH_MAX], reply[CONTROL_MSG_MAX], prog[64], *end;
	bool force = false, quiet = false, want_list = false;
	unsigned long long events = 0, overwritten = 0, dropped = 0,
			   buffers = 0;
	long timeout = 60, pid;
	int opt, fd, file, err;

	while ((opt = getopt_long(argc, argv, "o:flt:qh", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'l':
			want_list = true;
			break;
		case 't':
			timeout = strtol(optarg, &end, 10);
			if (*end || timeout < 1 || timeout > 86400) {
				tool_error(
					"snapshot",
					"--timeout wants seconds from 1 to 86400, not '%s'",
					optarg);
				return 2;
			}
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			snapshot_usage(stdout);
			return 0;
		default:
			snapshot_usage(stderr);
			return 2;
		}
	}
	if (want_list)
		return optind == argc ? list() : 2;
	if (optind + 1 != argc) {
		tool_error("snapshot", "expects one PID (see --help)");
		return 2;
	}
	pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0 || pid > INT32_MAX) {
		tool_error("snapshot", "'%s' is not a process id",
			   argv[optind]);
		return 2;
	}
	fd = channel((pid_t)pid);
	if (fd < 0) {
		no_channel((pid_t)pid, fd);
		return 1;
	}
	program_of((pid_t)pid, prog, sizeof(prog));
	if (!output) {
		snprintf(path, sizeof(path), "xray-snapshot.%s.%ld.%lld", prog,
			 pid, (long long)time(NULL));
		output = path;
	}
	/* root's snapshot of another's process is root's alone, as a dump */
	file = out_create(output, geteuid() ? 0644 : 0600,
			  force ? OUT_REPLACE : 0);
	if (file < 0) {
		tool_error("snapshot", "%s: %s", output,
			   out_create_reason(file) && file != -EEXIST ?
				   out_create_reason(file) :
			   file == -EEXIST ? "it exists (--force replaces it)" :
					     strerror(-file));
		close(fd);
		return 2;
	}
	err = ask(fd, "snapshot", file, reply, sizeof(reply),
		  (int)timeout * 1000);
	close(file);
	close(fd);
	if (!err && !strncmp(reply, "error ", 6))
		err = -atoi(reply + 6);
	if (err) {
		unlink(output); /* (made above: nothing of the process's) */
		tool_error(
			"snapshot", "process %ld: no snapshot: %s", pid,
			err == -EPIPE ?
				"it exited, or closed the channel" :
			err == -ETIMEDOUT ?
				"it did not answer in time (stopped? --timeout)" :
			err == -EPERM	? "not yours (root may)" :
			err == -ENOTSUP ? "its trace is not in thread mode" :
			err == -ENODATA ? "it is not tracing now" :
					  strerror(-err));
		return 1;
	}
	sscanf(reply,
	       "ok events=%llu overwritten=%llu dropped=%llu buffers=%llu",
	       &events, &overwritten, &dropped, &buffers);
	if (!quiet)
		printf("snapshot of %ld (%s): %llu events in %llu buffers to %s (%llu overwritten, %llu dropped)\n",
		       pid, prog, events, buffers, output, overwritten,
		       dropped);
	return 0;
}

const struct command cmd_snapshot = {
	.name = "snapshot",
	.summary = "the newest window of a running traced process, as a log",
	.run = snapshot_run,
	.usage = snapshot_usage,
};
