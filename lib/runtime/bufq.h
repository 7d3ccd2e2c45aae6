/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The buffer queue of thread mode: a fixed set of equal buffers that
 * threads take one at a time and fill with FDR records.
 *
 * A buffer is FREE, ACTIVE (a thread is filling it) or FULL (its thread
 * moved on or exited).  A thread that needs a buffer takes a free one, or
 * else recycles the oldest full one: a flight recorder keeps the newest
 * window, and the records it overwrote are counted.  When every buffer is
 * active, the thread records nothing until one frees up, and its records
 * are counted as dropped.
 *
 * Streaming (keep_full), a full buffer is never recycled: the stream's
 * writer takes it (WRITING), appends it to the log and frees it, and a
 * thread that finds no free buffer waits for one (sink_thread.c).
 *
 * The lock guards the states; it is never held while records are written.
 * A flush in a signal handler reads without it, so what it reads is
 * checked for sense before use.
 */
#ifndef XRAYFDR_LIB_RUNTIME_BUFQ_H
#define XRAYFDR_LIB_RUNTIME_BUFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rt_buf_state {
	RT_BUF_FREE,
	RT_BUF_ACTIVE,
	RT_BUF_FULL,
	RT_BUF_WRITING, /* the stream's writer is appending it to the log */
};

struct rt_buf {
	uint8_t *data;
	uint64_t seq; /* when it was taken: buffers flush in this order */
	uint8_t **owner_pos; /* ACTIVE: the owner's write position */
	size_t used; /* FULL: bytes of records */
	uint32_t tid;
	volatile uint8_t state; /* enum rt_buf_state */
};

struct rt_bufq {
	uint8_t *mem;
	size_t map_size;
	size_t capacity; /* bytes per buffer */
	size_t count;
	struct rt_buf *bufs;
	uint32_t *order; /* flush scratch: no allocation in signal handlers */
	uint64_t next_seq;
	uint64_t overwritten; /* events lost to recycling */
	uint64_t recycled; /* buffers recycled */
	uint32_t generation; /* bumped by every reset */
	bool keep_full; /* streaming: full buffers wait for the writer */
	volatile int lock;
};

/* Map @count buffers of @capacity bytes (pages are touched lazily). */
int rt_bufq_init(struct rt_bufq *q, size_t capacity, size_t count);
void rt_bufq_destroy(struct rt_bufq *q);
/* Every buffer FREE, counters zero, generation + 1.  Caller holds the lock
 * or is alone (fork child). */
void rt_bufq_reset(struct rt_bufq *q);

void rt_bufq_lock(struct rt_bufq *q);
bool rt_bufq_trylock(struct rt_bufq *q);
void rt_bufq_unlock(struct rt_bufq *q);

/*
 * Take a buffer for thread @tid, whose write position is *@pos: it is set
 * to the buffer's start before the buffer is published, so a concurrent
 * flush never reads a position outside it.  Return NULL if every buffer is
 * active.  Takes the lock.
 */
struct rt_buf *rt_bufq_acquire(struct rt_bufq *q, uint32_t tid, uint8_t **pos);
/* The owner is done with @b after @used bytes.  Takes the lock. */
void rt_bufq_retire(struct rt_bufq *q, struct rt_buf *b, size_t used);

/* Bytes of records in @b now, or 0 if what it says makes no sense (its
 * length or its owner's position written over: then *@damaged, if not
 * NULL, is set). */
size_t rt_bufq_used(const struct rt_bufq *q, const struct rt_buf *b,
		    bool *damaged);

/* Streaming: the oldest full buffer, now WRITING, or NULL.  Takes the
 * lock. */
struct rt_buf *rt_bufq_take_full(struct rt_bufq *q);
/* Is a buffer full or being written, so that the writer will free one
 * without waiting for any thread?  (No lock: a hint.) */
bool rt_bufq_draining(const struct rt_bufq *q);
/* The writer is done with @b: it is free.  Takes the lock. */
void rt_bufq_release(struct rt_bufq *q, struct rt_buf *b);

/* The indexes of the buffers that hold records (full and active ones),
 * by seq, into @order; return how many. */
size_t rt_bufq_order(const struct rt_bufq *q, uint32_t *order);
/* The same into q->order, the flush's. */
size_t rt_bufq_sort(struct rt_bufq *q);

#endif
