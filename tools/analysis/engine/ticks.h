/* SPDX-License-Identifier: GPL-2.0-only */
/* Time from TSC ticks, in integers, for outputs that print a lot of it. */
#ifndef XRAYFDR_TOOLS_TICKS_H
#define XRAYFDR_TOOLS_TICKS_H

#include <stdint.h>

/* @ticks of a @hz clock in nanoseconds, rounded to the nearest: exact,
 * where a double would lose the low digits of long traces. */
static inline uint64_t ticks_to_ns(uint64_t ticks, uint64_t hz)
{
	unsigned __int128 n = (unsigned __int128)ticks * 2000000000u + hz;
	unsigned __int128 ns = n / (2 * (unsigned __int128)hz);

	/* a slow clock's huge count (a hostile log) stops at the largest */
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* Whether @ticks of a @hz clock last less than @ns nanoseconds, exactly. */
static inline int ticks_below_ns(uint64_t ticks, uint64_t hz, uint64_t ns)
{
	return (unsigned __int128)ticks * 1000000000u <
	       (unsigned __int128)ns * hz;
}

/* The fewest ticks of a @hz clock (0: unknown, a tick is a nanosecond)
 * that last @ns nanoseconds or more: d < this exactly when d ticks are
 * below @ns. */
static inline uint64_t ticks_at_least_ns(uint64_t ns, uint64_t hz)
{
	unsigned __int128 n = (unsigned __int128)ns * hz;

	if (!hz)
		return ns;
	n = (n + 999999999u) / 1000000000u;
	return n > UINT64_MAX ? UINT64_MAX : (uint64_t)n;
}

#endif
