// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LLVM's "xray-fdr" log mode on the process's trace (trace.h): its
 * configuration from the environment and the mode's arguments, the
 * handlers it installs, and LLVM's buffer iterator over a stopped trace.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fdr/frame.h"
#include "../log.h"
#include "control.h"
#include "controller.h"
#include "handlers.h"
#include "logfile.h"
#include "mode_fdr.h"
#include "modes.h"
#include "state.h"
#include "trace.h"
#include "trigger.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE

/*
 * __xray_log_process_buffers(): the header, then each buffer with its
 * BufferExtents record in front, from a copy we own.
 */
static struct XRayBuffer iterator(struct XRayBuffer prev)
{
	static uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];
	static uint8_t *copy;
	static size_t copy_size;
	static struct rt_drain d = { .trace = &rt_live };
	struct fdr_frame f;
	struct rt_chunk c;

	if (rt_live.status != XRAY_LOG_FINALIZED || rt_live.opts.version < 2)
		return (struct XRayBuffer){ NULL, 0 };
	if (!prev.Data) {
		rt_log_header(&rt_live, hdr);
		rt_live.sink->drain_begin(&d, true);
		rt_live.sink->drain_end(&d);
		return (struct XRayBuffer){ hdr, sizeof(hdr) };
	}
	if (!rt_live.sink->drain_next(&d, &c)) {
		free(copy);
		copy = NULL;
		copy_size = 0;
		return (struct XRayBuffer){ NULL, 0 };
	}
	if (copy_size < c.used + MD) {
		free(copy);
		copy = malloc(rt_live.capacity + MD);
		copy_size = copy ? rt_live.capacity + MD : 0;
		if (!copy)
			return (struct XRayBuffer){ NULL, 0 };
	}
	fdr_frame_buffer(&f, false, rt_live.opts.version, c.used,
			 rt_live.opts.buffer_size);
	memcpy(copy, f.head, f.head_len);
	memcpy(copy + f.head_len, c.data, c.used);
	return (struct XRayBuffer){ copy, f.head_len + c.used };
}

static XRayLogInitStatus fdr_log_init(size_t buffer_size, size_t buffer_max,
				      void *args, size_t args_size)
{
	struct rt_options o;
	char err[512];
	int ret;

	rt_api_lock();
	if (rt_live.status != XRAY_LOG_UNINITIALIZED) {
		ret = rt_live.status;
		rt_api_unlock();
		return (XRayLogInitStatus)ret;
	}
	rt_live.status = XRAY_LOG_INITIALIZING;
	ret = rt_env_options(&o, err, sizeof(err));
	if (!ret && args)
		ret = rt_options_parse(&o, args, args_size, RT_OPT_CONFIG,
				       "xray-fdr configuration", err,
				       sizeof(err));
	if (!ret && buffer_size) {
		ret = buffer_size >= RT_MIN_BUFFER_SIZE &&
				      buffer_size <= RT_MAX_BUFFER_SIZE ?
			      0 :
			      -EINVAL;
		o.buffer_size = buffer_size;
		snprintf(err, sizeof(err), "buffer size %zu out of range",
			 buffer_size);
	}
	if (!ret && buffer_max) {
		ret = buffer_max <= RT_MAX_BUFFER_MAX ? 0 : -EINVAL;
		o.buffer_max = buffer_max;
		o.buffer_max_set = true;
		snprintf(err, sizeof(err), "buffer count %zu out of range",
			 buffer_max);
	}
	if (!ret)
		ret = rt_trig_parse(o.triggers, err, sizeof(err));
	if (!ret)
		ret = rt_trace_start(&o, err, sizeof(err));
	if (ret) {
		pr_warn("%s; tracing is off\n", err);
		rt_live.status = XRAY_LOG_UNINITIALIZED;
		rt_api_unlock();
		return XRAY_LOG_UNINITIALIZED;
	}
	/* arg1 first, so no arg entry falls back to arg0 (as LLVM does) */
	rt_set_handler_arg1(rt_fdr_handle_arg1);
	rt_set_handler_arg0(rt_fdr_handle_arg0);
	rt_set_handler_custom(rt_fdr_handle_custom);
	rt_set_handler_typed(rt_fdr_handle_typed);
	rt_modes_set_iterator(iterator);
	rt_live.status = XRAY_LOG_INITIALIZED;
	rt_live.flush_status = XRAY_LOG_NOT_FLUSHING;
	rt_update_fast();
	rt_control_trace_started();
	rt_trigger_trace_started();
	rt_api_unlock();
	return XRAY_LOG_INITIALIZED;
}

static XRayLogInitStatus fdr_log_finalize(void)
{
	XRayLogInitStatus ret;

	rt_api_lock();
	ret = (XRayLogInitStatus)rt_trace_stop();
	rt_api_unlock();
	return ret;
}

static XRayLogFlushStatus fdr_flush_log(void)
{
	XRayLogFlushStatus ret;

	rt_api_lock();
	ret = rt_trace_flush();
	rt_api_unlock();
	return ret;
}

void rt_fdr_mode_register(void)
{
	rt_modes_register("xray-fdr",
			  (XRayLogImpl){ .log_init = fdr_log_init,
					 .log_finalize = fdr_log_finalize,
					 .handle_arg0 = rt_fdr_handle_arg0,
					 .flush_log = fdr_flush_log });
}
