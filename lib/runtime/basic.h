/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* LLVM's basic mode, "xray-basic" (basic.c). */
#ifndef XRAYFDR_LIB_RUNTIME_BASIC_H
#define XRAYFDR_LIB_RUNTIME_BASIC_H

#include <stddef.h>

#include <xrayfdr/xray.h>

/* Register the mode (modes.h). */
void rt_basic_register(void);
/* At exit: write what the threads hold, if the mode is recording. */
void rt_basic_shutdown(void);

#endif
