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
 * Waiting for room, in both sinks: read rt_stream_passes(), look for room
 * again (a pass may have made it since the last look), and if there is
 * none, rt_stream_wait() with what it read.  The waiting thread blocks
 * until the writer's next pass that frees room (or 10 ms, or the writer
 * stops), once: a thread that napped in a loop would make the module
 * write a switch-out and a switch-in per nap into rings that are full.
 * It wakes the writer first, which may be napping between passes.
 */
static inline uint32_t rt_stream_passes(void)
{
	return __atomic_load_n(&rt_live.stream_passes, __ATOMIC_SEQ_CST);
}

static inline void rt_stream_wait(uint32_t passes)
{
	struct timespec most = { 0, 10000000 };

	__atomic_add_fetch(&rt_live.stream_kick, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &rt_live.stream_kick, FUTEX_WAKE_PRIVATE, 1, NULL,
		NULL, 0);
	syscall(SYS_futex, &rt_live.stream_passes, FUTEX_WAIT_PRIVATE, passes,
		&most, NULL, 0);
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
