// SPDX-License-Identifier: GPL-2.0-only
/*
 * For --trigger: serve(i) runs for every request i and is slow (120 ms)
 * for requests 20000, 40000 and 60000; other() is slow once too, and no
 * trigger names it.  After each slow request the program goes on serving
 * until DIR holds as many snapshots as it expects (at most MAX), so that
 * no trigger finds the previous one still being written; then it raises
 * SIGUSR2 if asked ("signal") and waits for one more.  It prints the
 * slow requests' numbers.
 *
 * Usage: trigger DIR MAX [signal]
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRACED __attribute__((xray_always_instrument, noinline))
#define UNTRACED __attribute__((xray_never_instrument))

#define EVERY 20000
#define SLOW_NS 120000000L

volatile long sink;

UNTRACED static void nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts))
		;
}

TRACED __attribute__((xray_log_args(1))) void serve(long i)
{
	sink += i;
	if (i % EVERY == 0)
		nap(SLOW_NS);
}

TRACED void other(void)
{
	nap(SLOW_NS);
}

UNTRACED static long snapshots(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long n = 0;

	/* whole snapshots: not the hidden names they are written under */
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		n += e->d_name[0] != '.' && len > 5 &&
		     !strcmp(e->d_name + len - 5, ".xray");
	}
	if (d)
		closedir(d);
	return n;
}

/* Serve until DIR holds @want snapshots; a bound so that a broken
 * trigger fails the test instead of hanging it. */
UNTRACED static int serve_until(const char *dir, long want, long *i)
{
	for (long polls = 0; snapshots(dir) < want; polls++) {
		if (polls == 600000) {
			fprintf(stderr, "no snapshot %ld after a long wait\n",
				want);
			return 1;
		}
		for (int k = 0; k < 100; k++) {
			long next = *i + 1;

			if (next % EVERY == 0)
				next++; /* only the planned slow ones */
			*i = next;
			serve(next);
		}
		nap(100000);
	}
	return 0;
}

UNTRACED int main(int argc, char **argv)
{
	long i = 0, max, want = 0;

	if (argc < 3)
		return 2;
	max = atol(argv[2]);
	other();
	for (int slow = 1; slow <= 3; slow++) {
		while (++i % EVERY)
			serve(i);
		serve(i);
		printf("slow %ld\n", i);
		fflush(stdout);
		want = slow < max ? slow : max;
		if (serve_until(argv[1], want, &i))
			return 1;
	}
	if (argc > 3 && !strcmp(argv[3], "signal")) {
		raise(SIGUSR2);
		if (serve_until(argv[1], want + 1, &i))
			return 1;
	}
	return 0;
}
