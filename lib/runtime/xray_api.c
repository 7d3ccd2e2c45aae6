// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LLVM XRay's API (<xrayfdr/xray.h>): handlers, patching, and the registry
 * of log modes, with "xray-fdr" registered and selected from the start
 * and "xray-basic" registered.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "basic.h"
#include "controller.h"
#include "flush.h"
#include "init.h"
#include "objects.h"
#include "state.h"

#define MAX_MODES 16

struct mode {
	const char *name;
	XRayLogImpl impl;
};

static XRayLogInitStatus fdr_log_init(size_t buffer_size, size_t buffer_max,
				      void *args, size_t args_size);
static XRayLogInitStatus fdr_log_finalize(void);
static XRayLogFlushStatus fdr_flush_log(void);

#define FDR_IMPL                                                               \
	{                                                                      \
		.log_init = fdr_log_init, .log_finalize = fdr_log_finalize,    \
		.handle_arg0 = rt_fdr_handle_arg0, .flush_log = fdr_flush_log, \
	}

#define BASIC_IMPL                                                            \
	{                                                                     \
		.log_init = rt_basic_init, .log_finalize = rt_basic_finalize, \
		.handle_arg0 = rt_basic_handle_arg0,                          \
		.flush_log = rt_basic_flush,                                  \
	}

/*
 * The registry, with "xray-fdr" registered and selected from the start,
 * and "xray-basic" (basic.c) registered.  LLVM guards it with one lock,
 * and so do we (rt_registry_lock()).
 */
static struct mode modes[MAX_MODES] = { { "xray-fdr", FDR_IMPL },
					{ "xray-basic", BASIC_IMPL } };
static size_t nmodes = 2;
static const struct mode *current_mode = &modes[0];
static XRayLogImpl current_impl = FDR_IMPL;
static bool have_impl = true;

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

int __xray_set_handler(void (*entry)(int32_t, XRayEntryType))
{
	if (rt_init())
		return 0;
	__atomic_store_n(&rt_handler_arg0, entry, __ATOMIC_RELEASE);
	rt_fdr_update_fast();
	return 1;
}

int __xray_remove_handler(void)
{
	return __xray_set_handler(NULL);
}

int __xray_set_handler_arg1(void (*entry)(int32_t, XRayEntryType, uint64_t))
{
	if (rt_init())
		return 0;
	__atomic_store_n(&rt_handler_arg1, entry, __ATOMIC_RELEASE);
	rt_fdr_update_fast();
	return 1;
}

int __xray_remove_handler_arg1(void)
{
	return __xray_set_handler_arg1(NULL);
}

int __xray_set_customevent_handler(void (*entry)(void *, size_t))
{
	if (rt_init())
		return 0;
	__atomic_store_n(&rt_handler_custom, entry, __ATOMIC_RELEASE);
	return 1;
}

int __xray_remove_customevent_handler(void)
{
	return __xray_set_customevent_handler(NULL);
}

int __xray_set_typedevent_handler(void (*entry)(uint16_t, const void *, size_t))
{
	if (rt_init())
		return 0;
	__atomic_store_n(&rt_handler_typed, entry, __ATOMIC_RELEASE);
	return 1;
}

int __xray_remove_typedevent_handler(void)
{
	return __xray_set_typedevent_handler(NULL);
}

uint16_t __xray_register_event_type(const char *event_type)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char **types;
	static size_t ntypes, cap;
	uint16_t id = 0;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < ntypes && types[i] != event_type; i++)
		;
	if (i == ntypes && ntypes <= UINT16_MAX) {
		if (ntypes == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			const char **n = realloc(types, ncap * sizeof(*n));

			if (n) {
				types = n;
				cap = ncap;
			}
		}
		if (ntypes < cap)
			types[ntypes++] = event_type;
	}
	if (i < ntypes)
		id = (uint16_t)i; /* LLVM numbers them from 0 */
	pthread_mutex_unlock(&lock);
	return id;
}

static XRayPatchingStatus patch_status(int ret)
{
	switch (ret) {
	case 0:
		return SUCCESS;
	case -EBUSY:
		return ONGOING;
	case -ENOENT:
	case -ENOTSUP:
		return NOT_INITIALIZED;
	default:
		return FAILED;
	}
}

XRayPatchingStatus __xray_patch(void)
{
	return patch_status(rt_patch(0, true));
}

XRayPatchingStatus __xray_unpatch(void)
{
	return patch_status(rt_patch(0, false));
}

XRayPatchingStatus __xray_patch_function(int32_t func_id)
{
	/* ids are positive: 0 here is a bad id, not "all" */
	return func_id ? patch_status(rt_patch(func_id, true)) : FAILED;
}

XRayPatchingStatus __xray_unpatch_function(int32_t func_id)
{
	return func_id ? patch_status(rt_patch(func_id, false)) : FAILED;
}

uintptr_t __xray_function_address(int32_t func_id)
{
	return rt_init() ? 0 : rt_function_address(func_id);
}

size_t __xray_max_function_id(void)
{
	return rt_init() ? 0 : rt_max_function_id();
}

/*
 * LLVM 19's calls per object.  Our ids already pack the object in bits
 * 24-31 (objects.c), as LLVM's do.
 */
#define FUNC_BITS 24
#define FUNC_MASK ((1u << FUNC_BITS) - 1)

int32_t __xray_pack_id(int32_t func_id, int32_t obj_id)
{
	return (int32_t)((uint32_t)obj_id << FUNC_BITS |
			 ((uint32_t)func_id & FUNC_MASK));
}

int32_t __xray_unpack_function_id(int32_t packed_id)
{
	return (int32_t)((uint32_t)packed_id & FUNC_MASK);
}

int32_t __xray_unpack_object_id(int32_t packed_id)
{
	return (int32_t)((uint32_t)packed_id >> FUNC_BITS);
}

size_t __xray_num_objects(void)
{
	return rt_init() ? 0 : rt_num_objects();
}

static XRayPatchingStatus patch_object(int32_t obj_id, bool enable)
{
	int ret = rt_init();

	return patch_status(ret ? ret : rt_patch_object(obj_id, enable));
}

XRayPatchingStatus __xray_patch_object(int32_t obj_id)
{
	return patch_object(obj_id, true);
}

XRayPatchingStatus __xray_unpatch_object(int32_t obj_id)
{
	return patch_object(obj_id, false);
}

/* A function of an object as one id; 0 if it cannot be one. */
static int32_t packed(int32_t func_id, int32_t obj_id)
{
	if (func_id <= 0 || (uint32_t)func_id > FUNC_MASK || obj_id < 0 ||
	    obj_id > 255)
		return 0;
	return __xray_pack_id(func_id, obj_id);
}

XRayPatchingStatus __xray_patch_function_in_object(int32_t func_id,
						   int32_t obj_id)
{
	return __xray_patch_function(packed(func_id, obj_id));
}

XRayPatchingStatus __xray_unpatch_function_in_object(int32_t func_id,
						     int32_t obj_id)
{
	return __xray_unpatch_function(packed(func_id, obj_id));
}

uintptr_t __xray_function_address_in_object(int32_t func_id, int32_t obj_id)
{
	int32_t id = packed(func_id, obj_id);

	return id ? __xray_function_address(id) : 0;
}

size_t __xray_max_function_id_in_object(int32_t obj_id)
{
	return rt_init() ? 0 : rt_max_function_id_in(obj_id);
}

/*
 * Log modes.
 */
void __xray_log_set_buffer_iterator(XRayBuffer (*it)(XRayBuffer))
{
	__atomic_store_n(&buffer_iterator, it ? it : null_iterator,
			 __ATOMIC_RELEASE);
}

void __xray_log_remove_buffer_iterator(void)
{
	__xray_log_set_buffer_iterator(NULL);
}

static XRayLogRegisterStatus register_mode(const char *mode, XRayLogImpl impl)
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
			nmodes++;
		}
	}
	rt_registry_unlock();
	return ret;
}

XRayLogRegisterStatus __xray_log_register_mode(const char *mode,
					       XRayLogImpl impl)
{
	rt_init();
	return register_mode(mode, impl);
}

XRayLogRegisterStatus __xray_log_select_mode(const char *mode)
{
	XRayLogRegisterStatus ret = XRAY_MODE_NOT_FOUND;

	rt_init();
	rt_registry_lock();
	for (size_t i = 0; mode && i < nmodes; i++) {
		if (strcmp(modes[i].name, mode))
			continue;
		current_mode = &modes[i];
		current_impl = modes[i].impl;
		have_impl = true;
		__xray_set_handler(current_impl.handle_arg0);
		ret = XRAY_REGISTRATION_OK;
	}
	rt_registry_unlock();
	return ret;
}

const char *__xray_log_get_current_mode(void)
{
	const char *name;

	rt_registry_lock();
	name = current_mode ? current_mode->name : NULL;
	rt_registry_unlock();
	return name;
}

/* Every entry point runs rt_init() before it takes the registry lock, as
 * the handler setters it calls under the lock do. */
void __xray_set_log_impl(XRayLogImpl impl)
{
	rt_init();
	rt_registry_lock();
	if (!complete(&impl)) {
		have_impl = false;
		current_mode = NULL;
		__xray_remove_handler();
		__xray_remove_handler_arg1();
	} else {
		current_impl = impl;
		have_impl = true;
		__xray_set_handler(impl.handle_arg0);
	}
	rt_registry_unlock();
}

void __xray_remove_log_impl(void)
{
	rt_init();
	rt_registry_lock();
	have_impl = false;
	__xray_remove_handler();
	__xray_remove_handler_arg1();
	rt_registry_unlock();
}

XRayLogInitStatus __xray_log_init(size_t buffer_size, size_t buffer_max,
				  void *args, size_t args_size)
{
	XRayLogInitStatus ret = XRAY_LOG_UNINITIALIZED;

	rt_init();
	rt_registry_lock();
	if (have_impl)
		ret = current_impl.log_init(buffer_size, buffer_max, args,
					    args_size);
	rt_registry_unlock();
	return ret;
}

XRayLogInitStatus __xray_log_init_mode_bin(const char *mode, const char *config,
					   size_t config_size)
{
	if (!config || __xray_log_select_mode(mode) != XRAY_REGISTRATION_OK)
		return XRAY_LOG_UNINITIALIZED;
	return __xray_log_init(0, 0, (void *)config, config_size);
}

XRayLogInitStatus __xray_log_init_mode(const char *mode, const char *config)
{
	return __xray_log_init_mode_bin(mode, config, 0);
}

XRayLogInitStatus __xray_log_finalize(void)
{
	XRayLogInitStatus ret = XRAY_LOG_UNINITIALIZED;

	rt_init();
	rt_registry_lock();
	if (have_impl)
		ret = current_impl.log_finalize();
	rt_registry_unlock();
	return ret;
}

XRayLogFlushStatus __xray_log_flushLog(void)
{
	XRayLogFlushStatus ret = XRAY_LOG_NOT_FLUSHING;

	rt_init();
	rt_registry_lock();
	if (have_impl)
		ret = current_impl.flush_log();
	rt_registry_unlock();
	return ret;
}

XRayLogFlushStatus __xray_log_process_buffers(void (*processor)(const char *,
								XRayBuffer))
{
	rt_init();
	XRayBuffer (*it)(XRayBuffer);
	const char *mode;
	XRayBuffer b;

	if (!have_impl || !processor)
		return XRAY_LOG_NOT_FLUSHING;
	it = __atomic_load_n(&buffer_iterator, __ATOMIC_ACQUIRE);
	mode = __xray_log_get_current_mode();
	for (b = it((XRayBuffer){ NULL, 0 }); b.Data; b = it(b))
		processor(mode, b);
	return XRAY_LOG_FLUSHED;
}

/*
 * The "xray-fdr" mode.
 */
static XRayLogInitStatus fdr_log_init(size_t buffer_size, size_t buffer_max,
				      void *args, size_t args_size)
{
	struct rt_options o;
	char err[512];
	int ret;

	rt_api_lock();
	if (rt.status != XRAY_LOG_UNINITIALIZED) {
		ret = rt.status;
		rt_api_unlock();
		return (XRayLogInitStatus)ret;
	}
	rt.status = XRAY_LOG_INITIALIZING;
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
		snprintf(err, sizeof(err), "buffer count %zu out of range",
			 buffer_max);
	}
	if (!ret)
		ret = rt_fdr_init(&o, err, sizeof(err));
	if (ret) {
		pr_warn("%s; tracing is off\n", err);
		rt.status = XRAY_LOG_UNINITIALIZED;
		rt_api_unlock();
		return XRAY_LOG_UNINITIALIZED;
	}
	/* arg1 first, so no arg entry falls back to arg0 (as LLVM does) */
	__atomic_store_n(&rt_handler_arg1, rt_fdr_handle_arg1,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&rt_handler_arg0, rt_fdr_handle_arg0,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&rt_handler_custom, rt_fdr_handle_custom,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&rt_handler_typed, rt_fdr_handle_typed,
			 __ATOMIC_RELEASE);
	__xray_log_set_buffer_iterator(rt_fdr_iterator);
	rt.status = XRAY_LOG_INITIALIZED;
	rt.flush_status = XRAY_LOG_NOT_FLUSHING;
	rt_fdr_update_fast();
	rt_api_unlock();
	return XRAY_LOG_INITIALIZED;
}

static XRayLogInitStatus fdr_log_finalize(void)
{
	XRayLogInitStatus ret;

	rt_api_lock();
	ret = (XRayLogInitStatus)rt_fdr_finalize();
	rt_api_unlock();
	return ret;
}

static XRayLogFlushStatus fdr_flush_log(void)
{
	XRayLogFlushStatus ret;

	rt_api_lock();
	ret = rt_flush();
	rt_api_unlock();
	return ret;
}
