// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Framing a buffer of records in a log (see frame.h). */
#include <errno.h>
#include <string.h>

#include "frame.h"
#include "records.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE

bool fdr_frame_fits(unsigned int version, uint64_t used, uint64_t buffer_size)
{
	uint64_t pad;

	if (version >= 2)
		return used <= buffer_size;
	if (used + MD > buffer_size)
		return false; /* no room for EndOfBuffer */
	pad = buffer_size - used - MD;
	return pad % XRAYFDR_FUNCTION_RECORD_SIZE == 0 || pad > MD;
}

int fdr_frame_buffer(struct fdr_frame *f, bool be, unsigned int version,
		     uint64_t used, uint64_t buffer_size)
{
	uint64_t pad;

	memset(f, 0, sizeof(*f));
	if (!fdr_frame_fits(version, used, buffer_size))
		return -EMSGSIZE;
	if (version >= 2) {
		fdr_put_metadata(f->head, be, version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_BUFFER_EXTENTS,
					 .extents = used });
		f->head_len = MD;
		return 0;
	}
	fdr_put_metadata(
		f->tail, be, version,
		&(struct xrayfdr_metadata){ .kind = XRAYFDR_MD_END_OF_BUFFER });
	f->tail_len = MD;
	pad = buffer_size - used - MD;
	if (pad % XRAYFDR_FUNCTION_RECORD_SIZE) {
		fdr_put_metadata(f->tail + MD, be, version,
				 &(struct xrayfdr_metadata){
					 .kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER,
					 .event_size = (int32_t)(pad - MD) });
		f->tail_len += MD;
		pad -= MD;
	}
	f->zeros = (size_t)pad;
	return 0;
}

int fdr_frame_write(bool be, unsigned int version, uint64_t buffer_size,
		    const void *data, size_t used,
		    int (*out)(void *ctx, const void *p, size_t n), void *ctx)
{
	static const uint8_t zeros[4096];
	struct fdr_frame f;
	int ret;

	ret = fdr_frame_buffer(&f, be, version, used, buffer_size);
	if (!ret && f.head_len)
		ret = out(ctx, f.head, f.head_len);
	if (!ret && used)
		ret = out(ctx, data, used);
	if (!ret && f.tail_len)
		ret = out(ctx, f.tail, f.tail_len);
	while (!ret && f.zeros) {
		size_t k = f.zeros < sizeof(zeros) ? f.zeros : sizeof(zeros);

		ret = out(ctx, zeros, k);
		f.zeros -= k;
	}
	return ret;
}
