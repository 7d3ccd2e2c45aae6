// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the log reader (built with a tiny read window, so
 * every refill and compaction path runs on small inputs).
 *
 * Beyond "no crash, no hang, no sanitizer report", it checks properties:
 *  - the same bytes read from memory and from a pipe give the same events
 *    and the same verdict;
 *  - raw records tile the bytes they cover;
 *  - calls taken in batches (xrayfdr_reader_next_calls()) are the events
 *    xrayfdr_reader_next_event() gives, with the same verdict;
 *  - a file the reader accepts, written again by the writer, reads back
 *    with the same events per thread;
 *  - checksums: the counts of buffers that match and fail theirs are the
 *    same from memory, from a pipe (summed as the tiny window slides) and
 *    in batches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>

#define MAX_EVENTS 4096

struct ev_copy {
	struct xrayfdr_event ev;
	uint64_t args[64];
	uint8_t data[256];
	bool data_cut; /* payload longer than we keep: skip byte compare */
};

struct run {
	int ret;
	const char *rule;
	uint64_t offset;
	size_t n, cap;
	struct ev_copy *evs;
	struct xrayfdr_file_header hdr;
	bool have_hdr;
	uint64_t sum_ok, sum_failed;
};

static void copy_event(struct ev_copy *c, const struct xrayfdr_event *ev)
{
	c->ev = *ev;
	if (ev->nargs > 64)
		abort(); /* the reader keeps at most 64 */
	if (ev->nargs)
		memcpy(c->args, ev->args, ev->nargs * sizeof(*ev->args));
	c->data_cut = ev->data_size > sizeof(c->data);
	if (ev->data_size)
		memcpy(c->data, ev->data,
		       c->data_cut ? sizeof(c->data) : ev->data_size);
	c->ev.args = c->args;
	c->ev.data = c->data;
}

static void add_event(struct run *out, const struct xrayfdr_event *ev)
{
	if (out->n == MAX_EVENTS)
		return;
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 16;
		out->evs = realloc(out->evs, out->cap * sizeof(*out->evs));
		if (!out->evs)
			abort();
	}
	copy_event(&out->evs[out->n++], ev);
}

/* @batch: 0, or take calls in batches of 1, 2, ... @batch in turn */
static void read_events(struct xrayfdr_reader *r, struct run *out, size_t batch)
{
	const struct xrayfdr_event *ev;
	const struct xrayfdr_file_header *hdr;
	const struct xrayfdr_diag *d;
	struct xrayfdr_call_event calls[8];
	size_t turn = 0;

	memset(out, 0, sizeof(*out));
	if (xrayfdr_reader_header(r, &hdr) == 0) {
		out->hdr = *hdr;
		out->have_hdr = true;
	}
	for (;;) {
		size_t max = batch ? 1 + turn++ % batch : 0;
		size_t n = max ? xrayfdr_reader_next_calls(r, calls, max, &ev) :
				 0;

		if (n > max)
			abort();
		for (size_t i = 0; i < n; i++) {
			struct xrayfdr_event e = *ev;

			e.tsc = calls[i].tsc;
			e.kind = calls[i].kind;
			e.func_id = calls[i].func_id;
			e.offset = ev->offset - 8 * (n - 1 - i);
			add_event(out, &e);
		}
		if (n)
			continue;
		out->ret = xrayfdr_reader_next_event(r, &ev);
		if (out->ret != 1)
			break;
		add_event(out, ev);
	}
	/* the array moved as it grew: point each event at its own copies */
	for (size_t i = 0; i < out->n; i++) {
		out->evs[i].ev.args = out->evs[i].args;
		out->evs[i].ev.data = out->evs[i].data;
	}
	d = xrayfdr_reader_error(r);
	out->rule = d ? d->rule : "";
	out->offset = d ? d->offset : 0;
	out->sum_ok = xrayfdr_reader_stats(r)->sum_ok;
	out->sum_failed = xrayfdr_reader_stats(r)->sum_failed;
}

static bool same_event(const struct ev_copy *a, const struct ev_copy *b)
{
	const struct xrayfdr_event *x = &a->ev, *y = &b->ev;

	return x->kind == y->kind && x->tsc == y->tsc &&
	       x->func_id == y->func_id && x->tid == y->tid &&
	       x->pid == y->pid && x->cpu == y->cpu &&
	       x->event_type == y->event_type && x->nargs == y->nargs &&
	       x->data_size == y->data_size &&
	       !memcmp(a->args, b->args, x->nargs * sizeof(uint64_t)) &&
	       (a->data_cut || b->data_cut ||
		!memcmp(a->data, b->data, x->data_size));
}

static void check_pipe_agrees(const uint8_t *data, size_t size,
			      const struct run *mem)
{
	struct xrayfdr_reader *r;
	struct run p;
	int fds[2];

	if (size > 60000 || pipe(fds))
		return; /* the whole input must fit the pipe's buffer */
	if (write(fds[1], data, size) != (ssize_t)size)
		abort();
	close(fds[1]);
	r = xrayfdr_reader_new_fd(fds[0], "pipe", NULL);
	if (!r)
		abort();
	read_events(r, &p, 0);
	xrayfdr_reader_free(r);
	close(fds[0]);
	if (p.ret != mem->ret || strcmp(p.rule, mem->rule) ||
	    p.offset != mem->offset || p.n != mem->n ||
	    p.sum_ok != mem->sum_ok || p.sum_failed != mem->sum_failed)
		abort();
	for (size_t i = 0; i < p.n; i++)
		if (!same_event(&p.evs[i], &mem->evs[i]))
			abort();
	free(p.evs);
}

static int keep_parity(void *ctx, uint32_t tid)
{
	return tid % 2 == *(const unsigned int *)ctx;
}

/* Where a log reads without error, two readers that share its threads
 * out by keep_thread read its events between them, each its own. */
static void check_keep_shares(const uint8_t *data, size_t size,
			      const struct run *all)
{
	size_t at = 0, n = 0;
	struct run part[2];

	for (unsigned int k = 0; k < 2; k++) {
		XRAYFDR_OPTS(xrayfdr_reader_opts, o,
			     .flags = XRAYFDR_READ_NO_CALL_CHECK,
			     .keep_thread = keep_parity, .keep_ctx = &k);
		struct xrayfdr_reader *r =
			xrayfdr_reader_new_mem(data, size, "fuzz", &o);

		if (!r)
			abort();
		read_events(r, &part[k], k ? 3 : 0);
		xrayfdr_reader_free(r);
		/* a part never fails where the whole did not */
		if (part[k].ret)
			abort();
		n += part[k].n;
	}
	if (n != all->n)
		abort();
	for (size_t i[2] = { 0, 0 }; at < all->n; at++) {
		const struct run *p;
		unsigned int k = all->evs[at].ev.tid % 2;

		p = &part[k];
		if (i[k] >= p->n || !same_event(&all->evs[at], &p->evs[i[k]]) ||
		    all->evs[at].ev.offset != p->evs[i[k]].ev.offset)
			abort();
		i[k]++;
	}
	free(part[0].evs);
	free(part[1].evs);
}

static void check_batches_agree(const uint8_t *data, size_t size)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, o,
		     .flags = XRAYFDR_READ_NO_CALL_CHECK);
	struct run one, batched;
	struct xrayfdr_reader *r;

	r = xrayfdr_reader_new_mem(data, size, "fuzz", &o);
	if (!r)
		abort();
	read_events(r, &one, 0);
	xrayfdr_reader_free(r);
	/* FDR logs that can be cut into buffers */
	if (!one.ret && one.have_hdr && one.hdr.type == 1 &&
	    (one.hdr.version >= 2 || one.hdr.buffer_size))
		check_keep_shares(data, size, &one);
	r = xrayfdr_reader_new_mem(data, size, "fuzz", &o);
	if (!r)
		abort();
	read_events(r, &batched, 5);
	xrayfdr_reader_free(r);
	if (one.ret != batched.ret || strcmp(one.rule, batched.rule) ||
	    one.offset != batched.offset || one.n != batched.n ||
	    one.sum_ok != batched.sum_ok ||
	    one.sum_failed != batched.sum_failed)
		abort();
	for (size_t i = 0; i < one.n; i++)
		if (!same_event(&one.evs[i], &batched.evs[i]) ||
		    one.evs[i].ev.offset != batched.evs[i].ev.offset)
			abort();
	free(one.evs);
	free(batched.evs);
}

static void check_records_tile(const uint8_t *data, size_t size)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, o, .flags = XRAYFDR_READ_KEEP_GOING);
	struct xrayfdr_reader *r =
		xrayfdr_reader_new_mem(data, size, "tile", &o);
	const struct xrayfdr_record *rec;
	uint64_t end = 0;

	if (!r)
		abort();
	while (xrayfdr_reader_next_record(r, &rec) == 1) {
		/* in keep-going mode records may skip ahead, never overlap */
		if (rec->offset < end || rec->offset + rec->size > size)
			abort();
		end = rec->offset + rec->size;
	}
	if (xrayfdr_reader_stats(r)->bytes > size)
		abort();
	xrayfdr_reader_free(r);
}

struct sink {
	uint8_t *buf;
	size_t len, cap;
};

static int sink_write(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	if (s->len + n > s->cap) {
		size_t cap = (s->len + n) * 2;
		uint8_t *b = realloc(s->buf, cap);

		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

/* Events of thread (pid, tid) in order, compared between two runs. */
static void check_rewrite(const struct run *in)
{
	XRAYFDR_OPTS(
		xrayfdr_writer_opts, o,
		.basic = in->hdr.type == XRAYFDR_FILE_BASIC,
		.version = in->hdr.version, .big_endian = in->hdr.big_endian,
		.buffer_size = in->hdr.type == XRAYFDR_FILE_BASIC ? 0 : 65536);
	struct sink s = { 0 };
	struct xrayfdr_writer *w;
	struct xrayfdr_reader *r;
	struct run out;

	if (in->n == MAX_EVENTS)
		return;
	for (size_t i = 0; i < in->n; i++) {
		if (in->evs[i].data_cut)
			return;
		/* The pid came with version 3 in both formats (FDR's Pid
		 * records, basic records' field, which llvm-xray reads
		 * before and the writer zeroes): a writer of version 1 or 2
		 * has nowhere to put the pid the reader reported. */
		if (in->hdr.version < 3 && in->evs[i].ev.pid)
			return;
	}
	w = xrayfdr_writer_new(sink_write, &s, &o);
	if (!w)
		abort();
	for (size_t i = 0; i < in->n; i++) {
		int ret = xrayfdr_writer_event(w, &in->evs[i].ev);

		/* what the writer may refuse of what the reader accepts */
		if (ret == -EINVAL && in->evs[i].ev.data_size == 0)
			goto out;
		if (ret == -EMSGSIZE)
			goto out;
		if (ret == -EOPNOTSUPP &&
		    in->evs[i].ev.kind == XRAYFDR_EV_TYPED &&
		    in->hdr.type == XRAYFDR_FILE_FDR && in->hdr.version == 1)
			goto out;
		if (ret)
			abort();
	}
	if (xrayfdr_writer_close(w))
		abort();
	w = NULL;
	r = xrayfdr_reader_new_mem(s.buf, s.len, "rewrite", NULL);
	read_events(r, &out, 0);
	xrayfdr_reader_free(r);
	/* checksums are framing: the writer's log has none */
	if (out.ret != 0 || out.n != in->n || out.sum_ok || out.sum_failed)
		abort();
	/* per thread, the order is kept */
	for (size_t i = 0; i < in->n; i++) {
		const struct xrayfdr_event *e = &in->evs[i].ev;
		size_t rank = 0, j, seen = 0;

		for (j = 0; j < i; j++)
			rank += in->evs[j].ev.tid == e->tid &&
				in->evs[j].ev.pid == e->pid;
		for (j = 0; j < out.n; j++) {
			if (out.evs[j].ev.tid != e->tid ||
			    out.evs[j].ev.pid != e->pid)
				continue;
			if (seen++ == rank)
				break;
		}
		if (j == out.n || !same_event(&in->evs[i], &out.evs[j]))
			abort();
	}
	free(out.evs);
out:
	if (w)
		xrayfdr_writer_close(w);
	free(s.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xrayfdr_reader *r =
		xrayfdr_reader_new_mem(data, size, "fuzz", NULL);
	struct run mem;

	if (!r)
		abort();
	read_events(r, &mem, 0);
	xrayfdr_reader_free(r);
	if (mem.ret > 0)
		abort();
	check_pipe_agrees(data, size, &mem);
	check_records_tile(data, size);
	check_batches_agree(data, size);
	if (mem.ret == 0 && mem.have_hdr)
		check_rewrite(&mem);
	free(mem.evs);
	return 0;
}
