// SPDX-License-Identifier: GPL-2.0-only
/*
 * The x86_64 patcher on sleds laid out byte for byte as clang emits them,
 * in a page of our own: what a patch writes, what an unpatch restores,
 * and which bytes make it refuse.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../unit/testutil.h"
#include "../../lib/arch/x86_64/arch.h"

static const uint8_t entry_sled[11] = { 0xeb, 0x09, 0x66, 0x0f, 0x1f, 0x84,
					0x00, 0x00, 0x02, 0x00, 0x00 };
static const uint8_t exit_sled[11] = { 0xc3, 0x2e, 0x66, 0x0f, 0x1f, 0x84,
				       0x00, 0x00, 0x02, 0x00, 0x00 };
static const uint8_t custom_sled[2] = { 0xeb, 0x0f };
static const uint8_t typed_sled[2] = { 0xeb, 0x14 };

static uint8_t *page;

static int setup(void **state)
{
	(void)state;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return page == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	return munmap(page, 4096);
}

static struct xray_sled sled_at(size_t off, unsigned int kind)
{
	return (struct xray_sled){ .address = (uintptr_t)(page + off),
				   .kind = (uint8_t)kind,
				   .version = 2 };
}

static int32_t rel_to(size_t off, uintptr_t target)
{
	return (int32_t)((int64_t)target - (int64_t)(uintptr_t)(page + off) -
			 11);
}

/* Entry, tail and arg sleds: "mov $word, %r10d; call target", word the
 * first half of the function record: id << 4 | action << 1. */
static void test_entry_like(void **state)
{
	static const unsigned int kinds[] = { XRAY_SLED_ENTRY, XRAY_SLED_TAIL,
					      XRAY_SLED_LOG_ARGS_ENTRY };
	static const uint8_t words[] = { 0xa0, 0xa4, 0xa6 }; /* 42 = 0x2a */
	char err[256];

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct xray_sled s = sled_at(64, kinds[k]);
		uintptr_t target = (uintptr_t)(page + 2048);
		uint8_t want[11] = { 0x41, 0xba, words[k], 0x02,
				     0x00, 0x00, 0xe8 };
		int32_t rel = rel_to(64, target);

		memcpy(page + 64, entry_sled, 11);
		memcpy(want + 7, &rel, 4);
		assert_int_equal(arch_sled_patched(&s), 0);
		assert_int_equal(arch_patch_sled(&s, 42, target, true, err,
						 sizeof(err)),
				 0);
		assert_memory_equal(page + 64, want, 11);
		assert_int_equal(arch_sled_patched(&s), 1);
		/* again: nothing changes */
		assert_int_equal(arch_patch_sled(&s, 42, target, true, err,
						 sizeof(err)),
				 0);
		assert_memory_equal(page + 64, want, 11);
		/* unpatch: only the jump comes back; the tail stays */
		assert_int_equal(arch_patch_sled(&s, 42, target, false, err,
						 sizeof(err)),
				 0);
		assert_int_equal(page[64], 0xeb);
		assert_int_equal(page[65], 0x09);
		assert_memory_equal(page + 66, want + 2, 9);
		assert_int_equal(arch_sled_patched(&s), 0);
		/* and patched again from there */
		assert_int_equal(arch_patch_sled(&s, 42, target, true, err,
						 sizeof(err)),
				 0);
		assert_memory_equal(page + 64, want, 11);
	}
}

/* Exit sleds: "mov $word, %r10d; jmp target" over "ret; nop". */
static void test_exit(void **state)
{
	struct xray_sled s = sled_at(128, XRAY_SLED_EXIT);
	uintptr_t target = (uintptr_t)(page + 3000);
	uint8_t want[11] = { 0x41, 0xba, 0x72, 0x00, 0x00, 0x00, 0xe9 };
	int32_t rel = rel_to(128, target);
	char err[256];

	(void)state;
	memcpy(page + 128, exit_sled, 11);
	memcpy(want + 7, &rel, 4);
	assert_int_equal(arch_patch_sled(&s, 7, target, true, err, sizeof(err)),
			 0);
	assert_memory_equal(page + 128, want, 11);
	assert_int_equal(
		arch_patch_sled(&s, 7, target, false, err, sizeof(err)), 0);
	assert_int_equal(page[128], 0xc3); /* ret first: the rest is dead */
	/* LLVM's runtime unpatches with one byte: "c3 ba ..." is fine too */
	page[129] = 0xba;
	assert_int_equal(arch_sled_patched(&s), 0);
	assert_int_equal(arch_patch_sled(&s, 7, target, true, err, sizeof(err)),
			 0);
	assert_memory_equal(page + 128, want, 11);
}

static void test_events(void **state)
{
	struct xray_sled c = sled_at(200, XRAY_SLED_CUSTOM_EVENT);
	struct xray_sled t = sled_at(240, XRAY_SLED_TYPED_EVENT);
	char err[256];

	(void)state;
	memcpy(page + 200, custom_sled, 2);
	memcpy(page + 240, typed_sled, 2);
	assert_int_equal(arch_patch_sled(&c, 1, 0, true, err, sizeof(err)), 0);
	assert_int_equal(arch_patch_sled(&t, 1, 0, true, err, sizeof(err)), 0);
	assert_hex(page + 200, 2, "66 90");
	assert_hex(page + 240, 2, "66 90");
	assert_int_equal(arch_sled_patched(&c), 1);
	assert_int_equal(arch_patch_sled(&c, 1, 0, false, err, sizeof(err)), 0);
	assert_int_equal(arch_patch_sled(&t, 1, 0, false, err, sizeof(err)), 0);
	assert_hex(page + 200, 2, "eb 0f");
	assert_hex(page + 240, 2, "eb 14");
}

/* Bytes we do not recognise are left alone and reported. */
static void test_refusals(void **state)
{
	struct xray_sled s = sled_at(300, XRAY_SLED_ENTRY);
	uintptr_t target = (uintptr_t)(page + 100);
	uint8_t before[11];
	char err[256] = "";

	(void)state;
	memcpy(page + 300, entry_sled, 11);
	page[305] = 0x90; /* a different nop */
	memcpy(before, page + 300, 11);
	assert_int_equal(arch_patch_sled(&s, 1, target, true, err, sizeof(err)),
			 -EILSEQ);
	assert_memory_equal(page + 300, before, 11);
	assert_non_null(strstr(err, "unexpected bytes"));
	assert_int_equal(arch_sled_patched(&s), -EILSEQ);

	s = sled_at(301, XRAY_SLED_ENTRY); /* odd: no atomic 2-byte store */
	assert_int_equal(arch_patch_sled(&s, 1, target, true, err, sizeof(err)),
			 -EINVAL);

	memcpy(page + 320, custom_sled, 2);
	page[321] = 0x10; /* jmp +16 is not a custom-event sled */
	s = sled_at(320, XRAY_SLED_CUSTOM_EVENT);
	assert_int_equal(arch_patch_sled(&s, 1, 0, true, err, sizeof(err)),
			 -EILSEQ);
	assert_hex(page + 320, 2, "eb 10");

	/* out of the 32-bit reach of a call */
	memcpy(page + 340, entry_sled, 11);
	s = sled_at(340, XRAY_SLED_ENTRY);
	assert_int_equal(arch_patch_sled(&s, 1, (uintptr_t)page + (3ull << 31),
					 true, err, sizeof(err)),
			 -ERANGE);
	assert_memory_equal(page + 340, entry_sled, 11);

	/* patched to call somewhere else: another runtime's */
	assert_int_equal(arch_patch_sled(&s, 1, target, true, err, sizeof(err)),
			 0);
	assert_int_equal(arch_patch_sled(&s, 1, target + 16, true, err,
					 sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "another XRay runtime"));

	s = sled_at(400, 9);
	assert_int_equal(arch_patch_sled(&s, 1, target, true, err, sizeof(err)),
			 -EINVAL);
}

static void test_stub(void **state)
{
	uintptr_t target = 0x1122334455667788ull;

	(void)state;
	arch_write_stub(page + 512, target);
	assert_hex(page + 512, ARCH_STUB_SIZE,
		   "ff 25 00 00 00 00 88 77 66 55 44 33 22 11 cc cc");
}

/*
 * GCC's sites at every offset in 16 bytes (those across a 16-byte
 * boundary go through an int3): the 5-byte nop, and -fPIC's GOT call to
 * __fentry__, which the first patch turns into the nop and a 1-byte nop.
 */
static void test_gcc_sites(void **state)
{
	static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t got_call[6] = {
		0xff, 0x15, 0x12, 0x34, 0x00, 0x00
	};
	char err[256];

	(void)state;
	for (size_t off = 1024; off < 1024 + 16; off++) {
		for (int pic = 0; pic < 2; pic++) {
			uint8_t *p = page + off;
			uintptr_t stub = (uintptr_t)page + 2048;
			int32_t rel = (int32_t)(stub - ((uintptr_t)p + 5));
			uint8_t call[5] = { 0xe8 };

			memcpy(call + 1, &rel, 4);
			memset(page + 1008, 0xcc, 48);
			if (pic)
				memcpy(p, got_call, sizeof(got_call));
			else
				memcpy(p, nop5, sizeof(nop5));
			/* never patched: unpatching leaves the GOT call */
			assert_int_equal(arch_patch_gcc_site((uintptr_t)p, stub,
							     false, err,
							     sizeof(err)),
					 0);
			assert_int_equal(p[0], pic ? 0xff : 0x0f);
			assert_int_equal(arch_patch_gcc_site((uintptr_t)p, stub,
							     true, err,
							     sizeof(err)),
					 0);
			assert_memory_equal(p, call, 5);
			assert_int_equal(p[5], pic ? 0x90 : 0xcc);
			assert_int_equal(p[-1], 0xcc);
			assert_int_equal(arch_patch_gcc_site((uintptr_t)p, stub,
							     false, err,
							     sizeof(err)),
					 0);
			assert_memory_equal(p, nop5, 5);
			assert_int_equal(p[5], pic ? 0x90 : 0xcc);
		}
	}
	page[1024] = 0xff;
	page[1025] = 0x25; /* a jmp through memory is no site */
	assert_int_equal(arch_patch_gcc_site((uintptr_t)page + 1024,
					     (uintptr_t)page + 2048, true, err,
					     sizeof(err)),
			 -EILSEQ);
	assert_non_null(strstr(err, "unexpected bytes ff 25"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_like),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_stub),
		cmocka_unit_test(test_gcc_sites),
	};

	return cmocka_run_group_tests_name("x86_64 sled patcher", tests, setup,
					   teardown);
}
