// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr record: run a program built with clang -fxray-instrument under
 * libxrayfdr (preloaded), then check the log it wrote and summarise it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>

#include "../lib/util/outfile.h"
#include "../lib/xray/instr_map.h"
#include "analysis/engine/funcfilter.h"
#include "xrayfdr.h"

#define LIBRARY "libxrayfdr.so.0"

static void record_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr record [OPTIONS] [--] PROGRAM [ARGS...]\n"
		"\n"
		"Run PROGRAM with every XRay sled patched by libxrayfdr and write a flight\n"
		"data recorder log (XRay FDR, version 5 unless asked otherwise) when it\n"
		"exits, is interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT) or crashes.\n"
		"Each thread records into buffers of --buffer-size bytes taken from a queue\n"
		"of --buffer-max; when they run out, the oldest full buffer is reused, so\n"
		"the log keeps the newest events and counts the ones it lost.\n"
		"\n"
		"PROGRAM must be compiled with clang -fxray-instrument and linked without\n"
		"LLVM's XRay runtime (clang -fxray-instrument -fnoxray-link-deps); one\n"
		"that uses __xray_customevent or __xray_typedevent links with -lxrayfdr.\n"
		"Documentation/runtime.rst explains both, and static linking.\n"
		"\n"
		"Options:\n"
		"  -o, --output=FILE        the log (default: xray-log.PROGRAM.XXXXXX here);\n"
		"                           child processes that trace write FILE.PID\n"
		"  -F, --filter=PATTERN     trace only the functions PATTERN names: a glob,\n"
		"                           or /regex/, on the symbol's name as written,\n"
		"                           demangled, or demangled without parameters;\n"
		"                           PATTERN@OBJECT limits it to the file whose base\n"
		"                           name the glob OBJECT matches (repeatable)\n"
		"  -N, --notrace=PATTERN    do not trace what PATTERN names (repeatable);\n"
		"                           the others keep their sleds untouched, so they\n"
		"                           cost nothing\n"
		"  -t, --threshold-us=N     leave out calls shorter than N microseconds, as\n"
		"                           LLVM's func_duration_threshold_us (default 0: all)\n"
		"      --min-duration=TIME  the same with a unit: 5us, 2ms, 1s (default us)\n"
		"      --depth=N            record only calls at most N levels deep in each\n"
		"                           thread (its outermost traced call is level 1);\n"
		"                           every call then takes the slower C path\n"
		"  -b, --buffer-size=SIZE   bytes per buffer, suffixes K, M (default 64K)\n"
		"  -m, --buffer-max=N       buffers in the queue (default 256)\n"
		"  -V, --fdr-version=N      log format version: 5 (default) or 1\n"
		"  -M, --mode=MODE          where records go: thread (a queue of buffers\n"
		"                           taken by threads), cpu (a ring per CPU, of\n"
		"                           the kernel module or the runtime's own), or\n"
		"                           auto (default: cpu with the module, else thread)\n"
		"  -s, --stream             write every record while PROGRAM runs, not\n"
		"                           the newest window at its end: a thread that\n"
		"                           finds the buffers (or its CPU's ring) full\n"
		"                           waits for the writer; memory stays\n"
		"                           buffer-size times buffer-max\n"
		"  -K, --keep               the module keeps the rings if PROGRAM dies,\n"
		"                           however it dies (SIGKILL too): the runtime says\n"
		"                           which session; xrayfdr-ctl dump ID -o FILE\n"
		"                           writes its log (CPU mode, with the module)\n"
		"      --trigger=SPEC       take a snapshot of the trace while PROGRAM runs\n"
		"                           when SPEC happens: FUNC>TIME (a call of a\n"
		"                           function PATTERN FUNC names lasted longer than\n"
		"                           TIME, e.g. 'handle_*>2ms') or signal=SIG (the\n"
		"                           process got SIG, e.g. signal=USR2); repeatable\n"
		"      --post=TIME          go on recording TIME after a trigger before the\n"
		"                           snapshot, so what followed is in it (default 0)\n"
		"      --max-snapshots=N    at most N snapshots (default 0: no limit)\n"
		"      --snapshot-interval=TIME  at least TIME between two snapshots\n"
		"      --snapshot-dir=DIR   where snapshots go (default: the log's directory),\n"
		"                           named PROGRAM.PID.N.TRIGGER.DATE-TIME.xray\n"
		"  -L, --library=PATH       the libxrayfdr.so to preload (default: the one\n"
		"                           installed next to this xrayfdr, ../lib/%s,\n"
		"                           else the one in make install's LIBDIR)\n"
		"      --verify             check the whole log after the run, however\n"
		"                           large (default: logs up to 256 MiB)\n"
		"      --no-verify          do not check the log: say only its size\n"
		"  -q, --quiet              print nothing unless something goes wrong\n"
		"  -h, --help               show this help\n"
		"\n"
		"XRAYFDR_OPTIONS, XRAY_OPTIONS and XRAY_FDR_OPTIONS in the environment\n"
		"apply too; these options win over them.  -F and -N become XRAYFDR_FILTER,\n"
		"which a program linked with libxrayfdr may be given directly\n"
		"(Documentation/runtime.rst, \"Filters\").  The queue takes --buffer-size\n"
		"times --buffer-max bytes of address space, touched as it fills.\n"
		"\n"
		"Examples:\n"
		"  xrayfdr record ./server --port 8080     # ^C when done\n"
		"  xrayfdr record -o run.xray -m 1024 ./batch   # keep the last 64 MiB\n"
		"  llvm-xray account -instr_map=./batch run.xray\n"
		"\n"
		"Before PROGRAM starts, the log's file is created (or emptied, if it\n"
		"exists) to be sure it can be written.  Exit status: PROGRAM's own, or 128 + N if\n"
		"signal N ended it (also when it left no log); 1 if it exited with 0 but\n"
		"left no log or an invalid one, or -F selected no function that ran; 2 for a bad command line or a log that\n"
		"cannot be written; 126 if PROGRAM is not executable; 127 if there is no\n"
		"such program or it could not be started.\n",
		LIBRARY);
}

struct summary {
	uint64_t events, buffers, threads, overwritten, dropped, bytes;
	uint64_t kernel_lost, damaged; /* CPU mode */
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

/* Does @path define @sym (in .symtab or .dynsym)? */
static bool defines(Elf *elf, const char *sym)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize;
		     i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(data, (int)i, &s) ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && !strcmp(name, sym))
				return true;
		}
	}
	return false;
}

enum runtime_kind { RUNTIME_NONE, RUNTIME_OURS, RUNTIME_LLVM };

static enum runtime_kind linked_runtime(const char *path)
{
	enum runtime_kind kind = RUNTIME_NONE;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return kind;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kind;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && defines(elf, "xrayfdr_trace_start"))
		kind = RUNTIME_OURS;
	else if (elf && defines(elf, "__xray_FunctionEntry"))
		kind = RUNTIME_LLVM;
	if (elf)
		elf_end(elf);
	close(fd);
	return kind;
}

/* Is @path a file we may execute?  0, or the errno that says why not. */
static int executable(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	return access(path, X_OK) ? errno : 0;
}

/*
 * PROGRAM as execvp() would find it, into @out.  Return 0, ENOENT if
 * there is none, or why the one found cannot be executed.
 */
static int find_program(const char *prog, char *out, size_t size)
{
	const char *path = getenv("PATH");
	int first = ENOENT;

	if (strchr(prog, '/')) {
		snprintf(out, size, "%s", prog);
		return executable(out);
	}
	while (path && *path) {
		const char *end = strchrnul(path, ':');
		int why;

		snprintf(out, size, "%.*s%s%s", (int)(end - path), path,
			 end == path ? "." : "", "/");
		strncat(out, prog, size - strlen(out) - 1);
		why = executable(out);
		if (!why)
			return 0;
		if (why != ENOENT && first == ENOENT)
			first = why; /* found, but not runnable: say so */
		path = *end ? end + 1 : end;
	}
	return first;
}

static bool default_library(char *out, size_t size)
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
	if (snprintf(out, size, "%s/../lib/%s", self, LIBRARY) < (int)size &&
	    access(out, R_OK) == 0)
		return true;
	/* An install whose library is not in ../lib (Debian's multiarch
	 * directory): where make install put it. */
	if (snprintf(out, size, "%s/%s", XRAYFDR_LIBDIR, LIBRARY) >= (int)size)
		return false;
	return access(out, R_OK) == 0;
}

/* Reserve xray-log.<program>.XXXXXX in the current directory. */
static int reserve_output(const char *prog, char *out, size_t size)
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
static int check_output(const char *path)
{
	int fd = out_create(path, 0644, OUT_REPLACE);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* "SIGKILL" for 9. */
static const char *signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

static int append_env(const char *name, const char *value, char sep)
{
	const char *old = getenv(name);
	char *buf;
	int ret;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&buf, "%s%c%s", value, sep, old) < 0)
		return -1;
	ret = setenv(name, buf, 1);
	free(buf);
	return ret;
}

/* "5us", "2ms", "1s", "7" (microseconds) into *@us, up to a minute. */
static bool parse_duration(const char *text, uint64_t *us)
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
static bool add_trigger(char **triggers, const char *spec)
{
	const char *gt = strrchr(spec, '>');
	char pattern[PATH_MAX], *check = NULL, *t;
	uint64_t ns;
	bool ok;

	if (strpbrk(spec, "\"\n")) {
		tool_error("record",
			   "--trigger '%s': no '\"' or newline, please", spec);
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
			if (!filter_add_rule("record", &check, '+', pattern))
				return false;
			free(check);
		}
	}
	if (!ok) {
		tool_error(
			"record",
			"--trigger wants FUNC>TIME ('slow_*>2ms': a whole number of ns, us, ms or s) or signal=SIG (signal=USR2), not '%s'",
			spec);
		return false;
	}
	if (asprintf(&t, "%s%s%s", *triggers ? *triggers : "",
		     *triggers ? "\n" : "", spec) < 0) {
		tool_error("record", "out of memory");
		return false;
	}
	free(*triggers);
	*triggers = t;
	return true;
}

enum verify { VERIFY_SMALL, VERIFY_ALWAYS, VERIFY_NEVER };
/* Above this, checking the log takes seconds: --verify asks for it. */
#define VERIFY_LIMIT (256ull << 20)

struct record_opts {
	char *filter; /* XRAYFDR_FILTER: "+PATTERN" and "-PATTERN" lines */
	const char *output;
	const char *library;
	const char *mode;
	bool keep, stream;
	uint64_t threshold_us, buffer_size, buffer_max, version, depth;
	bool quiet;
	enum verify verify;
	/* triggers: trigger= lines, and the snapshots' options */
	char *triggers;
	uint64_t post_us, interval_us, max_snapshots;
	const char *snapshot_dir;
};

static int report(const char *path, bool quiet, enum verify verify,
		  uint64_t *events);

/*
 * Where the snapshots of --trigger go, as an absolute path (the program
 * may change its directory): --snapshot-dir, or the log's directory.
 * Return 0 or an exit status, having said why.
 */
static int snapshot_dir(struct record_opts *o, const char *output, char *dir,
			size_t size)
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
		tool_error("record", "--snapshot-dir %s: %s", want,
			   strerror(errno));
		return EXIT_USAGE;
	}
	if (strchr(dir, '"') || strlen(dir) + 64 >= size) {
		tool_error("record", "--snapshot-dir %s: cannot be passed on",
			   dir);
		return EXIT_USAGE;
	}
	o->snapshot_dir = dir;
	return 0;
}

/* The snapshots process @pid of @program took, each checked as a log. */
static void report_snapshots(const char *dir, const char *program, pid_t pid,
			     bool quiet, enum verify verify, unsigned int *bad)
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
		*bad += report(g.gl_pathv[i], quiet, verify, &events) != 0;
	if (!quiet)
		fprintf(stderr, "xrayfdr record: %zu snapshot%s in %s\n",
			g.gl_pathc, g.gl_pathc == 1 ? "" : "s", dir);
	globfree(&g);
}
static void child(const struct record_opts *o, const char *output,
		  const char *library, char **argv)
{
	char opts[PATH_MAX + 256];
	const char *user = getenv("XRAYFDR_OPTIONS");
	int n;

	/* the runtime's own report is ours to print (verbosity=1 in the
	 * user's options brings it back) */
	n = snprintf(opts, sizeof(opts),
		     "verbosity=0 %s%soutput=\"%s\" output_pid=%ld",
		     user ? user : "", user ? " " : "", output, (long)getpid());
#define OPT(field, name)                                          \
	if (o->field && n > 0 && (size_t)n < sizeof(opts))        \
		n += snprintf(opts + n, sizeof(opts) - (size_t)n, \
			      " " name "=%" PRIu64, o->field);
	OPT(threshold_us, "func_duration_threshold_us")
	OPT(buffer_size, "buffer_size")
	OPT(buffer_max, "buffer_max")
	OPT(version, "version")
	OPT(depth, "max_depth")
#undef OPT
	if (o->keep && n > 0 && (size_t)n < sizeof(opts))
		n += snprintf(opts + n, sizeof(opts) - (size_t)n, " keep=true");
	if (o->stream && n > 0 && (size_t)n < sizeof(opts))
		n += snprintf(opts + n, sizeof(opts) - (size_t)n,
			      " stream=true");
	if (o->mode && n > 0 && (size_t)n < sizeof(opts))
		n += snprintf(opts + n, sizeof(opts) - (size_t)n, " mode=%s",
			      o->mode);
	for (const char *t = o->triggers;
	     t && *t && n > 0 && (size_t)n < sizeof(opts);) {
		const char *eol = strchr(t, '\n');
		int len = eol ? (int)(eol - t) : (int)strlen(t);

		n += snprintf(opts + n, sizeof(opts) - (size_t)n,
			      " trigger=\"%.*s\"", len, t);
		t = eol ? eol + 1 : NULL;
	}
	if (o->triggers && n > 0 && (size_t)n < sizeof(opts))
		n += snprintf(opts + n, sizeof(opts) - (size_t)n,
			      " post=%" PRIu64 "us snapshot_interval=%" PRIu64
			      "us max_snapshots=%" PRIu64
			      " snapshot_dir=\"%s\"",
			      o->post_us, o->interval_us, o->max_snapshots,
			      o->snapshot_dir);
	if (n < 0 || (size_t)n >= sizeof(opts)) {
		tool_error("record", "the options are too long");
		_exit(127);
	}
	if ((o->filter && setenv("XRAYFDR_FILTER", o->filter, 1)) ||
	    setenv("XRAYFDR_OPTIONS", opts, 1) ||
	    (library && append_env("LD_PRELOAD", library, ':'))) {
		tool_error("record", "cannot set the environment: %s",
			   strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	tool_error("record", "cannot run %s: %s", argv[0], strerror(errno));
	_exit(127);
}

/*
 * Check and summarise one log (or only say its size, as @verify has it).
 * Return 0, -ENOENT if there is none (or it is empty), or another negative
 * errno if it is not valid.  *@events: the events of a checked log,
 * UINT64_MAX if it was not checked.
 */
static int report(const char *path, bool quiet, enum verify verify,
		  uint64_t *events)
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
				"xrayfdr record: %s: %.1f %s written, not checked (%s; xrayfdr dump --verify --quiet %s checks it)\n",
				path,
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
		tool_error("record", "%s is not a valid log: %s", path, err);
		return ret;
	}
	*events = s.events;
	if (!quiet && s.basic) {
		fprintf(stderr,
			"xrayfdr record: %s: %" PRIu64 " events from %" PRIu64
			" threads (LLVM's basic mode); TSC %.6f GHz\n",
			path, s.events, s.threads, (double)s.tsc_hz / 1e9);
	} else if (!quiet) {
		fprintf(stderr,
			"xrayfdr record: %s: %" PRIu64 " events in %" PRIu64
			" buffers from %" PRIu64
			" threads (%s mode%s), %" PRIu64
			" overwritten, %" PRIu64 " dropped; TSC %.6f GHz (%s)",
			path, s.events, s.buffers, s.threads,
			s.mode[0] ? s.mode : "unknown",
			!strcmp(s.rings, "module") ? ", the module's rings" :
			!strcmp(s.rings, "own") ? ", rings in process memory" :
						  "",
			s.overwritten, s.dropped, (double)s.tsc_hz / 1e9,
			s.have_info ? s.tsc_source : "unknown");
		if (s.kernel_lost || s.damaged)
			fprintf(stderr,
				"; %" PRIu64 " scheduler records lost, %" PRIu64
				" damaged parts of the rings skipped",
				s.kernel_lost, s.damaged);
		fputc('\n', stderr);
	}
	return 0;
}

/* Report every PATH.PID written since @since; return how many there are,
 * count the invalid ones. */
static unsigned int report_children(const char *path, time_t since, bool quiet,
				    enum verify verify, unsigned int *bad)
{
	char pattern[PATH_MAX + 8];
	unsigned int n = 0;
	uint64_t events;
	glob_t g;

	*bad = 0;
	snprintf(pattern, sizeof(pattern), "%s.[0-9]*", path);
	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *suffix = g.gl_pathv[i] + strlen(path) + 1;

		struct stat st;

		if (strspn(suffix, "0123456789") != strlen(suffix) ||
		    stat(g.gl_pathv[i], &st) || st.st_mtime < since)
			continue;
		n++;
		*bad += report(g.gl_pathv[i], quiet, verify, &events) != 0;
	}
	globfree(&g);
	return n;
}

static int record_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "threshold-us", required_argument, NULL, 't' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "buffer-max", required_argument, NULL, 'm' },
		{ "fdr-version", required_argument, NULL, 'V' },
		{ "library", required_argument, NULL, 'L' },
		{ "mode", required_argument, NULL, 'M' },
		{ "keep", no_argument, NULL, 'K' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "filter", required_argument, NULL, 'F' },
		{ "notrace", required_argument, NULL, 'N' },
		{ "min-duration", required_argument, NULL, 'D' },
		{ "depth", required_argument, NULL, 'd' },
		{ "stream", no_argument, NULL, 's' },
		{ "verify", no_argument, NULL, 'Y' },
		{ "no-verify", no_argument, NULL, 'U' },
		{ "trigger", required_argument, NULL, 0x300 },
		{ "post", required_argument, NULL, 0x301 },
		{ "max-snapshots", required_argument, NULL, 0x302 },
		{ "snapshot-interval", required_argument, NULL, 0x303 },
		{ "snapshot-dir", required_argument, NULL, 0x304 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct record_opts o = { 0 };
	char prog[PATH_MAX], output[PATH_MAX], library[PATH_MAX], err[1024];
	char snapdir[PATH_MAX];
	char sig[32];
	unsigned int children, bad;
	uint64_t events;
	bool sleds;
	time_t started = time(NULL);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	const char *lib = NULL;
	struct xray_instr_map map;
	int opt, status, ret, code;
	pid_t pid;

	while ((opt = getopt_long(argc, argv, "+o:t:b:m:V:L:M:F:N:Ksqh",
				  longopts, NULL)) != -1) {
		uint64_t *field = NULL, min = 0, max = UINT64_MAX;

		switch (opt) {
		case 'o':
			o.output = optarg;
			continue;
		case 'L':
			o.library = optarg;
			continue;
		case 'M':
			if (strcmp(optarg, "auto") &&
			    strcmp(optarg, "thread") && strcmp(optarg, "cpu")) {
				tool_error(
					"record",
					"--mode wants auto, thread or cpu, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			o.mode = optarg;
			continue;
		case 'q':
			o.quiet = true;
			continue;
		case 'Y':
			o.verify = VERIFY_ALWAYS;
			continue;
		case 'U':
			o.verify = VERIFY_NEVER;
			continue;
		case 'F':
		case 'N':
			if (!filter_add_rule("record", &o.filter,
					     opt == 'F' ? '+' : '-', optarg))
				return EXIT_USAGE;
			continue;
		case 'D':
			if (!parse_duration(optarg, &o.threshold_us)) {
				tool_error(
					"record",
					"--min-duration wants a time such as 5us, 2ms or 1s (up to 60s), not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			continue;
		case 0x300:
			if (!add_trigger(&o.triggers, optarg))
				return EXIT_USAGE;
			continue;
		case 0x301:
		case 0x303:
			if (!parse_duration(optarg, opt == 0x301 ?
							    &o.post_us :
							    &o.interval_us)) {
				tool_error(
					"record",
					"--%s wants a time such as 5us, 2ms or 1s, not '%s'",
					option_name(longopts, opt), optarg);
				return EXIT_USAGE;
			}
			continue;
		case 0x304:
			o.snapshot_dir = optarg;
			continue;
		case 'K':
			o.keep = true;
			continue;
		case 's':
			o.stream = true;
			continue;
		case 'h':
			record_usage(stdout);
			return EXIT_OK;
		case 't':
			field = &o.threshold_us;
			max = 60000000;
			break;
		case 'b':
			if (parse_size(optarg, &o.buffer_size) ||
			    o.buffer_size < 256 ||
			    o.buffer_size > (64u << 20)) {
				tool_error(
					"record",
					"--buffer-size wants a size from 256 to 64M, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			continue;
		case 0x302:
			field = &o.max_snapshots;
			break;
		case 'd':
			field = &o.depth;
			min = 1;
			max = UINT32_MAX;
			break;
		case 'm':
			field = &o.buffer_max;
			min = 1;
			max = 1u << 20;
			break;
		case 'V':
			field = &o.version;
			min = 1;
			max = 5;
			break;
		default:
			record_usage(stderr);
			return EXIT_USAGE;
		}
		if (parse_uint(optarg, min, max, field) ||
		    (opt == 'V' && *field != 1 && *field != 5)) {
			tool_error("record", "--%s: bad value '%s'",
				   option_name(longopts, opt), optarg);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		tool_error("record", "no PROGRAM to run (see --help)");
		return EXIT_USAGE;
	}
	argv += optind;
	ret = find_program(argv[0], prog, sizeof(prog));
	if (ret == ENOENT) {
		tool_error("record", "%s: no such program", argv[0]);
		return 127;
	}
	if (ret) {
		tool_error("record", "%s: cannot be executed: %s", prog,
			   strerror(ret));
		return 126;
	}

	ret = xray_instr_map_load_elf(prog, &map, err, sizeof(err));
	sleds = ret != -ENOENT;
	if (ret == -ENOENT)
		tool_error(
			"record",
			"warning: %s has no XRay sleds and no GCC sites (built without clang -fxray-instrument or gcc -pg -mfentry -mnop-mcount -mrecord-mcount?); only its instrumented shared objects are traced",
			prog);
	if (!ret)
		xray_instr_map_free(&map);
	switch (linked_runtime(prog)) {
	case RUNTIME_OURS:
		break; /* it has libxrayfdr built in: no preload */
	case RUNTIME_LLVM:
		tool_error(
			"record",
			"warning: %s is linked with LLVM's XRay runtime: its custom and typed events go there and are not recorded; link with -fnoxray-link-deps",
			prog);
		/* fall through */
	case RUNTIME_NONE:
		if (o.library) {
			lib = o.library;
		} else if (getenv("XRAYFDR_LIBRARY")) {
			lib = getenv("XRAYFDR_LIBRARY");
		} else if (default_library(library, sizeof(library))) {
			lib = library;
		} else {
			tool_error(
				"record",
				"cannot find %s next to this program or in %s; give --library",
				LIBRARY, XRAYFDR_LIBDIR);
			return EXIT_USAGE;
		}
		if (access(lib, R_OK)) {
			tool_error("record", "--library %s: %s", lib,
				   strerror(errno));
			return EXIT_USAGE;
		}
		break;
	}

	if (o.output) {
		snprintf(output, sizeof(output), "%s", o.output);
	} else if ((ret = reserve_output(prog, output, sizeof(output)))) {
		tool_error("record", "cannot create a log here: %s",
			   strerror(-ret));
		return EXIT_USAGE;
	}
	if (strchr(output, '"')) {
		tool_error("record", "--output cannot contain '\"'");
		return EXIT_USAGE;
	}
	if (o.output && (ret = check_output(output))) {
		tool_error("record", "cannot write the log %s: %s", output,
			   out_create_reason(ret) ? out_create_reason(ret) :
						    strerror(-ret));
		return EXIT_USAGE;
	}

	if (o.triggers &&
	    (ret = snapshot_dir(&o, output, snapdir, sizeof(snapdir))))
		return ret;

	/* Like time(1): ^C goes to the program, which writes its log. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid < 0) {
		tool_error("record", "fork: %s", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		child(&o, output, lib, argv);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (WIFSIGNALED(status))
		code = 128 + WTERMSIG(status);
	else
		code = WEXITSTATUS(status);
	if (code == 127)
		return 127; /* the child said why */

	if (WIFSIGNALED(status))
		signal_name(WTERMSIG(status), sig, sizeof(sig));
	if (!o.quiet && WIFSIGNALED(status))
		fprintf(stderr, "xrayfdr record: %s was killed by %s%s\n",
			argv[0], sig,
			WTERMSIG(status) == SIGKILL && o.keep ?
				": with the kernel module in CPU mode its rings were kept (xrayfdr-ctl status)" :
				"");
	ret = report(output, o.quiet, o.verify, &events);
	/* what a SIGKILL, which no handler sees, left: said once the log
	 * is read, since --stream and CPU mode leave one */
	if (!o.quiet && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    !ret)
		fprintf(stderr,
			"xrayfdr record: %s: the records written before SIGKILL survived%s; those still in memory were lost\n",
			output,
			events == UINT64_MAX ? "" :
					       " (the events counted above)");
	/* -F that selected nothing: the runtime warned at the start; a log
	 * without a call is an error, not a quiet success */
	if (!ret && !events && o.filter &&
	    (o.filter[0] == '+' || strstr(o.filter, "\n+")) &&
	    !WIFSIGNALED(status)) {
		tool_error(
			"record",
			"%s has no calls: the -F rules selected no function that ran (xrayfdr extract -s -F PATTERN %s lists the functions they select)",
			output, prog);
		return code ? code : EXIT_INVALID;
	}
	if (ret == -ENOENT)
		unlink(output); /* the name we made, or emptied: no log */
	/* logs of the processes it started (fork, exec): FILE.PID */
	children = report_children(output, started, o.quiet, o.verify, &bad);
	if (o.triggers)
		report_snapshots(snapdir, argv[0], pid, o.quiet, o.verify,
				 &bad);
	if (ret == -ENOENT && !children) {
		if (WIFSIGNALED(status))
			tool_error(
				"record",
				"%s was killed by %s before it wrote its log %s%s",
				argv[0], sig, output,
				WTERMSIG(status) == SIGKILL && !o.keep ?
					" (a SIGKILL stops the flush at exit: --stream writes records as they come; CPU mode with --keep keeps the module's rings)" :
					"");
		else if (!sleds)
			tool_error(
				"record",
				"%s has no XRay sleds and no instrumented shared object of it wrote a log: nothing was recorded (build with clang -fxray-instrument or with the GCC flags of README; see --help)",
				argv[0]);
		else
			tool_error(
				"record",
				"%s left no log in %s (did it end with _exit(), or turn tracing off?)",
				argv[0], output);
	}
	if ((ret && ret != -ENOENT) || bad || (ret == -ENOENT && !children))
		return code ? code : EXIT_INVALID;
	return code;
}

const struct command cmd_record = {
	.name = "record",
	.summary = "run an instrumented program and record its FDR log",
	.run = record_run,
	.usage = record_usage,
};
