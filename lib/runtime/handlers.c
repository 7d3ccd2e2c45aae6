// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The trampolines' handlers and the fast path's key (see handlers.h). */
#include "../arch/x86_64/arch.h"
#include "controller.h"
#include "handlers.h"
#include "state.h"

void rt_set_handler_arg0(void (*fn)(int32_t, XRayEntryType))
{
	__atomic_store_n(&rt_handler_arg0, fn, __ATOMIC_RELEASE);
	rt_update_fast();
}

void rt_set_handler_arg1(void (*fn)(int32_t, XRayEntryType, uint64_t))
{
	__atomic_store_n(&rt_handler_arg1, fn, __ATOMIC_RELEASE);
	rt_update_fast();
}

void rt_set_handler_custom(void (*fn)(void *, size_t))
{
	__atomic_store_n(&rt_handler_custom, fn, __ATOMIC_RELEASE);
}

void rt_set_handler_typed(void (*fn)(uint16_t, const void *, size_t))
{
	__atomic_store_n(&rt_handler_typed, fn, __ATOMIC_RELEASE);
}

void rt_update_fast(void)
{
	/* max_depth counts every call, on the C path (depth.h) */
	bool fast = rt_live.status == XRAY_LOG_INITIALIZED &&
		    !rt_live.opts.max_depth &&
		    rt_handler_arg0 == rt_fdr_handle_arg0 &&
		    (!rt_handler_arg1 || rt_handler_arg1 == rt_fdr_handle_arg1);

	arch_fast_key_store(fast ? (uint64_t)rt_live.generation << 32 : 0);
}
