// SPDX-License-Identifier: GPL-2.0-only
/*
 * The overhead benchmark's workload: main -> mid -> 2 x leaf, N times.
 * Built several ways (bench_calls.py): untraced; with XRay sleds (for
 * xrayfdr, and with LLVM's runtime for its FDR and basic modes); with -pg
 * for uftrace; and with two rdtsc and two 8-byte stores per call written
 * in by hand (BENCH_FLOOR), the floor any TSC-based tracer stands on.
 * Prints "iterations N ns_per_iteration X".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef BENCH_LLVM
/* LLVM's own headers are C++; ours declare the same functions in C */
#include <xrayfdr/xray.h>
#endif

#define TRACED __attribute__((xray_always_instrument, noinline))
#define NOT_TRACED __attribute__((xray_never_instrument))

volatile long sink;

#ifdef BENCH_FLOOR
static uint64_t ring[1 << 16];
static unsigned int ring_pos;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#define RECORD(id) (ring[ring_pos++ & 0xffff] = rdtsc() << 8 | (id))
#else
#define RECORD(id) ((void)0)
#endif

TRACED void leaf(long i)
{
	RECORD(1);
	sink += i;
	RECORD(2);
}

TRACED void mid(long i)
{
	RECORD(3);
	leaf(i);
	leaf(i + 1);
	RECORD(4);
}

NOT_TRACED static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

NOT_TRACED int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	double t0, t1;

#ifdef BENCH_LLVM
	/* LLVM's FDR mode starts only through its API */
	if (argc > 2 && !strcmp(argv[2], "fdr")) {
		if (__xray_log_init_mode("xray-fdr", argc > 3 ? argv[3] : "") !=
			    XRAY_LOG_INITIALIZED ||
		    __xray_patch() != SUCCESS) {
			fprintf(stderr, "cannot start LLVM's FDR mode\n");
			return 1;
		}
	}
#endif
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		mid(i);
	t1 = now_ns();
#ifdef BENCH_LLVM
	if (argc > 2 && !strcmp(argv[2], "fdr")) {
		__xray_log_finalize();
		__xray_log_flushLog();
	}
#endif
	printf("iterations %ld ns_per_iteration %.3f\n", n, (t1 - t0) / n);
	return 0;
}
