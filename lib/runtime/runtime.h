/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime's internal interfaces: one global state, the FDR controller
 * (fdr.c), the flush (flush.c), the instrumented objects (objects.c) and
 * start-up (init.c).
 */
#ifndef XRAYFDR_LIB_RUNTIME_RUNTIME_H
#define XRAYFDR_LIB_RUNTIME_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <xrayfdr/xray.h>

#include "../arch/x86_64/arch.h"
#include "bufq.h"
#include "options.h"
#include "thread.h"
#include "tsc.h"

struct rt_state {
	struct rt_options opts; /* of the current (or last) trace */
	struct rt_tsc_facts tsc;
	bool tsc_known;
	struct rt_bufq q;
	uint32_t generation; /* of the queue; never reused */
	volatile int status; /* enum XRayLogInitStatus */
	volatile int flush_status; /* enum XRayLogFlushStatus */
	uint64_t threshold_ticks;
	pid_t pid;
	uint64_t dropped; /* events that found no buffer or nested */
	bool membarrier; /* MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ works */
	bool own_rseq; /* threads register their own rseq area */
	char last_log[4096]; /* the file the last flush wrote */
};

extern struct rt_state rt;

/* Locking order: rt_api_lock (API and patching) before the queue's lock. */
void rt_api_lock(void);
void rt_api_unlock(void);

/*
 * Process-wide set-up, once: CPU checks, rseq, TSC facts, objects.  Safe
 * to call from any API entry point.  Return 0 or a negative errno (and
 * tracing stays off; the reason was printed).
 */
int rt_init(void);

/* xray_api.c: register "xray-fdr" and make it the current mode. */
void rt_register_fdr_mode(void);
/* The mode registry's lock, for fork(): taken before rt_api_lock(). */
void rt_registry_lock(void);
void rt_registry_unlock(void);
void rt_registry_reset(void);

/*
 * fdr.c: the recording path, free of vector registers.  Return
 * RT_LIGHT_DONE, or what the caller must do after saving everything.
 */
enum rt_light {
	RT_LIGHT_DONE = 0,
	RT_LIGHT_SETUP = 1, /* set the thread up, then call again */
	/* the event was dropped; say why (each once) */
	RT_LIGHT_WARN_EMPTY = 2,
	RT_LIGHT_WARN_BIG = 4,
	RT_LIGHT_WARN_V1 = 8,
};

/* @op: ENTRY, EXIT, TAIL, or LOG_ARGS_ENTRY with @arg */
int rt_fdr_light(int op, int32_t id, uint64_t arg);
int rt_fdr_light_event(int typed, uint16_t type, const void *data, size_t size);
extern int rt_warned;

/* fdr_setup.c: the rest of LLVM's FDR mode, in thread buffers. */
/*
 * The TSC facts from @o's sources (tsc_sysfs, tsc_sources) into rt.tsc,
 * probed again only when those change.  Return 1 if it probed, 0 if the
 * facts were known, or a negative errno when no source answered.
 */
int rt_tsc_ensure(const struct rt_options *o);
int rt_fdr_init(const struct rt_options *o, char *err, size_t errlen);
int rt_fdr_finalize(void);
/* The trampolines' way when rt_fdr_light*() asked for more. */
void rt_fdr_heavy(int op, int32_t id, uint64_t arg);
void rt_fdr_heavy_event(int typed, uint16_t type, const void *data,
			size_t size);
/* The handlers as LLVM's API installs them; the trampolines recognise
 * them and take the light path. */
void rt_fdr_handle_arg0(int32_t id, enum XRayEntryType kind);
void rt_fdr_handle_arg1(int32_t id, enum XRayEntryType kind, uint64_t arg);
void rt_fdr_handle_custom(void *data, size_t size);
void rt_fdr_handle_typed(uint16_t type, const void *data, size_t size);
/* Recompute rt_fast_gen after a handler or the status changed. */
void rt_fdr_update_fast(void);
/* Stop every writer (fast path off, wait for those in flight). */
void rt_fdr_quiesce(void);
/* fork(): the child's view of the queue. */
void rt_fdr_fork_child(void);

/* flush.c */
enum XRayLogFlushStatus rt_flush(void);
/* Async-signal-safe flush of whatever is recorded (fatal signals). */
void rt_flush_emergency(void);
void rt_install_signal_handlers(void);
/* __xray_log_process_buffers() iterator */
struct XRayBuffer rt_fdr_iterator(struct XRayBuffer prev);

/* objects.c: instrumented objects and their sleds */
int rt_objects_scan(void);
int rt_patch_all(bool enable);
int rt_patch_function(int32_t id, bool enable);
/* What both APIs call: initialise, then patch one function (@id) or
 * all (@id 0).  Return 0 or a negative errno. */
int rt_patch(int32_t id, bool enable);
uintptr_t rt_function_address(int32_t id);
size_t rt_max_function_id(void);
/* Object table text for the log ("0 0x1 /path\n" ...), signal-safe read. */
const char *rt_objects_text(void);

/* Print to stderr without stdio (async-signal-safe). */
void rt_say(const char *const *parts, size_t n);
/* Decimal of @v into @buf (at least 21 bytes); returns buf. */
char *rt_utoa(uint64_t v, char *buf);

#endif
