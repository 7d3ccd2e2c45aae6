/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The FDR controller: what an event becomes (fdr.c, the recording path,
 * free of vector registers), and a thread's set-up and the handlers LLVM's
 * API installs (fdr_setup.c).  It writes through the record sink of the
 * process's trace, rt_live.sink (sink.h); the trace's life is trace.c's.
 */
#ifndef XRAYFDR_LIB_RUNTIME_CONTROLLER_H
#define XRAYFDR_LIB_RUNTIME_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/xray.h>

#include "options.h"

/*
 * fdr.c: the recording path.  Return RT_LIGHT_DONE, or what the caller
 * must do after saving everything.
 */
enum rt_light {
	RT_LIGHT_DONE = 0,
	RT_LIGHT_SETUP = 1, /* set the thread up, then call again */
	/* the event was dropped; say why (each once) */
	RT_LIGHT_WARN_EMPTY = 2,
	RT_LIGHT_WARN_BIG = 4,
	RT_LIGHT_WARN_V1 = 8,
};

/* @op: ENTRY, EXIT, TAIL, or LOG_ARGS_ENTRY with @arg */
int rt_fdr_light(int op, int32_t id, uint64_t arg);
int rt_fdr_light_event(int typed, uint16_t type, const void *data, size_t size);
/* If the calling thread's name is no longer the one it last recorded,
 * record it now (its exit: it will not begin another buffer). */
void rt_fdr_name_check(void);
extern int rt_warned;

/* fdr_setup.c */
/* Find the threads' rseq area (libc's or ours: rt.own_rseq) and register
 * for membarrier's restarts, once. */
void rt_rseq_ensure(void);
struct rt_thread;
/* The thread's rseq area: our own registered when libc registered none
 * (rt.own_rseq).  Return whether it has one (from libc or from us). */
bool rt_thread_rseq(struct rt_thread *t);
/* Where the thread's state and its rseq area are, from the thread
 * pointer (the same in every thread); finds the rseq area first. */
void rt_tls_offsets(long *self, long *rseq);
/* The trampolines' way when rt_fdr_light*() asked for more. */
void rt_fdr_heavy(int op, int32_t id, uint64_t arg);
void rt_fdr_heavy_event(int typed, uint16_t type, const void *data,
			size_t size);
/* The handlers as LLVM's API installs them; the trampolines recognise
 * them and take the light path. */
void rt_fdr_handle_arg0(int32_t id, enum XRayEntryType kind);
void rt_fdr_handle_arg1(int32_t id, enum XRayEntryType kind, uint64_t arg);
void rt_fdr_handle_custom(void *data, size_t size);
void rt_fdr_handle_typed(uint16_t type, const void *data, size_t size);

#endif
