// SPDX-License-Identifier: GPL-2.0-only
/* The writer: exact layouts, buffer management, and what it refuses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const struct xrayfdr_event enter1 = {
	.kind = XRAYFDR_EV_ENTRY,
	.func_id = 1,
	.tsc = 1000,
	.cpu = 2,
	.tid = 10,
	.pid = 20,
	.wall_sec = 5,
	.wall_usec = 6,
};
static const struct xrayfdr_event exit1 = {
	.kind = XRAYFDR_EV_EXIT,
	.func_id = 1,
	.tsc = 1010,
	.cpu = 2,
	.tid = 10,
	.pid = 20,
};

static struct xrayfdr_writer *new_writer(struct membuf *m, unsigned int type,
					 unsigned int version,
					 uint64_t buffer_size)
{
	XRAYFDR_OPTS(xrayfdr_writer_opts, o,
		     .basic = type == XRAYFDR_FILE_BASIC, .version = version,
		     .buffer_size = buffer_size, .constant_tsc = true,
		     .cycle_frequency = 1000);
	struct xrayfdr_writer *w = xrayfdr_writer_new(membuf_write, m, &o);

	assert_non_null(w);
	return w;
}

static void test_v5_layout(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_FDR, 5, 4096);

	(void)state;
	assert_int_equal(xrayfdr_writer_event(w, &enter1), 0);
	assert_int_equal(xrayfdr_writer_event(w, &exit1), 0);
	assert_int_equal(xrayfdr_writer_bytes(w), 32); /* buffers still open */
	assert_int_equal(xrayfdr_writer_flush(w), 0);
	assert_int_equal(xrayfdr_writer_bytes(w), 32 + 16 + 64 + 16);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_int_equal(m.len, 32 + 16 + 64 + 16);
	assert_hex(
		m.data, m.len,
		"05 00 01 00 01 00 00 00 e8 03 00 00 00 00 00 00"
		"00 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		/* BufferExtents: 80 bytes follow */
		"0f 50 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		"01 0a 00 00 00 00 00 00 00 00 00 00 00 00 00 00" /* NewBuffer 10 */
		"09 05 00 00 00 00 00 00 00 06 00 00 00 00 00 00" /* WallTime 5.000006 */
		"13 14 00 00 00 00 00 00 00 00 00 00 00 00 00 00" /* Pid 20 */
		"05 02 00 e8 03 00 00 00 00 00 00 00 00 00 00 00" /* CPU 2 @1000 */
		"10 00 00 00 00 00 00 00" /* entry 1 +0 */
		"12 00 00 00 0a 00 00 00"); /* exit 1 +10 */
	membuf_free(&m);
}

static void test_v1_layout(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_FDR, 1, 128);
	static const uint8_t zeros[128];

	(void)state;
	assert_int_equal(xrayfdr_writer_event(w, &enter1), 0);
	assert_int_equal(xrayfdr_writer_event(w, &exit1), 0);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	/* one buffer of exactly buffer_size bytes */
	assert_int_equal(m.len, 32 + 128);
	assert_hex(
		m.data, 32 + 80,
		"01 00 01 00 01 00 00 00 e8 03 00 00 00 00 00 00"
		"80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		"01 0a 00 00 00 00 00 00 00 00 00 00 00 00 00 00" /* NewBuffer */
		"09 05 00 00 00 00 00 00 00 06 00 00 00 00 00 00" /* WallTime */
		"05 02 00 e8 03 00 00 00 00 00 00 00 00 00 00 00" /* no Pid in v1 */
		"10 00 00 00 00 00 00 00"
		"12 00 00 00 0a 00 00 00"
		"03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"); /* EOB */
	assert_memory_equal(m.data + 32 + 80, zeros, 128 - 80); /* padding */
	membuf_free(&m);
}

/* v1 padding whose length is not a multiple of 8 starts with a filler
 * CustomEventMarker that covers it, so llvm-xray stays aligned. */
static void test_v1_misaligned_padding(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_FDR, 1, 128);
	struct xrayfdr_event ev = enter1;

	(void)state;
	ev.kind = XRAYFDR_EV_CUSTOM;
	ev.data = "abc";
	ev.data_size = 3;
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_int_equal(m.len, 32 + 128);
	/* 48 preamble + 19 event + 16 EOB = 83: 45 bytes of padding */
	assert_hex(m.data + 32 + 67, 16,
		   "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	assert_hex(m.data + 32 + 83, 16,
		   "0b 1d 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	membuf_free(&m);

	/* never leave 1-16 misaligned bytes: the writer moves on instead */
	for (uint32_t size = 1; size < 64; size++) {
		struct read_result res;

		w = new_writer(&m, XRAYFDR_FILE_FDR, 1, 128);
		ev.data =
			"0123456789012345678901234567890123456789012345678901234567890123";
		ev.data_size = size;
		int ret = xrayfdr_writer_event(w, &ev);

		assert_true(ret == 0 || ret == -EMSGSIZE);
		assert_int_equal(xrayfdr_writer_close(w), 0);
		/* room after preamble, marker and EOB: 48 bytes */
		long pad = 48 - (long)size;

		assert_int_equal(ret == 0,
				 pad >= 0 && (pad % 8 == 0 || pad > 16));
		read_all(m.data, m.len, 0, NULL, &res);
		assert_int_equal(res.ret, 0);
		membuf_free(&m);
	}
}

static void test_basic_layout(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_BASIC, 3, 0);
	uint64_t arg = 0x1122334455667788ull;
	struct xrayfdr_event ev = enter1;

	(void)state;
	ev.kind = XRAYFDR_EV_ENTRY_ARGS;
	ev.args = &arg;
	ev.nargs = 1;
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_int_equal(m.len, 32 * 3);
	assert_hex(
		m.data, m.len,
		"03 00 00 00 01 00 00 00 e8 03 00 00 00 00 00 00"
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
		/* record: type 0, cpu 2, kind 3, func 1, tsc, tid 10, pid 20 */
		"00 00 02 03 01 00 00 00 e8 03 00 00 00 00 00 00"
		"0a 00 00 00 14 00 00 00 00 00 00 00 00 00 00 00"
		/* argument payload: type 1, func 1, tid 10, pid 20, arg */
		"01 00 00 00 01 00 00 00 0a 00 00 00 14 00 00 00"
		"88 77 66 55 44 33 22 11 00 00 00 00 00 00 00 00");
	membuf_free(&m);
}

/* Collect the raw records of a log. */
static unsigned int count_kind(const struct membuf *m, int md_kind,
			       unsigned int *buffers)
{
	struct xrayfdr_reader *r =
		xrayfdr_reader_new_mem(m->data, m->len, "w", NULL);
	const struct xrayfdr_record *rec;
	unsigned int n = 0;
	int ret;

	assert_non_null(r);
	while ((ret = xrayfdr_reader_next_record(r, &rec)) == 1)
		if (rec->type == XRAYFDR_REC_METADATA &&
		    rec->md.kind == md_kind)
			n++;
	assert_int_equal(ret, 0);
	if (buffers)
		*buffers = (unsigned int)xrayfdr_reader_stats(r)->buffers;
	xrayfdr_reader_free(r);
	return n;
}

static void test_buffers_fill_and_roll(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 5; v += 4) {
		struct membuf m = { 0 };
		struct xrayfdr_writer *w =
			new_writer(&m, XRAYFDR_FILE_FDR, v, 128);
		struct xrayfdr_event ev = enter1;
		unsigned int buffers = 0;

		/* 8 function records fit beside a preamble in 128 bytes */
		for (int i = 0; i < 20; i++) {
			ev.kind = i % 2 ? XRAYFDR_EV_EXIT : XRAYFDR_EV_ENTRY;
			ev.tsc += 10;
			assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
		}
		assert_int_equal(xrayfdr_writer_close(w), 0);
		assert_int_equal(
			count_kind(&m, XRAYFDR_MD_NEW_BUFFER, &buffers), 3);
		assert_int_equal(buffers, 3);
		if (v == 1)
			assert_int_equal(m.len, 32 + 3 * 128);
		else
			assert_int_equal(m.len, 32 + 3 * 16 + 3 * 64 + 20 * 8);
		membuf_free(&m);
	}
}

static void test_cpu_change_and_wraps(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_FDR, 5, 4096);
	struct xrayfdr_event ev = enter1;

	(void)state;
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.cpu = 3; /* CPU change: NewCPUId, no wrap needed */
	ev.tsc += 0x200000000ull;
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.tsc += 0x100000000ull; /* delta does not fit 32 bits */
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.tsc += 0xffffffffull; /* fits exactly */
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.tsc -= 5; /* going backwards */
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.kind = XRAYFDR_EV_TYPED; /* v5 typed events take signed deltas */
	ev.data = "x";
	ev.data_size = 1;
	ev.tsc -= 5;
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	ev.tsc += 0x80000000ull; /* past INT32_MAX */
	assert_int_equal(xrayfdr_writer_event(w, &ev), 0);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_int_equal(count_kind(&m, XRAYFDR_MD_NEW_CPU_ID, NULL), 2);
	assert_int_equal(count_kind(&m, XRAYFDR_MD_TSC_WRAP, NULL), 3);
	membuf_free(&m);
}

static void test_refusals(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w;
	struct xrayfdr_event ev = enter1;
	static char big[200];

	(void)state;
	w = new_writer(&m, XRAYFDR_FILE_FDR, 1, 128);
	ev.kind = XRAYFDR_EV_TYPED;
	ev.data = "x";
	ev.data_size = 1;
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EOPNOTSUPP);
	ev.kind = XRAYFDR_EV_CUSTOM;
	ev.data = big;
	ev.data_size = sizeof(big); /* cannot fit any buffer */
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EMSGSIZE);
	ev.data_size = 0; /* llvm-xray refuses empty payloads */
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EINVAL);
	ev = exit1;
	ev.nargs = 1; /* arguments only on entries with args */
	ev.args = (const uint64_t[]){ 1 };
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EINVAL);
	ev = exit1;
	ev.kind = 9;
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EINVAL);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_int_equal(m.len, 32); /* nothing but the header */
	membuf_free(&m);

	w = new_writer(&m, XRAYFDR_FILE_BASIC, 0, 0);
	ev = enter1;
	ev.kind = XRAYFDR_EV_CUSTOM;
	ev.data = "x";
	ev.data_size = 1;
	assert_int_equal(xrayfdr_writer_event(w, &ev), -EOPNOTSUPP);
	ev = enter1;
	ev.cpu = 256; /* 8 bits of CPU in the basic format */
	assert_int_equal(xrayfdr_writer_event(w, &ev), -ERANGE);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	membuf_free(&m);
}

static void test_options(void **state)
{
	struct membuf m = { 0 };
	struct {
		struct xrayfdr_writer_opts o;
		uint64_t future_field;
	} longer = { .o = { .sz = sizeof(longer) } };
	struct xrayfdr_writer_opts o;
	struct xrayfdr_writer *w;

	(void)state;
	/* a newer caller's longer struct: fine while the tail is zero */
	w = xrayfdr_writer_new(membuf_write, &m, &longer.o);
	assert_non_null(w);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	longer.future_field = 1;
	errno = 0;
	assert_null(xrayfdr_writer_new(membuf_write, &m, &longer.o));
	assert_int_equal(errno, E2BIG);
	/* an older caller's shorter struct: the rest takes defaults */
	memset(&o, 0xff, sizeof(o));
	o.sz = offsetof(struct xrayfdr_writer_opts, version);
	o.basic = false;
	m.len = 0;
	w = xrayfdr_writer_new(membuf_write, &m, &o);
	assert_non_null(w);
	assert_int_equal(xrayfdr_writer_close(w), 0);
	assert_hex(m.data, 4, "05 00 01 00"); /* default version 5 */
	/* bad values */
	o = (struct xrayfdr_writer_opts){ .sz = sizeof(o), .version = 6 };
	assert_null(xrayfdr_writer_new(membuf_write, &m, &o));
	assert_int_equal(errno, EINVAL);
	o = (struct xrayfdr_writer_opts){ .sz = sizeof(o), .buffer_size = 64 };
	assert_null(xrayfdr_writer_new(membuf_write, &m, &o));
	o = (struct xrayfdr_writer_opts){ .sz = sizeof(o),
					  .basic = true,
					  .version = 4 };
	assert_null(xrayfdr_writer_new(membuf_write, &m, &o));
	assert_null(xrayfdr_writer_new(NULL, &m, NULL));
	membuf_free(&m);
}

static void test_write_errors_stick(void **state)
{
	struct membuf m = { .fail_after = 40 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_BASIC, 3, 0);
	struct xrayfdr_event ev = enter1;
	int ret = 0;

	(void)state;
	/* the basic writer buffers 64 KiB: the failure shows at a flush */
	for (int i = 0; i < 4000 && !ret; i++)
		ret = xrayfdr_writer_event(w, &ev);
	if (!ret)
		ret = xrayfdr_writer_flush(w);
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(xrayfdr_writer_event(w, &ev), -ENOSPC);
	assert_int_equal(xrayfdr_writer_close(w), -ENOSPC);
	membuf_free(&m);
}

static void test_flush_order_and_close_thread(void **state)
{
	struct membuf m = { 0 };
	struct xrayfdr_writer *w = new_writer(&m, XRAYFDR_FILE_FDR, 5, 4096);
	struct xrayfdr_event a = enter1, b = enter1;
	struct xrayfdr_reader *r;
	const struct xrayfdr_record *rec;
	uint32_t tids[4];
	unsigned int n = 0;

	(void)state;
	a.tid = 1;
	b.tid = 2;
	assert_int_equal(xrayfdr_writer_event(w, &b), 0);
	assert_int_equal(xrayfdr_writer_event(w, &a), 0);
	/* closing b now puts it out before a */
	assert_int_equal(xrayfdr_writer_close_thread(w, b.pid, b.tid), 0);
	assert_int_equal(xrayfdr_writer_close_thread(w, 99, 99), 0);
	b.tsc += 5;
	assert_int_equal(xrayfdr_writer_event(w, &b), 0); /* a new buffer */
	assert_int_equal(xrayfdr_writer_close(w), 0);
	r = xrayfdr_reader_new_mem(m.data, m.len, "w", NULL);
	while (xrayfdr_reader_next_record(r, &rec) == 1)
		if (rec->type == XRAYFDR_REC_METADATA &&
		    rec->md.kind == XRAYFDR_MD_NEW_BUFFER && n < 4)
			tids[n++] = (uint32_t)rec->md.tid;
	xrayfdr_reader_free(r);
	assert_int_equal(n, 3);
	assert_int_equal(tids[0], 2);
	assert_int_equal(tids[1], 1); /* opened before b's second buffer */
	assert_int_equal(tids[2], 2);
	membuf_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v5_layout),
		cmocka_unit_test(test_v1_layout),
		cmocka_unit_test(test_v1_misaligned_padding),
		cmocka_unit_test(test_basic_layout),
		cmocka_unit_test(test_buffers_fill_and_roll),
		cmocka_unit_test(test_cpu_change_and_wraps),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_write_errors_stick),
		cmocka_unit_test(test_flush_order_and_close_thread),
	};

	return cmocka_run_group_tests_name("writer", tests, NULL, NULL);
}
