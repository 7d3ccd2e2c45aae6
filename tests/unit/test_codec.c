// SPDX-License-Identifier: GPL-2.0-only
/*
 * Byte-exact vectors for every record kind, in both byte orders, and for
 * the layouts that change between versions.  The little-endian vectors of
 * the header, NewBuffer, WallTimeMarker, Pid, BufferExtents and function
 * records are the bytes LLVM 14's FDR runtime writes (seen in a log of its
 * own); the rest follow the same layout rules.
 */
#include <errno.h>
#include <string.h>

#include "testutil.h"
#include "../../lib/fdr/codec.h"
#include "../../lib/fdr/frame.h"
#include "../../lib/fdr/records.h"

static uint8_t rec[32];

static void md_le(unsigned int version, struct xrayfdr_metadata md,
		  const char *hex)
{
	memset(rec, 0xaa, sizeof(rec));
	assert_int_equal(xrayfdr_encode_metadata(rec, false, version, &md), 0);
	assert_hex(rec, 16, hex);
}

static void md_be(unsigned int version, struct xrayfdr_metadata md,
		  const char *hex)
{
	memset(rec, 0xaa, sizeof(rec));
	assert_int_equal(xrayfdr_encode_metadata(rec, true, version, &md), 0);
	assert_hex(rec, 16, hex);
}

static void test_file_header(void **state)
{
	struct xrayfdr_file_header h = {
		.version = 5,
		.type = XRAYFDR_FILE_FDR,
		.constant_tsc = true,
		.nonstop_tsc = true,
		.cycle_frequency = 1000000000,
		.buffer_size = 4096,
	};
	struct xrayfdr_file_header back;

	(void)state;
	xrayfdr_encode_file_header(rec, &h);
	assert_hex(rec, 32,
		   "05 00 01 00 03 00 00 00 00 ca 9a 3b 00 00 00 00"
		   "00 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	h.version = 1;
	h.constant_tsc = false;
	xrayfdr_encode_file_header(rec, &h);
	assert_hex(rec, 32,
		   "01 00 01 00 02 00 00 00 00 ca 9a 3b 00 00 00 00"
		   "00 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	h.big_endian = true;
	h.nonstop_tsc = false;
	h.constant_tsc = true;
	xrayfdr_encode_file_header(rec, &h);
	assert_hex(rec, 32,
		   "00 01 00 01 00 00 00 01 00 00 00 00 3b 9a ca 00"
		   "00 00 00 00 00 00 10 00 00 00 00 00 00 00 00 00");
	fdr_decode_file_header(rec, true, &back);
	assert_int_equal(back.version, 1);
	assert_int_equal(back.type, XRAYFDR_FILE_FDR);
	assert_true(back.constant_tsc);
	assert_false(back.nonstop_tsc);
	assert_int_equal(back.cycle_frequency, 1000000000);
	assert_int_equal(back.buffer_size, 4096);
}

static void test_function_records(void **state)
{
	(void)state;
	xrayfdr_encode_function(rec, false, XRAYFDR_FUNC_ENTRY, 2, 5971);
	assert_hex(rec, 8, "20 00 00 00 53 17 00 00");
	xrayfdr_encode_function(rec, false, XRAYFDR_FUNC_EXIT, 2, 5971);
	assert_hex(rec, 8, "22 00 00 00 53 17 00 00");
	xrayfdr_encode_function(rec, false, XRAYFDR_FUNC_TAIL_EXIT, 5, 1);
	assert_hex(rec, 8, "54 00 00 00 01 00 00 00");
	xrayfdr_encode_function(rec, false, XRAYFDR_FUNC_ENTRY_ARGS, 0x0abcdef1,
				0xdeadbeef);
	assert_hex(rec, 8, "16 ef cd ab ef be ad de");
	/* ids keep 28 bits */
	xrayfdr_encode_function(rec, false, XRAYFDR_FUNC_ENTRY, 0x1fffffff, 0);
	assert_hex(rec, 8, "f0 ff ff ff 00 00 00 00");
	/* big endian: discriminant in the top bit, action, then the id */
	xrayfdr_encode_function(rec, true, XRAYFDR_FUNC_ENTRY, 2, 5971);
	assert_hex(rec, 8, "00 00 00 02 00 00 17 53");
	xrayfdr_encode_function(rec, true, XRAYFDR_FUNC_EXIT, 2, 1);
	assert_hex(rec, 8, "10 00 00 02 00 00 00 01");
	xrayfdr_encode_function(rec, true, XRAYFDR_FUNC_TAIL_EXIT, 2, 1);
	assert_hex(rec, 8, "20 00 00 02 00 00 00 01");
	xrayfdr_encode_function(rec, true, XRAYFDR_FUNC_ENTRY_ARGS, 0x0abcdef1,
				0xdeadbeef);
	assert_hex(rec, 8, "3a bc de f1 de ad be ef");
}

static void test_metadata_le(void **state)
{
	(void)state;
	for (unsigned int v = 1; v <= 5; v += 4) {
		md_le(v,
		      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_BUFFER,
						 .tid = 1757 },
		      "01 dd 06 00 00 00 00 00 00 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_BUFFER,
						 .tid = -2 },
		      "01 fe ff ff ff 00 00 00 00 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){
			      .kind = XRAYFDR_MD_END_OF_BUFFER },
		      "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
						 .cpu = 3,
						 .tsc = 0x0102030405060708ull },
		      "05 03 00 08 07 06 05 04 03 02 01 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_TSC_WRAP,
						 .tsc = 0x1122334455667788ull },
		      "07 88 77 66 55 44 33 22 11 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){
			      .kind = XRAYFDR_MD_WALLTIME_MARKER,
			      .seconds = 154,
			      .micros = 558726 },
		      "09 9a 00 00 00 00 00 00 00 86 86 08 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){
			      .kind = XRAYFDR_MD_CALL_ARGUMENT,
			      .arg = 0xdeadbeef },
		      "0d ef be ad de 00 00 00 00 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){
			      .kind = XRAYFDR_MD_BUFFER_EXTENTS,
			      .extents = 80 },
		      "0f 50 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){
			      .kind = XRAYFDR_MD_TYPED_EVENT_MARKER,
			      .event_size = 3,
			      .tsc_delta = 4,
			      .event_type = 99 },
		      "11 03 00 00 00 04 00 00 00 63 00 00 00 00 00 00");
		md_le(v,
		      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_PID,
						 .pid = 1756 },
		      "13 dc 06 00 00 00 00 00 00 00 00 00 00 00 00 00");
	}
}

static void test_custom_event_layouts(void **state)
{
	struct xrayfdr_metadata md = { .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
				       .event_size = 5,
				       .tsc = 6000,
				       .cpu = 3,
				       .tsc_delta = -3 };

	(void)state;
	/* v1-3: size, absolute TSC */
	md_le(1, md, "0b 05 00 00 00 70 17 00 00 00 00 00 00 00 00 00");
	md_le(3, md, "0b 05 00 00 00 70 17 00 00 00 00 00 00 00 00 00");
	/* v4: size, absolute TSC, CPU */
	md_le(4, md, "0b 05 00 00 00 70 17 00 00 00 00 00 00 03 00 00");
	/* v5: size, signed delta */
	md_le(5, md, "0b 05 00 00 00 fd ff ff ff 00 00 00 00 00 00 00");
	md_be(5, md, "85 00 00 00 05 ff ff ff fd 00 00 00 00 00 00 00");
	md_be(4, md, "85 00 00 00 05 00 00 00 00 00 00 17 70 00 03 00");
}

static void test_metadata_be(void **state)
{
	(void)state;
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_BUFFER,
					 .tid = 1757 },
	      "80 00 00 06 dd 00 00 00 00 00 00 00 00 00 00 00");
	md_be(1, (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_END_OF_BUFFER },
	      "81 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_CPU_ID,
					 .cpu = 3,
					 .tsc = 0x0102030405060708ull },
	      "82 00 03 01 02 03 04 05 06 07 08 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_TSC_WRAP,
					 .tsc = 0x1122334455667788ull },
	      "83 11 22 33 44 55 66 77 88 00 00 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_WALLTIME_MARKER,
					 .seconds = 154,
					 .micros = 558726 },
	      "84 00 00 00 00 00 00 00 9a 00 08 86 86 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_CALL_ARGUMENT,
					 .arg = 0xdeadbeef },
	      "86 00 00 00 00 de ad be ef 00 00 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_BUFFER_EXTENTS,
					 .extents = 80 },
	      "87 00 00 00 00 00 00 00 50 00 00 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_TYPED_EVENT_MARKER,
					 .event_size = 3,
					 .tsc_delta = 4,
					 .event_type = 99 },
	      "88 00 00 00 03 00 00 00 04 00 63 00 00 00 00 00");
	md_be(5,
	      (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_PID, .pid = 1756 },
	      "89 00 00 06 dc 00 00 00 00 00 00 00 00 00 00 00");
}

/* Every kind, every version, both orders: decode(encode(x)) == x. */
static void test_metadata_round_trip(void **state)
{
	(void)state;
	for (int be = 0; be <= 1; be++) {
		for (unsigned int v = 1; v <= 5; v++) {
			for (unsigned int k = 0; k < XRAYFDR_MD_KIND_COUNT;
			     k++) {
				struct xrayfdr_metadata in = {
					.kind = (uint8_t)k,
					.tid = -5,
					.pid = 77,
					.cpu = 513,
					.tsc = 0xfedcba9876543210ull,
					.seconds = 12345678901ull,
					.micros = 999999,
					.event_size = 100,
					.tsc_delta = -7,
					.event_type = 65000,
					.arg = 0x8000000000000001ull,
					.extents = 0x7fffffffffffffffull,
				};
				struct xrayfdr_metadata out;

				assert_int_equal(xrayfdr_encode_metadata(
							 rec, be, v, &in),
						 0);
				fdr_decode_metadata(rec, be, v, &out);
				assert_int_equal(out.kind, k);
				switch (k) {
				case XRAYFDR_MD_NEW_BUFFER:
					assert_int_equal(out.tid, -5);
					break;
				case XRAYFDR_MD_NEW_CPU_ID:
					assert_int_equal(out.cpu, 513);
					/* fall through */
				case XRAYFDR_MD_TSC_WRAP:
					assert_true(out.tsc == in.tsc);
					break;
				case XRAYFDR_MD_WALLTIME_MARKER:
					assert_true(out.seconds == in.seconds);
					assert_int_equal(out.micros, 999999);
					break;
				case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
					assert_int_equal(out.event_size, 100);
					if (v >= 5)
						assert_int_equal(out.tsc_delta,
								 -7);
					else
						assert_true(out.tsc == in.tsc);
					assert_int_equal(out.cpu,
							 v == 4 ? 513 : 0);
					break;
				case XRAYFDR_MD_CALL_ARGUMENT:
					assert_true(out.arg == in.arg);
					break;
				case XRAYFDR_MD_BUFFER_EXTENTS:
					assert_true(out.extents == in.extents);
					break;
				case XRAYFDR_MD_TYPED_EVENT_MARKER:
					assert_int_equal(out.event_size, 100);
					assert_int_equal(out.tsc_delta, -7);
					assert_int_equal(out.event_type, 65000);
					break;
				case XRAYFDR_MD_PID:
					assert_int_equal(out.pid, 77);
					break;
				default:
					break;
				}
			}
		}
	}
}

static void test_encode_rejects(void **state)
{
	struct xrayfdr_metadata md = { .kind = XRAYFDR_MD_KIND_COUNT };

	(void)state;
	assert_int_equal(xrayfdr_encode_metadata(rec, false, 5, &md), -EINVAL);
	md.kind = XRAYFDR_MD_PID;
	assert_int_equal(xrayfdr_encode_metadata(rec, false, 0, &md), -EINVAL);
	assert_int_equal(xrayfdr_encode_metadata(rec, false, 6, &md), -EINVAL);
}

static void test_sched_payload(void **state)
{
	struct xrayfdr_sched_event se = { .kind = XRAYFDR_SCHED_MIGRATE,
					  .flags = XRAYFDR_SCHED_PREEMPTED,
					  .cpu = 3,
					  .prev_cpu = 258,
					  .tid = 0x01020304 };
	struct xrayfdr_sched_event back;

	(void)state;
	xrayfdr_sched_encode(rec, &se);
	assert_hex(rec, 16, "58 46 53 43 03 01 03 00 02 01 00 00 04 03 02 01");
	assert_int_equal(xrayfdr_sched_decode(rec, 16, &back), 1);
	assert_int_equal(back.kind, XRAYFDR_SCHED_MIGRATE);
	assert_int_equal(back.flags, XRAYFDR_SCHED_PREEMPTED);
	assert_int_equal(back.cpu, 3);
	assert_int_equal(back.prev_cpu, 258);
	assert_int_equal(back.tid, 0x01020304);
	/* anything else is an ordinary custom event */
	assert_int_equal(xrayfdr_sched_decode(rec, 15, &back), 0);
	rec[4] = 4;
	assert_int_equal(xrayfdr_sched_decode(rec, 16, &back), 0);
	rec[4] = 1;
	rec[0] = 'x';
	assert_int_equal(xrayfdr_sched_decode(rec, 16, &back), 0);
}

static void test_thread_name_payload(void **state)
{
	uint8_t buf[40];
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	uint32_t tid = 0;

	(void)state;
	/* the layout, byte for byte: magic, little-endian tid, the name */
	assert_int_equal(xrayfdr_thread_name_encode(buf, 0x01020304, "alpha"),
			 13);
	assert_hex(buf, 13, "58 46 54 4e 04 03 02 01 61 6c 70 68 61");
	assert_int_equal(xrayfdr_thread_name_decode(buf, 13, &tid, name), 1);
	assert_int_equal(tid, 0x01020304);
	assert_string_equal(name, "alpha");

	/* 15 bytes, the most; a longer name is cut there, and no more of
	 * it is read (a 15-byte array without a NUL) */
	assert_int_equal(
		xrayfdr_thread_name_encode(buf, 7, "0123456789abcdefXYZ"), 23);
	assert_int_equal(xrayfdr_thread_name_decode(buf, 23, &tid, name), 1);
	assert_string_equal(name, "0123456789abcde");
	{
		static const char exact[XRAYFDR_THREAD_NAME_MAX] = {
			'f', 'i', 'f', 't', 'e', 'e', 'n', '-',
			'b', 'y', 't', 'e', 's', '!', '!'
		};

		assert_int_equal(xrayfdr_thread_name_encode(buf, 8, exact), 23);
		assert_int_equal(
			xrayfdr_thread_name_decode(buf, 23, &tid, name), 1);
		assert_string_equal(name, "fifteen-bytes!!");
	}
	/* one byte, the least */
	assert_int_equal(xrayfdr_thread_name_encode(buf, 9, "x"), 9);
	assert_int_equal(xrayfdr_thread_name_decode(buf, 9, &tid, name), 1);
	assert_string_equal(name, "x");
	assert_int_equal(tid, 9);
	/* an empty name encodes to 8 bytes, which is no thread-name event */
	assert_int_equal(xrayfdr_thread_name_encode(buf, 9, ""), 8);
	assert_int_equal(xrayfdr_thread_name_decode(buf, 8, &tid, name), 0);

	/* sizes out of range: nothing read past them, nothing decoded */
	xrayfdr_thread_name_encode(buf, 5, "0123456789abcdefXYZ");
	for (size_t size = 0; size <= 8; size++)
		assert_int_equal(
			xrayfdr_thread_name_decode(buf, size, &tid, name), 0);
	buf[23] = 'Z';
	assert_int_equal(xrayfdr_thread_name_decode(buf, 24, &tid, name), 0);
	assert_int_equal(xrayfdr_thread_name_decode(buf, 40, &tid, name), 0);
	/* an embedded NUL, anywhere in the name */
	xrayfdr_thread_name_encode(buf, 5, "abc");
	buf[9] = '\0';
	assert_int_equal(xrayfdr_thread_name_decode(buf, 11, &tid, name), 0);
	xrayfdr_thread_name_encode(buf, 5, "abc");
	buf[11] = '\0'; /* a terminating NUL counted in the size */
	assert_int_equal(xrayfdr_thread_name_decode(buf, 12, &tid, name), 0);
	/* another magic (a scheduler event's) */
	xrayfdr_thread_name_encode(buf, 5, "abc");
	buf[3] = 'C';
	assert_int_equal(xrayfdr_thread_name_decode(buf, 11, &tid, name), 0);
	/* and the scheduler's decoder does not take a thread name */
	{
		struct xrayfdr_sched_event se;

		assert_int_equal(xrayfdr_thread_name_encode(buf, 5,
							    "sixteen-bytes.."),
				 23);
		assert_int_equal(xrayfdr_sched_decode(buf, 16, &se), 0);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(xrayfdr_md_kind_name(XRAYFDR_MD_PID), "Pid");
	assert_string_equal(xrayfdr_md_kind_name(XRAYFDR_MD_BUFFER_EXTENTS),
			    "BufferExtents");
	assert_string_equal(xrayfdr_md_kind_name(99), "?");
	assert_string_equal(xrayfdr_func_kind_name(XRAYFDR_FUNC_TAIL_EXIT),
			    "Function Tail Exit");
	assert_string_equal(xrayfdr_func_kind_name(4), "?");
	assert_string_equal(xrayfdr_event_kind_name(XRAYFDR_EV_ENTRY_ARGS),
			    "function-enter-arg");
	assert_string_equal(xrayfdr_event_kind_name(XRAYFDR_EV_TYPED),
			    "typed-event");
	assert_string_equal(xrayfdr_event_kind_name(6), "?");
}

/* The preamble and the framing every writer of buffers shares. */
static void test_preamble_and_frame(void **state)
{
	uint8_t buf[3 * 16];
	struct xrayfdr_metadata md;
	struct fdr_frame f;

	(void)state;
	assert_int_equal(fdr_preamble_size(1), 32);
	assert_int_equal(fdr_preamble_size(3), 48);
	assert_int_equal(fdr_put_preamble(buf, false, 5, 7, 100, 200, 9), 48);
	fdr_decode_metadata(buf, false, 5, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_NEW_BUFFER);
	assert_int_equal(md.tid, 7);
	fdr_decode_metadata(buf + 16, false, 5, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_WALLTIME_MARKER);
	assert_int_equal(md.seconds, 100);
	assert_int_equal(md.micros, 200);
	fdr_decode_metadata(buf + 32, false, 5, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_PID);
	assert_int_equal(md.pid, 9);
	assert_int_equal(fdr_put_preamble(buf, true, 2, 7, 100, 200, 9), 32);

	/* v2+: BufferExtents before, nothing after, any size */
	assert_int_equal(fdr_frame_buffer(&f, false, 5, 1000, 256), -EMSGSIZE);
	assert_int_equal(fdr_frame_buffer(&f, false, 5, 200, 256), 0);
	assert_int_equal(f.head_len, 16);
	assert_int_equal(f.tail_len + f.zeros, 0);
	fdr_decode_metadata(f.head, false, 5, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_BUFFER_EXTENTS);
	assert_int_equal(md.extents, 200);

	/* v1: EndOfBuffer, then zeros up to buffer_size ... */
	assert_int_equal(fdr_frame_buffer(&f, false, 1, 200, 256), 0);
	assert_int_equal(f.head_len, 0);
	assert_int_equal(f.tail_len, 16);
	assert_int_equal(f.zeros, 40);
	fdr_decode_metadata(f.tail, false, 1, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_END_OF_BUFFER);
	/* ... or a custom event covering padding that is not 8-aligned */
	assert_int_equal(fdr_frame_buffer(&f, false, 1, 205, 256), 0);
	assert_int_equal(f.tail_len, 32);
	assert_int_equal(200 + 5 + f.tail_len + f.zeros, 256);
	fdr_decode_metadata(f.tail + 16, false, 1, &md);
	assert_int_equal(md.kind, XRAYFDR_MD_CUSTOM_EVENT_MARKER);
	assert_int_equal(md.event_size, (int32_t)f.zeros);
	/* too little room for that record, or for EndOfBuffer */
	assert_false(fdr_frame_fits(1, 256 - 16 - 5, 256));
	assert_false(fdr_frame_fits(1, 256 - 8, 256));
	assert_true(fdr_frame_fits(1, 256 - 16, 256));
	assert_true(fdr_frame_fits(1, 256 - FDR_V1_RESERVE - 3, 256));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_header),
		cmocka_unit_test(test_function_records),
		cmocka_unit_test(test_metadata_le),
		cmocka_unit_test(test_custom_event_layouts),
		cmocka_unit_test(test_metadata_be),
		cmocka_unit_test(test_metadata_round_trip),
		cmocka_unit_test(test_encode_rejects),
		cmocka_unit_test(test_sched_payload),
		cmocka_unit_test(test_thread_name_payload),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_preamble_and_frame),
	};

	return cmocka_run_group_tests_name("codec", tests, NULL, NULL);
}
