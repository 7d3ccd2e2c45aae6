// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr stack: call-stack accounting, as llvm-xray stack (the top stacks
 * by time and count, or every stack), and flame graphs with exclusive time:
 * FlameGraph's folded format, or an SVG drawn here.
 *
 * The stacks are a trie (analysis/trie.h) built in one pass; with
 * --aggregate-threads the threads' tries are merged the way llvm-xray
 * merges them, so that its reports come out in the same order.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calls.h"
#include "analysis/cmdline.h"
#include "analysis/flamegraph.h"
#include "analysis/llvm_compat.h"
#include "analysis/replay.h"
#include "analysis/source.h"
#include "analysis/symbols.h"
#include "analysis/trie.h"
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
		"      --aggregate-threads  merge the stacks of all threads\n"
		"      --per-thread-stacks  text: a report per thread\n"
		"      --all-stacks         print every stack as llvm-xray --all-stacks\n"
		"                           --stack-format=flame does (inclusive values)\n"
		"      --stack-format=F     human or flame, as llvm-xray (flame goes with\n"
		"                           --all-stacks)\n"
		"      --aggregation-type=T with --all-stacks: time (default) or count\n"
		"      --title=TEXT         svg: the title (default: the file name)\n"
		"      --tid=TID[,TID...]   only the calls of these threads\n"
		"      --time-range=START,END\n"
		"                           only the events in this range (see\n"
		"                           'xrayfdr replay --help')\n"
		"      --strict             text and --all-stacks: match exits as llvm-xray\n"
		"                           stack does (below)\n"
		"  -k, --keep-going         skip damaged input (and, with --strict, go on\n"
		"                           after an exit that matches no entry, where\n"
		"                           llvm-xray stops), count it, exit 1\n"
		"  -o, --output=FILE        write to FILE instead of standard output\n"
		"      --input-format=F     xray, yaml or tracelog instead of recognising it\n"
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

struct thread_data {
	struct trie_thread roots;
	bool rooted;
	uint64_t root_seq; /* where its first root call was */
};

struct stack {
	struct trie trie;
	struct replay *replay;
	struct symbols *syms;
	enum stack_format format;
	bool keep_going;
	bool strict; /* llvm-xray's matching: an unmatched exit is an error */
};

static struct thread_data *tdata(struct call_thread *t)
{
	return t->user;
}

static void on_thread(void *ctx, struct call_thread *t)
{
	struct stack *s = ctx;
	struct thread_data *d = calloc(1, sizeof(*d));

	if (!d) {
		replay_fail(s->replay, -ENOMEM);
		return;
	}
	d->roots.tid = t->tid;
	t->user = d;
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct stack *s = ctx;
	struct thread_data *d = tdata(t);
	uint32_t parent = depth ? (uint32_t)t->stack[depth - 1].user :
				  TRIE_NONE;
	uint32_t node;

	(void)ev;
	if (!d)
		return;
	if (!depth && !d->rooted) {
		d->rooted = true;
		d->root_seq = replay_input(s->replay)->seq;
	}
	node = trie_child(&s->trie, &d->roots, parent, f->func_id);
	if (node == TRIE_NONE)
		replay_fail(s->replay, -ENOMEM);
	f->user = node;
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct stack *s = ctx;
	struct trie_node *n;

	if (d->frame->user == TRIE_NONE)
		return;
	n = &s->trie.nodes[d->frame->user];
	/* llvm-xray: the deepest frame an exit pops is a leaf ("terminal")
	 * unless the record before was an exit too */
	if (d->deepest && !t->last_was_exit) {
		n->term_count++;
		n->term_sum += (int64_t)d->dur;
	} else {
		n->inter_count++;
		n->inter_sum += (int64_t)d->dur;
	}
	n->self += d->self;
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct stack *s = ctx;
	const struct replay_input *in = replay_input(s->replay);
	char where[48];

	(void)t;
	if (!s->strict || s->keep_going)
		return;
	tool_error(
		"stack",
		"%s: record at %s: thread %" PRIu32
		": exit of function %" PRId32
		" with no matching entry on the thread's stack (see --keep-going)",
		in->path,
		trace_where(in->format, ev->offset, where, sizeof(where)),
		ev->tid, ev->func_id);
	replay_fail(s->replay, -EBADMSG);
}

static const struct replay_hooks stack_hooks = {
	.calls = {
		.enter = on_enter,
		.done = on_done,
		.unmatched = on_unmatched,
		.thread = on_thread,
	},
};

/*
 * llvm-xray's Roots: a DenseMap from thread id to the thread's roots,
 * filled as each thread makes its first root call.
 */
struct root_order {
	struct call_thread **threads;
	uint32_t n;
};

static const struct stack *sort_ctx;

static int cmp_first_root(const void *x, const void *y)
{
	const struct call_thread *a = *(struct call_thread *const *)x;
	const struct call_thread *b = *(struct call_thread *const *)y;
	uint64_t ra = replay_thread_rank(sort_ctx->replay, a->index);
	uint64_t rb = replay_thread_rank(sort_ctx->replay, b->index);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return tdata((struct call_thread *)a)->root_seq <
			       tdata((struct call_thread *)b)->root_seq ?
		       -1 :
		       1;
}

static int roots_order(struct stack *s, struct root_order *ro)
{
	struct calls *calls = replay_calls(s->replay);
	uint32_t n = calls_nthreads(calls), k = 0;
	struct call_thread **th = malloc((n + 1) * sizeof(*th));
	uint32_t *hashes = malloc((n + 1) * sizeof(*hashes));
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	int ret = -ENOMEM;

	if (!th || !hashes || !order)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		struct call_thread *t = calls_thread(calls, i);

		if (tdata(t) && tdata(t)->rooted)
			th[k++] = t;
	}
	sort_ctx = s;
	qsort(th, k, sizeof(*th), cmp_first_root);
	for (uint32_t i = 0; i < k; i++)
		hashes[i] = llvm_hash_u32(th[i]->tid);
	ret = llvm_densemap_order(hashes, k, order);
	if (ret)
		goto out;
	ro->threads = malloc((k + 1) * sizeof(*ro->threads));
	if (!ro->threads) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < k; i++)
		ro->threads[i] = th[order[i]];
	ro->n = k;
out:
	free(th);
	free(hashes);
	free(order);
	return ret;
}

/*
 * Merging threads, as llvm-xray's mergeTrieNodes: a new node for two
 * nodes of one function, whose callees are the right side's (merged with
 * the left's of the same function, or as they are), then the left's that
 * were not merged, in the order of a DenseMap of them by function id.
 */
static uint32_t merge_nodes(struct stack *s, uint32_t left, uint32_t right,
			    uint32_t parent)
{
	struct trie *t = &s->trie;
	uint32_t node = trie_new_node(t, parent, t->nodes[left].func_id);
	uint32_t nl, *lhash = NULL, *lorder = NULL;
	bool *used = NULL;

	if (node == TRIE_NONE)
		return TRIE_NONE;
#define SUM(field) \
	t->nodes[node].field = t->nodes[left].field + t->nodes[right].field
	SUM(term_count);
	SUM(inter_count);
	SUM(term_sum);
	SUM(inter_sum);
	SUM(self);
#undef SUM
	nl = t->nodes[left].nchildren;
	lhash = malloc((nl + 1) * sizeof(*lhash));
	lorder = malloc((nl + 1) * sizeof(*lorder));
	used = calloc(nl + 1, sizeof(*used));
	if (!lhash || !lorder || !used)
		goto fail;
	for (uint32_t i = 0; i < t->nodes[right].nchildren; i++) {
		uint32_t rc = t->nodes[right].children[i], merged = rc;

		for (uint32_t j = 0; j < nl; j++) {
			uint32_t lc = t->nodes[left].children[j];

			if (!used[j] &&
			    t->nodes[lc].func_id == t->nodes[rc].func_id) {
				used[j] = true;
				merged = merge_nodes(s, lc, rc, node);
				if (merged == TRIE_NONE)
					goto fail;
				break;
			}
		}
		if (trie_add_child(t, node, merged))
			goto fail;
	}
	for (uint32_t j = 0; j < nl; j++)
		lhash[j] = llvm_hash_u32(
			(uint32_t)t->nodes[t->nodes[left].children[j]].func_id);
	if (llvm_densemap_order(lhash, nl, lorder))
		goto fail;
	for (uint32_t k = 0; k < nl; k++)
		if (!used[lorder[k]] &&
		    trie_add_child(t, node, t->nodes[left].children[lorder[k]]))
			goto fail;
	free(lhash);
	free(lorder);
	free(used);
	return node;
fail:
	free(lhash);
	free(lorder);
	free(used);
	return TRIE_NONE;
}

/* mergeAcrossThreads: the merged roots, in llvm-xray's order. */
static int merge_threads(struct stack *s, const struct root_order *ro,
			 struct trie_thread *merged)
{
	for (uint32_t i = 0; i < ro->n; i++) {
		const struct trie_thread *r = &tdata(ro->threads[i])->roots;

		for (uint32_t j = 0; j < r->nroots; j++) {
			uint32_t node = r->roots[j], k;

			for (k = 0; k < merged->nroots; k++)
				if (s->trie.nodes[merged->roots[k]].func_id ==
				    s->trie.nodes[node].func_id)
					break;
			if (k < merged->nroots) {
				uint32_t m = merge_nodes(s, merged->roots[k],
							 node, TRIE_NONE);

				if (m == TRIE_NONE)
					return -ENOMEM;
				memmove(&merged->roots[k],
					&merged->roots[k + 1],
					(merged->nroots - k - 1) *
						sizeof(*merged->roots));
				merged->nroots--;
				node = m;
			}
			if (trie_add_root(merged, node))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Push @n children on a work stack (a pre-order walk pops them last
 * first, as llvm-xray's does). */
static int push_children(uint32_t **work, uint32_t *nwork, uint32_t *cap,
			 const uint32_t *children, uint32_t n)
{
	if (*nwork + n > *cap) {
		uint32_t c = *cap ? *cap : 64;
		uint32_t *w;

		while (c < *nwork + n)
			c *= 2;
		w = realloc(*work, c * sizeof(*w));
		if (!w)
			return -ENOMEM;
		*work = w;
		*cap = c;
	}
	if (n) /* a leaf's children are NULL */
		memcpy(*work + *nwork, children, n * sizeof(**work));
	*nwork += n;
	return 0;
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

static void print_stack(struct stack *s, FILE *out, uint32_t leaf)
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

static int print_report(struct stack *s, FILE *out, const uint32_t *roots,
			uint32_t nroots)
{
	struct top_entry by_sum[11], by_count[11];
	uint32_t nsum = 0, ncount = 0, *work = NULL, nwork = 0, cap = 0;
	uint64_t unique = 0;

	for (uint32_t r = 0; r < nroots; r++) {
		nwork = 0;
		if (push_children(&work, &nwork, &cap, &roots[r], 1))
			goto oom;
		while (nwork) {
			uint32_t top = work[--nwork];
			const struct trie_node *n = &s->trie.nodes[top];

			if (n->term_count) {
				unique++;
				top_insert(by_sum, &nsum, top,
					   (uint64_t)n->term_sum);
				top_insert(by_count, &ncount, top,
					   n->term_count);
			}
			if (push_children(&work, &nwork, &cap, n->children,
					  n->nchildren))
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
	return 0;
oom:
	free(work);
	return -ENOMEM;
}

/*
 * Every stack, one line each (llvm-xray --all-stacks, or our folded).
 * Pre-order from each root, children pushed in order and popped last
 * first, as llvm-xray walks them.
 */
struct path_builder {
	char *buf;
	size_t len, cap;
};

/* The names from the root to @node, after @prefix if any, joined by ';'
 * (and each followed by one if @trailing, as llvm-xray writes them). */
static int path_set(struct path_builder *p, struct stack *s, uint32_t node,
		    const char *prefix, bool trailing)
{
	uint32_t chain[4096], n = 0;

	p->len = 0;
	for (uint32_t x = node; x != TRIE_NONE && n < 4096;
	     x = s->trie.nodes[x].parent)
		chain[n++] = x;
	for (uint32_t i = 0; i <= n; i++) {
		const char *name =
			i == 0 ? prefix :
				 symbols_name(
					 s->syms,
					 s->trie.nodes[chain[n - i]].func_id);
		size_t l;

		if (!name)
			continue;
		l = strlen(name);
		if (p->len + l + 3 > p->cap) {
			size_t c = p->cap ? p->cap : 256;
			char *b;

			while (c < p->len + l + 3)
				c *= 2;
			b = realloc(p->buf, c);
			if (!b)
				return -ENOMEM;
			p->buf = b;
			p->cap = c;
		}
		if (p->len && !trailing)
			p->buf[p->len++] = ';';
		memcpy(p->buf + p->len, name, l);
		p->len += l;
		if (trailing)
			p->buf[p->len++] = ';';
	}
	if (!p->buf)
		return -ENOMEM;
	p->buf[p->len] = 0;
	return 0;
}

/* llvm-xray's lines: "thread_T;f;g; VALUE" (every frame followed by ';').
 * Ours: "thread_T;f;g SELF". */
static int print_all(struct stack *s, FILE *out, const uint32_t *roots,
		     uint32_t nroots, const char *prefix, bool llvm_style,
		     bool count)
{
	struct path_builder p = { 0 };
	uint32_t *work = NULL, nwork = 0, cap = 0;
	int ret = 0;

	for (uint32_t r = 0; r < nroots && !ret; r++) {
		nwork = 0;
		ret = push_children(&work, &nwork, &cap, &roots[r], 1);
		while (nwork && !ret) {
			uint32_t top = work[--nwork];
			const struct trie_node *n = &s->trie.nodes[top];
			uint64_t v;

			if (llvm_style) {
				v = count ? n->term_count + n->inter_count :
					    (uint64_t)(n->term_sum +
						       n->inter_sum);
				ret = path_set(&p, s, top, prefix, true);
				if (!ret)
					fprintf(out, "%s %" PRIu64 "\n", p.buf,
						v);
			} else if (n->self) {
				ret = path_set(&p, s, top, prefix, false);
				if (!ret)
					fprintf(out, "%s %" PRIu64 "\n", p.buf,
						n->self);
			}
			if (!ret)
				ret = push_children(&work, &nwork, &cap,
						    n->children, n->nchildren);
		}
	}
	free(work);
	free(p.buf);
	return ret;
}

/*
 * The SVG: a root per thread (or the merged roots), under "all".
 */
struct svg_tree {
	struct stack *s;
	const struct root_order *ro;
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
		return tdata(t->ro->threads[node - t->base - 1])->roots.nroots;
	return t->s->trie.nodes[node].nchildren;
}

static uint32_t svg_child(void *ctx, uint32_t node, uint32_t i)
{
	struct svg_tree *t = ctx;

	if (node == t->base)
		return t->merged ? t->merged->roots[i] : t->base + 1 + i;
	if (node > t->base)
		return tdata(t->ro->threads[node - t->base - 1])->roots.roots[i];
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

/* A thread's first frame: llvm-xray's "thread_T", and ours with its
 * name, where ';' would split the frame. */
static void folded_prefix(const struct call_thread *t, bool llvm, char *buf,
			  size_t len)
{
	if (llvm || !t->name[0]) {
		snprintf(buf, len, "thread_%" PRIu32, t->tid);
		return;
	}
	snprintf(buf, len, "thread_%" PRIu32 " (%s)", t->tid, t->name);
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
}

static int report(struct stack *s, FILE *out, const struct stack_opts *o)
{
	struct root_order ro = { 0 };
	struct trie_thread merged = { 0 };
	char prefix[48];
	int ret = roots_order(s, &ro);

	if (ret)
		return ret;
	if (o->aggregate)
		ret = merge_threads(s, &ro, &merged);
	if (ret)
		goto out;
	switch (o->format) {
	case FMT_TEXT:
		if (o->aggregate) {
			ret = print_report(s, out, merged.roots, merged.nroots);
		} else if (o->per_thread) {
			for (uint32_t i = 0; i < ro.n && !ret; i++) {
				const struct trie_thread *r =
					&tdata(ro.threads[i])->roots;

				fprintf(out, "Thread %" PRIu32 ":\n", r->tid);
				ret = print_report(s, out, r->roots, r->nroots);
				fputc('\n', out);
			}
		} else {
			struct trie_thread all = { 0 };

			for (uint32_t i = 0; i < ro.n && !ret; i++) {
				const struct trie_thread *r =
					&tdata(ro.threads[i])->roots;

				for (uint32_t j = 0; j < r->nroots && !ret; j++)
					ret = trie_add_root(&all, r->roots[j]);
			}
			if (!ret)
				ret = print_report(s, out, all.roots,
						   all.nroots);
			trie_thread_free(&all);
		}
		break;
	case FMT_ALL:
	case FMT_FOLDED:
		if (o->aggregate) {
			ret = print_all(s, out, merged.roots, merged.nroots,
					NULL, o->format == FMT_ALL, o->count);
			break;
		}
		for (uint32_t i = 0; i < ro.n && !ret; i++) {
			const struct trie_thread *r =
				&tdata(ro.threads[i])->roots;

			folded_prefix(ro.threads[i], o->format == FMT_ALL,
				      prefix, sizeof(prefix));
			ret = print_all(s, out, r->roots, r->nroots, prefix,
					o->format == FMT_ALL, o->count);
		}
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
		struct flame_opts fo = {
			.title = o->title ? o->title :
					    replay_input(s->replay)->path,
			.subtitle = o->aggregate ? "all threads merged" :
						   "by thread",
			.ticks_per_second = o->freq
		};

		ret = flamegraph_write(out, &ft, &fo);
		break;
	}
	}
out:
	trie_thread_free(&merged);
	free(ro.threads);
	return ret;
}

static void stack_free(struct stack *s)
{
	struct calls *calls = s->replay ? replay_calls(s->replay) : NULL;

	for (uint32_t i = 0; calls && i < calls_nthreads(calls); i++) {
		struct thread_data *d = tdata(calls_thread(calls, i));

		if (d) {
			trie_thread_free(&d->roots);
			free(d);
		}
	}
	replay_free(s->replay);
	trie_free(&s->trie);
}

static struct replay *stack_replay(struct stack *s, enum calls_mode mode,
				   const struct trace_opts *in,
				   const struct analysis_opts *o)
{
	s->replay = replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = in->cmd,
		.mode = mode,
		.by_tid = true,
		.in = *in,
		.hooks = &stack_hooks,
		.ctx = s,
		.names = s->syms,
		.tids = o ? o->tids : NULL,
		.ntids = o ? o->ntids : 0,
		.range = o ? o->range : (struct replay_range){ 0 },
	});
	return s->replay;
}

static int stack_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "aggregate-threads", no_argument, NULL, 'A' },
		{ "per-thread-stacks", no_argument, NULL, 'P' },
		{ "all-stacks", no_argument, NULL, 'a' },
		{ "stack-format", required_argument, NULL, 'F' },
		{ "aggregation-type", required_argument, NULL, 'T' },
		{ "title", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 'S' },
		REPLAY_LONGOPTS,
		ANALYSIS_LONGOPTS,
		{ 0 },
	};
	struct stack_opts so = { .format = FMT_TEXT };
	struct analysis_opts o;
	struct stack s = { 0 };
	bool all = false;
	FILE *out;
	char err[512];
	int opt, status = EXIT_OK, ret;

	analysis_opts_init(&o, "stack");
	if (llvm_style_options(argc, argv, longopts)) {
		tool_error("stack", "out of memory");
		return EXIT_USAGE;
	}
	while ((opt = getopt_long(argc, argv, "f:" ANALYSIS_SHORTOPTS, longopts,
				  NULL)) != -1) {
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
		case 'F':
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
	s.format = so.format;
	s.keep_going = o.in.keep_going;
	s.syms = symbols_open(o.instr_map, true, err, sizeof(err));
	if (!s.syms) {
		tool_error("stack", "%s", err);
		return EXIT_USAGE;
	}
	/* llvm-xray's matching is llvm-xray's outputs' only */
	s.strict = s.strict && so.format != FMT_FOLDED && so.format != FMT_SVG;
	if (!stack_replay(&s, s.strict ? CALLS_CLEAR : CALLS_UNWIND, &o.in,
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
		so.freq = replay_input(s.replay)->freq;
	}
	if (so.format == FMT_FOLDED || so.format == FMT_SVG)
		calls_close_all(replay_calls(s.replay));
	if (!s.trie.n) {
		tool_error("stack", "no instrumented calls in the input");
		status = EXIT_INVALID;
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
	if (!s.strict) {
		replay_note_window(s.replay);
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
	stack_free(&s);
	symbols_free(s.syms);
	analysis_opts_free(&o);
	return status;
}

int stack_write_folded(struct trace *t, const char *path, struct symbols *syms,
		       FILE *out)
{
	const struct trace_opts in = { .cmd = "convert" };
	struct stack_opts so = { .format = FMT_FOLDED };
	struct stack s = { .format = FMT_FOLDED, .syms = syms };
	int status, ret;

	if (!stack_replay(&s, CALLS_UNWIND, &in, NULL)) {
		tool_error("convert", "out of memory");
		return EXIT_USAGE;
	}
	status = replay_trace(s.replay, t, path);
	if (!replay_stopped(s.replay)) {
		calls_close_all(replay_calls(s.replay));
		ret = report(&s, out, &so);
		if (ret) {
			tool_error("convert", "%s", strerror(-ret));
			status = EXIT_USAGE;
		}
	}
	replay_note_window(s.replay);
	stack_free(&s);
	return status;
}

const struct command cmd_stack = {
	.name = "stack",
	.summary =
		"call-stack accounting (llvm-xray stack), folded stacks, SVG flame graph",
	.run = stack_run,
	.usage = stack_usage,
};
