// SPDX-License-Identifier: GPL-2.0-only
/*
 * What record and attach share (trace_opts.h): the trace's options as
 * the runtime takes them, and the check of the logs a trace left.
 */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>

#include "../lib/util/losses.h"
#include "../lib/util/outfile.h"
#include "analysis/engine/funcfilter.h"
#include "trace_opts.h"
#include "xrayfdr.h"

struct summary {
	uint64_t events, buffers, threads, overwritten, dropped, bytes;
	uint64_t kernel_lost, damaged, ring_bytes; /* CPU mode */
	uint64_t tsc_hz;
	char tsc_source[32];
	char mode[16]; /* thread or cpu */
	char rings[16]; /* cpu mode: module or own */
	bool have_info;
	bool basic; /* a basic-mode log (XRAY_OPTIONS=xray_mode=xray-basic) */
};

/* The value of "key=" in the info event's text, as a number. */
static uint64_t info_value(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen < len; i++) {
		if ((i == 0 || text[i - 1] == '\n') &&
		    !strncmp(text + i, key, klen) && text[i + klen] == '=')
			return strtoull(text + i + klen + 1, NULL, 10);
	}
	return 0;
}

/* The value of "key=" in the info event's text, as a string. */
static void info_string(const char *text, size_t len, const char *key,
			char *out, size_t size)
{
	size_t klen = strlen(key), n = 0;

	out[0] = '\0';
	for (size_t i = 0; i + klen < len; i++) {
		if ((i == 0 || text[i - 1] == '\n') &&
		    !strncmp(text + i, key, klen) && text[i + klen] == '=') {
			const char *v = text + i + klen + 1;

			while (n + 1 < size && v + n < text + len &&
			       v[n] != '\n') {
				out[n] = v[n];
				n++;
			}
			out[n] = '\0';
			return;
		}
	}
}

static void parse_info(const struct xrayfdr_event *ev, struct summary *s)
{
	static const char magic[] = "xrayfdr-info 1\n";
	const char *text = ev->data;

	if (ev->data_size < sizeof(magic) - 1 ||
	    memcmp(text, magic, sizeof(magic) - 1))
		return;
	s->have_info = true;
	s->overwritten = info_value(text, ev->data_size, "overwritten");
	s->dropped = info_value(text, ev->data_size, "dropped");
	s->kernel_lost = info_value(text, ev->data_size, "kernel_lost");
	s->damaged = info_value(text, ev->data_size, "damaged");
	s->ring_bytes = info_value(text, ev->data_size, "ring_bytes");
	s->tsc_hz = info_value(text, ev->data_size, "tsc_hz");
	info_string(text, ev->data_size, "tsc_source", s->tsc_source,
		    sizeof(s->tsc_source));
	info_string(text, ev->data_size, "mode", s->mode, sizeof(s->mode));
	info_string(text, ev->data_size, "rings", s->rings, sizeof(s->rings));
}

/* Read the whole log with the verifying reader. */
static int summarise(const char *path, struct summary *s, char *err,
		     size_t errlen)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, opts,
		     .flags = XRAYFDR_READ_NO_CALL_CHECK);
	struct xrayfdr_reader *r = xrayfdr_reader_open(path, &opts);
	const struct xrayfdr_event *ev;
	uint32_t tids[256];
	size_t ntids = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	if (!r) {
		ret = -errno;
		if (snprintf(err, errlen, "%s: %s", path, strerror(-ret)) < 0)
			err[0] = '\0';
		return ret;
	}
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1) {
		bool seen = false;

		if (ev->kind == XRAYFDR_EV_CUSTOM && ev->data_size > 12 &&
		    !memcmp(ev->data, "xrayfdr-info", 12)) {
			parse_info(ev, s);
			continue;
		}
		s->events++;
		for (size_t i = 0; i < ntids && !seen; i++)
			seen = tids[i] == ev->tid;
		if (!seen && ntids < sizeof(tids) / sizeof(tids[0]))
			tids[ntids++] = ev->tid;
	}
	if (ret < 0) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(r);

		snprintf(err, errlen, "%s", d ? d->message : strerror(-ret));
	} else {
		const struct xrayfdr_reader_stats *st = xrayfdr_reader_stats(r);

		const struct xrayfdr_file_header *h = NULL;

		s->basic = !xrayfdr_reader_header(r, &h) && h &&
			   h->type == XRAYFDR_FILE_BASIC;
		if (s->basic)
			s->tsc_hz = h->cycle_frequency;
		s->bytes = st->bytes;
		s->buffers = st->buffers - (s->have_info ? 1 : 0);
		s->threads = ntids;
	}
	xrayfdr_reader_free(r);
	return ret < 0 ? ret : 0;
}

bool trace_default_library(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return false;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = '\0';
	if (snprintf(out, size, "%s/../lib/%s", self, TRACE_LIBRARY) <
		    (int)size &&
	    access(out, R_OK) == 0)
		return true;
	/* An install whose library is not in ../lib (Debian's multiarch
	 * directory): where make install put it. */
	if (snprintf(out, size, "%s/%s", XRAYFDR_LIBDIR, TRACE_LIBRARY) >=
	    (int)size)
		return false;
	return access(out, R_OK) == 0;
}

/* Reserve xray-log.<program>.XXXXXX in the current directory. */
int trace_reserve_output(const char *prog, char *out, size_t size)
{
	const char *base = strrchr(prog, '/');
	int fd;

	snprintf(out, size, "xray-log.%s.XXXXXX", base ? base + 1 : prog);
	fd = mkstemp(out);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * Make sure the log @path can be written before the program runs: create
 * it, or empty the existing file (the log replaces it; an old one must not
 * be taken for what this run wrote) if it is a regular file of ours with
 * one link: under sudo, root must not write through a symlink or a hard
 * link a user planted (out_create()).  Return 0 or a negative errno.
 */
int trace_check_output(const char *path)
{
	int fd = out_create(path, 0644, OUT_REPLACE);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* "5us", "2ms", "1s", "7" (microseconds) into *@us, up to a minute. */
bool trace_parse_duration(const char *text, uint64_t *us)
{
	uint64_t ns;

	if (parse_time_ns(text, 1000, &ns) || ns > 60000000000ull)
		return false;
	*us = (ns + 999) / 1000;
	return true;
}

/*
 * Check --trigger's @spec (FUNC>TIME or signal=SIG; the runtime checks the
 * signal's name) and add it to the lines in *@triggers.
 */
bool trace_add_trigger(const char *cmd, char **triggers, const char *spec)
{
	const char *gt = strrchr(spec, '>');
	char pattern[PATH_MAX], *check = NULL, *t;
	uint64_t ns;
	bool ok;

	if (strpbrk(spec, "\"\n")) {
		tool_error(cmd, "--trigger '%s': no '\"' or newline, please",
			   spec);
		return false;
	}
	if (!strncmp(spec, "signal=", 7)) {
		ok = spec[7] != '\0';
	} else {
		/* the runtime's durations: a whole number and a unit */
		const char *unit = gt ? gt + 1 + strspn(gt + 1, "0123456789") :
					NULL;

		ok = gt && gt != spec &&
		     (size_t)(gt - spec) < sizeof(pattern) && unit > gt + 1 &&
		     (!strcmp(unit, "ns") || !strcmp(unit, "us") ||
		      !strcmp(unit, "ms") || !strcmp(unit, "s")) &&
		     !parse_time_ns(gt + 1, 0, &ns) && ns;
		if (ok) {
			snprintf(pattern, sizeof(pattern), "%.*s",
				 (int)(gt - spec), spec);
			if (!filter_add_rule(cmd, &check, '+', pattern))
				return false;
			free(check);
		}
	}
	if (!ok) {
		tool_error(
			cmd,
			"--trigger wants FUNC>TIME ('slow_*>2ms': a whole number of ns, us, ms or s) or signal=SIG (signal=USR2), not '%s'",
			spec);
		return false;
	}
	if (asprintf(&t, "%s%s%s", *triggers ? *triggers : "",
		     *triggers ? "\n" : "", spec) < 0) {
		tool_error(cmd, "out of memory");
		return false;
	}
	free(*triggers);
	*triggers = t;
	return true;
}

/*
 * Where the snapshots of --trigger go, as an absolute path (the program
 * may change its directory): --snapshot-dir, or the log's directory.
 * Return 0 or an exit status, having said why.
 */
int trace_snapshot_dir(const char *cmd, struct trace_opts *o,
		       const char *output, char *dir, size_t size)
{
	char parent[PATH_MAX], *slash;
	const char *want = o->snapshot_dir;

	if (!want) {
		snprintf(parent, sizeof(parent), "%s", output);
		slash = strrchr(parent, '/');
		if (slash)
			*(slash == parent ? slash + 1 : slash) = '\0';
		want = slash ? parent : ".";
	}
	if (!realpath(want, dir) || access(dir, W_OK | X_OK)) {
		tool_error(cmd, "--snapshot-dir %s: %s", want, strerror(errno));
		return EXIT_USAGE;
	}
	if (strchr(dir, '"') || strlen(dir) + 64 >= size) {
		tool_error(cmd, "--snapshot-dir %s: cannot be passed on", dir);
		return EXIT_USAGE;
	}
	o->snapshot_dir = dir;
	return 0;
}

/* The snapshots process @pid of @program took, each checked as a log. */
void trace_report_snapshots(const char *cmd, const char *dir,
			    const char *program, pid_t pid, bool quiet,
			    enum verify verify, unsigned int *bad)
{
	const char *base = strrchr(program, '/');
	char pattern[PATH_MAX + 64];
	uint64_t events;
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/%s.%ld.*.xray", dir,
		 base ? base + 1 : program, (long)pid);
	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		*bad += trace_report(cmd, g.gl_pathv[i], quiet, verify,
				     &events) != 0;
	if (!quiet)
		fprintf(stderr, "xrayfdr %s: %zu snapshot%s in %s\n", cmd,
			g.gl_pathc, g.gl_pathc == 1 ? "" : "s", dir);
	globfree(&g);
}

/*
 * Check and summarise one log (or only say its size, as @verify has it).
 * Return 0, -ENOENT if there is none (or it is empty), or another negative
 * errno if it is not valid.  *@events: the events of a checked log,
 * UINT64_MAX if it was not checked.
 */
int trace_report(const char *cmd, const char *path, bool quiet,
		 enum verify verify, uint64_t *events)
{
	struct summary s;
	char err[1024];
	struct stat st;
	int ret;

	*events = UINT64_MAX;
	if (stat(path, &st) || !st.st_size)
		return -ENOENT;
	if (verify == VERIFY_NEVER ||
	    (verify == VERIFY_SMALL && (uint64_t)st.st_size > VERIFY_LIMIT)) {
		if (!quiet)
			fprintf(stderr,
				"xrayfdr %s: %s: %.1f %s written, not checked (%s; xrayfdr dump --verify --quiet %s checks it)\n",
				cmd, path,
				(double)st.st_size / (st.st_size < (1 << 20) ?
							      1024 :
							      1 << 20),
				st.st_size < (1 << 20) ? "KiB" : "MiB",
				verify == VERIFY_NEVER ?
					"--no-verify" :
					"over 256 MiB: --verify checks it here",
				path);
		return 0;
	}
	ret = summarise(path, &s, err, sizeof(err));
	if (ret == -ENOENT || (!ret && !s.bytes))
		return -ENOENT;
	if (ret) {
		tool_error(cmd, "%s is not a valid log: %s", path, err);
		return ret;
	}
	*events = s.events;
	if (!quiet && s.basic) {
		fprintf(stderr,
			"xrayfdr %s: %s: %" PRIu64 " events from %" PRIu64
			" threads (LLVM's basic mode); TSC %.6f GHz\n",
			cmd, path, s.events, s.threads, (double)s.tsc_hz / 1e9);
	} else if (!quiet) {
		char per_cpu[48] = "", lost[LOSSES_TEXT_MAX];

		/* the most history a thread that keeps to one CPU has */
		if (s.ring_bytes)
			snprintf(per_cpu, sizeof(per_cpu), " of %.4g MiB a CPU",
				 (double)s.ring_bytes / (1 << 20));
		fprintf(stderr,
			"xrayfdr %s: %s: %" PRIu64 " events in %" PRIu64
			" buffers from %" PRIu64
			" threads (%s mode%s%s), %" PRIu64
			" overwritten, %" PRIu64
			" dropped%s; TSC %.6f GHz (%s)\n",
			cmd, path, s.events, s.buffers, s.threads,
			s.mode[0] ? s.mode : "unknown",
			!strcmp(s.rings, "module") ? ", the module's rings" :
			!strcmp(s.rings, "own") ? ", rings in process memory" :
						  "",
			per_cpu, s.overwritten, s.dropped,
			losses_text(lost, s.kernel_lost, s.damaged),
			(double)s.tsc_hz / 1e9,
			s.have_info ? s.tsc_source : "unknown");
	}
	return 0;
}

int trace_opt(const char *cmd, int opt, const char *arg,
	      const struct option *longopts, struct trace_opts *o)
{
	uint64_t *field = NULL, min = 0, max = UINT64_MAX;

	switch (opt) {
	case 'o':
		o->output = arg;
		return 1;
	case 'L':
		o->library = arg;
		return 1;
	case 'M':
		if (strcmp(arg, "auto") && strcmp(arg, "thread") &&
		    strcmp(arg, "cpu")) {
			tool_error(cmd,
				   "--mode wants auto, thread or cpu, not '%s'",
				   arg);
			return -1;
		}
		o->mode = arg;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	case 'Y':
		o->verify = VERIFY_ALWAYS;
		return 1;
	case 'U':
		o->verify = VERIFY_NEVER;
		return 1;
	case 'F':
	case 'N':
		return filter_add_rule(cmd, &o->filter, opt == 'F' ? '+' : '-',
				       arg) ?
			       1 :
			       -1;
	case 'D':
		if (!trace_parse_duration(arg, &o->threshold_us)) {
			tool_error(
				cmd,
				"--min-duration wants a time such as 5us, 2ms or 1s (up to 60s), not '%s'",
				arg);
			return -1;
		}
		return 1;
	case 0x300:
		return trace_add_trigger(cmd, &o->triggers, arg) ? 1 : -1;
	case 0x301:
	case 0x303:
		if (!trace_parse_duration(arg, opt == 0x301 ?
						       &o->post_us :
						       &o->interval_us)) {
			tool_error(
				cmd,
				"--%s wants a time such as 5us, 2ms or 1s, not '%s'",
				option_name(longopts, opt), arg);
			return -1;
		}
		return 1;
	case 0x304:
		o->snapshot_dir = arg;
		return 1;
	case 'K':
		o->keep = true;
		return 1;
	case 's':
		o->stream = true;
		return 1;
	case 't':
		field = &o->threshold_us;
		max = 60000000;
		break;
	case 'b':
		if (parse_size(arg, &o->buffer_size) || o->buffer_size < 256 ||
		    o->buffer_size > (64u << 20)) {
			tool_error(
				cmd,
				"--buffer-size wants a size from 256 to 64M, not '%s'",
				arg);
			return -1;
		}
		return 1;
	case 0x302:
		field = &o->max_snapshots;
		break;
	case 'd':
		field = &o->depth;
		min = 1;
		max = UINT32_MAX;
		break;
	case 'm':
		field = &o->buffer_max;
		min = 1;
		max = 1u << 20;
		break;
	case 'V':
		field = &o->version;
		min = 1;
		max = 5;
		break;
	default:
		return 0;
	}
	if (parse_uint(arg, min, max, field) ||
	    (opt == 'V' && *field != 1 && *field != 5)) {
		tool_error(cmd, "--%s: bad value '%s'",
			   option_name(longopts, opt), arg);
		return -1;
	}
	return 1;
}

int trace_opts_text(const char *cmd, const struct trace_opts *o,
		    const char *prefix, const char *output, long output_pid,
		    char *out, size_t size)
{
	int n;

	/* the runtime's own report is ours to print (verbosity=1 in the
	 * user's options brings it back) */
	n = snprintf(out, size, "verbosity=0 %s%soutput=\"%s\" output_pid=%ld",
		     prefix ? prefix : "", prefix ? " " : "", output,
		     output_pid);
#define OPT(field, name)                                                       \
	if (o->field && n > 0 && (size_t)n < size)                             \
		n += snprintf(out + n, size - (size_t)n, " " name "=%" PRIu64, \
			      o->field);
	OPT(threshold_us, "func_duration_threshold_us")
	OPT(buffer_size, "buffer_size")
	OPT(buffer_max, "buffer_max")
	OPT(version, "version")
	OPT(depth, "max_depth")
#undef OPT
	if (o->keep && n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " keep=true");
	if (o->stream && n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " stream=true");
	if (o->mode && n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n, " mode=%s", o->mode);
	for (const char *t = o->triggers;
	     t && *t && n > 0 && (size_t)n < size;) {
		const char *eol = strchr(t, '\n');
		int len = eol ? (int)(eol - t) : (int)strlen(t);

		n += snprintf(out + n, size - (size_t)n, " trigger=\"%.*s\"",
			      len, t);
		t = eol ? eol + 1 : NULL;
	}
	if (o->triggers && n > 0 && (size_t)n < size)
		n += snprintf(out + n, size - (size_t)n,
			      " post=%" PRIu64 "us snapshot_interval=%" PRIu64
			      "us max_snapshots=%" PRIu64
			      " snapshot_dir=\"%s\"",
			      o->post_us, o->interval_us, o->max_snapshots,
			      o->snapshot_dir);
	if (n < 0 || (size_t)n >= size) {
		tool_error(cmd, "the options are too long");
		return -1;
	}
	return 0;
}
