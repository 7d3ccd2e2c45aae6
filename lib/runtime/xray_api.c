// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LLVM XRay's API (<xrayfdr/xray.h>): handlers, patching, event types and
 * log modes, each entry point setting the runtime up first (init.h) and
 * passing on to the part that does it.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "handlers.h"
#include "init.h"
#include "modes.h"
#include "objects.h"

int __xray_set_handler(void (*entry)(int32_t, XRayEntryType))
{
	if (rt_init())
		return 0;
	rt_set_handler_arg0(entry);
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
	rt_set_handler_arg1(entry);
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
	rt_set_handler_custom(entry);
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
	rt_set_handler_typed(entry);
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
 * Log modes (modes.c): every entry point sets the runtime up first, before
 * the registry's lock is taken.
 */
void __xray_log_set_buffer_iterator(XRayBuffer (*it)(XRayBuffer))
{
	rt_modes_set_iterator(it);
}

void __xray_log_remove_buffer_iterator(void)
{
	rt_modes_set_iterator(NULL);
}

XRayLogRegisterStatus __xray_log_register_mode(const char *mode,
					       XRayLogImpl impl)
{
	rt_init();
	return rt_modes_register(mode, impl);
}

XRayLogRegisterStatus __xray_log_select_mode(const char *mode)
{
	rt_init();
	return rt_modes_select(mode);
}

const char *__xray_log_get_current_mode(void)
{
	rt_init();
	return rt_modes_current();
}

void __xray_set_log_impl(XRayLogImpl impl)
{
	rt_init();
	rt_modes_set_impl(impl);
}

void __xray_remove_log_impl(void)
{
	rt_init();
	rt_modes_remove_impl();
}

XRayLogInitStatus __xray_log_init(size_t buffer_size, size_t buffer_max,
				  void *args, size_t args_size)
{
	rt_init();
	return rt_modes_init(buffer_size, buffer_max, args, args_size);
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
	rt_init();
	return rt_modes_finalize();
}

XRayLogFlushStatus __xray_log_flushLog(void)
{
	rt_init();
	return rt_modes_flush();
}

XRayLogFlushStatus __xray_log_process_buffers(void (*processor)(const char *,
								XRayBuffer))
{
	rt_init();
	return rt_modes_process_buffers(processor);
}
