// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CRC32C (see crc32c.h).  The crc32 instruction has a latency of three
 * cycles and a throughput of one, so one stream of it runs at a third of
 * its speed: long inputs are cut into three blocks summed side by side,
 * and the three CRCs joined by multiplying the first two by x^(8 n)
 * modulo the polynomial (as zlib's crc32_combine() does; with PCLMULQDQ,
 * one carry-less multiply that crc32 reduces, as Linux's crc32c-intel).
 */
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#define POLY 0x82f63b78u /* Castagnoli's, bit-reflected */

/* a * b modulo the polynomial, bit-reflected (x^0 is bit 31) */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if (!(a & (m - 1)))
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^n modulo the polynomial */
static uint32_t xnmodp(uint64_t n)
{
	uint32_t p = 1u << 31, sq = 1u << 30; /* x^0, x^1 */

	while (n) {
		if (n & 1)
			p = multmodp(sq, p);
		sq = multmodp(sq, sq);
		n >>= 1;
	}
	return p;
}

static uint32_t table[256];
static volatile int table_ready; /* filled twice at worst: same values */

static void table_fill(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[i] = c;
	}
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t sw_update(uint32_t crc, const uint8_t *p, size_t len)
{
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		table_fill();
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
/* The block sizes of the three-stream loop, largest first (powers of two,
 * so that most of any length goes through three streams), and what moves
 * a block's CRC past one and two blocks: x^(8 n - 33) for the carry-less
 * multiply (whose product the crc32 instruction then reduces), x^(8 n)
 * for multmodp() where there is no PCLMULQDQ. */
#define BLOCK_MAX 32768
#define BLOCK_MIN 256
#define NBLOCKS 8
static uint32_t shift1[NBLOCKS], shift2[NBLOCKS]; /* multmodp() */
static uint32_t clshift1[NBLOCKS], clshift2[NBLOCKS]; /* clmul_shift() */
static volatile int hw; /* 0 not known yet, 1 SSE4.2, 2 and PCLMULQDQ, -1 none */

static void hw_probe(void)
{
	unsigned int a, b, c, d;
	int have = 0;

	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2))
		have = c & bit_PCLMUL ? 2 : 1;
	for (size_t i = 0, n = BLOCK_MAX; have && i < NBLOCKS; i++, n /= 2) {
		shift1[i] = xnmodp(8 * (uint64_t)n);
		shift2[i] = xnmodp(16 * (uint64_t)n);
		/* crc32 multiplies what it reduces by x^33 */
		clshift1[i] = xnmodp(8 * (uint64_t)n - 33);
		clshift2[i] = xnmodp(16 * (uint64_t)n - 33);
	}
	__atomic_store_n(&hw, have ? have : -1, __ATOMIC_RELEASE);
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* @crc moved past the bytes @k stands for (shift1/shift2) */
__attribute__((target("sse4.2,pclmul"))) static uint32_t
clmul_shift(uint32_t crc, uint32_t k)
{
	__m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
					 _mm_cvtsi32_si128((int)k), 0);

	return (uint32_t)__builtin_ia32_crc32di(0,
						(uint64_t)_mm_cvtsi128_si64(p));
}

__attribute__((target("sse4.2,pclmul"))) static uint32_t
hw_update(uint32_t crc, const uint8_t *p, size_t len, bool clmul)
{
	uint64_t c0 = crc;
	size_t i = 0;

	for (size_t n = BLOCK_MAX; n >= BLOCK_MIN; n /= 2, i++) {
		while (len >= 3 * n) {
			uint64_t c1 = 0, c2 = 0;

			for (size_t k = 0; k < n; k += 8) {
				c0 = __builtin_ia32_crc32di(c0, load64(p + k));
				c1 = __builtin_ia32_crc32di(c1,
							    load64(p + n + k));
				c2 = __builtin_ia32_crc32di(
					c2, load64(p + 2 * n + k));
			}
			if (clmul)
				c0 = clmul_shift((uint32_t)c0, clshift2[i]) ^
				     clmul_shift((uint32_t)c1, clshift1[i]) ^
				     (uint32_t)c2;
			else
				c0 = multmodp(shift2[i], (uint32_t)c0) ^
				     multmodp(shift1[i], (uint32_t)c1) ^
				     (uint32_t)c2;
			p += 3 * n;
			len -= 3 * n;
		}
	}
	for (; len >= 8; p += 8, len -= 8)
		c0 = __builtin_ia32_crc32di(c0, load64(p));
	crc = (uint32_t)c0;
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

/* The best the CPU has, if at most @impl (crc32c.h) */
static uint32_t update(int impl, uint32_t crc, const uint8_t *p, size_t len)
{
#if defined(__x86_64__)
	if (!__atomic_load_n(&hw, __ATOMIC_ACQUIRE))
		hw_probe();
	if (hw > 0 && impl > 0)
		return hw_update(crc, p, len, hw == 2 && impl == 2);
#endif
	(void)impl;
	return sw_update(crc, p, len);
}

uint32_t crc32c(uint32_t crc, const void *data, size_t len)
{
	/* the register starts at ~0 and the result is inverted */
	return ~update(2, ~crc, data, len);
}

uint32_t crc32c_impl(int impl, uint32_t crc, const void *data, size_t len)
{
	return ~update(impl, ~crc, data, len);
}
