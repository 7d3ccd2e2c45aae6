// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Framing a buffer of records in a log (see frame.h). */
#include <errno.h>
#include <string.h>

#include "../util/crc32c.h"
#include "frame.h"
#include "records.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE

/* Do @used bytes of records and @extra of ours fit a buffer? */
static bool fits(unsigned int version, uint64_t used, uint64_t extra,
		 uint64_t buffer_size)
{
	uint64_t pad;

	if (version >= 2)
		return used <= buffer_size && extra <= buffer_size - used;
	if (used > buffer_size || MD + extra > buffer_size - used)
		return false; /* no room for EndOfBuffer */
	pad = buffer_size - used - MD - extra;
	return pad % XRAYFDR_FUNCTION_RECORD_SIZE == 0 || pad > MD;
}

bool fdr_frame_fits(unsigned int version, uint64_t used, uint64_t buffer_size)
{
	return fits(version, used, 0, buffer_size);
}

bool fdr_frame_sums(unsigned int version)
{
	return version == 1 || version >= 5;
}

size_t fdr_frame_capacity(unsigned int version, size_t buffer_size)
{
	size_t reserve = (version == 1 ? FDR_V1_RESERVE : 0) +
			 (fdr_frame_sums(version) ? SUM_EVENT_SIZE : 0);

	return buffer_size > reserve ? buffer_size - reserve : 0;
}

/* The frame, with @extra bytes of the tail left for a checksum (after
 * EndOfBuffer in version 1). */
static int frame(struct fdr_frame *f, bool be, unsigned int version,
		 uint64_t used, uint64_t extra, uint64_t buffer_size)
{
	uint64_t pad;

	memset(f, 0, sizeof(*f));
	if (!fits(version, used, extra, buffer_size))
		return -EMSGSIZE;
	if (version >= 2) {
		fdr_put_metadata(f->head, be, version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_BUFFER_EXTENTS,
					 .extents = used + extra });
		f->head_len = MD;
		f->tail_len = (size_t)extra;
		return 0;
	}
	fdr_put_metadata(
		f->tail, be, version,
		&(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_END_OF_BUFFER });
	f->tail_len = MD + (size_t)extra;
	pad = buffer_size - used - MD - extra;
	if (pad % XRAYFDR_FUNCTION_RECORD_SIZE) {
		fdr_put_metadata(f->tail + f->tail_len, be, version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
					 .event_size = (int32_t)(pad - MD) });
		f->tail_len += MD;
		pad -= MD;
	}
	f->zeros = (size_t)pad;
	return 0;
}

int fdr_frame_buffer(struct fdr_frame *f, bool be, unsigned int version,
		     uint64_t used, uint64_t buffer_size)
{
	return frame(f, be, version, used, 0, buffer_size);
}

/* The checksum event at @ev in f->tail, over the frame's head, the
 * records and the tail up to its CRC field. */
static void put_sum(struct fdr_frame *f, uint8_t *ev, bool be,
		    unsigned int version, const uint8_t *hdr, const void *data,
		    size_t used)
{
	uint8_t *pl = ev + MD;
	size_t before = (size_t)(ev - f->tail) + MD + SUM_OFF_CRC;
	uint32_t crc;

	fdr_put_metadata(ev, be, version,
			 &(struct xrayfdr_metadata){
				 .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
				 .event_size = SUM_PAYLOAD_SIZE });
	memcpy(pl, SUM_MAGIC, 4);
	put32(pl + SUM_OFF_HEADER_CRC, crc32c(0, hdr, XRAYFDR_FILE_HEADER_SIZE),
	      false);
	put32(pl + SUM_OFF_COVERED, (uint32_t)(f->head_len + used + before),
	      false);
	crc = crc32c(0, f->head, f->head_len);
	crc = crc32c(crc, data, used);
	put32(pl + SUM_OFF_CRC, crc32c(crc, f->tail, before), false);
}

/* The frame's head and the records */
static int emit_head(const struct fdr_frame *f, const void *data, size_t used,
		     int (*out)(void *ctx, const void *p, size_t n), void *ctx)
{
	int ret = 0;

	if (f->head_len)
		ret = out(ctx, f->head, f->head_len);
	if (!ret && used)
		ret = out(ctx, data, used);
	return ret;
}

/* The frame's tail and zeros */
static int emit_tail(const struct fdr_frame *f,
		     int (*out)(void *ctx, const void *p, size_t n), void *ctx)
{
	static const uint8_t zeros[4096];
	size_t left = f->zeros;
	int ret = 0;

	if (f->tail_len)
		ret = out(ctx, f->tail, f->tail_len);
	while (!ret && left) {
		size_t k = left < sizeof(zeros) ? left : sizeof(zeros);

		ret = out(ctx, zeros, k);
		left -= k;
	}
	return ret;
}

int fdr_frame_write(bool be, unsigned int version, uint64_t buffer_size,
		    const void *data, size_t used,
		    int (*out)(void *ctx, const void *p, size_t n), void *ctx)
{
	struct fdr_frame f;
	int ret = frame(&f, be, version, used, 0, buffer_size);

	if (!ret)
		ret = emit_head(&f, data, used, out, ctx);
	return ret ? ret : emit_tail(&f, out, ctx);
}

int fdr_frame_write_sum(bool be, unsigned int version, uint64_t buffer_size,
			const uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE],
			const void *data, size_t used,
			int (*out)(void *ctx, const void *p, size_t n),
			void *ctx)
{
	bool sum = fdr_frame_sums(version) && buffer_size <= UINT32_MAX;
	struct fdr_frame f;
	int ret = frame(&f, be, version, used, sum ? SUM_EVENT_SIZE : 0,
			buffer_size);

	if (!ret)
		ret = emit_head(&f, data, used, out, ctx);
	if (ret)
		return ret;
	/* after the records went out: writing them read them into the
	 * cache, so the checksum does not read them from memory again */
	if (sum)
		put_sum(&f, f.tail + (version >= 2 ? 0 : MD), be, version, hdr,
			data, used);
	return emit_tail(&f, out, ctx);
}
