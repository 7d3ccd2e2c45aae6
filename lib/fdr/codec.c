// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Encoding and decoding of single records, and their names. */
#include <errno.h>
#include <string.h>

#include "codec.h"
#include "records.h"

void xrayfdr_encode_file_header(void *buf, const struct xrayfdr_file_header *h)
{
	uint8_t *p = buf;
	bool be = h->big_endian;
	uint32_t bits = 0;

	if (h->constant_tsc)
		bits |= HDR_BIT_CONSTANT_TSC;
	if (h->nonstop_tsc)
		bits |= HDR_BIT_NONSTOP_TSC;
	memset(p, 0, XRAYFDR_FILE_HEADER_SIZE);
	put16(p + HDR_OFF_VERSION, h->version, be);
	put16(p + HDR_OFF_TYPE, h->type, be);
	put32(p + HDR_OFF_BITS, bits, be);
	put64(p + HDR_OFF_FREQUENCY, h->cycle_frequency, be);
	put64(p + HDR_OFF_BUFFER_SIZE, h->buffer_size, be);
}

void fdr_decode_file_header(const uint8_t *p, bool be,
			    struct xrayfdr_file_header *h)
{
	uint32_t bits = get32(p + HDR_OFF_BITS, be);

	h->version = get16(p + HDR_OFF_VERSION, be);
	h->type = get16(p + HDR_OFF_TYPE, be);
	h->constant_tsc = bits & HDR_BIT_CONSTANT_TSC;
	h->nonstop_tsc = bits & HDR_BIT_NONSTOP_TSC;
	h->big_endian = be;
	h->cycle_frequency = get64(p + HDR_OFF_FREQUENCY, be);
	h->buffer_size = get64(p + HDR_OFF_BUFFER_SIZE, be);
}

void xrayfdr_encode_function(void *buf, bool big_endian,
			     enum xrayfdr_func_kind kind, int32_t func_id,
			     uint32_t tsc_delta)
{
	fdr_put_function(buf, big_endian, kind, (uint32_t)func_id, tsc_delta);
}

int xrayfdr_encode_metadata(void *buf, bool big_endian, unsigned int version,
			    const struct xrayfdr_metadata *md)
{
	uint8_t *p = buf;
	bool be = big_endian;

	if (md->kind >= XRAYFDR_MD_KIND_COUNT ||
	    version < XRAYFDR_FDR_VERSION_MIN ||
	    version > XRAYFDR_FDR_VERSION_MAX) {
		errno = EINVAL;
		return -EINVAL;
	}
	fdr_put_metadata(p, be, version, md);
	return 0;
}

void fdr_decode_metadata(const uint8_t *p, bool be, unsigned int version,
			 struct xrayfdr_metadata *md)
{
	const uint8_t *body = p + MD_OFF_BODY;

	memset(md, 0, sizeof(*md));
	md->kind = (uint8_t)fdr_md_kind(p[0], be);
	switch (md->kind) {
	case XRAYFDR_MD_NEW_BUFFER:
		md->tid = (int32_t)get32(body, be);
		break;
	case XRAYFDR_MD_NEW_CPU_ID:
		md->cpu = get16(body, be);
		md->tsc = get64(p + MD_OFF_NEW_CPU_TSC, be);
		break;
	case XRAYFDR_MD_TSC_WRAP:
		md->tsc = get64(body, be);
		break;
	case XRAYFDR_MD_WALLTIME_MARKER:
		md->seconds = get64(body, be);
		md->micros = get32(p + MD_OFF_WALL_MICROS, be);
		break;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
		md->event_size = (int32_t)get32(body, be);
		if (version >= 5) {
			md->tsc_delta =
				(int32_t)get32(p + MD_OFF_EVENT_SECOND, be);
		} else {
			md->tsc = get64(p + MD_OFF_EVENT_SECOND, be);
			if (version == 4)
				md->cpu = get16(p + MD_OFF_CUSTOM_V4_CPU, be);
		}
		break;
	case XRAYFDR_MD_CALL_ARGUMENT:
		md->arg = get64(body, be);
		break;
	case XRAYFDR_MD_BUFFER_EXTENTS:
		md->extents = get64(body, be);
		break;
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		md->event_size = (int32_t)get32(body, be);
		md->tsc_delta = (int32_t)get32(p + MD_OFF_EVENT_SECOND, be);
		md->event_type = get16(p + MD_OFF_TYPED_TYPE, be);
		break;
	case XRAYFDR_MD_PID:
		md->pid = (int32_t)get32(body, be);
		break;
	default: /* END_OF_BUFFER has no fields; unknown kinds are the caller's */
		break;
	}
}

const char *xrayfdr_md_kind_name(unsigned int kind)
{
	static const char *const names[XRAYFDR_MD_KIND_COUNT] = {
		[XRAYFDR_MD_NEW_BUFFER] = "NewBuffer",
		[XRAYFDR_MD_END_OF_BUFFER] = "EndOfBuffer",
		[XRAYFDR_MD_NEW_CPU_ID] = "NewCPUId",
		[XRAYFDR_MD_TSC_WRAP] = "TSCWrap",
		[XRAYFDR_MD_WALLTIME_MARKER] = "WallTimeMarker",
		[XRAYFDR_MD_CUSTOM_EVENT_MARKER] = "CustomEventMarker",
		[XRAYFDR_MD_CALL_ARGUMENT] = "CallArgument",
		[XRAYFDR_MD_BUFFER_EXTENTS] = "BufferExtents",
		[XRAYFDR_MD_TYPED_EVENT_MARKER] = "TypedEventMarker",
		[XRAYFDR_MD_PID] = "Pid",
	};

	return kind < XRAYFDR_MD_KIND_COUNT ? names[kind] : "?";
}

const char *xrayfdr_func_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[XRAYFDR_FUNC_ENTRY] = "Function Entry",
		[XRAYFDR_FUNC_EXIT] = "Function Exit",
		[XRAYFDR_FUNC_TAIL_EXIT] = "Function Tail Exit",
		[XRAYFDR_FUNC_ENTRY_ARGS] = "Function Entry Args",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

const char *xrayfdr_event_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[XRAYFDR_EV_ENTRY] = "function-enter",
		[XRAYFDR_EV_EXIT] = "function-exit",
		[XRAYFDR_EV_TAIL_EXIT] = "function-tail-exit",
		[XRAYFDR_EV_ENTRY_ARGS] = "function-enter-arg",
		[XRAYFDR_EV_CUSTOM] = "custom-event",
		[XRAYFDR_EV_TYPED] = "typed-event",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

static const uint8_t sched_magic[4] = { 'X', 'F', 'S', 'C' };

void xrayfdr_sched_encode(void *buf, const struct xrayfdr_sched_event *se)
{
	uint8_t *p = buf;

	memset(p, 0, XRAYFDR_SCHED_PAYLOAD_SIZE);
	memcpy(p, sched_magic, sizeof(sched_magic));
	p[4] = se->kind;
	p[5] = se->flags;
	put16(p + 6, se->cpu, false);
	put16(p + 8, se->prev_cpu, false);
	put32(p + 12, se->tid, false);
}

int xrayfdr_sched_decode(const void *data, size_t size,
			 struct xrayfdr_sched_event *se)
{
	const uint8_t *p = data;

	if (size != XRAYFDR_SCHED_PAYLOAD_SIZE ||
	    memcmp(p, sched_magic, sizeof(sched_magic)) ||
	    p[4] < XRAYFDR_SCHED_SWITCH_OUT || p[4] > XRAYFDR_SCHED_MIGRATE)
		return 0;
	se->kind = p[4];
	se->flags = p[5];
	se->cpu = get16(p + 6, false);
	se->prev_cpu = get16(p + 8, false);
	se->tid = get32(p + 12, false);
	return 1;
}

static const uint8_t thread_name_magic[4] = { 'X', 'F', 'T', 'N' };

size_t xrayfdr_thread_name_encode(void *buf, uint32_t tid, const char *name)
{
	uint8_t *p = buf;
	size_t n = strnlen(name, XRAYFDR_THREAD_NAME_MAX);

	memcpy(p, thread_name_magic, sizeof(thread_name_magic));
	put32(p + 4, tid, false);
	memcpy(p + 8, name, n);
	return 8 + n;
}

int xrayfdr_thread_name_decode(const void *data, size_t size, uint32_t *tid,
			       char *name)
{
	const uint8_t *p = data;
	size_t n = size - 8;

	if (size <= 8 || n > XRAYFDR_THREAD_NAME_MAX ||
	    memcmp(p, thread_name_magic, sizeof(thread_name_magic)) ||
	    memchr(p + 8, '\0', n))
		return 0;
	*tid = get32(p + 4, false);
	memcpy(name, p + 8, n);
	name[n] = '\0';
	return 1;
}
