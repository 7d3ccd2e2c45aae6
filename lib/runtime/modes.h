/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The registry of LLVM's log modes: the modes register themselves (FDR
 * mode from mode_fdr.c, basic mode from basic.c, a program's own through
 * __xray_log_register_mode()), and LLVM's API (xray_api.c) selects and
 * drives the current one.  The first mode registered is current from the
 * start, its handlers not yet installed; rt_init() registers FDR mode
 * first.  One lock guards it, as in LLVM's runtime (rt_registry_lock()).
 */
#ifndef XRAYFDR_LIB_RUNTIME_MODES_H
#define XRAYFDR_LIB_RUNTIME_MODES_H

#include <stddef.h>

#include <xrayfdr/xray.h>

XRayLogRegisterStatus rt_modes_register(const char *mode, XRayLogImpl impl);
/* Make @mode current and install its arg0 handler. */
XRayLogRegisterStatus rt_modes_select(const char *mode);
/* The current mode's name, NULL if none. */
const char *rt_modes_current(void);
/* A mode of no name as the current one; an incomplete @impl leaves none
 * (and removes the handlers). */
void rt_modes_set_impl(XRayLogImpl impl);
void rt_modes_remove_impl(void);

/* The current mode's entry points: what they return, or, with no mode,
 * XRAY_LOG_UNINITIALIZED and XRAY_LOG_NOT_FLUSHING. */
XRayLogInitStatus rt_modes_init(size_t buffer_size, size_t buffer_max,
				void *args, size_t args_size);
XRayLogInitStatus rt_modes_finalize(void);
XRayLogFlushStatus rt_modes_flush(void);

/* LLVM's buffer iterator: set (NULL: none) and run over every buffer. */
void rt_modes_set_iterator(XRayBuffer (*it)(XRayBuffer));
XRayLogFlushStatus rt_modes_process_buffers(void (*processor)(const char *,
							      XRayBuffer));

#endif
