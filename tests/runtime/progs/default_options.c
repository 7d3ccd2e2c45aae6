// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program with options of its own (LLVM 17's __xray_default_options()):
 * traced from the start, with no options in the environment, its log
 * named by xray_logfile_base and announced in LLVM's words.
 */
#include "counts.h"

volatile long sink;
COUNTER(work);

__attribute__((xray_never_instrument)) const char *__xray_default_options(void)
{
	return "patch_premain=true:verbosity=1:xray_mode=xray-fdr:xray_logfile_base=dflt-";
}

TRACED void work(int i)
{
	HIT(work);
	sink += i;
}

int main(void)
{
	for (int i = 0; i < 100; i++)
		work(i);
	PRINT(work);
	return 0;
}
