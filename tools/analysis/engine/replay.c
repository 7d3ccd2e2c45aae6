// SPDX-License-Identifier: GPL-2.0-only
/* The replay driver; see replay.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../../lib/util/u64map.h"
#include "llvm_compat.h"
#include "replay.h"
#include "../cmdline/report.h"
#include "../input/symbols.h"
#include "ticks.h"

/* calls decoded at a time: a 16 KiB buffer of function records is 2048 */
#define REPLAY_BATCH 512

struct replay {
	struct replay_opts o;
	struct calls *calls;
	struct replay_input in;
	int failed; /* a hook's replay_fail() */
	bool stopped;
	/* the traces read, kept open for their names */
	struct trace **traces;
	size_t ntraces, traces_cap;
	/* this input's (buffer process, thread) keys in order of first
	 * appearance, for llvm-xray's walk of its buffers */
	struct u64map keys;
	uint64_t *key_pids;
	uint32_t *key_tids;
	uint64_t *key_bufs; /* the buffer of each one's first event */
	uint32_t nkeys, keys_cap;
	uint64_t last_key; /* of the last event, when nkeys */
	uint32_t first_thread; /* the first call thread of this input */
	uint64_t *rank; /* by call thread */
	uint32_t rank_cap;
	/* each event goes through wanted(): the input's first, or all when
	 * the filter has anything to check */
	bool check_each, seen_event;
	struct event_filter filter;
	/* replay_batch()'s run of calls */
	struct xrayfdr_call_event batch[REPLAY_BATCH];
	bool batched;
};

struct replay *replay_new(const struct replay_opts *opts)
{
	struct replay *r;

	if (!opts || opts->size < sizeof(*opts) || !opts->hooks) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *opts;
	if (event_filter_init(&r->filter, &(struct event_filter_opts){
						  .cmd = opts->cmd,
						  .by_tid = opts->by_tid,
						  .tids = opts->tids,
						  .ntids = opts->ntids,
						  .range = opts->range,
						  .filter = opts->filter,
						  .names = opts->names,
						  .map_path = opts->map_path,
					  })) {
		free(r);
		errno = EINVAL;
		return NULL;
	}
	r->calls = calls_new(opts->mode, opts->by_tid, &opts->hooks->calls,
			     opts->ctx);
	if (!r->calls) {
		event_filter_free(&r->filter);
		free(r);
		return NULL;
	}
	return r;
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntraces; i++)
		trace_close(r->traces[i]);
	free(r->traces);
	calls_free(r->calls);
	event_filter_free(&r->filter);
	u64map_free(&r->keys);
	free(r->key_pids);
	free(r->key_tids);
	free(r->key_bufs);
	free(r->rank);
	free(r);
}

int replay_check_tids(const struct replay *r)
{
	uint32_t tid;

	if (!event_filter_unseen_tid(&r->filter, &tid))
		return 0;
	tool_error(r->o.cmd, "%s: --tid %" PRIu32 ": no thread has that id",
		   r->in.index > 1 ? "the inputs" : r->in.path, tid);
	return EXIT_USAGE;
}

void replay_fail(struct replay *r, int err)
{
	if (!r->failed)
		r->failed = err;
	calls_stop(r->calls);
}

bool replay_stopped(const struct replay *r)
{
	return r->stopped;
}

const struct replay_input *replay_input(const struct replay *r)
{
	return &r->in;
}

struct calls *replay_calls(const struct replay *r)
{
	return r->calls;
}

uint64_t replay_unmatched(const struct replay *r)
{
	return calls_unmatched(r->calls);
}

void replay_note_window(const struct replay *r)
{
	replay_note_counts(r->o.cmd, r->in.index == 1 ? r->in.path : NULL,
			   calls_unmatched(r->calls), calls_unwound(r->calls));
}

void replay_note_counts(const char *cmd, const char *path, uint64_t before,
			uint64_t unwound)
{
	char a[96] = "", b[96] = "";

	if (!before && !unwound)
		return;
	if (before)
		snprintf(
			a, sizeof(a),
			"%" PRIu64
			" exits of calls entered before the trace began (not counted)",
			before);
	if (unwound)
		snprintf(b, sizeof(b),
			 "%" PRIu64
			 " calls ended by unwinding (an exception or longjmp)",
			 unwound);
	tool_error(cmd, "%s%s%s%s%s", path ? path : "", path ? ": " : "", a,
		   *a && *b ? ", " : "", b);
}

uint64_t replay_thread_rank(const struct replay *r, uint32_t thread_index)
{
	return thread_index < r->rank_cap ? r->rank[thread_index] : 0;
}

uint64_t replay_min_ticks(const char *cmd, const char *path, uint64_t min_ns,
			  uint64_t hz)
{
	if (min_ns && !hz)
		tool_error(
			cmd,
			"%s: the header gives no TSC frequency; --min-duration counts ticks as nanoseconds",
			path);
	return ticks_at_least_ns(min_ns, hz);
}

static int note_key(struct replay *r, const struct xrayfdr_event *ev)
{
	uint64_t pid = llvm_block_pid(r->in.version, ev->pid);
	uint64_t key = thread_key((uint32_t)pid, ev->tid);

	/* records come a buffer, so a thread, at a time */
	if (r->nkeys && key == r->last_key)
		return 0;
	r->last_key = key;
	if (u64map_get(&r->keys, key))
		return 0;
	if (r->nkeys == r->keys_cap) {
		uint32_t cap = r->keys_cap ? 2 * r->keys_cap : 16;
		uint64_t *p = realloc(r->key_pids, cap * sizeof(*p));
		uint32_t *t;

		if (!p)
			return -ENOMEM;
		r->key_pids = p;
		t = realloc(r->key_tids, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		r->key_tids = t;
		p = realloc(r->key_bufs, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->key_bufs = p;
		r->keys_cap = cap;
	}
	r->key_bufs[r->nkeys] = ev->buffer_offset;
	r->key_pids[r->nkeys] = pid;
	r->key_tids[r->nkeys++] = ev->tid;
	return u64map_put(&r->keys, key, (void *)(uintptr_t)r->nkeys);
}

/* Call thread @i's place among the input's keys, from 1; 0 if none. */
static uintptr_t key_pos(const struct replay *r, uint32_t i)
{
	const struct call_thread *t = calls_thread(r->calls, i);

	return (uintptr_t)u64map_get(
		&r->keys,
		thread_key((uint32_t)llvm_block_pid(r->in.version, t->pid),
			   t->tid));
}

/* At the end of an input: the rank of the threads first seen in it. */
static int rank_threads(struct replay *r)
{
	uint32_t n = calls_nthreads(r->calls);
	uint32_t *ranks = calloc(r->nkeys + 1, sizeof(*ranks));
	int ret = ranks ? 0 : -ENOMEM;

	if (!ret && r->in.fdr)
		ret = llvm_thread_ranks(r->key_pids, r->key_tids, r->nkeys,
					ranks);
	if (!ret && n > r->rank_cap) {
		uint64_t *p = realloc(r->rank, n * sizeof(*p));

		if (p) {
			memset(p + r->rank_cap, 0,
			       (n - r->rank_cap) * sizeof(*p));
			r->rank = p;
			r->rank_cap = n;
		} else {
			ret = -ENOMEM;
		}
	}
	for (uint32_t i = r->first_thread; !ret && i < n; i++) {
		uintptr_t pos = key_pos(r, i);

		r->rank[i] = r->in.index << 32 | (pos ? ranks[pos - 1] : 0);
	}
	free(ranks);
	/* a shared log's are ranked again with the others' */
	if (r->o.share_count <= 1) {
		u64map_free(&r->keys);
		r->nkeys = 0;
	}
	r->first_thread = n;
	return ret;
}

uint64_t replay_problems(const struct replay *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->ntraces; i++)
		n += trace_stats(r->traces[i])->warnings +
		     trace_stats(r->traces[i])->errors +
		     trace_stats(r->traces[i])->sum_failed;
	return n;
}

/* (driver, key) pairs of replay_rank_shared(), by their first buffer */
struct shared_key {
	uint64_t buf;
	uint32_t driver, key;
};

static int cmp_shared_key(const void *x, const void *y)
{
	const struct shared_key *a = x, *b = y;

	return a->buf < b->buf ? -1 : a->buf > b->buf;
}

int replay_rank_shared(struct replay *const *w, unsigned int n)
{
	struct shared_key *keys;
	uint64_t *pids;
	uint32_t *tids, *ranks, **local;
	size_t total = 0, k = 0;
	int ret = -ENOMEM;

	for (unsigned int i = 0; i < n; i++)
		total += w[i]->nkeys;
	keys = calloc(total + 1, sizeof(*keys));
	pids = calloc(total + 1, sizeof(*pids));
	tids = calloc(total + 1, sizeof(*tids));
	ranks = calloc(total + 1, sizeof(*ranks));
	local = calloc(n, sizeof(*local));
	if (!keys || !pids || !tids || !ranks || !local)
		goto out;
	for (unsigned int i = 0; i < n; i++)
		for (uint32_t j = 0; j < w[i]->nkeys; j++)
			keys[k++] =
				(struct shared_key){ w[i]->key_bufs[j], i, j };
	/* each thread's buffers are one driver's: the order of their first
	 * buffers is the order one driver would have seen them in */
	qsort(keys, total, sizeof(*keys), cmp_shared_key);
	for (size_t j = 0; j < total; j++) {
		pids[j] = w[keys[j].driver]->key_pids[keys[j].key];
		tids[j] = w[keys[j].driver]->key_tids[keys[j].key];
	}
	if (total && w[0]->in.fdr) {
		ret = llvm_thread_ranks(pids, tids, (uint32_t)total, ranks);
		if (ret)
			goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		local[i] = calloc(w[i]->nkeys + 1, sizeof(**local));
		if (!local[i])
			goto out;
	}
	for (size_t j = 0; j < total; j++)
		local[keys[j].driver][keys[j].key] = ranks[j];
	for (unsigned int i = 0; i < n; i++) {
		struct replay *r = w[i];

		for (uint32_t t = 0;
		     t < calls_nthreads(r->calls) && t < r->rank_cap; t++) {
			uintptr_t pos = key_pos(r, t);

			r->rank[t] = pos ? local[i][pos - 1] : 0;
		}
	}
	ret = 0;
out:
	for (unsigned int i = 0; local && i < n; i++)
		free(local[i]);
	free(local);
	free(keys);
	free(pids);
	free(tids);
	free(ranks);
	return ret;
}

/* 1 if @ev is to be replayed, 0 if not, or negative errno. */
static int wanted(struct replay *r, const struct xrayfdr_event *ev)
{
	if (!r->seen_event) {
		r->seen_event = true;
		r->check_each = r->filter.active;
		r->in.first_tsc = ev->tsc;
	}
	return event_filter_check(&r->filter, ev);
}

/*
 * The next run of one thread's calls, where no hook or filter looks at
 * each event: decoded together, matched together.  0 (r->batched says
 * whether there was one) or negative errno.
 */
static int replay_batch(struct replay *r, struct trace *t)
{
	const struct xrayfdr_event *last;
	size_t n = trace_next_calls(t, r->batch, REPLAY_BATCH, &last);
	int ret;

	r->batched = n != 0;
	if (!n)
		return 0;
	ret = note_key(r, last);
	if (!ret)
		ret = calls_batch(r->calls, last, r->batch, n, &r->in.seq);
	return ret;
}

/* The exit status of an input by the table in replay.h. */
static int input_status(struct replay *r, struct trace *t, int ret)
{
	int status;

	if (!ret && r->failed)
		ret = r->failed;
	r->stopped = ret < 0;
	if (ret == -E2BIG)
		tool_error(r->o.cmd, "%s: a call stack deeper than %u frames",
			   r->in.path, CALLS_MAX_DEPTH);
	status = trace_status(t, ret == -EBADMSG && r->failed ? 0 : ret);
	if (ret == -ENOMEM) {
		tool_error(r->o.cmd, "out of memory");
		status = EXIT_USAGE;
	} else if ((ret == -EIO && r->failed) || ret == -EINVAL) {
		status = EXIT_USAGE;
	} else if (ret < 0 && status == EXIT_OK) {
		status = EXIT_INVALID;
	}
	return status;
}

int replay_trace(struct replay *r, struct trace *t, const char *path)
{
	const struct replay_hooks *h = r->o.hooks;
	const struct trace_header *hdr;
	const struct xrayfdr_event *ev;
	int ret;

	r->failed = 0;
	r->in.path = path;
	r->seen_event = false;
	r->check_each = true;
	if (r->o.names)
		symbols_use_trace_names(r->o.names, trace_function_name, t);
	ret = trace_header(t, &hdr);
	if (!ret) {
		r->in.format = hdr->format;
		r->in.version = hdr->version;
		r->in.fdr = hdr->format == TRACE_XRAY && hdr->type == 1;
		r->in.freq = (double)hdr->cycle_frequency;
		event_filter_input(&r->filter, path, r->in.freq);
		calls_min_duration(r->calls,
				   replay_min_ticks(r->o.cmd, path, r->o.min_ns,
						    hdr->cycle_frequency));
		for (;;) {
			if (!r->check_each && !h->event) {
				ret = replay_batch(r, t);
				if (ret || r->failed)
					break;
				if (r->batched)
					continue;
			}
			ret = trace_next(t, &ev);
			if (ret != 1)
				break;
			r->in.seq++;
			if (r->check_each) {
				ret = wanted(r, ev);
				if (ret <= 0) {
					if (ret < 0)
						break;
					continue;
				}
			}
			ret = note_key(r, ev);
			if (!ret && h->event)
				ret = h->event(r->o.ctx, ev);
			if (!ret)
				ret = calls_event(r->calls, ev);
			if (ret || r->failed)
				break;
		}
	}
	if (ret >= 0 && !r->failed)
		ret = rank_threads(r);
	if (ret >= 0 && !r->failed && h->input_done)
		ret = h->input_done(r->o.ctx);
	ret = input_status(r, t, ret < 0 ? ret : 0);
	r->in.index++;
	return ret;
}

/* share_count drivers: this one's threads */
static int keep_share(void *ctx, uint32_t tid)
{
	const struct replay *r = ctx;

	return tid % r->o.share_count == r->o.share_index;
}

int replay_file(struct replay *r, const char *path)
{
	struct trace_opts in = r->o.in;
	struct trace *t;

	if (r->o.share_count > 1) {
		in.keep_thread = keep_share;
		in.keep_ctx = r;
	}
	if (r->ntraces == r->traces_cap) {
		size_t cap = r->traces_cap ? 2 * r->traces_cap : 4;
		struct trace **n = realloc(r->traces, cap * sizeof(*n));

		if (!n) {
			tool_error(r->o.cmd, "out of memory");
			r->stopped = true;
			return EXIT_USAGE;
		}
		r->traces = n;
		r->traces_cap = cap;
	}
	t = trace_open(path, &in);
	if (!t) {
		r->stopped = true;
		return EXIT_USAGE;
	}
	r->traces[r->ntraces++] = t;
	return replay_trace(r, t, path);
}

bool replay_can_share(const struct trace_opts *in, const char *path,
		      uint64_t min_ns)
{
	struct trace_opts quiet = *in;
	const struct trace_header *hdr;
	struct trace *t;
	struct stat st;
	bool ok;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	quiet.silent = true;
	quiet.quiet = true;
	t = trace_open(path, &quiet);
	if (!t)
		return false;
	/* a version 1 log without buffer_size cannot be cut into buffers */
	ok = !trace_header(t, &hdr) && hdr->format == TRACE_XRAY &&
	     hdr->type == 1 && (hdr->version >= 2 || hdr->buffer_size) &&
	     (!min_ns || hdr->cycle_frequency);
	trace_close(t);
	return ok;
}

struct shared_worker {
	struct replay *r;
	const char *path;
	int (*after)(void *ctx);
	void *ctx;
	pthread_t thread;
	bool started;
	int status;
};

static void *shared_work(void *p)
{
	struct shared_worker *w = p;

	w->status = replay_file(w->r, w->path);
	if (w->after && w->after(w->ctx))
		w->status = EXIT_USAGE;
	return NULL;
}

int replay_run_shared(struct replay *const *w, unsigned int n, const char *path,
		      int (*after)(void *ctx), void *const *ctx)
{
	struct shared_worker *sw = calloc(n, sizeof(*sw));
	int ret = 0;

	if (!sw)
		return -ENOMEM;
	for (unsigned int k = 0; k < n; k++) {
		sw[k] = (struct shared_worker){ .r = w[k],
						.path = path,
						.after = after,
						.ctx = ctx ? ctx[k] : NULL };
		sw[k].started = !pthread_create(&sw[k].thread, NULL,
						shared_work, &sw[k]);
	}
	for (unsigned int k = 0; k < n; k++)
		if (sw[k].started)
			pthread_join(sw[k].thread, NULL);
	for (unsigned int k = 0; k < n && !ret; k++)
		if (!sw[k].started || sw[k].status != EXIT_OK ||
		    w[k]->stopped || replay_problems(w[k]))
			ret = 1;
	free(sw);
	return ret ? ret : replay_rank_shared(w, n);
}

struct trace_opts replay_share_in(const struct trace_opts *in, unsigned int k)
{
	struct trace_opts o = *in;

	o.silent = true;
	o.quiet = in->quiet || k;
	/* a worker stops at the first fault: one reader then reads the log
	 * again, with --keep-going if asked, and says what it skipped */
	o.keep_going = false;
	return o;
}

void replay_shared_counts(struct replay *const *w, unsigned int n,
			  uint64_t *before, uint64_t *unwound)
{
	for (unsigned int k = 0; k < n; k++) {
		*before += calls_unmatched(w[k]->calls);
		*unwound += calls_unwound(w[k]->calls);
	}
}

struct replay *replay_new_share(const char *cmd, const struct trace_opts *in,
				const struct replay_hooks *hooks, void *ctx,
				uint64_t min_ns, unsigned int k, unsigned int n)
{
	return replay_new(&(struct replay_opts){
		.size = sizeof(struct replay_opts),
		.cmd = cmd,
		.mode = CALLS_UNWIND,
		.by_tid = true,
		.in = replay_share_in(in, k),
		.hooks = hooks,
		.ctx = ctx,
		.min_ns = min_ns,
		.share_index = k,
		.share_count = n,
	});
}
