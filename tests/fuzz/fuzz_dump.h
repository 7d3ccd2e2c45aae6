/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The input of fuzz_dump: a session's mapping, compact.  Shared by the
 * target, which lays it out, and tests/runtime/test_sink, which writes
 * its CPU scenarios' rings in this form as seeds.
 *
 *   8 bytes   what the module sets: number of CPUs, sub-buffer size and
 *             count, geometry flags, TSC flags (fuzz_dump_decode())
 *   sections  one per CPU area, CPU 0 first: a little-endian u32 length,
 *             then that many bytes of the area (control page, then the
 *             sub-buffers); the rest of the area is zero
 *
 * When the input ends before every CPU has its section, the sections
 * given repeat, so one section fills 64 CPUs.  A geometry whose areas
 * would pass FUZZ_DUMP_MAX_BYTES has its number of CPUs cut to fit.
 */
#ifndef XRAYFDR_TESTS_FUZZ_DUMP_H
#define XRAYFDR_TESTS_FUZZ_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/xray_fdr.h>

#define FUZZ_DUMP_GEOMETRY_SIZE 8
#define FUZZ_DUMP_MAX_CPUS 64
#define FUZZ_DUMP_MAX_SUBBUFS 64
#define FUZZ_DUMP_MAX_BYTES (8u << 20)
#define FUZZ_DUMP_CONTROL_SIZE 4096

struct fuzz_dump_geometry {
	uint32_t nr_cpus, subbuf_size, subbuf_count, geom_flags, tsc_flags;
	uint64_t area_size;
};

static inline void fuzz_dump_decode(const uint8_t *b,
				    struct fuzz_dump_geometry *g)
{
	g->nr_cpus = 1 + b[0] % FUZZ_DUMP_MAX_CPUS;
	g->subbuf_size = XRAY_FDR_SUBBUF_MIN_SIZE << (b[1] % 2);
	g->subbuf_count = 2 + b[2] % (FUZZ_DUMP_MAX_SUBBUFS - 1);
	g->geom_flags = b[3] & XRAY_FDR_GEOM_DISCARD;
	g->tsc_flags = b[4] & 0x1f;
	g->area_size = FUZZ_DUMP_CONTROL_SIZE +
		       (uint64_t)g->subbuf_size * g->subbuf_count;
	if (g->area_size * g->nr_cpus > FUZZ_DUMP_MAX_BYTES)
		g->nr_cpus = (uint32_t)(FUZZ_DUMP_MAX_BYTES / g->area_size);
}

/* Lay the sections of @in out over @areas (zeroed, @g's size). */
static inline void fuzz_dump_layout(const uint8_t *in, size_t n, uint8_t *areas,
				    const struct fuzz_dump_geometry *g)
{
	size_t pos = 0;
	uint32_t given = 0;

	for (; given < g->nr_cpus && pos + 4 <= n; given++) {
		uint32_t len = (uint32_t)in[pos] | (uint32_t)in[pos + 1] << 8 |
			       (uint32_t)in[pos + 2] << 16 |
			       (uint32_t)in[pos + 3] << 24;

		pos += 4;
		if (len > n - pos)
			len = (uint32_t)(n - pos);
		if (len > g->area_size)
			len = (uint32_t)g->area_size;
		memcpy(areas + given * g->area_size, in + pos, len);
		pos += len;
	}
	for (uint32_t c = given; given && c < g->nr_cpus; c++)
		memcpy(areas + c * g->area_size,
		       areas + (c % given) * g->area_size, g->area_size);
}

/*
 * Write the mapping of @h (its areas at @areas) to @f in this form, each
 * area without its trailing zeros.  Return 0, or -1 if fuzz_dump_decode()
 * cannot express @h's geometry.
 */
static inline int fuzz_dump_write(FILE *f, const struct xray_fdr_header *h,
				  const uint8_t *areas)
{
	uint8_t geo[FUZZ_DUMP_GEOMETRY_SIZE] = {
		(uint8_t)(h->nr_cpus - 1),
		(uint8_t)(h->subbuf_size == XRAY_FDR_SUBBUF_MIN_SIZE ? 0 : 1),
		(uint8_t)(h->subbuf_count - 2),
		(uint8_t)(h->geom_flags & XRAY_FDR_GEOM_DISCARD),
		(uint8_t)(h->tsc_flags & 0x1f),
	};
	struct fuzz_dump_geometry g;

	fuzz_dump_decode(geo, &g);
	if (g.nr_cpus != h->nr_cpus || g.subbuf_size != h->subbuf_size ||
	    g.subbuf_count != h->subbuf_count || g.area_size != h->area_size)
		return -1;
	fwrite(geo, 1, sizeof(geo), f);
	for (uint32_t c = 0; c < h->nr_cpus; c++) {
		const uint8_t *a = areas + c * h->area_size;
		uint32_t len = (uint32_t)h->area_size;
		uint8_t le[4];

		while (len && !a[len - 1])
			len--;
		for (int i = 0; i < 4; i++)
			le[i] = (uint8_t)(len >> (8 * i));
		fwrite(le, 1, 4, f);
		fwrite(a, 1, len, f);
	}
	return ferror(f) ? -1 : 0;
}

#endif
