// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The thread-buffer sink: each thread fills one buffer of the shared queue
 * (bufq.h) at a time, with the preamble llvm-xray expects at its start, so
 * a buffer goes to the log as it is.  Its fast path is the trampolines'
 * FDR_FAST: it appends while t->pos < t->end.
 *
 * Built without vector registers (see fdr.c); only thread_start(), which
 * no recording path calls, uses the C library beyond system calls.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../fdr/records.h"
#include "bufq.h"
#include "sink.h"

static struct rt_bufq q;
static unsigned int version; /* of the log, for the preamble */
static int32_t pid;

static int thread_start(const struct rt_options *o, size_t capacity,
			uint32_t gen, pid_t owner, char *err, size_t errlen)
{
	static struct rt_bufq previous;
	int ret;

	/* A thread may still be in the C path with a buffer of the last
	 * trace (not the fast path: the trace was quiesced), so its queue is
	 * not reused; it is released when the next trace starts. */
	if (q.mem) {
		rt_bufq_destroy(&previous);
		previous = q;
		madvise(previous.mem, previous.map_size, MADV_DONTNEED);
		memset(&q, 0, sizeof(q));
	}
	ret = rt_bufq_init(&q, capacity, o->buffer_max);
	if (ret) {
		snprintf(err, errlen, "cannot map %llu buffers of %llu bytes",
			 (unsigned long long)o->buffer_max,
			 (unsigned long long)o->buffer_size);
		return ret;
	}
	q.generation = gen;
	version = o->version;
	pid = (int32_t)owner;
	return 0;
}

static void thread_detach(struct rt_thread *t)
{
	if (t->buf && t->queue_gen == q.generation)
		rt_bufq_retire(&q, t->buf, (size_t)(t->pos - t->buf->data));
	t->buf = NULL;
	t->end = NULL;
}

static enum rt_reserve thread_reserve(struct rt_thread *t, size_t need,
				      uint64_t *tsc, uint32_t cpu)
{
	size_t preamble = fdr_preamble_size(version);
	struct timespec ts;
	struct rt_buf *b;

	(void)tsc; /* the controller keeps the time base and the CPU */
	(void)cpu;
	if (t->buf && t->queue_gen != q.generation)
		t->buf = NULL; /* of an earlier trace: never touched again */
	if (t->buf && t->pos + need <= t->buf->data + q.capacity)
		return RT_RESERVE_SAME;
	if (t->buf)
		rt_bufq_retire(&q, t->buf, (size_t)(t->pos - t->buf->data));
	t->buf = NULL;
	if (need + preamble > q.capacity)
		return RT_RESERVE_NONE;
	b = rt_bufq_acquire(&q, t->tid, &t->pos);
	if (!b)
		return RT_RESERVE_NONE;
	t->buf = b;
	t->queue_gen = q.generation;
	clock_gettime(CLOCK_REALTIME, &ts);
	preamble = fdr_put_preamble(t->pos, false, version, (int32_t)t->tid,
				    (uint64_t)ts.tv_sec,
				    (uint32_t)(ts.tv_nsec / 1000), pid);
	__atomic_store_n(&t->pos, t->pos + preamble, __ATOMIC_RELEASE);
	return RT_RESERVE_NEW;
}

/* A byte copy the compiler will not turn into a call to memcpy (built
 * with -fno-tree-loop-distribute-patterns). */
static void copy_payload(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (; n >= 8; n -= 8, dst += 8, src += 8) {
		uint64_t w;

		__builtin_memcpy(&w, src, 8);
		__builtin_memcpy(dst, &w, 8);
	}
	while (n--)
		*dst++ = *src++;
}

static bool thread_commit(struct rt_thread *t, uint8_t *end,
			  const void *payload, size_t size)
{
	copy_payload(end, payload, size);
	/* a flush reads the position without the owner's help */
	__atomic_store_n(&t->pos, end + size, __ATOMIC_RELEASE);
	return true;
}

static uint32_t thread_arm(struct rt_thread *t)
{
	bool valid = t->buf && t->queue_gen == q.generation;

	t->end = valid ? t->buf->data + q.capacity -
				 (XRAYFDR_FUNCTION_RECORD_SIZE - 1) :
			 NULL;
	return valid ? q.generation : 0;
}

static void thread_fork_prepare(void)
{
	if (q.mem)
		rt_bufq_lock(&q);
}

static void thread_fork_parent(void)
{
	if (q.mem)
		rt_bufq_unlock(&q);
}

static void thread_fork_child(uint32_t gen, pid_t child)
{
	pid = (int32_t)child;
	q.lock = 0;
	if (!q.mem)
		return;
	rt_bufq_reset(&q);
	q.generation = gen;
}

static void thread_counters(struct rt_sink_counters *c)
{
	c->overwritten = q.overwritten;
	c->recycled = q.recycled;
}

static void thread_drain_begin(struct rt_drain *d, bool wait)
{
	d->next = 0;
	d->count = 0;
	d->locked = false;
	if (!q.mem)
		return;
	if (wait)
		rt_bufq_lock(&q);
	d->locked = wait || rt_bufq_trylock(&q);
	d->count = rt_bufq_sort(&q);
}

static bool thread_drain_next(struct rt_drain *d, struct rt_chunk *c)
{
	while (d->next < d->count) {
		const struct rt_buf *b = &q.bufs[q.order[d->next++]];

		c->data = b->data;
		c->used = rt_bufq_used(&q, b);
		/* A buffer is published with its preamble before its first
		 * record is: one read then (a fatal signal's flush while its
		 * thread is in the C path) has no record yet, and a log
		 * buffer without its NewCPUId is not valid. */
		if (c->used > fdr_preamble_size(version))
			return true;
	}
	return false;
}

static void thread_drain_end(struct rt_drain *d)
{
	if (d->locked)
		rt_bufq_unlock(&q);
	d->locked = false;
}

const struct rt_sink rt_thread_sink = {
	.name = "thread",
	.tramps = ARCH_TRAMPS_THREAD,
	.start = thread_start,
	.detach = thread_detach,
	.reserve = thread_reserve,
	.commit = thread_commit,
	.arm = thread_arm,
	.fork_prepare = thread_fork_prepare,
	.fork_parent = thread_fork_parent,
	.fork_child = thread_fork_child,
	.counters = thread_counters,
	.drain_begin = thread_drain_begin,
	.drain_next = thread_drain_next,
	.drain_end = thread_drain_end,
};
