/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The xrayfdr tracing runtime: record a program built with
 * clang -fxray-instrument into an XRay FDR log.
 *
 * Most programs need none of this: XRAYFDR_OPTIONS or
 * XRAY_OPTIONS="patch_premain=true xray_mode=xray-fdr" in the environment
 * traces a program from start to exit (`xrayfdr record` sets it up), see
 * Documentation/runtime.rst.  These calls are for programs that choose
 * what and when to record.  LLVM's own API is in <xrayfdr/xray.h>.
 *
 * Thread mode: each thread fills buffers of buffer_size bytes taken from
 * a queue of buffer_max; when they run out, the oldest full buffer is
 * recycled (a flight recorder keeps the newest window).  Every lost event
 * is counted, in xrayfdr_trace_stats() and in the log.
 *
 * All functions return 0 or a negative errno (and set errno).
 */
#ifndef XRAYFDR_RUNTIME_H
#define XRAYFDR_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill with XRAYFDR_OPTS(xrayfdr_trace_opts, ...); zero means "from the
 * environment, else the default". */
struct xrayfdr_trace_opts {
	size_t sz;
	uint64_t buffer_size; /* bytes per buffer (default 64 KiB) */
	uint64_t buffer_max; /* buffers in the queue (default 256) */
	/* Leave out calls shorter than this, as LLVM's FDR mode does
	 * (func_duration_threshold_us), as the log is written.  Default 0. */
	uint64_t threshold_us;
	unsigned int version; /* FDR log version: 5 (default) or 1 */
	const char *output; /* the log's path; default below */
	/* default "xray-log.": logs are named <base><program>.<random> */
	const char *logfile_base;
	/* Record only calls at most this many levels deep in each thread
	 * (the outermost traced call is level 1); every call then takes
	 * the slower C path.  Default 0: all. */
	uint64_t max_depth;
	/* Write every record to the log while the program runs, instead of
	 * keeping the newest window (thread mode; a thread that finds the
	 * buffers full waits for the writer). */
	bool stream;
};

/*
 * Start recording: set up the buffers and patch every sled.  -EBUSY if a
 * trace is already running (stop and flush it first); -EINVAL for a bad
 * option; -ENOENT if nothing in the process is instrumented.
 */
XRAYFDR_API int xrayfdr_trace_start(const struct xrayfdr_trace_opts *opts);
/* Stop recording (sleds stay patched but record nothing). */
XRAYFDR_API int xrayfdr_trace_stop(void);
/*
 * Write the log of a stopped trace and release it.  @path, if not NULL,
 * receives the file name (@size bytes).  -EAGAIN if the trace was not
 * stopped; -ENODATA if there is none; -errno of a failed write.
 */
XRAYFDR_API int xrayfdr_trace_flush(char *path, size_t size);

struct xrayfdr_trace_stats {
	size_t sz;
	uint64_t events; /* in the buffers now */
	uint64_t overwritten; /* lost to recycled buffers */
	uint64_t dropped; /* lost because no buffer was free, or nested in a
			     signal handler during the runtime's slow path */
	uint64_t buffers; /* in use or full */
	uint64_t recycled; /* buffers recycled */
	/* a snapshot of CPU rings: sub-buffers written over while it copied
	 * them, left out */
	uint64_t cut;
	/* CPU mode: the module's scheduler records it could not write into
	 * the rings, and the damaged parts of the rings the drain skipped */
	uint64_t kernel_lost;
	uint64_t damaged;
};

XRAYFDR_API int xrayfdr_trace_stats(struct xrayfdr_trace_stats *stats);

/* Fill with XRAYFDR_OPTS(xrayfdr_snapshot_opts, ...). */
struct xrayfdr_snapshot_opts {
	size_t sz;
	/* replace an existing @path (a regular file of the caller's with one
	 * link); else an existing @path is -EEXIST */
	bool overwrite;
	/* the counts of the log written (may be NULL) */
	struct xrayfdr_trace_stats *stats;
};

/**
 * xrayfdr_snapshot() - write the newest window of the running trace as a
 * log, and go on tracing
 * @path: the FDR log to write (created mode 0644, never through a
 *	symbolic link)
 * @opts: options, or NULL
 *
 * The flight recorder read in flight: what the buffers hold now, as the
 * flush would write it, while every thread goes on recording; the next
 * snapshot holds what came after, and the log the trace writes when it
 * ends is unchanged.  No thread stops: the calling thread copies the
 * buffers (or CPU mode's rings) while the writers go on, and gives the
 * copy's memory back once the log is written (Documentation/runtime.rst,
 * "Snapshots").  The info event says snapshot=api.
 *
 * Return: 0; -ENODATA if no trace is running (or it was flushed);
 * -ENOTSUP in LLVM's basic mode; -EEXIST; another negative errno of the
 * write.
 */
XRAYFDR_API int xrayfdr_snapshot(const char *path,
				 const struct xrayfdr_snapshot_opts *opts);

/**
 * xrayfdr_attach_begin() - start a trace in a process the library was
 * loaded into while it ran (xrayfdr attach calls it; programs do not)
 * @options: XRAYFDR_OPTIONS' syntax, over the environment's
 * @filter: XRAYFDR_FILTER's syntax, or NULL for every function
 * @err: where the reason goes when it fails
 * @errlen: its size
 *
 * Patches the sleds the filter selects and opens the control channel,
 * whose "detach" request ends the trace: every sled unpatched, the log
 * written, the trace's threads and signal handlers gone
 * (Documentation/runtime.rst, "Attach").
 *
 * Return: 0; -EBUSY if the process is traced already; -ENOENT if nothing
 * is instrumented; -EINVAL for bad options; another negative errno.
 */
XRAYFDR_API int xrayfdr_attach_begin(const char *options, const char *filter,
				     char *err, size_t errlen);

/* Patch or unpatch all sleds, or those of one function id. */
XRAYFDR_API int xrayfdr_patch(void);
XRAYFDR_API int xrayfdr_unpatch(void);
XRAYFDR_API int xrayfdr_patch_function(int32_t id);
XRAYFDR_API int xrayfdr_unpatch_function(int32_t id);

/*
 * The TSC facts written to the log header, and where they came from:
 * "sysfs" (the kernel module), "perf" (the kernel's conversion), "cpuid",
 * or "calibrated" (measured against CLOCK_MONOTONIC_RAW).
 */
struct xrayfdr_tsc_info {
	size_t sz;
	uint64_t hz;
	bool constant_tsc;
	bool nonstop_tsc;
	bool reliable; /* the kernel's clocksource is the TSC */
	const char *source;
};

XRAYFDR_API int xrayfdr_tsc_info(struct xrayfdr_tsc_info *info);

/*
 * Instrumented objects: index 0 is the main program (function ids 1..n,
 * as llvm-xray extract numbers them), then each instrumented shared
 * object in load order, whose function ids are (index << 24) | n.
 */
struct xrayfdr_object_info {
	size_t sz;
	const char *path;
	uintptr_t load_bias; /* runtime address - link address */
	int32_t first_id;
	uint32_t functions;
	uint32_t sleds;
};

/* -ENOENT past the last object. */
XRAYFDR_API int xrayfdr_object_info(unsigned int index,
				    struct xrayfdr_object_info *info);

/* Fill with XRAYFDR_OPTS(xrayfdr_dump_opts, ...). */
struct xrayfdr_dump_opts {
	size_t sz;
	const char *device; /* the module's device; NULL: /dev/xrayfdr */
	/* the counts of the log written (may be NULL) */
	struct xrayfdr_trace_stats *stats;
	/* replace an existing @path (a regular file of the caller's with one
	 * link); else an existing @path is -EEXIST */
	bool overwrite;
	/* a snapshot: the session may be live, its process still writing;
	 * a consistent copy is read, and the info event's snapshot= says
	 * this (what asked for it) */
	const char *snapshot;
};

/**
 * xrayfdr_session_dump() - write a session kept by the kernel module as a
 * log
 * @id: the session (xrayfdr-ctl list); its process has exited or died
 * @path: the FDR log to write
 * @opts: options, or NULL
 *
 * A process that recorded in CPU mode with keep=true leaves its rings in
 * the module when it dies, however it dies.  This attaches to them
 * read-only and writes what they hold as a standard log (the version and
 * TSC facts the process used, its instrumented objects in the info event),
 * as the process's own flush would have.  The session's owner and
 * CAP_SYS_ADMIN may; the session stays until dropped (xrayfdr-ctl drop).
 * The reasons for a failure are printed (xrayfdr_set_print()).
 *
 * With @opts->snapshot the session may also be live (its process still
 * running and tracing): the rings are copied without stopping any writer,
 * each sub-buffer whole or, if written over while it was copied, left
 * out and counted (stats->cut, cut= in the info event).
 *
 * Return: 0; -ENODEV without the module; -ENOENT if no such session is
 * kept (listed, for a snapshot); -EPERM if it is not the caller's;
 * -EBUSY if it is live and this is no snapshot; another negative errno.
 */
XRAYFDR_API int xrayfdr_session_dump(uint32_t id, const char *path,
				     const struct xrayfdr_dump_opts *opts);

/**
 * xrayfdr_rings_write() - write the CPU rings a descriptor maps as a log
 * @rings: /dev/xrayfdr attached to a session (XRAY_FDR_IOC_ATTACH), or
 *	the sealed memfd of a process's own CPU rings, which its control
 *	channel hands out (lib/util/control_proto.h, "rings")
 * @out: the log, created by the caller
 * @opts: options, or NULL (device and overwrite are not used)
 *
 * What xrayfdr_session_dump() does after it attached, for callers that
 * find the rings themselves (`xrayfdr snapshot PID`).  The rings are
 * hostile input: everything is checked.  The caller traces nothing.
 *
 * Return: 0; -EPROTO if @rings are no rings; another negative errno.
 */
XRAYFDR_API int xrayfdr_rings_write(int rings, int out,
				    const struct xrayfdr_dump_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* XRAYFDR_RUNTIME_H */
