// SPDX-License-Identifier: GPL-2.0-only
/*
 * libxrayfdr's own API: start, statistics, stop, flush, TSC facts and the
 * object table.  Prints "ok - NAME" lines; argv[1] is the log's path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xrayfdr/runtime.h>

#define TRACED __attribute__((xray_always_instrument, noinline))

volatile long sink;
static int failures;

static void check(int ok, const char *name)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", name);
	failures += !ok;
}

TRACED void work(int i)
{
	sink += i;
}

int main(int argc, char **argv)
{
	XRAYFDR_OPTS(xrayfdr_trace_opts, opts, .buffer_size = 4096,
		     .buffer_max = 8, .output = argc > 1 ? argv[1] : NULL);
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	XRAYFDR_OPTS(xrayfdr_tsc_info, tsc);
	XRAYFDR_OPTS(xrayfdr_object_info, obj);
	char path[4096] = "";

	check(xrayfdr_trace_flush(path, sizeof(path)) == -ENODATA,
	      "flush without a trace: -ENODATA");
	check(xrayfdr_trace_start(&opts) == 0, "start");
	check(xrayfdr_trace_start(&opts) == -EBUSY && errno == EBUSY,
	      "a second start: -EBUSY");
	for (int i = 0; i < 10000; i++)
		work(i);
	check(xrayfdr_trace_stats(&st) == 0 && st.buffers == 8 &&
		      st.recycled > 0 && st.overwritten > 0 &&
		      st.events + st.overwritten >= 20000,
	      "stats: the queue wrapped and counted what it overwrote");
	check(xrayfdr_trace_flush(path, sizeof(path)) == -EAGAIN,
	      "flush while running: -EAGAIN");
	check(xrayfdr_trace_stop() == 0, "stop");
	check(xrayfdr_trace_flush(path, sizeof(path)) == 0 &&
		      (argc < 2 || !strcmp(path, argv[1])),
	      "flush names the log");
	check(xrayfdr_tsc_info(&tsc) == 0 && tsc.hz > 100000000 && tsc.source &&
		      *tsc.source,
	      "TSC facts");
	check(xrayfdr_object_info(0, &obj) == 0 && obj.first_id == 1 &&
		      obj.functions >= 2 && obj.sleds >= 4 && obj.path,
	      "object 0 is the program");
	check(xrayfdr_object_info(99, &obj) == -ENOENT, "no object 99");
	{
		struct {
			struct xrayfdr_trace_opts o;
			unsigned long long newer_field;
		} big = { .o = opts, .newer_field = 1 };

		big.o.sz = sizeof(big);
		check(xrayfdr_trace_start(&big.o) == -E2BIG,
		      "a newer options struct setting an unknown field: -E2BIG");
	}
	return failures ? 1 : 0;
}
