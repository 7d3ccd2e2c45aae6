// SPDX-License-Identifier: GPL-2.0-only
//
// A workload traced by LLVM's own XRay runtime, to produce logs for the
// oracle tests: FDR or basic mode, initialised programmatically as LLVM's
// own tests do (XRAY_OPTIONS alone does not start FDR mode).
//
//   llvm_runtime MODE CONFIG [custom|typed]
//
// MODE is xray-fdr or xray-basic; CONFIG the mode's option string.  With
// "custom" it also logs custom events (LLVM 14's custom-event trampoline is
// only safe unoptimised, so build with -O0 for that); with "typed", typed
// events (LLVM 14's FDR runtime writes them with wrong buffer extents).
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "xray/xray_interface.h"
#include "xray/xray_log_interface.h"

#define TRACED [[clang::xray_always_instrument]] __attribute__((noinline))

static volatile int sink;
static bool with_custom, with_typed;

TRACED static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

[[clang::xray_always_instrument,
  clang::xray_log_args(1)]] __attribute__((noinline)) static void
with_arg(long value)
{
	sink = (int)value;
}

TRACED static void leaf(int i)
{
	sink = i;
}

TRACED static void tail_target(int i)
{
	leaf(i);
}

TRACED static void tail_caller(int i)
{
	return tail_target(i + 1); // a sibling call at -O2
}

TRACED static void event(int i)
{
	char msg[32];
	int n = snprintf(msg, sizeof(msg), "event %d", i);

	if (with_custom)
		__xray_customevent(msg, (size_t)n);
	if (with_typed)
		__xray_typedevent(7, msg, (size_t)n);
}

TRACED static void worker(int id)
{
	for (int i = 0; i < 50; i++) {
		with_arg(id * 1000 + i);
		tail_caller(i);
		if (i % 10 == 0)
			event(i);
	}
	sink = fib(12);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s MODE CONFIG [custom|typed]\n",
			argv[0]);
		return 2;
	}
	with_custom = argc > 3 && !strcmp(argv[3], "custom");
	with_typed = argc > 3 && !strcmp(argv[3], "typed");
	if (__xray_log_init_mode(argv[1], argv[2]) != XRAY_LOG_INITIALIZED) {
		fprintf(stderr, "cannot initialise %s\n", argv[1]);
		return 1;
	}
	if (__xray_patch() != SUCCESS) {
		fprintf(stderr, "cannot patch\n");
		return 1;
	}
	std::vector<std::thread> threads;
	for (int t = 0; t < 4; t++)
		threads.emplace_back(worker, t);
	worker(99);
	for (auto &t : threads)
		t.join();
	__xray_log_finalize();
	__xray_log_flushLog();
	return 0;
}
