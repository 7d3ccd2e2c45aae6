// SPDX-License-Identifier: GPL-2.0-only
/* xrayfdr: one command, many subcommands, as git or perf. */
#include <stdio.h>
#include <string.h>

#include <xrayfdr/common.h>

#include "xrayfdr.h"

static const struct command *const commands[] = {
	&cmd_account, &cmd_attach,   &cmd_cflags,   &cmd_convert, &cmd_detach,
	&cmd_dump,    &cmd_extract,  &cmd_fdr_dump, &cmd_graph,	  &cmd_record,
	&cmd_replay,  &cmd_snapshot, &cmd_stack,    &cmd_synth,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Flight-data-recorder function tracing for programs built with\n"
		"clang -fxray-instrument or with GCC's patchable nops (xrayfdr\n"
		"cflags), and analysis of XRay logs.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(out,
		"\n"
		"'xrayfdr COMMAND --help' or 'xrayfdr help COMMAND' describes a command.\n"
		"Documentation/ in the source tree describes the formats and the design.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("xrayfdr %s\n", xrayfdr_version_string());
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		cmd = find(argv[2]);
		if (!cmd) {
			fprintf(stderr, "xrayfdr: no command '%s'\n", argv[2]);
			return EXIT_USAGE;
		}
		cmd->usage(stdout);
		return EXIT_OK;
	}
	cmd = find(argv[1]);
	if (!cmd) {
		fprintf(stderr,
			"xrayfdr: '%s' is not a command; see 'xrayfdr --help'\n",
			argv[1]);
		return EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}
