// SPDX-License-Identifier: GPL-2.0-only
/* Recursion: a call tree, mutual recursion, and a deep stack. */
#include <stdlib.h>

#include "counts.h"

volatile long sink;
COUNTER(fib);
COUNTER(is_even);
COUNTER(is_odd);
COUNTER(deep);

/* The barrier keeps -O2 from turning the second call into a loop, which
 * would enter the function (and its sled) fewer times than it counts. */
#define KEEP(x) __asm__ volatile("" : "+r"(x))

TRACED long fib(int n)
{
	long a, b;

	HIT(fib);
	if (n < 2)
		return n;
	a = fib(n - 1);
	b = fib(n - 2);
	KEEP(b);
	return a + b;
}

TRACED int is_odd(int n);

TRACED int is_even(int n)
{
	HIT(is_even);
	return n == 0 ? 1 : is_odd(n - 1);
}

TRACED int is_odd(int n)
{
	HIT(is_odd);
	return n == 0 ? 0 : is_even(n - 1);
}

TRACED long deep(int n)
{
	long r;

	HIT(deep);
	if (n == 0)
		return 0;
	r = deep(n - 1);
	KEEP(r);
	return r + (sink & 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	sink = fib(n);
	for (int i = 0; i < 50; i++)
		sink += is_even(i);
	sink += deep(3000);
	PRINT(fib);
	PRINT(is_even);
	PRINT(is_odd);
	PRINT(deep);
	return 0;
}
