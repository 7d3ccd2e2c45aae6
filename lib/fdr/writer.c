// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The log writer: events in, a valid XRay log out.
 *
 * FDR: each thread (pid, tid) owns one open buffer of buffer_size bytes.
 * An event that does not fit closes it; the thread's next buffer starts with
 * a fresh preamble.  The writer adds the metadata the reader needs on its
 * own: NewCPUId when the CPU changes, TSCWrap when a delta does not fit its
 * field, BufferExtents before each buffer (v2+), or EndOfBuffer and zero
 * padding up to buffer_size (v1).  Memory: threads x buffer_size.
 *
 * Basic: each event becomes a 32-byte record (plus one per argument).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"
#include "records.h"
#include "../util/opts.h"
#include "../util/u64map.h"

#define DEFAULT_BUFFER_SIZE 16384u
#define MIN_BUFFER_SIZE 128u
#define MAX_BUFFER_SIZE (1u << 30)
#define OUT_SIZE (64u * 1024)
#define MD XRAYFDR_METADATA_RECORD_SIZE

struct thread_buf {
	uint32_t pid, tid;
	uint64_t seq; /* opening order: buffers flush in this order */
	uint64_t last_tsc; /* the base the next delta is taken from */
	uint16_t cpu;
	size_t used;
	uint8_t data[]; /* buffer_size bytes */
};

struct xrayfdr_writer {
	xrayfdr_write_fn write;
	void *ctx;
	int fd;
	struct xrayfdr_file_header hdr;
	bool be;
	bool basic;
	size_t buffer_size;
	size_t preamble; /* bytes of a buffer's preamble */
	struct u64map threads;
	uint64_t seq;
	uint64_t bytes;
	int error; /* sticky: the first failed write */
	size_t out_len;
	uint8_t out[OUT_SIZE];
};

static int emit_direct(struct xrayfdr_writer *w, const void *data, size_t len)
{
	int ret;

	if (w->error)
		return w->error;
	ret = w->write(w->ctx, data, len);
	if (ret < 0) {
		w->error = ret;
		return ret;
	}
	return 0;
}

static int out_flush(struct xrayfdr_writer *w)
{
	int ret = w->error;

	if (w->out_len && !ret)
		ret = emit_direct(w, w->out, w->out_len);
	w->out_len = 0;
	return ret;
}

static int emit(struct xrayfdr_writer *w, const void *data, size_t len)
{
	if (w->error)
		return w->error;
	w->bytes += len;
	if (w->out_len + len > sizeof(w->out)) {
		int ret = out_flush(w);

		if (ret)
			return ret;
		if (len >= sizeof(w->out))
			return emit_direct(w, data, len);
	}
	memcpy(w->out + w->out_len, data, len);
	w->out_len += len;
	return 0;
}

static void put_md(struct xrayfdr_writer *w, struct thread_buf *b,
		   const struct xrayfdr_metadata *md)
{
	xrayfdr_encode_metadata(b->data + b->used, w->be, w->hdr.version, md);
	b->used += MD;
}

static int emit_to(void *ctx, const void *data, size_t len)
{
	return emit(ctx, data, len);
}

/* Write a thread's buffer out and forget it. */
static int write_buffer(struct xrayfdr_writer *w, struct thread_buf *b)
{
	int ret = fdr_frame_write(w->be, w->hdr.version, w->buffer_size,
				  b->data, b->used, emit_to, w);

	free(u64map_del(&w->threads, thread_key(b->pid, b->tid)));
	return ret;
}

static struct thread_buf *open_buffer(struct xrayfdr_writer *w,
				      const struct xrayfdr_event *ev)
{
	struct thread_buf *b = malloc(sizeof(*b) + w->buffer_size);
	struct xrayfdr_metadata md;

	if (!b)
		return NULL;
	b->pid = ev->pid;
	b->tid = ev->tid;
	b->seq = w->seq++;
	b->used = fdr_put_preamble(b->data, w->be, w->hdr.version,
				   (int32_t)ev->tid, ev->wall_sec,
				   ev->wall_usec, (int32_t)ev->pid);
	md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
					.cpu = ev->cpu,
					.tsc = ev->tsc };
	put_md(w, b, &md);
	b->cpu = ev->cpu;
	b->last_tsc = ev->tsc;
	if (u64map_put(&w->threads, thread_key(ev->pid, ev->tid), b)) {
		free(b);
		return NULL;
	}
	return b;
}

/* Can a buffer holding @used bytes still be closed validly? */
static bool fits(const struct xrayfdr_writer *w, uint64_t used)
{
	return fdr_frame_fits(w->hdr.version, used, w->buffer_size);
}

/* Bytes the event itself takes, or a negative errno if it cannot be written. */
static int64_t event_bytes(const struct xrayfdr_writer *w,
			   const struct xrayfdr_event *ev)
{
	switch (ev->kind) {
	case XRAYFDR_EV_ENTRY:
	case XRAYFDR_EV_EXIT:
	case XRAYFDR_EV_TAIL_EXIT:
		if (ev->nargs)
			return -EINVAL;
		return XRAYFDR_FUNCTION_RECORD_SIZE;
	case XRAYFDR_EV_ENTRY_ARGS:
		if (ev->nargs && !ev->args)
			return -EINVAL;
		return XRAYFDR_FUNCTION_RECORD_SIZE + (int64_t)ev->nargs * MD;
	case XRAYFDR_EV_TYPED:
		if (w->hdr.version < 2)
			return -EOPNOTSUPP; /* not part of version 1 */
		/* fall through */
	case XRAYFDR_EV_CUSTOM:
		/* llvm-xray refuses empty payloads, so never write one. */
		if (!ev->data_size || !ev->data)
			return -EINVAL;
		if (ev->data_size > INT32_MAX)
			return -EMSGSIZE;
		return MD + (int64_t)ev->data_size;
	default:
		return -EINVAL;
	}
}

/* Does the event's TSC need a TSCWrap first, given the buffer's base? */
static bool needs_wrap(const struct xrayfdr_writer *w,
		       const struct thread_buf *b,
		       const struct xrayfdr_event *ev)
{
	uint64_t delta = ev->tsc - b->last_tsc;

	switch (ev->kind) {
	case XRAYFDR_EV_CUSTOM:
		if (w->hdr.version < 5)
			return false; /* absolute TSC */
		/* fall through */
	case XRAYFDR_EV_TYPED:
		return (int64_t)delta < INT32_MIN || (int64_t)delta > INT32_MAX;
	default:
		return ev->tsc < b->last_tsc || delta > UINT32_MAX;
	}
}

static int fdr_event(struct xrayfdr_writer *w, const struct xrayfdr_event *ev)
{
	int64_t need = event_bytes(w, ev);
	struct thread_buf *b;
	struct xrayfdr_metadata md;
	size_t extra;
	int ret;

	if (need < 0)
		return (int)need;
	if (!fits(w, (uint64_t)need + w->preamble))
		return -EMSGSIZE;
	b = u64map_get(&w->threads, thread_key(ev->pid, ev->tid));
	if (b) {
		extra = (b->cpu != ev->cpu ? MD : 0) +
			(b->cpu == ev->cpu && needs_wrap(w, b, ev) ? MD : 0);
		if (!fits(w, b->used + extra + (uint64_t)need)) {
			ret = write_buffer(w, b);
			if (ret)
				return ret;
			b = NULL;
		}
	}
	if (!b) {
		b = open_buffer(w, ev);
		if (!b)
			return -ENOMEM;
	}
	if (b->cpu != ev->cpu) {
		md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
						.cpu = ev->cpu,
						.tsc = ev->tsc };
		put_md(w, b, &md);
		b->cpu = ev->cpu;
		b->last_tsc = ev->tsc;
	} else if (needs_wrap(w, b, ev)) {
		md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_TSC_WRAP,
						.tsc = ev->tsc };
		put_md(w, b, &md);
		b->last_tsc = ev->tsc;
	}

	if (ev->kind <= XRAYFDR_EV_ENTRY_ARGS) {
		fdr_put_function(b->data + b->used, w->be, ev->kind,
				 (uint32_t)ev->func_id,
				 (uint32_t)(ev->tsc - b->last_tsc));
		b->used += XRAYFDR_FUNCTION_RECORD_SIZE;
		b->last_tsc = ev->tsc;
		for (uint32_t i = 0; i < ev->nargs; i++) {
			md = (struct xrayfdr_metadata){
				.kind = XRAYFDR_MD_CALL_ARGUMENT,
				.arg = ev->args[i]
			};
			put_md(w, b, &md);
		}
		return 0;
	}

	md = (struct xrayfdr_metadata){ .event_size = (int32_t)ev->data_size };
	if (ev->kind == XRAYFDR_EV_TYPED) {
		md.kind = XRAYFDR_MD_TYPED_EVENT_MARKER;
		md.event_type = ev->event_type;
	} else {
		md.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER;
		md.tsc = ev->tsc;
		md.cpu = ev->cpu;
	}
	if (ev->kind == XRAYFDR_EV_TYPED || w->hdr.version >= 5) {
		md.tsc_delta = (int32_t)(int64_t)(ev->tsc - b->last_tsc);
		b->last_tsc = ev->tsc;
	}
	put_md(w, b, &md);
	memcpy(b->data + b->used, ev->data, ev->data_size);
	b->used += ev->data_size;
	return 0;
}

static int basic_event(struct xrayfdr_writer *w, const struct xrayfdr_event *ev)
{
	uint8_t rec[XRAYFDR_BASIC_RECORD_SIZE];
	int ret;

	if (ev->kind > XRAYFDR_EV_ENTRY_ARGS)
		return ev->kind <= XRAYFDR_EV_TYPED ? -EOPNOTSUPP : -EINVAL;
	if (ev->nargs && (ev->kind != XRAYFDR_EV_ENTRY_ARGS || !ev->args))
		return -EINVAL;
	if (ev->cpu > UINT8_MAX)
		return -ERANGE; /* the basic format keeps 8 bits of CPU */
	/* the process id field is there from version 3; zero before */
	fdr_put_basic_function(rec, w->be, (uint8_t)ev->cpu, (uint8_t)ev->kind,
			       ev->func_id, ev->tsc, ev->tid,
			       w->hdr.version >= 3 ? ev->pid : 0);
	ret = emit(w, rec, sizeof(rec));
	for (uint32_t i = 0; !ret && i < ev->nargs; i++) {
		fdr_put_basic_arg(rec, w->be, ev->func_id, ev->tid, ev->pid,
				  ev->args[i]);
		ret = emit(w, rec, sizeof(rec));
	}
	return ret;
}

int xrayfdr_writer_event(struct xrayfdr_writer *w,
			 const struct xrayfdr_event *ev)
{
	int ret;

	if (w->error)
		ret = w->error;
	else
		ret = w->basic ? basic_event(w, ev) : fdr_event(w, ev);
	if (ret)
		errno = -ret;
	return ret;
}

int xrayfdr_writer_close_thread(struct xrayfdr_writer *w, uint32_t pid,
				uint32_t tid)
{
	struct thread_buf *b = u64map_get(&w->threads, thread_key(pid, tid));

	return b ? write_buffer(w, b) : 0;
}

struct collect {
	struct thread_buf **bufs;
	size_t n;
};

static int collect_one(void *ctx, void *value)
{
	struct collect *c = ctx;

	c->bufs[c->n++] = value;
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct thread_buf *x = *(struct thread_buf *const *)a;
	const struct thread_buf *y = *(struct thread_buf *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int xrayfdr_writer_flush(struct xrayfdr_writer *w)
{
	struct collect c = { 0 };
	int ret = 0;

	if (w->threads.count) {
		c.bufs = malloc(w->threads.count * sizeof(*c.bufs));
		if (!c.bufs)
			return -ENOMEM;
		u64map_each(&w->threads, collect_one, &c);
		qsort(c.bufs, c.n, sizeof(*c.bufs), by_seq);
		for (size_t i = 0; i < c.n; i++) {
			int err = write_buffer(w, c.bufs[i]);

			if (err && !ret)
				ret = err;
		}
		free(c.bufs);
	}
	if (!ret)
		ret = out_flush(w);
	if (ret)
		errno = -ret;
	return ret;
}

uint64_t xrayfdr_writer_bytes(const struct xrayfdr_writer *w)
{
	return w->bytes;
}

static int free_buf(void *ctx, void *value)
{
	(void)ctx;
	free(value);
	return 0;
}

int xrayfdr_writer_close(struct xrayfdr_writer *w)
{
	int ret;

	if (!w)
		return 0;
	ret = xrayfdr_writer_flush(w);
	u64map_each(&w->threads, free_buf, NULL);
	u64map_free(&w->threads);
	free(w);
	if (ret)
		errno = -ret;
	return ret;
}

static int write_fd(void *ctx, const void *data, size_t size)
{
	struct xrayfdr_writer *w = ctx;
	const char *p = data;

	while (size) {
		ssize_t k = write(w->fd, p, size);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += k;
		size -= (size_t)k;
	}
	return 0;
}

/* Validate options and build a writer; nothing is written yet. */
static struct xrayfdr_writer *
writer_create(const struct xrayfdr_writer_opts *opts)
{
	struct xrayfdr_writer_opts o = {
		.basic = OPTS_GET(opts, basic, false),
		.version = OPTS_GET(opts, version, 0u),
		.big_endian = OPTS_GET(opts, big_endian, false),
		.constant_tsc = OPTS_GET(opts, constant_tsc, false),
		.nonstop_tsc = OPTS_GET(opts, nonstop_tsc, false),
		.cycle_frequency = OPTS_GET(opts, cycle_frequency, 0),
		.buffer_size = OPTS_GET(opts, buffer_size, 0),
	};
	struct xrayfdr_writer *w;

	if (!OPTS_VALID(opts)) {
		errno = E2BIG;
		return NULL;
	}
	errno = EINVAL;
	if (!o.version)
		o.version = o.basic ? XRAYFDR_BASIC_VERSION_DEFAULT :
				      XRAYFDR_FDR_VERSION_DEFAULT;
	if (!o.basic && (o.version < XRAYFDR_FDR_VERSION_MIN ||
			 o.version > XRAYFDR_FDR_VERSION_MAX))
		return NULL;
	if (o.basic && (o.version < XRAYFDR_BASIC_VERSION_MIN ||
			o.version > XRAYFDR_BASIC_VERSION_MAX))
		return NULL;
	if (o.basic)
		o.buffer_size = 0;
	else if (!o.buffer_size)
		o.buffer_size = DEFAULT_BUFFER_SIZE;
	else if (o.buffer_size < MIN_BUFFER_SIZE ||
		 o.buffer_size > MAX_BUFFER_SIZE)
		return NULL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	w->be = o.big_endian;
	w->basic = o.basic;
	w->buffer_size = (size_t)o.buffer_size;
	w->preamble = fdr_preamble_size(o.version) + MD; /* and NewCPUId */
	w->hdr = (struct xrayfdr_file_header){
		.version = (uint16_t)o.version,
		.type = o.basic ? XRAYFDR_FILE_BASIC : XRAYFDR_FILE_FDR,
		.constant_tsc = o.constant_tsc,
		.nonstop_tsc = o.nonstop_tsc,
		.big_endian = o.big_endian,
		.cycle_frequency = o.cycle_frequency,
		.buffer_size = o.buffer_size,
	};
	return w;
}

/* Write the file header; free the writer if that fails. */
static struct xrayfdr_writer *writer_start(struct xrayfdr_writer *w)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	int ret;

	xrayfdr_encode_file_header(hdr, &w->hdr);
	ret = emit(w, hdr, sizeof(hdr));
	if (!ret)
		ret = out_flush(w);
	if (ret) {
		free(w);
		errno = -ret;
		return NULL;
	}
	return w;
}

struct xrayfdr_writer *
xrayfdr_writer_new(xrayfdr_write_fn write, void *ctx,
		   const struct xrayfdr_writer_opts *opts)
{
	struct xrayfdr_writer *w;

	if (!write) {
		errno = EINVAL;
		return NULL;
	}
	w = writer_create(opts);
	if (!w)
		return NULL;
	w->write = write;
	w->ctx = ctx;
	return writer_start(w);
}

struct xrayfdr_writer *
xrayfdr_writer_new_fd(int fd, const struct xrayfdr_writer_opts *opts)
{
	struct xrayfdr_writer *w = writer_create(opts);

	if (!w)
		return NULL;
	w->write = write_fd;
	w->ctx = w;
	w->fd = fd;
	return writer_start(w);
}
