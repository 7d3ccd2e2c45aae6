// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The runtime's shared state and helpers (see state.h). */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../log.h"
#include "sink.h"
#include "state.h"
#include "thread.h"

struct rt_state rt = { .sink = &rt_thread_sink };

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

void rt_locks_fork_child(void)
{
	pthread_mutex_init(&api_lock, NULL);
	pthread_mutex_init(&registry_lock, NULL);
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static struct rt_options env_opts;
static char env_err[512];
static int env_result;

static void parse_env(void)
{
	rt_options_defaults(&env_opts);
	env_result = rt_options_from_env(&env_opts, env_err, sizeof(env_err));
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
	struct rt_tsc_paths paths = { .sysfs = o->tsc_sysfs };
	int ret;

	if (rt.tsc_known && !strcmp(rt.opts.tsc_sysfs, o->tsc_sysfs) &&
	    rt.opts.tsc_sources == o->tsc_sources)
		return 0;
	ret = rt_tsc_probe(&paths, o->tsc_sources, &rt.tsc);
	if (ret)
		return ret;
	rt.tsc_known = true;
	snprintf(rt.opts.tsc_sysfs, sizeof(rt.opts.tsc_sysfs), "%s",
		 o->tsc_sysfs);
	rt.opts.tsc_sources = o->tsc_sources;
	return 1;
}

void rt_say(const char *const *parts, size_t n)
{
	struct iovec iov[16];

	if (n > 16)
		n = 16;
	for (size_t i = 0; i < n; i++) {
		iov[i].iov_base = (void *)parts[i];
		iov[i].iov_len = strlen(parts[i]);
	}
	while (writev(STDERR_FILENO, iov, (int)n) < 0 && errno == EINTR)
		;
}

char *rt_utoa(uint64_t v, char *buf)
{
	char tmp[21];
	int n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return buf;
}

/* glibc 2.35 and later register an rseq area for every thread. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* Where the fast path reads the CPU and arms its critical sections. */
static void setup_rseq(void)
{
	if (&__rseq_size && __rseq_size) {
		rt_rseq_offset = (long)__rseq_offset;
		rt.own_rseq = false;
	} else {
		rt_rseq_offset = (long)((char *)&rt_self.rseq -
					(char *)__builtin_thread_pointer());
		rt.own_rseq = true;
		pr_info("libc registered no rseq area; registering our own\n");
	}
	rt.membarrier = !syscall(SYS_membarrier,
				 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
				 0, 0);
}

void rt_rseq_ensure(void)
{
	static bool rseq_known; /* (a forked child inherits it) */

	if (!rseq_known) {
		setup_rseq();
		rseq_known = true;
	}
}

void rt_tls_offsets(long *self, long *rseq)
{
	rt_rseq_ensure();
	*self = (long)((char *)&rt_self - (char *)__builtin_thread_pointer());
	*rseq = rt_rseq_offset;
}
