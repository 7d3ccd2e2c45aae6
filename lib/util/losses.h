/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every summary line of a log says was lost besides the events
 * overwritten and dropped: the runtime's at exit, xrayfdr record's,
 * xrayfdr snapshot's and xrayfdr-ctl dump's say it the same way.
 */
#ifndef XRAYFDR_LIB_UTIL_LOSSES_H
#define XRAYFDR_LIB_UTIL_LOSSES_H

#include <stdint.h>

/* room for both parts with 20-digit counts, and the NUL */
#define LOSSES_TEXT_MAX 112

/*
 * ", K scheduler records lost" (the kernel's records lost, kernel_lost)
 * and ", M damaged parts of the rings skipped" (damaged), each only when
 * not 0, into @buf; returns @buf ("" when both are 0).  Only plain
 * stores: the runtime's line at exit is written from a fatal signal too.
 */
const char *losses_text(char buf[LOSSES_TEXT_MAX], uint64_t kernel_lost,
			uint64_t damaged);

#endif
