// SPDX-License-Identifier: GPL-2.0-only
/* Functions that log their first argument (xray_log_args(1)). */
#include "counts.h"

#define TRACED_ARG \
	__attribute__((xray_always_instrument, xray_log_args(1), noinline))

volatile long sink;
COUNTER(with_arg);
COUNTER(with_ptr);
COUNTER(plain);

TRACED_ARG void with_arg(long v)
{
	HIT(with_arg);
	sink += v;
}

TRACED_ARG void with_ptr(const char *p)
{
	HIT(with_ptr);
	sink += p[0];
}

TRACED void plain(long v)
{
	HIT(plain);
	with_arg(v * 7 - 300);
}

int main(void)
{
	static const char text[] = "xray";

	for (long i = 0; i < 1000; i++)
		plain(i);
	for (int i = 0; i < 4; i++)
		with_ptr(text + i);
	PRINT(with_arg);
	PRINT(with_ptr);
	PRINT(plain);
	return 0;
}
