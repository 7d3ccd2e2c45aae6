// SPDX-License-Identifier: GPL-2.0-only
/*
 * Print a binary's XRay instrumentation map as `llvm-xray extract` prints
 * it (without symbolization), for the oracle tests.  Until `xrayfdr
 * extract` exists this is the thinnest way to put lib/xray/instr_map.c
 * next to llvm-xray.
 */
#include <inttypes.h>
#include <stdio.h>

#include "../../lib/xray/instr_map.h"

int main(int argc, char **argv)
{
	struct xray_instr_map map;
	char err[512];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s BINARY\n", argv[0]);
		return 2;
	}
	ret = xray_instr_map_load_elf(argv[1], &map, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("---\n");
	for (size_t f = 0; f < map.nfunctions; f++) {
		const struct xray_function *fn = &map.functions[f];

		for (uint32_t i = 0; i < fn->nsleds; i++) {
			const struct xray_sled *s =
				&map.sleds[fn->first_sled + i];

			printf("- { id: %zu, address: 0x%" PRIX64
			       ", function: 0x%" PRIX64
			       ", kind: %s, always-instrument: %s, function-name: '', version: %u }\n",
			       f + 1, s->address, s->function,
			       xray_sled_kind_name(s->kind),
			       s->always_instrument ? "true" : "false",
			       s->version);
		}
	}
	printf("...\n");
	xray_instr_map_free(&map);
	return 0;
}
