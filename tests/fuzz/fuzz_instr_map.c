// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the instrumentation-map decoder.  The first 8 bytes
 * of the input give the section address, the rest is the section.  Checks
 * that the function table always partitions the sleds: every sled belongs
 * to exactly one function, in order, with that function's address, and
 * neighbouring functions differ.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/xray/instr_map.h"

static bool odd_reloc(void *ctx, uint64_t at, uint64_t *value)
{
	(void)ctx;
	if (at % 3)
		return false;
	*value = at * 7;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_instr_map map;
	uint64_t addr = 0;
	char err[256];

	if (size < 8)
		return 0;
	memcpy(&addr, data, 8);
	for (int pass = 0; pass < 2; pass++) {
		size_t next = 0;

		if (xray_instr_map_decode(data + 8, size - 8, addr,
					  pass ? odd_reloc : NULL, NULL, &map,
					  err, sizeof(err)))
			continue;
		for (size_t f = 0; f < map.nfunctions; f++) {
			const struct xray_function *fn = &map.functions[f];

			if (fn->first_sled != next || !fn->nsleds)
				abort();
			if (f && map.functions[f - 1].address == fn->address)
				abort();
			for (uint32_t i = 0; i < fn->nsleds; i++)
				if (map.sleds[fn->first_sled + i].function !=
				    fn->address)
					abort();
			next += fn->nsleds;
		}
		if (next != map.nsleds ||
		    map.nsleds != (size - 8) / XRAY_SLED_ENTRY_SIZE)
			abort();
		xray_instr_map_free(&map);
	}
	return 0;
}
