// SPDX-License-Identifier: GPL-2.0-only
/*
 * Custom events (one every second argument's iterations, 0: none) and
 * entries with a logged argument, as many as the first argument says:
 * the traced run's system calls must not grow with their number, nor
 * (CPU mode) its C path's calls.
 */
#include <stdlib.h>

#include "counts.h"

volatile long sink;
COUNTER(with_arg);

__attribute__((xray_always_instrument, xray_log_args(1), noinline)) void
with_arg(long v)
{
	HIT(with_arg);
	sink += v;
}

TRACED void work(long n, long every)
{
	for (long i = 0; i < n; i++) {
		with_arg(i);
		if (every && i % every == 0)
			__xray_customevent("tick", 4);
	}
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atol(argv[1]) : 1000, argc > 2 ? atol(argv[2]) : 4);
	PRINT(with_arg);
	return 0;
}
