// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU-ring sink (sink.h): its operations, gathered from its parts,
 * which know nothing of each other's but the rings' state (sink_cpu.h):
 * the rings (sink_cpu_rings.c), the writer (sink_cpu_write.c), the drain
 * (sink_cpu_drain.c) and streaming (sink_cpu_stream.c).
 */
#include <errno.h>

#include "../arch/x86_64/arch.h"
#include "sink_cpu.h"

/* New rings, and the stream's writer's memory for them. */
static int cpu_start(const struct rt_options *o, size_t capacity, uint32_t gen,
		     pid_t pid, char *err, size_t errlen)
{
	int ret = rt_cpu_rings_start(o, capacity, gen, pid, err, errlen);

	if (!ret && o->stream)
		ret = rt_cpu_stream_setup(capacity, err, errlen);
	return ret;
}

/*
 * A snapshot in this process: a copy of the rings, walked by @d.  The
 * scheduler's records of the thread taking it, an internal one, are left
 * out (rt_cpu_walk_ring()).
 */
static int cpu_snapshot_begin(struct rt_drain *d)
{
	struct rt_cpu_view *v = rt_cpu_snapshot_copy();

	if (!v)
		return -errno;
	rt_cpu_view_drain(v, d);
	return 0;
}

/* The sleds call CPU_FAST (trampolines.S), which appends to the ring of
 * the thread's CPU (ring.h). */
static const struct arch_tramps cpu_tramps = {
	.entry = rt_cpu_tramp_entry,
	.exit = rt_cpu_tramp_exit,
	.tail = rt_cpu_tramp_tail,
	.args = rt_cpu_tramp_args,
};

const struct rt_sink rt_cpu_sink = {
	.name = "cpu",
	.tramps = &cpu_tramps,
	.start = cpu_start,
	.detach = rt_cpu_detach,
	.reserve = rt_cpu_reserve,
	.commit = rt_cpu_commit,
	.arm = rt_cpu_arm,
	.fork_prepare = rt_cpu_fork_nothing,
	.fork_parent = rt_cpu_fork_nothing,
	.fork_child = rt_cpu_fork_child,
	.finish = rt_cpu_finish,
	.counters = rt_cpu_counters,
	.memory = rt_cpu_memory,
	.share = rt_cpu_share,
	.release = rt_cpu_release,
	.drain_begin = rt_cpu_drain_begin,
	.drain_next = rt_cpu_drain_next,
	.drain_end = rt_cpu_drain_end,
	.snapshot_begin = cpu_snapshot_begin,
	.snapshot_end = rt_cpu_snapshot_release,
	.stream_one = rt_cpu_stream_one,
	.fast_events = RT_FAST_EVENTS_RING,
};
