/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * On-disk encoding of XRay log records, shared by the encoders, the writer,
 * the reader and the runtime's hot path.
 *
 * Every field is placed with explicit shifts into bytes in the file's byte
 * order; nothing relies on C bitfields or struct layout, whose bit order is
 * the compiler's choice.  Little endian packs the first byte's bitfields from
 * the least significant bit, big endian from the most significant bit, as
 * the XRay runtime's bitfields come out on those machines.
 */
#ifndef XRAYFDR_LIB_FDR_RECORDS_H
#define XRAYFDR_LIB_FDR_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xrayfdr/fdr.h>

/* Field offsets inside a 16-byte metadata record (byte 0 is the kind). */
enum {
	MD_OFF_BODY = 1,
	MD_OFF_NEW_CPU_TSC = 3, /* after the 16-bit CPU id */
	MD_OFF_WALL_MICROS = 9, /* after the 64-bit seconds */
	MD_OFF_EVENT_SECOND = 5, /* TSC (v1-4) or delta (v5) after size */
	MD_OFF_CUSTOM_V4_CPU = 13, /* after the 64-bit TSC */
	MD_OFF_TYPED_TYPE = 9, /* after size and delta */
};

_Static_assert(XRAYFDR_FILE_HEADER_SIZE == 32, "file header is 32 bytes");
_Static_assert(XRAYFDR_FUNCTION_RECORD_SIZE == 8, "function record is 8 bytes");
_Static_assert(XRAYFDR_METADATA_RECORD_SIZE == 16,
	       "metadata record is 16 bytes");
_Static_assert(XRAYFDR_BASIC_RECORD_SIZE == 32, "basic record is 32 bytes");
_Static_assert(MD_OFF_CUSTOM_V4_CPU + 2 <= XRAYFDR_METADATA_RECORD_SIZE,
	       "custom event v4 fields fit the record");
_Static_assert(MD_OFF_WALL_MICROS + 4 <= XRAYFDR_METADATA_RECORD_SIZE,
	       "wall time fields fit the record");

/* Offsets in the 32-byte file header. */
enum {
	HDR_OFF_VERSION = 0,
	HDR_OFF_TYPE = 2,
	HDR_OFF_BITS = 4,
	HDR_OFF_FREQUENCY = 8,
	HDR_OFF_BUFFER_SIZE = 16,
};
#define HDR_BIT_CONSTANT_TSC 0x1u
#define HDR_BIT_NONSTOP_TSC 0x2u

/*
 * A buffer's checksum: a custom event whose 16-byte payload, little
 * endian whatever the log's byte order, is the magic, the CRC32C of the
 * file header, the bytes the buffer's CRC covers (from the buffer's first
 * record to SUM_OFF_CRC of this payload) and that CRC
 * (Documentation/fdr-format.rst, "Checksums").
 */
#define SUM_MAGIC "XFCK"
enum {
	SUM_OFF_HEADER_CRC = 4,
	SUM_OFF_COVERED = 8,
	SUM_OFF_CRC = 12,
	SUM_PAYLOAD_SIZE = 16,
	/* the event: its marker and payload */
	SUM_EVENT_SIZE = XRAYFDR_METADATA_RECORD_SIZE + SUM_PAYLOAD_SIZE,
};

/* Does this custom event's payload look like a checksum? */
static inline bool fdr_is_sum_payload(const uint8_t *payload, int32_t size)
{
	return size == SUM_PAYLOAD_SIZE && !memcmp(payload, SUM_MAGIC, 4);
}

/* Offsets in a 32-byte basic-mode record. */
enum {
	BASIC_OFF_RECORD_TYPE = 0, /* u16: 0 function, 1 argument payload */
	BASIC_OFF_CPU = 2, /* u8 */
	BASIC_OFF_KIND = 3, /* u8 */
	BASIC_OFF_FUNC_ID = 4, /* s32 */
	BASIC_OFF_TSC = 8, /* u64 */
	BASIC_OFF_TID = 16, /* u32 */
	BASIC_OFF_PID = 20, /* u32 */
	/* the argument payload reuses 4.. for func id, tid, pid, then arg */
	BASIC_OFF_ARG_FUNC_ID = 4,
	BASIC_OFF_ARG_TID = 8,
	BASIC_OFF_ARG_PID = 12,
	BASIC_OFF_ARG_VALUE = 16,
};
#define BASIC_RECORD_FUNCTION 0
#define BASIC_RECORD_ARG_PAYLOAD 1
_Static_assert(BASIC_OFF_ARG_VALUE + 8 <= XRAYFDR_BASIC_RECORD_SIZE,
	       "basic argument payload fits its record");

static inline void put16(uint8_t *p, uint16_t v, bool be)
{
	if (be) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	} else {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

static inline void put32(uint8_t *p, uint32_t v, bool be)
{
	for (int i = 0; i < 4; i++)
		p[be ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v, bool be)
{
	for (int i = 0; i < 8; i++)
		p[be ? 7 - i : i] = (uint8_t)(v >> (8 * i));
}

/*
 * memcpy and a byte swap compile to one load (and a bswap), where a loop
 * over the bytes cost the reader some 90 instructions a record.
 */
#define HOST_IS_BE (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

static inline uint16_t get16(const uint8_t *p, bool be)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be != HOST_IS_BE ? __builtin_bswap16(v) : v;
}

static inline uint32_t get32(const uint8_t *p, bool be)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be != HOST_IS_BE ? __builtin_bswap32(v) : v;
}

static inline uint64_t get64(const uint8_t *p, bool be)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be != HOST_IS_BE ? __builtin_bswap64(v) : v;
}

/*
 * The first byte of every FDR record: bit "discriminant" (1 = metadata),
 * then the 7-bit metadata kind or the 3-bit function action.
 */
static inline bool fdr_is_metadata(uint8_t first, bool be)
{
	return be ? (first & 0x80) != 0 : (first & 0x01) != 0;
}

static inline unsigned int fdr_md_kind(uint8_t first, bool be)
{
	return be ? first & 0x7fu : first >> 1;
}

static inline uint8_t fdr_md_first_byte(unsigned int kind, bool be)
{
	return be ? (uint8_t)(0x80u | (kind & 0x7fu)) :
		    (uint8_t)(0x01u | (kind & 0x7fu) << 1);
}

/*
 * The first 32-bit word of a function record.  Little endian: bit 0 the
 * discriminant (0), bits 1-3 the action, bits 4-31 the function id.  Big
 * endian: the same fields from the most significant bit down.
 */
static inline uint32_t fdr_function_word(unsigned int kind, uint32_t func_id,
					 bool be)
{
	func_id &= XRAYFDR_FUNC_ID_MASK;
	return be ? (uint32_t)(kind & 7u) << 28 | func_id :
		    func_id << 4 | (uint32_t)(kind & 7u) << 1;
}

static inline unsigned int fdr_function_kind(uint32_t word, bool be)
{
	return be ? (word >> 28) & 7u : (word >> 1) & 7u;
}

static inline uint32_t fdr_function_id(uint32_t word, bool be)
{
	return be ? word & XRAYFDR_FUNC_ID_MASK : word >> 4;
}

/*
 * The whole little-endian function record as one 64-bit word, for writers
 * on little-endian machines that store it with a single instruction.
 */
static inline uint64_t
fdr_function_record_le(unsigned int kind, uint32_t func_id, uint32_t tsc_delta)
{
	return (uint64_t)tsc_delta << 32 |
	       fdr_function_word(kind, func_id, false);
}

static inline void fdr_put_function(uint8_t *p, bool be, unsigned int kind,
				    uint32_t func_id, uint32_t tsc_delta)
{
	put32(p, fdr_function_word(kind, func_id, be), be);
	put32(p + 4, tsc_delta, be);
}

/* A basic-mode function record of @kind (enum xrayfdr_event_kind's
 * first four, XRay's entry types) at @p, its padding zero.  @pid is 0
 * before version 3. */
static inline void fdr_put_basic_function(uint8_t *p, bool be, uint8_t cpu,
					  uint8_t kind, int32_t func_id,
					  uint64_t tsc, uint32_t tid,
					  uint32_t pid)
{
	for (size_t i = 0; i < XRAYFDR_BASIC_RECORD_SIZE; i++)
		p[i] = 0;
	put16(p + BASIC_OFF_RECORD_TYPE, BASIC_RECORD_FUNCTION, be);
	p[BASIC_OFF_CPU] = cpu;
	p[BASIC_OFF_KIND] = kind;
	put32(p + BASIC_OFF_FUNC_ID, (uint32_t)func_id, be);
	put64(p + BASIC_OFF_TSC, tsc, be);
	put32(p + BASIC_OFF_TID, tid, be);
	put32(p + BASIC_OFF_PID, pid, be);
}

/* The basic-mode argument payload that follows an entry's record. */
static inline void fdr_put_basic_arg(uint8_t *p, bool be, int32_t func_id,
				     uint32_t tid, uint32_t pid, uint64_t arg)
{
	for (size_t i = 0; i < XRAYFDR_BASIC_RECORD_SIZE; i++)
		p[i] = 0;
	put16(p + BASIC_OFF_RECORD_TYPE, BASIC_RECORD_ARG_PAYLOAD, be);
	put32(p + BASIC_OFF_ARG_FUNC_ID, (uint32_t)func_id, be);
	put32(p + BASIC_OFF_ARG_TID, tid, be);
	put32(p + BASIC_OFF_ARG_PID, pid, be);
	put64(p + BASIC_OFF_ARG_VALUE, arg, be);
}

/*
 * Encode a metadata record of a known kind for @version (the checks are
 * xrayfdr_encode_metadata()'s).  Inline, so that the runtime's recording
 * path can use it without calling out of code built without vector
 * registers.
 */
static inline void fdr_put_metadata(uint8_t *p, bool be, unsigned int version,
				    const struct xrayfdr_metadata *md)
{
	uint8_t *body = p + MD_OFF_BODY;

	memset(p, 0, XRAYFDR_METADATA_RECORD_SIZE);
	p[0] = fdr_md_first_byte(md->kind, be);
	switch (md->kind) {
	case XRAYFDR_MD_NEW_BUFFER:
		put32(body, (uint32_t)md->tid, be);
		break;
	case XRAYFDR_MD_END_OF_BUFFER:
		break;
	case XRAYFDR_MD_NEW_CPU_ID:
		put16(body, md->cpu, be);
		put64(p + MD_OFF_NEW_CPU_TSC, md->tsc, be);
		break;
	case XRAYFDR_MD_TSC_WRAP:
		put64(body, md->tsc, be);
		break;
	case XRAYFDR_MD_WALLTIME_MARKER:
		put64(body, md->seconds, be);
		put32(p + MD_OFF_WALL_MICROS, md->micros, be);
		break;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
		put32(body, (uint32_t)md->event_size, be);
		if (version >= 5) {
			put32(p + MD_OFF_EVENT_SECOND, (uint32_t)md->tsc_delta,
			      be);
		} else {
			put64(p + MD_OFF_EVENT_SECOND, md->tsc, be);
			if (version == 4)
				put16(p + MD_OFF_CUSTOM_V4_CPU, md->cpu, be);
		}
		break;
	case XRAYFDR_MD_CALL_ARGUMENT:
		put64(body, md->arg, be);
		break;
	case XRAYFDR_MD_BUFFER_EXTENTS:
		put64(body, md->extents, be);
		break;
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		put32(body, (uint32_t)md->event_size, be);
		put32(p + MD_OFF_EVENT_SECOND, (uint32_t)md->tsc_delta, be);
		put16(p + MD_OFF_TYPED_TYPE, md->event_type, be);
		break;
	case XRAYFDR_MD_PID:
		put32(body, (uint32_t)md->pid, be);
		break;
	}
}

/*
 * Every FDR buffer starts with this preamble: NewBuffer (the thread),
 * WallTimeMarker, and from version 3 on the Pid record.  Writers put the
 * NewCPUId of the first record after it.  Inline, for the runtime's
 * recording path (see fdr_put_metadata()).
 */
static inline size_t fdr_preamble_size(unsigned int version)
{
	return (version >= 3 ? 3 : 2) * XRAYFDR_METADATA_RECORD_SIZE;
}

/* Write the preamble at @p; return its size. */
static inline size_t fdr_put_preamble(uint8_t *p, bool be, unsigned int version,
				      int32_t tid, uint64_t wall_sec,
				      uint32_t wall_usec, int32_t pid)
{
	struct xrayfdr_metadata md = { .kind = XRAYFDR_MD_NEW_BUFFER,
				       .tid = tid };

	fdr_put_metadata(p, be, version, &md);
	md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_WALLTIME_MARKER,
					.seconds = wall_sec,
					.micros = wall_usec };
	fdr_put_metadata(p + XRAYFDR_METADATA_RECORD_SIZE, be, version, &md);
	if (version < 3)
		return 2 * XRAYFDR_METADATA_RECORD_SIZE;
	md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_PID, .pid = pid };
	fdr_put_metadata(p + 2 * XRAYFDR_METADATA_RECORD_SIZE, be, version,
			 &md);
	return 3 * XRAYFDR_METADATA_RECORD_SIZE;
}

/*
 * Events (function records, custom and typed events) in @n bytes of
 * little-endian FDR records that begin at a record, whose event payloads
 * take up a multiple of @align bytes (a power of two: 1 in a log, 8 in the
 * runtime's thread buffers); stops at a record that runs past @n.  Inline,
 * for the runtime's recording path.
 */
static inline uint64_t fdr_count_events_le(const uint8_t *p, size_t n,
					   size_t align)
{
	uint64_t events = 0;
	size_t i = 0;

	while (i < n) {
		unsigned int kind;

		/* mostly function records: take them four at a time */
		if (i + 4 * XRAYFDR_FUNCTION_RECORD_SIZE <= n &&
		    !((p[i] | p[i + 8] | p[i + 16] | p[i + 24]) & 1)) {
			events += 4;
			i += 4 * XRAYFDR_FUNCTION_RECORD_SIZE;
			continue;
		}
		if (!fdr_is_metadata(p[i], false)) {
			events++;
			i += XRAYFDR_FUNCTION_RECORD_SIZE;
			continue;
		}
		if (i + XRAYFDR_METADATA_RECORD_SIZE > n)
			break;
		kind = fdr_md_kind(p[i], false);
		if (kind == XRAYFDR_MD_CUSTOM_EVENT_MARKER ||
		    kind == XRAYFDR_MD_TYPED_EVENT_MARKER) {
			events++;
			i += ((size_t)get32(p + i + MD_OFF_BODY, false) +
			      align - 1) &
			     ~(align - 1);
		}
		i += XRAYFDR_METADATA_RECORD_SIZE;
	}
	return events;
}

#endif /* XRAYFDR_LIB_FDR_RECORDS_H */
