// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decoding the XRay instrumentation map, from memory or from an ELF file. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "instr_map.h"
#include "../fdr/records.h"

enum {
	SLED_OFF_ADDRESS = 0,
	SLED_OFF_FUNCTION = 8,
	SLED_OFF_KIND = 16,
	SLED_OFF_ALWAYS = 17,
	SLED_OFF_VERSION = 18,
};
_Static_assert(SLED_OFF_VERSION < XRAY_SLED_ENTRY_SIZE,
	       "sled fields fit a 32-byte entry");

static int set_err(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

const char *xray_sled_kind_name(unsigned int kind)
{
	static const char *const names[XRAY_SLED_KIND_COUNT] = {
		[XRAY_SLED_ENTRY] = "function-enter",
		[XRAY_SLED_EXIT] = "function-exit",
		[XRAY_SLED_TAIL] = "tail-exit",
		[XRAY_SLED_LOG_ARGS_ENTRY] = "log-args-enter",
		[XRAY_SLED_CUSTOM_EVENT] = "custom-event",
		[XRAY_SLED_TYPED_EVENT] = "typed-event",
	};

	return kind < XRAY_SLED_KIND_COUNT ? names[kind] : "?";
}

void xray_instr_map_free(struct xray_instr_map *map)
{
	free(map->sleds);
	free(map->functions);
	memset(map, 0, sizeof(*map));
}

int32_t xray_instr_map_function_id(const struct xray_instr_map *map,
				   uint64_t address)
{
	for (size_t i = 0; i < map->nfunctions; i++)
		if (map->functions[i].address == address)
			return (int32_t)(i + 1);
	return 0;
}

/* An address field: a relocation's value if one applies (the field then
 * holds zero in the file), else relative to itself from version 2 on. */
static uint64_t field(uint64_t stored, uint8_t version, uint64_t at,
		      xray_reloc_fn reloc, void *ctx)
{
	uint64_t value;

	if (!stored && reloc && reloc(ctx, at, &value))
		return value;
	return version >= 2 ? stored + at : stored;
}

int xray_instr_map_decode(const void *data, size_t size, uint64_t section_addr,
			  xray_reloc_fn reloc, void *reloc_ctx,
			  struct xray_instr_map *map, char *err, size_t errlen)
{
	const uint8_t *p = data;
	size_t n = size / XRAY_SLED_ENTRY_SIZE;

	memset(map, 0, sizeof(*map));
	if (size % XRAY_SLED_ENTRY_SIZE)
		return set_err(
			err, errlen, -EBADMSG,
			"xray_instr_map is %zu bytes, not a multiple of the %d-byte sled entry",
			size, XRAY_SLED_ENTRY_SIZE);
	if (!n)
		return 0;
	map->sleds = calloc(n, sizeof(*map->sleds));
	/* at most one function per sled */
	map->functions = calloc(n, sizeof(*map->functions));
	if (!map->sleds || !map->functions) {
		xray_instr_map_free(map);
		return set_err(err, errlen, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++, p += XRAY_SLED_ENTRY_SIZE) {
		struct xray_sled *s = &map->sleds[i];
		uint64_t at = section_addr + i * XRAY_SLED_ENTRY_SIZE;

		s->address = get64(p + SLED_OFF_ADDRESS, false);
		s->function = get64(p + SLED_OFF_FUNCTION, false);
		s->kind = p[SLED_OFF_KIND];
		s->always_instrument = p[SLED_OFF_ALWAYS];
		s->version = p[SLED_OFF_VERSION];
		/* LLVM's versions are 0-2: from XRAY_GCC_SITE up they are
		 * ours, so that a map's version says where it came from */
		if (s->kind >= XRAY_SLED_KIND_COUNT ||
		    s->version >= XRAY_GCC_SITE) {
			bool kind = s->kind >= XRAY_SLED_KIND_COUNT;
			unsigned int value = kind ? s->kind : s->version;

			xray_instr_map_free(map);
			return set_err(
				err, errlen, -EBADMSG,
				"sled %zu (section offset %zu) has %s %u%s", i,
				i * XRAY_SLED_ENTRY_SIZE,
				kind ? "unknown kind" : "version", value,
				kind ? "" :
				       ", which marks GCC sites, not an XRay sled");
		}
		s->address = field(s->address, s->version,
				   at + SLED_OFF_ADDRESS, reloc, reloc_ctx);
		s->function = field(s->function, s->version,
				    at + SLED_OFF_FUNCTION, reloc, reloc_ctx);
		if (!map->nfunctions ||
		    map->functions[map->nfunctions - 1].address !=
			    s->function) {
			map->functions[map->nfunctions].address = s->function;
			map->functions[map->nfunctions].first_sled =
				(uint32_t)i;
			map->nfunctions++;
		}
		map->functions[map->nfunctions - 1].nsleds++;
	}
	map->nsleds = n;
	return 0;
}

/*
 * ELF files.
 */
struct elf_relocs {
	size_t nrel, cap;
	struct {
		uint64_t at, value;
	} * rel;
};

static int by_address(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int add_reloc(struct elf_relocs *out, uint64_t at, uint64_t value)
{
	if (out->nrel == out->cap) {
		size_t cap = out->cap ? 2 * out->cap : 64;
		void *n = realloc(out->rel, cap * sizeof(*out->rel));

		if (!n)
			return -ENOMEM;
		out->rel = n;
		out->cap = cap;
	}
	out->rel[out->nrel].at = at;
	out->rel[out->nrel].value = value;
	out->nrel++;
	return 0;
}

/*
 * Collect what relocations say about the map's fields.  In executables and
 * shared objects, relative relocations at addresses in [lo, hi).  In a
 * relocatable object, the relocations of map section @shndx, whose offsets
 * count from @lo; a PC-relative one there means the field's target is
 * symbol + addend, which is what we want in the end anyway.
 */
static int collect_relocs(Elf *elf, bool relocatable, size_t shndx, uint64_t lo,
			  uint64_t hi, struct elf_relocs *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data, *symdata = NULL;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_entsize)
			continue;
		if (relocatable && sh.sh_info != shndx)
			continue;
		if (sh.sh_link) {
			Elf_Scn *sym = elf_getscn(elf, sh.sh_link);

			symdata = sym ? elf_getdata(sym, NULL) : NULL;
		}
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize;
		     i++) {
			uint64_t at, value;
			GElf_Sym sym;
			GElf_Rela r;
			int ret;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			at = relocatable ? lo + r.r_offset : r.r_offset;
			if (at < lo || at >= hi)
				continue;
			switch (GELF_R_TYPE(r.r_info)) {
			case R_X86_64_RELATIVE:
				value = (uint64_t)r.r_addend;
				break;
			case R_X86_64_64:
			case R_X86_64_PC64:
				if (!relocatable || !symdata ||
				    !gelf_getsym(symdata,
						 (int)GELF_R_SYM(r.r_info),
						 &sym))
					continue;
				value = sym.st_value + (uint64_t)r.r_addend;
				break;
			default:
				continue;
			}
			ret = add_reloc(out, at, value);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static bool lookup_reloc(void *ctx, uint64_t at, uint64_t *value)
{
	struct elf_relocs *r = ctx;
	size_t lo = 0, hi = r->nrel;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->rel[mid].at == at) {
			*value = r->rel[mid].value;
			return true;
		}
		if (r->rel[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int append(uint8_t **buf, size_t *len, const void *data, size_t size)
{
	uint8_t *n = realloc(*buf, *len + size + 1);

	if (!n)
		return -ENOMEM;
	if (size) /* an empty section's data is NULL */
		memcpy(n + *len, data, size);
	*buf = n;
	*len += size;
	return 0;
}

/*
 * GCC's sites: __mcount_loc lists the 5-byte nop at each function's entry
 * (-pg -mfentry -mnop-mcount -mrecord-mcount), __return_loc the one before
 * each return and before each sibling call's jmp (-minstrument-return=nop5
 * -mrecord-return), as 8-byte addresses (relative relocations in a PIE).
 * Functions are numbered by entry address from 1, so a file always gives
 * the same ids; a return site belongs to the function with the nearest
 * entry below it.
 */
static int read_sites(Elf *elf, Elf_Scn *scn, uint64_t **out, size_t *n)
{
	struct elf_relocs relocs = { 0 };
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Shdr sh;
	int ret;

	*out = NULL;
	*n = 0;
	if (!gelf_getshdr(scn, &sh) || !data || data->d_size != sh.sh_size ||
	    sh.sh_size % 8 || (sh.sh_size && !data->d_buf))
		return -EBADMSG;
	ret = collect_relocs(elf, false, elf_ndxscn(scn), sh.sh_addr,
			     sh.sh_addr + sh.sh_size, &relocs);
	if (ret)
		return ret;
	if (relocs.nrel)
		qsort(relocs.rel, relocs.nrel, sizeof(*relocs.rel), by_address);
	*n = sh.sh_size / 8;
	*out = calloc(*n ? *n : 1, sizeof(**out));
	if (!*out) {
		free(relocs.rel);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *n; i++) {
		uint64_t v = get64((const uint8_t *)data->d_buf + 8 * i, false);

		if (!v)
			lookup_reloc(&relocs, sh.sh_addr + 8 * i, &v);
		(*out)[i] = v;
	}
	free(relocs.rel);
	return 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v and drop duplicates and zeros (an unrelocated entry). */
static size_t sort_unique(uint64_t *v, size_t n)
{
	size_t k = 0;

	if (n > 1) /* no table is NULL, which qsort() must not see */
		qsort(v, n, sizeof(*v), by_u64);
	for (size_t i = 0; i < n; i++)
		if (v[i] && (!k || v[k - 1] != v[i]))
			v[k++] = v[i];
	return k;
}

int xray_instr_map_from_gcc(uint64_t *entries, size_t nentries,
			    uint64_t *returns, size_t nreturns,
			    struct xray_instr_map *map)
{
	size_t f = 0, r = 0, k = 0;

	memset(map, 0, sizeof(*map));
	nentries = sort_unique(entries, nentries);
	nreturns = sort_unique(returns, nreturns);
	/* returns below the first entry belong to no function */
	while (r < nreturns && nentries && returns[r] < entries[0])
		r++;
	if (!nentries)
		return 0;
	map->functions = calloc(nentries, sizeof(*map->functions));
	map->sleds = calloc(nentries + nreturns - r, sizeof(*map->sleds));
	if (!map->functions || !map->sleds) {
		xray_instr_map_free(map);
		return -ENOMEM;
	}
	for (f = 0; f < nentries; f++) {
		struct xray_function *fn = &map->functions[f];
		uint64_t next = f + 1 < nentries ? entries[f + 1] : UINT64_MAX;

		fn->address = entries[f];
		fn->first_sled = (uint32_t)k;
		map->sleds[k++] = (struct xray_sled){ entries[f], entries[f],
						      XRAY_SLED_ENTRY, 1,
						      XRAY_GCC_SITE };
		for (; r < nreturns && returns[r] < next; r++)
			if (returns[r] > entries[f])
				map->sleds[k++] = (struct xray_sled){
					returns[r], entries[f], XRAY_SLED_EXIT,
					1, XRAY_GCC_SITE
				};
		fn->nsleds = (uint32_t)(k - fn->first_sled);
	}
	map->nfunctions = nentries;
	map->nsleds = k;
	return 0;
}

Elf_Scn *xray_elf_section(Elf *elf, size_t shstrndx, const char *want)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

static int load_gcc_sites(Elf *elf, size_t shstrndx, bool relocatable,
			  const char *path, struct xray_instr_map *map,
			  char *err, size_t errlen)
{
	Elf_Scn *entry_scn, *return_scn;
	uint64_t *entries = NULL, *returns = NULL;
	size_t nentries = 0, nreturns = 0;
	int ret;

	entry_scn = xray_elf_section(elf, shstrndx, "__mcount_loc");
	return_scn = xray_elf_section(elf, shstrndx, "__return_loc");
	if (!entry_scn)
		return set_err(
			err, errlen, -ENOENT,
			"%s: no xray_instr_map section (was it built with -fxray-instrument?) and no __mcount_loc (or with gcc -pg -mfentry -mnop-mcount -mrecord-mcount?)",
			path);
	/* an object's sites are offsets into whichever text section each
	 * relocation names, several at the same offset: no map of ids */
	if (relocatable)
		return set_err(
			err, errlen, -EINVAL,
			"%s: a relocatable object's GCC sites have addresses only once linked; read the linked binary",
			path);
	ret = read_sites(elf, entry_scn, &entries, &nentries);
	if (!ret && return_scn)
		ret = read_sites(elf, return_scn, &returns, &nreturns);
	if (!ret)
		ret = xray_instr_map_from_gcc(entries, nentries, returns,
					      nreturns, map);
	free(entries);
	free(returns);
	if (ret == -EBADMSG)
		return set_err(err, errlen, ret,
			       "%s: __mcount_loc or __return_loc is malformed",
			       path);
	if (ret)
		return set_err(err, errlen, ret, "%s: %s", path,
			       strerror(-ret));
	return 0;
}

int xray_instr_map_load_elf(const char *path, struct xray_instr_map *map,
			    char *err, size_t errlen)
{
	struct elf_relocs relocs = { 0 };
	Elf_Scn *scn = NULL;
	uint8_t *bytes = NULL;
	size_t len = 0, nsections = 0, shstrndx;
	uint64_t base = 0;
	bool relocatable;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int fd, ret = 0;

	memset(map, 0, sizeof(*map));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return set_err(err, errlen, -EINVAL, "libelf is unusable");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return set_err(err, errlen, ret, "%s: %s", path,
			       strerror(-ret));
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    gelf_getclass(elf) != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		ret = set_err(err, errlen, -ENOEXEC,
			      "%s: not a 64-bit little-endian ELF file", path);
		goto out;
	}
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		ret = set_err(err, errlen, -EBADMSG, "%s: %s", path,
			      elf_errmsg(-1));
		goto out;
	}
	relocatable = eh.e_type == ET_REL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, "xray_instr_map"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || (sh.sh_size &&
			      (!data->d_buf || data->d_size != sh.sh_size))) {
			ret = set_err(
				err, errlen, -EBADMSG,
				"%s: cannot read section %zu (xray_instr_map)",
				path, elf_ndxscn(scn));
			goto out;
		}
		/* a linked binary has one map at its address; an object's
		 * pieces are laid end to end from 0 */
		if (!relocatable)
			base = sh.sh_addr;
		ret = collect_relocs(elf, relocatable, elf_ndxscn(scn), base,
				     base + sh.sh_size, &relocs);
		if (!ret)
			ret = append(&bytes, &len, data->d_buf, data->d_size);
		if (ret) {
			set_err(err, errlen, ret, "out of memory");
			goto out;
		}
		base += sh.sh_size;
		nsections++;
		if (!relocatable)
			break;
	}
	if (!nsections) {
		ret = load_gcc_sites(elf, shstrndx, relocatable, path, map, err,
				     errlen);
		goto out;
	}
	if (relocs.nrel) /* qsort() must not see the NULL of no relocations */
		qsort(relocs.rel, relocs.nrel, sizeof(*relocs.rel), by_address);
	ret = xray_instr_map_decode(bytes, len, relocatable ? 0 : base - len,
				    lookup_reloc, &relocs, map, err, errlen);
	if (ret && err && errlen) {
		char inner[256];

		snprintf(inner, sizeof(inner), "%s", err);
		snprintf(err, errlen, "%s: %s", path, inner);
	}
out:
	free(bytes);
	free(relocs.rel);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}
