/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Triggers: snapshots the process takes of its own trace when something
 * happens, so that what led up to it is kept while the program runs on.
 *
 *   trigger=FUNC>DURATION  a call of a function FUNC matches (a pattern
 *                          as XRAYFDR_FILTER's, ../filter/filter.h) lasted
 *                          longer than DURATION, seen at its exit
 *   trigger=signal=SIG     the process got signal SIG
 *   post=DURATION          go on recording that long before the snapshot
 *   max_snapshots=N        at most N snapshots (0: no limit)
 *   snapshot_interval=DUR  at least that long between two snapshots
 *   snapshot_dir=DIR       where they go (default: the working directory)
 *
 * A duration trigger costs nothing to the functions it does not name:
 * only the sleds of those it names call the trigger trampolines
 * (trampolines.S), which time the call on the thread's trigger stack and
 * call rt_trigger_exit() for a call longer than the smallest threshold.
 * What fired is handed to the trigger thread, which waits out post=,
 * takes the snapshot (trace.h) into a file of its own and writes what
 * fired into the log's info event.  One trigger is handled at a time:
 * those that fire meanwhile, or beyond the limits, are counted and said
 * at the end.
 *
 * trigger_fire.c is the part the trampolines reach (free of vector
 * registers, as fdr.c); trigger_select.c reads the options and marks the
 * functions; trigger.c runs the thread.
 */
#ifndef XRAYFDR_LIB_RUNTIME_TRIGGER_H
#define XRAYFDR_LIB_RUNTIME_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../xray/instr_map.h"

#define RT_TRIG_MAX 8 /* triggers of one process */
#define RT_TRIG_OBJECTS 16 /* objects.c's MAX_OBJECTS */

/* What fired (trigger_fire.c hands it to the thread). */
enum rt_trig_kind {
	RT_TRIG_NONE,
	RT_TRIG_DURATION,
	RT_TRIG_SIGNAL,
};

struct rt_trig_event {
	enum rt_trig_kind kind;
	uint32_t trigger; /* index into the specs */
	uint32_t tid;
	int32_t function; /* a duration trigger's function id */
	uint64_t cycles; /* the call's duration in TSC cycles */
	uint64_t end_tsc; /* when it returned (or the signal came) */
};

/* trigger_fire.c: read by the trampolines */
extern uint64_t rt_trig_min_cycles;
extern uintptr_t rt_trig_next[4];
/* each function's trigger (its index + 1; 0: none), per object */
extern uint8_t *rt_trig_fn[RT_TRIG_OBJECTS];
extern uint32_t rt_trig_nfn[RT_TRIG_OBJECTS];
extern uint64_t rt_trig_cycles[RT_TRIG_MAX];
/* the trigger thread's eventfd (-1: no thread) */
extern int rt_trig_efd;

/* The trampolines' call for an exit they could not settle alone (sled
 * word @word). */
void rt_trigger_exit(uint32_t word);
/* Hand @ev to the trigger thread unless it is busy: false if it was (the
 * event is counted as suppressed). */
bool rt_trigger_fire(const struct rt_trig_event *ev);
/* Take the event the thread was handed (RT_TRIG_NONE if none), and let
 * the next one in when done. */
bool rt_trigger_take(struct rt_trig_event *ev);
void rt_trigger_done(void);
uint64_t rt_trigger_suppressed(void);
void rt_trigger_suppress(void);

/* trigger_select.c */
struct rt_trig_spec {
	char text[256]; /* as given: "slow>1ms", "signal=USR2" */
	enum rt_trig_kind kind;
	char pattern[240]; /* a duration trigger's function pattern */
	uint64_t ns; /* its duration */
	int signal;
};

/*
 * Parse the trigger= lines of @text (one trigger per line) into the
 * process's specs.  Return 0, or -EINVAL with the trigger and the reason
 * in @err.
 */
int rt_trig_parse(const char *text, char *err, size_t errlen);
size_t rt_trig_count(void);
const struct rt_trig_spec *rt_trig_spec(size_t i);
/* Are there duration triggers (sleds to send to the trigger trampolines)? */
bool rt_trig_durations(void);
/*
 * Mark the functions of object @index (file @path at @bias, @map) that a
 * duration trigger names.  Return the number marked, or a negative errno.
 */
int rt_trig_select(size_t index, const char *path, uintptr_t bias,
		   const struct xray_instr_map *map);
/* The thresholds in TSC cycles at @hz: until then none fires. */
void rt_trig_arm(uint64_t hz);
/* Does the function @f (1-based) of object @index have a trigger? */
bool rt_trig_marked(size_t index, uint32_t f);
/* An object is gone: its marks go too. */
void rt_trig_forget(size_t index);

/* trigger.c */
/* A trace has started (or goes on in a forked child): start the trigger
 * thread once per process if there are triggers. */
void rt_trigger_trace_started(void);
void rt_trigger_fork_child(void);
/* End the trigger thread and give back the signals' handlers (detach). */
void rt_trigger_stop(void);

#endif
