// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr snapshot: the newest window of a running traced process.  This
 * command opens the output file, with its own rights and as a privileged
 * tool must (out_create()).  In thread mode it hands the descriptor to
 * the process through its control channel (lib/util/control_proto.h),
 * which writes the log into it and goes on tracing.  In CPU mode the
 * command copies the rings itself, so no thread of the process stops:
 * the module's session of the process (found by its owner pid over
 * netlink, attached read-only), or the rings the runtime maps without the
 * module, whose memfd the channel hands out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <xrayfdr/runtime.h>

#include "../lib/util/control_proto.h"
#include "../lib/util/losses.h"
#include "../lib/util/outfile.h"
#include "ctl/ctl_nl.h"
#include "control_client.h"
#include "xrayfdr.h"

static void snapshot_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr snapshot [OPTIONS] PID\n"
		"       xrayfdr snapshot --list\n"
		"\n"
		"Write the newest window of process PID's trace as an XRay FDR log while\n"
		"the process goes on running and tracing; the next snapshot holds what\n"
		"came after.  PID must be traced by xrayfdr (started by xrayfdr record,\n"
		"or a program linked with libxrayfdr) and be yours, unless you are\n"
		"root.  The log is created by this command (mode 0644, 0600 when root\n"
		"runs it), never through a symbolic link.  In thread mode the process\n"
		"writes into it and gets no other file; in CPU mode this command copies\n"
		"the rings (the kernel module's session of PID, or the process's own\n"
		"rings) without stopping any of its threads, and what was written over\n"
		"while it copied is left out and counted as cut.\n"
		"\n"
		"Options:\n"
		"  -o, --output=FILE    the log (default: xray-snapshot.PROGRAM.PID.TIME\n"
		"                       here)\n"
		"  -f, --force          replace FILE if it exists (a regular file of yours)\n"
		"  -l, --list           the processes you may snapshot: pid, program,\n"
		"                       mode, whether tracing, window size (those on\n"
		"                       the kernel module's rings from its sessions)\n"
		"  -t, --timeout=SEC    give up on a process that does not answer\n"
		"                       (default 60)\n"
		"  -q, --quiet          print nothing on success\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 written; 1 the process refused or failed (not traced,\n"
		"not yours, exited); 2 bad usage or FILE cannot be created.\n");
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
			"process %ld is not traced by xrayfdr (no control channel, no session of the kernel module)",
			(long)pid);
}

/* The module's live sessions: the one of @pid, or (@pid 0) each listed. */
struct find {
	pid_t pid;
	uint32_t id;
	int shown;
};

static int find_reply(void *p, struct nlattr **attrs)
{
	struct find *f = p;
	struct ctl_session s;

	if (ctl_decode_session(attrs, &s))
		return -EBADMSG;
	/* retained: its process is gone; unconfigured: nothing yet */
	if ((s.state & XRAY_FDR_STATE_RETAINED) ||
	    !(s.state & XRAY_FDR_STATE_CONFIGURED))
		return 0;
	if (f->pid && s.owner_pid == (uint32_t)f->pid)
		f->id = s.id;
	if (!f->pid) {
		printf("%-8u %-16s %-7s %-8s %u x %u bytes a CPU (session %u)\n",
		       s.owner_pid, s.comm, "cpu",
		       s.state & XRAY_FDR_STATE_FROZEN	? "stopped" :
		       s.state & XRAY_FDR_STATE_ENABLED ? "yes" :
							  "no",
		       s.subbuf_count, s.subbuf_size, s.id);
		f->shown++;
	}
	return 0;
}

/*
 * The module's live sessions the caller may see (its own; all for
 * CAP_SYS_ADMIN): @f->pid's id into @f->id, or with @f->pid 0 each one
 * printed.  Nothing without the module.
 */
static void module_sessions(struct find *f)
{
	struct ctl_nl nl;
	struct nl_msg *msg;

	if (ctl_nl_open(&nl))
		return;
	msg = ctl_nl_msg(&nl, XRAY_FDR_CMD_SESSION_GET, NLM_F_DUMP);
	if (msg)
		ctl_nl_call(&nl, msg, XRAY_FDR_A_SESSION_MAX, find_reply, f);
	ctl_nl_close(&nl);
}

/* A read-only view of session @id, or a negative errno. */
static int attach(uint32_t id)
{
	struct xray_fdr_attach a = { .size = sizeof(a), .session_id = id };
	int fd = open("/dev/" XRAY_FDR_DEVICE_NAME, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, XRAY_FDR_IOC_ATTACH, &a)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* The log of the rings @rings maps, copied as they are written, to @file;
 * its counts into @st. */
static int copy_rings(int rings, int file, struct xrayfdr_trace_stats *st)
{
	char why[64];

	snprintf(why, sizeof(why), "request(pid=%ld,uid=%ld)", (long)getpid(),
		 (long)geteuid());
	XRAYFDR_OPTS(xrayfdr_dump_opts, o, .stats = st, .snapshot = why);
	return xrayfdr_rings_write(rings, file, &o);
}

/* The pids with a channel, from /proc/net/unix ("@xrayfdr.PID"). */
static int list(void)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512], reply[CONTROL_MSG_MAX], prog[64];
	struct find sessions = { 0 };
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
		fd = control_connect((pid_t)pid);
		if (fd < 0)
			continue;
		if (control_ask(fd, "info", -1, reply, sizeof(reply), 5000,
				NULL) ||
		    strncmp(reply, "ok ", 3)) {
			close(fd);
			continue; /* (not ours to ask) */
		}
		close(fd);
		sscanf(reply,
		       "ok mode=%15s running=%d buffer_size=%llu buffer_max=%llu",
		       mode, &running, &size, &max);
		proc_program((pid_t)pid, prog, sizeof(prog));
		printf("%-8ld %-16s %-7s %-8s %llu x %llu bytes\n", pid, prog,
		       mode, running ? "yes" : "stopped", max, size);
		shown++;
	}
	fclose(f);
	module_sessions(&sessions);
	if (!shown && !sessions.shown)
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
	int opt, fd, file, err, rings = -1;
	struct xrayfdr_trace_stats st = { .sz = sizeof(st) };
	uint32_t id = 0;
	bool cpu = false;

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
	fd = control_connect((pid_t)pid);
	if (fd < 0) {
		/* CPU mode on the module's rings: no channel there */
		struct find f = { .pid = (pid_t)pid };

		if (fd != -EACCES)
			module_sessions(&f);
		id = f.id;
		if (!id) {
			no_channel((pid_t)pid, fd);
			return 1;
		}
	}
	proc_program((pid_t)pid, prog, sizeof(prog));
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
	if (fd >= 0) {
		err = control_ask(fd, "snapshot", file, reply, sizeof(reply),
				  (int)timeout * 1000, NULL);
		close(fd);
		if (!err && !strncmp(reply, "error ", 6))
			err = -atoi(reply + 6);
		if (err == -ENOTSUP) { /* CPU mode: its rings, copied here */
			fd = control_connect((pid_t)pid);
			err = fd < 0 ? fd :
				       control_ask(fd, "rings", -1, reply,
						   sizeof(reply),
						   (int)timeout * 1000, &rings);
			if (fd >= 0)
				close(fd);
			if (!err && !strncmp(reply, "error ", 6))
				err = -atoi(reply + 6);
			else if (!err && rings < 0)
				err = -EPROTO;
			cpu = true;
		}
	} else {
		rings = attach(id);
		err = rings < 0 ? rings : 0;
		cpu = true;
	}
	if (cpu && !err)
		err = copy_rings(rings, file, &st);
	if (rings >= 0)
		close(rings);
	close(file);
	if (err) {
		unlink(output); /* (made above: nothing of the process's) */
		tool_error(
			"snapshot", "process %ld: no snapshot: %s", pid,
			err == -EPIPE ?
				"it exited, or closed the channel" :
			err == -ETIMEDOUT ?
				"it did not answer in time (stopped? --timeout)" :
			err == -EPERM	? "not yours (root may)" :
			err == -ENOENT	? "its session is gone (it exited)" :
			err == -ENOTSUP ? "its trace has no snapshots" :
			err == -ENODATA ? "it is not tracing now" :
					  strerror(-err));
		return 1;
	}
	if (cpu) {
		char lost[LOSSES_TEXT_MAX];

		/* what the kernel lost and what was damaged, when any */
		losses_text(lost, st.kernel_lost, st.damaged);
		if (!quiet)
			printf("snapshot of %ld (%s): %llu events in %llu buffers to %s (%llu overwritten, %llu dropped%s, %llu cut)\n",
			       pid, prog, (unsigned long long)st.events,
			       (unsigned long long)st.buffers, output,
			       (unsigned long long)st.overwritten,
			       (unsigned long long)st.dropped, lost,
			       (unsigned long long)st.cut);
		return 0;
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
