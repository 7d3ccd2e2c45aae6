// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The runtime's shared state and helpers (see state.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sink.h"
#include "state.h"

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
