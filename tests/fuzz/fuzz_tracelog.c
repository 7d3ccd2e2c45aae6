// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the CoreProfiler TraceLog reader (tools/analysis/
 * text_reader.c), strict and keep-going (the first byte chooses).  It
 * turns stack differences into entries and exits: every exit must close
 * the entry on top of the same thread's stack, which this target checks
 * with a stack of its own per thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/analysis/input/text_reader.h"

#define THREADS 64
#define DEPTH 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int32_t stacks[THREADS][DEPTH];
	static uint64_t tids[THREADS]; /* pid:tid */
	static uint32_t depth[THREADS];
	const struct xrayfdr_event *ev;
	struct trace_header hdr;
	struct text_reader *r;
	unsigned int nthreads = 0;
	FILE *f;
	int ret;

	if (size < 1)
		return 0;
	f = fmemopen((void *)(data + 1), size - 1, "r");
	if (!f)
		return 0;
	r = text_reader_new(TEXT_TRACELOG, f, "fuzz.tl", data[0] & 1, NULL,
			    NULL);
	if (!r) {
		fclose(f);
		return 0;
	}
	ret = text_reader_header(r, &hdr);
	while (ret == 0 && (ret = text_reader_next(r, &ev)) == 1) {
		uint64_t key = (uint64_t)ev->pid << 32 | ev->tid;
		unsigned int t;

		ret = 0;
		for (t = 0; t < nthreads && tids[t] != key; t++)
			;
		if (t == nthreads) {
			if (nthreads == THREADS)
				continue; /* beyond what this check follows */
			tids[nthreads] = key;
			depth[nthreads++] = 0;
		}
		if (ev->kind == XRAYFDR_EV_ENTRY) {
			if (depth[t] < DEPTH)
				stacks[t][depth[t]] = ev->func_id;
			depth[t]++;
		} else if (ev->kind == XRAYFDR_EV_EXIT) {
			if (!depth[t])
				__builtin_trap(); /* an exit of nothing */
			depth[t]--;
			if (depth[t] < DEPTH &&
			    stacks[t][depth[t]] != ev->func_id)
				__builtin_trap(); /* not the top's exit */
		} else {
			__builtin_trap(); /* TraceLog has only calls */
		}
		(void)text_reader_function_name(r, ev->func_id);
	}
	if (ret < 0 && !*text_reader_error(r))
		__builtin_trap();
	text_reader_free(r);
	fclose(f);
	return 0;
}
