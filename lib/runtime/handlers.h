/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the trampolines call: the handlers LLVM's API installs (the words
 * are in state.c, where the trampolines read them), and whether the fast
 * path may write in their place.  Setting a handler recomputes that.
 */
#ifndef XRAYFDR_LIB_RUNTIME_HANDLERS_H
#define XRAYFDR_LIB_RUNTIME_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/xray.h>

void rt_set_handler_arg0(void (*fn)(int32_t, XRayEntryType));
void rt_set_handler_arg1(void (*fn)(int32_t, XRayEntryType, uint64_t));
void rt_set_handler_custom(void (*fn)(void *, size_t));
void rt_set_handler_typed(void (*fn)(uint16_t, const void *, size_t));

/* Recompute rt_fast_key after a handler or the trace's status changed:
 * the fast path writes only for FDR mode's own handlers, while a trace
 * records and no option needs the C path. */
void rt_update_fast(void);

#endif
