/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the two files of the thread-buffer sink share: sink_thread.c (start,
 * the drain, streaming and the sink's operations) and sink_thread_write.c
 * (attach, detach, reserve, commit, arm and fork: the recording path,
 * built without vector registers).
 */
#ifndef XRAYFDR_LIB_RUNTIME_SINK_THREAD_H
#define XRAYFDR_LIB_RUNTIME_SINK_THREAD_H

#include <stdint.h>

#include "bufq.h"
#include "logbuf.h"
#include "sink.h"

/* The sink's state (sink_thread_write.c defines it). */
struct rt_tsink {
	struct rt_bufq q;
	unsigned int version; /* of the log, for the preamble */
	int32_t pid;
	/* what the last drain, and the stream's writer, skipped as written
	 * over */
	uint64_t damaged, stream_damaged;
	/* each thread's last time in the log: the flush's, and across the
	 * stream's passes and the flush after them */
	struct rt_last_times last;
};

/* (hidden: the writer reaches it PC-relative, not through the GOT) */
extern struct rt_tsink rt_tsink __attribute__((visibility("hidden")));

/* The writer (sink_thread_write.c): the sink's operations of the same
 * names. */
void rt_thread_detach(struct rt_thread *t);
enum rt_reserve rt_thread_reserve(struct rt_thread *t, size_t need,
				  uint64_t *tsc, uint32_t cpu);
bool rt_thread_commit(struct rt_thread *t, uint8_t *end, const void *payload,
		      size_t size);
uint32_t rt_thread_arm(struct rt_thread *t);
void rt_thread_fork_prepare(void);
void rt_thread_fork_parent(void);
void rt_thread_fork_child(uint32_t gen, pid_t pid);
void rt_thread_counters(const struct rt_drain *d, struct rt_sink_counters *c);

/* This sink's part of a thread's state (t->sink_state): the buffer it
 * fills. */
struct thread_part {
	struct rt_buf *buf; /* the buffer being filled, or NULL */
	uint32_t queue_gen; /* queue generation buf belongs to */
};

_Static_assert(sizeof(struct thread_part) <=
		       sizeof(((struct rt_thread *)0)->sink_state),
	       "the thread sink's part of a thread's state fits");

static inline struct thread_part *thread_part(struct rt_thread *t)
{
	return (struct thread_part *)(void *)t->sink_state;
}

#endif
