// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr account: per-function call statistics, as llvm-xray account
 * computes them, plus exclusive time and on/off-CPU time.
 *
 * Exact percentiles need every duration: they go through the external
 * sort (analysis/stats/order_stats.h) keyed by function then duration, so memory
 * stays bounded whatever the trace's size.  Rows come out in llvm-xray's
 * order: its table of functions is a DenseMap filled in the order of the
 * first completed call of each function, sorted with std::sort.
 *
 * With --jobs, workers each read the calls of a share of an FDR log's
 * threads (replay_opts.share_*), their durations going to one store in
 * chunks, and their rows are added up: the output is what one reader
 * makes.  Where the log or the options do not allow it, or a worker met
 * anything to say (a damaged log, a warning), one reader reads it again
 * and says it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util/u64map.h"
#include "analysis/engine/calls.h"
#include "analysis/cmdline/cmdline.h"
#include "analysis/engine/llvm_compat.h"
#include "analysis/stats/order_stats.h"
#include "analysis/engine/replay.h"
#include "analysis/stats/shared_read.h"
#include "analysis/stats/shared_stats.h"
#include "analysis/input/source.h"
#include "analysis/input/symbols.h"
#include "analysis/stats/table.h"
#include "xrayfdr.h"

#define MAX_FUNCTIONS ORDER_STATS_MAX_SETS

enum sort_field {
	SORT_FUNCID,
	SORT_COUNT,
	SORT_MIN,
	SORT_MED,
	SORT_PCT90,
	SORT_PCT99,
	SORT_MAX,
	SORT_SUM,
	SORT_SELF,
	SORT_ON_CPU,
	SORT_OFF_CPU,
	SORT_FUNC,
};

static const char *const sort_names[] = {
	"funcid", "count", "min",  "med",    "90p",	"99p",
	"max",	  "sum",   "self", "on-cpu", "off-cpu", "func",
};

enum out_format {
	FMT_TEXT,
	FMT_CSV,
	FMT_JSON,
};

static void account_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr account [OPTIONS] FILE\n"
		"\n"
		"Per-function statistics of the calls in a trace (an XRay log of any\n"
		"version, llvm-xray YAML or TraceLog): how many calls completed, the\n"
		"minimum, median, 90th and 99th percentile and maximum duration, and\n"
		"their sum, in seconds, with the numbers 'llvm-xray account' gives for\n"
		"the same input; then the sum of exclusive (self) time, and, where the\n"
		"trace has scheduler events, the time on and off the CPU.  Each thread's\n"
		"calls are matched on a stack of its own; the trace is read once, and\n"
		"durations for the percentiles go through temporary files when they do\n"
		"not fit in --sort-memory.\n"
		"\n"
		"Options:\n"
		"  -m, --instr-map=BINARY  name functions from BINARY (symbols, DWARF)\n"
		"      --no-build-id-check use BINARY even if the log was\n"
		"                          recorded from another build\n"
		"  -s, --sort=FIELD        sort rows by funcid (default), count, min, med,\n"
		"                          90p, 99p, max, sum, self, on-cpu, off-cpu or\n"
		"                          func (the name)\n"
		"  -r, --sortorder=ORDER   asc (default) or dsc\n"
		"  -p, --top=N             only the first N rows\n"
		"  -f, --format=FORMAT     text (default), csv or json\n"
		"      --compat            only llvm-xray's columns, formatted exactly as\n"
		"                          llvm-xray account prints them, and its\n"
		"                          matching of exits (--strict)\n"
		"      --strict            match exits as llvm-xray does: only the top\n"
		"                          of the thread's stack may exit, and an exit\n"
		"                          that matches no entry is an error\n"
		"  -d, --deduce-sibling-calls\n"
		"                          with --strict: an exit that does not match the\n"
		"                          top of its thread's stack ends the calls above\n"
		"                          the one it matches (as llvm-xray -d)\n"
		"  -F, --filter=PATTERN    only the calls of matching functions and what\n"
		"                          they call (glob or /regex/; repeatable)\n"
		"  -N, --notrace=PATTERN   leave out the calls of matching functions and\n"
		"                          what they call\n"
		"      --tid=TID[,TID...]  only the calls of these threads\n"
		"      --time-range=START,END\n"
		"                          only the events in this range (see 'xrayfdr\n"
		"                          replay --help'); calls cut by it are not counted\n"
		"      --around-trigger[=TIME]  in a snapshot a trigger took, only the\n"
		"                          events TIME (1ms) around the triggering call\n"
		"      --min-duration=TIME only calls that lasted TIME or more (5us, 2ms,\n"
		"                          1s; a bare number is microseconds)\n"
		"      --per-thread        a table per thread (in order of first\n"
		"                          appearance), headed by its name where the\n"
		"                          runtime recorded one; --top counts per thread;\n"
		"                          csv and json add the thread id and name\n"
		"      --recursive-calls-only\n"
		"                          count only calls of functions that were on\n"
		"                          their thread's stack more than once\n"
		"  -k, --keep-going        skip damaged parts of the input, count them,\n"
		"                          exit 1; with --strict, skip exits that match\n"
		"                          nothing, count them, exit 0 (as llvm-xray)\n"
		"  -o, --output=FILE       write to FILE instead of standard output\n"
		"      --sort-memory=SIZE  RAM for the durations (default 256M)\n"
		"  -j, --jobs=N            read with N threads (default: one per CPU, up\n"
		"                          to 2; 1: one), each the calls of a share of\n"
		"                          the log's threads; the output is the same\n"
		"      --input-format=F    xray, yaml or tracelog instead of recognising it\n"
		"  -q, --quiet             no progress line on a terminal\n"
		"  -h, --help              show this help\n"
		"\n"
		"Times are seconds (TSC ticks divided by the trace's cycle frequency;\n"
		"ticks if it is 0).  'self' excludes the time of instrumented callees;\n"
		"'on-cpu' and 'off-cpu' split the calls' inclusive time by whether the\n"
		"thread was running, from the scheduler events of xrayfdr's kernel\n"
		"module.\n"
		"\n"
		"Calls are matched as the program made them, by default: an exit that\n"
		"is not of the innermost call ends the calls above its own (an exception\n"
		"or longjmp went through them: they are counted, ending there), and an\n"
		"exit with no entry on its thread's stack belongs to a call entered\n"
		"before the trace began (a flight recorder's window starts inside calls:\n"
		"it is not counted).  A line on standard error says how many of each.\n"
		"\n"
		"Exit status: 0 done, 1 the input is invalid (also after --keep-going)\n"
		"or, with --strict and without --keep-going, an exit matched no entry,\n"
		"2 usage or I/O error.\n");
}

struct fstat {
	int32_t id;
	uint32_t index;
	uint32_t thread; /* --per-thread: its call thread's index */
	uint32_t noted; /* note_first()'s last thread, its index + 1 */
	uint64_t count, min, max, sum, self, on, off;
	uint64_t med, p90, p99;
	/* where llvm-xray first records a latency of this function */
	uint64_t first_rank, first_seq;
	const char *name; /* --sort=func: its name, while rows are sorted */
};

/* Per thread, the first latency of each function it recorded. */
struct thread_state {
	uint8_t *seen; /* bitset over function indexes */
	size_t seen_bytes;
	struct u64map recursion; /* function index -> struct rec_status */
};

struct rec_status {
	uint32_t depth;
	bool recursive;
};

/* (function index, thread index, sequence): first latencies */
struct first_seen {
	uint32_t func, thread;
	uint64_t seq;
};

struct account {
	struct replay *replay;
	bool keep_going, recursive_only, strict, per_thread;
	struct table functions;
	struct fstat **funcs; /* the table's records, by number */
	uint32_t nfuncs;
	struct first_seen *firsts;
	size_t nfirsts, firsts_cap;
	bool firsts_ranked; /* funcs' first_rank and first_seq are set */
	uint64_t seq;
	struct order_stats *durations;
	/* a worker's way to the durations' store (--jobs) */
	struct stats_feed *feed;
};

static uint64_t func_key(const struct account *a, const struct call_thread *t,
			 int32_t id)
{
	return (a->per_thread ? (uint64_t)(t->index + 1) << 32 : 0) |
	       (uint32_t)id;
}

static __attribute__((noinline)) struct fstat *
get_func_slow(struct account *a, const struct call_thread *t, int32_t id)
{
	uint32_t index;
	bool created;
	struct fstat *f =
		table_get(&a->functions, func_key(a, t, id), &index, &created);

	if (f && created) {
		f->id = id;
		f->index = index;
		f->thread = t->index;
		f->min = UINT64_MAX;
		a->funcs = (struct fstat **)a->functions.items;
		a->nfuncs = a->functions.n;
	}
	return f;
}

/* A function's row; with --per-thread, one per thread it ran on. */
static inline struct fstat *get_func(struct account *a,
				     const struct call_thread *t, int32_t id)
{
	struct fstat *f = table_find_cached(&a->functions, func_key(a, t, id));

	return f ? f : get_func_slow(a, t, id);
}

static struct thread_state *tstate(struct call_thread *t)
{
	return t->user;
}

static void on_thread(void *ctx, struct call_thread *t)
{
	struct account *a = ctx;
	struct thread_state *s = calloc(1, sizeof(*s));

	if (!s) {
		replay_fail(a->replay, -ENOMEM);
		return;
	}
	t->user = s;
}

static struct rec_status *recursion(struct account *a, struct call_thread *t,
				    int32_t id)
{
	struct thread_state *s = tstate(t);
	struct rec_status *r;

	if (!s)
		return NULL;
	r = u64map_get(&s->recursion, (uint32_t)id);
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r || u64map_put(&s->recursion, (uint32_t)id, r)) {
			free(r);
			replay_fail(a->replay, -ENOMEM);
			return NULL;
		}
	}
	return r;
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct account *a = ctx;
	struct rec_status *r;

	(void)depth;
	(void)ev;
	r = recursion(a, t, f->func_id);
	if (r && ++r->depth == 2)
		r->recursive = true;
}

static int note_first(struct account *a, struct call_thread *t, struct fstat *f)
{
	struct thread_state *s = tstate(t);
	size_t byte = f->index / 8;

	/* a function's calls come mostly from one thread at a time */
	if (f->noted == t->index + 1)
		return 0;
	if (!s)
		return -ENOMEM;
	f->noted = t->index + 1;
	if (byte >= s->seen_bytes) {
		size_t n = byte + 1 > 2 * s->seen_bytes ? byte + 64 :
							  2 * s->seen_bytes;
		uint8_t *b = realloc(s->seen, n);

		if (!b)
			return -ENOMEM;
		memset(b + s->seen_bytes, 0, n - s->seen_bytes);
		s->seen = b;
		s->seen_bytes = n;
	}
	if (s->seen[byte] & (1u << (f->index % 8)))
		return 0;
	s->seen[byte] |= (uint8_t)(1u << (f->index % 8));
	if (a->nfirsts == a->firsts_cap) {
		size_t cap = a->firsts_cap ? 2 * a->firsts_cap : 64;
		struct first_seen *n = realloc(a->firsts, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		a->firsts = n;
		a->firsts_cap = cap;
	}
	a->firsts[a->nfirsts++] = (struct first_seen){ .func = f->index,
						       .thread = t->index,
						       .seq = a->seq };
	return 0;
}

/* --jobs: the key of a worker's function in the durations' store */
static uint64_t func_id_key(void *ctx, uint32_t index)
{
	return (uint32_t)((struct account *)ctx)->funcs[index]->id;
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct account *a = ctx;
	struct fstat *f;
	int ret;

	if (a->recursive_only) {
		struct rec_status *r = recursion(a, t, d->func_id);
		bool counted = r && r->recursive;

		if (r && r->depth && --r->depth == 0)
			r->recursive = false;
		if (!counted)
			return;
	}
	f = get_func(a, t, d->func_id);
	if (!f) {
		replay_fail(a->replay, -ENOMEM);
		return;
	}
	a->seq++;
	ret = note_first(a, t, f);
	if (ret) {
		replay_fail(a->replay, ret);
		return;
	}
	f->count++;
	f->sum += d->dur;
	f->self += d->self;
	f->off += d->off_cpu;
	f->on += d->dur > d->off_cpu ? d->dur - d->off_cpu : 0;
	if (d->dur < f->min)
		f->min = d->dur;
	if (d->dur > f->max)
		f->max = d->dur;
	if (a->feed) {
		ret = stats_feed_add(a->feed, f->index, d->dur);
	} else {
		ret = order_stats_add(a->durations, f->index, d->dur);
		if (ret && ret != -ENOMEM) {
			tool_error("account", "%s",
				   order_stats_why(a->durations, ret));
			ret = -EIO;
		}
	}
	if (ret)
		replay_fail(a->replay, ret);
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct account *a = ctx;
	const struct replay_input *in = replay_input(a->replay);
	char where[48];

	if (a->keep_going || !a->strict)
		return;
	if (t->depth)
		tool_error(
			"account",
			"%s: record at %s: thread %" PRIu32
			": the exit of function %" PRId32
			" does not match function %" PRId32
			" on top of its stack (see --deduce-sibling-calls and --keep-going)",
			in->path,
			trace_where(in->format, ev->offset, where,
				    sizeof(where)),
			ev->tid, ev->func_id, t->stack[t->depth - 1].func_id);
	else
		tool_error("account",
			   "%s: record at %s: thread %" PRIu32
			   ": exit of function %" PRId32
			   " with no entry before it (see --keep-going)",
			   in->path,
			   trace_where(in->format, ev->offset, where,
				       sizeof(where)),
			   ev->tid, ev->func_id);
	replay_fail(a->replay, -EBADMSG);
}

/* llvm-xray's picks: the median at n / 2, percentiles at floor(n * p). */
static unsigned int ranks(void *ctx, uint32_t set, uint64_t count,
			  uint64_t *out)
{
	(void)ctx;
	(void)set;
	out[0] = count / 2;
	out[1] = (uint64_t)floor((double)count * 0.9);
	out[2] = (uint64_t)floor((double)count * 0.99);
	return 3;
}

static void pick(void *ctx, uint32_t set, uint64_t rank, uint64_t value)
{
	struct fstat *f = ((struct account *)ctx)->funcs[set];

	if (rank == f->count / 2)
		f->med = value;
	if (rank == (uint64_t)floor((double)f->count * 0.9))
		f->p90 = value;
	if (rank == (uint64_t)floor((double)f->count * 0.99))
		f->p99 = value;
}

/*
 * Row order.
 */
struct row_order {
	uint32_t *rows;
	uint32_t n;
};

static int cmp_first(const void *x, const void *y)
{
	const struct fstat *a = *(struct fstat *const *)x;
	const struct fstat *b = *(struct fstat *const *)y;

	if (a->first_rank != b->first_rank)
		return a->first_rank < b->first_rank ? -1 : 1;
	return a->first_seq < b->first_seq ? -1 : a->first_seq > b->first_seq;
}

static int cmp_name(const void *x, const void *y, void *ctx)
{
	struct fstat **funcs = ctx;
	const struct fstat *a = funcs[*(const uint32_t *)x];
	const struct fstat *b = funcs[*(const uint32_t *)y];
	int c = strcmp(a->name, b->name);

	return c ? c : (a->id > b->id) - (a->id < b->id);
}

static double key_of(const struct fstat *f, enum sort_field field)
{
	switch (field) {
	case SORT_FUNCID:
		return f->id;
	case SORT_COUNT:
		return (double)f->count;
	case SORT_MIN:
		return (double)f->min;
	case SORT_MED:
		return (double)f->med;
	case SORT_PCT90:
		return (double)f->p90;
	case SORT_PCT99:
		return (double)f->p99;
	case SORT_MAX:
		return (double)f->max;
	case SORT_SUM:
		return (double)f->sum;
	case SORT_SELF:
		return (double)f->self;
	case SORT_ON_CPU:
		return (double)f->on;
	case SORT_OFF_CPU:
		return (double)f->off;
	default:
		return 0;
	}
}

/*
 * --sort=func: symbols_name() returns a scratch buffer for ids the map does
 * not name, so each row gets its own copy while the rows are sorted.
 */
static int sort_by_name(struct account *a, struct symbols *syms, uint32_t *rows,
			uint32_t n, bool dsc)
{
	char **names = calloc(n + 1, sizeof(*names));
	int ret = 0;

	if (!names)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && !ret; i++) {
		names[i] = strdup(symbols_name(syms, a->funcs[i]->id));
		if (!names[i])
			ret = -ENOMEM;
		a->funcs[i]->name = names[i];
	}
	if (!ret) {
		qsort_r(rows, n, sizeof(*rows), cmp_name, a->funcs);
		if (dsc)
			for (uint32_t i = 0; i < n / 2; i++) {
				uint32_t t = rows[i];

				rows[i] = rows[n - 1 - i];
				rows[n - 1 - i] = t;
			}
	}
	for (uint32_t i = 0; i < n; i++) {
		a->funcs[i]->name = NULL;
		free(names[i]);
	}
	free(names);
	return ret;
}

static int order_rows(struct account *a, struct symbols *syms,
		      enum sort_field field, bool dsc, struct row_order *out)
{
	uint32_t n = a->nfuncs;
	struct fstat **byfirst = malloc((n + 1) * sizeof(*byfirst));
	uint32_t *hashes = malloc((n + 1) * sizeof(*hashes));
	uint32_t *rows = malloc((n + 1) * sizeof(*rows));
	double *keys = malloc((n + 1) * sizeof(*keys));
	int ret = -ENOMEM;

	if (!byfirst || !hashes || !rows || !keys)
		goto out;
	for (uint32_t i = 0; i < n && !a->firsts_ranked; i++) {
		a->funcs[i]->first_rank = UINT64_MAX;
		a->funcs[i]->first_seq = UINT64_MAX;
	}
	for (size_t i = 0; i < a->nfirsts && !a->firsts_ranked; i++) {
		struct fstat *f = a->funcs[a->firsts[i].func];
		uint64_t rank =
			replay_thread_rank(a->replay, a->firsts[i].thread);

		if (rank < f->first_rank || (rank == f->first_rank &&
					     a->firsts[i].seq < f->first_seq)) {
			f->first_rank = rank;
			f->first_seq = a->firsts[i].seq;
		}
	}
	/* insertion order into the DenseMap, then its iteration order */
	if (n)
		memcpy(byfirst, a->funcs, n * sizeof(*byfirst));
	qsort(byfirst, n, sizeof(*byfirst), cmp_first);
	for (uint32_t i = 0; i < n; i++)
		hashes[i] = llvm_hash_u32((uint32_t)byfirst[i]->id);
	ret = llvm_densemap_order(hashes, n, rows);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		rows[i] = byfirst[rows[i]]->index;
		keys[rows[i]] = key_of(a->funcs[rows[i]], field);
	}
	if (field == SORT_FUNC)
		ret = sort_by_name(a, syms, rows, n, dsc);
	else
		llvm_sort_by_key(rows, n, keys, dsc);
	if (ret)
		goto out;
	out->rows = rows;
	out->n = n;
	rows = NULL;
out:
	free(byfirst);
	free(hashes);
	free(rows);
	free(keys);
	return ret;
}

/*
 * Output.
 */
struct printer {
	FILE *out;
	enum out_format format;
	bool compat, sched;
	double freq;
	struct symbols *syms;
};

static double secs(const struct printer *p, uint64_t ticks)
{
	return p->freq ? (double)ticks / p->freq : (double)ticks;
}

static void json_string(FILE *out, const char *s)
{
	putc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

/* --per-thread: the rows thread by thread (in order of first appearance),
 * each thread's in the order they had. */
static int group_by_thread(struct account *a, struct row_order *ro)
{
	uint32_t n = calls_nthreads(replay_calls(a->replay));
	uint32_t *at = calloc(n + 1, sizeof(*at));
	uint32_t *rows = malloc((ro->n + 1) * sizeof(*rows));

	if (!at || !rows) {
		free(at);
		free(rows);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ro->n; i++)
		at[a->funcs[ro->rows[i]]->thread + 1]++;
	for (uint32_t t = 0; t < n; t++)
		at[t + 1] += at[t];
	for (uint32_t i = 0; i < ro->n; i++)
		rows[at[a->funcs[ro->rows[i]]->thread]++] = ro->rows[i];
	free(ro->rows);
	ro->rows = rows;
	free(at);
	return 0;
}

/* The text table's head. */
static void text_head(const struct printer *p, uint32_t nrows)
{
	FILE *out = p->out;

	fprintf(out, "Functions with latencies: %" PRIu32 "\n", nrows);
	fprintf(out, "%9s %10s [%9s, %9s, %9s, %9s, %9s] %9s", "funcid",
		"count", "min", "med", "90p", "99p", "max", "sum");
	if (!p->compat) {
		fprintf(out, " %9s", "self");
		if (p->sched)
			fprintf(out, " %9s %9s", "on-cpu", "off-cpu");
	}
	fprintf(out, "  %-12s\n", "function");
}

static void print_row(const struct printer *p, const struct fstat *f,
		      const struct call_thread *t, bool first)
{
	const char *name = symbols_name(p->syms, f->id);
	const char *loc = symbols_location(p->syms, f->id);
	FILE *out = p->out;

	if (p->format == FMT_TEXT) {
		fprintf(out,
			"%9" PRId32 " %10" PRIu64
			" [%9.6f, %9.6f, %9.6f, %9.6f, %9.6f] %9.6f",
			f->id, f->count, secs(p, f->min), secs(p, f->med),
			secs(p, f->p90), secs(p, f->p99), secs(p, f->max),
			secs(p, f->sum));
		if (!p->compat) {
			fprintf(out, " %9.6f", secs(p, f->self));
			if (p->sched)
				fprintf(out, " %9.6f %9.6f", secs(p, f->on),
					secs(p, f->off));
		}
		fprintf(out, "  %s: %s\n", loc, name);
	} else if (p->format == FMT_CSV) {
		if (t)
			fprintf(out, "%" PRIu32 ",\"%s\",", t->tid, t->name);
		fprintf(out,
			"%" PRId32 ",%" PRIu64 ",%.6e,%.6e,%.6e,%.6e,%.6e,%.6e",
			f->id, f->count, secs(p, f->min), secs(p, f->med),
			secs(p, f->p90), secs(p, f->p99), secs(p, f->max),
			secs(p, f->sum));
		if (!p->compat) {
			fprintf(out, ",%.6e", secs(p, f->self));
			if (p->sched)
				fprintf(out, ",%.6e,%.6e", secs(p, f->on),
					secs(p, f->off));
		}
		fprintf(out, ",\"%s\",\"%s\"\n", loc, name);
	} else {
		fprintf(out, "%s\n{", first ? "" : ",");
		if (t) {
			fprintf(out, "\"tid\":%" PRIu32 ",\"thread\":", t->tid);
			json_string(out, t->name);
			fputc(',', out);
		}
		fprintf(out, "\"id\":%" PRId32 ",\"function\":", f->id);
		json_string(out, name);
		fputs(",\"location\":", out);
		json_string(out, loc);
		fprintf(out,
			",\"count\":%" PRIu64
			",\"min\":%.9g,\"median\":%.9g,\"p90\":%.9g,\"p99\":%.9g,\"max\":%.9g,\"sum\":%.9g,\"self\":%.9g",
			f->count, secs(p, f->min), secs(p, f->med),
			secs(p, f->p90), secs(p, f->p99), secs(p, f->max),
			secs(p, f->sum), secs(p, f->self));
		if (p->sched)
			fprintf(out, ",\"on_cpu\":%.9g,\"off_cpu\":%.9g",
				secs(p, f->on), secs(p, f->off));
		fputc('}', out);
	}
}

/* The rows in @ro's order, at most @top (per thread with --per-thread,
 * whose rows @ro holds thread by thread). */
static void print_rows(struct account *a, const struct printer *p,
		       const struct row_order *ro, uint32_t top)
{
	struct calls *calls = a->per_thread ? replay_calls(a->replay) : NULL;
	const struct call_thread *t = NULL;
	FILE *out = p->out;
	uint32_t shown = 0;
	bool first = true;
	char label[64];

	if (p->format == FMT_TEXT && !a->per_thread) {
		text_head(p, a->nfuncs);
	} else if (p->format == FMT_CSV) {
		if (a->per_thread)
			fputs("tid,thread,", out);
		fputs("funcid,count,min,median,90%ile,99%ile,max,sum", out);
		if (!p->compat) {
			fputs(",self", out);
			if (p->sched)
				fputs(",on-cpu,off-cpu", out);
		}
		fputs(",debug,function\n", out);
	} else if (p->format == FMT_JSON) {
		fprintf(out,
			"{\"cycle_frequency\":%.0f,\"unit\":\"%s\",\"functions\":[",
			p->freq, p->freq ? "seconds" : "ticks");
	}
	for (uint32_t i = 0; i < ro->n; i++) {
		const struct fstat *f = a->funcs[ro->rows[i]];

		if (a->per_thread && (!t || f->thread != t->index)) {
			uint32_t rows = 0;

			t = calls_thread(calls, f->thread);
			shown = 0;
			while (i + rows < ro->n &&
			       a->funcs[ro->rows[i + rows]]->thread == t->index)
				rows++;
			if (p->format == FMT_TEXT) {
				fprintf(out, "%sThread %s:\n", i ? "\n" : "",
					calls_thread_label(t, label,
							   sizeof(label)));
				text_head(p, rows);
			}
		}
		if (top && shown >= top)
			continue;
		shown++;
		print_row(p, f, a->per_thread ? t : NULL, first);
		first = false;
	}
	if (p->format == FMT_JSON)
		fputs("\n]}\n", out);
}

static void account_free(struct account *a)
{
	struct calls *calls = a->replay ? replay_calls(a->replay) : NULL;

	for (uint32_t i = 0; calls && i < calls_nthreads(calls); i++) {
		struct thread_state *s = tstate(calls_thread(calls, i));

		if (!s)
			continue;
		u64map_free_values(&s->recursion);
		free(s->seen);
		free(s);
	}
	replay_free(a->replay);
	table_free(&a->functions);
	free(a->firsts);
	order_stats_free(a->durations);
	stats_feed_free(a->feed);
}

static const struct replay_hooks account_hooks = {
	.calls = {
		.done = on_done,
		.unmatched = on_unmatched,
		.thread = on_thread,
	},
};

/*
 * --jobs.
 */
/* Whether workers can share @path's threads out with these options. */
static bool shareable(const struct analysis_opts *o, const struct account *a,
		      const char *path, unsigned int jobs)
{
	return !a->strict && !a->per_thread && !a->recursive_only &&
	       analysis_shareable(o, path, jobs);
}

/* The workers' rows into @m's, in the order of the store's sets. */
static int merge_workers(void *into, void *workers, unsigned int n,
			 const struct shared_stats *sh)
{
	struct account *m = into, *w = workers;

	for (uint32_t set = 0; set < shared_stats_nsets(sh); set++) {
		int32_t id = (int32_t)shared_stats_key(sh, set);
		uint32_t index;
		bool created;
		struct fstat *f = table_get(&m->functions, (uint32_t)id, &index,
					    &created);

		if (!f)
			return -ENOMEM;
		f->id = id;
		f->index = index;
		f->min = UINT64_MAX;
		f->first_rank = UINT64_MAX;
		f->first_seq = UINT64_MAX;
	}
	m->funcs = (struct fstat **)m->functions.items;
	m->nfuncs = m->functions.n;
	for (unsigned int k = 0; k < n; k++) {
		struct account *a = &w[k];

		for (uint32_t i = 0; i < a->nfuncs; i++) {
			const struct fstat *s = a->funcs[i];
			uint32_t set = stats_feed_set(a->feed, i);
			struct fstat *f;

			/* each has a duration in the store, so a set */
			if (set >= m->nfuncs)
				return -EIO;
			f = m->funcs[set];
			f->count += s->count;
			f->sum += s->sum;
			f->self += s->self;
			f->on += s->on;
			f->off += s->off;
			if (s->min < f->min)
				f->min = s->min;
			if (s->max > f->max)
				f->max = s->max;
		}
		/* a function's first latency: of the first thread in
		 * llvm-xray's order, whichever worker read it */
		for (size_t i = 0; i < a->nfirsts; i++) {
			struct fstat *f = m->funcs[stats_feed_set(
				a->feed, a->firsts[i].func)];
			uint64_t rank = replay_thread_rank(a->replay,
							   a->firsts[i].thread);

			if (rank < f->first_rank ||
			    (rank == f->first_rank &&
			     a->firsts[i].seq < f->first_seq)) {
				f->first_rank = rank;
				f->first_seq = a->firsts[i].seq;
			}
		}
	}
	m->firsts_ranked = true;
	return 0;
}

static void worker_init(void *w)
{
	struct account *a = w;

	table_init(&a->functions, sizeof(struct fstat), MAX_FUNCTIONS);
}

static void worker_attach(void *w, struct replay *r, struct stats_feed *feed)
{
	struct account *a = w;

	a->replay = r;
	a->feed = feed;
}

static void worker_free(void *w)
{
	account_free(w);
}

static const struct shared_read_ops account_shared = {
	.cmd = "account",
	.hooks = &account_hooks,
	.size = sizeof(struct account),
	.init = worker_init,
	.attach = worker_attach,
	.key = func_id_key,
	.merge = merge_workers,
	.free = worker_free,
};

/* only -recursive-calls-only follows entries: a call less per call */
static const struct replay_hooks recursive_hooks = {
	.calls = {
		.enter = on_enter,
		.done = on_done,
		.unmatched = on_unmatched,
		.thread = on_thread,
	},
};

static int account_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "sortorder", required_argument, NULL, 'r' },
		{ "top", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "compat", no_argument, NULL, 'C' },
		{ "deduce-sibling-calls", no_argument, NULL, 'd' },
		{ "strict", no_argument, NULL, 'S' },
		{ "recursive-calls-only", no_argument, NULL, 'R' },
		{ "per-thread", no_argument, NULL, 'T' },
		{ "jobs", required_argument, NULL, 'j' },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	struct printer p = { .format = FMT_TEXT };
	struct analysis_opts o;
	struct account a = { 0 };
	enum sort_field field = SORT_FUNCID;
	bool dsc = false, deduce = false;
	uint64_t top = 0;
	struct row_order ro = { 0 };
	struct read_facts facts = { 0 };
	unsigned int jobs = analysis_default_jobs();
	const char *path;
	char err[512];
	int opt, ret, alone = 1, status = EXIT_USAGE;
	size_t i;

	analysis_opts_init(&o, "account");
	if (llvm_style_options("account", argc, argv, longopts))
		return EXIT_USAGE;
	while ((opt = getopt_long(
			argc, argv,
			"s:r:p:f:dj:" REPLAY_SHORTOPTS ANALYSIS_SHORTOPTS,
			longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			for (i = 0;
			     i < sizeof(sort_names) / sizeof(*sort_names); i++)
				if (!strcmp(optarg, sort_names[i]))
					break;
			if (i == sizeof(sort_names) / sizeof(*sort_names)) {
				tool_error(
					"account",
					"unknown sort field '%s' (see --help)",
					optarg);
				return EXIT_USAGE;
			}
			field = (enum sort_field)i;
			break;
		case 'r':
			if (strcmp(optarg, "asc") && strcmp(optarg, "dsc")) {
				tool_error(
					"account",
					"--sortorder is asc or dsc, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			dsc = !strcmp(optarg, "dsc");
			break;
		case 'p':
			if (parse_uint(optarg, 0, UINT32_MAX, &top)) {
				tool_error("account",
					   "bad value '%s' for --top", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				p.format = FMT_TEXT;
			else if (!strcmp(optarg, "csv"))
				p.format = FMT_CSV;
			else if (!strcmp(optarg, "json"))
				p.format = FMT_JSON;
			else {
				tool_error(
					"account",
					"unknown format '%s' (text, csv, json)",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'C':
			p.compat = true;
			break;
		case 'd':
			deduce = true;
			break;
		case 'S':
			a.strict = true;
			break;
		case 'T':
			a.per_thread = true;
			break;
		case 'R':
			a.recursive_only = true;
			break;
		case 'j':
			if (analysis_jobs("account", optarg, &jobs))
				return EXIT_USAGE;
			break;
		case 'h':
			account_usage(stdout);
			return EXIT_OK;
		default:
			if (analysis_option(&o, opt, optarg, account_usage))
				return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_error("account", "expects exactly one FILE (see --help)");
		return EXIT_USAGE;
	}
	path = argv[optind];
	table_init(&a.functions, sizeof(struct fstat), MAX_FUNCTIONS);
	a.keep_going = o.in.keep_going;
	a.strict = a.strict || p.compat;
	if (p.compat && a.per_thread) {
		tool_error(
			"account",
			"--per-thread is not llvm-xray's: it does not go with --compat");
		return EXIT_USAGE;
	}
	if (analysis_find_map(&o, path)) {
		analysis_opts_free(&o);
		return EXIT_USAGE;
	}
	p.syms = analysis_symbols_open(&o, true, err, sizeof(err));
	if (!p.syms) {
		tool_error("account", "%s", err);
		return EXIT_USAGE;
	}
	if (shareable(&o, &a, path, jobs))
		alone = analysis_shared_done(
			"account", path,
			shared_read(&account_shared, &a, &o.in, path, jobs,
				    o.min_ns, o.sort_memory, &a.durations,
				    &facts));
	if (alone < 0)
		goto out;
	status = EXIT_OK;
	if (!alone)
		goto rows;
	a.durations = order_stats_new(o.sort_memory);
	a.replay = replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = "account",
		.mode = !a.strict ? CALLS_UNWIND :
			deduce	  ? CALLS_DEDUCE :
				    CALLS_STRICT,
		.by_tid = true,
		.in = o.in,
		.hooks = a.recursive_only ? &recursive_hooks : &account_hooks,
		.ctx = &a,
		.names = p.syms,
		.tids = o.tids,
		.ntids = o.ntids,
		.range = o.range,
		.filter = o.filter,
		.map_path = o.instr_map,
		.min_ns = o.min_ns,
	});
	if (!a.durations || !a.replay) {
		tool_error("account", "out of memory");
		goto out;
	}
	status = replay_file(a.replay, path);
	if (replay_stopped(a.replay))
		goto out;
	if (replay_check_tids(a.replay)) {
		status = EXIT_USAGE;
		goto out;
	}
	read_facts_of(a.replay, &facts);
rows:
	p.freq = facts.freq;
	order_stats_jobs(a.durations, jobs);
	ret = order_stats_select(a.durations, ranks, pick, &a);
	if (!ret)
		ret = order_rows(&a, p.syms, field, dsc, &ro);
	if (!ret && a.per_thread)
		ret = group_by_thread(&a, &ro);
	if (ret) {
		tool_error("account", "%s", order_stats_why(a.durations, ret));
		status = EXIT_USAGE;
		goto out;
	}
	p.sched = facts.sched;
	p.out = analysis_open_output(&o);
	if (!p.out) {
		status = EXIT_USAGE;
		goto out;
	}
	print_rows(&a, &p, &ro, (uint32_t)top);
	status = analysis_close_output(&o, p.out, status);
	if (!a.strict) {
		replay_note_counts("account", path, facts.before,
				   facts.unwound);
	} else if (replay_unmatched(a.replay)) {
		tool_error(
			"account",
			"%s: skipped %" PRIu64
			" exits that matched no entry on their thread's stack",
			path, replay_unmatched(a.replay));
		/* as llvm-xray: --keep-going makes them a warning */
		if (!a.keep_going)
			status = EXIT_INVALID;
	}
out:
	free(ro.rows);
	account_free(&a);
	analysis_opts_free(&o);
	symbols_free(p.syms);
	return status;
}

const struct command cmd_account = {
	.name = "account",
	.summary =
		"per-function call statistics (llvm-xray account), self and on/off-CPU time",
	.run = account_run,
	.usage = account_usage,
};
