// SPDX-License-Identifier: GPL-2.0-only
/* xrayfdr cflags: the compiler flags that leave sites the runtime patches. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/cmdline/report.h"
#include "xrayfdr.h"

/* Compile and link flags per build kind (Documentation/runtime.rst,
 * "Programs built with GCC"). */
static const struct {
	const char *name, *cflags, *ldflags;
} recipes[] = {
	{ "clang", "-fxray-instrument -fnoxray-link-deps", "" },
	{ "gcc",
	  "-pg -mfentry -mnop-mcount -mrecord-mcount -minstrument-return=nop5 -mrecord-return -fno-pie",
	  "-no-pie" },
	{ "gcc-pic",
	  "-pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return -fPIC",
	  "-Wl,-z,notext" },
};

static void cflags_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr cflags [--gcc [--pic]] [--ldflags]\n"
		"\n"
		"Print the compiler flags that build a program the runtime can trace:\n"
		"clang's XRay sleds by default, GCC's patchable nops with --gcc.  Pass\n"
		"them when compiling every file to trace, e.g.\n"
		"  gcc -O2 $(xrayfdr cflags --gcc) -c prog.c\n"
		"  gcc prog.o $(xrayfdr cflags --gcc --ldflags) -o prog\n"
		"GCC needs non-PIE code for its entry nops; --pic gives the flags for\n"
		"shared objects and PIE (entries are then GOT calls to __fentry__ that\n"
		"the runtime rewrites; see Documentation/runtime.rst).  Link without\n"
		"-pg: with it GCC links gcrt1.o, whose profiler writes gmon.out.\n"
		"\n"
		"Options:\n"
		"      --gcc      flags for GCC (12 or later, x86-64)\n"
		"      --pic      with --gcc: for -fPIC code (shared objects, PIE)\n"
		"      --ldflags  the link flags instead (may be empty)\n"
		"  -h, --help     show this help\n"
		"\n"
		"Exit status: 0 done, 2 usage error.\n");
}

static int cflags_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "gcc", no_argument, NULL, 'g' },
		{ "pic", no_argument, NULL, 'p' },
		{ "ldflags", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool gcc = false, pic = false, ld = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			gcc = true;
			break;
		case 'p':
			pic = true;
			break;
		case 'l':
			ld = true;
			break;
		case 'h':
			cflags_usage(stdout);
			return EXIT_OK;
		default:
			cflags_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		tool_error("cflags", "takes no arguments (see --help)");
		return EXIT_USAGE;
	}
	if (pic && !gcc) {
		tool_error(
			"cflags",
			"--pic is for --gcc (clang's sleds need no flag for PIC)");
		return EXIT_USAGE;
	}
	opt = gcc ? 1 + pic : 0;
	printf("%s\n", ld ? recipes[opt].ldflags : recipes[opt].cflags);
	return EXIT_OK;
}

const struct command cmd_cflags = {
	.name = "cflags",
	.summary = "print the compiler flags for traceable builds",
	.run = cflags_run,
	.usage = cflags_usage,
};
