/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Process-wide set-up, once, and what every API entry point calls. */
#ifndef XRAYFDR_LIB_RUNTIME_INIT_H
#define XRAYFDR_LIB_RUNTIME_INIT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Process-wide set-up, once: CPU checks, the instrumented objects, fork
 * handlers.  Safe to call from any API entry point.  Return 0 (also when
 * nothing is instrumented: patching says so), or a negative errno (and
 * tracing stays off; the reason was printed).
 */
int rt_init(void);

/* What both APIs call: initialise, then patch one function (@id) or all
 * (@id 0).  Return 0 or a negative errno. */
int rt_patch(int32_t id, bool enable);

#endif
