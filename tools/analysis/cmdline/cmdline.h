/* SPDX-License-Identifier: GPL-2.0-only */
/* The command-line options every analysis command shares. */
#ifndef XRAYFDR_TOOLS_CMDLINE_H
#define XRAYFDR_TOOLS_CMDLINE_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../engine/replay.h"
#include "../input/log_objects.h"
#include "../input/source.h"

#define DEFAULT_SORT_MEMORY (256ull << 20)

struct analysis_opts {
	const char *cmd;
	const char *instr_map;
	char *log_map; /* instr_map when the log named it (owned) */
	/* the log's shared objects found as recorded, by object index
	 * (owned; [0] unused) */
	char *log_objects[LOG_OBJECTS_MAX];
	bool no_build_id_check; /* -m: use it whatever its build id */
	const char *output;
	uint64_t sort_memory;
	struct trace_opts in;
	/* the commands on the replay driver: --tid, --time-range, and -F
	 * and -N as rules ("+PATTERN" and "-PATTERN" lines) */
	uint32_t *tids;
	size_t ntids;
	struct replay_range range;
	char *filter;
	uint64_t min_ns; /* --min-duration; 0: none */
	/* --around-trigger: the range around what fired (trigger), this
	 * long either side */
	bool around;
	uint64_t around_ns;
	struct log_trigger trigger;
};

/* getopt_long entries for them (-m, -k, -o, -q, -h and long ones). */
#define ANALYSIS_LONGOPTS                                           \
	{ "instr-map", required_argument, NULL, 'm' },              \
		{ "instr_map", required_argument, NULL, 'm' },      \
		{ "keep-going", no_argument, NULL, 'k' },           \
		{ "output", required_argument, NULL, 'o' },         \
		{ "sort-memory", required_argument, NULL, 0x100 },  \
		{ "input-format", required_argument, NULL, 0x101 }, \
		{ "quiet", no_argument, NULL, 'q' },                \
		{ "no-build-id-check", no_argument, NULL, 0x105 },  \
	{                                                           \
		"help", no_argument, NULL, 'h'                      \
	}
#define ANALYSIS_SHORTOPTS "m:ko:qh"

/* What the commands on the replay driver add (replay.h): threads, a
 * time range, function filters and a minimum duration. */
#define REPLAY_LONGOPTS                                               \
	{ "tid", required_argument, NULL, 0x102 },                    \
		{ "time-range", required_argument, NULL, 0x103 },     \
		{ "filter", required_argument, NULL, 'F' },           \
		{ "min-duration", required_argument, NULL, 0x104 },   \
		{ "around-trigger", optional_argument, NULL, 0x106 }, \
	{                                                             \
		"notrace", required_argument, NULL, 'N'               \
	}
#define REPLAY_SHORTOPTS "F:N:"
void analysis_opts_init(struct analysis_opts *o, const char *cmd);
void analysis_opts_free(struct analysis_opts *o);

/* Handle @opt if it is a shared option: 0, or -1 after reporting a bad
 * value or (for an option that is not one) printing @usage to stderr. */
int analysis_option(struct analysis_opts *o, int opt, const char *arg,
		    void (*usage)(FILE *out));

/*
 * The binary whose symbols name @log_path's functions.  Without -m: the
 * program the log's info event names, if it is at that path with the
 * build id the log gives (a warning if it changed).  With an ELF -m: an
 * error if the log's objects have build ids and none is -m's (unless
 * --no-build-id-check), a warning if -m has none.  With --around-trigger,
 * the time range around what fired, from the info event too.  0, or -1
 * after saying why.
 */
int analysis_find_map(struct analysis_opts *o, const char *log_path);

/*
 * The symbols of the functions: -m's or the log's program
 * (analysis_find_map()), and the log's shared objects found where they
 * were recorded with the same build id.  NULL with a message in @err.
 */
struct symbols;
struct symbols *analysis_symbols_open(const struct analysis_opts *o,
				      bool demangle, char *err, size_t errlen);

/* --around-trigger's line: what fired, @name its function's name (or
 * NULL). */
void analysis_say_trigger(FILE *out, const struct log_trigger *t,
			  const char *name);

/* --jobs: one thread per CPU, up to 2. */
unsigned int analysis_default_jobs(void);
/* --jobs's value into *@jobs: 0, or -1 after saying what is wrong. */
int analysis_jobs(const char *cmd, const char *arg, unsigned int *jobs);
/* Whether @jobs workers may share @path out under the shared options
 * (none that follows the log whole in order: filters, --keep-going). */
bool analysis_shareable(const struct analysis_opts *o, const char *path,
			unsigned int jobs);
/* After a try at sharing @path out, @alone: 0 done, 1 one reader is to
 * read it, -ENOMEM (said here).  With XRAYFDR_DEBUG=jobs, say which way
 * it went, for the tests.  Return @alone. */
int analysis_shared_done(const char *cmd, const char *path, int alone);

/* Standard output for NULL or "-", else @path created; NULL after
 * reporting why. */
FILE *analysis_open_output(const struct analysis_opts *o);

/* Flush and close what analysis_open_output() opened.  Return @status,
 * or EXIT_USAGE after reporting a write error. */
int analysis_close_output(const struct analysis_opts *o, FILE *out, int status);

#endif
