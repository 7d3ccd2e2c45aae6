/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * LLVM's duration threshold (func_duration_threshold_us): the exit (or
 * tail exit) of a call shorter than the threshold erases its entry record
 * instead of writing itself, and when that leaves no undoable entry, the
 * tail calls that led to it if the chain was short too.  LLVM can only
 * erase such a pair when a NewCPUId or TSCWrap came between the entry and
 * the tail exit, and then erases half of that metadata record with it;
 * here a tail exit that needed one is not undoable, and the base after an
 * erased pair is the record before it.
 *
 * One implementation for both places that write FDR records with deltas
 * from the record before: thread mode's controller (fdr.c), as events
 * come, and the CPU rings' drain (sink_cpu_drain.c), as it writes each
 * thread's buffers.  Inline and vector-free, for the recording path.
 */
#ifndef XRAYFDR_LIB_RUNTIME_REWIND_H
#define XRAYFDR_LIB_RUNTIME_REWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "../fdr/records.h"

struct rt_rewind {
	uint32_t undo_enters; /* entries in a row that may be erased */
	uint32_t undo_tails; /* tail exit + entry pairs before them */
	uint64_t last_entry_tsc;
};

/* Nothing before this point can be erased (a new buffer, an event). */
static inline void rt_rewind_reset(struct rt_rewind *rw)
{
	rw->undo_enters = 0;
	rw->undo_tails = 0;
	rw->last_entry_tsc = 0;
}

/* Does a function record of @kind at @tsc end a short call?  @wrote: a
 * NewCPUId or TSCWrap was just written before it. */
static inline bool rt_rewind_short(const struct rt_rewind *rw,
				   unsigned int kind, bool wrote, uint64_t tsc,
				   uint64_t threshold)
{
	return !wrote && rw->undo_enters &&
	       tsc - rw->last_entry_tsc < threshold &&
	       (kind == XRAYFDR_FUNC_EXIT || kind == XRAYFDR_FUNC_TAIL_EXIT);
}

/*
 * Erase the short call that ends at @tsc from the records ending at *@pos,
 * whose next delta is taken from *@last; both move back.
 */
static inline void rt_rewind_erase(struct rt_rewind *rw, uint8_t **pos,
				   uint64_t *last, uint64_t tsc,
				   uint64_t threshold)
{
	const unsigned int fn = XRAYFDR_FUNCTION_RECORD_SIZE;
	uint64_t w;

	__builtin_memcpy(&w, *pos - fn, sizeof(w));
	*pos -= fn;
	*last -= w >> 32;
	if (--rw->undo_enters) {
		rw->last_entry_tsc -= w >> 32;
		return;
	}
	rw->last_entry_tsc = 0;
	while (rw->undo_tails) {
		uint64_t tail, entry, entry_tsc;

		__builtin_memcpy(&tail, *pos - fn, sizeof(tail));
		__builtin_memcpy(&entry, *pos - 2 * fn, sizeof(entry));
		entry_tsc = *last - (tail >> 32);
		if (tsc - entry_tsc >= threshold) {
			rw->undo_tails = 0;
			return;
		}
		rw->undo_tails--;
		*pos -= 2 * fn;
		*last = entry_tsc - (entry >> 32);
	}
}

/* A function record of @kind at @tsc was written (after a NewCPUId or
 * TSCWrap if @wrote). */
static inline void rt_rewind_note(struct rt_rewind *rw, unsigned int kind,
				  bool wrote, uint64_t tsc)
{
	switch (kind) {
	case XRAYFDR_FUNC_ENTRY:
		rw->undo_enters = wrote ? 1 : rw->undo_enters + 1;
		if (wrote)
			rw->undo_tails = 0;
		rw->last_entry_tsc = tsc;
		break;
	case XRAYFDR_FUNC_ENTRY_ARGS:
	case XRAYFDR_FUNC_EXIT:
		rt_rewind_reset(rw);
		break;
	case XRAYFDR_FUNC_TAIL_EXIT:
		/* a pair is undoable only as two adjacent records */
		rw->undo_tails =
			rw->undo_enters && !wrote ? rw->undo_tails + 1 : 0;
		rw->undo_enters = 0;
		break;
	}
}

#endif
