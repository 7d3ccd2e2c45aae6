// SPDX-License-Identifier: GPL-2.0-only
/*
 * The overhead benchmark's workload: main -> mid -> 2 x leaf, N times.
 * Built several ways (bench_calls.py): untraced; with XRay sleds (for
 * xrayfdr, and with LLVM's runtime for its FDR and basic modes); with -pg
 * for uftrace; and with two rdtsc and two 8-byte stores per call written
 * in by hand (BENCH_FLOOR), the floor any TSC-based tracer stands on; and
 * the same through a call to a function of its own at each entry and exit
 * (BENCH_FLOOR_CALL), the floor of a tracer reached from a sled, whose 11
 * bytes hold a call and no more.  With BENCH_ARGS, leaf logs its argument
 * (xray_log_args(1)): two of the three entries carry a CallArgument;
 * with BENCH_CUSTOM (BENCH_TYPED), leaf writes a custom (typed) event of
 * 8 bytes, its argument.  mid leaves by a tail call in every build with
 * sleds: of the three exits, one is a tail exit.
 *
 * The loop is timed in this thread's CPU time: on a shared machine the
 * wall clock also counts the time other tenants held the CPU.  It runs in
 * a function of its own, run_loop(), so that an instruction counter can
 * count it alone (callgrind --toggle-collect=run_loop), without start-up,
 * LLVM's set-up calls or the final flush.
 * Prints "iterations N ns_per_iteration X wall_ns_per_iteration Y" (X in
 * thread CPU time).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

volatile long sink;

#if defined(BENCH_FLOOR) || defined(BENCH_FLOOR_CALL)
/* Not static: the compiler would see that nothing reads the ring and drop
 * the stores, leaving only the rdtsc. */
uint64_t ring[1 << 16];
unsigned int ring_pos;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#define RECORD_INLINE(id) (ring[ring_pos++ & 0xffff] = rdtsc() << 8 | (id))
#ifdef BENCH_FLOOR_CALL
NOT_TRACED __attribute__((noinline)) void floor_record(uint64_t id)
{
	RECORD_INLINE(id);
}
#define RECORD(id) floor_record(id)
#else
#define RECORD(id) RECORD_INLINE(id)
#endif
#else
#define RECORD(id) ((void)0)
#endif

#ifdef BENCH_ARGS
#define LEAF_ARGS __attribute__((xray_log_args(1)))
#elif defined(BENCH_CUSTOM)
/* LLVM 14's custom-event sled pushes two registers and its trampoline
 * does not realign: in a function without a frame its FDR mode faults on
 * an aligned vector store.  leaf realigns the stack, in ours alike.  (The
 * typed-event sled pushes three, which suits a function without one.) */
#define LEAF_ARGS __attribute__((force_align_arg_pointer))
#else
#define LEAF_ARGS
#endif

TRACED LEAF_ARGS void leaf(long i)
{
	RECORD(1);
#if defined(BENCH_CUSTOM) || defined(BENCH_TYPED)
	/* (not &i: LLVM 14's event sled pushes onto a leaf's red zone) */
	static long event;

	event = i;
#endif
#if defined(BENCH_CUSTOM)
	__xray_customevent((const char *)&event, sizeof(event));
#elif defined(BENCH_TYPED)
	__xray_typedevent(1, (const char *)&event, sizeof(event));
#endif
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

/* What is timed and counted: nothing else. */
NOT_TRACED __attribute__((noinline)) void run_loop(long n)
{
	for (long i = 0; i < n; i++)
		mid(i);
}

NOT_TRACED int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	double c0, c1, w0, w1;

	if (llvm_fdr_start(argc, argv, 2))
		return 1;
	w0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	run_loop(n);
	c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = now_ns(CLOCK_MONOTONIC);
	llvm_fdr_stop(argc, argv, 2);
	printf("iterations %ld ns_per_iteration %.3f wall_ns_per_iteration %.3f\n",
	       n, (c1 - c0) / n, (w1 - w0) / n);
	return 0;
}
