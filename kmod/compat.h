/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel-version differences of xray_fdr.ko, in one place, each under
 * the version that introduced it.  The minimum kernel is 6.1 (Debian 12);
 * Documentation/kernel-module.rst lists the kernels built and tested.
 */
#ifndef _XFDR_COMPAT_H
#define _XFDR_COMPAT_H

#include <linux/mm.h>
#include <linux/timekeeping.h>
#include <linux/version.h>

#if KERNEL_VERSION(6, 1, 0) > LINUX_VERSION_CODE
#error "xray_fdr needs Linux 6.1 or later"
#endif

/*
 * 6.12 removed no_llseek: a NULL ->llseek has meant -ESPIPE since 6.0
 * (FMODE_LSEEK is cleared for it), so older kernels keep no_llseek only
 * to say the same thing explicitly.
 */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#define XFDR_NO_LLSEEK NULL
#else
#define XFDR_NO_LLSEEK no_llseek
#endif

/* 6.3: vm_flags became read-only; drivers edit it with vm_flags_mod() */
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

/*
 * 7.2 replaced ktime_get_snapshot() (CLOCK_REALTIME with MONOTONIC_RAW
 * and the counter) by ktime_get_snapshot_id(), which takes the clock; the
 * caller wants only the counter, which is the same whatever the clock.
 */
static inline void xfdr_ktime_get_snapshot(struct system_time_snapshot *snap)
{
#if KERNEL_VERSION(7, 2, 0) <= LINUX_VERSION_CODE
	ktime_get_snapshot_id(CLOCK_REALTIME, snap);
#else
	ktime_get_snapshot(snap);
#endif
}

#endif /* _XFDR_COMPAT_H */
