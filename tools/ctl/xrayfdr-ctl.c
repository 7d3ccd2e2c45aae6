// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr-ctl: drive the xray_fdr kernel module over generic netlink.
 * Human-readable output by default, one JSON object with --json.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include <xrayfdr/runtime.h>

#include "../../lib/util/losses.h"
#include "../xrayfdr.h"
#include "ctl_nl.h"

static bool json;

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr-ctl [--json] COMMAND [ARGS]\n"
		"\n"
		"Control the xray_fdr kernel module: the per-CPU trace rings that\n"
		"processes traced by xrayfdr open on /dev/xrayfdr (one session per\n"
		"open), their scheduler records, and the sessions kept after their\n"
		"process exited (the crash recorder).\n"
		"\n"
		"Commands:\n"
		"  status          module status: sessions, records, memory, TSC facts, the\n"
		"                  limits, and what each user's sessions hold (every user's\n"
		"                  with CAP_SYS_ADMIN, else only yours)\n"
		"  list            the sessions you may see (all of them with CAP_SYS_ADMIN),\n"
		"                  retained ones included\n"
		"  start ID        start writing scheduler records into session ID's rings\n"
		"  stop ID         stop writing them\n"
		"  freeze ID       stop every writer, so the rings can be read consistently\n"
		"  keep ID [on|off]\n"
		"                  keep (or not) session ID's rings in kernel memory after its\n"
		"                  process exits or is killed; default on\n"
		"  drop ID         free a retained session\n"
		"  dump ID -o FILE [--force] [--drop]\n"
		"                  write retained session ID's rings as an XRay FDR log\n"
		"                  (a process traced in CPU mode with keep=true, e.g.\n"
		"                  xrayfdr record --keep), then drop it if asked; the\n"
		"                  owner or CAP_SYS_ADMIN may.  FILE is created mode\n"
		"                  0600, never through a symbolic link; an existing FILE\n"
		"                  is replaced only with --force, and only if it is a\n"
		"                  regular file of the caller's with one link\n"
		"  snapshot ID -o FILE [--force]\n"
		"                  write live session ID's rings as an XRay FDR log while\n"
		"                  its process goes on tracing (retained ones too): the\n"
		"                  rings are copied without stopping any writer; what was\n"
		"                  written over during the copy is left out and counted as\n"
		"                  cut.  Who may, and FILE, as for dump\n"
		"  config [OPTION...]\n"
		"                  show the limits, or change those given (CAP_SYS_ADMIN)\n"
		"\n"
		"Options of config, which change the limit they name (N is decimal):\n"
		"  --max-session-kb N        memory of one session, all CPUs, in KiB\n"
		"                            (64..16777216)\n"
		"  --max-total-kb N          memory of all sessions, in KiB (64..67108864)\n"
		"  --max-sessions N          sessions, open and retained (1..4096)\n"
		"  --max-retained N          sessions marked keep (0..1024)\n"
		"  --max-user-sessions N     sessions of one user, open and retained\n"
		"                            (1..4096)\n"
		"  --max-user-kb N           memory of one user's sessions, in KiB\n"
		"                            (64..67108864)\n"
		"  --max-user-retained N     sessions of one user marked keep (0..1024)\n"
		"  --admin-reserve-sessions N\n"
		"                            of --max-sessions, how many only CAP_SYS_ADMIN\n"
		"                            may open (0..4096)\n"
		"  --admin-reserve-kb N      of --max-total-kb, how much only CAP_SYS_ADMIN\n"
		"                            may use, in KiB (0..67108864)\n"
		"  --admin-reserve-retained N\n"
		"                            of --max-retained, how many keep marks only\n"
		"                            CAP_SYS_ADMIN may set (0..1024)\n"
		"  --retained-max-age N      seconds a retained session of a user without\n"
		"                            CAP_SYS_ADMIN is kept before the module frees\n"
		"                            it; 0 keeps it until dropped.  Setting it frees\n"
		"                            at once what the new age makes due\n"
		"  --sched-records on|off    allow scheduler records in every session\n"
		"\n"
		"The per-user limits and the reserves bind only the sessions opened\n"
		"without CAP_SYS_ADMIN.  A session counts against the user that opened\n"
		"it until it is closed, or dropped if it was retained; its memory until\n"
		"it is freed.  Past a per-user limit, opening /dev/xrayfdr, setting the\n"
		"rings' geometry or marking keep fails with EDQUOT; reaching into a\n"
		"reserve, with EMFILE (sessions) or ENOSPC (memory, keep marks).\n"
		"Lowering a limit frees nothing: it holds for what is asked next; but\n"
		"--retained-max-age frees the retained sessions it makes too old.\n"
		"\n"
		"Options:\n"
		"  --json          print one JSON object instead of text\n"
		"  -h, --help      this text; 'xrayfdr-ctl COMMAND --help' for one command\n"
		"  --version       the version\n"
		"\n"
		"Anyone may act on their own sessions; other users' sessions and the\n"
		"limits need CAP_SYS_ADMIN.  Session ids are in 'list' and in the\n"
		"header page of each session's mapping.\n"
		"\n"
		"Exit status: 0 done; 1 the module refused or is not loaded; 2 bad usage.\n"
		"Documentation/kernel-module.rst describes the module.\n");
}

static void ctl_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ctl_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xrayfdr-ctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Why the module did not answer, in words a user can act on. */
static int open_module(const char *cmd, struct ctl_nl *nl)
{
	int err = ctl_nl_open(nl);

	if (!err)
		return 0;
	if (err == -ENOENT && access("/sys/module/xray_fdr", F_OK))
		ctl_error(
			cmd,
			"the xray_fdr module is not loaded (modprobe xray_fdr, or insmod xray_fdr.ko)");
	else if (err == -ENOENT)
		ctl_error(
			cmd,
			"xray_fdr is loaded but its netlink family '%s' is missing",
			XRAY_FDR_GENL_NAME);
	else
		ctl_error(cmd, "cannot open a generic netlink socket: %s",
			  strerror(-err));
	return EXIT_INVALID;
}

/* The kernel's refusal of a request about session @id, explained. */
static int refused(const char *cmd, const struct ctl_nl *nl, uint32_t id,
		   int err)
{
	const char *why;

	switch (err) {
	case -EPERM:
		why = id ? "permission denied: the session belongs to another user (needs CAP_SYS_ADMIN)" :
			   "permission denied: needs CAP_SYS_ADMIN";
		break;
	case -ENOENT:
		why = "no such session (see 'xrayfdr-ctl list')";
		break;
	case -ESRCH:
		why = "the session is retained: its process is gone (read it, then drop it)";
		break;
	case -ENODATA:
		why = "the session has no rings yet: its process has not set their geometry";
		break;
	case -EBUSY:
		why = !strcmp(cmd, "drop") ?
			      "the session is still open by its process; only retained sessions can be dropped" :
			      "another session already records this process";
		break;
	case -ENOSPC:
		why = "too many sessions are kept already (see max-retained and admin-reserve-retained in 'xrayfdr-ctl config')";
		break;
	case -EDQUOT:
		why = "the session's user has reached a per-user limit (see max-user-retained in 'xrayfdr-ctl config')";
		break;
	case -EMSGSIZE:
		/* status-get grows its answer up to a bound, a nest per user */
		why = "the module's answer did not fit in one message: more users hold sessions than it can list (/sys/kernel/xrayfdr/users has them all)";
		break;
	case -EBADMSG:
		why = "the module's answer could not be decoded (xrayfdr-ctl and xray_fdr.ko versions differ?)";
		break;
	default:
		why = strerror(-err);
		break;
	}
	if (id)
		fprintf(stderr, "xrayfdr-ctl %s: session %u: %s", cmd, id, why);
	else
		fprintf(stderr, "xrayfdr-ctl %s: %s", cmd, why);
	if (nl->errmsg[0])
		fprintf(stderr, " (kernel: %s)", nl->errmsg);
	fputc('\n', stderr);
	return EXIT_INVALID;
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static const char *json_bool(bool b)
{
	return b ? "true" : "false";
}

static const char *const state_names[] = {
	"configured", "enabled", "frozen", "keep", "retained", "readonly",
};

/* "configured,enabled": the set state flags, or "new". */
static void state_text(uint32_t state, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++) {
		if (state & (1u << i))
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "," : "", state_names[i]);
		if (used >= len)
			break;
	}
	if (!used)
		snprintf(buf, len, "new");
}

static void print_config(const struct ctl_config *c)
{
	if (json) {
		printf("{\"max_session_kb\":%u,\"max_total_kb\":%u,\"max_sessions\":%u,\"max_retained\":%u,"
		       "\"max_user_sessions\":%u,\"max_user_kb\":%u,\"max_user_retained\":%u,"
		       "\"admin_reserve_sessions\":%u,\"admin_reserve_kb\":%u,",
		       c->max_session_kb, c->max_total_kb, c->max_sessions,
		       c->max_retained, c->max_user_sessions, c->max_user_kb,
		       c->max_user_retained, c->admin_reserve_sessions,
		       c->admin_reserve_kb);
		if (c->has_retained_limits)
			printf("\"admin_reserve_retained\":%u,\"retained_max_age\":%u,",
			       c->admin_reserve_retained, c->retained_max_age);
		printf("\"sched_records\":%s}", json_bool(c->sched_records));
		return;
	}
	printf("limits      %u KiB per session, %u KiB in all, %u sessions, %u kept\n"
	       "per user    %u KiB, %u sessions, %u kept (CAP_SYS_ADMIN exempt)\n",
	       c->max_session_kb, c->max_total_kb, c->max_sessions,
	       c->max_retained, c->max_user_kb, c->max_user_sessions,
	       c->max_user_retained);
	if (c->has_retained_limits)
		printf("reserve     %u KiB, %u sessions, %u kept for CAP_SYS_ADMIN only\n",
		       c->admin_reserve_kb, c->admin_reserve_sessions,
		       c->admin_reserve_retained);
	else
		printf("reserve     %u KiB, %u sessions for CAP_SYS_ADMIN only\n",
		       c->admin_reserve_kb, c->admin_reserve_sessions);
	if (c->has_retained_limits && c->retained_max_age)
		printf("expiry      a user's retained session is freed %u s after its process went (CAP_SYS_ADMIN's are kept)\n",
		       c->retained_max_age);
	else if (c->has_retained_limits)
		printf("expiry      none: retained sessions stay until dropped\n");
	printf("scheduler   records %s\n", c->sched_records ? "on" : "off");
}

/* What each user's sessions hold: a table, or the JSON members "users" and
 * "users_omitted". */
static void print_users(const struct ctl_status *st)
{
	uint32_t i;

	if (json) {
		printf("\"users\":[");
		for (i = 0; i < st->nr_users; i++)
			printf("%s{\"uid\":%u,\"sessions\":%u,\"retained\":%u,\"bytes\":%llu}",
			       i ? "," : "", st->users[i].uid,
			       st->users[i].sessions, st->users[i].retained,
			       (unsigned long long)st->users[i].bytes);
		printf("],\"users_omitted\":%u", st->users_omitted);
		return;
	}
	if (!st->nr_users) {
		/* the kernel shows the unprivileged their own entry only */
		printf("users       %s\n",
		       st->sessions + st->sessions_retained ?
			       "none of yours with sessions (CAP_SYS_ADMIN sees every user's)" :
			       "none with sessions");
		return;
	}
	printf("users       %-10s %8s %6s %12s\n", "UID", "SESSIONS", "KEPT",
	       "MEMORY");
	for (i = 0; i < st->nr_users; i++)
		printf("            %-10u %8u %6u %8llu KiB\n",
		       st->users[i].uid, st->users[i].sessions,
		       st->users[i].retained,
		       (unsigned long long)(st->users[i].bytes / 1024 +
					    !!(st->users[i].bytes % 1024)));
	if (st->users_omitted)
		printf("            and %u more users, not shown\n",
		       st->users_omitted);
}

static int cmd_status(int argc, char **argv)
{
	struct ctl_status st;
	struct ctl_nl nl;
	uint32_t f;
	int err;

	(void)argv;
	if (argc > 1) {
		ctl_error("status", "takes no arguments");
		return EXIT_USAGE;
	}
	if (open_module("status", &nl))
		return EXIT_INVALID;
	err = ctl_get_status(&nl, &st);
	ctl_nl_close(&nl);
	if (err)
		return refused("status", &nl, 0, err);
	f = st.tsc_flags;
	if (json) {
		printf("{\"abi_version\":%u,\"nr_cpus\":%u,\"sessions\":%u,\"sessions_retained\":%u,"
		       "\"switch_records\":%llu,\"migration_records\":%llu,\"records_lost\":%llu,"
		       "\"bytes_allocated\":%llu,\"bytes_mapped\":%llu,",
		       st.abi_version, st.nr_cpus, st.sessions,
		       st.sessions_retained,
		       (unsigned long long)st.switch_records,
		       (unsigned long long)st.migration_records,
		       (unsigned long long)st.records_lost,
		       (unsigned long long)st.bytes_allocated,
		       (unsigned long long)st.bytes_mapped);
		printf("\"tsc\":{\"khz\":%llu,\"constant\":%s,\"nonstop\":%s,\"reliable\":%s,\"clocksource\":%s,\"known_freq\":%s},\"config\":",
		       (unsigned long long)st.tsc_khz,
		       json_bool(f & XRAY_FDR_TSC_CONSTANT),
		       json_bool(f & XRAY_FDR_TSC_NONSTOP),
		       json_bool(f & XRAY_FDR_TSC_RELIABLE),
		       json_bool(f & XRAY_FDR_TSC_CLOCKSOURCE),
		       json_bool(f & XRAY_FDR_TSC_KNOWN_FREQ));
		print_config(&st.config);
		if (st.config.has_retained_limits)
			printf(",\"retained_expired\":%llu",
			       (unsigned long long)st.retained_expired);
		putchar(',');
		print_users(&st);
		printf("}\n");
		return EXIT_OK;
	}
	printf("module      xray_fdr ABI %u, %u CPU areas per session\n"
	       "sessions    %u open, %u retained",
	       st.abi_version, st.nr_cpus, st.sessions, st.sessions_retained);
	if (st.config.has_retained_limits)
		printf(", %llu freed at their maximum age",
		       (unsigned long long)st.retained_expired);
	printf("\n"
	       "records     %llu switches, %llu migrations, %llu lost\n"
	       "memory      %llu bytes allocated, %llu bytes mapped\n"
	       "TSC         %llu kHz; constant %s, nonstop %s, reliable %s, clocksource %s, known frequency %s\n",
	       (unsigned long long)st.switch_records,
	       (unsigned long long)st.migration_records,
	       (unsigned long long)st.records_lost,
	       (unsigned long long)st.bytes_allocated,
	       (unsigned long long)st.bytes_mapped,
	       (unsigned long long)st.tsc_khz,
	       yes_no(f & XRAY_FDR_TSC_CONSTANT),
	       yes_no(f & XRAY_FDR_TSC_NONSTOP),
	       yes_no(f & XRAY_FDR_TSC_RELIABLE),
	       yes_no(f & XRAY_FDR_TSC_CLOCKSOURCE),
	       yes_no(f & XRAY_FDR_TSC_KNOWN_FREQ));
	print_config(&st.config);
	print_users(&st);
	return EXIT_OK;
}

struct list_ctx {
	int count;
};

static int list_reply(void *p, struct nlattr **attrs)
{
	struct list_ctx *ctx = p;
	struct ctl_session s;
	char state[96];

	if (ctl_decode_session(attrs, &s))
		return -EBADMSG;
	state_text(s.state, state, sizeof(state));
	if (json) {
		printf("%s{\"id\":%u,\"pid\":%u,\"uid\":%u,\"comm\":",
		       ctx->count ? "," : "", s.id, s.owner_pid, s.owner_uid);
		json_string(s.comm);
		printf(",\"state\":\"%s\",\"discard\":%s,\"subbuf_size\":%u,\"subbuf_count\":%u,"
		       "\"nr_cpus\":%u,\"bytes\":%llu,\"switch_records\":%llu,"
		       "\"migration_records\":%llu,\"records_lost\":%llu}",
		       state, json_bool(s.geom_flags & XRAY_FDR_GEOM_DISCARD),
		       s.subbuf_size, s.subbuf_count, s.nr_cpus,
		       (unsigned long long)s.bytes,
		       (unsigned long long)s.switch_records,
		       (unsigned long long)s.migration_records,
		       (unsigned long long)s.records_lost);
	} else {
		if (!ctx->count)
			printf("%6s %7s %6s %-16s %-26s %12s %10s %10s %6s %6s\n",
			       "ID", "PID", "UID", "COMMAND", "STATE", "RINGS",
			       "BYTES", "SWITCHES", "MIGR", "LOST");
		printf("%6u %7u %6u %-16s %-26s %5ux%-6u %10llu %10llu %6llu %6llu\n",
		       s.id, s.owner_pid, s.owner_uid, s.comm, state,
		       s.subbuf_count, s.subbuf_size,
		       (unsigned long long)s.bytes,
		       (unsigned long long)s.switch_records,
		       (unsigned long long)s.migration_records,
		       (unsigned long long)s.records_lost);
	}
	ctx->count++;
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	struct list_ctx ctx = { 0 };
	struct ctl_nl nl;
	struct nl_msg *msg;
	int err;

	(void)argv;
	if (argc > 1) {
		ctl_error("list", "takes no arguments");
		return EXIT_USAGE;
	}
	if (open_module("list", &nl))
		return EXIT_INVALID;
	msg = ctl_nl_msg(&nl, XRAY_FDR_CMD_SESSION_GET, NLM_F_DUMP);
	if (json)
		printf("{\"sessions\":[");
	err = msg ? ctl_nl_call(&nl, msg, XRAY_FDR_A_SESSION_MAX, list_reply,
				&ctx) :
		    -ENOMEM;
	ctl_nl_close(&nl);
	if (json)
		printf("]}\n");
	else if (!err && !ctx.count)
		printf("no sessions\n");
	return err ? refused("list", &nl, 0, err) : EXIT_OK;
}

static int parse_id(const char *cmd, const char *arg, uint32_t *id)
{
	uint64_t v;

	if (parse_uint(arg, 1, UINT32_MAX, &v)) {
		ctl_error(cmd, "'%s' is not a session id (a number from 1)",
			  arg ? arg : "");
		return EXIT_USAGE;
	}
	*id = v;
	return 0;
}

/* start, stop, freeze, keep, drop: one session, one request. */
static int cmd_session(int argc, char **argv)
{
	static const struct {
		const char *name;
		int cmd;
		const char *done;
	} acts[] = {
		{ "start", XRAY_FDR_CMD_SESSION_START, "recording" },
		{ "stop", XRAY_FDR_CMD_SESSION_STOP, "stopped" },
		{ "freeze", XRAY_FDR_CMD_SESSION_FREEZE, "frozen" },
		{ "keep", XRAY_FDR_CMD_SESSION_KEEP, NULL },
		{ "drop", XRAY_FDR_CMD_SESSION_DROP, "dropped" },
	};
	const char *name = argv[0];
	struct ctl_nl nl;
	int keep = 1, err;
	uint32_t id;
	size_t i;

	for (i = 0; strcmp(acts[i].name, name); i++)
		;
	if (argc < 2 ||
	    argc > (acts[i].cmd == XRAY_FDR_CMD_SESSION_KEEP ? 3 : 2)) {
		ctl_error(name, "usage: xrayfdr-ctl %s ID%s", name,
			  acts[i].cmd == XRAY_FDR_CMD_SESSION_KEEP ?
				  " [on|off]" :
				  "");
		return EXIT_USAGE;
	}
	if (parse_id(name, argv[1], &id))
		return EXIT_USAGE;
	if (argc == 3) {
		if (!strcmp(argv[2], "on")) {
			keep = 1;
		} else if (!strcmp(argv[2], "off")) {
			keep = 0;
		} else {
			ctl_error(name, "'%s' is neither on nor off", argv[2]);
			return EXIT_USAGE;
		}
	}
	if (open_module(name, &nl))
		return EXIT_INVALID;
	err = ctl_nl_session_cmd(
		&nl, acts[i].cmd, id,
		acts[i].cmd == XRAY_FDR_CMD_SESSION_KEEP ? keep : -1);
	ctl_nl_close(&nl);
	if (err)
		return refused(name, &nl, id, err);
	if (json)
		printf("{\"session\":%u,\"%s\":%s}\n", id, name,
		       acts[i].done || keep ? "true" : "false");
	else
		printf("session %u: %s\n", id,
		       acts[i].done ? acts[i].done :
		       keep	    ? "kept after its process exits" :
				      "freed when its process exits");
	return EXIT_OK;
}

/*
 * dump ID -o FILE [--force] [--drop]: a kept session's rings as a log;
 * snapshot ID -o FILE [--force]: a live one's, copied as its process goes
 * on writing.
 */
static int cmd_session_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "drop", no_argument, NULL, 'd' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct xrayfdr_trace_stats st = { .sz = sizeof(st) };
	XRAYFDR_OPTS(xrayfdr_dump_opts, dopts, .stats = &st);
	const char *cmd = argv[0], *output = NULL;
	bool snapshot = !strcmp(cmd, "snapshot"), drop = false;
	const char *usage_line =
		snapshot ?
			"usage: xrayfdr-ctl snapshot ID -o FILE [--force]" :
			"usage: xrayfdr-ctl dump ID -o FILE [--force] [--drop]";
	char why[64], cut[32] = "", lost[LOSSES_TEXT_MAX];
	struct ctl_nl nl;
	uint32_t id;
	int opt, err;

	optind = 0; /* a fresh scan: main() parsed with "+" */
	while ((opt = getopt_long(argc, argv, "o:f", opts, NULL)) != -1) {
		if (opt == 'o') {
			output = optarg;
		} else if (opt == 'f') {
			dopts.overwrite = true;
		} else if (opt == 'd' && !snapshot) {
			drop = true;
		} else {
			ctl_error(cmd, "%s", usage_line);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !output) {
		ctl_error(cmd, "%s", usage_line);
		return EXIT_USAGE;
	}
	if (parse_id(cmd, argv[optind], &id))
		return EXIT_USAGE;
	if (snapshot) {
		snprintf(why, sizeof(why), "request(pid=%ld,uid=%ld)",
			 (long)getpid(), (long)geteuid());
		dopts.snapshot = why;
	}
	err = xrayfdr_session_dump(id, output, &dopts);
	if (err) {
		ctl_error(cmd, "session %u: no log written (%s)", id,
			  err == -EEXIST ? "FILE exists; --force replaces it" :
					   strerror(-err));
		return EXIT_INVALID;
	}
	if (drop) {
		if (open_module(cmd, &nl))
			return EXIT_INVALID;
		err = ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP, id,
					 -1);
		ctl_nl_close(&nl);
		if (err)
			return refused(cmd, &nl, id, err);
	}
	/* (a snapshot's summary says what it cut; any summary, what the
	 * kernel lost and what was damaged) */
	if (snapshot)
		snprintf(cut, sizeof(cut), ", %llu cut",
			 (unsigned long long)st.cut);
	losses_text(lost, st.kernel_lost, st.damaged);
	if (json)
		printf("{\"session\":%u,\"log\":\"%s\",\"events\":%llu,"
		       "\"overwritten\":%llu,\"dropped\":%llu,\"buffers\":%llu,"
		       "\"cut\":%llu,\"kernel_lost\":%llu,\"damaged\":%llu,"
		       "\"dropped_session\":%s}\n",
		       id, output, (unsigned long long)st.events,
		       (unsigned long long)st.overwritten,
		       (unsigned long long)st.dropped,
		       (unsigned long long)st.buffers,
		       (unsigned long long)st.cut,
		       (unsigned long long)st.kernel_lost,
		       (unsigned long long)st.damaged, drop ? "true" : "false");
	else
		printf("session %u: wrote %llu events in %llu buffers to %s "
		       "(%llu overwritten, %llu dropped%s%s)%s\n",
		       id, (unsigned long long)st.events,
		       (unsigned long long)st.buffers, output,
		       (unsigned long long)st.overwritten,
		       (unsigned long long)st.dropped, cut, lost,
		       drop ? "; dropped it" : "");
	return EXIT_OK;
}

static int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-session-kb", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_SESSION_KB },
		{ "max-total-kb", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_TOTAL_KB },
		{ "max-sessions", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_SESSIONS },
		{ "max-retained", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_RETAINED },
		{ "max-user-sessions", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS },
		{ "max-user-kb", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_USER_KB },
		{ "max-user-retained", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_MAX_USER_RETAINED },
		{ "admin-reserve-sessions", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS },
		{ "admin-reserve-kb", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB },
		{ "admin-reserve-retained", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED },
		{ "retained-max-age", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE },
		{ "sched-records", required_argument, NULL,
		  XRAY_FDR_A_CONFIG_SCHED_RECORDS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t value[XRAY_FDR_A_CONFIG_MAX + 1];
	bool set[XRAY_FDR_A_CONFIG_MAX + 1] = { false }, any = false;
	struct ctl_status st;
	struct nl_msg *msg;
	struct ctl_nl nl;
	int opt, i, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_USAGE;
		if (opt == XRAY_FDR_A_CONFIG_SCHED_RECORDS) {
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				ctl_error(
					"config",
					"--sched-records takes on or off, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			value[opt] = !strcmp(optarg, "on");
		} else if (parse_uint(optarg, 0, UINT32_MAX, &value[opt])) {
			ctl_error("config", "--%s: '%s' is not a number",
				  option_name(opts, opt), optarg);
			return EXIT_USAGE;
		}
		set[opt] = any = true;
	}
	if (optind < argc) {
		ctl_error("config", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (open_module("config", &nl))
		return EXIT_INVALID;
	if (any) {
		msg = ctl_nl_msg(&nl, XRAY_FDR_CMD_CONFIG_SET, 0);
		for (i = 1; msg && i <= XRAY_FDR_A_CONFIG_MAX; i++) {
			if (!set[i])
				continue;
			if (i == XRAY_FDR_A_CONFIG_SCHED_RECORDS)
				err = nla_put_u8(msg, i, value[i]);
			else
				err = nla_put_u32(msg, i, value[i]);
			if (err < 0) {
				nlmsg_free(msg);
				msg = NULL;
			}
		}
		err = msg ? ctl_nl_call(&nl, msg, 0, NULL, NULL) : -ENOMEM;
		if (err == -ERANGE || err == -EINVAL) {
			ctl_nl_close(&nl);
			ctl_error("config", "a value is out of range%s%s%s",
				  nl.errmsg[0] ? " (kernel: " : "", nl.errmsg,
				  nl.errmsg[0] ? ")" : "");
			return EXIT_INVALID;
		}
		if (err) {
			ctl_nl_close(&nl);
			return refused("config", &nl, 0, err);
		}
	}
	err = ctl_get_status(&nl, &st);
	ctl_nl_close(&nl);
	if (err)
		return refused("config", &nl, 0, err);
	print_config(&st.config);
	if (json)
		putchar('\n');
	return EXIT_OK;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "status", cmd_status },     { "list", cmd_list },
	{ "start", cmd_session },     { "stop", cmd_session },
	{ "freeze", cmd_session },    { "keep", cmd_session },
	{ "drop", cmd_session },      { "config", cmd_config },
	{ "dump", cmd_session_dump }, { "snapshot", cmd_session_dump },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	size_t i;
	int opt;

	/* options before the command; the command parses the rest */
	while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("xrayfdr-ctl %s (netlink family %s version %d, ABI %d)\n",
			       XRAYFDR_VERSION, XRAY_FDR_GENL_NAME,
			       XRAY_FDR_GENL_VERSION, XRAY_FDR_ABI_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, argv[optind]))
			continue;
		if (argc > optind + 1 && (!strcmp(argv[optind + 1], "--help") ||
					  !strcmp(argv[optind + 1], "-h"))) {
			usage(stdout);
			return EXIT_OK;
		}
		return commands[i].run(argc - optind, argv + optind);
	}
	fprintf(stderr,
		"xrayfdr-ctl: '%s' is not a command; see 'xrayfdr-ctl --help'\n",
		argv[optind]);
	return EXIT_USAGE;
}
