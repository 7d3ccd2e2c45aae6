// SPDX-License-Identifier: GPL-2.0-only
/* CRC32C (lib/util/crc32c.c) against a bit-at-a-time model, over every
 * length and alignment around its block sizes, and split anywhere. */
#include <stdlib.h>

#include "testutil.h"
#include "../../lib/util/crc32c.h"

static uint32_t model(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
	}
	return ~crc;
}

static void test_vectors(void **state)
{
	static const uint8_t zeros[32];

	(void)state;
	/* RFC 3720, B.4 */
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crc32c(0, zeros, 32), 0x8a9136aa);
	assert_int_equal(crc32c(0, "", 0), 0);
}

/* Lengths across the three-stream blocks (256 bytes to 32 KiB, times
 * three) at every alignment mod 8, and split at a random point; each way
 * of computing it the CPU has (the table, crc32 joined bit by bit or by
 * PCLMULQDQ). */
static void test_model(void **state)
{
	enum { N = 3 * 32768 + 4096 };
	uint8_t *b = malloc(N + 8);
	uint32_t seed = 1;

	(void)state;
	assert_non_null(b);
	for (size_t i = 0; i < N + 8; i++) {
		seed = seed * 1103515245u + 12345u;
		b[i] = (uint8_t)(seed >> 16);
	}
	for (size_t n = 0; n <= N; n += n < 1024 ? 1 : n < 8192 ? 61 : 997) {
		size_t off = n % 8, cut = n ? seed % n : 0;
		uint32_t want = model(0, b + off, n);

		seed = seed * 1103515245u + 12345u;
		assert_int_equal(crc32c(0, b + off, n), want);
		assert_int_equal(crc32c(crc32c(0, b + off, cut), b + off + cut,
					n - cut),
				 want);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests_name("crc32c", tests, NULL, NULL);
}
