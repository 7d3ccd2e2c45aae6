/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CRC32C (Castagnoli), the checksum of a log's buffers
 * (Documentation/fdr-format.rst, "Checksums").  On x86_64 with SSE4.2 the
 * crc32 instruction computes it, three streams at once; elsewhere a table
 * does.  No allocation and no locks: the runtime's fatal-signal flush
 * calls it.
 */
#ifndef XRAYFDR_LIB_UTIL_CRC32C_H
#define XRAYFDR_LIB_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * The CRC32C of @len bytes at @data continuing @crc, the value returned
 * for the bytes before them (0 to begin): crc32c(crc32c(0, a, n), b, m)
 * is the CRC of a then b.  The standard CRC32C (initial value and final
 * value inverted): crc32c(0, "123456789", 9) == 0xe3069283.
 */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);

/*
 * For tests: crc32c() as one way of computing it does, if the CPU has it:
 * 0 the table, 1 crc32 (streams joined by multiplying modulo the
 * polynomial bit by bit), 2 crc32 and PCLMULQDQ (what crc32c() uses); on
 * a CPU without it, the best it has below.
 */
uint32_t crc32c_impl(int impl, uint32_t crc, const void *data, size_t len);

#endif
