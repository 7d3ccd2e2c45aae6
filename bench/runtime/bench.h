/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the benchmarks' programs share (calls.c, server.c): the markers of
 * traced and untraced functions, the clocks, and starting and stopping
 * LLVM's FDR mode, which starts only through its API.  With BENCH_LLVM,
 * a program is linked with LLVM's runtime and runs it when its arguments
 * at @argi are "fdr OPTIONS".
 */
#ifndef XRAYFDR_BENCH_H
#define XRAYFDR_BENCH_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef BENCH_LLVM
/* LLVM's own headers are C++; ours declare the same functions in C */
#include <xrayfdr/xray.h>
#endif

#define TRACED __attribute__((xray_always_instrument, noinline))
/* (no_instrument_function: no mcount call in the -pg build either) */
#define NOT_TRACED \
	__attribute__((xray_never_instrument, no_instrument_function))

NOT_TRACED static inline double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Whether argv[@argi] asks for LLVM's FDR mode. */
NOT_TRACED static inline int llvm_fdr_asked(int argc, char **argv, int argi)
{
	return argc > argi && !strcmp(argv[argi], "fdr");
}

/* Start LLVM's FDR mode if asked; 0, or -1 said on stderr. */
NOT_TRACED static inline int llvm_fdr_start(int argc, char **argv, int argi)
{
#ifdef BENCH_LLVM
	if (llvm_fdr_asked(argc, argv, argi) &&
	    (__xray_log_init_mode("xray-fdr",
				  argc > argi + 1 ? argv[argi + 1] : "") !=
		     XRAY_LOG_INITIALIZED ||
	     __xray_patch() != SUCCESS)) {
		fprintf(stderr, "cannot start LLVM's FDR mode\n");
		return -1;
	}
#else
	(void)argc;
	(void)argv;
	(void)argi;
#endif
	return 0;
}

/* Write LLVM's FDR log, if it was started. */
NOT_TRACED static inline void llvm_fdr_stop(int argc, char **argv, int argi)
{
#ifdef BENCH_LLVM
	if (llvm_fdr_asked(argc, argv, argi)) {
		__xray_log_finalize();
		__xray_log_flushLog();
	}
#else
	(void)argc;
	(void)argv;
	(void)argi;
#endif
}

#endif
