/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* LLVM's "xray-fdr" log mode (mode_fdr.c). */
#ifndef XRAYFDR_LIB_RUNTIME_MODE_FDR_H
#define XRAYFDR_LIB_RUNTIME_MODE_FDR_H

/* Register the mode (modes.h). */
void rt_fdr_mode_register(void);

#endif
