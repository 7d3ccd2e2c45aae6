/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the subcommands of the xrayfdr tool. */
#ifndef XRAYFDR_TOOLS_XRAYFDR_H
#define XRAYFDR_TOOLS_XRAYFDR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/cmdline/option_values.h"
#include "analysis/cmdline/report.h"

struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
};

extern const struct command cmd_account;
extern const struct command cmd_attach;
extern const struct command cmd_cflags;
extern const struct command cmd_convert;
extern const struct command cmd_detach;
extern const struct command cmd_dump;
extern const struct command cmd_fdr_dump;
extern const struct command cmd_extract;
extern const struct command cmd_graph;
extern const struct command cmd_record;
extern const struct command cmd_replay;
extern const struct command cmd_snapshot;
extern const struct command cmd_stack;
extern const struct command cmd_synth;

/*
 * llvm-xray takes long options after one dash as well as two
 * (-instr_map=BIN, -sort sum): rewrite each argument that is one dash and
 * exactly the name of one of @longopts (up to any '=') to two dashes, so
 * that getopt_long() reads it and llvm-xray's command lines run as they
 * are.  Anything else, clusters of short options included, is left as it
 * is.  Return 0, or -ENOMEM having said so for @cmd.
 */
struct option;
int llvm_style_options(const char *cmd, int argc, char **argv,
		       const struct option *longopts);

/* The long name of the option whose val is @val, for messages. */
const char *option_name(const struct option *opts, int val);

/* Print @len bytes as a C-like quoted string, at most @max bytes. */
void print_escaped(FILE *out, const void *data, size_t len, size_t max);
/* Print @len bytes as a JSON string of hex digits. */
void print_hex(FILE *out, const void *data, size_t len);

#endif
