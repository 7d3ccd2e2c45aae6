// SPDX-License-Identifier: GPL-2.0-only
/* llvm-xray's YAML trace output; see xray_yaml.h for the design. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/llvm_compat.h"
#include "outbuf.h"
#include "../stats/sorter.h"
#include "../stats/table.h"
#include "xray_yaml.h"
#include "yaml_scalar.h"

/* What a buffer leaves to the next one of its thread (in llvm-xray's
 * order of buffers): the last function id and the last typed event's
 * type, where it had any. */
struct block {
	uint64_t sec;
	uint32_t usec;
	int32_t last_func;
	uint16_t last_type;
	bool has_func, has_type;
	/* computed at the end */
	uint32_t rank;
	int32_t in_func;
	uint16_t in_type;
};

struct thread {
	uint64_t block_pid; /* llvm-xray keys buffers by (Pid record, tid) */
	uint32_t tid;
	uint32_t index; /* in order of appearance */
	uint32_t rank; /* in llvm-xray's order */
	struct block *blocks;
	uint32_t nblocks, cap;
	uint64_t buffer_offset; /* of the current block */
	/* the state in file order (no-sort mode) */
	int32_t func;
	uint16_t type;
};

/* A record as it travels through the sort. */
enum {
	REC_INHERIT_FUNC = 1,
	REC_INHERIT_TYPE = 2,
};

struct rec {
	uint32_t thread;
	uint32_t block;
	uint32_t tid, pid;
	int32_t func_id;
	uint16_t type, cpu;
	uint8_t kind, flags;
	uint16_t nargs;
	uint32_t data_size;
	/* then nargs u64 arguments, then the payload */
};

/* A record of a group with one timestamp, waiting for its place. */
struct held {
	uint64_t tsc;
	size_t off, len; /* in the group arena */
	uint32_t seq;
	uint64_t order; /* thread rank << 32 | block rank */
};

struct xray_yaml {
	struct xray_yaml_opts o;
	bool fdr;
	uint16_t version;
	struct table thread_tab;
	struct thread **threads; /* the table's records, by number */
	uint32_t nthreads;
	struct sorter *sorter;
	uint8_t *scratch;
	size_t scratch_cap;
	/* the group of records with equal timestamps, when merging */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct held *group;
	size_t ngroup, group_cap;
	char err[512];
	struct outbuf ob;
};

struct xray_yaml *xray_yaml_new(const struct xray_yaml_opts *opts)
{
	struct xray_yaml *y = calloc(1, sizeof(*y));

	if (!y)
		return NULL;
	y->o = *opts;
	ob_init(&y->ob, opts->out);
	table_init(&y->thread_tab, sizeof(struct thread), 0);
	y->fdr = opts->hdr->format == TRACE_XRAY && opts->hdr->type == 1;
	y->version = opts->hdr->version;
	if (opts->sort) {
		y->sorter = sorter_new(opts->memory);
		if (!y->sorter) {
			free(y);
			return NULL;
		}
	}
	return y;
}

void xray_yaml_free(struct xray_yaml *y)
{
	if (!y)
		return;
	for (uint32_t i = 0; i < y->nthreads; i++)
		free(y->threads[i]->blocks);
	table_free(&y->thread_tab);
	sorter_free(y->sorter);
	free(y->scratch);
	free(y->arena);
	free(y->group);
	free(y);
}

const char *xray_yaml_error(const struct xray_yaml *y)
{
	return y->err;
}

static void write_header(struct xray_yaml *y)
{
	const struct trace_header *h = y->o.hdr;
	char text[320];

	snprintf(text, sizeof(text),
		 "---\nheader:\n  version:         %u\n  type:            %u\n"
		 "  constant-tsc:    %s\n  nonstop-tsc:     %s\n"
		 "  cycle-frequency: %" PRIu64 "\n",
		 h->version, h->type, h->constant_tsc ? "true" : "false",
		 h->nonstop_tsc ? "true" : "false", h->cycle_frequency);
	ob_str(&y->ob, text);
}

#define LIT(o, s) ob_write((o), (s), sizeof(s) - 1)

/* One record line, as LLVM's emitter writes a flow mapping with default
 * values left out (thread and process 0, no arguments). */
static void write_record(struct xray_yaml *y, const struct rec *r, uint64_t tsc,
			 const uint64_t *args, const char *data)
{
	struct outbuf *o = &y->ob;
	const char *kind = xrayfdr_event_kind_name(r->kind);
	size_t kind_len = strlen(kind);
	/* each run of fields makes room for itself: names, and 20 bytes a
	 * number at most */
	char *p = ob_begin(o, 64 + 3 * 20);

	p = OB_PUT_LIT(p, "  - { type: ");
	p = ob_put_u64(p, r->type);
	p = OB_PUT_LIT(p, ", func-id: ");
	p = ob_put_i64(p, r->func_id);
	p = OB_PUT_LIT(p, ", function: ");
	if (y->o.syms) {
		const char *name = symbols_name(y->o.syms, r->func_id);

		ob_end(o, p);
		yaml_put_scalar(o, name, strlen(name));
	} else {
		/* a number: always single-quoted */
		*p++ = '\'';
		p = ob_put_i64(p, r->func_id);
		*p++ = '\'';
		ob_end(o, p);
	}
	for (uint16_t i = 0; i < r->nargs; i++) {
		p = ob_begin(o, 16 + 20);
		p = i ? OB_PUT_LIT(p, ", ") : OB_PUT_LIT(p, ", args: [ ");
		p = ob_put_u64(p, args[i]);
		ob_end(o, p);
	}
	p = ob_begin(o, 64 + 4 * 20 + kind_len);
	if (r->nargs)
		p = OB_PUT_LIT(p, " ]");
	p = OB_PUT_LIT(p, ", cpu: ");
	p = ob_put_u64(p, r->cpu);
	if (r->tid) {
		p = OB_PUT_LIT(p, ", thread: ");
		p = ob_put_u64(p, r->tid);
	}
	if (r->pid) {
		p = OB_PUT_LIT(p, ", process: ");
		p = ob_put_u64(p, r->pid);
	}
	p = OB_PUT_LIT(p, ", kind: ");
	memcpy(p, kind, kind_len);
	p = OB_PUT_LIT(p + kind_len, ", tsc: ");
	p = ob_put_u64(p, tsc);
	p = OB_PUT_LIT(p, ", data: ");
	ob_end(o, p);
	yaml_put_scalar(o, data, r->data_size);
	LIT(o, " }\n");
}

static struct thread *get_thread(struct xray_yaml *y,
				 const struct xrayfdr_event *ev)
{
	/* version 3 and later: the buffer's Pid record; before, none */
	uint64_t block_pid = llvm_block_pid(y->version, ev->pid);
	uint64_t key = thread_key((uint32_t)block_pid, ev->tid);
	uint32_t index;
	bool created;
	struct thread *t = table_get(&y->thread_tab, key, &index, &created);

	if (t && created) {
		t->block_pid = block_pid;
		t->tid = ev->tid;
		t->index = index;
		t->buffer_offset = UINT64_MAX;
	}
	y->threads = (struct thread **)y->thread_tab.items;
	y->nthreads = y->thread_tab.n;
	return t;
}

static struct block *current_block(struct thread *t,
				   const struct xrayfdr_event *ev)
{
	if (t->buffer_offset != ev->buffer_offset || !t->nblocks) {
		if (t->nblocks == t->cap) {
			uint32_t cap = t->cap ? 2 * t->cap : 16;
			struct block *n = realloc(t->blocks, cap * sizeof(*n));

			if (!n)
				return NULL;
			t->blocks = n;
			t->cap = cap;
		}
		t->blocks[t->nblocks++] = (struct block){
			.sec = ev->wall_sec,
			.usec = ev->wall_usec,
		};
		t->buffer_offset = ev->buffer_offset;
	}
	return &t->blocks[t->nblocks - 1];
}

/* Fill @r from @ev as llvm-xray's loader would, as far as the record and
 * its buffer tell; what comes from earlier buffers is marked to inherit. */
static int make_record(struct xray_yaml *y, const struct xrayfdr_event *ev,
		       struct rec *r)
{
	bool function = ev->kind <= XRAYFDR_EV_ENTRY_ARGS;
	struct thread *t;
	struct block *b;

	*r = (struct rec){
		.tid = ev->tid,
		.pid = ev->pid,
		.cpu = ev->cpu,
		.kind = (uint8_t)ev->kind,
		.nargs = (uint16_t)ev->nargs,
		.data_size = function ? 0 : ev->data_size,
	};
	if (!y->fdr) {
		/* basic logs and text input: each record stands alone */
		r->func_id = ev->func_id;
		r->type = y->o.hdr->format == TRACE_YAML ? ev->event_type : 0;
		return 0;
	}
	if (y->version == 2)
		r->pid = ev->tid; /* llvm-xray: NewBuffer names the process */
	if (ev->kind == XRAYFDR_EV_CUSTOM && y->version < 4)
		r->cpu = 0; /* no CPU in custom events before version 4 */
	t = get_thread(y, ev);
	if (!t)
		return -ENOMEM;
	r->thread = t->index;
	if (!y->o.sort) {
		/* the file's order: the state simply carries on */
		if (function)
			t->func = ev->func_id;
		if (ev->kind == XRAYFDR_EV_TYPED)
			t->type = ev->event_type;
		r->func_id = t->func;
		r->type = t->type;
		return 0;
	}
	b = current_block(t, ev);
	if (!b)
		return -ENOMEM;
	r->block = t->nblocks - 1;
	if (function) {
		b->last_func = ev->func_id;
		b->has_func = true;
	}
	if (ev->kind == XRAYFDR_EV_TYPED) {
		b->last_type = ev->event_type;
		b->has_type = true;
	}
	if (b->has_func)
		r->func_id = b->last_func;
	else
		r->flags |= REC_INHERIT_FUNC;
	if (b->has_type)
		r->type = b->last_type;
	else
		r->flags |= REC_INHERIT_TYPE;
	return 0;
}

int xray_yaml_event(struct xray_yaml *y, const struct xrayfdr_event *ev)
{
	struct rec r;
	size_t args_len, len;
	int ret;

	if (ev->kind > XRAYFDR_EV_TYPED)
		return 0;
	ret = make_record(y, ev, &r);
	if (ret)
		return ret;
	if (!y->o.sort) {
		if (!y->scratch) {
			write_header(y);
			ob_str(&y->ob, "records:\n");
			y->scratch = malloc(1);
			if (!y->scratch)
				return -ENOMEM;
		}
		write_record(y, &r, ev->tsc, ev->args, ev->data);
		return 0;
	}
	args_len = (size_t)r.nargs * 8;
	len = sizeof(r) + args_len + r.data_size;
	if (len > y->scratch_cap) {
		uint8_t *s = realloc(y->scratch, len);

		if (!s)
			return -ENOMEM;
		y->scratch = s;
		y->scratch_cap = len;
	}
	memcpy(y->scratch, &r, sizeof(r));
	if (args_len)
		memcpy(y->scratch + sizeof(r), ev->args, args_len);
	if (r.data_size)
		memcpy(y->scratch + sizeof(r) + args_len, ev->data,
		       r.data_size);
	ret = sorter_add(y->sorter, ev->tsc, y->scratch, len);
	if (ret)
		snprintf(y->err, sizeof(y->err), "%s", sorter_error(y->sorter));
	return ret;
}

/* Threads in the order of llvm-xray's DenseMap of buffers; each thread's
 * buffers in the order std::sort leaves them, and what each inherits. */
static int order_threads(struct xray_yaml *y)
{
	uint32_t n = y->nthreads;
	uint64_t *pids = malloc((n + 1) * sizeof(*pids));
	uint32_t *tids = malloc((n + 1) * sizeof(*tids));
	uint32_t *ranks = malloc((n + 1) * sizeof(*ranks));
	int ret = -ENOMEM;

	if (!pids || !tids || !ranks)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		pids[i] = y->threads[i]->block_pid;
		tids[i] = y->threads[i]->tid;
	}
	ret = llvm_thread_ranks(pids, tids, n, ranks);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		y->threads[i]->rank = ranks[i];
	for (uint32_t i = 0; i < n; i++) {
		struct thread *t = y->threads[i];
		uint32_t nb = t->nblocks,
			 *idx = malloc((nb + 1) * sizeof(*idx));
		uint64_t *sec = malloc((nb + 1) * sizeof(*sec));
		uint32_t *usec = malloc((nb + 1) * sizeof(*usec));
		int32_t func = 0;
		uint16_t type = 0;

		if (!idx || !sec || !usec) {
			free(idx);
			free(sec);
			free(usec);
			ret = -ENOMEM;
			goto out;
		}
		for (uint32_t b = 0; b < nb; b++) {
			idx[b] = b;
			sec[b] = t->blocks[b].sec;
			usec[b] = t->blocks[b].usec;
		}
		llvm_sort_by_walltime(idx, nb, sec, usec);
		for (uint32_t k = 0; k < nb; k++) {
			struct block *b = &t->blocks[idx[k]];

			b->rank = k;
			b->in_func = func;
			b->in_type = type;
			if (b->has_func)
				func = b->last_func;
			if (b->has_type)
				type = b->last_type;
		}
		free(idx);
		free(sec);
		free(usec);
	}
out:
	free(pids);
	free(tids);
	free(ranks);
	return ret;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Write the records of one timestamp, in llvm-xray's order. */
static void flush_group(struct xray_yaml *y)
{
	if (y->ngroup > 1)
		qsort(y->group, y->ngroup, sizeof(*y->group), cmp_held);
	for (size_t i = 0; i < y->ngroup; i++) {
		struct rec *r = (struct rec *)(y->arena + y->group[i].off);
		const uint8_t *p = (const uint8_t *)(r + 1);

		if (y->fdr) {
			const struct block *b =
				&y->threads[r->thread]->blocks[r->block];

			if (r->flags & REC_INHERIT_FUNC)
				r->func_id = b->in_func;
			if (r->flags & REC_INHERIT_TYPE)
				r->type = b->in_type;
		}
		write_record(y, r, y->group[i].tsc, (const uint64_t *)p,
			     (const char *)p + (size_t)r->nargs * 8);
	}
	y->ngroup = 0;
	y->arena_len = 0;
}

static int hold(struct xray_yaml *y, uint64_t tsc, const void *data, size_t len)
{
	const struct rec *r = data;
	/* keep each record 8-byte aligned: arguments are u64 */
	size_t need = (len + 7) & ~(size_t)7;

	if (y->ngroup == y->group_cap) {
		size_t cap = y->group_cap ? 2 * y->group_cap : 64;
		struct held *g = realloc(y->group, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		y->group = g;
		y->group_cap = cap;
	}
	if (y->arena_len + need > y->arena_cap) {
		size_t cap = y->arena_cap ? y->arena_cap : 4096;
		uint8_t *a;

		while (cap < y->arena_len + need)
			cap *= 2;
		a = realloc(y->arena, cap);
		if (!a)
			return -ENOMEM;
		y->arena = a;
		y->arena_cap = cap;
	}
	memcpy(y->arena + y->arena_len, data, len);
	y->group[y->ngroup] = (struct held){
		.tsc = tsc,
		.off = y->arena_len,
		.len = len,
		.seq = (uint32_t)y->ngroup,
		.order = y->fdr ? (uint64_t)y->threads[r->thread]->rank << 32 |
					  y->threads[r->thread]
						  ->blocks[r->block]
						  .rank :
				  0,
	};
	y->ngroup++;
	y->arena_len += need;
	return 0;
}

int xray_yaml_finish(struct xray_yaml *y)
{
	uint64_t key, last = 0;
	const void *data;
	size_t len;
	int ret;

	if (!y->o.sort) {
		if (!y->scratch) {
			write_header(y);
			ob_str(&y->ob, "records:         []\n");
		}
		ob_str(&y->ob, "...\n");
		return ob_flush(&y->ob) ? -EIO : 0;
	}
	ret = sorter_finish(y->sorter);
	if (!ret && y->fdr)
		ret = order_threads(y);
	if (ret)
		goto fail;
	write_header(y);
	ret = sorter_next(y->sorter, &key, &data, &len);
	if (ret <= 0) {
		if (ret < 0)
			goto fail;
		ob_str(&y->ob, "records:         []\n...\n");
		return ob_flush(&y->ob) ? -EIO : 0;
	}
	ob_str(&y->ob, "records:\n");
	do {
		if (y->ngroup && key != last)
			flush_group(y);
		last = key;
		ret = hold(y, key, data, len);
		if (ret)
			goto fail;
	} while ((ret = sorter_next(y->sorter, &key, &data, &len)) == 1);
	if (ret < 0)
		goto fail;
	flush_group(y);
	ob_str(&y->ob, "...\n");
	if (ob_flush(&y->ob)) {
		snprintf(y->err, sizeof(y->err), "writing: %s",
			 strerror(y->ob.error));
		return -EIO;
	}
	return 0;
fail:
	if (!y->err[0])
		snprintf(y->err, sizeof(y->err), "%s",
			 *sorter_error(y->sorter) ? sorter_error(y->sorter) :
						    strerror(-ret));
	return ret;
}
