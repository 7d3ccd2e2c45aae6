// SPDX-License-Identifier: GPL-2.0-only
/*
 * Patching and unpatching, whole and per function, in a loop while four
 * threads run through the sleds.  Must never crash; the log must be valid.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <xrayfdr/xray.h>

#define TRACED __attribute__((xray_always_instrument, noinline))

volatile long sink;
static volatile int stop;

TRACED void leaf(long i)
{
	sink += i;
}

TRACED long tail(long i)
{
	return i + 1;
}

TRACED void mid(long i)
{
	leaf(i);
	sink += tail(i);
}

static void *runner(void *arg)
{
	long i = 0;

	(void)arg;
	while (!stop)
		mid(i++);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	pthread_t t[4];
	size_t max;

	if (__xray_log_init_mode("xray-fdr", "buffer_size=16K buffer_max=64") !=
	    XRAY_LOG_INITIALIZED) {
		fprintf(stderr, "cannot start xray-fdr\n");
		return 1;
	}
	max = __xray_max_function_id();
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, runner, NULL);
	for (int r = 0; r < rounds; r++) {
		int32_t id = (int32_t)(1 + (size_t)r % max);

		if (__xray_patch() != SUCCESS || __xray_unpatch() != SUCCESS ||
		    __xray_patch_function(id) != SUCCESS ||
		    __xray_unpatch_function(id) != SUCCESS) {
			fprintf(stderr, "patching failed in round %d\n", r);
			return 1;
		}
		if (r % 2)
			__xray_patch();
	}
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	__xray_log_finalize();
	return __xray_log_flushLog() == XRAY_LOG_FLUSHED ? 0 : 1;
}
