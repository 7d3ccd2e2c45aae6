/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Instrumented objects: their sleds, function ids and patching. */
#ifndef XRAYFDR_LIB_RUNTIME_OBJECTS_H
#define XRAYFDR_LIB_RUNTIME_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/runtime.h>

/* Find the instrumented objects loaded so far.  Return 0, -ENOENT if
 * there are none, or another negative errno. */
int rt_objects_scan(void);
/* Patch (@enable) or unpatch every function, or the one of @id.  Return
 * 0, -EBUSY while another patch runs, or a negative errno. */
int rt_patch_all(bool enable);
/*
 * Replace the filter XRAYFDR_FILTER gave (its syntax; NULL or "": none)
 * for the next patch, which also selects the functions triggers name
 * again (xrayfdr attach, whose every attach brings its own).  0, or
 * -EINVAL with the rule and the reason in @err, or -ENOMEM.
 */
int rt_objects_set_filter(const char *spec, char *err, size_t errlen);
int rt_patch_function(int32_t id, bool enable);
uintptr_t rt_function_address(int32_t id);
size_t rt_max_function_id(void);
/* Objects numbered so far; one object's largest function id (0 for an
 * unknown or unloaded one); patch or unpatch one object's functions
 * (-EINVAL for an unknown or unloaded one). */
size_t rt_num_objects(void);
size_t rt_max_function_id_in(int32_t index);
int rt_patch_object(int32_t index, bool enable);
/* Have sleds been given their trampolines (of rt_live.sink) yet?  Then the
 * sink cannot change in this process. */
bool rt_objects_targets_fixed(void);
/*
 * After a dlopen() that loaded something: find the objects it brought,
 * and patch them if the last patch of everything patched (not unpatched).
 * Return 0 or the first error of a patch.
 */
int rt_objects_opened(void);
/* After a dlclose(): forget what it unloaded. */
void rt_objects_closed(void);
/* Object @index as xrayfdr_object_info() reports it (the API lock held;
 * the path stays valid).  Return 0 or -ENOENT. */
int rt_object_describe(unsigned int index, struct xrayfdr_object_info *out);
/* Object table text for the log ("0 0x1 /path\n" ...), signal-safe read. */
const char *rt_objects_text(void);

#endif
