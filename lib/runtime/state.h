/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime's shared state and the helpers every part uses: the
 * process's facts, its trace, the per-thread state and the words the
 * trampolines read, the API lock, the options from the environment
 * (parsed once), the TSC facts, and signal-safe output.  It depends on no
 * other part of the runtime; they all depend on it.
 */
#ifndef XRAYFDR_LIB_RUNTIME_STATE_H
#define XRAYFDR_LIB_RUNTIME_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "tsc.h"

struct rt_sink;

/* What the process knows whatever it traces. */
struct rt_state {
	struct rt_tsc_facts tsc;
	bool tsc_known;
	/* the sources rt.tsc was probed from (rt_tsc_ensure()) */
	char tsc_sysfs[PATH_MAX];
	unsigned int tsc_sources;
	bool membarrier; /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ works */
	bool own_rseq; /* threads register their own rseq area */
	/* The name the kernel gave the process's threads at exec (read
	 * before main(), or at the first trace): a thread that has only it
	 * gets no thread-name events, so that a program that names no
	 * thread writes the records LLVM's runtime writes, and nothing
	 * else; readers show such a thread unnamed. */
	char exec_name[16];
};

/*
 * A trace: what its log is written with, and where its records go.  The
 * process's own is rt_live, which only trace.c starts, stops and flushes;
 * a dump of a kept session describes that session's trace in one of its
 * own (dump.c), so that the log writer (logfile.h) and the drains take
 * the trace they write rather than a process global.
 */
struct rt_trace {
	struct rt_options opts;
	struct rt_tsc_facts tsc; /* for the log's header and info event */
	const struct rt_sink *sink; /* where the records go */
	size_t capacity; /* bytes of records a buffer holds */
	uint32_t generation; /* of the current trace; never reused */
	volatile int status; /* enum XRayLogInitStatus */
	volatile int flush_status; /* enum XRayLogFlushStatus */
	/* func_duration_threshold_us, which the drains apply (logbuf.h) */
	uint64_t threshold_ticks;
	pid_t pid;
	uint64_t dropped; /* events that found no room, or nested */
	/* streaming: non-zero while the writer runs and can write; the
	 * times the writer freed room (or stopped), which threads waiting
	 * for room sleep on, and the word it naps on (stream.h) */
	volatile int stream_alive;
	uint32_t stream_passes;
	uint32_t stream_kick;
	char last_log[4096]; /* the file the last flush wrote */
};

/*
 * The runtime's own threads (the stream's writer, the control channel's,
 * the trigger thread): each says so when it starts, so that the CPU
 * rings' drain leaves out the scheduler records the module writes of
 * them, which would show as a thread of the program that ran nothing.
 * A forked child has none of them.
 */
void rt_internal_thread_begin(void);
bool rt_internal_thread(uint32_t tid);

/* Note the name of the calling thread as rt.exec_name, once. */
void rt_note_exec_name(void);

extern struct rt_state rt;
/* The process's trace: defined here, at the bottom, for the recording
 * path to read; trace.c alone changes it. */
extern struct rt_trace rt_live;

/*
 * The runtime's locks, in the order they are taken: the registry of log
 * modes (xray_api.c), then the API lock (tracing state and patching), then
 * the sink's own.
 */
void rt_registry_lock(void);
void rt_registry_unlock(void);
void rt_api_lock(void);
void rt_api_unlock(void);
/* fork(): take both before, release them after in the parent, and make
 * them free in the child (whoever held them is not there). */
void rt_locks_fork_prepare(void);
void rt_locks_fork_parent(void);
void rt_locks_fork_child(void);

/*
 * The options of XRAY_OPTIONS, XRAY_FDR_OPTIONS and XRAYFDR_OPTIONS (see
 * options.h) into @o: read and parsed once per process, at the first call.
 * Return 0, or -EINVAL with the reason in @err (the same every time).
 */
int rt_env_options(struct rt_options *o, char *err, size_t errlen);
/* Does the program have options of its own (__xray_default_options(),
 * which rt_env_options() reads first, as LLVM does)? */
bool rt_program_has_options(void);

/*
 * The TSC facts from @o's sources (tsc_sysfs, tsc_sources) into rt.tsc,
 * probed again only when those change.  Return 1 if it probed, 0 if the
 * facts were known, or a negative errno when no source answered.
 */
int rt_tsc_ensure(const struct rt_options *o);

/* Print to stderr without stdio (async-signal-safe): @n parts, at most
 * RT_SAY_MAX (more are left out). */
#define RT_SAY_MAX 16
void rt_say(const char *const *parts, size_t n);

/* Decimal of @v into @buf (at least 21 bytes); returns buf. */
char *rt_utoa(uint64_t v, char *buf);

#endif
