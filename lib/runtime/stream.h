/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Streaming (stream=true; xrayfdr record --stream): every record reaches
 * the log while the program runs.  The log is opened, with its header, as
 * the trace starts; a writer thread of the runtime's own takes each full
 * buffer, appends it and frees it; a thread that finds no free buffer
 * waits for the writer rather than overwrite or lose anything (while the
 * writer can write: after a write error, records that find no room are
 * counted as dropped, and the flush reports the error).  The flush
 * appends what is left and the info event.
 */
#ifndef XRAYFDR_LIB_RUNTIME_STREAM_H
#define XRAYFDR_LIB_RUNTIME_STREAM_H

#include <linux/futex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "state.h"

/* May a thread wait for a free buffer?  (Vector-free: the C path asks.) */
static inline bool rt_stream_writing(void)
{
	return __atomic_load_n(&rt_live.stream_alive, __ATOMIC_ACQUIRE);
}

/*
 * Waiting for room in a CPU ring: read rt_stream_passes(), look for room
 * again (the writer may have made some since the last look), and if
 * there is none, rt_stream_wait() with what it read and the ring's
 * rt_stream_ring_bit().  The writer bumps the count and wakes the
 * waiters of the rings it consumed (rt_stream_wake()), and every waiter
 * (RT_STREAM_ANY) when it stops.  A waiter sleeps once, until then (a
 * second at most, should a wake-up go amiss): each time a thread sleeps
 * and wakes, the module writes a switch-out and a switch-in, into rings
 * that may be full, so it must not nap in a loop, nor wake for a ring
 * that is still full.  A count that moved since it was read makes the
 * wait return at once, without sleeping.  It wakes the writer first,
 * which may be napping between passes.  (Thread buffers have no kernel
 * records: a thread waiting for one naps, sink_thread_write.c.)
 */
#define RT_STREAM_ANY FUTEX_BITSET_MATCH_ANY

static inline uint32_t rt_stream_ring_bit(uint32_t cpu)
{
	return 1u << (cpu % 32);
}

static inline uint32_t rt_stream_passes(void)
{
	return __atomic_load_n(&rt_live.stream_passes, __ATOMIC_SEQ_CST);
}

static inline void rt_stream_wait(uint32_t passes, uint32_t bits)
{
	struct timespec until;

	__atomic_add_fetch(&rt_live.stream_kick, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &rt_live.stream_kick, FUTEX_WAKE_PRIVATE, 1, NULL,
		NULL, 0);
	/* (FUTEX_WAIT_BITSET's time is absolute, on CLOCK_MONOTONIC) */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec++;
	syscall(SYS_futex, &rt_live.stream_passes, FUTEX_WAIT_BITSET_PRIVATE,
		passes, &until, NULL, bits);
}

static inline void rt_stream_wake(uint32_t bits)
{
	__atomic_add_fetch(&rt_live.stream_passes, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &rt_live.stream_passes, FUTEX_WAKE_BITSET_PRIVATE,
		0x7fffffff, NULL, NULL, bits);
}

/*
 * Open the log of the trace starting (rt_live: its options, its sink) with
 * its header, and start the writer.  Return 0, or a negative errno with the reason in
 * @err.
 */
int rt_stream_start(char *err, size_t errlen);
/*
 * Stop the writer after the buffer it is writing, and wait for it.
 * Return 0 or the error a write met.
 */
int rt_stream_stop(void);
/*
 * In a signal handler (the emergency flush): let the writer finish the
 * pass it is in, a second at most, and start no other; threads that wait
 * for it stop waiting.  Async-signal-safe.
 */
void rt_stream_halt(void);
/* The streamed log's descriptor (-1 if none), and what the writer wrote. */
int rt_stream_fd(void);
void rt_stream_totals(uint64_t *events, uint64_t *buffers);
/* Close the log after the flush's last write. */
void rt_stream_close(void);
/* In a forked child: the writer and the log are the parent's. */
void rt_stream_fork_child(void);

#endif
