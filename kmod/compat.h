/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel-version differences of xray_fdr.ko, in one place.  The
 * minimum kernel is 6.1 (Debian 12); newer kernels changed how a driver
 * edits vm_flags.
 */
#ifndef _XFDR_COMPAT_H
#define _XFDR_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

#if KERNEL_VERSION(6, 1, 0) > LINUX_VERSION_CODE
#error "xray_fdr needs Linux 6.1 or later"
#endif

#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
static inline void xfdr_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
				     vm_flags_t clear)
{
	vm_flags_mod(vma, set, clear);
}
#else
static inline void xfdr_vm_flags_mod(struct vm_area_struct *vma, vm_flags_t set,
				     vm_flags_t clear)
{
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
}
#endif

#endif /* _XFDR_COMPAT_H */
