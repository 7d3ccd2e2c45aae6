// SPDX-License-Identifier: GPL-2.0-only
/* fork(): each child starts with a clean trace of its own (its log is
 * the parent's name plus ".PID"); the parent's trace goes on. */
#include <stdlib.h>
#include <sys/wait.h>

#include "counts.h"

volatile long sink;
COUNTER(before);
COUNTER(in_child);
COUNTER(after);

TRACED void before(int i)
{
	HIT(before);
	sink += i;
}

TRACED void in_child(int i)
{
	HIT(in_child);
	sink += i;
}

TRACED void after(int i)
{
	HIT(after);
	sink -= i;
}

static void print_all(void)
{
	PRINT(before);
	PRINT(in_child);
	PRINT(after);
	fflush(stdout);
}

int main(void)
{
	for (int i = 0; i < 100; i++)
		before(i);
	fflush(stdout);
	for (int c = 0; c < 2; c++) {
		pid_t pid = fork();

		if (pid == 0) {
			n_before = n_in_child = n_after = 0;
			for (int i = 0; i < 50 * (c + 1); i++)
				in_child(i);
			after(c);
			print_all();
			exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 30; i++)
		after(i);
	print_all();
	return 0;
}
