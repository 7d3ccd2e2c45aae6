// SPDX-License-Identifier: GPL-2.0-only
/* xrayfdr convert: a trace from one format into another. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cmdline/cmdline.h"
#include "analysis/output/perfetto.h"
#include "analysis/input/source.h"
#include "analysis/engine/stacks.h"
#include "analysis/input/symbols.h"
#include "analysis/output/writers.h"
#include "analysis/output/xray_yaml.h"
#include "xrayfdr.h"

enum out_format {
	OUT_YAML,
	OUT_TRACE_EVENT,
	OUT_PERFETTO,
	OUT_FOLDED,
	OUT_TRACELOG,
	OUT_FDR,
	OUT_RAW,
};

static const char *const out_names[] = {
	[OUT_YAML] = "yaml",	     [OUT_TRACE_EVENT] = "trace_event",
	[OUT_PERFETTO] = "perfetto", [OUT_FOLDED] = "folded",
	[OUT_TRACELOG] = "tracelog", [OUT_FDR] = "fdr",
	[OUT_RAW] = "raw",
};

static void convert_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr convert [OPTIONS] --output-format=FORMAT FILE\n"
		"\n"
		"Read a trace (an XRay FDR log of version 1 to 5, a basic-mode log,\n"
		"llvm-xray's YAML, or CoreProfiler TraceLog text; the format is\n"
		"recognised from the file) and write it in another format.  The input is\n"
		"read once, as a stream: memory does not grow with its size.\n"
		"\n"
		"Output formats (-f):\n"
		"  yaml         llvm-xray's YAML, record for record what 'llvm-xray convert\n"
		"               --output-format=yaml' writes for the same input: records\n"
		"               sorted by TSC (see --sort), with llvm-xray's values for\n"
		"               fields the log does not carry\n"
		"  trace_event  Chrome trace_event JSON (chrome://tracing, Perfetto): one\n"
		"               complete event ('X') per call, per thread, in microseconds\n"
		"  perfetto     Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):\n"
		"               a slice per call on a track per thread, function names\n"
		"               interned, off-CPU slices from scheduler events; timestamps\n"
		"               in nanoseconds (BOOTTIME) from the TSC and its frequency;\n"
		"               several times smaller than trace_event\n"
		"  folded       FlameGraph folded stacks, 'thread;f;g;h N' with N the\n"
		"               exclusive (self) time of the stack in TSC ticks\n"
		"  tracelog     CoreProfiler TraceLog text (instrumentation mode: a stack\n"
		"               sample per entry and exit, thread CPU time from scheduler\n"
		"               events); 'xrayfdr convert' reads it back\n"
		"  fdr          an XRay FDR log again (--fdr-version 1 or 5)\n"
		"  raw          an XRay basic-mode log (llvm-xray's 'raw'): 32 bytes a\n"
		"               record, arguments included; custom and typed events\n"
		"               have no place in it and are an error\n"
		"\n"
		"Options:\n"
		"  -f, --output-format=FORMAT  one of the above (required)\n"
		"  -o, --output=FILE      write to FILE ('-', the default: standard output)\n"
		"  -m, --instr-map=BINARY the binary that wrote the trace: function ids get\n"
		"                         names (with --symbolize for yaml)\n"
		"      --no-build-id-check\n"
		"                         use BINARY even if the log was\n"
		"                         recorded from another build\n"
		"  -y, --symbolize        yaml: write function names instead of ids in\n"
		"                         'function' (needs --instr-map, as llvm-xray)\n"
		"      --demangle         C++ names demangled (the default)\n"
		"      --no-demangle      keep C++ names mangled\n"
		"  -s, --sort             yaml: sort records by TSC as llvm-xray does (the\n"
		"                         default); records go through temporary files in\n"
		"                         $TMPDIR when they exceed --sort-memory\n"
		"      --no-sort          yaml: keep the file's order (no temporary files)\n"
		"      --sort-memory=SIZE RAM for sorting (default 256M; suffixes K, M, G)\n"
		"  -V, --fdr-version=N    fdr: version 1 or 5 (default 5)\n"
		"  -F, --filter=PATTERN   only the events of the calls of matching\n"
		"                         functions and of what they call (glob or\n"
		"                         /regex/; repeatable)\n"
		"  -N, --notrace=PATTERN  leave out the events of the calls of matching\n"
		"                         functions and of what they call\n"
		"      --tid=TID[,TID...] only the events of these threads\n"
		"      --time-range=START,END  only the events in this range (see\n"
		"                         'xrayfdr replay --help')\n"
		"      --around-trigger[=TIME]  in a snapshot a trigger took, only the\n"
		"                          events TIME (1ms) around the triggering call\n"
		"      --min-duration=TIME  trace_event, perfetto, tracelog, folded: only\n"
		"                         calls that lasted TIME or more (5us, 2ms, 1s; a\n"
		"                         bare number is microseconds); a call left out\n"
		"                         has its time in its caller's self time\n"
		"  -k, --keep-going       skip damaged parts of the input, say what was\n"
		"                         skipped, and exit 1 at the end\n"
		"      --input-format=F   xray, yaml or tracelog instead of recognising it\n"
		"                         (standard input, '-', is read as xray otherwise)\n"
		"  -q, --quiet            no progress line on a terminal, no closing\n"
		"                         count of the events (trace_event) or packets\n"
		"                         (perfetto) written\n"
		"  -h, --help             show this help\n"
		"\n"
		"Exit status: 0 done, 1 the input is invalid (also after --keep-going),\n"
		"2 usage or I/O error.\n");
}

struct convert_opts {
	struct analysis_opts a;
	struct event_filter filter; /* --tid, --time-range, -F, -N */
	enum out_format format;
	bool symbolize;
	bool demangle;
	bool sort;
	unsigned int fdr_version;
};

/* trace_next(), less the events @f drops. */
static int next_kept(struct trace *t, struct event_filter *f,
		     const struct xrayfdr_event **ev)
{
	int ret;

	while ((ret = trace_next(t, ev)) == 1) {
		int keep = f->active ? event_filter_check(f, *ev) : 1;

		if (keep)
			return keep;
	}
	return ret;
}

static int convert_yaml(struct trace *t, const struct trace_header *hdr,
			struct symbols *syms, FILE *out, struct convert_opts *o)
{
	struct xray_yaml_opts yo = { .out = out,
				     .hdr = hdr,
				     .syms = o->symbolize ? syms : NULL,
				     .sort = o->sort,
				     .memory = o->a.sort_memory };
	struct xray_yaml *y = xray_yaml_new(&yo);
	const struct xrayfdr_event *ev;
	int ret;

	if (!y) {
		tool_error("convert", "out of memory");
		return EXIT_USAGE;
	}
	while ((ret = next_kept(t, &o->filter, &ev)) == 1) {
		ret = xray_yaml_event(y, ev);
		if (ret)
			break;
	}
	if (ret < 0 && ret != -EBADMSG && *xray_yaml_error(y)) {
		tool_error("convert", "%s", xray_yaml_error(y));
		xray_yaml_free(y);
		return EXIT_USAGE;
	}
	if (ret == 0 || o->a.in.keep_going) {
		int fin = xray_yaml_finish(y);

		if (fin) {
			tool_error("convert", "%s", xray_yaml_error(y));
			xray_yaml_free(y);
			return EXIT_USAGE;
		}
	}
	xray_yaml_free(y);
	return trace_status(t, ret);
}

/* What a call-level writer's failure means, said once for all of them:
 * true if @ret is one (then the exit status is EXIT_USAGE). */
static bool calls_failed(int ret)
{
	if (ret != -E2BIG && ret != -ENOMEM && ret != -EINVAL)
		return false;
	tool_error("convert", "%s",
		   ret == -E2BIG  ? "a call stack deeper than the limit" :
		   ret == -EINVAL ? "a negative function id cannot be written" :
				    "out of memory");
	return true;
}

static void report_unmatched(uint64_t unmatched)
{
	if (unmatched)
		tool_error(
			"convert",
			"%" PRIu64
			" exits matched no entry on their thread's stack (left out)",
			unmatched);
}

/* A call-level writer: fed each event, or a run of one thread's calls. */
struct calls_sink {
	int (*event)(void *w, const struct xrayfdr_event *ev);
	int (*calls)(void *w, const struct xrayfdr_event *last,
		     const struct xrayfdr_call_event *calls, size_t n);
	void *w;
};

/* @t's events that @f keeps into @s, runs of calls a batch at a time: 0
 * at the end, else the first failure (the reader's, the filter's or the
 * writer's). */
static int feed_calls(struct trace *t, struct event_filter *f,
		      const struct calls_sink *s)
{
	struct xrayfdr_call_event batch[512];
	const struct xrayfdr_event *ev;
	bool started = false;
	int ret;

	for (;;) {
		/* batches only when no event is to be checked, and after the
		 * first event, which starts the writer's output */
		size_t n = 0;

		if (started && !f->active)
			n = trace_next_calls(
				t, batch, sizeof(batch) / sizeof(*batch), &ev);
		if (n) {
			ret = s->calls(s->w, ev, batch, n);
		} else {
			ret = next_kept(t, f, &ev);
			if (ret != 1)
				return ret;
			started = true;
			ret = s->event(s->w, ev);
		}
		if (ret)
			return ret;
	}
}

static int writer_event(void *w, const struct xrayfdr_event *ev)
{
	return call_writer_event(w, ev);
}

static int writer_calls(void *w, const struct xrayfdr_event *last,
			const struct xrayfdr_call_event *calls, size_t n)
{
	return call_writer_calls(w, last, calls, n);
}

static int perfetto_event(void *w, const struct xrayfdr_event *ev)
{
	return perfetto_writer_event(w, ev);
}

static int perfetto_calls(void *w, const struct xrayfdr_event *last,
			  const struct xrayfdr_call_event *calls, size_t n)
{
	return perfetto_writer_calls(w, last, calls, n);
}

/* @written: what the writer wrote, for the closing line (0: nothing to
 * say) */
static int convert_calls(struct trace *t, const struct trace_header *hdr,
			 struct symbols *syms, FILE *out,
			 enum call_writer_kind kind, struct event_filter *f,
			 uint64_t min_ticks, uint64_t *written)
{
	struct call_writer *w = call_writer_new(kind, out, hdr, syms);
	int ret;

	if (!w) {
		tool_error("convert", "out of memory");
		return EXIT_USAGE;
	}
	call_writer_min_duration(w, min_ticks);
	ret = feed_calls(t, f,
			 &(struct calls_sink){ .event = writer_event,
					       .calls = writer_calls,
					       .w = w });
	if (ret == 0 || ret == -EBADMSG)
		ret = call_writer_finish(w) ?: ret;
	if (calls_failed(ret)) {
		call_writer_free(w);
		return EXIT_USAGE;
	}
	report_unmatched(call_writer_unmatched(w));
	if (call_writer_clamped(w))
		tool_error(
			"convert",
			"warning: %" PRIu64
			" times do not fit TraceLog's 64-bit fields: written as the largest (or smallest) value",
			call_writer_clamped(w));
	*written = call_writer_records(w);
	call_writer_free(w);
	return trace_status(t, ret);
}

/* As convert_calls(), with Perfetto's writer; it stops at a write error,
 * which analysis_close_output() reports. */
static int convert_perfetto(struct trace *t, const struct trace_header *hdr,
			    struct symbols *syms, FILE *out,
			    struct event_filter *f, uint64_t min_ticks,
			    uint64_t *written)
{
	struct perfetto_writer *w = perfetto_writer_new(out, hdr, syms);
	int ret;

	if (!w) {
		tool_error("convert", "out of memory");
		return EXIT_USAGE;
	}
	perfetto_writer_min_duration(w, min_ticks);
	ret = feed_calls(t, f,
			 &(struct calls_sink){ .event = perfetto_event,
					       .calls = perfetto_calls,
					       .w = w });
	if (ret == 0 || ret == -EBADMSG)
		ret = perfetto_writer_finish(w) ?: ret;
	if (ret == -EIO || calls_failed(ret)) {
		perfetto_writer_free(w);
		return EXIT_USAGE;
	}
	report_unmatched(perfetto_writer_unmatched(w));
	*written = perfetto_writer_packets(w);
	perfetto_writer_free(w);
	return trace_status(t, ret);
}

static int write_fd(void *ctx, const void *data, size_t size)
{
	FILE *out = ctx;

	return fwrite(data, 1, size, out) == size ? 0 : -EIO;
}

/* Re-encode as FDR, or a basic-mode log, of @version through libxrayfdr's
 * writer. */
static int convert_fdr(struct trace *t, const struct trace_header *hdr,
		       struct event_filter *f, FILE *out, bool basic,
		       unsigned int version)
{
	XRAYFDR_OPTS(xrayfdr_writer_opts, wo, .version = version,
		     .basic = basic, .constant_tsc = hdr->constant_tsc,
		     .nonstop_tsc = hdr->nonstop_tsc,
		     .cycle_frequency = hdr->cycle_frequency);
	struct xrayfdr_writer *w = xrayfdr_writer_new(write_fd, out, &wo);
	const struct xrayfdr_event *ev;
	int ret;

	if (!w) {
		tool_error("convert", "cannot start the FDR writer: %s",
			   strerror(errno));
		return EXIT_USAGE;
	}
	while ((ret = next_kept(t, f, &ev)) == 1) {
		ret = xrayfdr_writer_event(w, ev);
		if (ret == -EOPNOTSUPP && basic) {
			tool_error(
				"convert",
				"the %s at offset %" PRIu64
				" cannot be written in a basic-mode log (use -f fdr)",
				xrayfdr_event_kind_name(ev->kind), ev->offset);
			xrayfdr_writer_close(w);
			return EXIT_INVALID;
		}
		if (ret == -EOPNOTSUPP) {
			tool_error(
				"convert",
				"the %s at offset %" PRIu64
				" cannot be written in FDR version %u (use --fdr-version 5)",
				xrayfdr_event_kind_name(ev->kind), ev->offset,
				version);
			xrayfdr_writer_close(w);
			return EXIT_INVALID;
		}
		if (ret) {
			tool_error("convert", "writing: %s", strerror(-ret));
			xrayfdr_writer_close(w);
			return EXIT_USAGE;
		}
	}
	if (xrayfdr_writer_close(w)) {
		tool_error("convert", "writing: %s", strerror(EIO));
		return EXIT_USAGE;
	}
	return trace_status(t, ret);
}

static int parse_options(int argc, char **argv, struct convert_opts *o)
{
	static const struct option longopts[] = {
		{ "output-format", required_argument, NULL, 'f' },
		{ "symbolize", no_argument, NULL, 'y' },
		{ "demangle", no_argument, NULL, 'M' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "sort", no_argument, NULL, 's' },
		{ "no-sort", no_argument, NULL, 'S' },
		{ "fdr-version", required_argument, NULL, 'V' },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	bool have_format = false;
	uint64_t v;
	int opt;

	if (llvm_style_options("convert", argc, argv, longopts))
		return EXIT_USAGE;
	while ((opt = getopt_long(argc, argv,
				  "f:ysV:" REPLAY_SHORTOPTS ANALYSIS_SHORTOPTS,
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			have_format = false;
			for (size_t i = 0;
			     i < sizeof(out_names) / sizeof(out_names[0]); i++)
				if (!strcmp(optarg, out_names[i])) {
					o->format = (enum out_format)i;
					have_format = true;
				}
			if (!have_format) {
				tool_error(
					"convert",
					"unknown output format '%s' (yaml, trace_event, perfetto, folded, tracelog, fdr, raw)",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'y':
			o->symbolize = true;
			break;
		case 'M': /* llvm-xray's, the default */
			o->demangle = true;
			break;
		case 'D':
			o->demangle = false;
			break;
		case 's':
			o->sort = true;
			break;
		case 'S':
			o->sort = false;
			break;
		case 'V':
			if (parse_uint(optarg, 1, 5, &v) ||
			    (v != 1 && v != 5)) {
				tool_error(
					"convert",
					"bad value '%s' for --fdr-version (1 or 5)",
					optarg);
				return EXIT_USAGE;
			}
			o->fdr_version = (unsigned int)v;
			break;
		case 'h':
			convert_usage(stdout);
			return EXIT_OK;
		default:
			if (analysis_option(&o->a, opt, optarg, convert_usage))
				return EXIT_USAGE;
		}
	}
	if (!have_format) {
		tool_error(
			"convert",
			"--output-format is required (yaml, trace_event, perfetto, folded, tracelog, fdr, raw)");
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		tool_error("convert", "expects exactly one FILE (see --help)");
		return EXIT_USAGE;
	}
	return -1;
}

static int convert_run(int argc, char **argv)
{
	struct convert_opts o = {
		.demangle = true,
		.sort = true,
		.fdr_version = 5,
	};
	const struct trace_header *hdr;
	struct symbols *syms = NULL;
	struct trace *t = NULL;
	const char *what = "";
	uint64_t written = 0, min_ticks = 0;
	uint32_t tid;
	FILE *out;
	char err[512];
	int status;

	analysis_opts_init(&o.a, "convert");
	status = parse_options(argc, argv, &o);
	if (status >= 0)
		return status;
	/* without a map, ids print as llvm-xray prints them: "#id" */
	if (analysis_find_map(&o.a, argv[optind])) {
		status = EXIT_USAGE;
		goto out;
	}
	syms = analysis_symbols_open(&o.a, o.demangle, err, sizeof(err));
	if (!syms) {
		tool_error("convert", "%s", err);
		return EXIT_USAGE;
	}
	t = trace_open(argv[optind], &o.a.in);
	if (!t) {
		status = EXIT_USAGE;
		goto out;
	}
	symbols_use_trace_names(syms, trace_function_name, t);
	if (trace_header(t, &hdr) < 0) {
		status = trace_status(t, -EBADMSG);
		goto out;
	}
	if (event_filter_init(&o.filter, &(struct event_filter_opts){
						 .cmd = "convert",
						 .tids = o.a.tids,
						 .ntids = o.a.ntids,
						 .range = o.a.range,
						 .filter = o.a.filter,
						 .names = syms,
						 .map_path = o.a.instr_map,
					 })) {
		status = EXIT_USAGE;
		goto out;
	}
	event_filter_input(&o.filter, argv[optind],
			   (double)hdr->cycle_frequency);
	if (o.a.min_ns && (o.format == OUT_YAML || o.format == OUT_FDR ||
			   o.format == OUT_RAW)) {
		tool_error(
			"convert",
			"--min-duration leaves out calls, which %s does not have: use trace_event, perfetto, tracelog or folded",
			out_names[o.format]);
		status = EXIT_USAGE;
		goto out;
	}
	/* folded output's driver says it itself */
	if (o.format != OUT_FOLDED)
		min_ticks = replay_min_ticks("convert", argv[optind],
					     o.a.min_ns, hdr->cycle_frequency);
	out = analysis_open_output(&o.a);
	if (!out) {
		status = EXIT_USAGE;
		goto out;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	switch (o.format) {
	case OUT_YAML:
		status = convert_yaml(t, hdr, syms, out, &o);
		break;
	case OUT_TRACE_EVENT:
		status = convert_calls(t, hdr, syms, out, WRITER_TRACE_EVENT,
				       &o.filter, min_ticks, &written);
		what = "trace events";
		break;
	case OUT_PERFETTO:
		status = convert_perfetto(t, hdr, syms, out, &o.filter,
					  min_ticks, &written);
		what = "trace packets";
		break;
	case OUT_TRACELOG:
		status = convert_calls(t, hdr, syms, out, WRITER_TRACELOG,
				       &o.filter, min_ticks, &written);
		break;
	case OUT_FOLDED:
		/* says what went wrong itself */
		status = stacks_write_folded(t, argv[optind], syms, out, &o.a);
		break;
	case OUT_FDR:
		status = convert_fdr(t, hdr, &o.filter, out, false,
				     o.fdr_version);
		break;
	case OUT_RAW:
		/* a basic log keeps its version, as llvm-xray's raw output;
		 * others get the writer's (which records process ids) */
		status = convert_fdr(t, hdr, &o.filter, out, true,
				     hdr->format == TRACE_XRAY && !hdr->type ?
					     hdr->version :
					     0);
		break;
	}
	if (status == EXIT_OK && o.format != OUT_FOLDED &&
	    event_filter_unseen_tid(&o.filter, &tid)) {
		tool_error("convert",
			   "%s: --tid %" PRIu32 ": no thread has that id",
			   argv[optind], tid);
		status = EXIT_USAGE;
	}
	status = analysis_close_output(&o.a, out, status);
	if (status == EXIT_OK && written && !o.a.in.quiet)
		tool_error("convert", "%" PRIu64 " %s written to %s", written,
			   what, o.a.output ? o.a.output : "standard output");
out:
	event_filter_free(&o.filter);
	trace_close(t);
	symbols_free(syms);
	analysis_opts_free(&o.a);
	return status;
}

const struct command cmd_convert = {
	.name = "convert",
	.summary =
		"convert a trace: llvm-xray YAML, trace_event, perfetto, folded, tracelog, FDR, raw",
	.run = convert_run,
	.usage = convert_usage,
};
