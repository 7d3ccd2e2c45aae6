// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The thread-buffer sink's writer: a thread's buffer taken from the queue
 * (bufq.h) and filled, by the controller (fdr.c) and the trampolines'
 * FDR_FAST, which appends while t->pos < t->end; fork.
 *
 * Built without vector registers (see fdr.c): the trampolines call this
 * having saved only the general registers.
 */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fdr/codec.h"
#include "../fdr/records.h"
#include "sink_thread.h"
#include "stream.h"

struct rt_tsink rt_tsink;

void rt_thread_detach(struct rt_thread *t)
{
	struct thread_part *tb = thread_part(t);

	if (tb->buf && tb->queue_gen == rt_tsink.q.generation)
		rt_bufq_retire(&rt_tsink.q, tb->buf,
			       (size_t)(t->pos - tb->buf->data));
	tb->buf = NULL;
	t->end = NULL;
}

enum rt_reserve rt_thread_reserve(struct rt_thread *t, size_t need,
				  uint64_t *tsc, uint32_t cpu)
{
	struct thread_part *tb = thread_part(t);
	size_t preamble = fdr_preamble_size(rt_tsink.version);
	struct timespec ts;
	struct rt_buf *b;

	(void)tsc; /* the controller keeps the time base and the CPU */
	(void)cpu;
	need = ALIGN8(need); /* (a payload's padding) */
	t->name_due = 0;
	if (tb->buf && tb->queue_gen != rt_tsink.q.generation)
		tb->buf = NULL; /* of an earlier trace: never touched again */
	if (tb->buf && t->pos + need <= tb->buf->data + rt_tsink.q.capacity)
		return RT_RESERVE_SAME;
	if (tb->buf)
		rt_bufq_retire(&rt_tsink.q, tb->buf,
			       (size_t)(t->pos - tb->buf->data));
	tb->buf = NULL;
	if (need + preamble > rt_tsink.q.capacity)
		return RT_RESERVE_NONE;
	b = rt_bufq_acquire(&rt_tsink.q, t->tid, &t->pos);
	/* streaming, a full queue waits for the writer while it writes and
	 * has buffers to free (every buffer held by a thread, waiting could
	 * wait for a thread that waits for this one) */
	while (!b && rt_tsink.q.keep_full && rt_stream_writing() &&
	       rt_bufq_draining(&rt_tsink.q)) {
		struct timespec nap = { 0, 50000 };

		syscall(SYS_nanosleep, &nap, NULL);
		b = rt_bufq_acquire(&rt_tsink.q, t->tid, &t->pos);
	}
	if (!b)
		return RT_RESERVE_NONE;
	tb->buf = b;
	tb->queue_gen = rt_tsink.q.generation;
	clock_gettime(CLOCK_REALTIME, &ts);
	preamble = fdr_put_preamble(t->pos, false, rt_tsink.version,
				    (int32_t)t->tid, (uint64_t)ts.tv_sec,
				    (uint32_t)(ts.tv_nsec / 1000),
				    rt_tsink.pid);
	__atomic_store_n(&t->pos, t->pos + preamble, __ATOMIC_RELEASE);
	/* every buffer names its thread: recycling may leave any of them */
	t->name_due = need + RT_NAME_ROOM + preamble <= rt_tsink.q.capacity;
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

bool rt_thread_commit(struct rt_thread *t, uint8_t *end, const void *payload,
		      size_t size)
{
	copy_payload(end, payload, size);
	for (; size % 8; size++)
		end[size] = 0;
	/* a flush reads the position without the owner's help */
	__atomic_store_n(&t->pos, end + size, __ATOMIC_RELEASE);
	return true;
}

uint32_t rt_thread_arm(struct rt_thread *t)
{
	struct thread_part *tb = thread_part(t);
	bool valid = tb->buf && tb->queue_gen == rt_tsink.q.generation;

	t->end = valid ? tb->buf->data + rt_tsink.q.capacity -
				 (XRAYFDR_FUNCTION_RECORD_SIZE - 1) :
			 NULL;
	return valid ? rt_tsink.q.generation : 0;
}

void rt_thread_fork_prepare(void)
{
	if (rt_tsink.q.mem)
		rt_bufq_lock(&rt_tsink.q);
}

void rt_thread_fork_parent(void)
{
	if (rt_tsink.q.mem)
		rt_bufq_unlock(&rt_tsink.q);
}

void rt_thread_fork_child(uint32_t gen, pid_t child)
{
	rt_tsink.pid = (int32_t)child;
	rt_tsink.damaged = 0;
	rt_tsink.stream_damaged = 0;
	rt_tsink.q.lock = 0;
	/* the parent's writer stays the parent's: the child keeps a flight
	 * recorder, written at its end to a log of its own */
	rt_tsink.q.keep_full = false;
	if (!rt_tsink.q.mem)
		return;
	rt_bufq_reset(&rt_tsink.q);
	rt_tsink.q.generation = gen;
}

void rt_thread_counters(const struct rt_drain *d, struct rt_sink_counters *c)
{
	(void)d; /* (a snapshot's walk counts in the same place) */
	c->overwritten = rt_tsink.q.overwritten;
	c->recycled = rt_tsink.q.recycled;
	c->damaged = rt_tsink.damaged + rt_tsink.stream_damaged;
}
