// SPDX-License-Identifier: GPL-2.0-only
/*
 * Symbolization with libdw, answering as llvm-symbolizer answers llvm-xray:
 * the name comes from the symbol table when one covers the address (LLVM
 * prefers it to DWARF for linkage names), else from the DWARF subprogram;
 * the position from the last line-table row at or before the address,
 * or, without one, the STT_FILE symbol before a local function's symbol.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "../output/outbuf.h"
#include "symbols.h"
#include "yaml_map.h"

struct symbol_cache {
	char *name;
	char *location;
};

/* An address range of a compilation unit (clang emits no .debug_aranges,
 * which libdw's own lookup needs). */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off cu;
};

/* A local function symbol and the source file its STT_FILE names. */
struct local_file {
	Dwarf_Addr addr;
	const char *file; /* in the ELF string table */
};

struct symbols {
	bool have_map;
	bool demangle;
	struct xray_instr_map map;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias; /* where libdwfl placed the file's addresses */
	Dwarf *dwarf;
	struct cu_range *ranges;
	size_t nranges;
	bool ranges_built;
	struct local_file *local_files;
	size_t nlocal_files;
	bool local_files_built;
	struct symbol_cache *cache; /* by function id, 1..nfunctions */
	char scratch[64];
	const char *(*trace_names)(void *ctx, int32_t id);
	void *trace_ctx;
	/* the shared objects of the trace, by object index (1..) */
	struct symbols *objects[SYMBOLS_OBJECTS];
};

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Does the file @path start a YAML document (a map llvm-xray extract
 * wrote)? */
static bool is_yaml(const char *path)
{
	char head[4096]; /* room for comment lines before "---" */
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(head, 1, sizeof(head), f) : 0;

	if (f)
		fclose(f);
	return yaml_map_looks_like(head, n);
}

struct symbols *symbols_open(const char *binary, bool demangle_names, char *err,
			     size_t errlen)
{
	struct symbols *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->demangle = demangle_names;
	if (!binary)
		return s;
	ret = xray_instr_map_load_elf(binary, &s->map, err, errlen);
	if (ret && is_yaml(binary)) {
		/* llvm-xray extract's output: ids and addresses, and
		 * (as llvm-xray has it) no names but addresses */
		ret = yaml_map_load(binary, &s->map, err, errlen);
		if (!ret) {
			s->have_map = true;
			s->cache = calloc(s->map.nfunctions + 1,
					  sizeof(*s->cache));
			if (s->cache)
				return s;
			snprintf(err, errlen, "out of memory");
			symbols_free(s);
			return NULL;
		}
	}
	if (ret) {
		free(s);
		return NULL;
	}
	s->have_map = true;
	s->cache = calloc(s->map.nfunctions + 1, sizeof(*s->cache));
	if (!s->cache) {
		snprintf(err, errlen, "out of memory");
		symbols_free(s);
		return NULL;
	}
	/* Without debug information or symbols names fall back to
	 * addresses, as llvm-xray's do: not an error. */
	s->dwfl = dwfl_begin(&offline_callbacks);
	if (s->dwfl) {
		s->mod = dwfl_report_offline(s->dwfl, binary, binary, -1);
		dwfl_report_end(s->dwfl, NULL, NULL);
		if (s->mod && !dwfl_module_getelf(s->mod, &s->bias))
			s->mod = NULL;
	}
	return s;
}

void symbols_free(struct symbols *s)
{
	if (!s)
		return;
	if (s->cache) {
		for (size_t i = 0; i <= s->map.nfunctions; i++) {
			free(s->cache[i].name);
			free(s->cache[i].location);
		}
		free(s->cache);
	}
	for (size_t i = 0; i < SYMBOLS_OBJECTS; i++)
		symbols_free(s->objects[i]);
	free(s->ranges);
	free(s->local_files);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->have_map)
		xray_instr_map_free(&s->map);
	free(s);
}

int symbols_add_object(struct symbols *s, unsigned int index, const char *path,
		       char *err, size_t errlen)
{
	struct symbols *o;

	if (!index || index >= SYMBOLS_OBJECTS) {
		snprintf(err, errlen, "%s: object index %u out of range", path,
			 index);
		return -EINVAL;
	}
	o = symbols_open(path, s->demangle, err, errlen);
	if (!o)
		return -ENOENT;
	symbols_free(s->objects[index]);
	s->objects[index] = o;
	return 0;
}

/* The object an id of a shared object names, with the id within it. */
static struct symbols *object_of(struct symbols *s, int32_t *id)
{
	uint32_t index = (uint32_t)*id >> SYMBOLS_OBJECT_SHIFT;

	if (!index || index >= SYMBOLS_OBJECTS || !s->objects[index])
		return NULL;
	*id = (int32_t)((uint32_t)*id & ((1u << SYMBOLS_OBJECT_SHIFT) - 1));
	return s->objects[index];
}

const struct xray_instr_map *symbols_map(const struct symbols *s)
{
	return s->have_map ? &s->map : NULL;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void build_ranges(struct symbols *s)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	size_t cap = 0;

	s->ranges_built = true;
	s->dwarf = dwfl_module_getdwarf(s->mod, &(Dwarf_Addr){ 0 });
	if (!s->dwarf)
		return;
	while (!dwarf_get_units(s->dwarf, cu, &cu, NULL, NULL, &cudie, NULL)) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (s->nranges == cap) {
				struct cu_range *n;

				cap = cap ? 2 * cap : 64;
				n = realloc(s->ranges, cap * sizeof(*n));
				if (!n)
					return;
				s->ranges = n;
			}
			s->ranges[s->nranges++] = (struct cu_range){
				.lo = lo,
				.hi = hi,
				.cu = dwarf_dieoffset(&cudie)
			};
		}
	}
	qsort(s->ranges, s->nranges, sizeof(*s->ranges), cmp_range);
}

/* The compilation unit holding the file address @addr. */
static bool find_cu(struct symbols *s, uint64_t addr, Dwarf_Die *cudie)
{
	size_t lo = 0, hi;

	if (!s->mod)
		return false;
	if (!s->ranges_built)
		build_ranges(s);
	hi = s->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest or overlap: look back for one that holds addr */
	while (lo--) {
		if (addr < s->ranges[lo].hi)
			return dwarf_offdie(s->dwarf, s->ranges[lo].cu,
					    cudie) != NULL;
	}
	return false;
}

static bool known_id(const struct symbols *s, int32_t id)
{
	return s->have_map && id >= 1 && (size_t)id <= s->map.nfunctions;
}

static char *maybe_demangle(const struct symbols *s, const char *name)
{
	char *d = s->demangle ? demangle(name) : NULL;

	return d ? d : strdup(name);
}

/* The DWARF name of the innermost function scope at @addr. */
static const char *dwarf_function_name(Dwarf_Die *cudie, Dwarf_Addr addr)
{
	Dwarf_Die *scopes = NULL;
	const char *name = NULL;
	int n = dwarf_getscopes(cudie, addr, &scopes);

	for (int i = 0; i < n && !name; i++) {
		Dwarf_Attribute attr;
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_subprogram &&
		    tag != DW_TAG_inlined_subroutine)
			continue;
		if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name,
					 &attr) ||
		    dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name,
					 &attr) ||
		    dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr))
			name = dwarf_formstring(&attr);
	}
	free(scopes);
	return name;
}

static char *lookup_name(struct symbols *s, uint64_t addr)
{
	const char *name = NULL;
	GElf_Off off;
	GElf_Sym sym;
	Dwarf_Die cu;
	char *out;

	if (s->mod) {
		name = dwfl_module_addrinfo(s->mod, addr + s->bias, &off, &sym,
					    NULL, NULL, NULL);
		if (!name && find_cu(s, addr, &cu))
			name = dwarf_function_name(&cu, addr);
	}
	if (name && *name)
		return maybe_demangle(s, name);
	if (asprintf(&out, "@(%" PRIx64 ")", addr) < 0)
		return NULL;
	return out;
}

void symbols_use_trace_names(struct symbols *s,
			     const char *(*fn)(void *ctx, int32_t id),
			     void *ctx)
{
	s->trace_names = fn;
	s->trace_ctx = ctx;
}

/* "#<id>" in @buf: snprintf() cost hundreds of instructions per call. */
static const char *id_name(char *buf, size_t size, int32_t id)
{
	uint32_t v = id < 0 ? 0u - (uint32_t)id : (uint32_t)id;
	char *p = buf + size;

	*--p = 0;
	p = decimal_before(p, v);
	if (id < 0)
		*--p = '-';
	*--p = '#';
	return p;
}

const char *symbols_name(struct symbols *s, int32_t id)
{
	struct symbol_cache *c;
	int32_t fn = id;
	struct symbols *o = id > 0 ? object_of(s, &fn) : NULL;

	if (o && known_id(o, fn))
		return symbols_name(o, fn);

	if (!known_id(s, id)) {
		const char *name = s->trace_names ?
					   s->trace_names(s->trace_ctx, id) :
					   NULL;

		if (name)
			return name;
		return id_name(s->scratch, sizeof(s->scratch), id);
	}
	c = &s->cache[id];
	if (!c->name)
		c->name = lookup_name(s, s->map.functions[id - 1].address);
	return c->name ? c->name : "?";
}

/* The last row of the line table at or before @addr (libdw sorts rows by
 * address, keeping their order where addresses are equal; LLVM takes the
 * last of those too). */
static bool line_at(Dwarf_Die *cu, Dwarf_Addr addr, const char **file,
		    int *line, int *col)
{
	Dwarf_Lines *lines;
	Dwarf_Line *l;
	size_t n, lo = 0, hi;
	Dwarf_Addr a;
	bool end;

	if (dwarf_getsrclines(cu, &lines, &n) || !n)
		return false;
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		l = dwarf_onesrcline(lines, mid);
		if (!l || dwarf_lineaddr(l, &a))
			return false;
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	l = dwarf_onesrcline(lines, lo - 1);
	if (!l || dwarf_lineendsequence(l, &end) || end)
		return false;
	*file = dwarf_linesrc(l, NULL, NULL);
	dwarf_lineno(l, line);
	dwarf_linecol(l, col);
	return *file != NULL;
}

static int cmp_local_file(const void *a, const void *b)
{
	const struct local_file *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The symbol table keeps each file's local symbols after its STT_FILE
 * symbol; llvm-symbolizer names that file where DWARF says nothing. */
static void build_local_files(struct symbols *s)
{
	int n = s->mod ? dwfl_module_getsymtab(s->mod) : -1;
	const char *file = NULL;
	size_t cap = 0;

	s->local_files_built = true;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(
			s->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name)
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE) {
			file = *name ? name : NULL;
			continue;
		}
		if (GELF_ST_BIND(sym.st_info) != STB_LOCAL ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !file)
			continue;
		if (s->nlocal_files == cap) {
			struct local_file *l;

			cap = cap ? 2 * cap : 64;
			l = realloc(s->local_files, cap * sizeof(*l));
			if (!l)
				break;
			s->local_files = l;
		}
		s->local_files[s->nlocal_files++] =
			(struct local_file){ .addr = addr - s->bias,
					     .file = file };
	}
	if (s->nlocal_files) /* (none for a YAML map: local_files is NULL) */
		qsort(s->local_files, s->nlocal_files, sizeof(*s->local_files),
		      cmp_local_file);
}

static const char *local_symbol_file(struct symbols *s, uint64_t addr)
{
	struct local_file key = { .addr = addr }, *hit;

	if (!s->local_files_built)
		build_local_files(s);
	if (!s->nlocal_files)
		return NULL;
	hit = bsearch(&key, s->local_files, s->nlocal_files,
		      sizeof(*s->local_files), cmp_local_file);
	return hit ? hit->file : NULL;
}

static char *lookup_location(struct symbols *s, uint64_t addr)
{
	const char *file = NULL, *base;
	int line = 0, col = 0;
	Dwarf_Die cu;
	char *out;

	if (!find_cu(s, addr, &cu) || !line_at(&cu, addr, &file, &line, &col)) {
		file = local_symbol_file(s, addr);
		line = col = 0;
		if (!file)
			return strdup("<invalid>:0:0");
	}
	base = strrchr(file, '/');
	if (asprintf(&out, "%s:%d:%d", base ? base + 1 : file, line, col) < 0)
		return NULL;
	return out;
}

const char *symbols_location(struct symbols *s, int32_t id)
{
	struct symbol_cache *c;
	int32_t fn = id;
	struct symbols *o = id > 0 ? object_of(s, &fn) : NULL;

	if (o)
		return symbols_location(o, fn);

	if (!known_id(s, id))
		return "(unknown)";
	c = &s->cache[id];
	if (!c->location)
		c->location =
			lookup_location(s, s->map.functions[id - 1].address);
	return c->location ? c->location : "(unknown)";
}
