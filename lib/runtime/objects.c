// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Instrumented objects: finding their sleds, numbering their functions,
 * and patching them.
 *
 * Every loaded object (dl_iterate_phdr) whose file has an xray_instr_map
 * section is one: its section header gives the map's address, and the map
 * is decoded from memory, where the loader has already relocated it.  The
 * main program is object 0 with function ids 1..n, exactly as llvm-xray
 * extract numbers them; instrumented shared objects follow in load order,
 * object k having ids (k << 24) | n, which is how LLVM packs the ids of
 * shared objects too (and what fits the 28 bits of an FDR record).
 *
 * Trampolines must be within a 32-bit displacement of the sleds.  The fast
 * paths (thread mode's and CPU mode's) are copied into a free gap near the
 * object (arch_fast_copy()), with the C paths behind them in the library.
 * Where no copy can be made and the library is mapped farther away (a
 * shared libxrayfdr and a PIE program), a page of jump stubs is mapped
 * into a free gap near the object.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../filter/filter.h"
#include "../log.h"
#include "controller.h"
#include "objects.h"
#include "sink.h"
#include "state.h"
#include "trigger.h"

#define MAX_OBJECTS 16 /* object k's ids carry k in bits 24-27 */
#define OBJECT_SHIFT 24
#define FUNCTION_MASK ((1u << OBJECT_SHIFT) - 1)
#define NKINDS (XRAY_SLED_LOG_ARGS_ENTRY + 1) /* function sled kinds */
#define MAX_STUB_PAGES 16
#define LOWEST_MAP 0x10000ul /* below is vm.mmap_min_addr's */

struct rt_object {
	char *path;
	uintptr_t bias;
	struct xray_instr_map map;
	uintptr_t lo, hi; /* lowest and highest sled address */
	uintptr_t target[NKINDS]; /* trampoline or stub per sled kind */
	bool targets_ready;
	/* the functions a duration trigger names call these (trigger.h) */
	uintptr_t trig_target[NKINDS];
	bool trig_selected, trig_any;
	/* GCC's sites (no xray_instr_map): a stub per function and sled
	 * kind (entry, exit) in a page near the code */
	bool gcc;
	uintptr_t gcc_stubs;
	size_t gcc_stubs_size;
	uint8_t *selected; /* XRAYFDR_FILTER's choice per function, or NULL */
	char build_id[2 * 40 + 1]; /* hex of its GNU build id, or "" */
	/* an unloaded object's path (path is NULL then): opened again, the
	 * same file (path and build id) takes its number back */
	char *retired;
};

static struct rt_object objects[MAX_OBJECTS];
static size_t nobjects;
static char objects_text[16384];
static uintptr_t stub_pages[MAX_STUB_PAGES];
static size_t nstub_pages;
static uintptr_t fast_copies[MAX_STUB_PAGES];
static size_t nfast_copies;
static int patching;
/* The last rt_patch_all() patched (every object loaded since is patched
 * as dlopen() returns it: dl.c) */
static bool patched_all;
/* Loaded objects without sleds, not to be read again while none has been
 * unloaded (the loader's count of unloads is plain_subs) */
#define MAX_PLAIN 128
static struct {
	uintptr_t bias;
	uint64_t hash;
} plain[MAX_PLAIN];
static size_t nplain;
static unsigned long long plain_subs;

static int32_t first_id(size_t index)
{
	return (int32_t)(index << OBJECT_SHIFT) + 1;
}

/* Address and size of the xray_instr_map section of @path. */
static int find_map_section(const char *path, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	size_t shstrndx;
	Elf *elf;
	int fd, ret = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		ret = -ENOEXEC;
		goto out;
	}
	scn = xray_elf_section(elf, shstrndx, "xray_instr_map");
	if (scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC)) {
		*addr = sh.sh_addr;
		*size = sh.sh_size;
		ret = 0;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

static bool known(const char *path, uintptr_t bias)
{
	for (size_t i = 0; i < nobjects; i++)
		if (objects[i].bias == bias && objects[i].path &&
		    !strcmp(objects[i].path, path))
			return true;
	return false;
}

static uint64_t path_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 0x100000001b3ull;
	return h;
}

/* Was the object at @bias read from @path and found without sleds? */
static bool known_plain(const char *path, uintptr_t bias)
{
	uint64_t h = path_hash(path);

	for (size_t i = 0; i < nplain; i++)
		if (plain[i].bias == bias && plain[i].hash == h)
			return true;
	return false;
}

static void note_plain(const char *path, uintptr_t bias)
{
	if (nplain < MAX_PLAIN) {
		plain[nplain].bias = bias;
		plain[nplain++].hash = path_hash(path);
	}
}

static bool in_load_segment(const struct dl_phdr_info *info, uint64_t addr,
			    uint64_t size)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && addr >= ph->p_vaddr &&
		    addr + size <= ph->p_vaddr + ph->p_memsz)
			return true;
	}
	return false;
}

/* The GNU build id of a loaded object, from its PT_NOTE segments in
 * memory, in hex into @out ("" if it has none). */
static void find_build_id(const struct dl_phdr_info *info, char *out,
			  size_t size)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p =
			(const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			const uint8_t *name = p + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    2 * nh->n_descsz < size) {
				for (size_t k = 0; k < nh->n_descsz; k++) {
					out[2 * k] = hex[desc[k] >> 4];
					out[2 * k + 1] = hex[desc[k] & 15];
				}
				out[2 * nh->n_descsz] = '\0';
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* The slot of an unloaded object that was the file at @path with
 * @build_id, or NULL. */
static struct rt_object *retired_slot(const char *path, const char *build_id)
{
	for (size_t i = 1; i < nobjects; i++)
		if (!objects[i].path && objects[i].retired &&
		    !strcmp(objects[i].retired, path) &&
		    !strcmp(objects[i].build_id, build_id))
			return &objects[i];
	return NULL;
}

/*
 * GCC's sites of the file at @path (xray_instr_map_from_gcc()), moved to
 * where the object is loaded; each must lie in a loaded segment.  Return
 * 0, or -ENOENT if it has none.
 */
static int load_gcc_map(const struct dl_phdr_info *info, const char *path,
			struct xray_instr_map *map)
{
	char err[512];

	if (xray_instr_map_load_elf(path, map, err, sizeof(err)))
		return -ENOENT;
	if (!map->nsleds || map->sleds[0].version != XRAY_GCC_SITE) {
		xray_instr_map_free(map);
		return -ENOENT;
	}
	for (size_t i = 0; i < map->nsleds; i++) {
		if (!in_load_segment(info, map->sleds[i].address, 5)) {
			pr_warn("%s: GCC site 0x%" PRIx64
				" is not in a loaded segment; not patching it\n",
				path, map->sleds[i].address);
			xray_instr_map_free(map);
			return -ENOENT;
		}
		map->sleds[i].address += info->dlpi_addr;
		map->sleds[i].function += info->dlpi_addr;
	}
	for (size_t i = 0; i < map->nfunctions; i++)
		map->functions[i].address += info->dlpi_addr;
	return 0;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	bool *first = ctx;
	bool main = *first;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	struct rt_object *o;
	uint64_t addr = 0, len = 0;
	char err[256], build_id[sizeof(objects[0].build_id)];
	bool reused = false;
	struct xray_instr_map gcc_map = { 0 };
	ssize_t n;
	int ret;

	(void)size;
	*first = false;
	if (main) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return 0;
		exe[n] = '\0';
		path = exe;
	}
	if (!path || !*path || known(path, info->dlpi_addr) ||
	    known_plain(path, info->dlpi_addr))
		return 0;
	if (find_map_section(path, &addr, &len) || !len) {
		if (load_gcc_map(info, path, &gcc_map)) {
			note_plain(path, info->dlpi_addr);
			return 0;
		}
	} else if (!in_load_segment(info, addr, len) ||
		   len % XRAY_SLED_ENTRY_SIZE) {
		pr_warn("%s: its xray_instr_map is not where its program headers say; not patching it\n",
			path);
		return 0;
	}
	find_build_id(info, build_id, sizeof(build_id));
	if (main) {
		o = &objects[0];
	} else if ((o = retired_slot(path, build_id))) {
		reused = true;
	} else if (nobjects >= MAX_OBJECTS) {
		pr_warn("%s: more than %d instrumented objects; not patching it\n",
			path, MAX_OBJECTS - 1);
		xray_instr_map_free(&gcc_map);
		return 0;
	} else {
		o = &objects[nobjects];
	}
	o->gcc = gcc_map.nsleds > 0;
	if (o->gcc) {
		o->map = gcc_map;
		ret = 0;
	} else {
		ret = xray_instr_map_decode(
			(const void *)(info->dlpi_addr + addr), len,
			info->dlpi_addr + addr, NULL, NULL, &o->map, err,
			sizeof(err));
	}
	if (ret) {
		pr_warn("%s: %s; not patching it\n", path, err);
		return 0;
	}
	if (!main && (o->map.nfunctions > FUNCTION_MASK ||
		      objects[0].map.nfunctions > FUNCTION_MASK)) {
		pr_warn("%s: more than %u functions in an object; not patching it\n",
			path, FUNCTION_MASK);
		xray_instr_map_free(&o->map);
		return 0;
	}
	o->path = strdup(path);
	o->bias = info->dlpi_addr;
	memcpy(o->build_id, build_id, sizeof(o->build_id));
	o->lo = UINTPTR_MAX;
	for (size_t i = 0; i < o->map.nsleds; i++) {
		if (o->map.sleds[i].address < o->lo)
			o->lo = o->map.sleds[i].address;
		if (o->map.sleds[i].address > o->hi)
			o->hi = o->map.sleds[i].address;
	}
	if (!main && !reused)
		nobjects++;
	pr_info("%s: %zu functions, %zu sleds, ids from %" PRId32 "\n", path,
		o->map.nfunctions, o->map.nsleds,
		first_id((size_t)(o - objects)));
	return 0;
}

static void build_text(void)
{
	size_t n = 0;

	objects_text[0] = '\0';
	for (size_t i = 0; i < nobjects; i++) {
		int k;

		if (!objects[i].path)
			continue;
		k = snprintf(objects_text + n, sizeof(objects_text) - n,
			     "object=%zu %" PRId32 " 0x%" PRIxPTR " %s\n%s%s%s",
			     i, first_id(i), objects[i].bias, objects[i].path,
			     objects[i].build_id[0] ? "build_id=" : "",
			     objects[i].build_id,
			     objects[i].build_id[0] ? "\n" : "");
		if (k < 0 || (size_t)k >= sizeof(objects_text) - n) {
			objects_text[n] = '\0';
			break;
		}
		n += (size_t)k;
	}
}

/* Which objects are still loaded: ctx, a bool per slot. */
static int mark_loaded(struct dl_phdr_info *info, size_t size, void *ctx)
{
	bool *loaded = ctx;

	/* an unload may free a plain object's address for another one */
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs) &&
	    info->dlpi_subs != plain_subs) {
		plain_subs = info->dlpi_subs;
		nplain = 0;
	}
	for (size_t i = 1; i < nobjects; i++)
		if (objects[i].path && objects[i].bias == info->dlpi_addr &&
		    info->dlpi_name &&
		    !strcmp(objects[i].path, info->dlpi_name))
			loaded[i] = true;
	return 0;
}

/*
 * Forget the shared objects dlclose() unloaded: their sleds are gone, and
 * no patch, unpatch or flush may touch them again.  Their numbers are
 * kept for them: the same file opened again gets the same ids.  Called, API lock held, before
 * anything that walks the objects' sleds.
 */
static void drop_unloaded_locked(void)
{
	bool loaded[MAX_OBJECTS] = { true }; /* slot 0: the program */

	dl_iterate_phdr(mark_loaded, loaded);
	for (size_t i = 1; i < nobjects; i++) {
		struct rt_object *o = &objects[i];

		if (!o->path || loaded[i])
			continue;
		char build_id[sizeof(o->build_id)];
		char *path = o->path;

		pr_info("%s: unloaded; ids from %" PRId32
			" kept for it, should it be opened again\n",
			o->path, first_id(i));
		xray_instr_map_free(&o->map);
		free(o->retired);
		free(o->selected);
		rt_trig_forget(i);
		memcpy(build_id, o->build_id, sizeof(build_id));
		memset(o, 0, sizeof(*o));
		o->retired = path;
		memcpy(o->build_id, build_id, sizeof(build_id));
	}
}

static int scan_locked(void)
{
	bool first = true;
	size_t sleds = 0;

	if (!nobjects)
		nobjects = 1; /* slot 0 is the main program's */
	drop_unloaded_locked();
	dl_iterate_phdr(add_object, &first);
	build_text();
	for (size_t i = 0; i < nobjects; i++)
		sleds += objects[i].map.nsleds;
	return sleds ? 0 : -ENOENT;
}

int rt_objects_scan(void)
{
	int ret;

	rt_api_lock();
	ret = scan_locked();
	rt_api_unlock();
	return ret;
}

const char *rt_objects_text(void)
{
	return objects_text;
}

/* /proc/self/maps, as [start, end) and protections. */
struct mapping {
	uintptr_t start, end;
	int prot;
};

static size_t read_maps(struct mapping **out)
{
	FILE *fp = fopen("/proc/self/maps", "re");
	struct mapping *m = NULL;
	size_t n = 0, cap = 0;
	char line[PATH_MAX + 128];

	*out = NULL;
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long start, end;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) != 3)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct mapping *nm = realloc(m, ncap * sizeof(*m));

			if (!nm)
				break;
			m = nm;
			cap = ncap;
		}
		m[n].start = start;
		m[n].end = end;
		m[n].prot = (perms[0] == 'r' ? PROT_READ : 0) |
			    (perms[1] == 'w' ? PROT_WRITE : 0) |
			    (perms[2] == 'x' ? PROT_EXEC : 0);
		n++;
	}
	fclose(fp);
	*out = m;
	return n;
}

static bool in_reach(uintptr_t target, uintptr_t lo, uintptr_t hi)
{
	int64_t a = (int64_t)target - (int64_t)(lo + ARCH_SLED_PATCH_SIZE);
	int64_t b = (int64_t)target - (int64_t)(hi + ARCH_SLED_PATCH_SIZE);

	return a >= -ARCH_REACH - 1 && a <= ARCH_REACH &&
	       b >= -ARCH_REACH - 1 && b <= ARCH_REACH;
}

/* Map @size bytes of read-write memory in a free gap within reach of [lo,
 * hi]; 0 if there is none. */
static uintptr_t map_near(uintptr_t lo, uintptr_t hi, size_t size)
{
	long page = (long)size;
	uintptr_t want_lo = hi > (uintptr_t)ARCH_REACH / 2 ?
				    hi - (uintptr_t)ARCH_REACH / 2 :
				    (uintptr_t)page;
	uintptr_t want_hi = lo + (uintptr_t)ARCH_REACH / 2;
	struct mapping *m;
	size_t n = read_maps(&m);
	uintptr_t found = 0;

	/* the last free page below the object, else the first above it
	 * (above a program is where its brk heap grows) */
	want_lo = (want_lo + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
	want_hi &= ~(uintptr_t)(page - 1);
	for (size_t i = n; i-- > 0 && !found;) {
		uintptr_t gap = i ? m[i - 1].end : LOWEST_MAP;
		uintptr_t top = m[i].start < want_hi ? m[i].start : want_hi;

		if (m[i].start > lo || top < (uintptr_t)page)
			continue;
		top -= (uintptr_t)page;
		if (top >= gap && top >= want_lo)
			found = top;
	}
	for (size_t i = 0; i < n && !found; i++) {
		uintptr_t gap = m[i].end > want_lo ? m[i].end : want_lo;
		uintptr_t end = i + 1 < n ? m[i + 1].start : want_hi;

		if (m[i].end < hi)
			continue;
		if (gap + (uintptr_t)page <= end &&
		    gap + (uintptr_t)page <= want_hi)
			found = gap;
	}
	free(m);
	if (!found)
		return 0;
	void *p = mmap((void *)found, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1,
		       0);
	if (p == MAP_FAILED || (uintptr_t)p != found) {
		if (p != MAP_FAILED)
			munmap(p, size);
		return 0;
	}
	return found;
}

static const struct arch_tramps trig_fdr_tramps = {
	.entry = rt_trig_fdr_entry,
	.exit = rt_trig_fdr_exit,
	.tail = rt_trig_fdr_tail,
	.args = rt_trig_fdr_args,
};

static const struct arch_tramps trig_wrap_tramps = {
	.entry = rt_trig_entry,
	.exit = rt_trig_exit,
	.tail = rt_trig_tail,
	.args = rt_trig_args,
};

/* The duration triggers' trampolines for the trace's sink: in thread mode
 * the fast path times the call with its own record's TSC; otherwise a
 * wrapper in front of the sink's (trampolines.S). */
static const struct arch_tramps *trig_tramps_of(void)
{
	return rt_live.sink->tramps->entry == rt_tramp_entry ?
		       &trig_fdr_tramps :
		       &trig_wrap_tramps;
}

/* Map a page of stubs in a free gap within reach of [lo, hi]: the sink's
 * trampolines, then the triggers'. */
static uintptr_t map_stub_page(uintptr_t lo, uintptr_t hi)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t found = map_near(lo, hi, (size_t)page);
	void *p = (void *)found;

	if (!found)
		return 0;
	for (unsigned int k = 0; k < NKINDS; k++) {
		arch_write_stub((uint8_t *)p + k * ARCH_STUB_SIZE,
				arch_trampoline(k, rt_live.sink->tramps));
		arch_write_stub((uint8_t *)p + (NKINDS + k) * ARCH_STUB_SIZE,
				arch_trampoline(k, trig_tramps_of()));
	}
	if (mprotect(p, (size_t)page, PROT_READ | PROT_EXEC)) {
		pr_warn("cannot make a page of jump stubs executable: %s (a W^X policy?)\n",
			strerror(errno));
		munmap(p, (size_t)page);
		return 0;
	}
	return found;
}

/* A copy of the fast paths within reach of @o, or 0. */
static uintptr_t fast_copy_for(const struct rt_object *o)
{
	uintptr_t at;
	long self, rseq;
	int ret;

	for (size_t i = 0; i < nfast_copies; i++)
		if (in_reach(fast_copies[i], o->lo, o->hi) &&
		    in_reach(fast_copies[i] + ARCH_FAST_COPY_SIZE, o->lo,
			     o->hi))
			return fast_copies[i];
	if (nfast_copies == MAX_STUB_PAGES)
		return 0;
	at = map_near(o->lo, o->hi, ARCH_FAST_COPY_SIZE);
	if (!at)
		return 0;
	rt_tls_offsets(&self, &rseq);
	ret = arch_fast_copy((void *)at, self, rseq);
	if (ret) {
		pr_warn("cannot copy the fast path next to %s: %s; calling the library's\n",
			o->path, strerror(-ret));
		munmap((void *)at, ARCH_FAST_COPY_SIZE);
		return 0;
	}
	fast_copies[nfast_copies++] = at;
	return at;
}

static int ensure_targets_locked(struct rt_object *o);

/*
 * A GCC object's stubs: for function f (from 1), the entry's at
 * 2 * (f - 1) and the exit's after it, each loading the sled word and
 * jumping to the object's trampoline.
 */
static int ensure_gcc_stubs(struct rt_object *o)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = 2 * o->map.nfunctions * ARCH_STUB_SIZE;
	size_t index = (size_t)(o - objects);
	uintptr_t at;

	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	at = map_near(o->lo, o->hi, size);
	if (!at) {
		pr_warn("%s: no room for GCC stubs within 2 GiB of its code; not patching it\n",
			o->path);
		return -ENOMEM;
	}
	for (size_t f = 0; f < o->map.nfunctions; f++)
		for (unsigned int k = 0; k < 2; k++) {
			uintptr_t stub = at + (2 * f + k) * ARCH_STUB_SIZE;
			int32_t id = (int32_t)(index << OBJECT_SHIFT) +
				     (int32_t)(f + 1);
			uintptr_t target =
				rt_trig_marked(index, (uint32_t)f + 1) ?
					o->trig_target[k] :
					o->target[k];

			if (!in_reach(target, stub, stub)) {
				pr_warn("%s: its trampolines are out of reach of its GCC stubs; not patching it\n",
					o->path);
				munmap((void *)at, size);
				return -ERANGE;
			}
			arch_write_gcc_stub((void *)stub, arch_sled_word(k, id),
					    target);
		}
	if (mprotect((void *)at, size, PROT_READ | PROT_EXEC)) {
		pr_warn("cannot make GCC stubs executable: %s (a W^X policy?)\n",
			strerror(errno));
		munmap((void *)at, size);
		return -EACCES;
	}
	o->gcc_stubs = at;
	o->gcc_stubs_size = size;
	return 0;
}

/* A stub page in reach of @o, or a new one; 0 if there is no room. */
static uintptr_t stub_page_for(const struct rt_object *o)
{
	uintptr_t stubs;

	for (size_t i = 0; i < nstub_pages; i++)
		if (in_reach(stub_pages[i], o->lo, o->hi) &&
		    in_reach(stub_pages[i] + 2 * NKINDS * ARCH_STUB_SIZE, o->lo,
			     o->hi))
			return stub_pages[i];
	if (nstub_pages == MAX_STUB_PAGES)
		return 0;
	stubs = map_stub_page(o->lo, o->hi);
	if (stubs)
		stub_pages[nstub_pages++] = stubs;
	return stubs;
}

/* Which functions of @o duration triggers name, and the trampolines
 * their sleds call. */
static int ensure_trig_targets(struct rt_object *o)
{
	size_t index = (size_t)(o - objects);
	bool near = true;
	uintptr_t stubs = 0;
	int ret;

	for (unsigned int k = 0; k < 4; k++)
		rt_trig_next[k] = arch_trampoline(k, rt_live.sink->tramps);
	if (!o->trig_selected) {
		ret = rt_trig_durations() ?
			      rt_trig_select(index, o->path, o->bias, &o->map) :
			      0;
		if (ret < 0)
			return ret;
		o->trig_selected = true;
		o->trig_any = ret > 0;
	}
	if (!o->trig_any || o->trig_target[0])
		return 0;
	for (unsigned int k = 0; k < NKINDS; k++)
		near = near && in_reach(arch_trampoline(k, trig_tramps_of()),
					o->lo, o->hi);
	if (!near) {
		stubs = stub_page_for(o);
		if (!stubs) {
			pr_warn("%s: no room for jump stubs within 2 GiB of its code; its triggers are off\n",
				o->path);
			rt_trig_forget(index);
			o->trig_any = false;
			return 0;
		}
	}
	for (unsigned int k = 0; k < NKINDS; k++)
		o->trig_target[k] =
			near ? arch_trampoline(k, trig_tramps_of()) :
			       stubs + (NKINDS + k) * ARCH_STUB_SIZE;
	return 0;
}

static int ensure_targets(struct rt_object *o)
{
	int ret = ensure_targets_locked(o);

	if (!ret)
		ret = ensure_trig_targets(o);
	if (!ret && o->gcc && !o->gcc_stubs)
		ret = ensure_gcc_stubs(o);
	return ret;
}

static int ensure_targets_locked(struct rt_object *o)
{
	uintptr_t stubs = 0, copy;
	bool near = true;

	if (o->targets_ready)
		return 0;
	copy = fast_copy_for(o);
	if (copy) {
		for (unsigned int k = 0; k < NKINDS; k++)
			o->target[k] = arch_fast_copy_entry(
				(void *)copy, k, rt_live.sink->tramps);
		o->targets_ready = true;
		return 0;
	}
	for (unsigned int k = 0; k < NKINDS; k++)
		near = near &&
		       in_reach(arch_trampoline(k, rt_live.sink->tramps), o->lo,
				o->hi);
	if (!near) {
		stubs = stub_page_for(o);
		if (!stubs) {
			pr_warn("%s: no room for jump stubs within 2 GiB of its code; not patching it\n",
				o->path);
			return -ENOMEM;
		}
	}
	for (unsigned int k = 0; k < NKINDS; k++)
		o->target[k] = near ? arch_trampoline(k, rt_live.sink->tramps) :
				      stubs + k * ARCH_STUB_SIZE;
	o->targets_ready = true;
	return 0;
}

/* Make [lo, hi) writable (keeping it executable) or restore it. */
struct protect {
	struct mapping *saved;
	size_t n;
};

static int unprotect(uintptr_t lo, uintptr_t hi, struct protect *p)
{
	long page = sysconf(_SC_PAGESIZE);
	struct mapping *m;
	size_t n = read_maps(&m);

	p->saved = calloc(n ? n : 1, sizeof(*p->saved));
	p->n = 0;
	if (!p->saved) {
		free(m);
		return -ENOMEM;
	}
	lo &= ~(uintptr_t)(page - 1);
	for (size_t i = 0; i < n; i++) {
		uintptr_t s = m[i].start > lo ? m[i].start : lo;
		uintptr_t e = m[i].end < hi ? m[i].end : hi;

		if (s >= e)
			continue;
		e = (e + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
		if (mprotect((void *)s, e - s,
			     PROT_READ | PROT_WRITE | PROT_EXEC)) {
			int err = errno;

			pr_warn("cannot make the code at 0x%" PRIxPTR
				" writable: %s%s\n",
				s, strerror(err),
				err == EACCES ?
					" (a W^X policy such as SELinux execmod or PaX MPROTECT forbids patching)" :
					"");
			free(m);
			return -err;
		}
		p->saved[p->n++] = (struct mapping){ s, e, m[i].prot };
	}
	free(m);
	return 0;
}

static void reprotect(struct protect *p)
{
	for (size_t i = 0; i < p->n; i++)
		mprotect((void *)p->saved[i].start,
			 p->saved[i].end - p->saved[i].start, p->saved[i].prot);
	free(p->saved);
	p->saved = NULL;
}

/*
 * Patch or unpatch GCC function @f of @o: all its sites or none (a site
 * that cannot be patched atomically leaves the function untraced, with a
 * warning, so no count is ever half a function's).
 */
static int patch_gcc_function(struct rt_object *o, uint32_t f, bool enable)
{
	const struct xray_function *fn = &o->map.functions[f - 1];
	char err[256];
	int ret = 0;

	for (uint32_t i = 0; enable && i < fn->nsleds; i++) {
		uint64_t a = o->map.sleds[fn->first_sled + i].address;

		if (!arch_gcc_site_patchable(a)) {
			pr_warn("%s: function at 0x%" PRIx64
				" has a site at 0x%" PRIx64
				" across a 16-byte boundary; not tracing it\n",
				o->path, fn->address, a);
			return 0;
		}
	}
	/* entry last on the way in, first on the way out: no exit is
	 * recorded without its entry having been patched */
	for (uint32_t n = 0; n < fn->nsleds; n++) {
		uint32_t i = enable ? fn->nsleds - 1 - n : n;
		const struct xray_sled *s = &o->map.sleds[fn->first_sled + i];
		uintptr_t stub = o->gcc_stubs +
				 (2 * (f - 1) + (s->kind != XRAY_SLED_ENTRY)) *
					 ARCH_STUB_SIZE;
		int r = arch_patch_gcc_site(s->address, stub, enable, err,
					    sizeof(err));

		if (r && !ret) {
			pr_warn("%s: %s\n", o->path, err);
			ret = r;
		}
	}
	return ret;
}

/* Patch or unpatch the sleds of functions [from, to) (1-based) of @o. */
static int patch_functions(size_t index, uint32_t from, uint32_t to,
			   bool enable)
{
	struct rt_object *o = &objects[index];
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	struct protect prot;
	char err[256];
	int ret = 0;

	if (enable && ensure_targets(o))
		return -ENOMEM;
	for (uint32_t f = from; f < to; f++) {
		const struct xray_function *fn = &o->map.functions[f - 1];

		for (uint32_t i = 0; i < fn->nsleds; i++) {
			uintptr_t a = o->map.sleds[fn->first_sled + i].address;

			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
	}
	if (lo > hi)
		return 0;
	ret = unprotect(lo, hi + ARCH_SLED_PATCH_SIZE, &prot);
	if (ret) {
		reprotect(&prot);
		return ret;
	}
	for (uint32_t f = from; f < to; f++) {
		const struct xray_function *fn = &o->map.functions[f - 1];
		int32_t id = (int32_t)(index << OBJECT_SHIFT) + (int32_t)f;

		if (o->gcc) {
			int r = patch_gcc_function(o, f, enable);

			if (r && !ret)
				ret = r;
			continue;
		}

		for (uint32_t i = 0; i < fn->nsleds; i++) {
			const struct xray_sled *s =
				&o->map.sleds[fn->first_sled + i];
			uintptr_t target = s->kind >= NKINDS ?
						   0 :
					   rt_trig_marked(index, f) ?
						   o->trig_target[s->kind] :
						   o->target[s->kind];
			int r = arch_patch_sled(s, id, target, enable, err,
						sizeof(err));

			if (r && !ret) {
				pr_warn("%s: %s\n", o->path, err);
				ret = r;
			}
		}
	}
	reprotect(&prot);
	return ret;
}

static bool begin_patching(void)
{
	return !__atomic_exchange_n(&patching, 1, __ATOMIC_ACQUIRE);
}

static void end_patching(void)
{
	__atomic_store_n(&patching, 0, __ATOMIC_RELEASE);
}

/* The runtime's filter: XRAYFDR_FILTER's rules (NULL: none) */
static struct fn_filter *filter;

/*
 * Read XRAYFDR_FILTER once.  Return 0 (there may be no rules), or
 * -EINVAL with the rule and the reason in @err, or -ENOMEM.
 */
static bool filter_loaded;
static int filter_result;

static int load_filter(char *err, size_t errlen)
{
	const char *spec = getenv("XRAYFDR_FILTER");

	if (filter_loaded)
		return filter_result;
	filter_loaded = true;
	if (!spec)
		return 0;
	filter = fn_filter_new();
	filter_result = filter ? fn_filter_parse(filter, spec, strlen(spec),
						 err, errlen) :
				 -ENOMEM;
	return filter_result;
}

int rt_objects_set_filter(const char *spec, char *err, size_t errlen)
{
	struct fn_filter *f = NULL;
	int ret;

	if (spec && *spec) {
		f = fn_filter_new();
		if (!f)
			return -ENOMEM;
		ret = fn_filter_parse(f, spec, strlen(spec), err, errlen);
		if (ret) {
			fn_filter_free(f);
			return ret;
		}
	}
	rt_api_lock();
	fn_filter_free(filter);
	filter = f;
	filter_loaded = true;
	filter_result = 0;
	/* what the rules and triggers chose before is chosen again */
	for (size_t i = 0; i < nobjects; i++) {
		free(objects[i].selected);
		objects[i].selected = NULL;
		objects[i].trig_selected = false;
	}
	rt_api_unlock();
	return 0;
}

/*
 * Patch the functions of object @index that XRAYFDR_FILTER selects, in
 * runs (all of them when there is no filter); unpatch all of them.
 */
static int patch_selected(size_t index, bool enable)
{
	struct rt_object *o = &objects[index];
	uint32_t n = (uint32_t)o->map.nfunctions;
	int ret = 0;

	if (!enable || !filter || !fn_filter_active(filter))
		return patch_functions(index, 1, n + 1, enable);
	if (!o->selected) {
		ret = fn_filter_select(filter, o->path, o->bias, &o->map,
				       &o->selected);
		if (ret)
			return ret;
	}
	for (uint32_t f = 1; f <= n;) {
		uint32_t from;
		int r;

		while (f <= n && !o->selected[f - 1])
			f++;
		for (from = f; f <= n && o->selected[f - 1]; f++)
			;
		if (from == f)
			break;
		r = patch_functions(index, from, f, true);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

/*
 * Say once, loudly, when XRAYFDR_FILTER's "+" rules select none of the
 * functions of the objects loaded (a misspelt -F): the program would run
 * untraced and leave an empty log without a word otherwise.  (Lock held.)
 */
static void warn_selected_none(void)
{
	static bool warned;
	size_t nobj = 0;

	if (warned || !filter || !fn_filter_selects(filter))
		return;
	for (size_t i = 0; i < nobjects; i++) {
		const struct rt_object *o = &objects[i];

		if (!o->path)
			continue;
		nobj++;
		for (size_t f = 0; o->selected && f < o->map.nfunctions; f++)
			if (o->selected[f])
				return;
	}
	warned = true;
	pr_warn("warning: XRAYFDR_FILTER (-F) selects none of the instrumented functions of the %zu object%s loaded: nothing is traced unless a shared object loaded later has one it selects\n",
		nobj, nobj == 1 ? "" : "s");
}

int rt_patch_all(bool enable)
{
	int ret, first_err = 0;
	char err[256];

	if (!begin_patching())
		return -EBUSY;
	/* before the scan: a dlopen() that returns after it waits for this
	 * patch to end, then patches what it loaded (rt_objects_opened) */
	__atomic_store_n(&patched_all, enable, __ATOMIC_RELAXED);
	rt_api_lock();
	ret = scan_locked(); /* picks up objects loaded since */
	if (!ret && load_filter(err, sizeof(err))) {
		pr_warn("XRAYFDR_FILTER: %s; patching nothing\n", err);
		ret = -EINVAL;
	}
	for (size_t i = 0; !ret && i < nobjects; i++) {
		int r;

		if (!objects[i].path)
			continue; /* unloaded, or never loaded: no sleds */
		r = patch_selected(i, enable);

		if (r && !first_err)
			first_err = r;
	}
	if (ret)
		__atomic_store_n(&patched_all, false, __ATOMIC_RELAXED);
	else if (enable && !first_err)
		warn_selected_none();
	rt_api_unlock();
	end_patching();
	return ret ? ret : first_err;
}

int rt_objects_opened(void)
{
	bool empty[MAX_OBJECTS];
	int ret = 0;

	if (!__atomic_load_n(&patched_all, __ATOMIC_RELAXED))
		return 0; /* the next patch finds it */
	/* a patch or unpatch of everything that began before this object
	 * was loaded may not have seen it: wait for it to end */
	while (!begin_patching())
		sched_yield();
	rt_api_lock();
	/* the slots without an object now (a reopened one takes its own) */
	for (size_t i = 1; i < MAX_OBJECTS; i++)
		empty[i] = i >= nobjects || !objects[i].path;
	if (scan_locked() == -ENOENT || !patched_all)
		goto out;
	for (size_t i = 1; i < nobjects; i++) {
		int r = 0;

		if (!empty[i] || !objects[i].path)
			continue;
		if (load_filter(NULL, 0))
			r = -EINVAL;
		else
			r = patch_selected(i, true);
		if (r && !ret)
			ret = r;
	}
out:
	rt_api_unlock();
	end_patching();
	return ret;
}

void rt_objects_closed(void)
{
	rt_api_lock();
	drop_unloaded_locked();
	build_text();
	rt_api_unlock();
}

static struct rt_object *lookup(int32_t id, size_t *index, uint32_t *fn)
{
	uint32_t u = (uint32_t)id;

	if (id <= 0)
		return NULL;
	*index = nobjects > 1 ? u >> OBJECT_SHIFT : 0;
	*fn = nobjects > 1 ? u & FUNCTION_MASK : u;
	if (*index >= nobjects || !*fn || *fn > objects[*index].map.nfunctions)
		return NULL;
	return &objects[*index];
}

int rt_patch_function(int32_t id, bool enable)
{
	size_t index;
	uint32_t fn;
	int ret;

	if (!begin_patching())
		return -EBUSY;
	rt_api_lock();
	drop_unloaded_locked();
	if (!lookup(id, &index, &fn))
		ret = -EINVAL;
	else
		ret = patch_functions(index, fn, fn + 1, enable);
	rt_api_unlock();
	end_patching();
	return ret;
}

uintptr_t rt_function_address(int32_t id)
{
	struct rt_object *o;
	size_t index;
	uint32_t fn;
	uintptr_t addr = 0;

	rt_api_lock();
	o = lookup(id, &index, &fn);
	if (o)
		addr = o->map.functions[fn - 1].address;
	rt_api_unlock();
	return addr;
}

size_t rt_max_function_id(void)
{
	return objects[0].map.nfunctions;
}

size_t rt_num_objects(void)
{
	size_t n;

	rt_api_lock();
	drop_unloaded_locked();
	n = nobjects ? nobjects : 1;
	rt_api_unlock();
	return n;
}

size_t rt_max_function_id_in(int32_t index)
{
	size_t n = 0;

	rt_api_lock();
	drop_unloaded_locked();
	if (index >= 0 && (size_t)index < nobjects)
		n = objects[index].map.nfunctions;
	rt_api_unlock();
	return n;
}

int rt_patch_object(int32_t index, bool enable)
{
	int ret;

	if (!begin_patching())
		return -EBUSY;
	rt_api_lock();
	ret = scan_locked() == -ENOENT ? -ENOENT : 0;
	if (!ret &&
	    (index < 0 || (size_t)index >= nobjects || !objects[index].path))
		ret = -EINVAL;
	if (!ret && enable && load_filter(NULL, 0))
		ret = -EINVAL;
	if (!ret)
		ret = patch_selected((size_t)index, enable);
	rt_api_unlock();
	end_patching();
	return ret;
}

bool rt_objects_targets_fixed(void)
{
	if (nstub_pages)
		return true;
	for (size_t i = 0; i < nobjects; i++)
		if (objects[i].targets_ready)
			return true;
	return false;
}

int rt_object_describe(unsigned int index, struct xrayfdr_object_info *out)
{
	if (index >= nobjects || !objects[index].path)
		return -ENOENT;
	out->path = objects[index].path;
	out->load_bias = objects[index].bias;
	out->first_id = first_id(index);
	out->functions = (uint32_t)objects[index].map.nfunctions;
	out->sleds = (uint32_t)objects[index].map.nsleds;
	return 0;
}
