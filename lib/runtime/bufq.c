// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The buffer queue of thread mode (see bufq.h). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../fdr/records.h"
#include "bufq.h"

int rt_bufq_init(struct rt_bufq *q, size_t capacity, size_t count)
{
	memset(q, 0, sizeof(*q));
	if (!capacity || !count || capacity > SIZE_MAX / count)
		return -EINVAL;
	q->bufs = calloc(count, sizeof(*q->bufs));
	q->order = calloc(count, sizeof(*q->order));
	if (!q->bufs || !q->order) {
		rt_bufq_destroy(q);
		return -ENOMEM;
	}
	q->map_size = capacity * count;
	q->mem = mmap(NULL, q->map_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (q->mem == MAP_FAILED) {
		q->mem = NULL;
		rt_bufq_destroy(q);
		return -ENOMEM;
	}
	q->capacity = capacity;
	q->count = count;
	for (size_t i = 0; i < count; i++)
		q->bufs[i].data = q->mem + i * capacity;
	q->generation = 1;
	return 0;
}

void rt_bufq_destroy(struct rt_bufq *q)
{
	if (q->mem)
		munmap(q->mem, q->map_size);
	free(q->bufs);
	free(q->order);
	memset(q, 0, sizeof(*q));
}

void rt_bufq_reset(struct rt_bufq *q)
{
	for (size_t i = 0; i < q->count; i++) {
		q->bufs[i].state = RT_BUF_FREE;
		q->bufs[i].owner_pos = NULL;
		q->bufs[i].used = 0;
	}
	q->next_seq = 0;
	q->overwritten = 0;
	q->recycled = 0;
	q->generation++;
}

void rt_bufq_lock(struct rt_bufq *q)
{
	while (__atomic_exchange_n(&q->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

bool rt_bufq_trylock(struct rt_bufq *q)
{
	return !__atomic_exchange_n(&q->lock, 1, __ATOMIC_ACQUIRE);
}

void rt_bufq_unlock(struct rt_bufq *q)
{
	__atomic_store_n(&q->lock, 0, __ATOMIC_RELEASE);
}

struct rt_buf *rt_bufq_acquire(struct rt_bufq *q, uint32_t tid, uint8_t **pos)
{
	struct rt_buf *b = NULL;
	size_t reused = 0;

	rt_bufq_lock(q);
	for (size_t i = 0; i < q->count; i++) {
		struct rt_buf *c = &q->bufs[i];

		if (c->state == RT_BUF_FREE) {
			b = c;
			break;
		}
		if (c->state == RT_BUF_FULL && !q->keep_full &&
		    (!b || c->seq < b->seq))
			b = c;
	}
	if (b && b->state == RT_BUF_FULL) {
		reused = b->used;
		q->recycled++;
	}
	if (b) {
		b->state = RT_BUF_ACTIVE;
		b->seq = q->next_seq++;
		b->tid = tid;
		b->used = 0;
		__atomic_store_n(pos, b->data, __ATOMIC_RELAXED);
		__atomic_store_n(&b->owner_pos, pos, __ATOMIC_RELEASE);
	}
	rt_bufq_unlock(q);
	/* The records written over are counted after the lock (a scan of
	 * the buffer: others would wait for it), before this thread writes
	 * in it.  (Thread buffers pad event payloads to 8 bytes.) */
	if (reused)
		__atomic_add_fetch(&q->overwritten,
				   fdr_count_events_le(b->data, reused, 8),
				   __ATOMIC_RELAXED);
	return b;
}

void rt_bufq_retire(struct rt_bufq *q, struct rt_buf *b, size_t used)
{
	rt_bufq_lock(q);
	b->used = used;
	__atomic_store_n(&b->owner_pos, NULL, __ATOMIC_RELEASE);
	b->state = RT_BUF_FULL;
	rt_bufq_unlock(q);
}

size_t rt_bufq_used(const struct rt_bufq *q, const struct rt_buf *b,
		    bool *damaged)
{
	uint8_t **owner;
	uint8_t *pos;
	size_t used = b->used;

	switch (b->state) {
	case RT_BUF_FULL:
	case RT_BUF_WRITING:
		break;
	case RT_BUF_ACTIVE:
		owner = __atomic_load_n(&b->owner_pos, __ATOMIC_ACQUIRE);
		if (!owner)
			break;
		pos = __atomic_load_n(owner, __ATOMIC_ACQUIRE);
		if (pos >= b->data && pos <= b->data + q->capacity)
			return (size_t)(pos - b->data);
		used = SIZE_MAX;
		break;
	default:
		return 0;
	}
	if (used <= q->capacity)
		return used;
	if (damaged)
		*damaged = true;
	return 0;
}

struct rt_buf *rt_bufq_take_full(struct rt_bufq *q)
{
	struct rt_buf *b = NULL;

	rt_bufq_lock(q);
	for (size_t i = 0; i < q->count; i++) {
		struct rt_buf *c = &q->bufs[i];

		if (c->state == RT_BUF_FULL && (!b || c->seq < b->seq))
			b = c;
	}
	if (b)
		b->state = RT_BUF_WRITING;
	rt_bufq_unlock(q);
	return b;
}

bool rt_bufq_draining(const struct rt_bufq *q)
{
	for (size_t i = 0; i < q->count; i++) {
		uint8_t state = q->bufs[i].state;

		if (state == RT_BUF_FULL || state == RT_BUF_WRITING)
			return true;
	}
	return false;
}

void rt_bufq_release(struct rt_bufq *q, struct rt_buf *b)
{
	rt_bufq_lock(q);
	b->used = 0;
	b->state = RT_BUF_FREE;
	rt_bufq_unlock(q);
}

size_t rt_bufq_order(const struct rt_bufq *q, uint32_t *order)
{
	size_t n = 0;

	for (size_t i = 0; i < q->count; i++)
		if (q->bufs[i].state == RT_BUF_FULL ||
		    q->bufs[i].state == RT_BUF_ACTIVE)
			order[n++] = (uint32_t)i;
	/* shell sort: in place, no recursion, fine for a signal handler */
	for (size_t gap = n / 2; gap; gap /= 2)
		for (size_t i = gap; i < n; i++) {
			uint32_t v = order[i];
			size_t j = i;

			for (; j >= gap &&
			       q->bufs[order[j - gap]].seq > q->bufs[v].seq;
			     j -= gap)
				order[j] = order[j - gap];
			order[j] = v;
		}
	return n;
}

size_t rt_bufq_sort(struct rt_bufq *q)
{
	return rt_bufq_order(q, q->order);
}
