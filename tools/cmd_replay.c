// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr replay: a trace as indented call trees, one line per call (or
 * two, around its callees), as uftrace replay shows them.
 *
 * It streams: a line is written as soon as what it says is known, so
 * memory holds the open frames of each thread and no more.  A call's
 * entry line waits until the call either has something to show inside it
 * (then it opens with "{") or ends (then it is one line, "f();"), which
 * is also how --min-duration works: a call shorter than the limit has no
 * callee longer than it, and a call that is long enough has ancestors
 * that are too.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/filter/filter.h"
#include "../lib/util/u64map.h"
#include "analysis/cmdline/cmdline.h"
#include "analysis/engine/funcfilter.h"
#include "analysis/output/outbuf.h"
#include "analysis/engine/replay.h"
#include "analysis/input/log_objects.h"
#include "analysis/input/symbols.h"
#include "analysis/engine/ticks.h"
#include "xrayfdr.h"

static void replay_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr replay [OPTIONS] FILE\n"
		"\n"
		"Show a trace as call trees: a line per call, nested under its caller,\n"
		"with the time it began, its duration and its self time (the duration\n"
		"less that of its callees).  A call with callees shown opens with\n"
		"'f() {' and closes with '} /* f */', where its times are given.\n"
		"Custom, typed and scheduler events appear where they happened.\n"
		"Lines are written as calls end, so any trace size streams.\n"
		"\n"
		"On a terminal the output is coloured (durations of a millisecond and\n"
		"more in yellow, of a second and more in red) and goes through a pager\n"
		"($PAGER, else 'less -FRX'), as git does.\n"
		"\n"
		"Options:\n"
		"  -F, --filter=PATTERN   show only the calls of matching functions and\n"
		"                         what they call (repeatable)\n"
		"  -N, --notrace=PATTERN  hide matching functions and what they call;\n"
		"                         their time stays in their callers' self time\n"
		"                         PATTERN: a shell glob or /regex/ on the function\n"
		"                         name (demangled, with or without parameters),\n"
		"                         optionally ending in @OBJECT (see 'record -F')\n"
		"      --depth=N          show N levels of calls (counting shown ones)\n"
		"      --min-duration=TIME  hide calls shorter than TIME (5us, 2ms, 1s;\n"
		"                         a bare number is microseconds)\n"
		"      --tid=TID[,TID...] only these threads\n"
		"      --time-range=START,END  only events in this range: times with a\n"
		"                         unit (1.5ms, 2s) count from the first record;\n"
		"                         plain integers are TSC values; either end may\n"
		"                         be empty\n"
		"      --around-trigger[=TIME]  in a snapshot a trigger took, only the\n"
		"                         events from TIME before the triggering call\n"
		"                         began to TIME after it ended (default 1ms);\n"
		"                         a line above says what fired\n"
		"  -m, --instr-map=BINARY name functions from BINARY\n"
		"      --no-build-id-check\n"
		"                         use BINARY even if the log was\n"
		"                         recorded from another build\n"
		"  -o, --output=FILE      write to FILE (no pager, no colour)\n"
		"      --color=WHEN       auto (the default), always or never\n"
		"      --no-pager         write to standard output as it is\n"
		"  -k, --keep-going       skip damaged parts of the input, exit 1 at the end\n"
		"      --input-format=F   xray, yaml or tracelog instead of recognising it\n"
		"  -q, --quiet            no progress line on a terminal\n"
		"  -h, --help             show this help\n"
		"\n"
		"Calls a flight-recorder window caught in the middle, whose entries were\n"
		"overwritten, show their exit with '(entered before the trace)'; calls\n"
		"ended by an exception or longjmp through them show '(unwound)'; calls\n"
		"still running when the trace ends show '(still running)'.\n"
		"\n"
		"Exit status: 0 done, 1 the input is invalid, 2 usage or I/O error.\n");
}

/* struct call_frame.user: the frame's display state */
#define FR_SHOWN (1ull << 0) /* passes the filters other than duration */
#define FR_OPENED (1ull << 1) /* its "f() {" line is out */
#define FR_SELECTED (1ull << 2) /* it or a caller matched -F */
#define FR_LEFT_OUT (1ull << 3) /* it or a caller matched -N */
#define FR_LEVEL_SHIFT 32 /* shown callers above it */

struct view_thread {
	uint32_t opened; /* frames [0, opened) are open or not shown */
};

struct view {
	struct replay *replay;
	struct symbols *syms;
	struct fn_filter *rules; /* -F, -N, or NULL */
	struct func_filter filter; /* rules per function id */
	FILE *out;
	struct outbuf *ob; /* the lines go through it to out */
	bool color, pager_gone;
	uint32_t max_depth; /* 0: no limit */
	uint64_t min_ns;
	uint64_t before_window, unwound, still_running;
	char line[64];
};

static struct view_thread *vthread(struct call_thread *t)
{
	return t->user;
}

/* nanoseconds of @ticks, or the ticks when the trace has no frequency */
static uint64_t ns_of(const struct view *v, uint64_t ticks)
{
	uint64_t hz = (uint64_t)replay_input(v->replay)->freq;

	return hz ? ticks_to_ns(ticks, hz) : ticks;
}

static bool shorter_than_min(const struct view *v, uint64_t ticks)
{
	uint64_t hz = (uint64_t)replay_input(v->replay)->freq;

	return hz ? ticks_below_ns(ticks, hz, v->min_ns) : ticks < v->min_ns;
}

/* @value / 10^@decimals with all its decimals into @buf; the length */
static size_t fixed(char *buf, uint64_t value, unsigned int decimals)
{
	char tmp[32], *end = tmp + sizeof(tmp), *p = end;

	/* from the last digit back, so no reversing copy */
	for (unsigned int i = 0; i < decimals; i++, value /= 10)
		*--p = (char)('0' + value % 10);
	if (decimals)
		*--p = '.';
	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	memcpy(buf, p, (size_t)(end - p));
	return (size_t)(end - p);
}

static void put_right(struct outbuf *o, const char *text, size_t len,
		      size_t width)
{
	if (len < width)
		ob_fill(o, ' ', width - len);
	ob_write(o, text, len);
}

/* "   12.345 us" in a 13-column field (ticks, "tk", without a
 * frequency), coloured by size on a terminal; blank for no value. */
static void put_duration(struct view *v, bool have, uint64_t ticks)
{
	uint64_t ns = ns_of(v, ticks);
	char buf[40];
	size_t n;

	if (!have) {
		put_right(v->ob, "", 0, 13);
		return;
	}
	if (!replay_input(v->replay)->freq) {
		n = fixed(buf, ticks, 0);
		memcpy(buf + n, " tk", 3);
		put_right(v->ob, buf, n + 3, 13);
		return;
	}
	if (ns < 1000000) {
		n = fixed(buf, ns, 3);
		memcpy(buf + n, " us", 3);
	} else if (ns < 1000000000) {
		n = fixed(buf, (ns + 500) / 1000, 3);
		memcpy(buf + n, " ms", 3);
	} else {
		n = fixed(buf, (ns + 500000) / 1000000, 3);
		memcpy(buf + n, "  s", 3);
	}
	if (v->color && ns >= 1000000)
		ob_str(v->ob, ns >= 1000000000 ? "\033[31m" : "\033[33m");
	put_right(v->ob, buf, n + 3, 13);
	if (v->color && ns >= 1000000)
		ob_str(v->ob, "\033[0m");
}

/* The time of @tsc from the input's first record, in seconds. */
static void put_time(struct view *v, uint64_t tsc)
{
	const struct replay_input *in = replay_input(v->replay);
	bool before = tsc < in->first_tsc;
	uint64_t d = before ? in->first_tsc - tsc : tsc - in->first_tsc;
	char buf[32];

	ob_char(v->ob, before ? '-' : ' ');
	put_right(v->ob, buf, fixed(buf, ns_of(v, d), in->freq ? 9 : 0), 15);
}

static void print_prefix(struct view *v, const struct call_thread *t,
			 bool has_time, uint64_t tsc, bool has_dur,
			 uint64_t dur, uint64_t self, uint32_t level)
{
	char buf[16];

	if (has_time)
		put_time(v, tsc);
	else
		put_right(v->ob, "", 0, 16);
	ob_char(v->ob, ' ');
	put_duration(v, has_dur, dur);
	ob_char(v->ob, ' ');
	put_duration(v, has_dur, self);
	ob_str(v->ob, " [");
	put_right(v->ob, buf, fixed(buf, t->tid, 0), 7);
	ob_str(v->ob, "] | ");
	ob_fill(v->ob, ' ', 2 * (size_t)level);
}

static uint32_t level_of(uint64_t user)
{
	return (uint32_t)(user >> FR_LEVEL_SHIFT);
}

static const char *name_of(struct view *v, int32_t id)
{
	return symbols_name(v->syms, id);
}

/* Open every shown frame below @depth whose line is not out yet. */
static void open_callers(struct view *v, struct call_thread *t, uint32_t depth)
{
	struct view_thread *vt = vthread(t);

	for (uint32_t i = vt ? vt->opened : 0; i < depth; i++) {
		struct call_frame *f = &t->stack[i];

		if ((f->user & (FR_SHOWN | FR_OPENED)) != FR_SHOWN)
			continue;
		print_prefix(v, t, true, f->entry_tsc, false, 0, 0,
			     level_of(f->user));
		ob_str(v->ob, name_of(v, f->func_id));
		ob_str(v->ob, "() {\n");
		f->user |= FR_OPENED;
	}
	if (vt && vt->opened < depth)
		vt->opened = depth;
}

static unsigned int classify(struct view *v, int32_t id)
{
	int c = func_filter_classify(&v->filter, id);

	if (c < 0) {
		replay_fail(v->replay, c);
		return 0;
	}
	return (unsigned int)c;
}

static void on_thread(void *ctx, struct call_thread *t)
{
	struct view *v = ctx;

	t->user = calloc(1, sizeof(struct view_thread));
	if (!t->user)
		replay_fail(v->replay, -ENOMEM);
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct view *v = ctx;
	uint64_t parent = depth ? t->stack[depth - 1].user :
				  (v->rules && fn_filter_selects(v->rules) ?
					   0 :
					   FR_SELECTED);
	uint32_t level = depth ? level_of(parent) + !!(parent & FR_SHOWN) : 0;
	uint64_t user = parent & (FR_SELECTED | FR_LEFT_OUT);

	if (v->rules) {
		unsigned int c = classify(v, f->func_id);

		if (c & FN_FILTER_SELECTED)
			user |= FR_SELECTED;
		if (c & FN_FILTER_LEFT_OUT)
			user |= FR_LEFT_OUT;
	}
	if ((user & (FR_SELECTED | FR_LEFT_OUT)) == FR_SELECTED &&
	    (!v->max_depth || level < v->max_depth))
		user |= FR_SHOWN;
	f->user = user | (uint64_t)level << FR_LEVEL_SHIFT;
	if (!(user & FR_SHOWN))
		return;
	if (!v->min_ns)
		open_callers(v, t, depth);
	/* arguments are shown now, on a line that opens the call */
	if (ev->kind == XRAYFDR_EV_ENTRY_ARGS && ev->nargs) {
		open_callers(v, t, depth);
		print_prefix(v, t, true, f->entry_tsc, false, 0, 0, level);
		ob_str(v->ob, name_of(v, f->func_id));
		ob_char(v->ob, '(');
		for (uint32_t i = 0; i < ev->nargs; i++) {
			char arg[24];

			snprintf(arg, sizeof(arg), "%s%#" PRIx64, i ? ", " : "",
				 ev->args[i]);
			ob_str(v->ob, arg);
		}
		ob_str(v->ob, ") {\n");
		f->user |= FR_OPENED;
	}
}

/* After a line: if the pager quit, nobody reads on. */
static void check_reader(struct view *v)
{
	if (v->ob->error || ferror(v->out)) {
		v->pager_gone = true;
		replay_fail(v->replay, -EIO);
	}
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct view *v = ctx;
	struct view_thread *vt = vthread(t);
	uint64_t user = d->frame->user;
	const char *note = "";

	if (vt && vt->opened > d->depth)
		vt->opened = d->depth;
	if (!(user & FR_SHOWN) || shorter_than_min(v, d->dur))
		return;
	if (d->at_end) {
		note = " (still running)";
		v->still_running++;
	} else if (!d->by_exit) {
		note = " (unwound)";
		v->unwound++;
	}
	open_callers(v, t, d->depth);
	if (user & FR_OPENED) {
		print_prefix(v, t, false, 0, true, d->dur, d->self,
			     level_of(user));
		ob_str(v->ob, "} /* ");
		ob_str(v->ob, name_of(v, d->func_id));
		ob_str(v->ob, " */");
	} else {
		print_prefix(v, t, true, d->entry_tsc, true, d->dur, d->self,
			     level_of(user));
		ob_str(v->ob, name_of(v, d->func_id));
		ob_str(v->ob, "();");
	}
	ob_str(v->ob, note);
	ob_char(v->ob, '\n');
	check_reader(v);
}

/* Where a line about the thread's present goes: under its innermost
 * shown call, or nowhere if that call is hidden. */
static bool here(struct view *v, struct call_thread *t, uint32_t *level)
{
	const struct call_frame *top = t->depth ? &t->stack[t->depth - 1] :
						  NULL;

	if (top && !(top->user & FR_SHOWN))
		return false;
	if (!top && v->rules && fn_filter_selects(v->rules))
		return false;
	if (top && v->max_depth && level_of(top->user) + 1 >= v->max_depth)
		return false;
	open_callers(v, t, t->depth);
	*level = top ? level_of(top->user) + 1 : 0;
	return true;
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct view *v = ctx;
	uint32_t level;

	v->before_window++;
	if (v->min_ns || !here(v, t, &level))
		return;
	if (v->rules) {
		unsigned int c = classify(v, ev->func_id);

		if ((fn_filter_selects(v->rules) &&
		     !(c & FN_FILTER_SELECTED)) ||
		    (c & FN_FILTER_LEFT_OUT))
			return;
	}
	print_prefix(v, t, true, ev->tsc, false, 0, 0, level);
	ob_str(v->ob, "} /* ");
	ob_str(v->ob, name_of(v, ev->func_id));
	ob_str(v->ob, " */ (entered before the trace)\n");
	check_reader(v);
}

static void on_other(void *ctx, struct call_thread *t,
		     const struct xrayfdr_event *ev)
{
	struct view *v = ctx;
	char text[64], name[XRAYFDR_THREAD_NAME_MAX + 1];
	struct xrayfdr_sched_event se;
	uint32_t level, tid;

	if (v->min_ns || !here(v, t, &level))
		return;
	print_prefix(v, t, true, ev->tsc, false, 0, 0, level);
	if (ev->kind == XRAYFDR_EV_CUSTOM &&
	    xrayfdr_sched_decode(ev->data, ev->data_size, &se)) {
		if (se.kind == XRAYFDR_SCHED_SWITCH_OUT)
			snprintf(text, sizeof(text), "/* off CPU %u%s */\n",
				 se.cpu,
				 se.flags & XRAYFDR_SCHED_PREEMPTED ?
					 " (preempted)" :
					 "");
		else if (se.kind == XRAYFDR_SCHED_SWITCH_IN)
			snprintf(text, sizeof(text), "/* on CPU %u */\n",
				 se.cpu);
		else
			snprintf(text, sizeof(text),
				 "/* migrated from CPU %u to %u */\n",
				 se.prev_cpu, se.cpu);
		ob_str(v->ob, text);
		return;
	}
	if (ev->kind == XRAYFDR_EV_CUSTOM &&
	    xrayfdr_thread_name_decode(ev->data, ev->data_size, &tid, name)) {
		ob_str(v->ob, "/* thread name: ");
		ob_str(v->ob, name);
		ob_str(v->ob, " */\n");
		return;
	}
	if (ev->kind == XRAYFDR_EV_TYPED)
		snprintf(text, sizeof(text),
			 "/* typed event %u: ", ev->event_type);
	else
		snprintf(text, sizeof(text), "/* custom event: ");
	ob_str(v->ob, text);
	/* rare: through stdio, in order */
	ob_flush(v->ob);
	print_escaped(v->out, ev->data, ev->data_size, 64);
	fputs(" */\n", v->out);
	check_reader(v);
}

static const struct replay_hooks view_hooks = {
	.calls = {
		.enter = on_enter,
		.done = on_done,
		.unmatched = on_unmatched,
		.thread = on_thread,
		.other = on_other,
	},
};

/* git's way: $PAGER (or less) when standard output is a terminal. */
static FILE *start_pager(void)
{
	const char *pager = getenv("PAGER");
	FILE *p;

	if (!pager || !*pager)
		pager = "less";
	if (!strcmp(pager, "cat"))
		return NULL;
	setenv("LESS", "FRX", 0);
	fflush(stdout);
	p = popen(pager, "w");
	if (p)
		signal(SIGPIPE, SIG_IGN);
	return p;
}

/* One line of how many calls each mark was put on, those there were. */
static void note_marks(const struct view *v)
{
	const struct {
		uint64_t n;
		const char *what;
	} marks[] = {
		{ v->before_window, "entered before the trace" },
		{ v->unwound, "unwound" },
		{ v->still_running, "still running at its end" },
	};
	char line[256];
	size_t len = 0;

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (marks[i].n && len < sizeof(line))
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						"%s%" PRIu64 " calls %s",
						len ? ", " : "", marks[i].n,
						marks[i].what);
	if (len)
		tool_error("replay", "%s", line);
}

static int replay_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "depth", required_argument, NULL, 0x200 },
		{ "color", optional_argument, NULL, 0x204 },
		{ "colour", optional_argument, NULL, 0x204 },
		{ "no-pager", no_argument, NULL, 0x205 },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	struct analysis_opts o;
	struct view v = { 0 };
	char err[512];
	int color = -1, opt, status = EXIT_USAGE;
	bool paging = true;
	FILE *pager = NULL;
	uint64_t n;

	analysis_opts_init(&o, "replay");
	while ((opt = getopt_long(argc, argv,
				  REPLAY_SHORTOPTS ANALYSIS_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 0x200:
			if (parse_uint(optarg, 1, UINT32_MAX, &n)) {
				tool_error(
					"replay",
					"--depth wants a number >= 1, not '%s'",
					optarg);
				goto out;
			}
			v.max_depth = (uint32_t)n;
			break;
		case 0x204:
			if (!optarg || !strcmp(optarg, "always"))
				color = 1;
			else if (!strcmp(optarg, "never"))
				color = 0;
			else if (!strcmp(optarg, "auto"))
				color = -1;
			else {
				tool_error(
					"replay",
					"--color is auto, always or never, not '%s'",
					optarg);
				goto out;
			}
			break;
		case 0x205:
			paging = false;
			break;
		case 'h':
			replay_usage(stdout);
			status = EXIT_OK;
			goto out;
		default:
			if (analysis_option(&o, opt, optarg, replay_usage))
				goto out;
		}
	}
	if (optind != argc - 1) {
		tool_error("replay", "expects exactly one FILE (see --help)");
		goto out;
	}
	if (analysis_find_map(&o, argv[optind])) {
		analysis_opts_free(&o);
		return EXIT_USAGE;
	}
	v.syms = analysis_symbols_open(&o, true, err, sizeof(err));
	if (!v.syms) {
		tool_error("replay", "%s", err);
		goto out;
	}
	/* shown as call trees here, not dropped by the driver */
	if (o.filter) {
		v.rules = fn_filter_new();
		if (!v.rules) {
			tool_error("replay", "out of memory");
			goto out;
		}
		if (fn_filter_parse(v.rules, o.filter, strlen(o.filter), err,
				    sizeof(err))) {
			tool_error("replay", "%s", err);
			goto out;
		}
	}
	func_filter_init(&v.filter, v.rules, v.syms, o.instr_map);
	/* shown by the view, which opens a call's line when it knows */
	v.min_ns = o.min_ns;
	v.replay = replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = "replay",
		.mode = CALLS_UNWIND,
		.by_tid = false,
		.in = o.in,
		.hooks = &view_hooks,
		.ctx = &v,
		.names = v.syms,
		.tids = o.tids,
		.ntids = o.ntids,
		.range = o.range,
	});
	if (!v.replay) {
		tool_error("replay", "out of memory");
		goto out;
	}
	if (!o.output && paging && isatty(STDOUT_FILENO))
		pager = start_pager();
	v.out = pager ? pager : analysis_open_output(&o);
	if (!v.out)
		goto out;
	v.color = color == 1 ||
		  (color == -1 && !o.output && isatty(STDOUT_FILENO));
	v.ob = malloc(sizeof(*v.ob));
	if (!v.ob) {
		tool_error("replay", "out of memory");
		goto out;
	}
	ob_init(v.ob, v.out);
	if (o.trigger.set)
		analysis_say_trigger(v.out, &o.trigger,
				     o.trigger.function ?
					     symbols_name(v.syms,
							  o.trigger.function) :
					     NULL);
	fprintf(v.out, "#%15s %13s %13s %9s   %s\n", "TIME (s)", "DURATION",
		"SELF", "TID", "FUNCTION");
	status = replay_file(v.replay, argv[optind]);
	if (!replay_stopped(v.replay))
		calls_close_all(replay_calls(v.replay));
	if (!replay_stopped(v.replay) && replay_check_tids(v.replay))
		status = EXIT_USAGE;
	/* a failed write shows in the stream, which closing it reports */
	ob_flush(v.ob);
	if (v.pager_gone)
		status = EXIT_OK;
	if (pager) {
		pclose(pager);
	} else {
		status = analysis_close_output(&o, v.out, status);
	}
	note_marks(&v);
out:
	if (v.replay) {
		struct calls *calls = replay_calls(v.replay);

		for (uint32_t i = 0; i < calls_nthreads(calls); i++)
			free(calls_thread(calls, i)->user);
	}
	replay_free(v.replay);
	free(v.ob);
	func_filter_free(&v.filter);
	fn_filter_free(v.rules);
	symbols_free(v.syms);
	analysis_opts_free(&o);
	return status;
}

const struct command cmd_replay = {
	.name = "replay",
	.summary =
		"the trace as indented call trees with times (uftrace replay)",
	.run = replay_run,
	.usage = replay_usage,
};
