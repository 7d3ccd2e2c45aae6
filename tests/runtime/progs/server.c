// SPDX-License-Identifier: GPL-2.0-only
/*
 * A server-like program for `xrayfdr snapshot PID`: it handles numbered
 * requests until the file argv[1] exists, then prints how many it
 * handled.  Each request is a traced call that logs its number.
 */
#include <stdio.h>
#include <unistd.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))

volatile long sink;

TRACED __attribute__((xray_log_args(1))) void handle(long i)
{
	sink += i;
}

UNTRACED int main(int argc, char **argv)
{
	long i = 0;

	if (argc < 2)
		return 2;
	while (access(argv[1], F_OK)) {
		handle(++i);
		/* at most 10,000 a second, so a window can hold them all */
		if (!(i % 10))
			usleep(1000);
	}
	printf("handled %ld\n", i);
	return 0;
}
