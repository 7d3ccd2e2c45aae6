// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen() and dlclose() as the program calls them: an instrumented object
 * that dlopen() loads is patched before dlopen() returns (when the last
 * patch of everything patched), and one that dlclose() unloads leaves the
 * runtime's tables at once (objects.c).
 *
 * Only the shared library has these (a program links libxrayfdr.a
 * without them: it would take libc's place in a static program), under
 * both versions of glibc's dlopen, so that the loader binds programs'
 * versioned references to them (lib/libxrayfdr.map).
 *
 * glibc's dlopen() searches a name without a slash in the directories of
 * its caller's DT_RPATH or DT_RUNPATH, and expands $ORIGIN from its
 * caller's directory, finding the caller from its return address: here
 * that would be this library.  So a name without a slash is first looked
 * for as the loader would for the real caller (already loaded; the
 * caller's DT_RPATH; LD_LIBRARY_PATH and the caller's DT_RUNPATH), and
 * what is found there is opened by its path; the rest (the executable's
 * DT_RPATH, the cache, the default directories) is the same from here.
 */
#define LOG_DOMAIN "xrayfdr"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../log.h"
#include "objects.h"

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

/* glibc's @name (the next definition after ours), found once into
 * *@cache. */
static void *next_symbol(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
		if (!f)
			f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

static dlopen_fn next_dlopen(void)
{
	static void *fn;

	return (dlopen_fn)next_symbol(&fn, "dlopen");
}

static dlclose_fn next_dlclose(void)
{
	static void *fn;

	return (dlclose_fn)next_symbol(&fn, "dlclose");
}

/* The strings of @lm's DT_RPATH and DT_RUNPATH (NULL where it has none). */
static void search_paths(const struct link_map *lm, const char **rpath,
			 const char **runpath)
{
	uintptr_t strtab = 0;
	size_t rp = SIZE_MAX, rup = SIZE_MAX;

	*rpath = *runpath = NULL;
	for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = d->d_un.d_ptr;
		else if (d->d_tag == DT_RPATH)
			rp = d->d_un.d_val;
		else if (d->d_tag == DT_RUNPATH)
			rup = d->d_un.d_val;
	}
	if (!strtab)
		return;
	/* the loader relocates these in place, where .dynamic is writable */
	if (strtab < lm->l_addr)
		strtab += lm->l_addr;
	if (rp != SIZE_MAX)
		*rpath = (const char *)strtab + rp;
	if (rup != SIZE_MAX)
		*runpath = (const char *)strtab + rup;
}

/* The directory $ORIGIN stands for in @lm's paths, in @out. */
static bool origin_of(const struct link_map *lm, char *out, size_t size)
{
	char *slash;
	ssize_t n;

	if (lm->l_name && lm->l_name[0]) {
		if (lm->l_name[0] == '/') {
			if (strlen(lm->l_name) >= size)
				return false;
			strcpy(out, lm->l_name);
		} else {
			size_t len;

			if (!getcwd(out, size))
				return false;
			len = strlen(out);
			if (len + 1 + strlen(lm->l_name) >= size)
				return false;
			out[len] = '/';
			strcpy(out + len + 1, lm->l_name);
		}
	} else {
		n = readlink("/proc/self/exe", out, size - 1);
		if (n <= 0)
			return false;
		out[n] = '\0';
	}
	slash = strrchr(out, '/');
	if (!slash)
		return false;
	*(slash == out ? slash + 1 : slash) = '\0';
	return true;
}

/* Is @path a shared object this process can load (what the loader checks
 * before taking a file it found in a search path)? */
static bool loadable(const char *path)
{
	ElfW(Ehdr) eh;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
	     read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
	     !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	     eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	     eh.e_ident[EI_DATA] == ELFDATA2LSB && eh.e_machine == EM_X86_64 &&
	     eh.e_type == ET_DYN;
	close(fd);
	return ok;
}

/* @dir with $ORIGIN (or ${ORIGIN}) for @origin, in @out; false if it
 * has another substitution or does not fit. */
static bool expand_dir(const char *dir, size_t len, const char *origin,
		       char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len;) {
		const char *add = dir + i;
		size_t take = 1;

		if (dir[i] == '$') {
			if (!strncmp(dir + i, "$ORIGIN", 7))
				i += 7;
			else if (!strncmp(dir + i, "${ORIGIN}", 9))
				i += 9;
			else
				return false;
			if (!origin)
				return false;
			add = origin;
			take = strlen(origin);
		} else {
			i++;
		}
		if (n + take >= size)
			return false;
		memcpy(out + n, add, take);
		n += take;
	}
	/* an empty entry is the current directory, as for the loader */
	if (!n)
		out[n++] = '.';
	out[n] = '\0';
	return true;
}

/* The first loadable @file in the colon-separated @dirs (see expand_dir),
 * its path in @out. */
static bool find_in(const char *dirs, const char *origin, const char *file,
		    char *out, size_t size)
{
	while (dirs && *dirs) {
		const char *end = strchrnul(dirs, ':');

		if (expand_dir(dirs, (size_t)(end - dirs), origin, out, size) &&
		    strlen(out) + 1 + strlen(file) < size) {
			strcat(out, "/");
			strcat(out, file);
			if (loadable(out))
				return true;
		}
		dirs = *end ? end + 1 : end;
	}
	return false;
}

/* dlopen(@file, @mode) as its @caller would have had it. */
static void *open_as(const void *caller, const char *file, int mode)
{
	dlopen_fn real = next_dlopen();
	const struct link_map *lm = NULL;
	const char *rpath, *runpath;
	char origin[PATH_MAX], path[PATH_MAX];
	Dl_info info;
	bool found = false;
	void *h;

	if (!real)
		return NULL;
	if (!file || strchr(file, '/') || getauxval(AT_SECURE) ||
	    !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return real(file, mode);
	search_paths(lm, &rpath, &runpath);
	/* the executable's DT_RPATH is searched from here too */
	if (!runpath && (!rpath || !lm->l_name || !lm->l_name[0]))
		return real(file, mode);
	h = real(file, mode | RTLD_NOLOAD);
	if (h)
		return h;
	if (!origin_of(lm, origin, sizeof(origin)))
		origin[0] = '\0';
	if (!runpath)
		found = find_in(rpath, origin[0] ? origin : NULL, file, path,
				sizeof(path));
	else
		found = find_in(getenv("LD_LIBRARY_PATH"), NULL, file, path,
				sizeof(path)) ||
			find_in(runpath, origin[0] ? origin : NULL, file, path,
				sizeof(path));
	return real(found ? path : file, mode);
}

void *rt_dlopen(const char *file, int mode);
int rt_dlclose(void *handle);

/* Both versions glibc's dlopen and dlclose have (lib/libxrayfdr.map). */
__asm__(".symver rt_dlopen, dlopen@@GLIBC_2.34");
__asm__(".symver rt_dlopen, dlopen@GLIBC_2.2.5");
__asm__(".symver rt_dlclose, dlclose@@GLIBC_2.34");
__asm__(".symver rt_dlclose, dlclose@GLIBC_2.2.5");

__attribute__((visibility("default"))) void *rt_dlopen(const char *file,
						       int mode)
{
	void *h = open_as(__builtin_return_address(0), file, mode);
	int ret;

	if (h && !(mode & RTLD_NOLOAD)) {
		ret = rt_objects_opened();
		if (ret)
			pr_warn("%s: cannot patch what it loaded (error %d)\n",
				file ? file : "dlopen(NULL)", ret);
	}
	return h;
}

__attribute__((visibility("default"))) int rt_dlclose(void *handle)
{
	dlclose_fn real = next_dlclose();
	int ret = real ? real(handle) : -1;

	if (!ret)
		rt_objects_closed();
	return ret;
}
