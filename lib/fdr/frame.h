/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How a buffer of records is framed in a log: the one place that knows it,
 * for the writer, the runtime's flush and the ring drain.
 *
 * From version 2 on, a BufferExtents record (the byte count of the records)
 * comes before the buffer and nothing after it.  In version 1 every buffer
 * is exactly buffer_size bytes: the records, EndOfBuffer, then padding that
 * llvm-xray parses as records (fdr-format.rst, "Version 1 padding"): zeros
 * when its length is a multiple of 8, else a CustomEventMarker whose payload
 * covers it, so a version 1 buffer may not end with 1-16 bytes of padding
 * that are not a multiple of 8.
 *
 * The runtime's buffers end with a checksum (fdr_frame_write_sum()): a
 * custom event as the last record of the buffer in version 5, the record
 * after EndOfBuffer in version 1 (in the padding, which llvm-xray
 * ignores); fdr-format.rst, "Checksums".
 */
#ifndef XRAYFDR_LIB_FDR_FRAME_H
#define XRAYFDR_LIB_FDR_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/fdr.h>

/* A version 1 buffer whose records leave this much room always frames. */
#define FDR_V1_RESERVE (2 * XRAYFDR_METADATA_RECORD_SIZE)

struct fdr_frame {
	uint8_t head[XRAYFDR_METADATA_RECORD_SIZE]; /* before the records */
	size_t head_len;
	/* after them: [EndOfBuffer] [checksum] [padding's marker] */
	uint8_t tail[4 * XRAYFDR_METADATA_RECORD_SIZE];
	size_t tail_len;
	size_t zeros; /* zero bytes after the tail */
};

/* Can a buffer of @version holding @used bytes of records be framed? */
bool fdr_frame_fits(unsigned int version, uint64_t used, uint64_t buffer_size);

/*
 * The frame of a buffer holding @used bytes of records.  Return 0, or
 * -EMSGSIZE if it does not fit (fdr_frame_fits()).
 */
int fdr_frame_buffer(struct fdr_frame *f, bool be, unsigned int version,
		     uint64_t used, uint64_t buffer_size);

/*
 * Write a framed buffer of @used bytes of records at @data through @out
 * (which returns 0 or a negative errno): head, records, tail, zeros.
 * Async-signal-safe.  Return 0, -EMSGSIZE, or what @out returned.
 */
int fdr_frame_write(bool be, unsigned int version, uint64_t buffer_size,
		    const void *data, size_t used,
		    int (*out)(void *ctx, const void *p, size_t n), void *ctx);

/* Do buffers of @version carry checksums (versions 1 and 5 do)? */
bool fdr_frame_sums(unsigned int version);

/* Bytes of records a buffer of @buffer_size bytes holds when written by
 * fdr_frame_write_sum(), whatever their length (0 if none). */
size_t fdr_frame_capacity(unsigned int version, size_t buffer_size);

/*
 * fdr_frame_write(), with the buffer's checksum where @version has one
 * (fdr_frame_sums()) and @buffer_size is below 4 GiB: CRC32C of the
 * framed buffer's bytes and of @hdr, the log's file header.  @used must
 * leave room for it (fdr_frame_capacity()).  Async-signal-safe.
 */
int fdr_frame_write_sum(bool be, unsigned int version, uint64_t buffer_size,
			const uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE],
			const void *data, size_t used,
			int (*out)(void *ctx, const void *p, size_t n),
			void *ctx);

#endif
