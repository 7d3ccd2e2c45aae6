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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"

/* May a thread wait for a free buffer?  (Vector-free: the C path asks.) */
static inline bool rt_stream_writing(void)
{
	return __atomic_load_n(&rt_live.stream_alive, __ATOMIC_ACQUIRE);
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
