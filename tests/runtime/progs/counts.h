/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every matrix program shares: traced functions keep their own call
 * counters, and the program prints them at the end as
 * "count PID SYMBOL N" lines, for the harness to compare with the logs.
 */
#ifndef XRAYFDR_TESTS_RUNTIME_COUNTS_H
#define XRAYFDR_TESTS_RUNTIME_COUNTS_H

#include <stdio.h>
#include <unistd.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define NOT_TRACED __attribute__((xray_never_instrument, noinline))

#define COUNTER(name) unsigned long n_##name
#define HIT(name) __atomic_add_fetch(&n_##name, 1, __ATOMIC_RELAXED)
#define PRINT(name)                                         \
	printf("count %ld %s %lu\n", (long)getpid(), #name, \
	       __atomic_load_n(&n_##name, __ATOMIC_RELAXED))

/* Keeps the optimiser from folding the work away. */
extern volatile long sink;

#endif
