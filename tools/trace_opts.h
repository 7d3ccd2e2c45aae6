/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The options of a trace that xrayfdr record and xrayfdr attach share:
 * parsed from their command lines, passed to the runtime as
 * XRAYFDR_OPTIONS' text, and the check of the logs the trace left.
 */
#ifndef XRAYFDR_TOOLS_TRACE_OPTS_H
#define XRAYFDR_TOOLS_TRACE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TRACE_LIBRARY "libxrayfdr.so.0"

enum verify { VERIFY_SMALL, VERIFY_ALWAYS, VERIFY_NEVER };
/* Above this, checking the log takes seconds: --verify asks for it. */
#define VERIFY_LIMIT (256ull << 20)

struct trace_opts {
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

/* The long options trace_opt() takes (struct option entries). */
#define TRACE_LONGOPTS                                                   \
	{ "output", required_argument, NULL, 'o' },                      \
		{ "threshold-us", required_argument, NULL, 't' },        \
		{ "buffer-size", required_argument, NULL, 'b' },         \
		{ "buffer-max", required_argument, NULL, 'm' },          \
		{ "fdr-version", required_argument, NULL, 'V' },         \
		{ "library", required_argument, NULL, 'L' },             \
		{ "mode", required_argument, NULL, 'M' },                \
		{ "keep", no_argument, NULL, 'K' },                      \
		{ "quiet", no_argument, NULL, 'q' },                     \
		{ "filter", required_argument, NULL, 'F' },              \
		{ "notrace", required_argument, NULL, 'N' },             \
		{ "min-duration", required_argument, NULL, 'D' },        \
		{ "depth", required_argument, NULL, 'd' },               \
		{ "stream", no_argument, NULL, 's' },                    \
		{ "verify", no_argument, NULL, 'Y' },                    \
		{ "no-verify", no_argument, NULL, 'U' },                 \
		{ "trigger", required_argument, NULL, 0x300 },           \
		{ "post", required_argument, NULL, 0x301 },              \
		{ "max-snapshots", required_argument, NULL, 0x302 },     \
		{ "snapshot-interval", required_argument, NULL, 0x303 }, \
	{                                                                \
		"snapshot-dir", required_argument, NULL, 0x304           \
	}
/* Their short forms, for getopt_long(). */
#define TRACE_SHORTOPTS "o:t:b:m:V:L:M:F:N:Ksq"

/*
 * Take option @opt (getopt_long()'s value) with @arg into @o.  Return 1
 * if it is one of TRACE_LONGOPTS, 0 if not, -1 if its value is bad
 * (said, for @cmd).
 */
struct option;
int trace_opt(const char *cmd, int opt, const char *arg,
	      const struct option *longopts, struct trace_opts *o);

/*
 * @o as XRAYFDR_OPTIONS' text into @out, after @prefix (may be NULL):
 * the log @output, which belongs to process @output_pid.  0, or -1 if
 * it does not fit (said, for @cmd).
 */
int trace_opts_text(const char *cmd, const struct trace_opts *o,
		    const char *prefix, const char *output, long output_pid,
		    char *out, size_t size);

/* The libxrayfdr.so installed next to this program (../lib), else in
 * make install's LIBDIR, in @out. */
bool trace_default_library(char *out, size_t size);
/* Reserve xray-log.<program>.XXXXXX in the current directory. */
int trace_reserve_output(const char *prog, char *out, size_t size);
int trace_check_output(const char *path);
bool trace_parse_duration(const char *text, uint64_t *us);
bool trace_add_trigger(const char *cmd, char **triggers, const char *spec);
int trace_snapshot_dir(const char *cmd, struct trace_opts *o,
		       const char *output, char *dir, size_t size);
void trace_report_snapshots(const char *cmd, const char *dir,
			    const char *program, pid_t pid, bool quiet,
			    enum verify verify, unsigned int *bad);
int trace_report(const char *cmd, const char *path, bool quiet,
		 enum verify verify, uint64_t *events);

#endif
