// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink's streaming: the stream's writer (stream.c) takes what
 * the rings committed, pass after pass, as log buffers, and marks it
 * consumed so that the writers may reuse it.  Not on the recording path:
 * built normally.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "../arch/x86_64/arch.h"
#include "logbuf.h"
#include "sink_cpu.h"
#include "stream.h"

/* Threads whose last times the stream keeps before it starts over (a
 * thread it forgot goes on from its own records) */
#define STREAM_THREADS 4096

/* The stream's writer's memory for the rings now in use. */
int rt_cpu_stream_setup(size_t capacity, char *err, size_t errlen)
{
	size_t pos = (size_t)rt_ring.ncpus * sizeof(struct ring_pos) * 2;
	size_t max = 4 * ((size_t)rt_ring.subbuf_size / 8 + 1), size;
	uint8_t *m;

	if (max < 4096)
		max = 4096;
	size = pos + max * sizeof(struct run);
	if (rt_cpu.stream_map_size)
		munmap(rt_cpu.stream_at, rt_cpu.stream_map_size);
	rt_cpu.stream_map_size = 0;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED ||
	    rt_logbuf_scratch(&rt_cpu.stream_scratch, &rt_cpu.stream_capacity,
			      capacity) ||
	    rt_last_times_init(&rt_cpu.stream_last, STREAM_THREADS)) {
		if (m != MAP_FAILED)
			munmap(m, size);
		snprintf(err, errlen, "cannot map the stream's %zu bytes",
			 size + capacity);
		return -ENOMEM;
	}
	/* every ring from its start: (mmap's zeros) */
	rt_cpu.stream_map_size = size;
	rt_cpu.stream_at = (struct ring_pos *)m;
	rt_cpu.stream_to = rt_cpu.stream_at + rt_ring.ncpus;
	rt_cpu.stream_runs = (struct run *)(m + pos);
	rt_cpu.stream_max = max;
	rt_cpu.stream_damaged = 0;
	rt_cpu.streaming = true;
	/* (two sub-buffers leave none: the writers would wait for a pass
	 * that waits for them to fill one) */
	rt_cpu.reserve = rt_ring.discard && rt_ring.subbuf_count > 2;
	return 0;
}

/* The TSC now, read before any ring is (rdtsc alone may run later than
 * the loads after it). */
static uint64_t tsc_before_reads(void)
{
	uint64_t tsc;

	__asm__ volatile("lfence" ::: "memory");
	tsc = arch_tsc();
	__asm__ volatile("lfence" ::: "memory");
	return tsc;
}

/* Has a sub-buffer closed that the stream's writer has not consumed? */
static bool stream_due(void)
{
	for (uint32_t c = 0; c < rt_ring.ncpus; c++) {
		uint64_t commit =
			__atomic_load_n(&control(c)->commit, __ATOMIC_ACQUIRE);
		uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit);

		if (off && off <= rt_ring.size &&
		    subbuf(c, (off - 1) >> rt_ring.shift)->seq !=
			    rt_cpu.stream_at[c].seq)
			return true;
	}
	return false;
}

/*
 * Streaming: a pass over every ring from where the last one stopped to
 * what is committed, open sub-buffers included, once a sub-buffer has
 * closed.  Its runs become log buffers in the flush's order (thread, then
 * stretch), and what it took is then consumed: the writers may open
 * sub-buffers up to the one it stopped in.
 *
 * A thread's stretches must go out in order across passes, while it
 * writes on.  A stretch begins after every record of its thread's
 * earlier ones is committed, and takes its number from the clock then:
 * so a pass that reads the clock first, and stops each ring at the first
 * stretch numbered after it, has every earlier record of each thread
 * whose records it takes, and the next pass starts where it stopped.
 * The kernel's records go by time: the pass stops each ring at the
 * first one stamped after it began (rt_cpu_walk_ring()).
 */
int rt_cpu_stream_one(int (*write)(void *ctx, const struct rt_chunk *c),
		      void *ctx)
{
	struct walk w = { .out = rt_cpu.stream_runs,
			  .max = rt_cpu.stream_max,
			  .stream = true };
	const struct pass ps = { .v = &rt_cpu.live,
				 .runs = rt_cpu.stream_runs,
				 .scratch = rt_cpu.stream_scratch,
				 .capacity = rt_cpu.stream_capacity,
				 .last = &rt_cpu.stream_last,
				 .remember = true };
	struct rt_drain d = { .trace = &rt_live }; /* only it streams */
	struct rt_chunk c;
	uint32_t consumed = 0;
	int ret = 0;

	if (!rt_cpu.streaming || !rt_ring.header || !stream_due())
		return 0;
	w.stop = __atomic_load_n(&rt_cpu.stretch_clock, __ATOMIC_SEQ_CST) + 1;
	w.stop_tsc = tsc_before_reads();
	for (uint32_t cpu = 0; cpu < rt_ring.ncpus; cpu++)
		rt_cpu_walk_ring(&rt_cpu.live, cpu, &w, &rt_cpu.stream_at[cpu],
				 &rt_cpu.stream_to[cpu]);
	rt_cpu.stream_damaged += w.damaged;
	rt_cpu_sort_runs(rt_cpu.stream_runs, w.n, rt_cpu.live.version);
	d.count = w.n;
	while (!ret && d.next < d.count)
		if (rt_cpu_fill_chunk(&d, &ps, &c))
			ret = write(ctx, &c);
	if (ret)
		return ret;
	for (uint32_t cpu = 0; cpu < rt_ring.ncpus; cpu++) {
		if (rt_cpu.stream_to[cpu].seq != rt_cpu.stream_at[cpu].seq)
			consumed |= rt_stream_ring_bit(cpu);
		rt_cpu.stream_at[cpu] = rt_cpu.stream_to[cpu];
		__atomic_store_n(&control(cpu)->consumed,
				 rt_cpu.stream_at[cpu].seq, __ATOMIC_SEQ_CST);
	}
	/* only the threads waiting for room in the rings it consumed */
	if (consumed)
		rt_stream_wake(consumed);
	return consumed != 0;
}
