// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the reader of GCC's site tables: the input is an
 * ELF file, read by xray_instr_map_load_elf() (section headers and names,
 * __mcount_loc, __return_loc and the relocations over them; the file has
 * no xray_instr_map, or it is read as a clang map).  The same bytes, as
 * 8-byte addresses, are also given to xray_instr_map_from_gcc() directly.
 * Checks: a refusal names the file; a GCC map has functions in increasing
 * address order, each an entry sled at its address first and then exit
 * sleds strictly between it and the next function.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../lib/xray/instr_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_gcc_map(const struct xray_instr_map *map)
{
	size_t next = 0;

	for (size_t f = 0; f < map->nfunctions; f++) {
		const struct xray_function *fn = &map->functions[f];
		bool last = f + 1 == map->nfunctions;
		uint64_t end = last ? 0 : map->functions[f + 1].address;

		if (fn->first_sled != next || !fn->nsleds ||
		    (!last && fn->address >= end))
			abort();
		for (uint32_t i = 0; i < fn->nsleds; i++) {
			const struct xray_sled *s =
				&map->sleds[fn->first_sled + i];

			if (s->function != fn->address ||
			    s->version != XRAY_GCC_SITE)
				abort();
			if (i == 0 && (s->kind != XRAY_SLED_ENTRY ||
				       s->address != fn->address))
				abort();
			if (i > 0 &&
			    (s->kind != XRAY_SLED_EXIT ||
			     s->address <= fn->address ||
			     (!last && s->address >= end) ||
			     s->address <=
				     map->sleds[fn->first_sled + i - 1].address))
				abort();
		}
		next += fn->nsleds;
	}
	if (next != map->nsleds)
		abort();
}

static int memfd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_instr_map map;
	size_t n = size / 8, split;
	uint64_t *a;
	char err[512];

	if (memfd < 0) {
		memfd = memfd_create("fuzz-gcc-map", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) ||
	    (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		abort();
	if (!xray_instr_map_load_elf(path, &map, err, sizeof(err))) {
		if (map.nsleds && map.sleds[0].version == XRAY_GCC_SITE)
			check_gcc_map(&map);
		xray_instr_map_free(&map);
	} else if (strncmp(err, path, strlen(path))) {
		abort(); /* every refusal names the file */
	}

	/* the bytes as entry and return addresses, split by the first byte */
	a = malloc(n ? n * 8 : 1);
	if (!a)
		return 0;
	if (n)
		memcpy(a, data, n * 8);
	split = n ? data[0] % (n + 1) : 0;
	if (!xray_instr_map_from_gcc(a, split, a + split, n - split, &map)) {
		check_gcc_map(&map);
		xray_instr_map_free(&map);
	}
	free(a);
	return 0;
}
