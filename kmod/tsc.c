// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC facts, as the kernel knows them: the frequency it calibrated, the
 * CPUID flags, whether it marked the TSC unstable, and whether the current
 * clocksource reads the TSC.  They fill the header page, sysfs and netlink
 * status; the runtime copies them into XRay log headers.
 */
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/tsc.h>

#include "xfdr.h"

/*
 * Linux 6.1 gives the TSC clocksource no id in system_time_snapshot, but it
 * reads the TSC unscaled: its counter then lies between two TSC reads taken
 * around the snapshot.  HPET, ACPI PM and kvm-clock count other things and
 * land far outside such a window; two tries rule out a coincidence.
 */
static bool xfdr_clocksource_is_tsc(void)
{
	struct system_time_snapshot snap;
	u64 before, after;
	int try;

	for (try = 0; try < 2; try++) {
		before = rdtsc_ordered();
		xfdr_ktime_get_snapshot(&snap);
		after = rdtsc_ordered();
		if (snap.cycles < before || snap.cycles > after)
			return false;
	}
	return true;
}

/**
 * xfdr_tsc_flags() - the TSC facts as XRAY_FDR_TSC_* flags
 *
 * Return: the flags, read now.
 */
u32 xfdr_tsc_flags(void)
{
	u32 flags = 0;

	if (!boot_cpu_has(X86_FEATURE_TSC))
		return 0;
	if (boot_cpu_has(X86_FEATURE_CONSTANT_TSC))
		flags |= XRAY_FDR_TSC_CONSTANT;
	if (boot_cpu_has(X86_FEATURE_NONSTOP_TSC))
		flags |= XRAY_FDR_TSC_NONSTOP;
	if (!check_tsc_unstable())
		flags |= XRAY_FDR_TSC_RELIABLE;
	if (boot_cpu_has(X86_FEATURE_TSC_KNOWN_FREQ))
		flags |= XRAY_FDR_TSC_KNOWN_FREQ;
	if (xfdr_clocksource_is_tsc())
		flags |= XRAY_FDR_TSC_CLOCKSOURCE;
	return flags;
}

/**
 * xfdr_tsc_khz() - the TSC frequency the kernel calibrated
 *
 * Return: kHz, 0 without a TSC.
 */
u64 xfdr_tsc_khz(void)
{
	return boot_cpu_has(X86_FEATURE_TSC) ? tsc_khz : 0;
}
