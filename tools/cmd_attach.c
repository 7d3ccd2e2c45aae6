// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr attach: trace a process that is already running, and detach
 * again.  Every check that can refuse is made before the process is
 * touched.  Then one of its threads, stopped where it holds none of the
 * C library's locks (inject.h), calls dlopen() on libxrayfdr and the
 * runtime's xrayfdr_attach_begin(), which patches the sleds and opens the
 * control channel; the thread is put back as it was.  The trace ends at
 * --for, ^C, or xrayfdr detach PID (which asks this command over a socket
 * of its own, "xrayfdr-attach.PID"): a "detach" request on the control
 * channel unpatches every sled and writes the log, which is checked here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/runtime/tsc.h"
#include "../lib/util/control_proto.h"
#include "../lib/util/outfile.h"
#include "../lib/xray/instr_map.h"
#include "control_client.h"
#include "inject.h"
#include "trace_opts.h"
#include "xrayfdr.h"

/* How long a thread may take to come to a safe point, and a call. */
#define SEIZE_MS 5000
#define CALL_MS 60000
/* How long the runtime may take to write the log at detach. */
#define DETACH_MS 600000

static void attach_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr attach [OPTIONS] PID\n"
		"\n"
		"Trace process PID, which is already running, from now on, without\n"
		"restarting it; the trace ends at --for, on ^C, when PID exits, or at\n"
		"xrayfdr detach PID, and its log is checked as xrayfdr record checks\n"
		"one.  Detaching unpatches every sled and leaves the process running\n"
		"as before; libxrayfdr stays loaded in it, inert (a later attach\n"
		"uses it again).\n"
		"\n"
		"PID must be built with clang -fxray-instrument -fnoxray-link-deps\n"
		"(or carry libxrayfdr), be dynamically linked, and be yours (or you\n"
		"root), with ptrace allowed (kernel.yama.ptrace_scope).  One of its\n"
		"threads is stopped for a moment, where it holds none of the C\n"
		"library's locks, to load the library through the process's own\n"
		"loader (Documentation/runtime.rst, \"Attach\").\n"
		"\n"
		"Options (those of xrayfdr record, for a trace that starts now):\n"
		"  -o, --output=FILE        the log (default: xray-log.PROGRAM.XXXXXX here),\n"
		"                           written by the process: its owner must be able\n"
		"                           to write it\n"
		"      --for=TIME           detach after TIME (5s, 2m is 120s; default: at\n"
		"                           ^C or xrayfdr detach PID)\n"
		"  -F, --filter=PATTERN     trace only the functions PATTERN names\n"
		"                           (repeatable; see xrayfdr record --help)\n"
		"  -N, --notrace=PATTERN    do not trace what PATTERN names (repeatable)\n"
		"  -t, --threshold-us=N     leave out calls shorter than N microseconds\n"
		"      --min-duration=TIME  the same with a unit: 5us, 2ms, 1s\n"
		"      --depth=N            record only calls at most N levels deep\n"
		"  -b, --buffer-size=SIZE   bytes per buffer, suffixes K, M (default 64K)\n"
		"  -m, --buffer-max=N       buffers in the queue (default 256; CPU mode:\n"
		"                           as for record)\n"
		"  -V, --fdr-version=N      log format version: 5 (default) or 1\n"
		"  -M, --mode=MODE          thread, cpu or auto (default), as for record\n"
		"  -s, --stream             write every record while PID runs\n"
		"  -K, --keep               the module keeps the rings if PID dies\n"
		"      --trigger=SPEC       snapshots when SPEC happens (FUNC>TIME or\n"
		"                           signal=SIG), with --post=TIME,\n"
		"                           --max-snapshots=N, --snapshot-interval=TIME\n"
		"                           and --snapshot-dir=DIR as for record\n"
		"  -L, --library=PATH       the libxrayfdr.so to load (default: the one\n"
		"                           installed next to this xrayfdr, ../lib/%s,\n"
		"                           else the one in make install's LIBDIR)\n"
		"      --verify             check the whole log, however large\n"
		"      --no-verify          do not check the log: say only its size\n"
		"  -q, --quiet              print nothing unless something goes wrong\n"
		"  -h, --help               show this help\n"
		"\n"
		"Examples:\n"
		"  xrayfdr attach --for 10s $(pidof server)\n"
		"  xrayfdr attach -F 'handle_*' -o run.xray 4242   # ^C when done\n"
		"  xrayfdr detach 4242                        # from another shell\n"
		"\n"
		"Exit status: 0 the log was written and is valid; 1 the process\n"
		"refused, could not be attached, or left no valid log; 2 bad usage.\n",
		TRACE_LIBRARY);
}

static void detach_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr detach PID\n"
		"\n"
		"End the trace xrayfdr attach started in process PID: every sled is\n"
		"unpatched and the log written; the xrayfdr attach that waits for it\n"
		"checks the log and ends.  Without one (it was killed), the process is\n"
		"asked directly and writes the log the attach named.\n"
		"\n"
		"Options:\n"
		"  -h, --help   show this help\n"
		"\n"
		"Exit status: 0 detached; 1 PID is not attached or the log could not\n"
		"be written; 2 bad usage.\n");
}

/* The address of the socket xrayfdr attach waits on for @pid. */
static socklen_t waiter_address(struct sockaddr_un *a, pid_t pid)
{
	return pid_socket_address(a, "xrayfdr-attach", pid);
}

static int parse_pid(const char *cmd, const char *text, pid_t *pid)
{
	uint64_t v;

	if (parse_uint(text, 1, INT32_MAX, &v)) {
		tool_error(cmd, "'%s' is not a process id", text);
		return -1;
	}
	*pid = (pid_t)v;
	return 0;
}

/* The number after @key in /proc/@pid/status, or -1. */
static long status_field(pid_t pid, const char *key)
{
	char text[256];

	if (!proc_status_text(pid, 0, key, text, sizeof(text)) || !text[0])
		return -1;
	return strtol(text, NULL, 10);
}

/* Is @pid in a group stop (State: T)? */
static bool stopped(pid_t pid)
{
	char text[256];

	return proc_status_text(pid, 0, "State", text, sizeof(text)) &&
	       strchr(text, 'T') != NULL;
}

/* The owner (real uid) of @pid, or -1. */
static long owner_of(pid_t pid)
{
	return status_field(pid, "Uid");
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	return scope;
}

/* What to do when ptrace is refused, as Yama has it. */
static void say_ptrace_refused(pid_t pid)
{
	int scope = yama_scope();

	if (scope >= 3)
		tool_error(
			"attach",
			"ptrace is disabled (kernel.yama.ptrace_scope=3) until the next boot: no process can be attached");
	else if (scope == 2)
		tool_error(
			"attach",
			"kernel.yama.ptrace_scope=2: only root (CAP_SYS_PTRACE) may attach to process %ld; run xrayfdr attach as root",
			(long)pid);
	else if (scope == 1)
		tool_error(
			"attach",
			"kernel.yama.ptrace_scope=1: only a parent may trace process %ld; run xrayfdr attach as root (CAP_SYS_PTRACE), or set kernel.yama.ptrace_scope=0",
			(long)pid);
	else
		tool_error(
			"attach",
			"ptrace of process %ld was refused: it is another user's, not dumpable, or traced already (a debugger?)",
			(long)pid);
}

/* The instrumented objects a process has mapped. */
struct sleds {
	pid_t pid;
	unsigned int objects;
	size_t functions;
	char seen[32][PATH_MAX];
	unsigned int nseen;
	bool loader; /* a dynamic loader is mapped */
};

static int count_sleds(const struct proc_map *m, void *arg)
{
	struct sleds *s = arg;
	struct xray_instr_map map;
	char path[PATH_MAX + 64], err[256];
	const char *base = strrchr(m->path, '/');

	if (m->path[0] != '/' || m->offset)
		return 0;
	if (base && !strncmp(base + 1, "ld-linux", 8))
		s->loader = true;
	for (unsigned int i = 0; i < s->nseen; i++)
		if (!strcmp(s->seen[i], m->path))
			return 0;
	if (s->nseen < sizeof(s->seen) / sizeof(s->seen[0]))
		snprintf(s->seen[s->nseen++], PATH_MAX, "%s", m->path);
	snprintf(path, sizeof(path), "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64,
		 (long)s->pid, m->start, m->end);
	if (access(path, R_OK))
		snprintf(path, sizeof(path), "/proc/%ld/root%s", (long)s->pid,
			 m->path);
	if (xray_instr_map_load_elf(path, &map, err, sizeof(err)))
		return 0;
	if (map.nfunctions) {
		s->objects++;
		s->functions += map.nfunctions;
	}
	xray_instr_map_free(&map);
	return 0;
}

/* Is the process traced already?  Its channel answers "running=1". */
static bool traced_already(pid_t pid)
{
	char reply[CONTROL_MSG_MAX];
	int fd = control_connect(pid);
	bool running;

	if (fd < 0)
		return false;
	running = !control_ask(fd, "info", -1, reply, sizeof(reply), 5000,
			       NULL) &&
		  strstr(reply, "running=1");
	close(fd);
	return running;
}

/* Call dlerror() in the process: why its dlopen() failed. */
static void process_dlerror(struct inject *in, char *out, size_t size)
{
	uint64_t fn, msg = 0;
	char err[256];

	snprintf(out, size, "dlopen() failed");
	if (proc_symbol(in->pid, "libc.so.", "dlerror", &fn, NULL, 0) ||
	    inject_call(in, fn, NULL, 0, CALL_MS, &msg, err, sizeof(err)) ||
	    !msg)
		return;
	memset(out, 0, size);
	if (inject_read(in, msg, out, size - 1))
		snprintf(out, size, "dlopen() failed");
	out[size - 1] = '\0';
}

/*
 * Load the runtime into the process (unless it carries it) and start the
 * trace there.  0, or 1 having said why.
 */
static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int start_in(pid_t pid, const char *library, const char *options,
		    const char *filter, pid_t *tid, uint64_t *stopped_ns)
{
	char err[512], why[512] = { 0 };
	uint64_t fn, dlopen_fn, handle, args[4], rc;
	struct inject in;
	bool builtin;
	int ret;

	/* a program that carries the runtime has the entry already */
	builtin = !proc_symbol(pid, NULL, "xrayfdr_attach_begin", &fn, NULL, 0);
	if (!builtin &&
	    proc_symbol(pid, "libc.so.", "dlopen", &dlopen_fn, NULL, 0) &&
	    proc_symbol(pid, "libdl.so.", "dlopen", &dlopen_fn, NULL, 0)) {
		tool_error(
			"attach",
			"process %ld has no dlopen() (a C library other than glibc 2.34 or later, or libdl not loaded); nothing was changed",
			(long)pid);
		return 1;
	}
	ret = inject_seize(pid, SEIZE_MS, &in, err, sizeof(err));
	if (ret == -EPERM) {
		say_ptrace_refused(pid);
		return 1;
	}
	if (ret) {
		tool_error("attach", "process %ld: %s; nothing was changed",
			   (long)pid, err);
		return 1;
	}
	*tid = in.tid;
	*stopped_ns = monotonic_ns();
	if (!builtin) {
		ret = inject_push(&in, library, strlen(library) + 1, &args[0]);
		args[1] = 2; /* RTLD_NOW */
		if (!ret)
			ret = inject_call(&in, dlopen_fn, args, 2, CALL_MS,
					  &handle, err, sizeof(err));
		if (!ret && !handle) {
			process_dlerror(&in, err, sizeof(err));
			ret = -ENOENT;
		}
		if (!ret && proc_symbol(pid, "libxrayfdr.so",
					"xrayfdr_attach_begin", &fn, NULL, 0)) {
			snprintf(
				err, sizeof(err),
				"%s was loaded, but its xrayfdr_attach_begin() is not where it should be",
				library);
			ret = -ENOENT;
		}
		if (ret) {
			inject_release(&in);
			*stopped_ns = monotonic_ns() - *stopped_ns;
			tool_error("attach",
				   "process %ld could not load %s: %s",
				   (long)pid, library, err);
			return 1;
		}
	}
	ret = inject_push(&in, options, strlen(options) + 1, &args[0]);
	if (!ret)
		ret = inject_push(&in, filter ? filter : "",
				  filter ? strlen(filter) + 1 : 1, &args[1]);
	if (!ret)
		ret = inject_push(&in, why, sizeof(why), &args[2]);
	args[3] = sizeof(why);
	if (!ret)
		ret = inject_call(&in, fn, args, 4, CALL_MS, &rc, err,
				  sizeof(err));
	if (!ret && (int32_t)rc &&
	    inject_read(&in, args[2], why, sizeof(why) - 1))
		snprintf(why, sizeof(why), "%s", strerror(-(int32_t)rc));
	inject_release(&in);
	*stopped_ns = monotonic_ns() - *stopped_ns;
	if (ret) {
		tool_error("attach", "process %ld: %s", (long)pid, err);
		return 1;
	}
	if ((int32_t)rc) {
		tool_error("attach", "process %ld: %s", (long)pid,
			   why[0] ? why : strerror(-(int32_t)rc));
		return 1;
	}
	return 0;
}

/* Ask the process to detach: 0, or a negative errno having said why. */
static int detach_process(pid_t pid)
{
	char reply[CONTROL_MSG_MAX];
	int fd = control_connect(pid), ret;

	if (fd < 0) {
		if (kill(pid, 0) && errno == ESRCH)
			tool_error("detach", "no process %ld", (long)pid);
		else
			tool_error(
				"detach",
				"process %ld is not traced by xrayfdr (no control channel)",
				(long)pid);
		return fd;
	}
	ret = control_ask(fd, "detach", -1, reply, sizeof(reply), DETACH_MS,
			  NULL);
	close(fd);
	if (ret) {
		tool_error("detach", "process %ld did not answer: %s",
			   (long)pid, strerror(-ret));
		return ret;
	}
	if (!strcmp(reply, "ok"))
		return 0;
	if (!strcmp(reply, "error 95")) {
		tool_error(
			"detach",
			"process %ld is traced, but not by an attach (xrayfdr record, or its own code): it has nothing to detach; xrayfdr snapshot %ld reads its trace",
			(long)pid, (long)pid);
		return -EOPNOTSUPP;
	}
	tool_error("detach", "process %ld: %s", (long)pid, reply);
	return -EIO;
}

/* Listen for xrayfdr detach PID: the socket, or -1 (then only ^C and
 * --for end the trace). */
static int waiter_socket(pid_t pid)
{
	struct sockaddr_un a;
	socklen_t len = waiter_address(&a, pid);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&a, len) || listen(fd, 4)) {
		close(fd);
		return -1;
	}
	return fd;
}

enum end_reason { END_TIME, END_SIGNAL, END_REQUEST, END_EXIT };

/* Wait for the end of the trace; a detach request's connection in
 * *@conn. */
static enum end_reason wait_end(pid_t pid, int64_t for_ms, int sfd, int lfd,
				int *conn)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	*conn = -1;
	for (;;) {
		struct pollfd p[3] = { { .fd = pidfd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = lfd, .events = POLLIN } };
		int timeout = -1, n;
		struct timespec now;

		if (for_ms >= 0) {
			int64_t spent;

			clock_gettime(CLOCK_MONOTONIC, &now);
			spent = (now.tv_sec - start.tv_sec) * 1000 +
				(now.tv_nsec - start.tv_nsec) / 1000000;
			if (spent >= for_ms)
				break;
			timeout = (int)(for_ms - spent);
		}
		/* without a pidfd, look at the process now and then */
		if (pidfd < 0 && (timeout < 0 || timeout > 200))
			timeout = 200;
		n = poll(p, 3, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if ((pidfd >= 0 && (p[0].revents & POLLIN)) ||
		    (pidfd < 0 && kill(pid, 0) && errno == ESRCH)) {
			close(pidfd);
			return END_EXIT;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) > 0) {
				close(pidfd);
				return END_SIGNAL;
			}
		}
		if (p[2].revents & POLLIN) {
			struct ucred peer;
			socklen_t plen = sizeof(peer);
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				continue;
			if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer,
				       &plen) ||
			    (peer.uid != geteuid() && peer.uid != 0)) {
				send(c, "error 1", 7, MSG_NOSIGNAL);
				close(c);
				continue;
			}
			/* the request, read so that the answer is not reset */
			if (poll(&(struct pollfd){ .fd = c, .events = POLLIN },
				 1, 5000) != 1 ||
			    recv(c, &(char[16]){ 0 }, 16, 0) <= 0) {
				close(c);
				continue;
			}
			*conn = c;
			close(pidfd);
			return END_REQUEST;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return END_TIME;
}

/*
 * Where the TSC's frequency is calibrated (no module, no perf), this
 * command does it, so that the thread it stops does not: "tsc_hz=N" in
 * @buf, or NULL.
 */
static const char *tsc_given(char *buf, size_t size)
{
	struct rt_tsc_facts f;

	/* (the probe alone: the library's API would bring its start-up,
	 * which reads XRAYFDR_OPTIONS, into this command) */
	if (rt_tsc_probe(NULL, RT_TSC_ALL, &f) || f.source != RT_TSC_CALIBRATE)
		return NULL;
	snprintf(buf, size, "tsc_hz=%" PRIu64, f.hz);
	return buf;
}

/* The log's path, absolute (the process has a directory of its own). */
static int choose_output(const struct trace_opts *o, const char *prog,
			 char *out, size_t size)
{
	char name[PATH_MAX], dir[PATH_MAX], *slash;
	int ret;

	if (o->output) {
		snprintf(name, sizeof(name), "%s", o->output);
	} else if ((ret = trace_reserve_output(prog, name, sizeof(name)))) {
		tool_error("attach", "cannot create a log here: %s",
			   strerror(-ret));
		return -1;
	}
	if (strchr(name, '"')) {
		tool_error("attach", "--output cannot contain '\"'");
		return -1;
	}
	if (o->output && (ret = trace_check_output(name))) {
		tool_error("attach", "cannot write the log %s: %s", name,
			   out_create_reason(ret) ? out_create_reason(ret) :
						    strerror(-ret));
		return -1;
	}
	slash = strrchr(name, '/');
	snprintf(dir, sizeof(dir), "%.*s",
		 slash ? (int)(slash == name ? 1 : slash - name) : 1,
		 slash ? name : ".");
	if (!realpath(dir, out) ||
	    strlen(out) + strlen(slash ? slash : name) + 2 > size) {
		tool_error("attach", "%s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(out + strlen(out), size - strlen(out), "/%s",
		 slash ? slash + 1 : name);
	return 0;
}

/* The log is written by the process: its owner must be able to replace
 * the file this command made (root made it). */
static void give_output(const char *path, pid_t pid)
{
	long uid = owner_of(pid);
	struct stat st;

	if (geteuid() || uid <= 0 || stat(path, &st))
		return;
	if (chown(path, (uid_t)uid, (gid_t)-1))
		tool_error("attach", "warning: %s: chown: %s", path,
			   strerror(errno));
}

static int attach_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACE_LONGOPTS,
		{ "for", required_argument, NULL, 0x400 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char prog[256], output[PATH_MAX], library[PATH_MAX], snapdir[PATH_MAX];
	char options[PATH_MAX + 4096], reply[CONTROL_MSG_MAX], tsc[32];
	struct trace_opts o = { 0 };
	struct sleds s = { 0 };
	int64_t for_ms = -1;
	const char *lib = NULL;
	enum end_reason why;
	unsigned int bad = 0;
	uint64_t events, ns, stopped_ns = 0;
	pid_t tid = 0;
	sigset_t mask;
	int opt, ret, sfd, lfd, conn;
	pid_t pid;

	while ((opt = getopt_long(argc, argv, TRACE_SHORTOPTS "h", longopts,
				  NULL)) != -1) {
		int r = trace_opt("attach", opt, optarg, longopts, &o);

		if (r < 0)
			return EXIT_USAGE;
		if (r)
			continue;
		switch (opt) {
		case 0x400:
			if (parse_time_ns(optarg, 1000000000, &ns) || !ns) {
				tool_error(
					"attach",
					"--for wants a time such as 500ms, 10s or 2m, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			for_ms = (int64_t)((ns + 999999) / 1000000);
			break;
		case 'h':
			attach_usage(stdout);
			return EXIT_OK;
		default:
			attach_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_error("attach", "give one PID (see --help)");
		return EXIT_USAGE;
	}
	if (parse_pid("attach", argv[optind], &pid))
		return EXIT_USAGE;
	if (pid == getpid()) {
		tool_error("attach", "process %ld is this command", (long)pid);
		return EXIT_INVALID;
	}

	/* Everything that can refuse, before the process is touched. */
	if (kill(pid, 0) && errno == ESRCH) {
		tool_error("attach", "no process %ld", (long)pid);
		return EXIT_INVALID;
	}
	if (geteuid() && owner_of(pid) != (long)getuid()) {
		tool_error(
			"attach",
			"process %ld is another user's: only its owner or root may attach",
			(long)pid);
		return EXIT_INVALID;
	}
	if (yama_scope() >= 3 || (yama_scope() == 2 && geteuid())) {
		say_ptrace_refused(pid);
		return EXIT_INVALID;
	}
	proc_program(pid, prog, sizeof(prog));
	if (stopped(pid)) {
		tool_error(
			"attach",
			"process %ld (%s) is stopped (SIGSTOP or ^Z): continue it first (kill -CONT %ld); nothing was changed",
			(long)pid, prog, (long)pid);
		return EXIT_INVALID;
	}
	if (status_field(pid, "TracerPid") > 0) {
		tool_error(
			"attach",
			"process %ld (%s) is under a debugger (TracerPid %ld): detach it first; nothing was changed",
			(long)pid, prog, status_field(pid, "TracerPid"));
		return EXIT_INVALID;
	}
	if (status_field(pid, "Seccomp") > 0) {
		/* a filter may refuse, or kill it for, what loading does */
		tool_error(
			"attach",
			"process %ld (%s) runs under seccomp (mode %ld): loading a library could be refused or kill it; nothing was changed (start it with xrayfdr record)",
			(long)pid, prog, status_field(pid, "Seccomp"));
		return EXIT_INVALID;
	}
	s.pid = pid;
	ret = proc_maps(pid, count_sleds, &s);
	if (ret) {
		tool_error("attach", "process %ld: its mappings: %s", (long)pid,
			   strerror(-ret));
		return EXIT_INVALID;
	}
	if (!s.functions) {
		tool_error(
			"attach",
			"process %ld (%s) has no XRay sleds in any object it has loaded: build it with clang -fxray-instrument -fnoxray-link-deps; nothing was changed",
			(long)pid, prog);
		return EXIT_INVALID;
	}
	if (!s.loader) {
		tool_error(
			"attach",
			"process %ld (%s) is statically linked: a library cannot be loaded into it (xrayfdr record starts it traced); nothing was changed",
			(long)pid, prog);
		return EXIT_INVALID;
	}
	{
		uint64_t addr;

		if (!proc_symbol(pid, NULL, "__xray_FunctionEntry", &addr, NULL,
				 0)) {
			tool_error(
				"attach",
				"process %ld (%s) is linked with LLVM's XRay runtime, which owns its sleds: build it with -fnoxray-link-deps; nothing was changed",
				(long)pid, prog);
			return EXIT_INVALID;
		}
	}
	if (traced_already(pid)) {
		tool_error(
			"attach",
			"process %ld (%s) is traced already (by xrayfdr record, an attach, or its own code): xrayfdr snapshot %ld reads its trace, xrayfdr detach %ld ends an attach",
			(long)pid, prog, (long)pid, (long)pid);
		return EXIT_INVALID;
	}
	if (o.library)
		lib = o.library;
	else if (getenv("XRAYFDR_LIBRARY"))
		lib = getenv("XRAYFDR_LIBRARY");
	else if (trace_default_library(library, sizeof(library)))
		lib = library;
	if (!lib || !realpath(lib, library)) {
		tool_error(
			"attach", "%s: %s", lib ? lib : TRACE_LIBRARY,
			lib ? strerror(errno) :
			      "not found next to this program nor in " XRAYFDR_LIBDIR
			      "; give --library");
		return EXIT_USAGE;
	}
	if (choose_output(&o, prog, output, sizeof(output)))
		return EXIT_USAGE;
	if (o.triggers && (ret = trace_snapshot_dir("attach", &o, output,
						    snapdir, sizeof(snapdir))))
		return ret;
	if (trace_opts_text("attach", &o, tsc_given(tsc, sizeof(tsc)), output,
			    (long)pid, options, sizeof(options)))
		return EXIT_USAGE;

	/* ^C and the like end the trace; xrayfdr detach PID asks here */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	lfd = waiter_socket(pid);
	if (lfd < 0) {
		tool_error(
			"attach",
			"process %ld has an xrayfdr attach already (its socket is taken)",
			(long)pid);
		return EXIT_INVALID;
	}
	give_output(output, pid);
	if (start_in(pid, library, options, o.filter, &tid, &stopped_ns)) {
		if (!o.output)
			unlink(output);
		return EXIT_INVALID;
	}
	if (!o.quiet)
		fprintf(stderr,
			"xrayfdr attach: tracing process %ld (%s): %zu instrumented functions in %u object%s (thread %ld stopped %.3f ms to load the library); %s ends it\n",
			(long)pid, prog, s.functions, s.objects,
			s.objects == 1 ? "" : "s", (long)tid,
			(double)stopped_ns / 1e6,
			for_ms >= 0 ? "--for, ^C or xrayfdr detach" :
				      "^C or xrayfdr detach");

	why = wait_end(pid, for_ms, sfd, lfd, &conn);
	close(lfd);
	if (why == END_EXIT) {
		if (!o.quiet)
			fprintf(stderr,
				"xrayfdr attach: process %ld ended while attached\n",
				(long)pid);
		ret = 0;
	} else {
		ret = detach_process(pid);
		if (ret == -ECONNREFUSED || ret == -ENOENT || ret == -EPIPE) {
			/* it ended meanwhile: its exit wrote the log */
			ret = 0;
		}
	}
	if (!ret) {
		ret = trace_report("attach", output, o.quiet, o.verify,
				   &events);
		if (ret == -ENOENT)
			tool_error(
				"attach",
				"process %ld left no log in %s (killed by SIGKILL while attached?)",
				(long)pid, output);
	}
	if (o.triggers)
		trace_report_snapshots("attach", snapdir, prog, pid, o.quiet,
				       o.verify, &bad);
	if (conn >= 0) {
		if (ret)
			snprintf(reply, sizeof(reply), "error %d", -ret);
		else
			snprintf(reply, sizeof(reply), "ok %s", output);
		send(conn, reply, strlen(reply), MSG_NOSIGNAL);
		close(conn);
	}
	return ret || bad ? EXIT_INVALID : EXIT_OK;
}

static int detach_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char reply[CONTROL_MSG_MAX];
	struct sockaddr_un a;
	socklen_t len;
	int opt, fd, ret;
	pid_t pid;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			detach_usage(stdout);
			return EXIT_OK;
		}
		detach_usage(stderr);
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		tool_error("detach", "give one PID (see --help)");
		return EXIT_USAGE;
	}
	if (parse_pid("detach", argv[optind], &pid))
		return EXIT_USAGE;
	/* the attach that waits for it checks the log */
	len = waiter_address(&a, pid);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, len)) {
		ret = control_ask(fd, "detach", -1, reply, sizeof(reply),
				  DETACH_MS, NULL);
		close(fd);
		if (ret) {
			tool_error(
				"detach",
				"the xrayfdr attach of process %ld did not answer: %s",
				(long)pid, strerror(-ret));
			return EXIT_INVALID;
		}
		if (strncmp(reply, "ok ", 3)) {
			tool_error("detach", "process %ld: %s", (long)pid,
				   reply);
			return EXIT_INVALID;
		}
		printf("xrayfdr detach: process %ld detached; its log: %s\n",
		       (long)pid, reply + 3);
		return EXIT_OK;
	}
	if (fd >= 0)
		close(fd);
	if (detach_process(pid))
		return EXIT_INVALID;
	printf("xrayfdr detach: process %ld detached; its log is where xrayfdr attach -o said\n",
	       (long)pid);
	return EXIT_OK;
}

const struct command cmd_attach = {
	.name = "attach",
	.summary = "trace a running process from now on (detach ends it)",
	.run = attach_run,
	.usage = attach_usage,
};

const struct command cmd_detach = {
	.name = "detach",
	.summary = "end the trace xrayfdr attach started in a process",
	.run = detach_run,
	.usage = detach_usage,
};
