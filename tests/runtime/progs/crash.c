// SPDX-License-Identifier: GPL-2.0-only
/*
 * Dying with a trace: after 1000 counted calls, crash (segv, abort),
 * kill ourselves (term, kill: SIGKILL, which no trace in thread mode
 * survives), or wait for a signal (wait: prints "ready"); "exit" returns.
 * The log must hold every call made before.
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"

volatile long sink;
COUNTER(work);

TRACED void work(int i)
{
	HIT(work);
	sink += i;
}

TRACED void die(const char *how)
{
	if (!strcmp(how, "segv"))
		*(volatile int *)(uintptr_t)sink = 1; /* sink is 0 here */
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "term"))
		raise(SIGTERM);
	if (!strcmp(how, "kill"))
		raise(SIGKILL);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "segv";

	for (int i = 0; i < 1000; i++)
		work(i);
	PRINT(work);
	fflush(stdout);
	if (!strcmp(how, "wait")) {
		printf("ready\n");
		fflush(stdout);
		for (int i = 0;; i++)
			work(i);
	}
	sink = 0;
	die(how);
	return 0;
}
