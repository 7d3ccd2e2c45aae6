// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reader: round trips through the writer in every version and byte
 * order, truncation at every byte, each grammar rule with its offset,
 * keep-going recovery, and streaming from files and pipes with bounded
 * memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "../../lib/fdr/frame.h"
#include "../../lib/fdr/records.h"

/*
 * A tiny file builder for hand-made (often invalid) logs.
 */
struct fb {
	uint8_t data[8192];
	size_t len;
	bool be;
	unsigned int version;
};

static void fb_header(struct fb *f, unsigned int version, uint16_t type,
		      uint64_t buffer_size)
{
	struct xrayfdr_file_header h = {
		.version = (uint16_t)version,
		.type = type,
		.constant_tsc = true,
		.nonstop_tsc = true,
		.big_endian = f->be,
		.cycle_frequency = 1000,
		.buffer_size = buffer_size,
	};

	f->version = version >= 1 && version <= 5 ? version : 5;
	f->len = 0;
	xrayfdr_encode_file_header(f->data, &h);
	f->len = 32;
}

static size_t fb_md(struct fb *f, struct xrayfdr_metadata md)
{
	size_t at = f->len;

	assert_int_equal(xrayfdr_encode_metadata(f->data + f->len, f->be,
						 f->version, &md),
			 0);
	f->len += 16;
	return at;
}

static size_t fb_fn(struct fb *f, unsigned int kind, int32_t id, uint32_t delta)
{
	size_t at = f->len;

	xrayfdr_encode_function(f->data + f->len, f->be, kind, id, delta);
	f->len += 8;
	return at;
}

static void fb_raw(struct fb *f, const void *p, size_t n)
{
	memcpy(f->data + f->len, p, n);
	f->len += n;
}

#define MD(...) ((struct xrayfdr_metadata){ __VA_ARGS__ })

/* A buffer preamble: [extents] NewBuffer WallTime [Pid] NewCPUId. */
static size_t fb_preamble(struct fb *f, uint64_t extents, int32_t tid)
{
	size_t ext_at = 0;

	if (f->version >= 2)
		ext_at = fb_md(f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS,
				     .extents = extents));
	fb_md(f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = tid));
	fb_md(f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER, .seconds = 1,
		    .micros = 2));
	if (f->version >= 3)
		fb_md(f, MD(.kind = XRAYFDR_MD_PID, .pid = 9));
	fb_md(f, MD(.kind = XRAYFDR_MD_NEW_CPU_ID, .cpu = 1, .tsc = 100));
	return ext_at;
}

/* Patch a buffer's extents to cover everything up to the end. */
static void fb_close(struct fb *f, size_t ext_at)
{
	struct xrayfdr_metadata md = { .kind = XRAYFDR_MD_BUFFER_EXTENTS,
				       .extents = f->len - ext_at - 16 };

	xrayfdr_encode_metadata(f->data + ext_at, f->be, f->version, &md);
}

static void expect_error(const struct fb *f, const char *rule, size_t offset,
			 int err)
{
	struct read_result res;

	read_all(f->data, f->len, 0, NULL, &res);
	if (res.ret != err || strcmp(res.rule, rule) || res.offset != offset)
		print_error("want %s at %zu (%d), got %s at %llu (%d)\n", rule,
			    offset, err, res.rule,
			    (unsigned long long)res.offset, res.ret);
	assert_int_equal(res.ret, err);
	assert_string_equal(res.rule, rule);
	assert_int_equal(res.offset, offset);
}

static void expect_warning(const struct fb *f, const char *rule)
{
	struct read_result res;

	read_all(f->data, f->len, 0, NULL, &res);
	assert_int_equal(res.ret, 0);
	assert_int_equal(res.warnings_seen, 1);
	assert_string_equal(res.last_warning_rule, rule);
}

/*
 * Round trips.
 */

/* What the reader can give back of an event written in a given format. */
static void expected_form(struct xrayfdr_event *e, unsigned int version)
{
	/* no Pid record, nor a process id field, before version 3 */
	if (version < 3)
		e->pid = 0;
	e->wall_sec = 0;
	e->wall_usec = 0;
	e->offset = 0;
}

/* Compare per thread: the file groups each thread's events in buffers. */
static void assert_same_per_thread(const struct event_list *want,
				   const struct event_list *got,
				   unsigned int version)
{
	assert_int_equal(want->n, got->n);
	for (size_t i = 0; i < want->n; i++) {
		struct xrayfdr_event w = want->ev[i];
		size_t j, seen = 0, rank = 0;

		/* w is the rank-th event of its thread in @want */
		for (j = 0; j < i; j++)
			if (want->ev[j].tid == w.tid)
				rank++;
		for (j = 0; j < got->n; j++) {
			if (got->ev[j].tid != w.tid)
				continue;
			if (seen++ == rank)
				break;
		}
		assert_true(j < got->n);
		struct xrayfdr_event g = got->ev[j];

		expected_form(&w, version);
		expected_form(&g, version);
		assert_event_equal(&w, &g);
	}
}

static void round_trip(bool basic, unsigned int version, bool be,
		       uint64_t buffer_size)
{
	struct gen_opts g = {
		.threads = 4,
		.count = 3000,
		.args = true,
		.custom = !basic,
		.typed = !basic && version >= 2,
		.wraps = true,
		.backwards = true,
		.seed = version * 2 + be,
	};
	struct event_list in = { 0 }, out = { 0 };
	struct membuf m = { 0 };
	struct read_result res;
	XRAYFDR_OPTS(xrayfdr_writer_opts, o, .basic = basic, .version = version,
		     .big_endian = be, .buffer_size = buffer_size);

	gen_events(&g, &in);
	if (basic)
		for (size_t i = 0; i < in.n; i++)
			in.ev[i].cpu %= 256;
	write_events(&o, &in, &m);
	read_all(m.data, m.len, 0, &out, &res);
	if (res.ret)
		print_error("read back: %s\n", res.rule);
	assert_int_equal(res.ret, 0);
	/* the generator's clock goes back now and then, on purpose */
	assert_true(res.stats.time_back > 0);
	assert_int_equal(res.stats.warnings, res.stats.time_back);
	assert_int_equal(res.stats.bytes, m.len);
	assert_same_per_thread(&in, &out, version);
	event_list_free(&in);
	event_list_free(&out);
	membuf_free(&m);
}

static void test_round_trip_fdr(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 5; v++)
		for (int be = 0; be <= 1; be++)
			round_trip(false, v, be, v == 1 ? 512 : 256);
}

static void test_round_trip_basic(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 3; v++)
		for (int be = 0; be <= 1; be++)
			round_trip(true, v, be, 0);
}

/* The raw records tile the file: offsets follow on, sizes add up. */
static void test_records_tile_file(void **state)
{
	struct gen_opts g = { .threads = 3,
			      .count = 500,
			      .args = true,
			      .custom = true,
			      .typed = true,
			      .wraps = true,
			      .seed = 3 };
	struct event_list in = { 0 };

	(void)state;
	gen_events(&g, &in);
	for (unsigned int v = 1; v <= 5; v += 4) {
		struct membuf m = { 0 };
		XRAYFDR_OPTS(xrayfdr_writer_opts, o, .version = v,
			     .buffer_size = 1024);
		struct xrayfdr_reader *r;
		const struct xrayfdr_record *rec;
		uint64_t at = 32;
		int ret;

		if (v == 1)
			for (size_t i = 0; i < in.n; i++)
				if (in.ev[i].kind == XRAYFDR_EV_TYPED)
					in.ev[i].kind = XRAYFDR_EV_CUSTOM;
		write_events(&o, &in, &m);
		r = xrayfdr_reader_new_mem(m.data, m.len, "tile", NULL);
		while ((ret = xrayfdr_reader_next_record(r, &rec)) == 1) {
			assert_int_equal(rec->offset, at);
			at += rec->size;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(at, m.len);
		xrayfdr_reader_free(r);
		membuf_free(&m);
	}
	event_list_free(&in);
}

/*
 * Truncation at every byte: never a crash, never an invented event, and
 * the documented rule.
 */
static void truncate_everywhere(bool basic, unsigned int version, bool be)
{
	struct gen_opts g = { .threads = 2,
			      .count = 120,
			      .args = true,
			      .custom = !basic,
			      .typed = !basic && version >= 2,
			      .wraps = true,
			      .seed = 11 };
	struct event_list in = { 0 }, full = { 0 };
	struct membuf m = { 0 };
	struct read_result res;
	XRAYFDR_OPTS(xrayfdr_writer_opts, o, .basic = basic, .version = version,
		     .big_endian = be, .buffer_size = 256);

	gen_events(&g, &in);
	write_events(&o, &in, &m);
	read_all(m.data, m.len, 0, &full, &res);
	assert_int_equal(res.ret, 0);

	for (unsigned int keep = 0; keep <= 1; keep++) {
		for (size_t len = 0; len < m.len; len++) {
			struct event_list part = { 0 };
			uint8_t *copy = malloc(len ? len : 1);

			/* a copy of exactly len bytes, so ASan sees any over-read */
			memcpy(copy, m.data, len);
			read_all(copy, len, keep ? XRAYFDR_READ_KEEP_GOING : 0,
				 &part, &res);
			if (len < 32) {
				assert_int_equal(res.ret, -EBADMSG);
				assert_string_equal(res.rule, "header-short");
			} else if (res.ret) {
				assert_false(keep);
				assert_int_equal(res.ret, -EBADMSG);
				if (strcmp(res.rule, "truncated") &&
				    strcmp(res.rule, "preamble-incomplete"))
					fail_msg("length %zu: rule %s", len,
						 res.rule);
				assert_true(res.offset <= len);
			}
			assert_true(part.n <= full.n);
			for (size_t i = 0; i < part.n; i++) {
				struct xrayfdr_event a = part.ev[i],
						     b = full.ev[i];

				if (i + 1 == part.n &&
				    a.kind == XRAYFDR_EV_ENTRY_ARGS) {
					/* cut between its arguments */
					assert_true(a.nargs <= b.nargs);
					b.nargs = a.nargs;
				}
				assert_event_equal(&a, &b);
			}
			event_list_free(&part);
			free(copy);
		}
	}
	event_list_free(&in);
	event_list_free(&full);
	membuf_free(&m);
}

static void test_truncation_v5(void **state)
{
	(void)state;
	truncate_everywhere(false, 5, false);
	truncate_everywhere(false, 4, true);
}

static void test_truncation_v1(void **state)
{
	(void)state;
	truncate_everywhere(false, 1, false);
}

static void test_truncation_basic(void **state)
{
	(void)state;
	truncate_everywhere(true, 3, true);
}

/*
 * The grammar, one rule at a time.
 */
static void test_header_errors(void **state)
{
	struct fb f = { 0 };

	(void)state;
	f.len = 10;
	expect_error(&f, "header-short", 0, -EBADMSG);
	fb_header(&f, 0, XRAYFDR_FILE_FDR, 0);
	expect_error(&f, "header-version", 0, -ENOTSUP);
	fb_header(&f, 6, XRAYFDR_FILE_FDR, 0);
	expect_error(&f, "header-version", 0, -ENOTSUP);
	fb_header(&f, 4, XRAYFDR_FILE_BASIC, 0);
	expect_error(&f, "header-version", 0, -ENOTSUP);
	fb_header(&f, 1, 7, 0);
	expect_error(&f, "header-type", 0, -ENOTSUP);
	/* a header alone is an empty, valid log */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	expect_error(&f, "", 0, 0);
}

static void test_buffer_start_and_preamble(void **state)
{
	struct fb f = { 0 };
	size_t at, ext;

	(void)state;
	/* v5 buffers start with BufferExtents */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	expect_error(&f, "buffer-start", 32, -EBADMSG);
	/* v1 buffers start with NewBuffer */
	fb_header(&f, 1, XRAYFDR_FILE_FDR, 4096);
	fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS, .extents = 16));
	expect_error(&f, "buffer-start", 32, -EBADMSG);
	/* WallTimeMarker before NewBuffer */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER));
	fb_close(&f, ext);
	expect_error(&f, "preamble-order", at, -EBADMSG);
	/* NewCPUId without a WallTimeMarker */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_CPU_ID));
	fb_close(&f, ext);
	expect_error(&f, "preamble-order", at, -EBADMSG);
	/* a function record before NewCPUId */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	fb_md(&f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER));
	fb_md(&f, MD(.kind = XRAYFDR_MD_PID, .pid = 3));
	at = fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_close(&f, ext);
	expect_error(&f, "preamble-order", at, -EBADMSG);
	/* the extents end before the preamble does */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	fb_md(&f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER));
	fb_close(&f, ext);
	expect_error(&f, "preamble-incomplete", f.len, -EBADMSG);
	/* Pid is optional */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	fb_md(&f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_CPU_ID));
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_close(&f, ext);
	expect_error(&f, "", 0, 0);
}

static void test_body_rules(void **state)
{
	struct fb f = { 0 };
	size_t at, ext;

	(void)state;
	/* EndOfBuffer is gone from version 2 on */
	for (unsigned int v = 2; v <= 5; v += 3) {
		fb_header(&f, v, XRAYFDR_FILE_FDR, 4096);
		ext = fb_preamble(&f, 0, 1);
		at = fb_md(&f, MD(.kind = XRAYFDR_MD_END_OF_BUFFER));
		fb_close(&f, ext);
		expect_error(&f, "eob-version", at, -EBADMSG);
	}
	/* CallArgument only after an entry with arguments */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY_ARGS, 1, 0);
	fb_md(&f, MD(.kind = XRAYFDR_MD_CALL_ARGUMENT, .arg = 1));
	fb_md(&f, MD(.kind = XRAYFDR_MD_CALL_ARGUMENT, .arg = 2));
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 1, 0);
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_CALL_ARGUMENT, .arg = 3));
	fb_close(&f, ext);
	expect_error(&f, "call-argument", at, -EBADMSG);
	/* preamble records inside a body */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 2));
	fb_close(&f, ext);
	expect_error(&f, "misplaced-record", at, -EBADMSG);
	/* unknown kinds and actions */
	for (unsigned int kind = 10; kind < 128; kind += 117) {
		uint8_t raw[16] = { (uint8_t)(1 | kind << 1) };

		fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
		ext = fb_preamble(&f, 0, 1);
		at = f.len;
		fb_raw(&f, raw, sizeof(raw));
		fb_close(&f, ext);
		expect_error(&f, "unknown-kind", at, -EBADMSG);
	}
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	at = f.len;
	fb_raw(&f, (uint8_t[8]){ 5 << 1 }, 8);
	fb_close(&f, ext);
	expect_error(&f, "function-kind", at, -EBADMSG);
}

static void test_lying_sizes(void **state)
{
	struct fb f = { 0 };
	size_t at, ext;

	(void)state;
	/* extents cut a record in two */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS, .extents = 10));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 2));
	expect_error(&f, "extents-cross", 48, -EBADMSG);
	/* extents promise more than the file holds */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	fb_preamble(&f, 1ull << 62, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	expect_error(&f, "truncated", f.len, -EBADMSG);
	/* negative, oversized and overflowing event payloads */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
			  .event_size = -1));
	fb_close(&f, ext);
	expect_error(&f, "event-size", at, -EBADMSG);
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_TYPED_EVENT_MARKER,
			  .event_size = 0x7fffffff));
	fb_close(&f, ext);
	expect_error(&f, "event-size", at, -EBADMSG); /* beyond max_payload */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	at = fb_md(&f, MD(.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
			  .event_size = 20));
	fb_raw(&f, "0123456789", 10);
	fb_close(&f, ext);
	expect_error(&f, "extents-cross", at, -EBADMSG);
	/* v1: a record across the buffer_size boundary */
	fb_header(&f, 1, XRAYFDR_FILE_FDR, 60);
	fb_preamble(&f, 0, 1);
	at = fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 1, 0);
	expect_error(&f, "v1-boundary", at + 8, -EBADMSG);
}

static void test_warnings(void **state)
{
	struct fb f = { 0 };
	size_t ext;
	struct read_result res;

	(void)state;
	/* a Pid record in a version that predates it */
	fb_header(&f, 2, XRAYFDR_FILE_FDR, 4096);
	ext = fb_md(&f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = 1));
	fb_md(&f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER));
	fb_md(&f, MD(.kind = XRAYFDR_MD_PID, .pid = 3));
	fb_md(&f, MD(.kind = XRAYFDR_MD_NEW_CPU_ID));
	fb_close(&f, ext);
	expect_warning(&f, "pid-version");
	/* extents larger than the header's buffer_size */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 64);
	ext = fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_close(&f, ext);
	expect_warning(&f, "extents-size");
	/* an empty event payload */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	fb_md(&f, MD(.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER, .event_size = 0));
	fb_close(&f, ext);
	expect_warning(&f, "event-size");
	/* an exit with no entry; an unwound exit is fine */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 2, 0);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 1, 0); /* 2 was unwound */
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 4, 0);
	fb_fn(&f, XRAYFDR_FUNC_TAIL_EXIT, 3, 0); /* never entered */
	fb_close(&f, ext);
	expect_warning(&f, "exit-without-entry");
	read_all(f.data, f.len, 0, NULL, &res);
	assert_int_equal(res.stats.unmatched_exits, 1);
	assert_int_equal(res.stats.window_exits, 0);
	/* a window that begins inside calls: their exits are counted, once
	 * per thread, and are no warnings */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 5, 0);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 6, 0);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 6, 0);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 7, 0);
	fb_close(&f, ext);
	read_all(f.data, f.len, 0, NULL, &res);
	assert_int_equal(res.stats.warnings, 0);
	assert_int_equal(res.stats.unmatched_exits, 0);
	assert_int_equal(res.stats.window_exits, 2);
	assert_int_equal(res.stats.window_threads, 1);
	read_all(f.data, f.len, XRAYFDR_READ_NO_CALL_CHECK, NULL, &res);
	assert_int_equal(res.stats.warnings, 0);
}

static void test_basic_rules(void **state)
{
	struct fb f = { 0 };
	uint8_t rec[32];

	(void)state;
	fb_header(&f, 3, XRAYFDR_FILE_BASIC, 0);
	memset(rec, 0, sizeof(rec));
	rec[0] = 2;
	fb_raw(&f, rec, 32);
	expect_error(&f, "basic-record-type", 32, -EBADMSG);
	fb_header(&f, 3, XRAYFDR_FILE_BASIC, 0);
	memset(rec, 0, sizeof(rec));
	rec[3] = 4; /* action 4 */
	fb_raw(&f, rec, 32);
	expect_error(&f, "function-kind", 32, -EBADMSG);
	/* an argument payload after a plain entry */
	fb_header(&f, 3, XRAYFDR_FILE_BASIC, 0);
	memset(rec, 0, sizeof(rec));
	fb_raw(&f, rec, 32);
	rec[0] = 1;
	fb_raw(&f, rec, 32);
	expect_error(&f, "call-argument", 64, -EBADMSG);
	/* ... or for another function */
	fb_header(&f, 3, XRAYFDR_FILE_BASIC, 0);
	memset(rec, 0, sizeof(rec));
	rec[3] = XRAYFDR_FUNC_ENTRY_ARGS;
	rec[4] = 5;
	fb_raw(&f, rec, 32);
	memset(rec, 0, sizeof(rec));
	rec[0] = 1;
	rec[4] = 6;
	fb_raw(&f, rec, 32);
	expect_error(&f, "call-argument", 64, -EBADMSG);
	/* a partial record */
	fb_header(&f, 3, XRAYFDR_FILE_BASIC, 0);
	memset(rec, 0, sizeof(rec));
	fb_raw(&f, rec, 32);
	fb_raw(&f, rec, 1);
	expect_error(&f, "truncated", 64, -EBADMSG);
}

/*
 * Keep-going: report, skip the damaged buffer, keep the rest.
 */
static void test_keep_going(void **state)
{
	struct fb f = { 0 };
	struct read_result res;
	struct event_list evs = { 0 };
	size_t ext, bad, second_end;

	(void)state;
	for (unsigned int v = 1; v <= 5; v += 4) {
		uint64_t bs = 256;

		fb_header(&f, v, XRAYFDR_FILE_FDR, bs);
		for (int32_t tid = 1; tid <= 3; tid++) {
			size_t start = f.len;

			ext = fb_preamble(&f, 0, tid);
			fb_fn(&f, XRAYFDR_FUNC_ENTRY, tid, 1);
			if (tid == 2) {
				bad = f.len;
				fb_raw(&f, (uint8_t[16]){ 1 | 50 << 1 }, 16);
			}
			fb_fn(&f, XRAYFDR_FUNC_EXIT, tid, 1);
			if (v >= 2) {
				fb_close(&f, ext);
			} else {
				fb_md(&f, MD(.kind = XRAYFDR_MD_END_OF_BUFFER));
				memset(f.data + f.len, 0, start + bs - f.len);
				f.len = start + bs;
			}
			if (tid == 2)
				second_end = f.len;
		}
		expect_error(&f, "unknown-kind", bad, -EBADMSG);
		read_all(f.data, f.len, XRAYFDR_READ_KEEP_GOING, &evs, &res);
		assert_int_equal(res.ret, 0);
		assert_int_equal(res.stats.errors, 1);
		assert_int_equal(res.stats.skipped_buffers, 1);
		assert_int_equal(res.stats.skipped_bytes, second_end - bad);
		/* thread 1 whole, thread 2 up to the damage, thread 3 whole */
		assert_int_equal(evs.n, 5);
		assert_int_equal(evs.ev[2].tid, 2);
		assert_int_equal(evs.ev[3].tid, 3);
		assert_int_equal(evs.ev[4].kind, XRAYFDR_EV_EXIT);
		event_list_free(&evs);
	}

	/* Garbage between buffers: scan for the next one. */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 1);
	fb_close(&f, ext);
	bad = f.len;
	fb_raw(&f, "garbage, not a buffer", 21);
	ext = fb_preamble(&f, 0, 2);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 2, 1);
	fb_close(&f, ext);
	expect_error(&f, "buffer-start", bad, -EBADMSG);
	read_all(f.data, f.len, XRAYFDR_READ_KEEP_GOING, &evs, &res);
	assert_int_equal(res.ret, 0);
	assert_int_equal(evs.n, 2);
	assert_int_equal(evs.ev[1].tid, 2);
	assert_int_equal(res.stats.skipped_bytes, 21);
	event_list_free(&evs);
}

/*
 * v1 details: EndOfBuffer without buffer_size, padding cut short.
 */
static void test_v1_variants(void **state)
{
	struct fb f = { 0 };
	struct read_result res;

	(void)state;
	/* buffer_size 0: the next buffer follows EndOfBuffer at once */
	fb_header(&f, 1, XRAYFDR_FILE_FDR, 0);
	for (int32_t tid = 1; tid <= 2; tid++) {
		fb_preamble(&f, 0, tid);
		fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
		fb_md(&f, MD(.kind = XRAYFDR_MD_END_OF_BUFFER));
	}
	read_all(f.data, f.len, 0, NULL, &res);
	assert_int_equal(res.ret, 0);
	assert_int_equal(res.stats.buffers, 2);
	/* padding shorter than promised: readable, with a warning */
	fb_header(&f, 1, XRAYFDR_FILE_FDR, 1024);
	fb_preamble(&f, 0, 1);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 0);
	fb_md(&f, MD(.kind = XRAYFDR_MD_END_OF_BUFFER));
	fb_raw(&f, (uint8_t[8]){ 0 }, 8);
	expect_warning(&f, "truncated");
}

/*
 * Streaming: the same events from memory, a file and a pipe; payloads
 * larger than the read window; memory that does not grow with the input.
 */
static void write_big_payload_log(struct membuf *m)
{
	struct xrayfdr_writer *w;
	XRAYFDR_OPTS(xrayfdr_writer_opts, o, .buffer_size = 1u << 20);
	static uint8_t payload[600 * 1024];

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	w = xrayfdr_writer_new(membuf_write, m, &o);
	assert_non_null(w);
	for (uint32_t i = 0; i < 40; i++) {
		struct xrayfdr_event ev = { .kind = XRAYFDR_EV_CUSTOM,
					    .tid = i % 3,
					    .tsc = 1000 + i,
					    .data = payload,
					    .data_size = 1 + i * 15000 };

		assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
		ev.kind = XRAYFDR_EV_ENTRY;
		ev.func_id = (int32_t)i;
		ev.data = NULL;
		ev.data_size = 0;
		assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	}
	assert_int_equal(xrayfdr_writer_close(w), 0);
}

static void read_fd_events(int fd, struct event_list *out, int *ret)
{
	struct xrayfdr_reader *r = xrayfdr_reader_new_fd(fd, "fd", NULL);
	const struct xrayfdr_event *ev;

	assert_non_null(r);
	while ((*ret = xrayfdr_reader_next_event(r, &ev)) == 1)
		event_list_add(out, ev);
	xrayfdr_reader_free(r);
}

static void test_file_pipe_memory_agree(void **state)
{
	struct membuf m = { 0 };
	struct event_list a = { 0 }, b = { 0 }, c = { 0 };
	struct read_result res;
	char path[] = "/tmp/xrayfdr-test-XXXXXX";
	int fd, pfd[2], ret;
	pid_t child;

	(void)state;
	write_big_payload_log(&m);
	read_all(m.data, m.len, 0, &a, &res);
	assert_int_equal(res.ret, 0);
	assert_int_equal(a.n, 80);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, m.data, m.len), (ssize_t)m.len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	read_fd_events(fd, &b, &ret);
	close(fd);
	assert_int_equal(ret, 0);

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(pfd[0]);
		/* dribble it out in odd-sized pieces */
		for (size_t at = 0; at < m.len;) {
			size_t n = m.len - at < 777 ? m.len - at : 777;

			if (write(pfd[1], m.data + at, n) != (ssize_t)n)
				_exit(1);
			at += n;
		}
		_exit(0);
	}
	close(pfd[1]);
	read_fd_events(pfd[0], &c, &ret);
	close(pfd[0]);
	waitpid(child, NULL, 0);
	assert_int_equal(ret, 0);

	assert_int_equal(b.n, a.n);
	assert_int_equal(c.n, a.n);
	for (size_t i = 0; i < a.n; i++) {
		assert_event_equal(&a.ev[i], &b.ev[i]);
		assert_event_equal(&a.ev[i], &c.ev[i]);
	}
	event_list_free(&a);
	event_list_free(&b);
	event_list_free(&c);
	membuf_free(&m);
}

static int write_pipe(void *ctx, const void *data, size_t size)
{
	int fd = *(int *)ctx;
	const char *p = data;

	while (size) {
		ssize_t k = write(fd, p, size);

		if (k <= 0)
			return -EPIPE;
		p += k;
		size -= (size_t)k;
	}
	return 0;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* 256 MiB streamed through a pipe: the reader's memory stays flat. */
static void test_memory_independent_of_size(void **state)
{
	const uint64_t target = 256ull << 20;
	int pfd[2], ret, status;
	pid_t child;
	long before, after;
	uint64_t events = 0;
	const struct xrayfdr_event *ev;
	struct xrayfdr_reader *r;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		XRAYFDR_OPTS(xrayfdr_writer_opts, o, .buffer_size = 65536);
		struct xrayfdr_writer *w;
		struct xrayfdr_event e = { .pid = 1 };

		close(pfd[0]);
		w = xrayfdr_writer_new(write_pipe, &pfd[1], &o);
		for (uint64_t i = 0; w && xrayfdr_writer_bytes(w) < target;
		     i++) {
			e.tid = (uint32_t)(i % 64);
			e.kind = i & 1 ? XRAYFDR_EV_EXIT : XRAYFDR_EV_ENTRY;
			e.func_id = (int32_t)(i / 2 % 1000);
			e.tsc += 3;
			if (xrayfdr_writer_event(w, &e))
				_exit(1);
		}
		_exit(w && xrayfdr_writer_close(w) == 0 ? 0 : 1);
	}
	close(pfd[1]);
	r = xrayfdr_reader_new_fd(pfd[0], "pipe", NULL);
	assert_non_null(r);
	/* let the reader reach its steady state, then measure */
	for (int i = 0;
	     i < 100000 && (ret = xrayfdr_reader_next_event(r, &ev)) == 1; i++)
		events++;
	before = max_rss_kb();
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1)
		events++;
	after = max_rss_kb();
	assert_int_equal(ret, 0);
	assert_true(xrayfdr_reader_stats(r)->bytes >= target);
	xrayfdr_reader_free(r);
	close(pfd[0]);
	waitpid(child, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(events > 30000000);
	printf("# read %llu events from a 256 MiB pipe; peak RSS grew %ld KiB\n",
	       (unsigned long long)events, after - before);
	assert_true(after - before < 8 * 1024);
}

/*
 * Each event names the buffer it came from, even an entry whose arguments
 * end a buffer, where the reader has already seen the next buffer start.
 */
static void test_event_buffer_offset(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 5; v += 4) {
		struct fb f = { 0 };
		struct event_list out = { 0 };
		struct read_result res;
		size_t b1, b2, ext;

		fb_header(&f, v, 1, v == 1 ? 80 : 4096);
		b1 = f.len;
		ext = fb_preamble(&f, 0, 7);
		fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 5);
		fb_fn(&f, XRAYFDR_FUNC_ENTRY_ARGS, 2, 5);
		fb_md(&f, MD(.kind = XRAYFDR_MD_CALL_ARGUMENT, .arg = 42));
		/* version 1: the argument fills the buffer to its last byte */
		if (v == 1)
			assert_int_equal(f.len - b1, 80);
		else
			fb_close(&f, ext);
		b2 = f.len;
		ext = fb_preamble(&f, 0, 7);
		fb_fn(&f, XRAYFDR_FUNC_EXIT, 1, 5);
		if (v == 1) {
			fb_md(&f, MD(.kind = XRAYFDR_MD_END_OF_BUFFER));
			fb_raw(&f, "\0\0\0\0\0\0\0\0", 8);
		} else {
			fb_close(&f, ext);
		}
		read_all(f.data, f.len, 0, &out, &res);
		assert_int_equal(res.ret, 0);
		assert_int_equal(out.n, 3);
		assert_int_equal(out.ev[0].buffer_offset, b1);
		assert_int_equal(out.ev[1].kind, XRAYFDR_EV_ENTRY_ARGS);
		assert_int_equal(out.ev[1].nargs, 1);
		assert_int_equal(out.ev[1].buffer_offset, b1);
		assert_int_equal(out.ev[out.n - 1].buffer_offset, b2);
		event_list_free(&out);
	}
}

/*
 * Batches of calls (xrayfdr_reader_next_calls()) give the events
 * xrayfdr_reader_next_event() gives, offsets, walls and counts included,
 * whatever the batch size, in every version and byte order.
 */
/* Read @m (or, with @path, that file) in batches of @batch calls; with
 * @keep, only the buffers of the threads it keeps. */
static void read_kept(const struct membuf *m, const char *path, size_t batch,
		      int (*keep)(void *ctx, uint32_t tid), void *ctx,
		      struct event_list *out,
		      struct xrayfdr_reader_stats *stats, size_t *nbatched)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, opts,
		     .flags = XRAYFDR_READ_NO_CALL_CHECK, .keep_thread = keep,
		     .keep_ctx = ctx);
	struct xrayfdr_reader *r =
		path ? xrayfdr_reader_open(path, &opts) :
		       xrayfdr_reader_new_mem(m->data, m->len, "test", &opts);
	struct xrayfdr_call_event calls[7];
	const struct xrayfdr_event *ev;
	int ret;

	assert_non_null(r);
	*nbatched = 0;
	for (;;) {
		size_t n = xrayfdr_reader_next_calls(r, calls, batch, &ev);

		assert_true(n <= batch);
		if (n) {
			struct xrayfdr_event e = *ev;

			for (size_t i = 0; i < n; i++) {
				e.tsc = calls[i].tsc;
				e.kind = calls[i].kind;
				e.func_id = calls[i].func_id;
				e.offset = ev->offset - 8 * (n - 1 - i);
				event_list_add(out, &e);
			}
			*nbatched += n;
			continue;
		}
		ret = xrayfdr_reader_next_event(r, &ev);
		if (ret != 1)
			break;
		event_list_add(out, ev);
	}
	assert_int_equal(ret, 0);
	*stats = *xrayfdr_reader_stats(r);
	xrayfdr_reader_free(r);
}

static void read_batched(const struct membuf *m, size_t batch,
			 struct event_list *out,
			 struct xrayfdr_reader_stats *stats, size_t *nbatched)
{
	read_kept(m, NULL, batch, NULL, NULL, out, stats, nbatched);
}

static int keep_parity(void *ctx, uint32_t tid)
{
	return tid % 2 == *(const unsigned int *)ctx;
}

/*
 * keep_thread shares a log's threads out: two readers, each keeping one
 * parity of thread id, read every event of a plain read between them,
 * each its own threads' alone; from memory and from a file (which skips
 * by seeking).
 */
static void test_keep_thread(void **state)
{
	char path[] = "/tmp/xrayfdr-test-keep-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	for (unsigned int v = 1; v <= 5; v++) {
		struct gen_opts g = {
			.threads = 4,
			.count = 3000,
			.args = true,
			.custom = true,
			.typed = v >= 2,
			.seed = 91 + v,
		};
		struct event_list in = { 0 }, want = { 0 };
		struct membuf m = { 0 };
		struct read_result res;
		XRAYFDR_OPTS(xrayfdr_writer_opts, o, .version = v,
			     .buffer_size = 256);

		gen_events(&g, &in);
		write_events(&o, &in, &m);
		read_all(m.data, m.len, XRAYFDR_READ_NO_CALL_CHECK, &want,
			 &res);
		assert_int_equal(res.ret, 0);
		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(pwrite(fd, m.data, m.len, 0), (ssize_t)m.len);
		for (int from_file = 0; from_file <= 1; from_file++) {
			struct event_list got[2] = { { 0 } };
			size_t at[2] = { 0 }, kept = 0;

			for (unsigned int k = 0; k < 2; k++) {
				struct xrayfdr_reader_stats st;
				size_t batched;

				read_kept(&m, from_file ? path : NULL, 5,
					  keep_parity, &k, &got[k], &st,
					  &batched);
				for (size_t i = 0; i < got[k].n; i++)
					assert_int_equal(got[k].ev[i].tid % 2,
							 k);
				kept += got[k].n;
			}
			/* both nonempty: the split is a real one */
			assert_true(got[0].n && got[1].n);
			assert_int_equal(kept, want.n);
			/* merged by offset, the plain read's events */
			for (size_t i = 0; i < want.n; i++) {
				unsigned int k =
					at[0] < got[0].n &&
							(at[1] == got[1].n ||
							 got[0].ev[at[0]].offset <
								 got[1].ev[at[1]]
									 .offset) ?
						0 :
						1;
				const struct xrayfdr_event *e =
					&got[k].ev[at[k]++];

				assert_event_equal(&want.ev[i], e);
				assert_int_equal(want.ev[i].offset, e->offset);
			}
			event_list_free(&got[0]);
			event_list_free(&got[1]);
		}
		event_list_free(&in);
		event_list_free(&want);
		membuf_free(&m);
	}
	close(fd);
	unlink(path);
}

static void test_call_batches(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 5; v++) {
		for (int be = 0; be <= 1; be++) {
			struct gen_opts g = {
				.threads = 3,
				.count = 2000,
				.args = true,
				.custom = true,
				.typed = v >= 2,
				.wraps = true,
				.backwards = true,
				.seed = 77 + v * 2 + be,
			};
			struct event_list in = { 0 }, want = { 0 };
			struct membuf m = { 0 };
			struct read_result res;
			XRAYFDR_OPTS(xrayfdr_writer_opts, o, .version = v,
				     .big_endian = be,
				     .buffer_size = v == 1 ? 512 : 256);

			gen_events(&g, &in);
			write_events(&o, &in, &m);
			read_all(m.data, m.len, XRAYFDR_READ_NO_CALL_CHECK,
				 &want, &res);
			assert_int_equal(res.ret, 0);
			for (size_t batch = 1; batch <= 7; batch += 3) {
				struct event_list got = { 0 };
				struct xrayfdr_reader_stats st;
				size_t batched;

				read_batched(&m, batch, &got, &st, &batched);
				/* most of the log came in batches */
				assert_true(batched > want.n / 2);
				assert_int_equal(got.n, want.n);
				for (size_t i = 0; i < want.n; i++) {
					assert_event_equal(&want.ev[i],
							   &got.ev[i]);
					assert_int_equal(want.ev[i].offset,
							 got.ev[i].offset);
					assert_int_equal(want.ev[i].wall_sec,
							 got.ev[i].wall_sec);
					assert_int_equal(
						want.ev[i].buffer_offset,
						got.ev[i].buffer_offset);
				}
				assert_int_equal(st.events, res.stats.events);
				assert_int_equal(st.records, res.stats.records);
				assert_int_equal(st.bytes, res.stats.bytes);
				event_list_free(&got);
			}
			event_list_free(&in);
			event_list_free(&want);
			membuf_free(&m);
		}
	}
}

/*
 * Checksums (fdr-format.rst, "Checksums"): a log of three buffers framed
 * as the runtime frames them, then damaged in each way the reader tells.
 */
struct sums {
	uint8_t log[4096];
	size_t len;
	size_t at[3]; /* where each buffer begins */
};

struct sum_diags {
	unsigned int n;
	uint64_t offset[8];
	char message[8][512];
};

static void on_sum_diag(void *ctx, const struct xrayfdr_diag *d)
{
	struct sum_diags *s = ctx;

	if (strcmp(d->rule, "checksum") || s->n == 8)
		return;
	assert_int_equal(d->severity, XRAYFDR_SEV_ERROR);
	s->offset[s->n] = d->offset;
	snprintf(s->message[s->n++], sizeof(s->message[0]), "%s", d->message);
}

static int sums_out(void *ctx, const void *p, size_t n)
{
	struct sums *s = ctx;

	assert_true(s->len + n <= sizeof(s->log));
	memcpy(s->log + s->len, p, n);
	s->len += n;
	return 0;
}

/* @summed: which buffers get a checksum (bit i: buffer i) */
static void sums_build(struct sums *s, unsigned int version,
		       unsigned int summed)
{
	const uint64_t bs = 512;
	uint8_t buf[512];

	s->len = 0;
	xrayfdr_encode_file_header(s->log, &(struct xrayfdr_file_header){
						   .version = (uint16_t)version,
						   .type = XRAYFDR_FILE_FDR,
						   .cycle_frequency = 1000,
						   .buffer_size = bs });
	s->len = 32;
	for (int b = 0; b < 3; b++) {
		size_t n = fdr_put_preamble(buf, false, version, 100 + b, 5, 6,
					    42);

		fdr_put_metadata(buf + n, false, version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_NEW_CPU_ID,
					 .tsc = 1000 });
		n += 16;
		for (int i = 0; i < 8; i++, n += 8)
			fdr_put_function(buf + n, false, i & 1, 7, 10);
		s->at[b] = s->len;
		assert_true(n <= fdr_frame_capacity(version, bs));
		if (summed & (1u << b))
			assert_int_equal(fdr_frame_write_sum(false, version, bs,
							     s->log, buf, n,
							     sums_out, s),
					 0);
		else
			assert_int_equal(fdr_frame_write(false, version, bs,
							 buf, n, sums_out, s),
					 0);
	}
}

/* Read @s from memory and from a pipe; both must agree (fuzz_reader,
 * built with a 48-byte window, checks the same as the window slides).
 * Return the stats. */
static struct xrayfdr_reader_stats sums_read(const struct sums *s,
					     struct sum_diags *d)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, o, .on_diag = on_sum_diag,
		     .diag_ctx = d);
	struct xrayfdr_reader_stats st[2];
	struct sum_diags other = { 0 };
	const struct xrayfdr_event *ev;
	int pfd[2];

	for (int k = 0; k < 2; k++) {
		struct xrayfdr_reader *r;
		uint64_t events = 0;
		int ret;

		if (k) {
			o.diag_ctx = &other;
			assert_int_equal(pipe(pfd), 0);
			assert_int_equal(write(pfd[1], s->log, s->len),
					 (ssize_t)s->len);
			close(pfd[1]);
			r = xrayfdr_reader_new_fd(pfd[0], "sums", &o);
		} else {
			r = xrayfdr_reader_new_mem(s->log, s->len, "sums", &o);
		}
		assert_non_null(r);
		while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1) {
			/* checksums are not events */
			assert_int_equal(ev->kind == XRAYFDR_EV_CUSTOM, 0);
			events++;
		}
		/* damage a checksum finds does not stop the reader */
		assert_int_equal(ret, 0);
		assert_int_equal(events, 24);
		st[k] = *xrayfdr_reader_stats(r);
		xrayfdr_reader_free(r);
		if (k)
			close(pfd[0]);
	}
	assert_int_equal(st[0].sum_ok, st[1].sum_ok);
	assert_int_equal(st[0].sum_failed, st[1].sum_failed);
	assert_int_equal(d->n, other.n);
	for (unsigned int i = 0; i < d->n; i++)
		assert_int_equal(d->offset[i], other.offset[i]);
	return st[0];
}

static void test_checksums(void **state)
{
	/* which buffers get a checksum, the byte flipped (-1: none, -2: a
	 * TSC delta of the second buffer), and what is then said: how many
	 * match and fail, where (a buffer, or -1: the header) and what */
	static const struct {
		unsigned int summed;
		int flip;
		unsigned int ok, failed;
		int where;
		const char *says;
	} cases[] = {
		{ 7, -1, 3, 0, 0, NULL },
		{ 7, -2, 2, 1, 1, "buffer of thread 101 (" },
		{ 7, 9, 3, 1, -1, "the header is damaged" },
		{ 3, -1, 2, 1, 2, "thread 102 has no checksum" },
		{ 4, -1, 1, 1, 0, "2 buffers from this one on have no" },
		{ 0, -1, 0, 0, 0, NULL }, /* a writer without checksums */
	};
	static struct sums s;

	(void)state;
	for (unsigned int version = 1; version <= 5; version += 4) {
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			struct xrayfdr_reader_stats st;
			struct sum_diags d = { 0 };

			sums_build(&s, version, cases[c].summed);
			if (cases[c].flip == -2)
				s.log[s.at[1] + (version == 1 ? 48 : 80) +
				      8 * 3 + 5] ^= 0x10;
			else if (cases[c].flip >= 0)
				s.log[cases[c].flip] ^= 1;
			st = sums_read(&s, &d);
			assert_int_equal(st.sum_ok, cases[c].ok);
			assert_int_equal(st.sum_failed, cases[c].failed);
			assert_int_equal(st.errors, cases[c].failed);
			assert_int_equal(d.n, cases[c].failed);
			if (!cases[c].says)
				continue;
			assert_int_equal(
				d.offset[0],
				cases[c].where < 0 ? 0 : s.at[cases[c].where]);
			assert_non_null(strstr(d.message[0], cases[c].says));
		}
	}
}

/*
 * Per-thread time order.
 */
struct time_diags {
	unsigned int n;
	enum xrayfdr_severity severity[8];
	uint64_t offset[8];
	char message[8][256];
};

static void on_time_diag(void *ctx, const struct xrayfdr_diag *d)
{
	struct time_diags *t = ctx;

	if (strcmp(d->rule, "time-order") || t->n == 8)
		return;
	t->severity[t->n] = d->severity;
	t->offset[t->n] = d->offset;
	snprintf(t->message[t->n++], sizeof(t->message[0]), "%s", d->message);
}

static struct xrayfdr_reader_stats
time_read(const struct fb *f, unsigned int flags, struct time_diags *t)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, opts, .flags = flags,
		     .on_diag = on_time_diag, .diag_ctx = t);
	struct xrayfdr_reader_stats st;
	const struct xrayfdr_event *ev;
	struct xrayfdr_reader *r;
	int ret;

	memset(t, 0, sizeof(*t));
	r = xrayfdr_reader_new_mem(f->data, f->len, "t", &opts);
	assert_non_null(r);
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1)
		;
	assert_int_equal(ret, 0); /* a step back never stops the reader */
	st = *xrayfdr_reader_stats(r);
	xrayfdr_reader_free(r);
	return st;
}

/* A buffer of thread @tid (pid 9) on @cpu whose base is @tsc. */
static size_t time_buffer(struct fb *f, int32_t tid, uint16_t cpu, uint64_t tsc)
{
	size_t ext = fb_md(f, MD(.kind = XRAYFDR_MD_BUFFER_EXTENTS));

	fb_md(f, MD(.kind = XRAYFDR_MD_NEW_BUFFER, .tid = tid));
	fb_md(f, MD(.kind = XRAYFDR_MD_WALLTIME_MARKER, .seconds = 1));
	fb_md(f, MD(.kind = XRAYFDR_MD_PID, .pid = 9));
	fb_md(f, MD(.kind = XRAYFDR_MD_NEW_CPU_ID, .cpu = cpu, .tsc = tsc));
	return ext;
}

static void test_time_order(void **state)
{
	struct xrayfdr_reader_stats st;
	struct time_diags t;
	struct fb f = { 0 };
	size_t ext, cpu_at, wrap_at, ev_at;

	(void)state;
	/* thread 1's buffers on two CPUs, thread 2's between: in order */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = time_buffer(&f, 1, 0, 1000);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 10); /* 1010 */
	fb_close(&f, ext);
	ext = time_buffer(&f, 2, 1, 5); /* another thread's clock is its own */
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 1);
	fb_close(&f, ext);
	ext = time_buffer(&f, 1, 1, 1010);
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 1, 0);
	fb_close(&f, ext);
	st = time_read(&f, 0, &t);
	assert_int_equal(st.time_back, 0);
	assert_int_equal(t.n, 0);
	assert_int_equal(st.warnings, 0);

	/* a later buffer's base before the thread's last record (at 2000),
	 * a TSCWrap moving the base back, and a custom event before that */
	fb_header(&f, 5, XRAYFDR_FILE_FDR, 4096);
	ext = time_buffer(&f, 1, 0, 1000);
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 1, 1000); /* 2000 */
	fb_close(&f, ext);
	ext = time_buffer(&f, 1, 1, 1500);
	cpu_at = ext + 4 * 16;
	fb_fn(&f, XRAYFDR_FUNC_ENTRY, 2, 600); /* 2100 */
	wrap_at = fb_md(&f, MD(.kind = XRAYFDR_MD_TSC_WRAP, .tsc = 2050));
	fb_fn(&f, XRAYFDR_FUNC_EXIT, 2, 100); /* 2150 */
	ev_at = fb_md(&f, MD(.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
			     .event_size = 1, .tsc_delta = -10)); /* 2140 */
	fb_raw(&f, "x", 1);
	fb_close(&f, ext);

	/* another writer's log: warnings that name thread, offset, amount */
	st = time_read(&f, 0, &t);
	assert_int_equal(st.time_back, 3);
	assert_int_equal(st.warnings, 3);
	assert_int_equal(st.errors, 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.severity[0], XRAYFDR_SEV_WARNING);
	assert_int_equal(t.offset[0], cpu_at);
	assert_int_equal(t.offset[1], wrap_at);
	assert_int_equal(t.offset[2], ev_at);
	assert_non_null(strstr(
		t.message[0],
		"NewCPUId: time goes back on thread 1: TSC 1500 is 500 ticks (500000000 ns) before TSC 2000 of its record at offset"));
	assert_non_null(strstr(t.message[1], "TSC 2050 is 50 ticks"));
	assert_non_null(strstr(t.message[2], "TSC 2140 is 10 ticks"));

	/* our own log: errors, and the reader goes on */
	st = time_read(&f, XRAYFDR_READ_TIME_ERRORS, &t);
	assert_int_equal(st.time_back, 3);
	assert_int_equal(st.errors, 3);
	assert_int_equal(st.warnings, 0);
	assert_int_equal(t.severity[2], XRAYFDR_SEV_ERROR);

	/* not checked without the call check (the fast paths' mode) */
	st = time_read(&f, XRAYFDR_READ_NO_CALL_CHECK, &t);
	assert_int_equal(st.time_back, 0);
	assert_int_equal(t.n, 0);
}

static void test_api_edges(void **state)
{
	struct {
		struct xrayfdr_reader_opts o;
		uint32_t future;
	} longer = { .o = { .sz = sizeof(longer) }, .future = 1 };
	struct xrayfdr_reader *r;
	const struct xrayfdr_file_header *hdr;
	struct fb f = { .be = true };
	const struct xrayfdr_record *rec;

	(void)state;
	assert_null(xrayfdr_reader_new_mem("", 0, "x", &longer.o));
	assert_int_equal(errno, E2BIG);
	longer.future = 0;
	r = xrayfdr_reader_new_mem("", 0, "x", &longer.o);
	assert_non_null(r);
	xrayfdr_reader_free(r);
	assert_null(xrayfdr_reader_open("/nonexistent/xrayfdr", NULL));
	assert_int_equal(errno, ENOENT);
	xrayfdr_reader_free(NULL);

	/* big-endian detection, and errors repeat once stopped */
	fb_header(&f, 2, XRAYFDR_FILE_FDR, 512);
	fb_md(&f, MD(.kind = XRAYFDR_MD_PID));
	r = xrayfdr_reader_new_mem(f.data, f.len, "be", NULL);
	assert_int_equal(xrayfdr_reader_header(r, &hdr), 0);
	assert_true(hdr->big_endian);
	assert_int_equal(hdr->version, 2);
	assert_int_equal(hdr->buffer_size, 512);
	assert_null(xrayfdr_reader_error(r));
	assert_int_equal(xrayfdr_reader_next_record(r, &rec), -EBADMSG);
	assert_int_equal(xrayfdr_reader_next_record(r, &rec), -EBADMSG);
	assert_non_null(xrayfdr_reader_error(r));
	assert_non_null(strstr(
		xrayfdr_reader_error(r)->message,
		"be: offset 32 (0x20): buffer: a buffer must begin with BufferExtents in version 2 logs; found byte 0x89"));
	xrayfdr_reader_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_fdr),
		cmocka_unit_test(test_round_trip_basic),
		cmocka_unit_test(test_records_tile_file),
		cmocka_unit_test(test_truncation_v5),
		cmocka_unit_test(test_truncation_v1),
		cmocka_unit_test(test_truncation_basic),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_buffer_start_and_preamble),
		cmocka_unit_test(test_body_rules),
		cmocka_unit_test(test_lying_sizes),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_basic_rules),
		cmocka_unit_test(test_keep_going),
		cmocka_unit_test(test_v1_variants),
		cmocka_unit_test(test_file_pipe_memory_agree),
		cmocka_unit_test(test_memory_independent_of_size),
		cmocka_unit_test(test_event_buffer_offset),
		cmocka_unit_test(test_call_batches),
		cmocka_unit_test(test_keep_thread),
		cmocka_unit_test(test_checksums),
		cmocka_unit_test(test_time_order),
		cmocka_unit_test(test_api_edges),
	};

	return cmocka_run_group_tests_name("reader", tests, NULL, NULL);
}
