/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * LLVM XRay's runtime interface, implemented by libxrayfdr.
 *
 * These are the functions of LLVM's <xray/xray_interface.h> and
 * <xray/xray_log_interface.h>, with the same names, types and meaning, so
 * that a program written against LLVM's headers links against -lxrayfdr
 * unchanged (include either LLVM's headers or this one, not both).  Where
 * libxrayfdr differs, the comment says so; Documentation/runtime.rst has
 * the details.
 *
 * The one log mode registered is "xray-fdr": flight-data-recorder logs in
 * per-thread buffers.  Its configuration string takes XRAY_FDR_OPTIONS'
 * names (buffer_size=, buffer_max=, func_duration_threshold_us=,
 * grace_period_ms=, no_file_flush=) and XRAYFDR_OPTIONS' (output=,
 * version=, ...).
 */
#ifndef XRAYFDR_XRAY_H
#define XRAYFDR_XRAY_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a sled reports to a handler. */
enum XRayEntryType {
	ENTRY = 0,
	EXIT = 1,
	TAIL = 2,
	LOG_ARGS_ENTRY = 3,
	CUSTOM_EVENT = 4,
	TYPED_EVENT = 5,
};
typedef enum XRayEntryType XRayEntryType;

/*
 * Handlers.  Each setter returns 1 once the runtime is initialised (which
 * it does on first use), 0 otherwise.  A handler runs on the thread that
 * hit the sled, must be thread-safe and re-entrant, and may be called from
 * signal handlers.  Setting a handler of your own turns off xrayfdr's
 * recording fast path until "xray-fdr" is selected again.
 */
XRAYFDR_API int __xray_set_handler(void (*entry)(int32_t, XRayEntryType));
XRAYFDR_API int __xray_remove_handler(void);
/* For entry sleds of functions with [[clang::xray_log_args(1)]]. */
XRAYFDR_API int __xray_set_handler_arg1(void (*entry)(int32_t, XRayEntryType,
						      uint64_t));
XRAYFDR_API int __xray_remove_handler_arg1(void);
/* __xray_customevent(data, size) in the program. */
XRAYFDR_API int __xray_set_customevent_handler(void (*entry)(void *, size_t));
XRAYFDR_API int __xray_remove_customevent_handler(void);
/* __xray_typedevent(type, data, size) in the program. */
XRAYFDR_API int
__xray_set_typedevent_handler(void (*entry)(uint16_t, const void *, size_t));
XRAYFDR_API int __xray_remove_typedevent_handler(void);
/* A type id for typed events, the same for the same string address. */
XRAYFDR_API uint16_t __xray_register_event_type(const char *event_type);

enum XRayPatchingStatus {
	NOT_INITIALIZED = 0,
	SUCCESS = 1,
	ONGOING = 2,
	FAILED = 3,
};
typedef enum XRayPatchingStatus XRayPatchingStatus;

/*
 * Patch or unpatch every sled of the main program and of the instrumented
 * shared objects loaded now, or those of one function id (see
 * Documentation/runtime.rst for the ids of shared objects).
 */
XRAYFDR_API XRayPatchingStatus __xray_patch(void);
XRAYFDR_API XRayPatchingStatus __xray_unpatch(void);
XRAYFDR_API XRayPatchingStatus __xray_patch_function(int32_t func_id);
XRAYFDR_API XRayPatchingStatus __xray_unpatch_function(int32_t func_id);
/* The address of a function, 0 for an unknown id. */
XRAYFDR_API uintptr_t __xray_function_address(int32_t func_id);
/* The largest function id of the main program. */
XRAYFDR_API size_t __xray_max_function_id(void);
/* Initialise now (every other call does it on first use). */
XRAYFDR_API void __xray_init(void);

/*
 * LLVM 19's calls per object: object 0 is the main program, 1, 2, ...
 * the instrumented shared objects in load order; a function id packs the
 * object in its top 8 bits and the function in the low 24.  Objects that
 * dlclose() unloaded keep their number and have no functions.
 */
XRAYFDR_API int32_t __xray_pack_id(int32_t func_id, int32_t obj_id);
XRAYFDR_API int32_t __xray_unpack_function_id(int32_t packed_id);
XRAYFDR_API int32_t __xray_unpack_object_id(int32_t packed_id);
/* Objects numbered so far (the main program's slot included). */
XRAYFDR_API size_t __xray_num_objects(void);
XRAYFDR_API XRayPatchingStatus __xray_patch_object(int32_t obj_id);
XRAYFDR_API XRayPatchingStatus __xray_unpatch_object(int32_t obj_id);
XRAYFDR_API XRayPatchingStatus __xray_patch_function_in_object(int32_t func_id,
							       int32_t obj_id);
XRAYFDR_API XRayPatchingStatus
__xray_unpatch_function_in_object(int32_t func_id, int32_t obj_id);
XRAYFDR_API uintptr_t __xray_function_address_in_object(int32_t func_id,
							int32_t obj_id);
XRAYFDR_API size_t __xray_max_function_id_in_object(int32_t obj_id);

/* Log implementations. */
enum XRayLogInitStatus {
	XRAY_LOG_UNINITIALIZED = 0,
	XRAY_LOG_INITIALIZING = 1,
	XRAY_LOG_INITIALIZED = 2,
	XRAY_LOG_FINALIZING = 3,
	XRAY_LOG_FINALIZED = 4,
};
typedef enum XRayLogInitStatus XRayLogInitStatus;

enum XRayLogFlushStatus {
	XRAY_LOG_NOT_FLUSHING = 0,
	XRAY_LOG_FLUSHING = 1,
	XRAY_LOG_FLUSHED = 2,
};
typedef enum XRayLogFlushStatus XRayLogFlushStatus;

enum XRayLogRegisterStatus {
	XRAY_REGISTRATION_OK = 0,
	XRAY_DUPLICATE_MODE = 1,
	XRAY_MODE_NOT_FOUND = 2,
	XRAY_INCOMPLETE_IMPL = 3,
};
typedef enum XRayLogRegisterStatus XRayLogRegisterStatus;

/* A logging mode: all four members are required. */
struct XRayLogImpl {
	XRayLogInitStatus (*log_init)(size_t buffer_size, size_t buffer_max,
				      void *args, size_t args_size);
	XRayLogInitStatus (*log_finalize)(void);
	void (*handle_arg0)(int32_t, XRayEntryType);
	XRayLogFlushStatus (*flush_log)(void);
};
typedef struct XRayLogImpl XRayLogImpl;

/* Install @impl as the current, unnamed mode (an incomplete one removes
 * the current mode and the handlers). */
XRAYFDR_API void __xray_set_log_impl(XRayLogImpl impl);
XRAYFDR_API XRayLogRegisterStatus __xray_log_register_mode(const char *mode,
							   XRayLogImpl impl);
/* Make a registered mode current and install its handler. */
XRAYFDR_API XRayLogRegisterStatus __xray_log_select_mode(const char *mode);
/* The current mode's name, or NULL. */
XRAYFDR_API const char *__xray_log_get_current_mode(void);
XRAYFDR_API void __xray_remove_log_impl(void);

/*
 * Initialise the current mode.  For "xray-fdr", @args is a configuration
 * string (NUL-terminated, or @args_size bytes); unlike LLVM's FDR mode, a
 * NULL @args is allowed and means the environment's options, and non-zero
 * @buffer_size and @buffer_max override them.
 */
XRAYFDR_API XRayLogInitStatus __xray_log_init(size_t buffer_size,
					      size_t buffer_max, void *args,
					      size_t args_size);
/* Select @mode (unlike LLVM, no XRAY_OPTIONS=xray_mode= is needed) and
 * initialise it with @config. */
XRAYFDR_API XRayLogInitStatus __xray_log_init_mode(const char *mode,
						   const char *config);
XRAYFDR_API XRayLogInitStatus __xray_log_init_mode_bin(const char *mode,
						       const char *config,
						       size_t config_size);
/* Stop recording; the buffers stay for the flush. */
XRAYFDR_API XRayLogInitStatus __xray_log_finalize(void);
/* Write the log of a finalised mode and reset it (it can start again). */
XRAYFDR_API XRayLogFlushStatus __xray_log_flushLog(void);

/* A piece of a mode's in-memory log. */
struct XRayBuffer {
	const void *Data;
	size_t Size;
};
typedef struct XRayBuffer XRayBuffer;

XRAYFDR_API void __xray_log_set_buffer_iterator(XRayBuffer (*it)(XRayBuffer));
XRAYFDR_API void __xray_log_remove_buffer_iterator(void);
/*
 * Call @processor(mode, buffer) for each buffer of a finalised log: for
 * "xray-fdr", first the 32-byte file header, then each thread buffer
 * preceded by its BufferExtents record, so their concatenation is a log.
 */
XRAYFDR_API XRayLogFlushStatus
__xray_log_process_buffers(void (*processor)(const char *, XRayBuffer));

/* Called by custom- and typed-event sleds; not for programs to call. */
XRAYFDR_API void __xray_CustomEvent(void);
XRAYFDR_API void __xray_TypedEvent(void);

#ifdef __cplusplus
}
#endif

#endif /* XRAYFDR_XRAY_H */
