// SPDX-License-Identifier: GPL-2.0-only
/*
 * The FDR controller driven with a clock and a CPU of our own (fdr.c is
 * built with RT_TEST_CLOCK for this suite): what LLVM's rewinding erases
 * and keeps, NewCPUId, TSCWrap, arguments, events, full queues and
 * nested events.  Every log is read back with our reader, and every
 * record that survives must carry exactly the time it was made at.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <xrayfdr/runtime.h>

#include "../../lib/runtime/controller.h"
#include "../../lib/runtime/state.h"
#include "../../lib/runtime/thread.h"
#include "rtutil.h"

static uint64_t clock_now;
static uint32_t cpu_now;

/* fdr.c built with RT_TEST_CLOCK calls these instead of rdtsc and rseq */
uint64_t rt_test_tsc(void);
uint32_t rt_test_cpu(void);

uint64_t rt_test_tsc(void)
{
	return clock_now;
}

uint32_t rt_test_cpu(void)
{
	return cpu_now;
}

static char dir[64], log_path[128];

/* What we expect back: kind, id, time, argument. */
struct want {
	unsigned int kind;
	int32_t id;
	uint64_t tsc;
	uint64_t arg;
};

static struct want wants[4096];
static size_t nwants;

static void start(const char *extra)
{
	char config[512];

	snprintf(log_path, sizeof(log_path), "%s/log.xray", dir);
	/* 1 MHz: a tick is a microsecond, so thresholds read directly */
	snprintf(config, sizeof(config),
		 "tsc_sysfs=%s output=%s verbosity=0 %s", dir, log_path, extra);
	assert_int_equal(__xray_log_init_mode("xray-fdr", config),
			 XRAY_LOG_INITIALIZED);
	nwants = 0;
	cpu_now = 0;
}

static void expect(unsigned int kind, int32_t id, uint64_t tsc)
{
	wants[nwants++] = (struct want){ kind, id, tsc, 0 };
}

static void fn(enum XRayEntryType kind, int32_t id, uint64_t at)
{
	clock_now = at;
	rt_fdr_handle_arg0(id, kind);
}

static void finish(struct event_list *got)
{
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
	rt_read_log(log_path, got);
}

/* Is @e one of the runtime's own events (the info event, a thread
 * name)? */
static bool runtime_event(const struct xrayfdr_event *e)
{
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	uint32_t tid;

	return e->kind == XRAYFDR_EV_CUSTOM &&
	       ((e->data_size > 12 && !memcmp(e->data, "xrayfdr-info", 12)) ||
		xrayfdr_thread_name_decode(e->data, e->data_size, &tid, name));
}

/* The log's events, minus the runtime's own, against wants[]. */
static void check(struct event_list *got)
{
	size_t j = 0;

	for (size_t i = 0; i < got->n; i++) {
		const struct xrayfdr_event *e = &got->ev[i];

		if (runtime_event(e))
			continue;
		if (j >= nwants)
			fail_msg("extra event %zu: kind %u id %d tsc %llu", i,
				 e->kind, e->func_id,
				 (unsigned long long)e->tsc);
		if (e->kind != wants[j].kind || e->func_id != wants[j].id ||
		    e->tsc != wants[j].tsc ||
		    (e->nargs && e->args[0] != wants[j].arg))
			fail_msg(
				"event %zu: kind %u id %d tsc %llu, want kind %u id %d tsc %llu",
				j, e->kind, e->func_id,
				(unsigned long long)e->tsc, wants[j].kind,
				wants[j].id, (unsigned long long)wants[j].tsc);
		j++;
	}
	if (j != nwants)
		fail_msg("%zu events, want %zu", j, nwants);
	event_list_free(got);
}

static int setup(void **state)
{
	(void)state;
	if (rt_tmpdir(dir, "fdr"))
		return -1;
	rt_put_file(dir, "tsc_khz", "1000\n");
	rt_put_file(dir, "constant_tsc", "1\n");
	rt_put_file(dir, "nonstop_tsc", "1\n");
	rt_put_file(dir, "tsc_reliable", "1\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rt_rmdir(dir);
}

/* No threshold: every event, exactly. */
static void test_everything_kept(void **state)
{
	struct event_list got;

	(void)state;
	start("");
	fn(ENTRY, 1, 100), expect(XRAYFDR_EV_ENTRY, 1, 100);
	fn(ENTRY, 2, 101), expect(XRAYFDR_EV_ENTRY, 2, 101);
	fn(EXIT, 2, 102), expect(XRAYFDR_EV_EXIT, 2, 102);
	fn(TAIL, 1, 103), expect(XRAYFDR_EV_TAIL_EXIT, 1, 103);
	fn(ENTRY, 3, 104), expect(XRAYFDR_EV_ENTRY, 3, 104);
	fn(EXIT, 3, 104), expect(XRAYFDR_EV_EXIT, 3, 104);
	finish(&got);
	check(&got);
}

/* LLVM's rewinding with func_duration_threshold_us=10 (10 ticks here). */
static void test_rewinding(void **state)
{
	struct event_list got;

	(void)state;
	start("func_duration_threshold_us=10");
	/* a short call inside a long one: only the long one stays */
	fn(ENTRY, 1, 100), expect(XRAYFDR_EV_ENTRY, 1, 100);
	fn(ENTRY, 2, 101);
	fn(EXIT, 2, 105);
	fn(EXIT, 1, 200), expect(XRAYFDR_EV_EXIT, 1, 200);
	/* a short call on its own: gone */
	fn(ENTRY, 1, 300);
	fn(EXIT, 1, 305);
	/* a short tail-call chain: gone, tail exit and all */
	fn(ENTRY, 1, 400);
	fn(TAIL, 1, 401);
	fn(ENTRY, 2, 402);
	fn(EXIT, 2, 404);
	/* a caller that tail-calls soon after its entry is a short call
	 * too (LLVM's rule), whatever its callee does */
	fn(ENTRY, 1, 500);
	fn(TAIL, 1, 501);
	fn(ENTRY, 2, 502), expect(XRAYFDR_EV_ENTRY, 2, 502);
	fn(EXIT, 2, 530), expect(XRAYFDR_EV_EXIT, 2, 530);
	/* a short callee of a long caller's tail call: only it goes */
	fn(ENTRY, 1, 700), expect(XRAYFDR_EV_ENTRY, 1, 700);
	fn(TAIL, 1, 715), expect(XRAYFDR_EV_TAIL_EXIT, 1, 715);
	fn(ENTRY, 2, 716);
	fn(EXIT, 2, 718);
	/* after all that rewinding, the times are still right */
	fn(ENTRY, 3, 800), expect(XRAYFDR_EV_ENTRY, 3, 800);
	fn(EXIT, 3, 900), expect(XRAYFDR_EV_EXIT, 3, 900);
	/* a CPU change at a tail exit: the pair is not undoable (LLVM would
	 * erase half of the NewCPUId record with it) */
	fn(ENTRY, 1, 1000), expect(XRAYFDR_EV_ENTRY, 1, 1000);
	cpu_now = 1;
	fn(TAIL, 1, 1001), expect(XRAYFDR_EV_TAIL_EXIT, 1, 1001);
	fn(ENTRY, 2, 1002);
	fn(EXIT, 2, 1004);
	fn(ENTRY, 4, 1100), expect(XRAYFDR_EV_ENTRY, 4, 1100);
	fn(EXIT, 4, 1200), expect(XRAYFDR_EV_EXIT, 4, 1200);
	cpu_now = 0;
	/* a CPU change between entry and exit keeps a short call */
	fn(ENTRY, 5, 1300), expect(XRAYFDR_EV_ENTRY, 5, 1300);
	cpu_now = 1;
	fn(EXIT, 5, 1302), expect(XRAYFDR_EV_EXIT, 5, 1302);
	/* an entry with an argument is never undone */
	clock_now = 1400;
	rt_fdr_handle_arg1(6, LOG_ARGS_ENTRY, 77);
	wants[nwants++] = (struct want){ XRAYFDR_EV_ENTRY_ARGS, 6, 1400, 77 };
	fn(EXIT, 6, 1401), expect(XRAYFDR_EV_EXIT, 6, 1401);
	finish(&got);
	check(&got);
}

/* A delta past 32 bits brings a TSCWrap; the times survive it. */
static void test_wrap(void **state)
{
	struct event_list got;
	uint64_t t = 1ull << 40;

	(void)state;
	start("");
	fn(ENTRY, 1, t), expect(XRAYFDR_EV_ENTRY, 1, t);
	t += (1ull << 32) + 5;
	fn(EXIT, 1, t), expect(XRAYFDR_EV_EXIT, 1, t);
	t += 3;
	fn(ENTRY, 2, t), expect(XRAYFDR_EV_ENTRY, 2, t);
	finish(&got);
	check(&got);
}

static void test_events(void **state)
{
	struct event_list got;
	bool found_custom = false, found_typed = false;

	(void)state;
	start("");
	fn(ENTRY, 1, 50);
	clock_now = 60;
	rt_fdr_handle_custom("hello", 5);
	clock_now = 70;
	rt_fdr_handle_typed(9, "typed!", 6);
	clock_now = 80;
	rt_fdr_handle_custom("", 0); /* llvm-xray rejects empty payloads */
	fn(EXIT, 1, 90);
	finish(&got);
	for (size_t i = 0; i < got.n; i++) {
		const struct xrayfdr_event *e = &got.ev[i];

		if (e->kind == XRAYFDR_EV_CUSTOM && e->data_size == 5) {
			assert_memory_equal(e->data, "hello", 5);
			assert_int_equal(e->tsc, 60);
			found_custom = true;
		}
		if (e->kind == XRAYFDR_EV_TYPED) {
			assert_int_equal(e->event_type, 9);
			assert_int_equal(e->tsc, 70);
			assert_memory_equal(e->data, "typed!", 6);
			found_typed = true;
		}
		if (e->kind == XRAYFDR_EV_EXIT)
			assert_int_equal(e->tsc, 90);
	}
	assert_true(found_custom && found_typed);
	assert_int_equal(rt_live.dropped, 1);
	event_list_free(&got);
}

/* A small queue wraps: the newest window stays, every event is counted.
 * (The thread has a name of its own, which each buffer begins with.) */
static void test_flight_recorder(void **state)
{
	XRAYFDR_OPTS(xrayfdr_trace_stats, st);
	struct event_list got;
	uint64_t t = 10;
	size_t kept = 0, made = 0;
	char before[16] = "";

	(void)state;
	prctl(PR_GET_NAME, before);
	prctl(PR_SET_NAME, "recorder");
	start("buffer_size=1024 buffer_max=3");
	for (int i = 0; i < 1000; i++, made += 2) {
		fn(ENTRY, 1 + i % 5, t++);
		fn(EXIT, 1 + i % 5, t++);
	}
	assert_int_equal(xrayfdr_trace_stats(&st), 0);
	assert_int_equal(st.buffers, 3);
	finish(&got);
	prctl(PR_SET_NAME, before);
	for (size_t i = 0; i < got.n; i++) {
		if (got.ev[i].kind <= XRAYFDR_EV_ENTRY_ARGS) {
			kept++;
			/* the newest window: the last events made */
			assert_true(got.ev[i].tsc >= t - 3 * 1024 / 8);
		}
	}
	/* each buffer began with the thread's name: those recycled had one */
	assert_int_equal(kept + st.overwritten + st.dropped,
			 made + st.recycled);
	assert_true(st.recycled > 0);
	event_list_free(&got);
}

/* The thread-name events of the log, in order: their names and times,
 * and the offset of the buffer each is in. */
struct name_seen {
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	uint64_t tsc, buffer;
};

static size_t names_of(const struct event_list *got, struct name_seen *out,
		       size_t max)
{
	size_t n = 0;
	uint32_t tid;

	for (size_t i = 0; i < got->n && n < max; i++) {
		const struct xrayfdr_event *e = &got->ev[i];

		if (e->kind != XRAYFDR_EV_CUSTOM ||
		    !xrayfdr_thread_name_decode(e->data, e->data_size, &tid,
						out[n].name))
			continue;
		assert_int_equal(tid, e->tid);
		out[n].tsc = e->tsc;
		out[n].buffer = e->buffer_offset;
		n++;
	}
	return n;
}

/*
 * Every buffer begins with the thread's name, at the time of its first
 * event; a rename shows at the next buffer; and one since the last
 * buffer began, at the flush (this thread is alive), after its last
 * event.  The calls are still all there.
 */
static void test_thread_names(void **state)
{
	struct name_seen seen[64];
	struct event_list got;
	char before[16] = "";
	uint64_t t = 1000, renamed = 0, first_in_buffer = 0, last = 0;
	size_t n, buffers = 0, second = 0;

	(void)state;
	prctl(PR_GET_NAME, before);
	prctl(PR_SET_NAME, "first name");
	start("buffer_size=1024"); /* about 55 calls a buffer */
	for (int i = 0; i < 300; i++) {
		if (i == 150) {
			prctl(PR_SET_NAME, "second name");
			renamed = t;
		}
		fn(ENTRY, 1, t), expect(XRAYFDR_EV_ENTRY, 1, t);
		t++;
		fn(EXIT, 1, t), expect(XRAYFDR_EV_EXIT, 1, t);
		t++;
	}
	prctl(PR_SET_NAME, "third name");
	finish(&got);
	prctl(PR_SET_NAME, before);
	n = names_of(&got, seen, 64);
	/* each buffer's first event comes after the name in effect then */
	for (size_t i = 0; i < got.n; i++) {
		const struct xrayfdr_event *e = &got.ev[i];

		if (runtime_event(e))
			continue;
		if (e->buffer_offset != first_in_buffer) {
			first_in_buffer = e->buffer_offset;
			assert_true(buffers < n);
			assert_true(seen[buffers].buffer == first_in_buffer);
			assert_true(seen[buffers].tsc == e->tsc);
			assert_string_equal(seen[buffers].name,
					    e->tsc < renamed ? "first name" :
							       "second name");
			second += e->tsc >= renamed;
			buffers++;
		}
		last = e->tsc;
	}
	assert_true(buffers >= 4 && second >= 1 && second < buffers);
	/* and the flush's, after the last event */
	assert_true(n == buffers + 1);
	assert_string_equal(seen[buffers].name, "third name");
	assert_true(seen[buffers].buffer == first_in_buffer);
	assert_true(seen[buffers].tsc == last);
	check(&got);
}

/* An event that arrives while the thread is in the C path (a signal
 * handler's) is dropped and counted, never interleaved. */
static void test_nested_dropped(void **state)
{
	struct event_list got;

	(void)state;
	start("");
	fn(ENTRY, 1, 10), expect(XRAYFDR_EV_ENTRY, 1, 10);
	rt_self.busy = 1;
	fn(ENTRY, 2, 11);
	rt_self.busy = 0;
	fn(EXIT, 1, 12), expect(XRAYFDR_EV_EXIT, 1, 12);
	assert_int_equal(rt_live.dropped, 1);
	finish(&got);
	check(&got);
}

/* Version 1: no Pid records, no typed events (dropped, counted). */
static void test_version1(void **state)
{
	struct event_list got;

	(void)state;
	start("version=1 buffer_size=512");
	for (int i = 0; i < 40; i++) {
		fn(ENTRY, 1, 100 + 2 * (uint64_t)i),
			expect(XRAYFDR_EV_ENTRY, 1, 100 + 2 * (uint64_t)i);
		fn(EXIT, 1, 101 + 2 * (uint64_t)i),
			expect(XRAYFDR_EV_EXIT, 1, 101 + 2 * (uint64_t)i);
	}
	rt_fdr_handle_typed(1, "x", 1);
	assert_int_equal(rt_live.dropped, 1);
	finish(&got);
	check(&got);
}

/*
 * max_depth=2: calls deeper than 2 levels leave no record; a tail call
 * stays at its caller's level; an exit whose call is not on top (an
 * exception unwound the calls above it) brings the depth back down; the
 * fast path is off, since only the C path counts.
 */
static void test_depth(void **state)
{
	struct event_list got;
	uint64_t t = 100;

	(void)state;
	start("max_depth=2");
	assert_int_equal(rt_fast_key, 0);
	/* an exit of a call that began before the trace saw one: kept */
	fn(EXIT, 9, t), expect(XRAYFDR_EV_EXIT, 9, t), t++;
	fn(ENTRY, 1, t), expect(XRAYFDR_EV_ENTRY, 1, t), t++;
	fn(ENTRY, 2, t), expect(XRAYFDR_EV_ENTRY, 2, t), t++;
	fn(ENTRY, 3, t++);
	fn(EXIT, 3, t++);
	fn(EXIT, 2, t), expect(XRAYFDR_EV_EXIT, 2, t), t++;
	/* a tail call: the callee takes its caller's level */
	fn(ENTRY, 4, t), expect(XRAYFDR_EV_ENTRY, 4, t), t++;
	fn(TAIL, 4, t), expect(XRAYFDR_EV_TAIL_EXIT, 4, t), t++;
	fn(ENTRY, 5, t), expect(XRAYFDR_EV_ENTRY, 5, t), t++;
	fn(ENTRY, 6, t++);
	fn(EXIT, 6, t++);
	fn(EXIT, 5, t), expect(XRAYFDR_EV_EXIT, 5, t), t++;
	/* 8 and 9 are left by an exception that 7 catches */
	fn(ENTRY, 7, t), expect(XRAYFDR_EV_ENTRY, 7, t), t++;
	fn(ENTRY, 8, t++);
	fn(ENTRY, 9, t++);
	fn(EXIT, 7, t), expect(XRAYFDR_EV_EXIT, 7, t), t++;
	clock_now = t;
	rt_fdr_handle_arg1(10, LOG_ARGS_ENTRY, 77);
	wants[nwants++] = (struct want){ XRAYFDR_EV_ENTRY_ARGS, 10, t, 77 };
	t++;
	fn(EXIT, 10, t), expect(XRAYFDR_EV_EXIT, 10, t), t++;
	/* deeper than the ids kept: counted, and the levels come back
	 * (under 1, still open, 100 is level 2) */
	fn(ENTRY, 100, t), expect(XRAYFDR_EV_ENTRY, 100, t), t++;
	for (int i = 1; i < RT_DEPTH_IDS + 10; i++)
		fn(ENTRY, 100 + i, t++);
	for (int i = RT_DEPTH_IDS + 9; i > 0; i--)
		fn(EXIT, 100 + i, t++);
	fn(EXIT, 100, t), expect(XRAYFDR_EV_EXIT, 100, t), t++;
	fn(ENTRY, 11, t), expect(XRAYFDR_EV_ENTRY, 11, t), t++;
	fn(EXIT, 11, t), expect(XRAYFDR_EV_EXIT, 11, t), t++;
	/* 1 stays open: the next trace starts its own count */
	finish(&got);
	check(&got);

	start("max_depth=1");
	fn(ENTRY, 12, t), expect(XRAYFDR_EV_ENTRY, 12, t), t++;
	fn(ENTRY, 13, t++);
	fn(EXIT, 13, t++);
	fn(EXIT, 12, t), expect(XRAYFDR_EV_EXIT, 12, t), t++;
	finish(&got);
	check(&got);

	start("");
	assert_int_not_equal(rt_fast_key, 0);
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_everything_kept),
		cmocka_unit_test(test_rewinding),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_flight_recorder),
		cmocka_unit_test(test_nested_dropped),
		cmocka_unit_test(test_version1),
		cmocka_unit_test(test_thread_names),
		cmocka_unit_test(test_depth),
	};

	return cmocka_run_group_tests_name("FDR controller", tests, setup,
					   teardown);
}
