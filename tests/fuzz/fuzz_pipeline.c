// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the analysis commands' whole pipelines, as a user
 * runs them: the input (an XRay log, llvm-xray YAML or TraceLog text; the
 * commands tell them apart) goes through account, stack, graph and every
 * convert format, and replay around a trigger; what convert -f fdr
 * writes goes through account again.  UBSan catches arithmetic that wraps on hostile times; a log our
 * own writer wrote must read back without an error.
 *
 * The commands run in this process (their run functions, as xrayfdr's
 * main calls them), their output to /dev/null and their messages to
 * /dev/null too, while the sanitizers report to the real stderr.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "../../tools/xrayfdr.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char in_path[64], fdr_path[64];
static int real_stderr = -1, devnull = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	(void)argc;
	(void)argv;
	snprintf(in_path, sizeof(in_path), "%s/fuzz-pipeline-XXXXXX",
		 tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	fd = mkstemp(in_path);
	if (fd < 0)
		abort();
	close(fd);
	snprintf(fdr_path, sizeof(fdr_path), "%s.fdr", in_path);
	real_stderr = dup(2);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (real_stderr < 0 || devnull < 0)
		abort();
	__sanitizer_set_report_fd((void *)(intptr_t)real_stderr);
	return 0;
}

/* Run @cmd with the arguments (NULL-terminated) in silence; its status. */
static int run(const struct command *cmd, ...)
{
	char *argv[16];
	int argc = 0, status;
	va_list ap;

	argv[argc++] = (char *)cmd->name;
	va_start(ap, cmd);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	optind = 0; /* getopt starts over */
	fflush(stderr);
	dup2(devnull, 2);
	status = cmd->run(argc, argv);
	fflush(stderr);
	dup2(real_stderr, 2);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const formats[] = { "yaml",	   "trace_event",
					       "perfetto", "tracelog",
					       "folded",   "raw" };
	FILE *f = fopen(in_path, "wb");
	int st;

	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	run(&cmd_account, "-q", "-j2", "-o", "/dev/null", in_path, NULL);
	run(&cmd_account, "-q", "-j1", "-k", "--sort=func", "-o", "/dev/null",
	    in_path, NULL);
	run(&cmd_stack, "-q", "-j2", "-o", "/dev/null", in_path, NULL);
	run(&cmd_stack, "-q", "-j1", "-f", "folded", "-o", "/dev/null", in_path,
	    NULL);
	run(&cmd_stack, "-q", "-j1", "-f", "svg", "-o", "/dev/null", in_path,
	    NULL);
	run(&cmd_graph, "-q", "-j2", "-e", "sum", "-o", "/dev/null", in_path,
	    NULL);
	run(&cmd_replay, "-q", "--no-pager", "--around-trigger", "-o",
	    "/dev/null", in_path, NULL);
	run(&cmd_account, "-q", "-j1", "--around-trigger=1s", "-o", "/dev/null",
	    in_path, NULL);
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		run(&cmd_convert, "-q", "-f", formats[i], "-o", "/dev/null",
		    in_path, NULL);
	unlink(fdr_path);
	st = run(&cmd_convert, "-q", "-f", "fdr", "-o", fdr_path, in_path,
		 NULL);
	if (st == EXIT_OK && run(&cmd_account, "-q", "-j1", "-o", "/dev/null",
				 fdr_path, NULL) == EXIT_INVALID) {
		/* our writer wrote what our reader refuses */
		dprintf(real_stderr,
			"convert -f fdr wrote a log account calls invalid\n");
		abort();
	}
	unlink(fdr_path);
	return 0;
}
