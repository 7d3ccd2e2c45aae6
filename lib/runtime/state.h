/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime's shared state and the helpers every part uses: the one
 * global state, the API lock, the options from the environment (parsed
 * once), the TSC facts, and signal-safe output.  It depends on no other
 * part of the runtime; they all depend on it.
 */
#ifndef XRAYFDR_LIB_RUNTIME_STATE_H
#define XRAYFDR_LIB_RUNTIME_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "tsc.h"

struct rt_sink;

struct rt_state {
	struct rt_options opts; /* of the current (or last) trace */
	struct rt_tsc_facts tsc;
	bool tsc_known;
	const struct rt_sink *sink; /* where the records go */
	size_t capacity; /* bytes of records a buffer holds */
	uint32_t generation; /* of the current trace; never reused */
	volatile int status; /* enum XRayLogInitStatus */
	volatile int flush_status; /* enum XRayLogFlushStatus */
	/* func_duration_threshold_us, which the drains apply (logbuf.h) */
	uint64_t threshold_ticks;
	pid_t pid;
	uint64_t dropped; /* events that found no room, or nested */
	bool membarrier; /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ works */
	bool own_rseq; /* threads register their own rseq area */
	char last_log[4096]; /* the file the last flush wrote */
	/* The name the kernel gave the process's threads at exec (read
	 * before main(), or at the first trace): a thread that has only it
	 * gets no thread-name events, so that a program that names no
	 * thread writes the records LLVM's runtime writes, and nothing
	 * else; readers show such a thread unnamed. */
	char exec_name[16];
};

/* Note the name of the calling thread as rt.exec_name, once. */
void rt_note_exec_name(void);

extern struct rt_state rt;

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

/* Print to stderr without stdio (async-signal-safe). */
void rt_say(const char *const *parts, size_t n);

/* Find the threads' rseq area (libc's or ours: rt.own_rseq) and register
 * for membarrier's restarts, once. */
void rt_rseq_ensure(void);
/* Where the thread's state and its rseq area are, from the thread
 * pointer (the same in every thread); finds the rseq area first. */
void rt_tls_offsets(long *self, long *rseq);
/* Decimal of @v into @buf (at least 21 bytes); returns buf. */
char *rt_utoa(uint64_t v, char *buf);

#endif
