// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr graph: the call graph as Graphviz dot, with llvm-xray graph's
 * statistics on edges (caller -> callee) and vertices (functions): count,
 * min, median, 90th and 99th percentile, max and sum of call durations.
 *
 * Exact order statistics need every duration: they go through the external
 * sort, keyed by edge or vertex and duration.  Edges and vertices come out
 * in the order of llvm-xray's DenseMaps, which depends on when each was
 * first seen in the trace sorted by time; we note that moment for each.
 *
 * With --jobs, workers each read the calls of a share of an FDR log's
 * threads, as account's do (see there): their edges and vertices are
 * added up, each first seen where the earliest of them was (by time, then
 * by place in the log, as one reader meets them).  llvm-xray's minimum
 * forgets what came before a call of no time; a worker that meets one
 * leaves the log to one reader.
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

/* durations of edge i are set 2i, of vertex j set 2j + 1 */
#define MAX_ITEMS (ORDER_STATS_MAX_SETS / 2)

enum stat_type {
	STAT_NONE,
	STAT_COUNT,
	STAT_MIN,
	STAT_MED,
	STAT_PCT90,
	STAT_PCT99,
	STAT_MAX,
	STAT_SUM,
};

static const char *const stat_names[] = {
	"none", "count", "min", "med", "90p", "99p", "max", "sum",
};

static void graph_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr graph [OPTIONS] FILE\n"
		"\n"
		"Write the call graph of a trace as Graphviz dot, as 'llvm-xray graph'\n"
		"does for the same input: a vertex per function (F<id>), an edge per\n"
		"caller and callee (F0 is the caller of a thread's outermost calls),\n"
		"each with statistics of the calls' durations in seconds.  Render it\n"
		"with 'dot -Tsvg'.  The trace is read once; durations for the medians and\n"
		"percentiles go through temporary files beyond --sort-memory.\n"
		"\n"
		"Options:\n"
		"  -e, --edge-label=STAT     label edges with STAT: none (default), count,\n"
		"                            min, med, 90p, 99p, max or sum\n"
		"  -v, --vertex-label=STAT   label vertices with their name and STAT\n"
		"  -c, --color-edges=STAT    colour edges by STAT (OrRd scale)\n"
		"  -b, --color-vertices=STAT colour vertices by STAT\n"
		"  -m, --instr-map=BINARY    name functions from BINARY\n"
		"      --no-build-id-check   use BINARY even if the log was\n"
		"                            recorded from another build\n"
		"      --strict              match exits as llvm-xray does: only the top\n"
		"                            of the thread's stack may exit, and an exit\n"
		"                            that matches no entry is an error\n"
		"  -d, --deduce-sibling-calls\n"
		"                            with --strict: an exit that does not match\n"
		"                            the top of its thread's stack ends the calls\n"
		"                            above the one it matches (llvm-xray -d)\n"
		"  -F, --filter=PATTERN      only the calls of matching functions and\n"
		"                            what they call (glob or /regex/;\n"
		"                            repeatable)\n"
		"  -N, --notrace=PATTERN     leave out the calls of matching functions\n"
		"                            and what they call\n"
		"      --tid=TID[,TID...]    only the calls of these threads\n"
		"      --time-range=START,END\n"
		"                            only the events in this range (see\n"
		"                            'xrayfdr replay --help')\n"
		"      --around-trigger[=TIME]  in a snapshot a trigger took, only the\n"
		"                          events TIME (1ms) around the triggering call\n"
		"      --min-duration=TIME   only calls that lasted TIME or more (5us, 2ms,\n"
		"                            1s; a bare number is microseconds); a call\n"
		"                            left out adds to its caller's self time\n"
		"  -k, --keep-going          skip damaged input, count it, exit 1; with\n"
		"                            --strict, skip exits that match nothing,\n"
		"                            count them, exit 0 (as llvm-xray)\n"
		"  -o, --output=FILE         write to FILE instead of standard output\n"
		"      --sort-memory=SIZE    RAM for durations (default 256M)\n"
		"  -j, --jobs=N              read with N threads (default: one per CPU,\n"
		"                            up to 2; 1: one), each the calls of a share\n"
		"                            of the log's threads; the output is the same\n"
		"      --input-format=F      xray, yaml or tracelog instead of recognising it\n"
		"  -q, --quiet               no progress line on a terminal\n"
		"  -h, --help                show this help\n"
		"\n"
		"Calls are matched as in 'xrayfdr account' (see its --help): exits of\n"
		"calls an exception or longjmp went through end them there; exits with\n"
		"no entry, of calls entered before the trace began, are not counted.\n"
		"\n"
		"Exit status: 0 done, 1 the input is invalid or (--strict, without\n"
		"--keep-going) an exit matched no entry, 2 usage or I/O error.\n");
}

/* llvm-xray's TimeStat: min ignores 0 as "unset", as it does. */
struct stat {
	int64_t count;
	uint64_t min, max, sum;
	uint64_t med, p90, p99;
	/* first seen in the time-sorted trace: (tsc, thread rank, seq) */
	uint64_t first_tsc, first_seq;
	uint32_t first_thread, first_sub;
	uint64_t first_off; /* where in the log (--jobs) */
	uint64_t first_rank; /* --jobs: its thread's, once ranked */
};

struct edge {
	int32_t from, to;
	uint32_t index;
	struct stat s;
};

struct vertex {
	int32_t id;
	uint32_t index;
	bool listed; /* its name was taken at an entry */
	struct stat s;
};

struct graph {
	struct replay *replay;
	bool keep_going, strict;
	struct table edge_tab, vertex_tab;
	struct edge **edges; /* the tables' records, by number */
	struct vertex **vertices;
	uint32_t nedges, nvertices;
	struct order_stats *durations;
	uint32_t sub;
	uint64_t sub_seq; /* the event whose notes sub counts */
	uint32_t thread_index;
	/* --jobs: a worker's way to the durations' store, and whether it
	 * met a call of no time; the merged graph's stats by set, and
	 * whether its items' first_rank are set */
	struct stats_feed *feed;
	bool zero;
	struct stat **by_set;
	bool ranked;
};

/* @tsc, @off: of the event being matched */
static void note_first(struct graph *g, struct stat *s, uint64_t tsc,
		       uint64_t off)
{
	uint64_t seq;

	/* the trace's first moment wins; among equal timestamps, the first
	 * seen (llvm-xray's own order among them is left to the sort) */
	if (s->first_seq && tsc >= s->first_tsc)
		return;
	seq = replay_input(g->replay)->seq;
	/* the order of what one event noted first */
	if (seq != g->sub_seq) {
		g->sub_seq = seq;
		g->sub = 0;
	}
	s->first_tsc = tsc;
	s->first_off = off;
	s->first_thread = g->thread_index;
	s->first_seq = seq;
	s->first_sub = g->sub++;
}

static __attribute__((noinline)) struct vertex *vertex_slow(struct graph *g,
							    int32_t id)
{
	uint32_t index;
	bool created;
	struct vertex *v =
		table_get(&g->vertex_tab, (uint32_t)id, &index, &created);

	if (v && created) {
		v->id = id;
		v->index = index;
		g->vertices = (struct vertex **)g->vertex_tab.items;
		g->nvertices = g->vertex_tab.n;
	}
	return v;
}

static inline struct vertex *vertex(struct graph *g, int32_t id)
{
	struct vertex *v = table_find_cached(&g->vertex_tab, (uint32_t)id);

	return v ? v : vertex_slow(g, id);
}

static struct edge *edge(struct graph *g, int32_t from, int32_t to)
{
	uint64_t key = (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
	uint32_t index;
	bool created;
	struct edge *e = table_get(&g->edge_tab, key, &index, &created);

	if (e && created) {
		e->from = from;
		e->to = to;
		e->index = index;
		g->edges = (struct edge **)g->edge_tab.items;
		g->nedges = g->edge_tab.n;
	}
	return e;
}

static void update(struct stat *s, uint64_t d)
{
	s->count++;
	if (s->min > d || s->min == 0)
		s->min = d;
	if (s->max < d)
		s->max = d;
	s->sum += d;
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct graph *g = ctx;
	struct vertex *v;

	(void)depth;
	if (!f->func_id)
		return;
	g->thread_index = t->index;
	v = vertex(g, f->func_id);
	if (!v) {
		replay_fail(g->replay, -ENOMEM);
		return;
	}
	note_first(g, &v->s, ev->tsc, ev->offset);
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct graph *g = ctx;
	int32_t from = d->depth ? t->stack[d->depth - 1].func_id : 0;
	struct vertex *vf, *vt;
	struct edge *e;
	int ret;

	g->thread_index = t->index;
	/* as llvm-xray's Graph: the edge's ends become vertices, then the
	 * edge is made */
	vf = vertex(g, from);
	if (vf)
		note_first(g, &vf->s, d->exit_tsc, d->offset);
	vt = vertex(g, d->func_id);
	if (vt)
		note_first(g, &vt->s, d->exit_tsc, d->offset);
	e = edge(g, from, d->func_id);
	if (!vf || !vt || !e) {
		replay_fail(g->replay, -ENOMEM);
		return;
	}
	note_first(g, &e->s, d->exit_tsc, d->offset);
	update(&e->s, d->dur);
	update(&vt->s, d->dur);
	if (g->feed) {
		g->zero |= !d->dur;
		ret = stats_feed_add(g->feed, 2 * e->index, d->dur);
		if (!ret)
			ret = stats_feed_add(g->feed, 2 * vt->index + 1,
					     d->dur);
		if (ret)
			replay_fail(g->replay, ret);
		return;
	}
	ret = order_stats_add(g->durations, 2 * e->index, d->dur);
	if (!ret)
		ret = order_stats_add(g->durations, 2 * vt->index + 1, d->dur);
	if (ret && ret != -ENOMEM) {
		tool_error("graph", "%s", order_stats_why(g->durations, ret));
		ret = -EIO;
	}
	if (ret)
		replay_fail(g->replay, ret);
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct graph *g = ctx;
	const struct replay_input *in = replay_input(g->replay);
	char where[48];

	(void)t;
	if (g->keep_going || !g->strict)
		return;
	tool_error(
		"graph",
		"%s: record at %s: thread %" PRIu32
		": exit of function %" PRId32
		" does not match the top of its thread's stack (see --deduce-sibling-calls and --keep-going)",
		in->path,
		trace_where(in->format, ev->offset, where, sizeof(where)),
		ev->tid, ev->func_id);
	replay_fail(g->replay, -EBADMSG);
}

static const struct replay_hooks graph_hooks = {
	.calls = {
		.enter = on_enter,
		.done = on_done,
		.unmatched = on_unmatched,
	},
};

/*
 * --jobs.
 */

/* A worker's item's key in the store: edge i (item 2i) by its ends,
 * vertex j (item 2j + 1) by its function (FDR ids have 28 bits) */
#define EDGE_KEY (1ull << 62)
#define ID_MASK ((1u << 28) - 1)

static uint64_t item_key(void *ctx, uint32_t item)
{
	const struct graph *g = ctx;
	const struct edge *e = g->edges[item / 2];

	if (item % 2)
		return (uint32_t)g->vertices[item / 2]->id & ID_MASK;
	return EDGE_KEY | (uint64_t)((uint32_t)e->from & ID_MASK) << 28 |
	       ((uint32_t)e->to & ID_MASK);
}

/* A worker's @s into @to: its thread's rank is @rank. */
static void merge_stat(struct stat *to, const struct stat *s, uint64_t rank)
{
	to->count += s->count;
	to->sum += s->sum;
	if (s->max > to->max)
		to->max = s->max;
	if (s->min && (!to->min || s->min < to->min))
		to->min = s->min;
	/* first seen: the earliest, then the first in the log, as one
	 * reader would have seen it first */
	if (s->first_seq &&
	    (!to->first_seq || s->first_tsc < to->first_tsc ||
	     (s->first_tsc == to->first_tsc && s->first_off < to->first_off))) {
		to->first_tsc = s->first_tsc;
		to->first_off = s->first_off;
		to->first_seq = s->first_seq;
		to->first_sub = s->first_sub;
		to->first_thread = s->first_thread;
		to->first_rank = rank;
	}
}

/* The workers' edges and vertices into @m's; the store's sets as @m's
 * stats. */
static int merge_graphs(void *into, void *workers, unsigned int n,
			const struct shared_stats *sh)
{
	struct graph *m = into, *w = workers;
	uint32_t nsets = shared_stats_nsets(sh);

	m->by_set = calloc(nsets + 1, sizeof(*m->by_set));
	if (!m->by_set)
		return -ENOMEM;
	for (uint32_t set = 0; set < nsets; set++) {
		uint64_t key = shared_stats_key(sh, set);
		struct edge *e = NULL;
		struct vertex *v = NULL;

		if (key & EDGE_KEY)
			e = edge(m, (int32_t)(key >> 28 & ID_MASK),
				 (int32_t)(key & ID_MASK));
		else
			v = vertex(m, (int32_t)key);
		if (!e && !v)
			return -ENOMEM;
		m->by_set[set] = e ? &e->s : &v->s;
	}
	for (unsigned int k = 0; k < n; k++) {
		struct graph *g = &w[k];

		for (uint32_t i = 0; i < g->nvertices; i++) {
			const struct vertex *s = g->vertices[i];
			struct vertex *v = vertex(m, s->id);

			if (!v)
				return -ENOMEM;
			merge_stat(&v->s, &s->s,
				   replay_thread_rank(g->replay,
						      s->s.first_thread));
		}
		for (uint32_t i = 0; i < g->nedges; i++) {
			const struct edge *s = g->edges[i];
			struct edge *e = edge(m, s->from, s->to);

			if (!e)
				return -ENOMEM;
			merge_stat(&e->s, &s->s,
				   replay_thread_rank(g->replay,
						      s->s.first_thread));
		}
	}
	m->ranked = true;
	return 0;
}

static void graph_free(struct graph *g)
{
	replay_free(g->replay);
	order_stats_free(g->durations);
	stats_feed_free(g->feed);
	free(g->by_set);
	table_free(&g->edge_tab);
	table_free(&g->vertex_tab);
}

static void worker_init(void *w)
{
	struct graph *g = w;

	table_init(&g->edge_tab, sizeof(struct edge), MAX_ITEMS);
	table_init(&g->vertex_tab, sizeof(struct vertex), MAX_ITEMS);
}

static void worker_attach(void *w, struct replay *r, struct stats_feed *feed)
{
	struct graph *g = w;

	g->replay = r;
	g->feed = feed;
}

/* A call of no time: one reader follows what came before it. */
static bool worker_alone(const void *w)
{
	return ((const struct graph *)w)->zero;
}

static void worker_free(void *w)
{
	graph_free(w);
}

static const struct shared_read_ops graph_shared = {
	.cmd = "graph",
	.hooks = &graph_hooks,
	.size = sizeof(struct graph),
	.init = worker_init,
	.attach = worker_attach,
	.key = item_key,
	.alone = worker_alone,
	.merge = merge_graphs,
	.free = worker_free,
};

/* llvm-xray graph picks with integer arithmetic. */
/* llvm-xray graph's picks. */
static unsigned int ranks(void *ctx, uint32_t set, uint64_t count,
			  uint64_t *out)
{
	(void)ctx;
	(void)set;
	out[0] = count / 2;
	out[1] = count * 9 / 10;
	out[2] = count * 99 / 100;
	return 3;
}

static void pick(void *ctx, uint32_t set, uint64_t rank, uint64_t value)
{
	struct graph *g = ctx;
	struct stat *s = g->by_set ? g->by_set[set] :
			 set % 2   ? &g->vertices[set / 2]->s :
				     &g->edges[set / 2]->s;

	if (rank == (uint64_t)s->count / 2)
		s->med = value;
	if (rank == (uint64_t)(s->count * 9) / 10)
		s->p90 = value;
	if (rank == (uint64_t)(s->count * 99) / 100)
		s->p99 = value;
}

/*
 * Output in llvm-xray's order.
 */
struct item_order {
	struct stat *s;
	uint32_t index;
	uint64_t rank;
};

static int cmp_item(const void *x, const void *y)
{
	const struct item_order *a = x, *b = y;

	if (a->s->first_tsc != b->s->first_tsc)
		return a->s->first_tsc < b->s->first_tsc ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->s->first_seq != b->s->first_seq)
		return a->s->first_seq < b->s->first_seq ? -1 : 1;
	return a->s->first_sub < b->s->first_sub ? -1 : 1;
}

/* The DenseMap order of items inserted in time order. */
static int item_order(struct graph *g, bool vertices, uint32_t *out)
{
	uint32_t n = vertices ? g->nvertices : g->nedges;
	struct item_order *items = malloc((n + 1) * sizeof(*items));
	uint32_t *hashes = malloc((n + 1) * sizeof(*hashes));
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	int ret = -ENOMEM;

	if (!items || !hashes || !order)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		struct stat *s = vertices ? &g->vertices[i]->s :
					    &g->edges[i]->s;

		items[i] = (struct item_order){
			.s = s,
			.index = i,
			.rank = g->ranked ? s->first_rank :
					    replay_thread_rank(g->replay,
							       s->first_thread)
		};
	}
	qsort(items, n, sizeof(*items), cmp_item);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = items[i].index;

		hashes[i] =
			vertices ? llvm_hash_u32((uint32_t)g->vertices[k]->id) :
				   llvm_hash_pair(
					   llvm_hash_u32(
						   (uint32_t)g->edges[k]->from),
					   llvm_hash_u32(
						   (uint32_t)g->edges[k]->to));
	}
	ret = llvm_densemap_order(hashes, n, order);
	if (!ret)
		for (uint32_t i = 0; i < n; i++)
			out[i] = items[order[i]].index;
out:
	free(items);
	free(hashes);
	free(order);
	return ret;
}

/* The stat as llvm-xray prints it: count as an integer, the others as
 * doubles in seconds, written the way raw_ostream writes a double. */
static double stat_value(const struct stat *s, enum stat_type t, double freq)
{
	double v;

	switch (t) {
	case STAT_COUNT:
		return (double)s->count;
	case STAT_MIN:
		v = (double)s->min;
		break;
	case STAT_MED:
		v = (double)s->med;
		break;
	case STAT_PCT90:
		v = (double)s->p90;
		break;
	case STAT_PCT99:
		v = (double)s->p99;
		break;
	case STAT_MAX:
		v = (double)s->max;
		break;
	case STAT_SUM:
		v = (double)s->sum;
		break;
	default:
		return 0;
	}
	return freq ? v / freq : v;
}

static void print_stat(FILE *out, const struct stat *s, enum stat_type t,
		       double freq)
{
	if (t == STAT_NONE)
		return;
	if (t == STAT_COUNT)
		fprintf(out, "%" PRId64, s->count);
	else
		fprintf(out, "%e", stat_value(s, t, freq));
}

/* llvm-xray's ColorHelper with the OrRd scheme of colorbrewer2.org:
 * interpolation in HSV between nine colours. */
static const uint8_t orrd[9][3] = {
	{ 255, 247, 236 }, { 254, 232, 200 }, { 253, 212, 158 },
	{ 253, 187, 132 }, { 252, 141, 89 },  { 239, 101, 72 },
	{ 215, 48, 31 },   { 179, 0, 0 },     { 127, 0, 0 },
};

static void to_hsv(const uint8_t c[3], double hsv[3])
{
	double s[3] = { c[0] / 255.0, c[1] / 255.0, c[2] / 255.0 };
	unsigned int mn = 0, mx = 0;
	double chroma, h;

	for (unsigned int i = 1; i < 3; i++) {
		if (s[i] < s[mn])
			mn = i;
		if (s[i] > s[mx])
			mx = i;
	}
	chroma = s[mx] - s[mn];
	h = chroma == 0 ? 0 : (s[(mx + 1) % 3] - s[(mx + 2) % 3]) / chroma;
	h += 2.0 * mx;
	hsv[0] = h < 0 ? (h + 6.0) * 60 : h * 60;
	hsv[2] = s[mx];
	hsv[1] = hsv[2] == 0.0 ? 0.0 : chroma / hsv[2];
}

static unsigned int to_byte(double b)
{
	b = b < 0 ? 0 : b > 1 ? 1 : b;
	return (unsigned int)(uint8_t)(255 * b + 0.5);
}

static void colour_string(char *buf, size_t len, double point)
{
	double h0[3], h1[3], hsv[3], width = 1.0 / 8, t, d, x, c, mn, rgb[3];
	size_t section;
	int hi;

	if (point < 0.0) {
		snprintf(buf, len, "#%02X%02X%02X", orrd[0][0], orrd[0][1],
			 orrd[0][2]);
		return;
	}
	if (point > 1.0 || isnan(point)) {
		snprintf(buf, len, "#%02X%02X%02X", orrd[8][0], orrd[8][1],
			 orrd[8][2]);
		return;
	}
	section = (size_t)floor(point / width);
	t = (point - (double)section * width) / width;
	to_hsv(orrd[section], h0);
	to_hsv(orrd[section + 1 < 9 ? section + 1 : 8], h1);
	/* hue the short way round */
	d = h1[0] - h0[0];
	if (h0[0] > h1[0]) {
		double tmp = h0[0];

		h0[0] = h1[0];
		h1[0] = tmp;
		d = -d;
		t = 1 - t;
	}
	if (d <= 180)
		hsv[0] = h0[0] + t * (h1[0] - h0[0]);
	else
		hsv[0] = fmod(h0[0] + 360 + t * (h1[0] - h0[0] - 360) + 720,
			      360);
	/* saturation and value use the original t */
	t = (point - (double)section * width) / width;
	hsv[1] = h0[1] + t * (h1[1] - h0[1]);
	hsv[2] = h0[2] + t * (h1[2] - h0[2]);
	c = hsv[2] * hsv[1];
	x = c * (1 - fabs(fmod(hsv[0] / 60, 2.0) - 1));
	hi = (int)(hsv[0] / 60);
	rgb[(hi / 2) % 3] = hi % 2 == 0 ? c : x;
	rgb[(hi / 2 + 1) % 3] = hi % 2 == 0 ? x : c;
	rgb[(hi / 2 + 2) % 3] = 0.0;
	mn = hsv[2] - c;
	snprintf(buf, len, "#%02X%02X%02X", to_byte(rgb[0] + mn),
		 to_byte(rgb[1] + mn), to_byte(rgb[2] + mn));
}

struct dot_opts {
	enum stat_type edge_label, vertex_label, edge_color, vertex_color;
	double freq;
};

static double max_of(struct graph *g, bool vertices, enum stat_type t,
		     double freq)
{
	double m = 0;
	uint32_t n = vertices ? g->nvertices : g->nedges;

	for (uint32_t i = 0; i < n; i++) {
		double v;

		if (vertices && g->vertices[i]->id == 0)
			continue;
		v = stat_value(vertices ? &g->vertices[i]->s : &g->edges[i]->s,
			       t, freq);
		if (v > m)
			m = v;
	}
	return m;
}

static void xml_escape(FILE *out, const char *s, size_t max)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len && i < max; i++) {
		if (s[i] == '&')
			fputs("&amp;", out);
		else if (s[i] == '<')
			fputs("&lt;", out);
		else if (s[i] == '>')
			fputs("&gt;", out);
		else
			putc(s[i], out);
	}
	if (len > max)
		fputs("...", out);
}

static int write_dot(struct graph *g, FILE *out, struct symbols *syms,
		     const struct dot_opts *o)
{
	uint32_t *eorder = malloc((g->nedges + 1) * sizeof(*eorder));
	uint32_t *vorder = malloc((g->nvertices + 1) * sizeof(*vorder));
	double emax = 0, vmax = 0;
	char colour[16];
	int ret = -ENOMEM;

	if (!eorder || !vorder)
		goto out;
	ret = item_order(g, false, eorder);
	if (!ret)
		ret = item_order(g, true, vorder);
	if (ret)
		goto out;
	if (o->edge_color)
		emax = max_of(g, false, o->edge_color, o->freq);
	if (o->vertex_color)
		vmax = max_of(g, true, o->vertex_color, o->freq);
	fputs("digraph xray {\n", out);
	if (o->vertex_label)
		fputs("node [shape=record];\n", out);
	for (uint32_t i = 0; i < g->nedges; i++) {
		const struct edge *e = g->edges[eorder[i]];

		fprintf(out, "F%" PRId32 " -> F%" PRId32 " [label=\"", e->from,
			e->to);
		print_stat(out, &e->s, o->edge_label, o->freq);
		fputc('"', out);
		if (o->edge_color) {
			colour_string(
				colour, sizeof(colour),
				sqrt(stat_value(&e->s, o->edge_color, o->freq) /
				     emax));
			fprintf(out, " color=\"%s\"", colour);
		}
		fputs("];\n", out);
	}
	for (uint32_t i = 0; i < g->nvertices; i++) {
		const struct vertex *v = g->vertices[vorder[i]];

		if (v->id == 0)
			continue;
		fprintf(out, "F%" PRId32 " [label=\"%s", v->id,
			o->vertex_label ? "{" : "");
		xml_escape(out, symbols_name(syms, v->id), 40);
		if (o->vertex_label) {
			fputc('|', out);
			print_stat(out, &v->s, o->vertex_label, o->freq);
			fputs("}\"", out);
		} else {
			fputc('"', out);
		}
		if (o->vertex_color) {
			colour_string(colour, sizeof(colour),
				      sqrt(stat_value(&v->s, o->vertex_color,
						      o->freq) /
					   vmax));
			fprintf(out, " color=\"%s\"", colour);
		}
		fputs("];\n", out);
	}
	fputs("}\n", out);
out:
	free(eorder);
	free(vorder);
	return ret;
}

static int parse_stat(const char *opt, const char *s, enum stat_type *out)
{
	for (size_t i = 0; i < sizeof(stat_names) / sizeof(*stat_names); i++) {
		if (!strcmp(s, stat_names[i])) {
			*out = (enum stat_type)i;
			return 0;
		}
	}
	tool_error(
		"graph",
		"--%s: unknown statistic '%s' (none, count, min, med, 90p, 99p, max, sum)",
		opt, s);
	return -1;
}

static int graph_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "edge-label", required_argument, NULL, 'e' },
		{ "vertex-label", required_argument, NULL, 'v' },
		{ "color-edges", required_argument, NULL, 'c' },
		{ "color-vertices", required_argument, NULL, 'b' },
		{ "deduce-sibling-calls", no_argument, NULL, 'd' },
		{ "strict", no_argument, NULL, 'S' },
		{ "jobs", required_argument, NULL, 'j' },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	struct analysis_opts o;
	struct dot_opts dot = { 0 };
	struct graph g = { 0 };
	struct symbols *syms = NULL;
	struct read_facts facts = { 0 };
	unsigned int jobs = analysis_default_jobs();
	const char *path;
	bool deduce = false;
	FILE *out;
	char err[512];
	int opt, ret, alone = 1, status = EXIT_USAGE;

	analysis_opts_init(&o, "graph");
	if (llvm_style_options("graph", argc, argv, longopts))
		return EXIT_USAGE;
	while ((opt = getopt_long(
			argc, argv,
			"e:v:c:b:dj:" REPLAY_SHORTOPTS ANALYSIS_SHORTOPTS,
			longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (parse_stat("edge-label", optarg, &dot.edge_label))
				return EXIT_USAGE;
			break;
		case 'v':
			if (parse_stat("vertex-label", optarg,
				       &dot.vertex_label))
				return EXIT_USAGE;
			break;
		case 'c':
			if (parse_stat("color-edges", optarg, &dot.edge_color))
				return EXIT_USAGE;
			break;
		case 'b':
			if (parse_stat("color-vertices", optarg,
				       &dot.vertex_color))
				return EXIT_USAGE;
			break;
		case 'd':
			deduce = true;
			break;
		case 'S':
			g.strict = true;
			break;
		case 'j':
			if (analysis_jobs("graph", optarg, &jobs))
				return EXIT_USAGE;
			break;
		case 'h':
			graph_usage(stdout);
			return EXIT_OK;
		default:
			if (analysis_option(&o, opt, optarg, graph_usage))
				return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_error("graph", "expects exactly one FILE (see --help)");
		return EXIT_USAGE;
	}
	path = argv[optind];
	table_init(&g.edge_tab, sizeof(struct edge), MAX_ITEMS);
	table_init(&g.vertex_tab, sizeof(struct vertex), MAX_ITEMS);
	g.keep_going = o.in.keep_going;
	if (analysis_find_map(&o, path)) {
		analysis_opts_free(&o);
		return EXIT_USAGE;
	}
	syms = analysis_symbols_open(&o, true, err, sizeof(err));
	if (!syms) {
		tool_error("graph", "%s", err);
		return EXIT_USAGE;
	}
	/* one log whose threads can be shared out, with options that do not
	 * follow it whole in order (a call left out by --min-duration is
	 * entered where it ends, not in the log's order) */
	if (!g.strict && !o.min_ns && analysis_shareable(&o, path, jobs))
		alone = analysis_shared_done(
			"graph", path,
			shared_read(&graph_shared, &g, &o.in, path, jobs, 0,
				    o.sort_memory, &g.durations, &facts));
	if (alone < 0)
		goto out;
	status = EXIT_OK;
	if (!alone)
		goto select;
	g.durations = order_stats_new(o.sort_memory);
	g.replay = replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = "graph",
		.mode = !g.strict ? CALLS_UNWIND :
			deduce	  ? CALLS_DEDUCE :
				    CALLS_STRICT,
		.by_tid = true,
		.in = o.in,
		.hooks = &graph_hooks,
		.ctx = &g,
		.names = syms,
		.tids = o.tids,
		.ntids = o.ntids,
		.range = o.range,
		.filter = o.filter,
		.map_path = o.instr_map,
		.min_ns = o.min_ns,
	});
	if (!g.durations || !g.replay) {
		tool_error("graph", "out of memory");
		goto out;
	}
	status = replay_file(g.replay, path);
	if (replay_stopped(g.replay))
		goto out;
	if (replay_check_tids(g.replay)) {
		status = EXIT_USAGE;
		goto out;
	}
	read_facts_of(g.replay, &facts);
select:
	dot.freq = facts.freq;
	order_stats_jobs(g.durations, jobs);
	ret = order_stats_select(g.durations, ranks, pick, &g);
	if (ret) {
		tool_error("graph", "%s", order_stats_why(g.durations, ret));
		status = EXIT_USAGE;
		goto out;
	}
	out = analysis_open_output(&o);
	if (!out) {
		status = EXIT_USAGE;
		goto out;
	}
	if (write_dot(&g, out, syms, &dot)) {
		tool_error("graph", "out of memory");
		status = EXIT_USAGE;
	}
	status = analysis_close_output(&o, out, status);
	if (!g.strict) {
		replay_note_counts("graph", path, facts.before, facts.unwound);
	} else if (replay_unmatched(g.replay)) {
		tool_error(
			"graph",
			"%s: skipped %" PRIu64
			" exits that matched no entry on their thread's stack",
			path, replay_unmatched(g.replay));
		/* as llvm-xray: --keep-going makes them a warning */
		if (!g.keep_going)
			status = EXIT_INVALID;
	}
out:
	graph_free(&g);
	analysis_opts_free(&o);
	symbols_free(syms);
	return status;
}

const struct command cmd_graph = {
	.name = "graph",
	.summary = "the call graph as Graphviz dot (llvm-xray graph)",
	.run = graph_run,
	.usage = graph_usage,
};
