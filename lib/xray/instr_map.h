/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The XRay instrumentation map: the "xray_instr_map" section that
 * clang -fxray-instrument emits, one 32-byte entry per sled.
 *
 *   offset 0  u64 sled address      (version 2+: relative to this field)
 *   offset 8  u64 function address  (version 2+: relative to this field)
 *   offset 16 u8  kind              (enum xray_sled_kind)
 *   offset 17 u8  always-instrument
 *   offset 18 u8  entry version
 *   offset 19 13 bytes padding
 *
 * Function ids are assigned as llvm-xray and LLVM's runtime assign them:
 * walking the entries in order, a new id (from 1) starts whenever the
 * function address changes.  The runtime uses this for the main program
 * and for each shared object; the tools use it to read binaries.
 */
#ifndef XRAYFDR_LIB_XRAY_INSTR_MAP_H
#define XRAYFDR_LIB_XRAY_INSTR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XRAY_SLED_ENTRY_SIZE 32

enum xray_sled_kind {
	XRAY_SLED_ENTRY = 0,
	XRAY_SLED_EXIT = 1,
	XRAY_SLED_TAIL = 2,
	XRAY_SLED_LOG_ARGS_ENTRY = 3,
	XRAY_SLED_CUSTOM_EVENT = 4,
	XRAY_SLED_TYPED_EVENT = 5,
	XRAY_SLED_KIND_COUNT,
};

struct xray_sled {
	uint64_t address; /* where the sled is (see xray_instr_map_decode) */
	uint64_t function; /* the function it belongs to */
	uint8_t kind; /* enum xray_sled_kind */
	uint8_t always_instrument;
	uint8_t version;
};

struct xray_function {
	uint64_t address;
	uint32_t first_sled; /* index into sleds */
	uint32_t nsleds;
};

struct xray_instr_map {
	struct xray_sled *sleds;
	size_t nsleds;
	struct xray_function *functions; /* function id N is functions[N - 1] */
	size_t nfunctions;
};

/*
 * The final value of an entry field stored as zero in a file, at section
 * address @field_addr, if a relocation supplies one (relative relocations
 * in a PIE or shared object, PC-relative or absolute ones in a relocatable
 * object).  Return true and set *value, or false.
 */
typedef bool (*xray_reloc_fn)(void *ctx, uint64_t field_addr, uint64_t *value);

/*
 * Decode @size bytes of a xray_instr_map section that lives at
 * @section_addr: the file's virtual address when reading a binary, or the
 * section's address in memory inside a running process (where the loader
 * has applied any relocation already; pass @reloc NULL then).
 * Return 0, -ENOMEM, or -EBADMSG with a reason in @err.
 */
int xray_instr_map_decode(const void *data, size_t size, uint64_t section_addr,
			  xray_reloc_fn reloc, void *reloc_ctx,
			  struct xray_instr_map *map, char *err, size_t errlen);

/*
 * Read the map of an ELF file (executable, shared object or relocatable
 * object) with libelf.  A relocatable object holds one map section per
 * function group; they are read in order, and addresses are then offsets
 * within the sections the relocations name.  Return 0; -ENOENT if it has no xray_instr_map (a
 * binary not built with -fxray-instrument); -ENOEXEC if it is not a 64-bit
 * little-endian ELF file; -EBADMSG for a malformed map; or -errno.  @err
 * says which, in words.
 */
int xray_instr_map_load_elf(const char *path, struct xray_instr_map *map,
			    char *err, size_t errlen);

/*
 * The map of GCC's sites (xray_instr_map_load_elf() reads them from a
 * file without xray_instr_map): entry nops at @entries, return nops at
 * @returns (both sorted in place).  Functions are numbered by entry
 * address from 1; a return site belongs to the function with the nearest
 * entry below it.  Every sled has version XRAY_GCC_SITE.  Return 0 or
 * -ENOMEM.  xray_instr_map_decode() refuses sleds of this version or
 * higher (LLVM's are 0-2), so the version says which compiler a map's
 * sleds came from.
 */
#define XRAY_GCC_SITE 0x80
int xray_instr_map_from_gcc(uint64_t *entries, size_t nentries,
			    uint64_t *returns, size_t nreturns,
			    struct xray_instr_map *map);

void xray_instr_map_free(struct xray_instr_map *map);

/* The first section of @elf named @name (section names in @shstrndx), or
 * NULL. */
typedef struct Elf_Scn Elf_Scn;
typedef struct Elf Elf;
Elf_Scn *xray_elf_section(Elf *elf, size_t shstrndx, const char *name);

/* llvm-xray extract's names: "function-enter", "function-exit",
 * "tail-exit", "log-args-enter", "custom-event", and "typed-event". */
const char *xray_sled_kind_name(unsigned int kind);

/* The id of the function at @address, or 0 if there is none. */
int32_t xray_instr_map_function_id(const struct xray_instr_map *map,
				   uint64_t address);

#endif
