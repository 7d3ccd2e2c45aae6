// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the instrumentation-map decoders.  The first 8 bytes
 * of the input give the section address, the rest is the section; the
 * whole input is also read as a YAML map (tools/analysis/input/yaml_map.c).
 * Checks that the function table always partitions the sleds: every sled
 * belongs to exactly one function, in order, with that function's
 * address, and (from a section) neighbouring functions differ; a rejected
 * YAML map names its line.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/xray/instr_map.h"
#include "../../tools/analysis/input/yaml_map.h"

static bool odd_reloc(void *ctx, uint64_t at, uint64_t *value)
{
	(void)ctx;
	if (at % 3)
		return false;
	*value = at * 7;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The function table partitions the sleds; @distinct: neighbouring
 * functions have different addresses.  Return the sleds covered. */
static size_t check_partition(const struct xray_instr_map *map, bool distinct)
{
	size_t next = 0;

	for (size_t f = 0; f < map->nfunctions; f++) {
		const struct xray_function *fn = &map->functions[f];

		if (fn->first_sled != next || !fn->nsleds)
			abort();
		if (distinct && f &&
		    map->functions[f - 1].address == fn->address)
			abort();
		for (uint32_t i = 0; i < fn->nsleds; i++)
			if (map->sleds[fn->first_sled + i].function !=
			    fn->address)
				abort();
		next += fn->nsleds;
	}
	if (next != map->nsleds)
		abort();
	return next;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_instr_map map;
	uint64_t addr = 0;
	char err[256];

	if (!yaml_map_parse((const char *)data, size, "FUZZ", &map, err,
			    sizeof(err))) {
		check_partition(&map, false);
		xray_instr_map_free(&map);
	} else if (strncmp(err, "FUZZ: line ", 11)) {
		abort(); /* every refusal names the line */
	}
	if (size < 8)
		return 0;
	memcpy(&addr, data, 8);
	for (int pass = 0; pass < 2; pass++) {
		if (xray_instr_map_decode(data + 8, size - 8, addr,
					  pass ? odd_reloc : NULL, NULL, &map,
					  err, sizeof(err)))
			continue;
		if (check_partition(&map, true) !=
		    (size - 8) / XRAY_SLED_ENTRY_SIZE)
			abort();
		xray_instr_map_free(&map);
	}
	return 0;
}
