// SPDX-License-Identifier: GPL-2.0-only
/* Call stacks as a trie, from the replay driver; see stacks.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../cmdline/cmdline.h"
#include "llvm_compat.h"
#include "../cmdline/report.h"
#include "stacks.h"
#include "../input/symbols.h"

static void on_thread(void *ctx, struct call_thread *t)
{
	struct stacks *s = ctx;
	struct stacks_thread *d = calloc(1, sizeof(*d));

	if (!d) {
		replay_fail(s->replay, -ENOMEM);
		return;
	}
	d->roots.tid = t->tid;
	t->user = d;
}

/* A frame's user word: its node, and its path's hash above */
#define FRAME_NODE(user) ((uint32_t)(user))
#define FRAME_PATH(user) ((uint32_t)((user) >> 32))

/* How many entries ahead of the one being matched its slot is read */
#define PREFETCH_AHEAD 8

/* The path hashes of a run's entries, worked out from the thread's stack
 * as it is and the run's own entries and exits (a hint: an exit that
 * does not match is taken as the top's) */
static void on_ahead(void *ctx, struct call_thread *t,
		     const struct xrayfdr_call_event *calls, size_t n)
{
	struct stacks *s = ctx;
	struct stacks_thread *d = stacks_thread_of(t);
	uint32_t *up, sd = t->depth, base = t->depth;

	if (!d)
		return;
	d->nahead = d->next_ahead = 0;
	if (n > UINT32_MAX / 2)
		return;
	if (2 * n > d->ahead_cap) {
		uint32_t *a = realloc(d->ahead, 2 * n * sizeof(*a));

		if (!a)
			return;
		d->ahead = a;
		d->ahead_cap = 2 * n;
	}
	up = d->ahead + n;
	for (size_t i = 0; i < n; i++) {
		uint32_t parent = 0, h;

		if (calls[i].kind != XRAYFDR_EV_ENTRY) {
			sd -= sd > 0;
			/* below the stack the run began on: up[] starts here */
			if (sd < base)
				base = sd;
			continue;
		}
		if (sd > base)
			parent = up[sd - 1 - base];
		else if (sd)
			parent = FRAME_PATH(t->stack[sd - 1].user);
		h = trie_path_hash(parent, calls[i].func_id);
		up[sd - base] = h;
		sd++;
		d->ahead[d->nahead++] = h;
		if (d->nahead <= PREFETCH_AHEAD)
			trie_prefetch(&s->trie, h);
	}
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct stacks *s = ctx;
	struct stacks_thread *d = stacks_thread_of(t);
	uint64_t up = depth ? t->stack[depth - 1].user : TRIE_NONE;
	uint32_t path = trie_path_hash(FRAME_PATH(up), f->func_id);
	uint32_t node;

	(void)ev;
	if (!d)
		return;
	if (d->next_ahead + PREFETCH_AHEAD < d->nahead)
		trie_prefetch(&s->trie,
			      d->ahead[d->next_ahead + PREFETCH_AHEAD]);
	if (d->next_ahead + PREFETCH_AHEAD / 2 < d->nahead)
		trie_prefetch_node(
			&s->trie, d->ahead[d->next_ahead + PREFETCH_AHEAD / 2]);
	d->next_ahead++;
	if (!depth && !d->rooted) {
		d->rooted = true;
		d->root_seq = replay_input(s->replay)->seq;
	}
	node = trie_child(&s->trie, &d->roots, FRAME_NODE(up), path,
			  f->func_id);
	if (node == TRIE_NONE)
		replay_fail(s->replay, -ENOMEM);
	else /* on_done() adds to it: start the cache miss now */
		__builtin_prefetch(&s->trie.nodes[node], 1);
	f->user = (uint64_t)path << 32 | node;
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct stacks *s = ctx;
	uint32_t node = FRAME_NODE(d->frame->user);
	struct trie_node *n;

	if (node == TRIE_NONE)
		return;
	n = &s->trie.nodes[node];
	/* llvm-xray: the deepest frame an exit pops is a leaf ("terminal")
	 * unless the record before was an exit too */
	if (d->deepest && !t->last_was_exit) {
		n->term_count++;
		n->term_sum = trie_sum_add(n->term_sum, d->dur);
	} else {
		n->inter_count++;
		n->inter_sum = trie_sum_add(n->inter_sum, d->dur);
	}
	n->self = trie_self_add(n->self, d->self);
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct stacks *s = ctx;
	const struct replay_input *in = replay_input(s->replay);
	char where[48];

	(void)t;
	if (!s->strict || s->keep_going)
		return;
	tool_error(
		s->cmd,
		"%s: record at %s: thread %" PRIu32
		": exit of function %" PRId32
		" with no matching entry on the thread's stack (see --keep-going)",
		in->path,
		trace_where(in->format, ev->offset, where, sizeof(where)),
		ev->tid, ev->func_id);
	replay_fail(s->replay, -EBADMSG);
}

static const struct replay_hooks stacks_hooks = {
	.calls = {
		.enter = on_enter,
		.done = on_done,
		.unmatched = on_unmatched,
		.thread = on_thread,
		.ahead = on_ahead,
	},
};

static int cmp_first_root(const void *x, const void *y)
{
	const struct stacks_thread *a =
		stacks_thread_of(*(struct call_thread *const *)x);
	const struct stacks_thread *b =
		stacks_thread_of(*(struct call_thread *const *)y);

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->root_seq < b->root_seq ? -1 : 1;
}

int stacks_order_threads(struct stacks *s, struct stacks_order *ro)
{
	struct replay *const *rs = s->shares ? s->shares : &s->replay;
	unsigned int nr = s->shares ? s->nshares : 1;
	uint32_t n = 0, k = 0;
	struct call_thread **th;
	uint32_t *hashes, *order;
	int ret = -ENOMEM;

	for (unsigned int r = 0; r < nr; r++)
		n += calls_nthreads(replay_calls(rs[r]));
	th = malloc((n + 1) * sizeof(*th));
	hashes = malloc((n + 1) * sizeof(*hashes));
	order = malloc((n + 1) * sizeof(*order));
	if (!th || !hashes || !order)
		goto out;
	for (unsigned int r = 0; r < nr; r++) {
		struct calls *calls = replay_calls(rs[r]);

		for (uint32_t i = 0; i < calls_nthreads(calls); i++) {
			struct call_thread *t = calls_thread(calls, i);
			struct stacks_thread *d = stacks_thread_of(t);

			if (!d || !d->rooted)
				continue;
			d->rank = replay_thread_rank(rs[r], t->index);
			th[k++] = t;
		}
	}
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
static uint32_t merge_nodes(struct stacks *s, uint32_t left, uint32_t right,
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
#undef SUM
	t->nodes[node].term_sum = trie_sum_add(
		t->nodes[left].term_sum, (uint64_t)t->nodes[right].term_sum);
	t->nodes[node].inter_sum = trie_sum_add(
		t->nodes[left].inter_sum, (uint64_t)t->nodes[right].inter_sum);
	t->nodes[node].self =
		trie_self_add(t->nodes[left].self, t->nodes[right].self);
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
int stacks_merge(struct stacks *s, const struct stacks_order *ro,
		 struct trie_thread *merged)
{
	for (uint32_t i = 0; i < ro->n; i++) {
		const struct trie_thread *r =
			&stacks_thread_of(ro->threads[i])->roots;

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
int stacks_push_children(uint32_t **work, uint32_t *nwork, uint32_t *cap,
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
static int path_set(struct path_builder *p, struct stacks *s, uint32_t node,
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
int stacks_print_all(struct stacks *s, FILE *out, const uint32_t *roots,
		     uint32_t nroots, const char *prefix, bool llvm_style,
		     bool count)
{
	struct path_builder p = { 0 };
	uint32_t *work = NULL, nwork = 0, cap = 0;
	int ret = 0;

	for (uint32_t r = 0; r < nroots && !ret; r++) {
		nwork = 0;
		ret = stacks_push_children(&work, &nwork, &cap, &roots[r], 1);
		while (nwork && !ret) {
			uint32_t top = work[--nwork];
			const struct trie_node *n = &s->trie.nodes[top];
			uint64_t v;

			if (llvm_style) {
				v = count ? n->term_count + n->inter_count :
					    (uint64_t)trie_sum_add(
						    n->term_sum,
						    (uint64_t)n->inter_sum);
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
				ret = stacks_push_children(&work, &nwork, &cap,
							   n->children,
							   n->nchildren);
		}
	}
	free(work);
	free(p.buf);
	return ret;
}

/* A thread's first frame: llvm-xray's "thread_T", and ours with its
 * name, where ';' would split the frame. */
void stacks_thread_prefix(const struct call_thread *t, bool llvm, char *buf,
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

/* A driver's threads' roots, and the driver. */
static void free_replay(struct replay *r)
{
	struct calls *calls = r ? replay_calls(r) : NULL;

	for (uint32_t i = 0; calls && i < calls_nthreads(calls); i++) {
		struct stacks_thread *d =
			stacks_thread_of(calls_thread(calls, i));

		if (d) {
			trie_thread_free(&d->roots);
			free(d->ahead);
			free(d);
		}
	}
	replay_free(r);
}

void stacks_free(struct stacks *s)
{
	free_replay(s->replay);
	for (unsigned int i = 0; i < s->nshares; i++)
		free_replay(s->shares[i]);
	free(s->shares);
	trie_free(&s->trie);
}

static struct replay *share_replay(struct stacks *s, enum calls_mode mode,
				   const struct trace_opts *in,
				   const struct analysis_opts *o,
				   unsigned int share_index,
				   unsigned int share_count)
{
	s->cmd = in->cmd;
	s->replay = replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = in->cmd,
		.mode = mode,
		.by_tid = true,
		.in = *in,
		.hooks = &stacks_hooks,
		.ctx = s,
		.names = s->syms,
		.tids = o ? o->tids : NULL,
		.ntids = o ? o->ntids : 0,
		.range = o ? o->range : (struct replay_range){ 0 },
		.filter = o ? o->filter : NULL,
		.map_path = o ? o->instr_map : NULL,
		.min_ns = o ? o->min_ns : 0,
		.share_index = share_index,
		.share_count = share_count,
	});
	return s->replay;
}

struct replay *stacks_replay(struct stacks *s, enum calls_mode mode,
			     const struct trace_opts *in,
			     const struct analysis_opts *o)
{
	return share_replay(s, mode, in, o, 0, 0);
}

/* In the worker's thread, when its share is read: its trie is whole. */
static int after_share(void *ctx)
{
	struct stacks *s = ctx;

	if (s->close_all)
		calls_close_all(replay_calls(s->replay));
	return trie_finish(&s->trie);
}

/* @from's trie after @s's, its threads' roots renumbered too. */
static int append_trie(struct stacks *s, struct stacks *from)
{
	struct calls *calls = replay_calls(from->replay);
	uint32_t base;
	int ret = trie_append(&s->trie, &from->trie, &base);

	for (uint32_t i = 0; !ret && i < calls_nthreads(calls); i++) {
		struct stacks_thread *d =
			stacks_thread_of(calls_thread(calls, i));

		for (uint32_t r = 0; d && r < d->roots.nroots; r++)
			d->roots.roots[r] += base;
	}
	return ret;
}

int stacks_read_shared(struct stacks *s, enum calls_mode mode,
		       const struct trace_opts *in,
		       const struct analysis_opts *o, const char *path,
		       unsigned int n, bool close_all)
{
	struct stacks *w = calloc(n, sizeof(*w));
	struct replay **rs = calloc(n, sizeof(*rs));
	void **ctx = calloc(n, sizeof(*ctx));
	int ret = -ENOMEM;

	if (!w || !rs || !ctx)
		goto out;
	for (unsigned int k = 0; k < n; k++) {
		struct trace_opts win = replay_share_in(in, k);

		w[k].strict = s->strict;
		w[k].keep_going = s->keep_going;
		w[k].close_all = close_all;
		rs[k] = share_replay(&w[k], mode, &win, o, k, n);
		if (!rs[k])
			goto out;
		ctx[k] = &w[k];
	}
	ret = replay_run_shared(rs, n, path, after_share, ctx);
	for (unsigned int k = 0; !ret && k < n; k++)
		ret = append_trie(s, &w[k]);
	if (ret)
		goto out;
	s->shares = rs;
	s->nshares = n;
	rs = NULL;
	s->cmd = in->cmd;
out:
	for (unsigned int k = 0; w && k < n; k++) {
		/* the shares' drivers are s's now */
		if (!rs)
			w[k].replay = NULL;
		stacks_free(&w[k]);
	}
	free(w);
	free(rs);
	free(ctx);
	return ret;
}

double stacks_freq(const struct stacks *s)
{
	return replay_input(s->shares ? s->shares[0] : s->replay)->freq;
}

void stacks_note_window(const struct stacks *s, const char *path)
{
	uint64_t before = 0, unwound = 0;

	if (!s->shares) {
		replay_note_window(s->replay);
		return;
	}
	replay_shared_counts(s->shares, s->nshares, &before, &unwound);
	replay_note_counts(s->cmd, path, before, unwound);
}

void stacks_note_saturated(const struct stacks *s, const char *path)
{
	uint64_t n = trie_saturated(&s->trie);

	if (n)
		tool_error(
			s->cmd,
			"%s: warning: the times of %" PRIu64
			" stacks add up past what their 64-bit sums hold: those stop at the largest value (%" PRId64
			" for signed sums) instead of wrapping",
			path, n, INT64_MAX);
}

/* The folded lines of every thread, in llvm-xray's thread order. */
int stacks_write_folded_lines(struct stacks *s, FILE *out, bool llvm_style,
			      bool count)
{
	struct stacks_order ro = { 0 };
	char prefix[48];
	int ret = stacks_order_threads(s, &ro);

	for (uint32_t i = 0; i < ro.n && !ret; i++) {
		const struct trie_thread *r =
			&stacks_thread_of(ro.threads[i])->roots;

		stacks_thread_prefix(ro.threads[i], llvm_style, prefix,
				     sizeof(prefix));
		ret = stacks_print_all(s, out, r->roots, r->nroots, prefix,
				       llvm_style, count);
	}
	free(ro.threads);
	return ret;
}

int stacks_write_folded(struct trace *t, const char *path, struct symbols *syms,
			FILE *out, const struct analysis_opts *o)
{
	const struct trace_opts in = { .cmd = "convert" };
	struct stacks s = { .syms = syms };
	int status, ret;

	if (!stacks_replay(&s, CALLS_UNWIND, &in, o)) {
		if (errno != EINVAL)
			tool_error("convert", "out of memory");
		return EXIT_USAGE;
	}
	status = replay_trace(s.replay, t, path);
	if (!replay_stopped(s.replay) && replay_check_tids(s.replay))
		status = EXIT_USAGE;
	else if (!replay_stopped(s.replay)) {
		calls_close_all(replay_calls(s.replay));
		ret = trie_finish(&s.trie);
		if (!ret)
			ret = stacks_write_folded_lines(&s, out, false, false);
		if (ret) {
			tool_error("convert", "%s", strerror(-ret));
			status = EXIT_USAGE;
		}
	}
	replay_note_window(s.replay);
	stacks_note_saturated(&s, path);
	stacks_free(&s);
	return status;
}
