// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Process-wide set-up, once (see init.h). */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <pthread.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "basic.h"
#include "control.h"
#include "init.h"
#include "mode_fdr.h"
#include "objects.h"
#include "state.h"
#include "trace.h"
#include "trigger.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

/* No lock may be left held in a child by a thread it does not have; they
 * are taken in their order (state.h). */
static void fork_prepare(void)
{
	rt_locks_fork_prepare();
	rt_trace_fork_prepare();
}

static void fork_parent(void)
{
	rt_trace_fork_parent();
	rt_locks_fork_parent();
}

static void fork_child(void)
{
	rt_trace_fork_child();
	rt_locks_fork_child();
	rt_control_fork_child();
	rt_control_trace_started();
	rt_trigger_fork_child();
	rt_trigger_trace_started();
}

static void do_init(void)
{
	char err[256];
	int ret;

	/* FDR mode first: it is current from the start (modes.h) */
	rt_fdr_mode_register();
	rt_basic_register();
	rt_trace_init();
	ret = arch_init(err, sizeof(err));
	if (ret) {
		pr_warn("%s; tracing is off\n", err);
		init_result = ret;
		return;
	}
	ret = rt_objects_scan();
	if (ret && ret != -ENOENT) {
		init_result = ret;
		return;
	}
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int rt_init(void)
{
	pthread_once(&init_once, do_init);
	return init_result;
}

int rt_patch(int32_t id, bool enable)
{
	int ret = rt_init();

	if (ret)
		return ret;
	return id ? rt_patch_function(id, enable) : rt_patch_all(enable);
}
