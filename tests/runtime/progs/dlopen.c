// SPDX-License-Identifier: GPL-2.0-only
/*
 * Instrumented objects opened while tracing is on, by a program that
 * never calls the patch API: each must be patched before dlopen()
 * returns.  The objects are opened by name, found through the program's
 * DT_RUNPATH ($ORIGIN), which glibc takes from dlopen()'s caller.
 *
 *   dlopen local|global   libtraced.so: lib_outer 100 times
 *   dlopen chain          libchain.so, which needs libtraced.so:
 *                         chain_outer 100 times (each calls lib_outer)
 *   dlopen loop N         N times: open libtraced.so, lib_outer 10
 *                         times, close it, while a second thread calls
 *                         spin() until the loop ends (at most 200000
 *                         times: what the default buffers hold)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"

volatile long sink; /* the objects', exported (-rdynamic) */
static volatile int stop;
COUNTER(spin);

TRACED void spin(void)
{
	HIT(spin);
	sink++;
}

NOT_TRACED static void *spinner(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200000 && !__atomic_load_n(&stop, __ATOMIC_RELAXED);
	     i++)
		spin();
	return NULL;
}

NOT_TRACED static void *open_or_die(const char *name, int mode)
{
	void *h = dlopen(name, mode);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", name, dlerror());
		exit(1);
	}
	return h;
}

NOT_TRACED static void call(void *h, const char *fn, int times)
{
	void (*f)(int) = (void (*)(int))dlsym(h, fn);

	if (!f) {
		fprintf(stderr, "dlsym %s: %s\n", fn, dlerror());
		exit(1);
	}
	for (int i = 0; i < times; i++)
		f(i);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "local";
	pthread_t t;
	void *h;

	if (!strcmp(how, "local") || !strcmp(how, "global")) {
		h = open_or_die("libtraced.so",
				RTLD_NOW | (strcmp(how, "local") ? RTLD_GLOBAL :
								   RTLD_LOCAL));
		call(h, "lib_outer", 100);
		((void (*)(void))dlsym(h, "lib_print"))();
	} else if (!strcmp(how, "chain")) {
		h = open_or_die("libchain.so", RTLD_LAZY | RTLD_LOCAL);
		call(h, "chain_outer", 100);
		((void (*)(void))dlsym(h, "chain_print"))();
	} else if (!strcmp(how, "loop")) {
		int n = argc > 2 ? atoi(argv[2]) : 20;
		unsigned long outer = 0;

		if (pthread_create(&t, NULL, spinner, NULL))
			return 1;
		for (int i = 0; i < n; i++) {
			unsigned long *count;

			h = open_or_die("libtraced.so", RTLD_NOW | RTLD_LOCAL);
			call(h, "lib_outer", 10);
			count = (unsigned long *)dlsym(h, "n_lib_outer");
			outer += count ? *count : 0;
			dlclose(h);
		}
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(t, NULL);
		printf("count %ld lib_outer %lu\n", (long)getpid(), outer);
		PRINT(spin);
	} else {
		return 2;
	}
	return 0;
}
