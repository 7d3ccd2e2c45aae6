/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Runtime options, from the environment and from configuration strings.
 *
 * Three variables, read in this order (later ones win):
 *   XRAY_OPTIONS      LLVM's names: patch_premain, xray_mode,
 *                     xray_logfile_base, verbosity, ...
 *   XRAY_FDR_OPTIONS  LLVM's FDR names: buffer_size, buffer_max,
 *                     func_duration_threshold_us, grace_period_ms, ...
 *   XRAYFDR_OPTIONS   ours: all of the above plus output, version, ...
 * and __xray_log_init_mode()'s configuration string last.  The syntax is
 * LLVM's: name=value pairs separated by spaces, commas or colons; a value
 * may be quoted with ' or ".
 */
#ifndef XRAYFDR_LIB_RUNTIME_OPTIONS_H
#define XRAYFDR_LIB_RUNTIME_OPTIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_DEFAULT_BUFFER_SIZE (64u * 1024)
#define RT_DEFAULT_BUFFER_MAX 256u
/* CPU mode's default: the most all its rings take (the module's default
 * cap of a session, max_session_kb) */
#define RT_CPU_DEFAULT_BYTES (64ull << 20)
#define RT_MIN_BUFFER_SIZE 256u
#define RT_MAX_BUFFER_SIZE (64u << 20)
#define RT_MAX_BUFFER_MAX (1u << 20)

enum rt_fork_mode {
	RT_FORK_CLEAN, /* the child traces into its own log */
	RT_FORK_OFF, /* the child does not trace */
};

/* Where the records go (mode=). */
enum rt_record_mode {
	RT_MODE_AUTO, /* CPU rings of the module when it answers, else threads */
	RT_MODE_THREAD, /* per-thread buffers */
	RT_MODE_CPU, /* per-CPU rings: the module's, or the runtime's own */
};

/* TSC fact sources, in order of trust (tsc_sources=). */
enum rt_tsc_source {
	RT_TSC_SYSFS = 1u << 0,
	RT_TSC_PERF = 1u << 1,
	RT_TSC_CPUID = 1u << 2,
	RT_TSC_CALIBRATE = 1u << 3,
	RT_TSC_ALL = 0xfu,
};

struct rt_options {
	bool patch_premain;
	bool premain_set; /* patch_premain was given (else: the default) */
	bool ours_set; /* XRAYFDR_OPTIONS was set */
	char mode[32]; /* xray_mode */
	bool mode_set; /* xray_mode was given */
	/* buffer_max was given (else CPU mode sizes its rings per CPU) */
	bool buffer_max_set;
	char logfile_base[PATH_MAX];
	char output[PATH_MAX]; /* exact log path, "" for the default name */
	uint64_t output_pid; /* process the exact output path belongs to */
	uint64_t buffer_size;
	uint64_t buffer_max;
	uint64_t threshold_us; /* func_duration_threshold_us */
	uint64_t max_depth; /* levels of calls recorded; 0: all */
	/* LLVM's basic mode (basic.c): XRAY_BASIC_OPTIONS' names, or where it
	 * is empty, the xray_naive_log_* ones of XRAY_OPTIONS */
	bool naive_log; /* xray_naive_log: basic mode at start-up */
	bool basic_env; /* XRAY_BASIC_OPTIONS was set, not empty */
	uint64_t basic_threshold_us, basic_max_depth, basic_buffer;
	uint64_t naive_threshold_us, naive_max_depth, naive_buffer;
	uint64_t grace_period_ms;
	unsigned int version; /* FDR log version written: 1 or 5 */
	unsigned int verbosity;
	bool signals; /* flush on fatal signals, SIGINT and SIGTERM */
	bool no_file_flush;
	enum rt_fork_mode fork;
	enum rt_record_mode record_mode; /* mode= */
	char device[PATH_MAX]; /* the module's device (mode=cpu, auto) */
	bool discard; /* a full CPU ring drops new records */
	bool keep; /* the module keeps the rings if the process dies */
	bool stream; /* every record to the log as the program runs */
	bool control; /* the control channel (control.h): snapshots on request */
	char tsc_sysfs[PATH_MAX]; /* the module's sysfs directory */
	unsigned int tsc_sources; /* enum rt_tsc_source mask */
	/* the TSC's frequency, calibrated by whoever starts the trace on
	 * this machine (xrayfdr attach): used instead of calibrating here */
	uint64_t tsc_hz;
	/* triggers (trigger.h): one per line */
	char triggers[2048];
	uint64_t post_ns, snapshot_interval_ns, max_snapshots;
	char snapshot_dir[PATH_MAX];
};

/* Which names a string may use. */
enum rt_opt_origin {
	RT_OPT_XRAY, /* XRAY_OPTIONS */
	RT_OPT_FDR, /* XRAY_FDR_OPTIONS */
	RT_OPT_OURS, /* XRAYFDR_OPTIONS */
	RT_OPT_CONFIG, /* __xray_log_init() strings: FDR names and ours */
	RT_OPT_BASIC, /* XRAY_BASIC_OPTIONS, basic mode's init strings */
};

void rt_options_defaults(struct rt_options *o);

/*
 * Apply @text (@len bytes, or up to its NUL if @len is 0) to @o.  @name
 * names the source in messages.  Unknown names in LLVM's variables are
 * reported as warnings and ignored (they belong to LLVM modes we do not
 * implement); anything else wrong is an error.  Return 0, or -EINVAL with
 * the reason in @err ("XRAY_FDR_OPTIONS: buffer_size=abc: ...").
 */
int rt_options_parse(struct rt_options *o, const char *text, size_t len,
		     enum rt_opt_origin origin, const char *name, char *err,
		     size_t errlen);

/* A duration in @s (@len bytes): a number with ns, us, ms or s, into
 * nanoseconds.  0 or -EINVAL. */
int rt_parse_duration(const char *s, size_t len, uint64_t *ns);

/* Read the three variables into @o.  Return 0, or -EINVAL with @err. */
int rt_options_from_env(struct rt_options *o, char *err, size_t errlen);

/* Is FDR tracing requested by the environment alone (XRAYFDR_OPTIONS set
 * without patch_premain=false, or patch_premain=true with xray_mode)? */
bool rt_options_trace_at_start(const struct rt_options *o);
/*
 * Or only patching: patch_premain=true from XRAY_OPTIONS or the program's
 * __xray_default_options() with no xray_mode, which LLVM's runtime takes
 * as patch the sleds and record nothing (a handler the program sets with
 * __xray_set_handler() sees every call).
 */
bool rt_options_patch_only(const struct rt_options *o);

#endif
