// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The streaming, verifying reader of XRay logs.
 *
 * Input arrives through a sliding window (a memory file is its own window),
 * so memory use is one record plus its payload, whatever the file size.
 * The record layer is a state machine over the grammar of the format:
 *
 *   file     := header buffer*
 *   buffer   := [BufferExtents] NewBuffer WallTimeMarker [Pid] NewCPUId body*
 *               [EndOfBuffer padding]                       (v1 only)
 *   body     := NewCPUId | TSCWrap | function | event
 *   function := EntryArgs CallArgument* | Entry | Exit | TailExit
 *   event    := (CustomEventMarker | TypedEventMarker) payload
 *
 * Versions 2 and later delimit a buffer with BufferExtents; version 1 with
 * EndOfBuffer and padding up to the header's buffer_size.  Every violation
 * is reported with its byte offset, the record and a stable rule id.  In
 * keep-going mode the reader then skips to the next buffer it can trust.
 *
 * The event layer on top joins EntryArgs with its CallArguments and hands
 * out events carrying absolute TSC, thread, process and CPU.
 *
 * Buffers that end with a checksum (fdr-format.rst, "Checksums") are
 * summed as the window passes over them: the bytes a slide of the window
 * drops are added to the buffer's CRC first, so that no record is read
 * twice and the fast paths do nothing more per record.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "records.h"
#include "../util/crc32c.h"
#include "../util/opts.h"
#include "../util/u64map.h"

#ifndef READER_WINDOW_SIZE /* the fuzz build makes it tiny */
#define READER_WINDOW_SIZE (256u * 1024)
#endif
#define DEFAULT_MAX_PAYLOAD (16u * 1024 * 1024)
#define MAX_ARGS 64 /* CallArguments kept per entry */
#define STACK_LIMIT 4096 /* call-stack entries kept per thread */
#define NO_END UINT64_MAX

enum fdr_state {
	ST_BUFFER_START, /* next: BufferExtents (v2+) or NewBuffer (v1) */
	ST_NEW_BUFFER, /* after BufferExtents: NewBuffer */
	ST_WALLTIME, /* after NewBuffer: WallTimeMarker */
	ST_PID_OR_CPU, /* after WallTimeMarker: [Pid] NewCPUId */
	ST_CPU, /* after Pid: NewCPUId */
	ST_BODY,
	ST_PADDING, /* v1: after EndOfBuffer */
	ST_SKIP, /* after NewBuffer: a buffer keep_thread leaves out */
};

struct call_stack {
	uint32_t depth; /* entries pushed and not popped; may exceed cap */
	uint32_t cap;
	int32_t *ids;
	bool cut; /* had an exit of a call entered before the window */
	bool timed; /* last_tsc holds the thread's latest time so far */
	uint64_t last_tsc;
	uint64_t last_off; /* and the record that had it */
};

struct xrayfdr_reader {
	char *name;
	unsigned int flags;
	size_t max_payload;
	xrayfdr_diag_fn on_diag;
	void *diag_ctx;
	int (*keep_thread)(void *ctx, uint32_t tid);
	void *keep_ctx;

	/* input window: data[0] is file offset data_off, win_len bytes valid */
	int fd;
	bool own_fd;
	bool is_mem;
	bool eof;
	const uint8_t *data;
	uint8_t *buf;
	size_t buf_cap;
	size_t win_len;
	uint64_t data_off;
	uint64_t file_size; /* NO_END when unknown (pipes) */
	uint64_t pos; /* offset of the next unread byte */

	/* header */
	int header_ret; /* 1 before reading, 0 ok, negative errno */
	struct xrayfdr_file_header hdr;
	bool be;
	bool basic;

	/* FDR grammar and context */
	enum fdr_state state;
	uint64_t buf_start;
	uint64_t buf_end;
	bool args_open; /* a CallArgument may come next */
	uint32_t tid, pid;
	uint16_t cpu;
	uint64_t base_tsc;
	uint64_t wall_sec;
	uint32_t wall_usec;

	/* basic format: the record arguments may attach to */
	bool basic_args_open;
	int32_t basic_func_id;
	uint32_t basic_tid, basic_pid;

	struct u64map stacks;
	struct call_stack *cur_stack; /* the last one looked up, and its key */
	uint64_t cur_key;

	/* output */
	struct xrayfdr_record rec;
	struct xrayfdr_event ev;
	uint64_t args[MAX_ARGS];
	uint64_t last_resync; /* offset of the last error skipped */
	bool stash; /* rec holds a record the event layer must redo */
	bool pending; /* ev holds an entry still collecting arguments */
	/* ev's thread context (all but offset, tsc, kind, func_id) is that of
	 * a function record of the current buffer: the fast path leaves it */
	bool ev_context_set;
	/* the fast path may read function records below this offset: the
	 * window's or buffer's end, or 0 (fast_arm()) */
	uint64_t fast_end;

	/* checksums */
	uint32_t hdr_crc; /* of the file header as read */
	uint64_t sum_from; /* the CRC of the current buffer began here;
			    * NO_END: not summing it */
	uint64_t sum_pos; /* the bytes before this are in sum_crc */
	uint32_t sum_crc;
	bool buf_open; /* a buffer whose checksum is due at its end */
	bool buf_summed; /* it had one */
	uint64_t open_start; /* and where it began, its thread */
	uint32_t open_tid;
	bool log_sums; /* a buffer of this log had a checksum */
	bool hdr_reported;
	uint64_t unsummed; /* buffers without one before the first that had */
	uint64_t unsummed_at;

	int stop; /* 0 running, 1 at the end, negative errno */
	struct xrayfdr_diag err;
	char err_msg[512];
	char diag_msg[512];
	struct xrayfdr_reader_stats stats;
};

/* a + b, or NO_END - 1 where that would overflow: a lying size must
 * never wrap an end offset around to something small. */
static uint64_t end_at(uint64_t a, uint64_t b)
{
	return b > NO_END - 1 - a ? NO_END - 1 : a + b;
}

/*
 * Diagnostics.
 */
static void format_diag(struct xrayfdr_reader *r, char *out, size_t size,
			uint64_t offset, const char *record, const char *fmt,
			va_list ap)
{
	int n = snprintf(out, size,
			 "%s: offset %" PRIu64 " (0x%" PRIx64 "): %s: ",
			 r->name, offset, offset, record);

	if (n >= 0 && (size_t)n < size)
		vsnprintf(out + n, size - (size_t)n, fmt, ap);
}

/* Tell on_diag of @d, whose message @fmt formats. */
static void tell(struct xrayfdr_reader *r, struct xrayfdr_diag *d,
		 const char *fmt, va_list ap)
{
	if (!r->on_diag)
		return;
	format_diag(r, r->diag_msg, sizeof(r->diag_msg), d->offset, d->record,
		    fmt, ap);
	d->message = r->diag_msg;
	r->on_diag(r->diag_ctx, d);
}

static void warn(struct xrayfdr_reader *r, uint64_t offset, const char *record,
		 const char *rule, const char *fmt, ...)
{
	struct xrayfdr_diag d = {
		.severity = XRAYFDR_SEV_WARNING,
		.offset = offset,
		.record = record,
		.rule = rule,
	};
	va_list ap;

	r->stats.warnings++;
	va_start(ap, fmt);
	tell(r, &d, fmt, ap);
	va_end(ap);
}

/* A damaged buffer found by its checksum: an error, counted apart, that
 * does not stop the reader (the buffer's records are read already). */
static void sum_error(struct xrayfdr_reader *r, uint64_t offset,
		      const char *record, const char *fmt, ...)
{
	struct xrayfdr_diag d = {
		.severity = XRAYFDR_SEV_ERROR,
		.error = -EBADMSG,
		.offset = offset,
		.record = record,
		.rule = "checksum",
	};
	va_list ap;

	r->stats.errors++;
	r->stats.sum_failed++;
	va_start(ap, fmt);
	tell(r, &d, fmt, ap);
	va_end(ap);
}

/*
 * Record an error.  The caller returns the result: the error itself, or in
 * keep-going mode (for format errors) the value that tells it to resync.
 */
#define RESYNC 2

static int fail(struct xrayfdr_reader *r, int error, uint64_t offset,
		const char *record, const char *rule, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_diag(r, r->err_msg, sizeof(r->err_msg), offset, record, fmt, ap);
	va_end(ap);
	r->err = (struct xrayfdr_diag){
		.severity = XRAYFDR_SEV_ERROR,
		.error = error,
		.offset = offset,
		.record = record,
		.rule = rule,
		.message = r->err_msg,
	};
	r->stats.errors++;
	if ((r->flags & XRAYFDR_READ_KEEP_GOING) && error == -EBADMSG) {
		if (r->on_diag)
			r->on_diag(r->diag_ctx, &r->err);
		return RESYNC;
	}
	r->stop = error;
	errno = -error;
	return error;
}

/*
 * Input window.
 */

/* Add the bytes of the current buffer before @end, all in the window, to
 * its CRC; stop summing it if some of them are gone. */
static void sum_upto(struct xrayfdr_reader *r, uint64_t end)
{
	if (r->sum_from == NO_END || end <= r->sum_pos)
		return;
	if (r->sum_pos < r->data_off || end > r->data_off + r->win_len) {
		r->sum_from = NO_END;
		return;
	}
	r->sum_crc = crc32c(r->sum_crc, r->data + (r->sum_pos - r->data_off),
			    (size_t)(end - r->sum_pos));
	r->sum_pos = end;
}

/* Make @n bytes at r->pos readable at *p.  -ENODATA: the input ends first,
 * with *avail bytes left. */
static int fill(struct xrayfdr_reader *r, size_t n, const uint8_t **p,
		size_t *avail)
{
	uint64_t end = r->data_off + r->win_len;
	uint64_t have = r->pos < end ? end - r->pos : 0;

	if (have >= n) {
		*p = r->data + (r->pos - r->data_off);
		return 0;
	}
	if (r->is_mem || r->eof) {
		*avail = (size_t)have;
		return -ENODATA;
	}
	/* Slide the unread bytes to the front, then read behind them. */
	sum_upto(r, r->pos);
	memmove(r->buf, r->buf + (r->pos - r->data_off), (size_t)have);
	r->data_off = r->pos;
	r->win_len = (size_t)have;
	if (n > r->buf_cap) {
		size_t cap = n > 2 * r->buf_cap ? n : 2 * r->buf_cap;
		uint8_t *nb = realloc(r->buf, cap);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->data = nb;
		r->buf_cap = cap;
	}
	while (r->win_len < n) {
		ssize_t k = read(r->fd, r->buf + r->win_len,
				 r->buf_cap - r->win_len);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0) {
			r->eof = true;
			*avail = r->win_len;
			return -ENODATA;
		}
		r->win_len += (size_t)k;
	}
	*p = r->buf;
	return 0;
}

/* Move to @off (forward), as far as the input goes.  Return 0 or -errno. */
static int skip_to(struct xrayfdr_reader *r, uint64_t off)
{
	/* what is skipped is not checked */
	r->sum_from = NO_END;
	if (off > r->file_size)
		off = r->file_size;
	if (off <= r->data_off + r->win_len) {
		r->pos = off;
		return 0;
	}
	if (r->is_mem) {
		r->pos = r->data_off + r->win_len;
		return 0;
	}
	if (r->file_size != NO_END && lseek(r->fd, (off_t)off, SEEK_SET) >= 0) {
		r->data_off = off;
		r->win_len = 0;
		r->pos = off;
		return 0;
	}
	/* Not seekable: read and drop. */
	while (r->pos < off) {
		const uint8_t *p;
		size_t avail = 0;
		uint64_t want = off - r->pos;
		size_t chunk = want < r->buf_cap ? (size_t)want : r->buf_cap;
		int ret = fill(r, chunk, &p, &avail);

		if (ret == -ENODATA) {
			r->pos += avail;
			return 0;
		}
		if (ret)
			return ret;
		r->pos += chunk;
	}
	return 0;
}

static int io_error(struct xrayfdr_reader *r, int ret)
{
	return fail(r, ret, r->pos, "input", "io", "%s", strerror(-ret));
}

/*
 * Header.
 */
static bool header_plausible(const struct xrayfdr_file_header *h)
{
	if (h->type == XRAYFDR_FILE_FDR)
		return h->version >= XRAYFDR_FDR_VERSION_MIN &&
		       h->version <= XRAYFDR_FDR_VERSION_MAX;
	if (h->type == XRAYFDR_FILE_BASIC)
		return h->version >= XRAYFDR_BASIC_VERSION_MIN &&
		       h->version <= XRAYFDR_BASIC_VERSION_MAX;
	return false;
}

static int read_header(struct xrayfdr_reader *r)
{
	const uint8_t *p;
	size_t avail = 0;
	struct xrayfdr_file_header le, be;
	int ret;

	ret = fill(r, XRAYFDR_FILE_HEADER_SIZE, &p, &avail);
	if (ret == -ENODATA)
		return fail(
			r, -EBADMSG, 0, "file header", "header-short",
			"file is %zu bytes, shorter than the 32-byte header",
			avail);
	if (ret)
		return io_error(r, ret);
	r->hdr_crc = crc32c(0, p, XRAYFDR_FILE_HEADER_SIZE);
	fdr_decode_file_header(p, false, &le);
	fdr_decode_file_header(p, true, &be);
	if (header_plausible(&le)) {
		r->hdr = le;
	} else if (header_plausible(&be)) {
		r->hdr = be;
	} else if (le.type == XRAYFDR_FILE_FDR ||
		   le.type == XRAYFDR_FILE_BASIC) {
		return fail(
			r, -ENOTSUP, 0, "file header", "header-version",
			"unsupported version %u for %s logs (this reader knows %u-%u)",
			le.version, le.type ? "FDR" : "basic",
			le.type ? XRAYFDR_FDR_VERSION_MIN :
				  XRAYFDR_BASIC_VERSION_MIN,
			le.type ? XRAYFDR_FDR_VERSION_MAX :
				  XRAYFDR_BASIC_VERSION_MAX);
	} else {
		return fail(
			r, -ENOTSUP, 0, "file header", "header-type",
			"unknown file type %u (0 is basic, 1 is FDR): not an XRay log",
			le.type);
	}
	r->be = r->hdr.big_endian;
	r->basic = r->hdr.type == XRAYFDR_FILE_BASIC;
	r->pos = XRAYFDR_FILE_HEADER_SIZE;
	r->state = ST_BUFFER_START;
	r->buf_end = NO_END;
	return 0;
}

int xrayfdr_reader_header(struct xrayfdr_reader *r,
			  const struct xrayfdr_file_header **hdr)
{
	if (r->header_ret == 1) {
		int ret = read_header(r);

		/* A bad header leaves nothing to resync with. */
		if (ret) {
			r->header_ret = ret == RESYNC ? -EBADMSG : ret;
			r->stop = r->header_ret;
		} else {
			r->header_ret = 0;
		}
	}
	if (r->header_ret) {
		errno = -r->header_ret;
		return r->header_ret;
	}
	if (hdr)
		*hdr = &r->hdr;
	return 0;
}

/*
 * Call stacks, for "exit without entry".
 */
static struct call_stack *stack_of(struct xrayfdr_reader *r, uint32_t pid,
				   uint32_t tid)
{
	uint64_t key = thread_key(pid, tid);
	struct call_stack *s;

	/* Records come a buffer, so a thread, at a time. */
	if (r->cur_stack && r->cur_key == key)
		return r->cur_stack;
	s = u64map_get(&r->stacks, key);
	if (s) {
		r->cur_stack = s;
		r->cur_key = key;
		return s;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (u64map_put(&r->stacks, key, s)) {
		free(s);
		return NULL;
	}
	r->cur_stack = s;
	r->cur_key = key;
	return s;
}

/* The thread's call stack, if calls are checked: 1 with *@s, 0 if they
 * are not, -ENOMEM. */
static int checked_stack(struct xrayfdr_reader *r, uint32_t pid, uint32_t tid,
			 struct call_stack **s)
{
	if (r->flags & XRAYFDR_READ_NO_CALL_CHECK)
		return 0;
	*s = stack_of(r, pid, tid);
	return *s ? 1 : -ENOMEM;
}

static int track_call(struct xrayfdr_reader *r, uint32_t pid, uint32_t tid,
		      unsigned int kind, int32_t func_id, uint64_t offset)
{
	struct call_stack *s;
	int ret = checked_stack(r, pid, tid, &s);

	if (ret <= 0)
		return ret;
	if (kind == XRAYFDR_FUNC_ENTRY || kind == XRAYFDR_FUNC_ENTRY_ARGS) {
		if (s->depth == s->cap && s->cap < STACK_LIMIT) {
			uint32_t cap = s->cap ? s->cap * 2 : 32;
			int32_t *ids = realloc(s->ids, cap * sizeof(*ids));

			if (!ids)
				return -ENOMEM;
			s->ids = ids;
			s->cap = cap;
		}
		if (s->depth < s->cap)
			s->ids[s->depth] = func_id;
		s->depth++;
		return 0;
	}
	/* Entries deeper than the limit were not kept: trust their exits. */
	if (s->depth > s->cap) {
		s->depth--;
		return 0;
	}
	/* The window began inside this call: not a fault of the log. */
	if (!s->depth) {
		r->stats.window_exits++;
		r->stats.window_threads += !s->cut;
		s->cut = true;
		return 0;
	}
	/* Unwinding (longjmp, exceptions) may skip exits: pop to the match. */
	for (uint32_t i = s->depth; i-- > 0;) {
		if (s->ids[i] == func_id) {
			s->depth = i;
			return 0;
		}
	}
	r->stats.unmatched_exits++;
	warn(r, offset, xrayfdr_func_kind_name(kind), "exit-without-entry",
	     "exit from function %" PRId32 " on thread %" PRIu32
	     " with no matching entry before it",
	     func_id, tid);
	return 0;
}

/* Report @d, whose message @fmt formats. */
static void report(struct xrayfdr_reader *r, struct xrayfdr_diag *d,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tell(r, d, fmt, ap);
	va_end(ap);
}

/*
 * Per-thread time order: each of a thread's records (function records,
 * events, NewCPUId and TSCWrap bases) at or after its previous one, across
 * buffers.  Whose fault a step back is depends on who wrote the log: the
 * caller says with XRAYFDR_READ_TIME_ERRORS.  A step back is reported
 * once; the thread's time then goes on from there.
 */
static int check_time(struct xrayfdr_reader *r, uint32_t pid, uint32_t tid,
		      uint64_t tsc, uint64_t offset, const char *record)
{
	bool error = r->flags & XRAYFDR_READ_TIME_ERRORS;
	struct xrayfdr_diag d = {
		.severity = error ? XRAYFDR_SEV_ERROR : XRAYFDR_SEV_WARNING,
		.error = error ? -EBADMSG : 0,
		.offset = offset,
		.record = record,
		.rule = "time-order",
	};
	uint64_t hz = r->hdr.cycle_frequency, back, ns, last, last_off;
	struct call_stack *s;
	int ret = checked_stack(r, pid, tid, &s);

	if (ret <= 0)
		return ret;
	last = s->last_tsc;
	last_off = s->last_off;
	s->last_tsc = tsc;
	s->last_off = offset;
	if (!s->timed || tsc >= last) {
		s->timed = true;
		return 0;
	}
	back = last - tsc;
	r->stats.time_back++;
	if (error)
		r->stats.errors++;
	else
		r->stats.warnings++;
	/* in ns, without overflow for any TSC frequency below 18 GHz */
	ns = hz ? back / hz * 1000000000u + back % hz * 1000000000u / hz : 0;
	report(r, &d,
	       "time goes back on thread %" PRIu32 ": TSC %" PRIu64
	       " is %" PRIu64 " ticks (%" PRIu64 " ns) before TSC %" PRIu64
	       " of its record at offset %" PRIu64,
	       tid, tsc, back, ns, last, last_off);
	return 0;
}

static int free_stack(void *ctx, void *value)
{
	struct call_stack *s = value;

	(void)ctx;
	free(s->ids);
	free(s);
	return 0;
}

/*
 * FDR records.
 */
static const char *state_expects(const struct xrayfdr_reader *r)
{
	switch (r->state) {
	case ST_BUFFER_START:
		return r->hdr.version >= 2 ? "BufferExtents" : "NewBuffer";
	case ST_NEW_BUFFER:
		return "NewBuffer";
	case ST_WALLTIME:
		return "WallTimeMarker";
	case ST_PID_OR_CPU:
		return r->hdr.version >= 3 ? "Pid or NewCPUId" : "NewCPUId";
	case ST_CPU:
		return "NewCPUId";
	default:
		return "a body record";
	}
}

/* After an error: find a buffer start we can trust, counting what we skip. */
static int resync(struct xrayfdr_reader *r, uint64_t err_off)
{
	uint64_t target = NO_END;
	int ret;

	r->stats.skipped_buffers++;
	r->args_open = false;
	r->buf_open = false; /* reported already */
	if (r->buf_end != NO_END && r->buf_end >= err_off &&
	    r->state != ST_BUFFER_START) {
		target = r->buf_end;
	} else if (r->hdr.version == 1 && r->hdr.buffer_size) {
		/* v1 buffers sit at fixed strides from the header. */
		uint64_t bs = r->hdr.buffer_size;
		uint64_t k = (err_off - XRAYFDR_FILE_HEADER_SIZE) / bs + 1;

		if (k <= (NO_END - 1 - XRAYFDR_FILE_HEADER_SIZE) / bs)
			target = XRAYFDR_FILE_HEADER_SIZE + k * bs;
		else
			target = NO_END - 1;
	}
	r->state = ST_BUFFER_START;
	r->buf_end = NO_END;
	if (target != NO_END) {
		ret = skip_to(r, target);
		r->stats.skipped_bytes += r->pos - err_off;
		return ret;
	}
	/*
	 * No boundary known: scan byte by byte for a record that starts a
	 * buffer and is followed by what must follow it.
	 */
	ret = skip_to(r, err_off + 1);
	if (ret)
		return ret;
	for (;;) {
		const uint8_t *p;
		size_t avail = 0;
		bool hit;

		ret = fill(r, 2 * XRAYFDR_METADATA_RECORD_SIZE, &p, &avail);
		if (ret == -ENODATA) {
			r->pos += avail;
			break;
		}
		if (ret)
			return ret;
		if (r->hdr.version >= 2) {
			uint64_t ext = get64(p + MD_OFF_BODY, r->be);

			hit = p[0] == fdr_md_first_byte(
					      XRAYFDR_MD_BUFFER_EXTENTS,
					      r->be) &&
			      (!r->hdr.buffer_size ||
			       ext <= r->hdr.buffer_size) &&
			      p[16] == fdr_md_first_byte(XRAYFDR_MD_NEW_BUFFER,
							 r->be);
		} else {
			hit = p[0] == fdr_md_first_byte(XRAYFDR_MD_NEW_BUFFER,
							r->be) &&
			      p[16] == fdr_md_first_byte(
					       XRAYFDR_MD_WALLTIME_MARKER,
					       r->be);
		}
		if (hit)
			break;
		r->pos++;
	}
	r->stats.skipped_bytes += r->pos - err_off;
	return 0;
}

/*
 * Checksums.
 */

/* The end of a buffer: in a log whose buffers carry checksums, one that
 * has none is damaged where its checksum was. */
static void end_buffer(struct xrayfdr_reader *r)
{
	if (!r->buf_open || r->buf_summed) {
		r->buf_open = false;
		return;
	}
	r->buf_open = false;
	if (!r->log_sums) {
		if (!r->unsummed++)
			r->unsummed_at = r->open_start;
		return;
	}
	sum_error(
		r, r->open_start, "buffer",
		"the buffer of thread %" PRIu32
		" has no checksum, as the log's other buffers do: its end or its framing is damaged",
		r->open_tid);
}

/* The checksum event at @off, with @payload: check the current buffer. */
static void sum_check(struct xrayfdr_reader *r, uint64_t off,
		      const uint8_t *payload)
{
	uint64_t crc_at = off + XRAYFDR_METADATA_RECORD_SIZE + SUM_OFF_CRC;
	uint32_t want = get32(payload + SUM_OFF_CRC, false);
	uint32_t covered = get32(payload + SUM_OFF_COVERED, false);
	uint32_t hdr = get32(payload + SUM_OFF_HEADER_CRC, false);

	if (!r->log_sums && r->unsummed)
		sum_error(
			r, r->unsummed_at, "buffer",
			"%" PRIu64
			" buffers from this one on have no checksum, as the log's other buffers do: their ends or their framing are damaged",
			r->unsummed);
	r->log_sums = true;
	r->buf_summed = r->buf_open;
	sum_upto(r, crc_at);
	if (r->sum_from == NO_END)
		return; /* not all of it was read (or a second one) */
	r->sum_from = NO_END;
	if (crc_at - r->open_start != covered) {
		sum_error(r, r->open_start, "buffer",
			  "the checksum of the buffer of thread %" PRIu32
			  " at offset %" PRIu64 " covers %" PRIu32
			  " bytes; the buffer has %" PRIu64
			  " before it: its framing is damaged",
			  r->open_tid, off, covered, crc_at - r->open_start);
		return;
	}
	if (r->sum_crc != want) {
		sum_error(r, r->open_start, "buffer",
			  "the buffer of thread %" PRIu32 " (%" PRIu32
			  " bytes) fails its checksum: CRC32C 0x%08" PRIx32
			  " recorded at offset %" PRIu64 ", 0x%08" PRIx32
			  " computed: it is damaged",
			  r->open_tid, covered, want, off, r->sum_crc);
		return;
	}
	r->stats.sum_ok++;
	if (hdr != r->hdr_crc && !r->hdr_reported) {
		r->hdr_reported = true;
		sum_error(r, 0, "file header",
			  "the header's CRC32C is 0x%08" PRIx32
			  "; the buffer at offset %" PRIu64
			  " recorded 0x%08" PRIx32 ": the header is damaged",
			  r->hdr_crc, r->open_start, hdr);
	}
}

/* The record @rec of the current buffer's body: its checksum?  Only as
 * its last record, where the runtime puts it: a program's own event that
 * looks like one elsewhere is its own. */
static bool is_sum_event(const struct xrayfdr_reader *r,
			 const struct xrayfdr_record *rec)
{
	return rec->md.kind == XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
	       r->hdr.version >= 5 &&
	       rec->offset + SUM_EVENT_SIZE == r->buf_end &&
	       fdr_is_sum_payload(rec->md.payload, rec->md.event_size);
}

/* Version 1: the checksum after EndOfBuffer, at @off, if it is there. */
static void sum_check_v1(struct xrayfdr_reader *r, uint64_t off, uint64_t end)
{
	const uint8_t *p;
	size_t avail = 0;

	if (end - off < SUM_EVENT_SIZE || fill(r, SUM_EVENT_SIZE, &p, &avail) ||
	    p[0] != fdr_md_first_byte(XRAYFDR_MD_CUSTOM_EVENT_MARKER, r->be) ||
	    !fdr_is_sum_payload(p + XRAYFDR_METADATA_RECORD_SIZE,
				(int32_t)get32(p + MD_OFF_BODY, r->be)))
		return;
	sum_check(r, off, p + XRAYFDR_METADATA_RECORD_SIZE);
}

static void start_buffer(struct xrayfdr_reader *r, uint64_t offset)
{
	end_buffer(r);
	r->buf_open = true;
	r->buf_summed = false;
	r->open_start = offset;
	r->open_tid = 0;
	r->sum_from = offset;
	r->sum_pos = offset;
	r->sum_crc = 0;
	r->stats.buffers++;
	r->buf_start = offset;
	r->tid = 0;
	r->pid = 0;
	r->cpu = 0;
	r->base_tsc = 0;
	r->args_open = false;
}

/* Check a metadata record against the grammar and apply it to the context. */
static int fdr_apply_metadata(struct xrayfdr_reader *r, uint64_t off,
			      struct xrayfdr_metadata *md)
{
	unsigned int v = r->hdr.version;
	const char *name = xrayfdr_md_kind_name(md->kind);

	if (md->kind == XRAYFDR_MD_END_OF_BUFFER && v >= 2)
		return fail(
			r, -EBADMSG, off, name, "eob-version",
			"EndOfBuffer is not allowed in version %u logs (BufferExtents replaced it in version 2)",
			v);

	switch (r->state) {
	case ST_BUFFER_START: /* checked by fdr_step() */
		break;
	case ST_NEW_BUFFER:
		if (md->kind != XRAYFDR_MD_NEW_BUFFER)
			goto order;
		break;
	case ST_WALLTIME:
		if (md->kind != XRAYFDR_MD_WALLTIME_MARKER)
			goto order;
		break;
	case ST_PID_OR_CPU:
		if (md->kind != XRAYFDR_MD_PID &&
		    md->kind != XRAYFDR_MD_NEW_CPU_ID)
			goto order;
		break;
	case ST_CPU:
		if (md->kind != XRAYFDR_MD_NEW_CPU_ID)
			goto order;
		break;
	case ST_BODY:
		switch (md->kind) {
		case XRAYFDR_MD_NEW_BUFFER:
		case XRAYFDR_MD_WALLTIME_MARKER:
		case XRAYFDR_MD_PID:
		case XRAYFDR_MD_BUFFER_EXTENTS:
			return fail(
				r, -EBADMSG, off, name, "misplaced-record",
				"%s belongs in a buffer preamble, not in its body",
				name);
		case XRAYFDR_MD_CALL_ARGUMENT:
			if (!r->args_open)
				return fail(
					r, -EBADMSG, off, name, "call-argument",
					"CallArgument must follow a Function Entry Args record or another CallArgument");
			break;
		default:
			break;
		}
		break;
	case ST_PADDING:
	case ST_SKIP:
		break; /* not reached: both are consumed whole */
	}
	r->args_open = md->kind == XRAYFDR_MD_CALL_ARGUMENT;

	switch (md->kind) {
	case XRAYFDR_MD_BUFFER_EXTENTS:
		start_buffer(r, off);
		r->buf_end =
			end_at(off + XRAYFDR_METADATA_RECORD_SIZE, md->extents);
		if (r->hdr.buffer_size && md->extents > r->hdr.buffer_size)
			warn(r, off, name, "extents-size",
			     "buffer extents of %" PRIu64
			     " bytes exceed the header's buffer_size %" PRIu64,
			     md->extents, r->hdr.buffer_size);
		r->state = md->extents ? ST_NEW_BUFFER : ST_BUFFER_START;
		break;
	case XRAYFDR_MD_NEW_BUFFER:
		if (v == 1) {
			start_buffer(r, off);
			r->buf_end = r->hdr.buffer_size ?
					     end_at(off, r->hdr.buffer_size) :
					     NO_END;
		}
		r->tid = (uint32_t)md->tid;
		r->open_tid = r->tid;
		r->state = ST_WALLTIME;
		if (r->keep_thread && r->buf_end != NO_END &&
		    !r->keep_thread(r->keep_ctx, r->tid)) {
			r->state = ST_SKIP;
			r->buf_open = false; /* left unread and unchecked */
		}
		break;
	case XRAYFDR_MD_WALLTIME_MARKER:
		r->wall_sec = md->seconds;
		r->wall_usec = md->micros;
		r->state = ST_PID_OR_CPU;
		break;
	case XRAYFDR_MD_PID:
		if (v < 3)
			warn(r, off, name, "pid-version",
			     "Pid records appeared in version 3; this is a version %u log",
			     v);
		r->pid = (uint32_t)md->pid;
		r->state = ST_CPU;
		break;
	case XRAYFDR_MD_NEW_CPU_ID:
		r->cpu = md->cpu;
		r->base_tsc = md->tsc;
		r->state = ST_BODY;
		break;
	case XRAYFDR_MD_TSC_WRAP:
		r->base_tsc = md->tsc;
		break;
	case XRAYFDR_MD_END_OF_BUFFER:
		r->state = ST_PADDING;
		break;
	default:
		break;
	}
	return 0;

order:
	return fail(
		r, -EBADMSG, off, name, "preamble-order",
		"buffer preamble must be %sNewBuffer, WallTimeMarker, %sNewCPUId; expected %s",
		v >= 2 ? "BufferExtents, " : "", v >= 3 ? "[Pid], " : "",
		state_expects(r));
}

/* Check an event payload's size; return the size or a negative result. */
static int64_t payload_size(struct xrayfdr_reader *r, uint64_t off,
			    const struct xrayfdr_metadata *md, int *ret)
{
	const char *name = xrayfdr_md_kind_name(md->kind);
	uint64_t end = off + XRAYFDR_METADATA_RECORD_SIZE;

	if (md->event_size < 0) {
		*ret = fail(r, -EBADMSG, off, name, "event-size",
			    "negative payload size %" PRId32, md->event_size);
		return -1;
	}
	if (md->event_size == 0)
		warn(r, off, name, "event-size",
		     "empty payload (llvm-xray rejects events of size 0)");
	if ((size_t)md->event_size > r->max_payload) {
		*ret = fail(r, -EBADMSG, off, name, "event-size",
			    "payload of %" PRId32
			    " bytes exceeds the reader's limit of %zu bytes",
			    md->event_size, r->max_payload);
		return -1;
	}
	if (r->buf_end != NO_END &&
	    end_at(end, (uint64_t)md->event_size) > r->buf_end) {
		*ret = fail(
			r, -EBADMSG, off, name, "extents-cross",
			"payload of %" PRId32 " bytes runs %" PRIu64
			" bytes past the end of its buffer at offset %" PRIu64,
			md->event_size,
			end + (uint64_t)md->event_size - r->buf_end,
			r->buf_end);
		return -1;
	}
	return md->event_size;
}

static int truncated(struct xrayfdr_reader *r, uint64_t off, const char *what,
		     size_t need, size_t avail)
{
	if (r->buf_end != NO_END && r->hdr.version >= 2 &&
	    r->state != ST_BUFFER_START)
		return fail(
			r, -EBADMSG, off, what, "truncated",
			"the file ends inside the buffer that began at offset %" PRIu64
			": its BufferExtents promised %" PRIu64
			" bytes, the file holds %" PRIu64
			" (this record needs %zu, %zu remain)",
			r->buf_start,
			r->buf_end - r->buf_start -
				XRAYFDR_METADATA_RECORD_SIZE,
			off + avail - r->buf_start -
				XRAYFDR_METADATA_RECORD_SIZE,
			need, avail);
	return fail(
		r, -EBADMSG, off, what, "truncated",
		"the file ends inside this record (it needs %zu bytes, %zu remain)",
		need, avail);
}

/* Does the metadata record @rec say when its thread was? (A checksum is
 * framing; v1-4 custom events before version 5 carry a TSC of their own.) */
static bool is_time_point(const struct xrayfdr_reader *r,
			  const struct xrayfdr_record *rec)
{
	switch (rec->md.kind) {
	case XRAYFDR_MD_NEW_CPU_ID:
	case XRAYFDR_MD_TSC_WRAP:
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		return true;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
		return !is_sum_event(r, rec);
	default:
		return false;
	}
}

/* One FDR record into r->rec.  Return 1, 0 at the end, RESYNC, or -errno. */
static int fdr_step(struct xrayfdr_reader *r)
{
	struct xrayfdr_record *rec = &r->rec;
	const uint8_t *p;
	size_t avail = 0, need;
	uint64_t off = r->pos;
	int ret;

	if (r->state != ST_BUFFER_START && r->pos >= r->buf_end) {
		if (r->state != ST_BODY && r->state != ST_PADDING &&
		    r->state != ST_SKIP)
			return fail(
				r, -EBADMSG, off, "buffer",
				"preamble-incomplete",
				"buffer that began at offset %" PRIu64
				" ends before its preamble is complete (expected %s)",
				r->buf_start, state_expects(r));
		r->state = ST_BUFFER_START;
		r->buf_end = NO_END;
	}

	memset(rec, 0, sizeof(*rec));
	rec->offset = off;

	if (r->state == ST_SKIP) {
		uint64_t end = r->buf_end;

		/* a cut file ends inside it: the reader of its thread says so */
		r->state = ST_BUFFER_START;
		r->buf_end = NO_END;
		ret = skip_to(r, end);
		if (ret)
			return io_error(r, ret);
		rec->type = XRAYFDR_REC_PADDING;
		rec->size = r->pos - off;
		return 1;
	}
	if (r->state == ST_PADDING) {
		uint64_t end = r->buf_end;

		/* Without buffer_size the next buffer follows at once. */
		r->state = ST_BUFFER_START;
		r->buf_end = NO_END;
		if (end != NO_END && end > off) {
			sum_check_v1(r, off, end);
			ret = skip_to(r, end);
			if (ret)
				return io_error(r, ret);
			if (r->pos < end)
				warn(r, off, "padding", "truncated",
				     "version 1 buffer padding ends %" PRIu64
				     " bytes short of buffer_size",
				     end - r->pos);
			rec->type = XRAYFDR_REC_PADDING;
			rec->size = r->pos - off;
			return 1;
		}
	}

	ret = fill(r, 1, &p, &avail);
	if (ret == -ENODATA) {
		if (r->state == ST_BUFFER_START)
			return 0;
		return truncated(r, off, "next record", 1, 0);
	}
	if (ret)
		return io_error(r, ret);

	if (r->state == ST_BUFFER_START) {
		unsigned int want = r->hdr.version >= 2 ?
					    XRAYFDR_MD_BUFFER_EXTENTS :
					    XRAYFDR_MD_NEW_BUFFER;

		if (p[0] != fdr_md_first_byte(want, r->be))
			return fail(
				r, -EBADMSG, off, "buffer", "buffer-start",
				"a buffer must begin with %s in version %u logs; found byte 0x%02x",
				xrayfdr_md_kind_name(want), r->hdr.version,
				p[0]);
	}
	if (fdr_is_metadata(p[0], r->be)) {
		unsigned int kind = fdr_md_kind(p[0], r->be);

		need = XRAYFDR_METADATA_RECORD_SIZE;
		if (kind >= XRAYFDR_MD_KIND_COUNT)
			return fail(
				r, -EBADMSG, off, "metadata record",
				"unknown-kind",
				"unknown metadata record kind %u (known: 0-%u)",
				kind, XRAYFDR_MD_KIND_COUNT - 1);
		rec->type = XRAYFDR_REC_METADATA;
	} else {
		need = XRAYFDR_FUNCTION_RECORD_SIZE;
		rec->type = XRAYFDR_REC_FUNCTION;
	}
	if (r->buf_end != NO_END && off + need > r->buf_end)
		return fail(
			r, -EBADMSG, off,
			rec->type == XRAYFDR_REC_METADATA ?
				xrayfdr_md_kind_name(fdr_md_kind(p[0], r->be)) :
				"function record",
			r->hdr.version >= 2 ? "extents-cross" : "v1-boundary",
			"%zu-byte record runs past the end of its buffer at offset %" PRIu64,
			need, r->buf_end);
	ret = fill(r, need, &p, &avail);
	if (ret == -ENODATA)
		return truncated(
			r, off,
			rec->type == XRAYFDR_REC_METADATA ?
				xrayfdr_md_kind_name(fdr_md_kind(p[0], r->be)) :
				"function record",
			need, avail);
	if (ret)
		return io_error(r, ret);

	if (rec->type == XRAYFDR_REC_FUNCTION) {
		uint32_t word = get32(p, r->be);
		unsigned int kind = fdr_function_kind(word, r->be);

		if (kind > XRAYFDR_FUNC_ENTRY_ARGS)
			return fail(
				r, -EBADMSG, off, "function record",
				"function-kind",
				"unknown function record action %u (known: 0-3)",
				kind);
		if (r->state != ST_BODY)
			return fail(
				r, -EBADMSG, off, xrayfdr_func_kind_name(kind),
				"preamble-order",
				"function record before the buffer preamble is complete (expected %s)",
				state_expects(r));
		rec->func_kind = (uint8_t)kind;
		rec->func_id = (int32_t)fdr_function_id(word, r->be);
		rec->tsc_delta = get32(p + 4, r->be);
		r->base_tsc += rec->tsc_delta;
		rec->tsc = r->base_tsc;
		rec->size = need;
		r->args_open = kind == XRAYFDR_FUNC_ENTRY_ARGS;
		r->pos += need;
		ret = check_time(r, r->pid, r->tid, rec->tsc, off,
				 xrayfdr_func_kind_name(kind));
		if (!ret)
			ret = track_call(r, r->pid, r->tid, kind, rec->func_id,
					 off);
		if (ret)
			return fail(r, ret, off, "function record", "memory",
				    "%s", strerror(-ret));
		return 1;
	}

	fdr_decode_metadata(p, r->be, r->hdr.version, &rec->md);
	ret = fdr_apply_metadata(r, off, &rec->md);
	if (ret)
		return ret;
	rec->size = need;
	rec->tsc = r->base_tsc;
	if (rec->md.kind == XRAYFDR_MD_CUSTOM_EVENT_MARKER ||
	    rec->md.kind == XRAYFDR_MD_TYPED_EVENT_MARKER) {
		int64_t size = payload_size(r, off, &rec->md, &ret);

		if (size < 0)
			return ret;
		ret = fill(r, need + (size_t)size, &p, &avail);
		if (ret == -ENODATA)
			return truncated(r, off,
					 xrayfdr_md_kind_name(rec->md.kind),
					 need + (size_t)size, avail);
		if (ret)
			return io_error(r, ret);
		rec->md.payload = p + need;
		rec->size += (uint64_t)size;
		if (is_sum_event(r, rec))
			sum_check(r, off, rec->md.payload);
		if (rec->md.kind == XRAYFDR_MD_TYPED_EVENT_MARKER ||
		    r->hdr.version >= 5) {
			r->base_tsc += (uint64_t)(int64_t)rec->md.tsc_delta;
			rec->tsc = r->base_tsc;
		} else {
			rec->tsc =
				rec->md.tsc; /* v1-4: absolute, base unchanged */
		}
	}
	r->pos += rec->size;
	if (is_time_point(r, rec)) {
		ret = check_time(r, r->pid, r->tid, rec->tsc, off,
				 xrayfdr_md_kind_name(rec->md.kind));
		if (ret)
			return fail(r, ret, off, "metadata record", "memory",
				    "%s", strerror(-ret));
	}
	return 1;
}

/*
 * Basic ("naive") format: fixed 32-byte records.
 */
static int basic_step(struct xrayfdr_reader *r)
{
	struct xrayfdr_record *rec = &r->rec;
	const uint8_t *p;
	size_t avail = 0;
	uint64_t off = r->pos;
	uint16_t type;
	int ret;

	ret = fill(r, XRAYFDR_BASIC_RECORD_SIZE, &p, &avail);
	if (ret == -ENODATA) {
		if (!avail)
			return 0;
		r->pos += avail; /* in keep-going mode, skip the fragment */
		return fail(r, -EBADMSG, off, "basic record", "truncated",
			    "the last %zu bytes are not a whole 32-byte record",
			    avail);
	}
	if (ret)
		return io_error(r, ret);
	memset(rec, 0, sizeof(*rec));
	rec->offset = off;
	rec->size = XRAYFDR_BASIC_RECORD_SIZE;
	type = get16(p + BASIC_OFF_RECORD_TYPE, r->be);
	/* Consume first: in keep-going mode a bad record is skipped alone. */
	r->pos += XRAYFDR_BASIC_RECORD_SIZE;
	if (type == BASIC_RECORD_FUNCTION) {
		rec->type = XRAYFDR_REC_BASIC;
		rec->cpu = p[BASIC_OFF_CPU];
		rec->func_kind = p[BASIC_OFF_KIND];
		rec->func_id = (int32_t)get32(p + BASIC_OFF_FUNC_ID, r->be);
		rec->tsc = get64(p + BASIC_OFF_TSC, r->be);
		rec->tid = get32(p + BASIC_OFF_TID, r->be);
		rec->pid = get32(p + BASIC_OFF_PID, r->be);
		r->basic_args_open = false;
		if (rec->func_kind > XRAYFDR_FUNC_ENTRY_ARGS)
			return fail(
				r, -EBADMSG, off, "basic record",
				"function-kind",
				"unknown function record action %u (known: 0-3)",
				rec->func_kind);
		r->basic_args_open = rec->func_kind == XRAYFDR_FUNC_ENTRY_ARGS;
		r->basic_func_id = rec->func_id;
		r->basic_tid = rec->tid;
		r->basic_pid = rec->pid;
		ret = check_time(r, rec->pid, rec->tid, rec->tsc, off,
				 "basic record");
		if (!ret)
			ret = track_call(r, rec->pid, rec->tid, rec->func_kind,
					 rec->func_id, off);
		if (ret)
			return fail(r, ret, off, "basic record", "memory", "%s",
				    strerror(-ret));
		return 1;
	}
	if (type == BASIC_RECORD_ARG_PAYLOAD) {
		rec->type = XRAYFDR_REC_BASIC_ARG;
		rec->func_id = (int32_t)get32(p + BASIC_OFF_ARG_FUNC_ID, r->be);
		rec->tid = get32(p + BASIC_OFF_ARG_TID, r->be);
		rec->pid = get32(p + BASIC_OFF_ARG_PID, r->be);
		rec->arg = get64(p + BASIC_OFF_ARG_VALUE, r->be);
		if (!r->basic_args_open)
			return fail(
				r, -EBADMSG, off, "basic argument",
				"call-argument",
				"argument payload must follow a Function Entry Args record or another argument payload");
		if (rec->func_id != r->basic_func_id ||
		    rec->tid != r->basic_tid ||
		    (r->hdr.version >= 3 && rec->pid != r->basic_pid))
			return fail(r, -EBADMSG, off, "basic argument",
				    "call-argument",
				    "argument payload for function %" PRId32
				    " thread %" PRIu32
				    " follows a record of function %" PRId32
				    " thread %" PRIu32,
				    rec->func_id, rec->tid, r->basic_func_id,
				    r->basic_tid);
		return 1;
	}
	r->basic_args_open = false;
	return fail(
		r, -EBADMSG, off, "basic record", "basic-record-type",
		"unknown record type %u (0 is a function record, 1 an argument payload)",
		type);
}

static int next_record(struct xrayfdr_reader *r)
{
	int ret;

	if (r->stop)
		return r->stop > 0 ? 0 : r->stop;
	ret = xrayfdr_reader_header(r, NULL);
	if (ret)
		return ret;
	for (;;) {
		uint64_t off = r->pos;

		ret = r->basic ? basic_step(r) : fdr_step(r);
		if (ret == 1) {
			r->stats.records++;
			break;
		}
		if (ret == RESYNC) {
			/* A bad basic record was consumed whole: skip just it. */
			if (r->basic) {
				r->stats.skipped_bytes += r->pos - off;
				continue;
			}
			ret = resync(r, off);
			if (ret) {
				io_error(r, ret);
				break;
			}
			/* Never report twice from one place: move on a byte. */
			if (r->pos <= off && off == r->last_resync) {
				r->state = ST_BUFFER_START;
				ret = skip_to(r, off + 1);
				if (ret) {
					io_error(r, ret);
					break;
				}
			}
			r->last_resync = off;
			continue;
		}
		if (ret == 0) {
			end_buffer(r);
			r->stop = 1;
		}
		break;
	}
	r->stats.bytes = r->pos;
	return ret;
}

int xrayfdr_reader_next_record(struct xrayfdr_reader *r,
			       const struct xrayfdr_record **rec)
{
	int ret = next_record(r);

	r->ev_context_set = false;
	r->fast_end = 0;
	if (ret == 1)
		*rec = &r->rec;
	return ret;
}

/*
 * Events.
 */
static void event_context(struct xrayfdr_reader *r, struct xrayfdr_event *ev)
{
	const struct xrayfdr_record *rec = &r->rec;

	memset(ev, 0, sizeof(*ev));
	ev->offset = rec->offset;
	ev->tsc = rec->tsc;
	ev->args = r->args;
	if (r->basic) {
		ev->tid = rec->tid;
		ev->pid = rec->pid;
		ev->cpu = rec->cpu;
		return;
	}
	ev->tid = r->tid;
	ev->pid = r->pid;
	ev->cpu = r->cpu;
	ev->wall_sec = r->wall_sec;
	ev->wall_usec = r->wall_usec;
	ev->buffer_offset = r->buf_start;
}

/* Turn r->rec into r->ev.  Return true if the record is an event. */
static bool record_to_event(struct xrayfdr_reader *r)
{
	const struct xrayfdr_record *rec = &r->rec;
	struct xrayfdr_event *ev = &r->ev;

	switch (rec->type) {
	case XRAYFDR_REC_FUNCTION:
	case XRAYFDR_REC_BASIC:
		event_context(r, ev);
		ev->kind = rec->func_kind;
		ev->func_id = rec->func_id;
		return true;
	case XRAYFDR_REC_METADATA:
		if ((rec->md.kind != XRAYFDR_MD_CUSTOM_EVENT_MARKER &&
		     rec->md.kind != XRAYFDR_MD_TYPED_EVENT_MARKER) ||
		    is_sum_event(r, rec))
			return false; /* a checksum is framing, not an event */
		event_context(r, ev);
		ev->kind = rec->md.kind == XRAYFDR_MD_TYPED_EVENT_MARKER ?
				   XRAYFDR_EV_TYPED :
				   XRAYFDR_EV_CUSTOM;
		if (ev->kind == XRAYFDR_EV_CUSTOM && r->hdr.version == 4)
			ev->cpu = rec->md.cpu;
		ev->event_type = rec->md.event_type;
		ev->data = rec->md.payload;
		ev->data_size = (uint32_t)rec->md.event_size;
		return true;
	default:
		return false;
	}
}

static bool is_argument(const struct xrayfdr_record *rec)
{
	return rec->type == XRAYFDR_REC_BASIC_ARG ||
	       (rec->type == XRAYFDR_REC_METADATA &&
		rec->md.kind == XRAYFDR_MD_CALL_ARGUMENT);
}

/* The thread's fields of r->ev, which the fast paths leave as they are
 * until the general path runs. */
static void fast_context(struct xrayfdr_reader *r)
{
	struct xrayfdr_event *ev = &r->ev;

	if (r->ev_context_set)
		return;
	ev->wall_sec = r->wall_sec;
	ev->wall_usec = r->wall_usec;
	ev->tid = r->tid;
	ev->pid = r->pid;
	ev->cpu = r->cpu;
	ev->event_type = 0;
	ev->nargs = 0;
	ev->args = r->args;
	ev->data_size = 0;
	ev->data = NULL;
	ev->buffer_offset = r->buf_start;
	r->ev_context_set = true;
}

/*
 * The common case: a function record without arguments inside a buffer's
 * body, in the window, when calls are not checked.  What fdr_step() and
 * record_to_event() do for it, less the checks that cannot fail here.
 * Return true with r->ev filled, false to take the general path.
 */
static bool fast_function_event(struct xrayfdr_reader *r)
{
	struct xrayfdr_event *ev = &r->ev;
	const uint8_t *p;
	unsigned int kind;
	uint32_t word;

	if (r->pos + XRAYFDR_FUNCTION_RECORD_SIZE > r->fast_end)
		return false;
	p = r->data + (r->pos - r->data_off);
	if (fdr_is_metadata(p[0], r->be))
		return false;
	word = get32(p, r->be);
	kind = fdr_function_kind(word, r->be);
	/* arguments may follow an entry: the general path collects them */
	if (kind >= XRAYFDR_FUNC_ENTRY_ARGS)
		return false;
	r->base_tsc += get32(p + 4, r->be);
	r->args_open = false;
	ev->offset = r->pos;
	ev->tsc = r->base_tsc;
	ev->kind = kind;
	ev->func_id = (int32_t)fdr_function_id(word, r->be);
	fast_context(r);
	r->pos += XRAYFDR_FUNCTION_RECORD_SIZE;
	r->stats.records++;
	r->stats.events++;
	r->stats.bytes = r->pos;
	return true;
}

/* The loop of xrayfdr_reader_next_calls(), made once per byte order. */
static inline __attribute__((always_inline)) size_t
decode_calls(const uint8_t *p, size_t max, uint64_t *tsc,
	     struct xrayfdr_call_event *out, const bool be)
{
	uint64_t at = *tsc;
	size_t n;

	for (n = 0; n < max; n++, p += XRAYFDR_FUNCTION_RECORD_SIZE) {
		uint32_t word = get32(p, be);
		unsigned int kind = fdr_function_kind(word, be);

		if (fdr_is_metadata(p[0], be) ||
		    kind >= XRAYFDR_FUNC_ENTRY_ARGS)
			break;
		at += get32(p + 4, be);
		out[n].tsc = at;
		out[n].func_id = (int32_t)fdr_function_id(word, be);
		out[n].kind = kind;
	}
	*tsc = at;
	return n;
}

size_t xrayfdr_reader_next_calls(struct xrayfdr_reader *r,
				 struct xrayfdr_call_event *out, size_t max,
				 const struct xrayfdr_event **last)
{
	struct xrayfdr_event *ev = &r->ev;
	const bool be = r->be;
	uint64_t tsc = r->base_tsc;
	const uint8_t *p;
	size_t n;

	/* the same conditions as fast_function_event(), checked once */
	if (r->pos + XRAYFDR_FUNCTION_RECORD_SIZE > r->fast_end)
		return 0;
	if (max > (r->fast_end - r->pos) / XRAYFDR_FUNCTION_RECORD_SIZE)
		max = (r->fast_end - r->pos) / XRAYFDR_FUNCTION_RECORD_SIZE;
	p = r->data + (r->pos - r->data_off);
	n = be ? decode_calls(p, max, &tsc, out, true) :
		 decode_calls(p, max, &tsc, out, false);
	if (!n)
		return 0;
	r->base_tsc = tsc;
	r->args_open = false;
	r->pos += n * XRAYFDR_FUNCTION_RECORD_SIZE;
	ev->offset = r->pos - XRAYFDR_FUNCTION_RECORD_SIZE;
	ev->tsc = tsc;
	ev->kind = out[n - 1].kind;
	ev->func_id = out[n - 1].func_id;
	fast_context(r);
	r->stats.records += n;
	r->stats.events += n;
	r->stats.bytes = r->pos;
	*last = ev;
	return n;
}

static int general_event(struct xrayfdr_reader *r,
			 const struct xrayfdr_event **ev)
{
	/* the general path may change the buffer, the thread or r->ev */
	r->ev_context_set = false;
	for (;;) {
		int ret;

		if (r->stash) {
			r->stash = false;
			ret = 1;
		} else {
			ret = next_record(r);
		}
		if (ret <= 0) {
			/* The end or an error completes an entry's arguments;
			 * the next call reports the end or error again. */
			if (r->pending) {
				r->pending = false;
				r->stats.events++;
				*ev = &r->ev;
				return 1;
			}
			return ret;
		}
		if (r->pending) {
			if (is_argument(&r->rec)) {
				if (r->ev.nargs < MAX_ARGS)
					r->args[r->ev.nargs++] =
						r->rec.type == XRAYFDR_REC_BASIC_ARG ?
							r->rec.arg :
							r->rec.md.arg;
				continue;
			}
			r->stash = true;
			r->pending = false;
			r->stats.events++;
			*ev = &r->ev;
			return 1;
		}
		if (!record_to_event(r))
			continue;
		if (r->ev.kind == XRAYFDR_EV_ENTRY_ARGS) {
			r->pending = true;
			continue;
		}
		r->stats.events++;
		*ev = &r->ev;
		return 1;
	}
}

/*
 * Where the fast path may go after the general path returned: what it
 * checked per record before, checked once (all that changes these runs
 * the general path, or xrayfdr_reader_next_record(), which disarms it).
 */
static void fast_arm(struct xrayfdr_reader *r)
{
	uint64_t end = r->data_off + r->win_len;

	if (r->state != ST_BODY || r->basic || r->stop || r->stash ||
	    r->pending || !(r->flags & XRAYFDR_READ_NO_CALL_CHECK))
		end = 0;
	else if (r->buf_end != NO_END && r->buf_end < end)
		end = r->buf_end;
	r->fast_end = end;
}

int xrayfdr_reader_next_event(struct xrayfdr_reader *r,
			      const struct xrayfdr_event **ev)
{
	int ret;

	if (fast_function_event(r)) {
		*ev = &r->ev;
		return 1;
	}
	ret = general_event(r, ev);
	fast_arm(r);
	return ret;
}

/*
 * Construction.
 */
static struct xrayfdr_reader *reader_new(const char *name,
					 const struct xrayfdr_reader_opts *opts)
{
	struct xrayfdr_reader *r;

	if (!OPTS_VALID(opts)) {
		errno = E2BIG;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->name = strdup(name ? name : "<memory>");
	if (!r->name) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->flags = OPTS_GET(opts, flags, 0u);
	r->max_payload = OPTS_GET(opts, max_payload, (size_t)0);
	r->on_diag = OPTS_GET(opts, on_diag, (xrayfdr_diag_fn)NULL);
	r->diag_ctx = OPTS_GET(opts, diag_ctx, (void *)NULL);
	r->keep_thread =
		OPTS_GET(opts, keep_thread, (int (*)(void *, uint32_t))NULL);
	r->keep_ctx = OPTS_GET(opts, keep_ctx, (void *)NULL);
	if (!r->max_payload)
		r->max_payload = DEFAULT_MAX_PAYLOAD;
	if (r->max_payload > INT32_MAX)
		r->max_payload = INT32_MAX;
	r->fd = -1;
	r->header_ret = 1;
	r->file_size = NO_END;
	r->sum_from = NO_END;
	return r;
}

struct xrayfdr_reader *
xrayfdr_reader_new_mem(const void *data, size_t size, const char *name,
		       const struct xrayfdr_reader_opts *opts)
{
	struct xrayfdr_reader *r = reader_new(name, opts);

	if (!r)
		return NULL;
	r->is_mem = true;
	r->data = data;
	r->win_len = size;
	r->file_size = size;
	return r;
}

struct xrayfdr_reader *
xrayfdr_reader_new_fd(int fd, const char *name,
		      const struct xrayfdr_reader_opts *opts)
{
	struct xrayfdr_reader *r = reader_new(name, opts);
	struct stat st;

	if (!r)
		return NULL;
	r->fd = fd;
	r->buf_cap = READER_WINDOW_SIZE;
	r->buf = malloc(r->buf_cap);
	if (!r->buf) {
		xrayfdr_reader_free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->data = r->buf;
	/* Seeking is only safe where the size is known: regular files. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t at = lseek(fd, 0, SEEK_CUR);

		if (at == 0)
			r->file_size = (uint64_t)st.st_size;
	}
	return r;
}

struct xrayfdr_reader *
xrayfdr_reader_open(const char *path, const struct xrayfdr_reader_opts *opts)
{
	struct xrayfdr_reader *r;
	struct stat st;
	int fd;

	if (!strcmp(path, "-"))
		return xrayfdr_reader_new_fd(STDIN_FILENO, "<stdin>", opts);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		errno = EISDIR;
		return NULL;
	}
	r = xrayfdr_reader_new_fd(fd, path, opts);
	if (!r) {
		int err = errno;

		close(fd);
		errno = err;
		return NULL;
	}
	r->own_fd = true;
	return r;
}

void xrayfdr_reader_free(struct xrayfdr_reader *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	u64map_each(&r->stacks, free_stack, NULL);
	u64map_free(&r->stacks);
	free(r->buf);
	free(r->name);
	free(r);
}

const struct xrayfdr_diag *xrayfdr_reader_error(const struct xrayfdr_reader *r)
{
	return r->stop < 0 ? &r->err : NULL;
}

const struct xrayfdr_reader_stats *
xrayfdr_reader_stats(const struct xrayfdr_reader *r)
{
	return &r->stats;
}
