/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * max_depth (xrayfdr record --depth N): only calls at most N levels deep
 * in a thread's traced calls are recorded, as uftrace's --depth.  The
 * depth is kept as events come, on the C path (the option turns the fast
 * path off: a depth counter in every trampoline would cost every user),
 * with a stack of the open calls' function ids, so that an exit whose
 * call is not on top finds it further down: the calls above it were left
 * by an exception or a longjmp, whose exits XRay never sees, and the
 * depth drops to where it was found.  That search takes the nearest call
 * of that function, as llvm-xray's unwinding does.  Only the bottom
 * RT_DEPTH_IDS levels keep ids; deeper ones are only counted.  Depth 1 is
 * the outermost call the trace sees in a thread; an exit of a call that
 * began before that (none open) is kept, as it is shallower than any.
 */
#ifndef XRAYFDR_LIB_RUNTIME_DEPTH_H
#define XRAYFDR_LIB_RUNTIME_DEPTH_H

#include <stdbool.h>
#include <stdint.h>

#define RT_DEPTH_IDS 64

struct rt_depth {
	uint32_t gen; /* the trace the stack belongs to */
	uint32_t open; /* calls open, however deep */
	int32_t ids[RT_DEPTH_IDS]; /* the bottom ones' function ids */
};

/* Does the function record of an @entry (else an exit or tail exit) of
 * @id belong in the trace of generation @gen, which keeps @max levels?
 * Updates the stack. */
static inline bool rt_depth_keeps(struct rt_depth *d, uint32_t gen, bool entry,
				  int32_t id, uint32_t max)
{
	uint32_t level;

	if (d->gen != gen) {
		d->gen = gen;
		d->open = 0;
	}
	if (entry) {
		if (d->open < UINT32_MAX)
			d->open++;
		if (d->open <= RT_DEPTH_IDS)
			d->ids[d->open - 1] = id;
		return d->open <= max;
	}
	if (!d->open)
		return true;
	if (d->open > RT_DEPTH_IDS)
		return d->open-- <= max;
	for (level = d->open; level; level--) {
		if (d->ids[level - 1] == id) {
			d->open = level - 1;
			return level <= max;
		}
	}
	/* no open call of it: one that began before the trace saw it, or
	 * whose entry was lost; the stack stays as it is */
	return d->open <= max;
}

#endif
