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
#include "trace_opts.h"
#include "xrayfdr.h"

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
		"  -m, --buffer-max=N       buffers in the queue (default 256); CPU mode\n"
		"                           shares N out among the CPUs' rings, and by\n"
		"                           default gives each ring 256 (64 MiB in all at\n"
		"                           most), so one thread keeps what it keeps in\n"
		"                           thread mode; the summary says a ring's size\n"
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
		TRACE_LIBRARY);
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

static void child(const struct trace_opts *o, const char *output,
		  const char *library, char **argv)
{
	char opts[PATH_MAX + 4096];

	if (trace_opts_text("record", o, getenv("XRAYFDR_OPTIONS"), output,
			    (long)getpid(), opts, sizeof(opts)))
		_exit(127);
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
		*bad += trace_report("record", g.gl_pathv[i], quiet, verify,
				     &events) != 0;
	}
	globfree(&g);
	return n;
}

static int record_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		TRACE_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct trace_opts o = { 0 };
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

	while ((opt = getopt_long(argc, argv, "+" TRACE_SHORTOPTS "h", longopts,
				  NULL)) != -1) {
		int r = trace_opt("record", opt, optarg, longopts, &o);

		if (r < 0)
			return EXIT_USAGE;
		if (r)
			continue;
		if (opt == 'h') {
			record_usage(stdout);
			return EXIT_OK;
		}
		record_usage(stderr);
		return EXIT_USAGE;
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
		} else if (trace_default_library(library, sizeof(library))) {
			lib = library;
		} else {
			tool_error(
				"record",
				"cannot find %s next to this program or in %s; give --library",
				TRACE_LIBRARY, XRAYFDR_LIBDIR);
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
	} else if ((ret = trace_reserve_output(prog, output, sizeof(output)))) {
		tool_error("record", "cannot create a log here: %s",
			   strerror(-ret));
		return EXIT_USAGE;
	}
	if (strchr(output, '"')) {
		tool_error("record", "--output cannot contain '\"'");
		return EXIT_USAGE;
	}
	if (o.output && (ret = trace_check_output(output))) {
		tool_error("record", "cannot write the log %s: %s", output,
			   out_create_reason(ret) ? out_create_reason(ret) :
						    strerror(-ret));
		return EXIT_USAGE;
	}

	if (o.triggers && (ret = trace_snapshot_dir("record", &o, output,
						    snapdir, sizeof(snapdir))))
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
	ret = trace_report("record", output, o.quiet, o.verify, &events);
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
		trace_report_snapshots("record", snapdir, argv[0], pid, o.quiet,
				       o.verify, &bad);
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
