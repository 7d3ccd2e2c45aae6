// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program of the kind LLVM's runtime serves without logging: it sets a
 * handler of its own and leaves the patching to the start-up
 * (XRAY_OPTIONS=patch_premain=true, no xray_mode).  Prints its counter
 * and "handler N": the entries and exits its handler saw.
 */
#include <stdio.h>

#include <xrayfdr/xray.h>

#include "counts.h"

volatile long sink;
COUNTER(work);
static long seen;

NOT_TRACED static void handler(int32_t id, XRayEntryType type)
{
	(void)id;
	(void)type;
	__atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
}

TRACED void work(int i)
{
	HIT(work);
	sink += i;
}

NOT_TRACED int main(void)
{
	__xray_set_handler(handler);
	for (int i = 0; i < 100; i++)
		work(i);
	PRINT(work);
	printf("handler %ld\n", __atomic_load_n(&seen, __ATOMIC_RELAXED));
	return 0;
}
