// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr stack: call-stack accounting, as llvm-xray stack (the top stacks
 * by time and count, or every stack), and flame graphs with exclusive time:
 * FlameGraph's folded format, or an SVG drawn here.
 *
 * The stacks are a trie (analysis/engine/trie.h) built in one pass; with
 * --aggregate-threads the threads' tries are merged the way llvm-xray
 * merges them, so that its reports come out in the same order.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/engine/calls.h"
#include "analysis/cmdline/cmdline.h"
#include "analysis/output/flamegraph.h"
#include "analysis/engine/llvm_compat.h"
#include "analysis/engine/replay.h"
#include "analysis/input/source.h"
#include "analysis/input/symbols.h"
#include "analysis/engine/stacks.h"
#include "analysis/engine/trie.h"
#include "xrayfdr.h"

enum stack_format {
	FMT_TEXT,
	FMT_FOLDED,
	FMT_SVG,
	FMT_ALL, /* llvm-xray --all-stacks --stack-format=flame */
};

static void stack_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr stack [OPTIONS] FILE...\n"
		"\n"
		"Account time to call stacks: every distinct path of instrumented calls\n"
		"from a thread's outermost call.  Reads XRay logs of any version,\n"
		"llvm-xray YAML and TraceLog, once each, in memory that grows with the\n"
		"number of distinct stacks, not with the trace.\n"
		"\n"
		"Formats (-f):\n"
		"  text    (default) llvm-xray stack's report: the number of unique stacks,\n"
		"          the top 10 by the time of their leaf calls and by their count,\n"
		"          each with its functions' counts and sums (TSC ticks)\n"
		"  folded  FlameGraph's folded stacks: 'thread_T;f;g;h N' per stack, N its\n"
		"          exclusive (self) time in ticks, so that a flame graph's widths\n"
		"          add up (llvm-xray's flame output sums inclusive time instead:\n"
		"          llvm/llvm-project#63676)\n"
		"  svg     a flame graph of exclusive time, drawn here: one self-contained\n"
		"          SVG file a browser opens, a tooltip per frame\n"
		"\n"
		"Options:\n"
		"  -f, --format=FORMAT      text, folded or svg\n"
		"  -m, --instr-map=BINARY   name functions from BINARY\n"
		"      --no-build-id-check  use BINARY even if the log was\n"
		"                           recorded from another build\n"
		"      --aggregate-threads  merge the stacks of all threads\n"
		"      --per-thread-stacks  text: a report per thread\n"
		"      --all-stacks         print every stack as llvm-xray --all-stacks\n"
		"                           --stack-format=flame does (inclusive values)\n"
		"      --stack-format=F     human or flame, as llvm-xray (flame goes with\n"
		"                           --all-stacks)\n"
		"      --aggregation-type=T with --all-stacks: time (default) or count\n"
		"      --title=TEXT         svg: the title (default: the file name)\n"
		"  -F, --filter=PATTERN     only the calls of matching functions and\n"
		"                           what they call (glob or /regex/;\n"
		"                           repeatable)\n"
		"  -N, --notrace=PATTERN    leave out the calls of matching functions\n"
		"                           and what they call\n"
		"      --tid=TID[,TID...]   only the calls of these threads\n"
		"      --time-range=START,END\n"
		"                           only the events in this range (see\n"
		"                           'xrayfdr replay --help')\n"
		"      --around-trigger[=TIME]  in a snapshot a trigger took, only the\n"
		"                          events TIME (1ms) around the triggering call\n"
		"      --min-duration=TIME  only calls that lasted TIME or more (5us, 2ms,\n"
		"                           1s; a bare number is microseconds); a call\n"
		"                           left out adds to its caller's self time\n"
		"      --strict             text and --all-stacks: match exits as llvm-xray\n"
		"                           stack does (below)\n"
		"  -k, --keep-going         skip damaged input, count it, exit 1; with\n"
		"                           --strict, go on after an exit that matches no\n"
		"                           entry, count them, exit 0 (as llvm-xray)\n"
		"  -o, --output=FILE        write to FILE instead of standard output\n"
		"      --input-format=F     xray, yaml or tracelog instead of recognising it\n"
		"  -j, --jobs=N             read with N threads (default: one per CPU,\n"
		"                           up to 2; 1: one), each the calls of a share\n"
		"                           of the log's threads; the output is the same\n"
		"  -q, --quiet              no progress line on a terminal\n"
		"  -h, --help               show this help\n"
		"\n"
		"An exit unwinds its thread's stack to the matching entry (an exception\n"
		"or longjmp went through the calls above it); an exit with no matching\n"
		"entry belongs to a call entered before the trace began (a flight\n"
		"recording's window starts inside calls) and is only counted.  folded\n"
		"and svg also close calls still open at the end of the trace at their\n"
		"thread's last timestamp.  With --strict, text and --all-stacks follow\n"
		"llvm-xray stack: an exit with no matching entry clears the stack and\n"
		"is an error.\n"
		"\n"
		"Exit status: 0 done, 1 the input is invalid or (--strict, without\n"
		"--keep-going) an exit matched no entry, 2 usage or I/O error.\n");
}

/*
 * llvm-xray's text report.
 */
struct top_entry {
	uint32_t node;
	uint64_t value;
};

/* Insert before the first entry not greater (lower_bound with >), keep
 * ten. */
static void top_insert(struct top_entry *top, uint32_t *n, uint32_t node,
		       uint64_t value)
{
	uint32_t at = 0;

	/* the common case: it would go after the tenth, and out */
	if (*n == 10 && top[9].value > value)
		return;
	while (at < *n && top[at].value > value)
		at++;
	memmove(&top[at + 1], &top[at], (*n - at) * sizeof(*top));
	top[at] = (struct top_entry){ node, value };
	if (++*n == 11)
		--*n;
}

static void print_name_column(FILE *out, const char *name)
{
	size_t len = strlen(name);

	if (len > 60)
		fprintf(out, " %.57s...", name);
	else
		fprintf(out, " %-60s", name);
}

static void print_stack(struct stacks *s, FILE *out, uint32_t leaf)
{
	uint32_t path[4096], n = 0, level = 0;
	const struct trie_node *nodes = s->trie.nodes;

	for (uint32_t x = leaf; x != TRIE_NONE && n < 4096; x = nodes[x].parent)
		path[n++] = x;
	fprintf(out, "%-5s %-60s %12s %16s\n", "lvl", "function", "count",
		"sum");
	for (uint32_t i = n; i-- > 1;) {
		const struct trie_node *f = &nodes[path[i]];

		fprintf(out, "#%-4u", level++);
		print_name_column(out, symbols_name(s->syms, f->func_id));
		fprintf(out, " %12" PRIu64 " %16" PRId64 "\n", f->inter_count,
			f->inter_sum);
	}
	fprintf(out, "#%-4u", level);
	print_name_column(out, symbols_name(s->syms, nodes[leaf].func_id));
	fprintf(out, " %12" PRIu64 " %16" PRId64 "\n\n", nodes[leaf].term_count,
		nodes[leaf].term_sum);
}

/*
 * The nodes that could be in a top ten, and the nodes above them (bits of
 * @seen), from two passes over the trie in memory order, which are much
 * faster than a walk of a large trie; and how many nodes are leaves of
 * some call.  Only when the walk of print_report() covers every node.
 */
static int find_candidates(const struct trie *t, uint64_t **seen,
			   uint64_t *unique)
{
	struct top_entry by_sum[11] = { 0 }, by_count[11] = { 0 };
	uint32_t nsum = 0, ncount = 0;
	uint64_t min_sum = 0, min_count = 0;

	*unique = 0;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct trie_node *n = &t->nodes[i];

		if (n->term_count) {
			++*unique;
			top_insert(by_sum, &nsum, i, (uint64_t)n->term_sum);
			top_insert(by_count, &ncount, i, n->term_count);
		}
	}
	if (nsum == 10)
		min_sum = by_sum[9].value;
	if (ncount == 10)
		min_count = by_count[9].value;
	*seen = calloc(t->n / 64 + 1, sizeof(**seen));
	if (!*seen)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct trie_node *n = &t->nodes[i];

		if (!n->term_count || ((uint64_t)n->term_sum < min_sum &&
				       n->term_count < min_count))
			continue;
		for (uint32_t x = i;
		     x != TRIE_NONE && !((*seen)[x / 64] >> (x % 64) & 1);
		     x = t->nodes[x].parent)
			(*seen)[x / 64] |= 1ull << (x % 64);
	}
	return 0;
}

/* llvm-xray's report of the stacks under @roots; @all: they are every
 * root of the trie. */
static int print_report(struct stacks *s, FILE *out, const uint32_t *roots,
			uint32_t nroots, bool all)
{
	struct top_entry by_sum[11] = { 0 }, by_count[11] = { 0 };
	uint32_t nsum = 0, ncount = 0, *work = NULL, nwork = 0, cap = 0;
	uint64_t unique = 0, *seen = NULL;

	/* a walk of only the nodes that matter meets them in the same
	 * order, which decides between equal values */
	if (all && find_candidates(&s->trie, &seen, &unique))
		goto oom;
	for (uint32_t r = 0; r < nroots; r++) {
		nwork = 0;
		if (stacks_push_children(&work, &nwork, &cap, &roots[r], 1))
			goto oom;
		while (nwork) {
			uint32_t top = work[--nwork];
			const struct trie_node *n = &s->trie.nodes[top];

			if (seen && !(seen[top / 64] >> (top % 64) & 1))
				continue;
			if (n->term_count) {
				unique += !seen;
				top_insert(by_sum, &nsum, top,
					   (uint64_t)n->term_sum);
				top_insert(by_count, &ncount, top,
					   n->term_count);
			}
			if (stacks_push_children(&work, &nwork, &cap,
						 n->children, n->nchildren))
				goto oom;
		}
	}
	fprintf(out,
		"\nUnique Stacks: %" PRIu64 "\nTop 10 Stacks by leaf sum:\n\n",
		unique);
	for (uint32_t i = 0; i < nsum; i++) {
		fprintf(out, "Sum: %" PRIu64 "\n", by_sum[i].value);
		print_stack(s, out, by_sum[i].node);
	}
	fputs("\nTop 10 Stacks by leaf count:\n\n", out);
	for (uint32_t i = 0; i < ncount; i++) {
		fprintf(out, "Count: %" PRIu64 "\n", by_count[i].value);
		print_stack(s, out, by_count[i].node);
	}
	fputc('\n', out);
	free(work);
	free(seen);
	return 0;
oom:
	free(work);
	free(seen);
	return -ENOMEM;
}

/*
 * The SVG: a root per thread (or the merged roots), under "all".
 */
struct svg_tree {
	struct stacks *s;
	const struct stacks_order *ro;
	const struct trie_thread *merged; /* aggregated */
	/* virtual nodes: ALL, then one per thread */
	uint32_t base;
	char label[64];
};

static uint32_t svg_root(void *ctx, uint32_t i)
{
	struct svg_tree *t = ctx;

	(void)i;
	return t->base; /* "all" */
}

static uint32_t svg_nchildren(void *ctx, uint32_t node)
{
	struct svg_tree *t = ctx;

	if (node == t->base)
		return t->merged ? t->merged->nroots : t->ro->n;
	if (node > t->base)
		return stacks_thread_of(t->ro->threads[node - t->base - 1])
			->roots.nroots;
	return t->s->trie.nodes[node].nchildren;
}

static uint32_t svg_child(void *ctx, uint32_t node, uint32_t i)
{
	struct svg_tree *t = ctx;

	if (node == t->base)
		return t->merged ? t->merged->roots[i] : t->base + 1 + i;
	if (node > t->base)
		return stacks_thread_of(t->ro->threads[node - t->base - 1])
			->roots.roots[i];
	return t->s->trie.nodes[node].children[i];
}

static uint64_t svg_self(void *ctx, uint32_t node)
{
	struct svg_tree *t = ctx;

	return node >= t->base ? 0 : t->s->trie.nodes[node].self;
}

static const char *svg_name(void *ctx, uint32_t node)
{
	struct svg_tree *t = ctx;

	if (node == t->base)
		return "all";
	if (node > t->base) {
		return calls_thread_label(t->ro->threads[node - t->base - 1],
					  t->label, sizeof(t->label));
	}
	return symbols_name(t->s->syms, t->s->trie.nodes[node].func_id);
}

struct stack_opts {
	enum stack_format format;
	bool aggregate, per_thread, count;
	const char *title;
	double freq;
};

static int report(struct stacks *s, FILE *out, const struct stack_opts *o)
{
	struct stacks_order ro = { 0 };
	struct trie_thread merged = { 0 };
	int ret = stacks_order_threads(s, &ro);

	if (ret)
		return ret;
	if (o->aggregate)
		ret = stacks_merge(s, &ro, &merged);
	if (ret)
		goto out;
	switch (o->format) {
	case FMT_TEXT:
		if (o->aggregate) {
			ret = print_report(s, out, merged.roots, merged.nroots,
					   false);
		} else if (o->per_thread) {
			for (uint32_t i = 0; i < ro.n && !ret; i++) {
				const struct trie_thread *r =
					&stacks_thread_of(ro.threads[i])->roots;

				fprintf(out, "Thread %" PRIu32 ":\n", r->tid);
				ret = print_report(s, out, r->roots, r->nroots,
						   false);
				fputc('\n', out);
			}
		} else {
			struct trie_thread all = { 0 };

			for (uint32_t i = 0; i < ro.n && !ret; i++) {
				const struct trie_thread *r =
					&stacks_thread_of(ro.threads[i])->roots;

				for (uint32_t j = 0; j < r->nroots && !ret; j++)
					ret = trie_add_root(&all, r->roots[j]);
			}
			if (!ret)
				ret = print_report(s, out, all.roots,
						   all.nroots, true);
			trie_thread_free(&all);
		}
		break;
	case FMT_ALL:
	case FMT_FOLDED:
		if (o->aggregate) {
			ret = stacks_print_all(s, out, merged.roots,
					       merged.nroots, NULL,
					       o->format == FMT_ALL, o->count);
			break;
		}
		ret = stacks_write_folded_lines(s, out, o->format == FMT_ALL,
						o->count);
		break;
	case FMT_SVG: {
		struct svg_tree st = { .s = s,
				       .ro = &ro,
				       .merged = o->aggregate ? &merged : NULL,
				       .base = s->trie.n };
		struct flame_tree ft = { .nroots = 1,
					 .root = svg_root,
					 .nchildren = svg_nchildren,
					 .child = svg_child,
					 .self = svg_self,
					 .name = svg_name,
					 .ctx = &st };
		struct flame_opts fo = { .title = o->title,
					 .subtitle =
						 o->aggregate ?
							 "all threads merged" :
							 "by thread",
					 .ticks_per_second = o->freq };

		ret = flamegraph_write(out, &ft, &fo);
		break;
	}
	}
out:
	trie_thread_free(&merged);
	free(ro.threads);
	return ret;
}

static int stack_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "aggregate-threads", no_argument, NULL, 'A' },
		{ "per-thread-stacks", no_argument, NULL, 'P' },
		{ "all-stacks", no_argument, NULL, 'a' },
		{ "stack-format", required_argument, NULL, 0x300 },
		{ "aggregation-type", required_argument, NULL, 'T' },
		{ "title", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "strict", no_argument, NULL, 'S' },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	struct stack_opts so = { .format = FMT_TEXT };
	struct analysis_opts o;
	struct stacks s = { 0 };
	bool all = false;
	FILE *out;
	char err[512];
	int opt, status = EXIT_OK, ret, alone = 1;
	unsigned int jobs = analysis_default_jobs();

	analysis_opts_init(&o, "stack");
	if (llvm_style_options("stack", argc, argv, longopts))
		return EXIT_USAGE;
	while ((opt = getopt_long(argc, argv,
				  "f:j:" REPLAY_SHORTOPTS ANALYSIS_SHORTOPTS,
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "text"))
				so.format = FMT_TEXT;
			else if (!strcmp(optarg, "folded"))
				so.format = FMT_FOLDED;
			else if (!strcmp(optarg, "svg"))
				so.format = FMT_SVG;
			else {
				tool_error(
					"stack",
					"unknown format '%s' (text, folded, svg)",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'A':
			so.aggregate = true;
			break;
		case 'P':
			so.per_thread = true;
			break;
		case 'a':
			all = true;
			break;
		case 0x300:
			if (strcmp(optarg, "human") &&
			    strcmp(optarg, "flame")) {
				tool_error("stack",
					   "--stack-format is human or flame");
				return EXIT_USAGE;
			}
			break;
		case 'T':
			if (strcmp(optarg, "time") && strcmp(optarg, "count")) {
				tool_error(
					"stack",
					"--aggregation-type is time or count");
				return EXIT_USAGE;
			}
			so.count = !strcmp(optarg, "count");
			break;
		case 'S':
			s.strict = true;
			break;
		case 't':
			so.title = optarg;
			break;
		case 'j':
			if (analysis_jobs("stack", optarg, &jobs))
				return EXIT_USAGE;
			break;
		case 'h':
			stack_usage(stdout);
			return EXIT_OK;
		default:
			if (analysis_option(&o, opt, optarg, stack_usage))
				return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		tool_error("stack", "expects a FILE (see --help)");
		return EXIT_USAGE;
	}
	if (so.aggregate && so.per_thread) {
		tool_error(
			"stack",
			"--per-thread-stacks and --aggregate-threads exclude each other");
		return EXIT_USAGE;
	}
	if (all) {
		if (so.format != FMT_TEXT) {
			tool_error(
				"stack",
				"--all-stacks is llvm-xray's flame output; it does not go with --format");
			return EXIT_USAGE;
		}
		so.format = FMT_ALL;
	}
	s.keep_going = o.in.keep_going;
	if (analysis_find_map(&o, argv[optind])) {
		analysis_opts_free(&o);
		return EXIT_USAGE;
	}
	s.syms = analysis_symbols_open(&o, true, err, sizeof(err));
	if (!s.syms) {
		tool_error("stack", "%s", err);
		return EXIT_USAGE;
	}
	/* llvm-xray's matching is llvm-xray's outputs' only */
	s.strict = s.strict && so.format != FMT_FOLDED && so.format != FMT_SVG;
	/* the SVG's title: the last input */
	if (!so.title)
		so.title = argv[argc - 1];
	/* one log whose threads can be shared out, with options that do not
	 * follow it whole in order */
	if (argc - optind == 1 && !s.strict &&
	    analysis_shareable(&o, argv[optind], jobs))
		alone = analysis_shared_done(
			"stack", argv[optind],
			stacks_read_shared(&s, CALLS_UNWIND, &o.in, &o,
					   argv[optind], jobs,
					   so.format == FMT_FOLDED ||
						   so.format == FMT_SVG));
	if (alone < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (!alone)
		goto read;
	if (!stacks_replay(&s, s.strict ? CALLS_CLEAR : CALLS_UNWIND, &o.in,
			   &o)) {
		tool_error("stack", "out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		int st = replay_file(s.replay, argv[i]);

		if (st > status)
			status = st;
		if (replay_stopped(s.replay) || (st && !o.in.keep_going))
			goto out;
	}
	if (replay_check_tids(s.replay)) {
		status = EXIT_USAGE;
		goto out;
	}
	if (so.format == FMT_FOLDED || so.format == FMT_SVG)
		calls_close_all(replay_calls(s.replay));
read:
	so.freq = stacks_freq(&s);
	if (!s.trie.n) {
		tool_error("stack", "no instrumented calls in the input");
		status = EXIT_INVALID;
		goto out;
	}
	ret = trie_finish(&s.trie);
	if (ret) {
		tool_error("stack", "out of memory");
		status = EXIT_USAGE;
		goto out;
	}
	out = analysis_open_output(&o);
	if (!out) {
		status = EXIT_USAGE;
		goto out;
	}
	ret = report(&s, out, &so);
	if (ret) {
		tool_error("stack", "%s",
			   ret == -E2BIG ? "stacks too deep to draw" :
					   strerror(-ret));
		status = EXIT_USAGE;
	}
	status = analysis_close_output(&o, out, status);
	stacks_note_saturated(&s, argv[argc - 1]);
	if (!s.strict) {
		stacks_note_window(&s, argv[argc - 1]);
	} else if (replay_unmatched(s.replay)) {
		tool_error("stack",
			   "%" PRIu64
			   " exits matched no entry on their thread's stack",
			   replay_unmatched(s.replay));
		/* as llvm-xray: --keep-going makes them a warning */
		if (!s.keep_going)
			status = EXIT_INVALID;
	}
out:
	stacks_free(&s);
	symbols_free(s.syms);
	analysis_opts_free(&o);
	return status;
}

const struct command cmd_stack = {
	.name = "stack",
	.summary =
		"call-stack accounting (llvm-xray stack), folded stacks, SVG flame graph",
	.run = stack_run,
	.usage = stack_usage,
};
