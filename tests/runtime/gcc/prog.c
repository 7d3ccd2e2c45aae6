/* SPDX-License-Identifier: GPL-2.0-only */
/* A GCC-built program: plain calls, a sibling call, recursion, threads,
 * and (with -DWITH_LIB) calls into a shared object. */
#include <pthread.h>
#include <stdio.h>

/* each function counts its own calls; main prints the counts */
#define HIT(name) __atomic_add_fetch(&n_##name, 1, __ATOMIC_RELAXED)
static unsigned long n_leaf, n_tail, n_fib, n_worker, n_main;
volatile long sink;
#ifdef WITH_LIB
int lib_twice(int x);
#endif

__attribute__((noinline)) int leaf(int x)
{
	HIT(leaf);
	if (x > 3)
		return x * 2;
	sink++;
	return x + 1;
}

/* a sibling call: GCC puts tail's return nop before the jmp */
__attribute__((noinline)) int tail(int x)
{
	HIT(tail);
	return leaf(x + 1);
}

int fib(int n);
/* through a pointer: GCC -O2 would turn a direct call into a loop */
static int (*volatile fibp)(int) = fib;

__attribute__((noinline)) int fib(int n)
{
	HIT(fib);
	return n < 2 ? n : fibp(n - 1) + fibp(n - 2);
}

static void *worker(void *arg)
{
	HIT(worker);
	for (int i = 0; i < 100; i++)
		sink += leaf(i);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;

	HIT(main);
	for (int i = 0; i < 10; i++)
		sink += tail(i) + leaf(i);
	sink += fib(10);
	(void)argv;
	if (argc <
	    2) { /* "1": one thread (llvm-xray 14's account mixes up threads) */
		pthread_create(&t, NULL, worker, NULL);
		pthread_join(t, NULL);
	}
#ifdef WITH_LIB
	for (int i = 0; i < 7; i++)
		sink += lib_twice(i);
#endif
	printf("count leaf %lu\ncount tail %lu\ncount fib %lu\n", n_leaf,
	       n_tail, n_fib);
	printf("count worker %lu\ncount main %lu\n", n_worker, n_main);
	return 0;
}
