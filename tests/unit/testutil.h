/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the cmocka unit tests. */
#ifndef XRAYFDR_TESTS_TESTUTIL_H
#define XRAYFDR_TESTS_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include <xrayfdr/fdr.h>

/* Skip the current test, saying why (the runner requires a reason). */
#define skip_because(...)                              \
	do {                                           \
		printf("# SKIP-REASON: " __VA_ARGS__); \
		printf("\n");                          \
		fflush(stdout);                        \
		skip();                                \
	} while (0)

/* Compare @len bytes with a hex string such as "0f 50 00 00" (spaces are
 * ignored); on mismatch print both and fail. */
#define assert_hex(bytes, len, hex) \
	assert_hex_((bytes), (len), (hex), __FILE__, __LINE__)
void assert_hex_(const void *bytes, size_t len, const char *hex,
		 const char *file, int line);

/* A growable in-memory sink for the writer. */
struct membuf {
	uint8_t *data;
	size_t len, cap;
	int fail_after; /* >0: fail the write that would exceed this many bytes */
};
int membuf_write(void *ctx, const void *data, size_t size);
void membuf_free(struct membuf *m);

/* A list of events with owned copies of their arguments and payloads. */
struct event_list {
	struct xrayfdr_event *ev;
	size_t n, cap;
};
void event_list_add(struct event_list *l, const struct xrayfdr_event *ev);
void event_list_free(struct event_list *l);

/*
 * Read all events of a log in memory.  Return the reader's final result
 * (0 or negative); fill @out (may be NULL) and, if @diag, the rule of the
 * error (or "" if none) and its offset.
 */
struct read_result {
	int ret;
	const char *rule;
	uint64_t offset;
	struct xrayfdr_reader_stats stats;
	unsigned int warnings_seen;
	char last_warning_rule[64];
};
void read_all(const void *data, size_t size, unsigned int flags,
	      struct event_list *out, struct read_result *res);

/* Compare two events field by field (payloads and arguments included). */
#define assert_event_equal(a, b) \
	assert_event_equal_((a), (b), __FILE__, __LINE__)
void assert_event_equal_(const struct xrayfdr_event *a,
			 const struct xrayfdr_event *b, const char *file,
			 int line);

/* A deterministic event stream exercising every event kind. */
struct gen_opts {
	unsigned int threads;
	unsigned int count;
	bool args;
	bool custom;
	bool typed;
	bool wraps; /* TSC jumps past 32 bits */
	bool backwards; /* TSC going back now and then (a new CPU's clock) */
	uint64_t seed;
};
void gen_events(const struct gen_opts *o, struct event_list *out);

/* Write @events with the given writer options into @m; assert success. */
void write_events(const struct xrayfdr_writer_opts *opts,
		  const struct event_list *events, struct membuf *m);

#endif
