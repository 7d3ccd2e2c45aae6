/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control channel of a traced process: how `xrayfdr snapshot PID`
 * asks a running program for a snapshot of its trace
 * (../util/control_proto.h).  Opened when a trace starts, unless
 * control=false; it stays for the life of the process (a later trace
 * answers on it), and a forked child that traces opens its own.
 */
#ifndef XRAYFDR_LIB_RUNTIME_CONTROL_H
#define XRAYFDR_LIB_RUNTIME_CONTROL_H

#include <stdbool.h>

/*
 * A trace has started (or goes on in a forked child): listen, once per
 * process, if the trace's options and sink want a channel.  Only where
 * there are snapshots to take: thread mode, and CPU mode on rings of the
 * runtime's own, which the channel hands out; not on the module's rings,
 * where the module would record the channel's thread as one of the
 * program's (a snapshot reads those through the module).  Without a channel the
 * process is still traced; with verbosity, a warning says so.
 */
void rt_control_trace_started(void);
/* fork(): in the child, before it may start its own. */
void rt_control_fork_child(void);

/*
 * Attach (api.c): @fn serves the next "detach" request, which closes the
 * channel; with it set, the channel opens whatever the sink (the trace
 * of an attach ends through it).  @fn returns 0 or a negative errno.
 */
typedef int (*rt_control_detach_fn)(void);
void rt_control_set_detach(rt_control_detach_fn fn);
/* While attached, the channel's thread calls @fn every
 * RT_CONTROL_TICK_MS (objects the program loads or unloads). */
#define RT_CONTROL_TICK_MS 100
void rt_control_set_tick(void (*fn)(void));
/* Is this process listening? */
bool rt_control_listening(void);

#endif
