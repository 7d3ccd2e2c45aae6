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

/* Listen (once per process): 0, or a negative errno (the trace goes on
 * without a channel). */
int rt_control_start(void);
/* fork(): in the child, before it may start its own. */
void rt_control_fork_child(void);

#endif
