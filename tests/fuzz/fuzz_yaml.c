// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the llvm-xray YAML reader (tools/analysis/
 * text_reader.c), in both strict and keep-going mode (the first byte
 * chooses).  Every event it yields must be whole: a known kind, arguments
 * only on entries with arguments, payloads readable to their last byte.
 */
#include <stdio.h>
#include <string.h>

#include "../../tools/analysis/input/text_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct xrayfdr_event *ev;
	struct trace_header hdr;
	struct trace_stats st = { 0 };
	struct text_reader *r;
	volatile uint8_t sink = 0;
	FILE *f;
	int ret;

	if (size < 1)
		return 0;
	f = fmemopen((void *)(data + 1), size - 1, "r");
	if (!f)
		return 0;
	r = text_reader_new(TEXT_YAML, f, "fuzz.yaml", data[0] & 1, NULL, NULL);
	if (!r) {
		fclose(f);
		return 0;
	}
	ret = text_reader_header(r, &hdr);
	while (ret == 0 && (ret = text_reader_next(r, &ev)) == 1) {
		if (ev->kind > XRAYFDR_EV_TYPED)
			__builtin_trap();
		if (ev->nargs && ev->kind != XRAYFDR_EV_ENTRY_ARGS)
			__builtin_trap();
		for (uint32_t i = 0; i < ev->nargs; i++)
			sink ^= (uint8_t)ev->args[i];
		for (uint32_t i = 0; i < ev->data_size; i++)
			sink ^= ((const uint8_t *)ev->data)[i];
		ret = 0;
	}
	if (ret < 0 && !*text_reader_error(r))
		__builtin_trap(); /* an error always has a message */
	text_reader_stats(r, &st);
	text_reader_free(r);
	fclose(f);
	(void)sink;
	return 0;
}
