/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * TSC facts for the log header: the counter's frequency and whether it is
 * constant (does not follow the CPU clock), nonstop (keeps counting in deep
 * sleep states) and the kernel's reliable clocksource.
 *
 * Sources, in order of trust; the first that answers gives the frequency:
 *  1. the kernel module's sysfs files (DIR/tsc_khz, constant_tsc,
 *     nonstop_tsc, tsc_reliable: one decimal integer per file);
 *  2. the kernel's own TSC-to-nanoseconds conversion, published in a
 *     perf_event mmap page (cap_user_time, time_mult, time_shift);
 *  3. CPUID (a hypervisor's TSC leaf, leaf 0x15, leaf 0x16);
 *  4. a short calibration against CLOCK_MONOTONIC_RAW, flagged as such.
 * Without the module the bits come from the kernel's /proc/cpuinfo flags
 * (or the CPUID invariant-TSC bit), reliability from the current
 * clocksource.  Nothing here runs per event.
 */
#ifndef XRAYFDR_LIB_RUNTIME_TSC_H
#define XRAYFDR_LIB_RUNTIME_TSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

struct rt_tsc_facts {
	uint64_t hz;
	bool constant_tsc;
	bool nonstop_tsc;
	bool reliable;
	enum rt_tsc_source source; /* where hz came from */
};

struct rt_tsc_paths {
	const char *sysfs; /* the module's directory */
	const char *cpuinfo; /* /proc/cpuinfo */
	const char *clocksource; /* current_clocksource */
	/* nonzero: the frequency, calibrated on this machine by another
	 * process, taken where calibrating would be the answer */
	uint64_t calibrated_hz;
};

/*
 * Probe the sources in @sources (enum rt_tsc_source mask) in order of
 * trust.  @paths NULL: the real files.  Return 0, or -ENODATA if no
 * source in the mask answered.
 */
int rt_tsc_probe(const struct rt_tsc_paths *paths, unsigned int sources,
		 struct rt_tsc_facts *f);

/* "sysfs", "perf", "cpuid", "calibrated". */
const char *rt_tsc_source_name(enum rt_tsc_source s);

/* One sysfs value: decimal digits, then a newline or nothing.  Return 0,
 * -EBADMSG for anything else, -ERANGE past 64 bits. */
int rt_tsc_parse_uint(const char *buf, size_t len, uint64_t *out);

/* The kernel's conversion as a frequency: 1e9 * 2^shift / mult, rounded. */
uint64_t rt_tsc_hz_from_mult(uint32_t mult, uint16_t shift);

#endif
