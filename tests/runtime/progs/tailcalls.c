// SPDX-License-Identifier: GPL-2.0-only
/* Tail calls: chains and mutual recursion that -O2 turns into jumps, so
 * the callers leave through tail-exit sleds. */
#include <stdlib.h>

#include "counts.h"

volatile long sink;
COUNTER(chain_a);
COUNTER(chain_b);
COUNTER(chain_c);
COUNTER(ping);
COUNTER(pong);

TRACED long chain_c(long x)
{
	HIT(chain_c);
	sink += x;
	return x * 3;
}

TRACED long chain_b(long x)
{
	HIT(chain_b);
	return chain_c(x + 1);
}

TRACED long chain_a(long x)
{
	HIT(chain_a);
	return chain_b(x * 2);
}

TRACED long pong(long n);

TRACED long ping(long n)
{
	HIT(ping);
	if (n <= 0)
		return sink;
	return pong(n - 1);
}

TRACED long pong(long n)
{
	HIT(pong);
	if (n <= 0)
		return sink;
	return ping(n - 1);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < n; i++)
		sink += chain_a(i);
	sink += ping(501);
	PRINT(chain_a);
	PRINT(chain_b);
	PRINT(chain_c);
	PRINT(ping);
	PRINT(pong);
	return 0;
}
