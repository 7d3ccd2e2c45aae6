// SPDX-License-Identifier: GPL-2.0-only
/* Decoding instrumentation maps: entry versions, grouping, relocations,
 * and the malformed cases. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "../../lib/fdr/records.h"
#include "../../lib/xray/instr_map.h"

static void put_entry(uint8_t *p, uint64_t address, uint64_t function,
		      uint8_t kind, uint8_t always, uint8_t version)
{
	memset(p, 0, XRAY_SLED_ENTRY_SIZE);
	put64(p, address, false);
	put64(p + 8, function, false);
	p[16] = kind;
	p[17] = always;
	p[18] = version;
}

static void test_absolute_entries_group_by_function(void **state)
{
	uint8_t sec[5 * 32];
	struct xray_instr_map map;
	char err[128];

	(void)state;
	put_entry(sec + 0, 0x1000, 0x1000, XRAY_SLED_ENTRY, 1, 0);
	put_entry(sec + 32, 0x1010, 0x1000, XRAY_SLED_EXIT, 1, 0);
	put_entry(sec + 64, 0x2000, 0x2000, XRAY_SLED_LOG_ARGS_ENTRY, 0, 1);
	put_entry(sec + 96, 0x2008, 0x2000, XRAY_SLED_TAIL, 0, 1);
	/* the same function again, not adjacent: a new id, as LLVM does */
	put_entry(sec + 128, 0x1020, 0x1000, XRAY_SLED_TYPED_EVENT, 0, 1);
	assert_int_equal(xray_instr_map_decode(sec, sizeof(sec), 0x5000, NULL,
					       NULL, &map, err, sizeof(err)),
			 0);
	assert_int_equal(map.nsleds, 5);
	assert_int_equal(map.nfunctions, 3);
	assert_int_equal(map.functions[0].address, 0x1000);
	assert_int_equal(map.functions[0].nsleds, 2);
	assert_int_equal(map.functions[1].address, 0x2000);
	assert_int_equal(map.functions[1].first_sled, 2);
	assert_int_equal(map.functions[2].first_sled, 4);
	assert_int_equal(map.sleds[3].kind, XRAY_SLED_TAIL);
	assert_int_equal(map.sleds[2].always_instrument, 0);
	assert_int_equal(xray_instr_map_function_id(&map, 0x2000), 2);
	assert_int_equal(xray_instr_map_function_id(&map, 0x1000), 1);
	assert_int_equal(xray_instr_map_function_id(&map, 0x3000), 0);
	xray_instr_map_free(&map);
}

/* Version 2: each field is relative to its own address. */
static void test_relative_entries(void **state)
{
	uint8_t sec[2 * 32];
	struct xray_instr_map map;
	uint64_t base = 0x28b68;

	(void)state;
	/* the first entry of a real PIE: fields -0x6e38 and -0x6e40 */
	put_entry(sec, (uint64_t)-0x6e38, (uint64_t)-0x6e40, XRAY_SLED_ENTRY, 1,
		  2);
	put_entry(sec + 32, (uint64_t)-0x6e4a, (uint64_t)-0x6e60,
		  XRAY_SLED_EXIT, 1, 2);
	assert_int_equal(xray_instr_map_decode(sec, sizeof(sec), base, NULL,
					       NULL, &map, NULL, 0),
			 0);
	assert_int_equal(map.sleds[0].address, base - 0x6e38);
	assert_int_equal(map.sleds[0].function, base + 8 - 0x6e40);
	assert_int_equal(map.sleds[1].address, base + 32 - 0x6e4a);
	assert_int_equal(map.sleds[1].function, base + 40 - 0x6e60);
	assert_int_equal(map.nfunctions, 1);
	xray_instr_map_free(&map);
}

static bool fake_reloc(void *ctx, uint64_t at, uint64_t *value)
{
	(void)ctx;
	if (at == 0x100 || at == 0x108) {
		*value = at == 0x100 ? 0x4444 :
				       0; /* a relocation to 0 counts */
		return true;
	}
	return false;
}

/* A zero field that a relocation covers takes the relocation's value. */
static void test_relocated_fields(void **state)
{
	uint8_t sec[32];
	struct xray_instr_map map;

	(void)state;
	put_entry(sec, 0, 0, XRAY_SLED_ENTRY, 1, 2);
	assert_int_equal(xray_instr_map_decode(sec, sizeof(sec), 0x100,
					       fake_reloc, NULL, &map, NULL, 0),
			 0);
	assert_int_equal(map.sleds[0].address, 0x4444);
	assert_int_equal(map.sleds[0].function, 0);
	xray_instr_map_free(&map);
}

static void test_malformed(void **state)
{
	uint8_t sec[64];
	struct xray_instr_map map;
	char err[128];

	(void)state;
	put_entry(sec, 1, 1, XRAY_SLED_ENTRY, 1, 2);
	put_entry(sec + 32, 1, 1, 6, 1, 2);
	assert_int_equal(xray_instr_map_decode(sec, 40, 0, NULL, NULL, &map,
					       err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(
		strstr(err, "not a multiple of the 32-byte sled entry"));
	assert_int_equal(xray_instr_map_decode(sec, 64, 0, NULL, NULL, &map,
					       err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err,
			    "sled 1 (section offset 32) has unknown kind 6");
	assert_null(map.sleds);
	/* version 128 marks GCC sites, never an XRay sled */
	put_entry(sec + 32, 1, 1, XRAY_SLED_EXIT, 1, XRAY_GCC_SITE);
	assert_int_equal(xray_instr_map_decode(sec, 64, 0, NULL, NULL, &map,
					       err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "has version 128, which marks GCC sites"));
	assert_int_equal(xray_instr_map_decode(sec, 0, 0, NULL, NULL, &map, err,
					       sizeof(err)),
			 0);
	assert_int_equal(map.nsleds, 0);
	assert_int_equal(xray_instr_map_load_elf("/nonexistent", &map, err,
						 sizeof(err)),
			 -ENOENT);
	assert_int_equal(xray_instr_map_load_elf("/proc/self/status", &map, err,
						 sizeof(err)),
			 -ENOEXEC);
	assert_string_equal(xray_sled_kind_name(XRAY_SLED_TYPED_EVENT),
			    "typed-event");
	assert_string_equal(xray_sled_kind_name(XRAY_SLED_TAIL), "tail-exit");
	assert_string_equal(xray_sled_kind_name(9), "?");
}

/* A real executable's map: its entries are PC-relative, it has no
 * relocations (which once reached qsort() as a NULL array). */
static void test_load_executable(void **state)
{
	static const char src[] =
		"__attribute__((noinline)) int f(int x) { return x + 1; }\n"
		"int main(int c, char **v) { (void)v; return f(c); }\n";
	char dir[] = "/tmp/xrayfdr-instr-map-XXXXXX", path[96], cmd[512];
	struct xray_instr_map map;
	char err[256];
	FILE *f;

	(void)state;
	if (system("command -v clang >/dev/null 2>&1"))
		skip_because("clang is not installed (make deps)");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.c", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "clang -O1 -fxray-instrument -fxray-instruction-threshold=1 "
		 "%s/t.c -o %s/t 2>/dev/null",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/t", dir);
	assert_int_equal(xray_instr_map_load_elf(path, &map, err, sizeof(err)),
			 0);
	assert_int_equal(map.nfunctions, 2);
	assert_int_equal(map.nsleds, 4);
	xray_instr_map_free(&map);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* GCC's sites: ids by entry address, returns to the entry below them. */
static void test_gcc_sites(void **state)
{
	uint64_t entries[] = { 0x3000, 0x1000, 0x2000, 0x1000 };
	uint64_t returns[] = { 0x2010, 0x0800, 0x1020, 0x1010, 0x3fff };
	struct xray_instr_map map;

	(void)state;
	assert_int_equal(xray_instr_map_from_gcc(entries, 4, returns, 5, &map),
			 0);
	assert_int_equal(map.nfunctions, 3);
	assert_int_equal(map.nsleds, 7); /* 0x800 belongs to none */
	assert_int_equal(xray_instr_map_function_id(&map, 0x2000), 2);
	assert_int_equal(map.functions[0].nsleds, 3);
	assert_int_equal(map.sleds[0].kind, XRAY_SLED_ENTRY);
	assert_int_equal(map.sleds[1].address, 0x1010);
	assert_int_equal(map.sleds[2].kind, XRAY_SLED_EXIT);
	assert_int_equal(map.sleds[6].address, 0x3fff);
	assert_int_equal(map.sleds[6].function, 0x3000);
	assert_int_equal(map.sleds[6].version, XRAY_GCC_SITE);
	xray_instr_map_free(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc_sites),
		cmocka_unit_test(test_absolute_entries_group_by_function),
		cmocka_unit_test(test_relative_entries),
		cmocka_unit_test(test_relocated_fields),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_load_executable),
	};

	return cmocka_run_group_tests_name("instr_map", tests, NULL, NULL);
}
