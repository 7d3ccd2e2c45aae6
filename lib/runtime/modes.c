// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The registry of log modes (see modes.h). */
#define LOG_DOMAIN "xrayfdr"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "handlers.h"
#include "modes.h"
#include "state.h"

#define MAX_MODES 16

struct mode {
	const char *name;
	XRayLogImpl impl;
};

static struct mode modes[MAX_MODES];
static size_t nmodes;
static const struct mode *current_mode;
static XRayLogImpl current_impl;
static bool have_impl;

static XRayBuffer null_iterator(XRayBuffer b)
{
	(void)b;
	return (XRayBuffer){ NULL, 0 };
}

static XRayBuffer (*volatile buffer_iterator)(XRayBuffer) = null_iterator;

static bool complete(const XRayLogImpl *impl)
{
	return impl->log_init && impl->log_finalize && impl->handle_arg0 &&
	       impl->flush_log;
}

XRayLogRegisterStatus rt_modes_register(const char *mode, XRayLogImpl impl)
{
	XRayLogRegisterStatus ret = XRAY_REGISTRATION_OK;

	if (!mode || !complete(&impl))
		return XRAY_INCOMPLETE_IMPL;
	rt_registry_lock();
	for (size_t i = 0; i < nmodes; i++)
		if (!strcmp(modes[i].name, mode))
			ret = XRAY_DUPLICATE_MODE;
	if (ret == XRAY_REGISTRATION_OK) {
		char *name = nmodes < MAX_MODES ? strdup(mode) : NULL;

		if (!name) {
			pr_warn("cannot register XRay mode '%s': %s\n", mode,
				nmodes < MAX_MODES ? "out of memory" :
						     "too many modes");
			ret = XRAY_INCOMPLETE_IMPL;
		} else {
			modes[nmodes].name = name;
			modes[nmodes].impl = impl;
			if (!nmodes) {
				current_mode = &modes[0];
				current_impl = impl;
				have_impl = true;
			}
			nmodes++;
		}
	}
	rt_registry_unlock();
	return ret;
}

XRayLogRegisterStatus rt_modes_select(const char *mode)
{
	XRayLogRegisterStatus ret = XRAY_MODE_NOT_FOUND;

	rt_registry_lock();
	for (size_t i = 0; mode && i < nmodes; i++) {
		if (strcmp(modes[i].name, mode))
			continue;
		current_mode = &modes[i];
		current_impl = modes[i].impl;
		have_impl = true;
		rt_set_handler_arg0(current_impl.handle_arg0);
		ret = XRAY_REGISTRATION_OK;
	}
	rt_registry_unlock();
	return ret;
}

const char *rt_modes_current(void)
{
	const char *name;

	rt_registry_lock();
	name = current_mode ? current_mode->name : NULL;
	rt_registry_unlock();
	return name;
}

void rt_modes_set_impl(XRayLogImpl impl)
{
	rt_registry_lock();
	if (!complete(&impl)) {
		have_impl = false;
		current_mode = NULL;
		rt_set_handler_arg0(NULL);
		rt_set_handler_arg1(NULL);
	} else {
		current_impl = impl;
		have_impl = true;
		rt_set_handler_arg0(impl.handle_arg0);
	}
	rt_registry_unlock();
}

void rt_modes_remove_impl(void)
{
	rt_registry_lock();
	have_impl = false;
	rt_set_handler_arg0(NULL);
	rt_set_handler_arg1(NULL);
	rt_registry_unlock();
}

XRayLogInitStatus rt_modes_init(size_t buffer_size, size_t buffer_max,
				void *args, size_t args_size)
{
	XRayLogInitStatus ret = XRAY_LOG_UNINITIALIZED;

	rt_registry_lock();
	if (have_impl)
		ret = current_impl.log_init(buffer_size, buffer_max, args,
					    args_size);
	rt_registry_unlock();
	return ret;
}

XRayLogInitStatus rt_modes_finalize(void)
{
	XRayLogInitStatus ret = XRAY_LOG_UNINITIALIZED;

	rt_registry_lock();
	if (have_impl)
		ret = current_impl.log_finalize();
	rt_registry_unlock();
	return ret;
}

XRayLogFlushStatus rt_modes_flush(void)
{
	XRayLogFlushStatus ret = XRAY_LOG_NOT_FLUSHING;

	rt_registry_lock();
	if (have_impl)
		ret = current_impl.flush_log();
	rt_registry_unlock();
	return ret;
}

void rt_modes_set_iterator(XRayBuffer (*it)(XRayBuffer))
{
	__atomic_store_n(&buffer_iterator, it ? it : null_iterator,
			 __ATOMIC_RELEASE);
}

XRayLogFlushStatus rt_modes_process_buffers(void (*processor)(const char *,
							      XRayBuffer))
{
	XRayBuffer (*it)(XRayBuffer);
	const char *mode;
	XRayBuffer b;

	if (!have_impl || !processor)
		return XRAY_LOG_NOT_FLUSHING;
	it = __atomic_load_n(&buffer_iterator, __ATOMIC_ACQUIRE);
	mode = rt_modes_current();
	for (b = it((XRayBuffer){ NULL, 0 }); b.Data; b = it(b))
		processor(mode, b);
	return XRAY_LOG_FLUSHED;
}
