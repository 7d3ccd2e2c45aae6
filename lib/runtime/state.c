// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The runtime's shared state and helpers (see state.h). */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <xrayfdr/xray.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "../util/decimal.h"
#include "state.h"
#include "thread.h"

struct rt_state rt;
struct rt_trace rt_live;

/* Read by the trampolines (thread.h, arch.h). */
uint64_t rt_fast_key;
uint64_t rt_event_max[2];
uint8_t rt_event_buffers;
void (*volatile rt_handler_arg0)(int32_t, XRayEntryType);
void (*volatile rt_handler_arg1)(int32_t, XRayEntryType, uint64_t);
void (*volatile rt_handler_custom)(void *, size_t);
void (*volatile rt_handler_typed)(uint16_t, const void *, size_t);

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

void rt_registry_lock(void)
{
	pthread_mutex_lock(&registry_lock);
}

void rt_registry_unlock(void)
{
	pthread_mutex_unlock(&registry_lock);
}

void rt_api_lock(void)
{
	pthread_mutex_lock(&api_lock);
}

void rt_api_unlock(void)
{
	pthread_mutex_unlock(&api_lock);
}

void rt_locks_fork_prepare(void)
{
	rt_registry_lock();
	rt_api_lock();
}

void rt_locks_fork_parent(void)
{
	rt_api_unlock();
	rt_registry_unlock();
}

#define MAX_INTERNAL 8
static uint32_t internal_tids[MAX_INTERNAL];

void rt_internal_thread_begin(void)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid);

	for (unsigned int i = 0; i < MAX_INTERNAL; i++) {
		uint32_t none = 0;

		if (__atomic_compare_exchange_n(&internal_tids[i], &none, tid,
						false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
	}
}

bool rt_internal_thread(uint32_t tid)
{
	for (unsigned int i = 0; tid && i < MAX_INTERNAL; i++)
		if (__atomic_load_n(&internal_tids[i], __ATOMIC_ACQUIRE) == tid)
			return true;
	return false;
}

void rt_locks_fork_child(void)
{
	pthread_mutex_init(&api_lock, NULL);
	pthread_mutex_init(&registry_lock, NULL);
	/* (the parent's threads are not the child's) */
	memset(internal_tids, 0, sizeof(internal_tids));
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static struct rt_options env_opts;
static char env_err[512];
static int env_result;

/* LLVM 17 and later: a program's built-in options, under XRAY_OPTIONS. */
const char *__xray_default_options(void) __attribute__((weak));

static int main_bias(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	*(uintptr_t *)ctx = info->dlpi_addr;
	return 1; /* the first is the program */
}

/* Are we a shared library (preloaded), rather than linked into the
 * program? */
static bool in_shared_library(void)
{
	uintptr_t bias = 0;
	Dl_info info;

	dl_iterate_phdr(main_bias, &bias);
	return dladdr((void *)in_shared_library, &info) &&
	       (uintptr_t)info.dli_fbase != bias;
}

/*
 * The program's __xray_default_options(): linked with us, a weak
 * reference finds it; preloaded, we do not see a PIE program's symbols
 * (it exports none), so its symbol table says where it is.
 */
static const char *(*find_default_options(void))(void)
{
	const char *(*fn)(void) = __xray_default_options;
	uintptr_t bias = 0, addr = 0;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int fd;

	if (fn || !in_shared_library())
		return fn; /* (linked in: the weak reference says it all) */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		goto out;
	while (!addr && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "__xray_default_options")) {
				addr = sym.st_value;
				break;
			}
		}
	}
	if (addr) {
		dl_iterate_phdr(main_bias, &bias);
		fn = (const char *(*)(void))(bias + addr);
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return fn;
}

static const char *(*default_options)(void);

static void find_default_options_once(void)
{
	default_options = find_default_options();
}

bool rt_program_has_options(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_default_options_once);
	return default_options != NULL;
}

static void parse_env(void)
{
	const char *text = rt_program_has_options() ? default_options() : NULL;

	rt_options_defaults(&env_opts);
	/* LLVM's order: the program's defaults, then the environment */
	if (text && *text)
		env_result = rt_options_parse(&env_opts, text, 0, RT_OPT_XRAY,
					      "__xray_default_options()",
					      env_err, sizeof(env_err));
	if (!env_result)
		env_result = rt_options_from_env(&env_opts, env_err,
						 sizeof(env_err));
}

void rt_note_exec_name(void)
{
	char name[16] = "";

	if (rt.exec_name[0] ||
	    prctl(PR_GET_NAME, (unsigned long)name, 0UL, 0UL, 0UL))
		return;
	name[15] = '\0';
	memcpy(rt.exec_name, name, sizeof(name));
}

int rt_env_options(struct rt_options *o, char *err, size_t errlen)
{
	pthread_once(&env_once, parse_env);
	if (env_result) {
		snprintf(err, errlen, "%s", env_err);
		return env_result;
	}
	*o = env_opts;
	return 0;
}

int rt_tsc_ensure(const struct rt_options *o)
{
	struct rt_tsc_paths paths = { .sysfs = o->tsc_sysfs,
				      .calibrated_hz = o->tsc_hz };
	int ret;

	if (rt.tsc_known && !strcmp(rt.tsc_sysfs, o->tsc_sysfs) &&
	    rt.tsc_sources == o->tsc_sources)
		return 0;
	ret = rt_tsc_probe(&paths, o->tsc_sources, &rt.tsc);
	if (ret)
		return ret;
	rt.tsc_known = true;
	snprintf(rt.tsc_sysfs, sizeof(rt.tsc_sysfs), "%s", o->tsc_sysfs);
	rt.tsc_sources = o->tsc_sources;
	return 1;
}

void rt_say(const char *const *parts, size_t n)
{
	struct iovec iov[RT_SAY_MAX];

	if (n > RT_SAY_MAX)
		n = RT_SAY_MAX;
	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = (void *)parts[i];
		iov[i].iov_len = strlen(parts[i]);
	}
	while (writev(STDERR_FILENO, iov, (int)n) < 0 && errno == EINTR)
		;
}

char *rt_utoa(uint64_t v, char *buf)
{
	return u64_decimal(v, buf);
}
