// SPDX-License-Identifier: GPL-2.0-only
/* The call matcher's hooks, in the order and with the values a command
 * sees them, with and without a minimum duration, event by event and in
 * batches. */
#include <string.h>

#include "testutil.h"
#include "../../tools/analysis/engine/calls.h"

struct log {
	char text[1024];
	size_t len;
};

static void say(struct log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct log *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	l->len += (size_t)vsnprintf(l->text + l->len, sizeof(l->text) - l->len,
				    fmt, ap);
	va_end(ap);
	assert_true(l->len < sizeof(l->text));
}

/* "E<func>@<tsc>/<depth>" for an enter; "D<func>:<dur>s<self>" and
 * "u" (unwound) or "z" (at the end) for a done. */
static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	/* the event is the entry's: its time, function and thread */
	assert_int_equal(ev->tsc, f->entry_tsc);
	assert_int_equal(ev->func_id, f->func_id);
	assert_int_equal(ev->tid, t->tid);
	assert_ptr_equal(f, &t->stack[depth]);
	say(ctx, "E%d@%llu/%u ", f->func_id, (unsigned long long)ev->tsc,
	    depth);
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	(void)t;
	say(ctx, "D%d:%llus%llu%s ", d->func_id, (unsigned long long)d->dur,
	    (unsigned long long)d->self,
	    d->at_end	? "z" :
	    !d->by_exit ? "u" :
			  "");
}

static const struct calls_ops ops = {
	.enter = on_enter,
	.done = on_done,
};

struct step {
	enum xrayfdr_event_kind kind;
	int32_t func;
	uint64_t tsc;
};

#define IN(f, t)                           \
	{                                  \
		XRAYFDR_EV_ENTRY, (f), (t) \
	}
#define OUT(f, t)                         \
	{                                 \
		XRAYFDR_EV_EXIT, (f), (t) \
	}

/* A long call with short and long callees; a longjmp out of a long
 * call and out of a short one; calls open at the end. */
static const struct step steps[] = {
	IN(1, 0),     IN(2, 1),	  OUT(2, 2),  IN(3, 3),	  IN(4, 4),
	OUT(4, 20),   OUT(3, 21), IN(5, 22),  OUT(5, 23), OUT(1, 30),
	IN(1, 40),    IN(2, 41),  IN(3, 42),  OUT(1, 55), IN(6, 60),
	IN(7, 61),    OUT(6, 63), IN(8, 100), IN(9, 101), IN(10, 140),
	OUT(10, 150),
};

#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

/* Feed @steps one at a time, or (@batch) as one batch. */
static void run(uint64_t min_ticks, bool batch, struct log *l)
{
	struct calls *c = calls_new(CALLS_UNWIND, false, &ops, l);
	struct xrayfdr_event ev = { .pid = 1, .tid = 7 };
	struct xrayfdr_call_event calls[NSTEPS];
	uint64_t seq = 0;

	assert_non_null(c);
	calls_min_duration(c, min_ticks);
	for (size_t i = 0; i < NSTEPS; i++) {
		ev.kind = steps[i].kind;
		ev.func_id = steps[i].func;
		ev.tsc = steps[i].tsc;
		ev.offset = 8 * i;
		calls[i] = (struct xrayfdr_call_event){ .tsc = ev.tsc,
							.func_id = ev.func_id,
							.kind = ev.kind };
		if (!batch)
			assert_int_equal(calls_event(c, &ev), 0);
	}
	if (batch) {
		assert_int_equal(calls_batch(c, &ev, calls, NSTEPS, &seq), 0);
		assert_int_equal(seq, NSTEPS);
	}
	calls_close_all(c);
	calls_free(c);
}

static void check(uint64_t min_ticks, const char *want)
{
	struct log one = { 0 }, batch = { 0 };

	run(min_ticks, false, &one);
	run(min_ticks, true, &batch);
	assert_string_equal(one.text, want);
	assert_string_equal(batch.text, want);
}

static void test_every_call(void **state)
{
	(void)state;
	check(0, "E1@0/0 E2@1/1 D2:1s1 E3@3/1 E4@4/2 D4:16s16 D3:18s2 "
		 "E5@22/1 D5:1s1 D1:30s10 "
		 "E1@40/0 E2@41/1 E3@42/2 D3:13s13u D2:14s1u D1:15s1 "
		 "E6@60/0 E7@61/1 D7:2s2u D6:3s1 "
		 "E8@100/0 E9@101/1 E10@140/2 D10:10s10 D9:49s39z D8:50s1z ");
}

/*
 * At 10 ticks: the entries of a long call and its callers run when it
 * ends, outermost first; short calls never show, their time in their
 * callers' self time; a longjmp reports the long frames it unwinds.
 */
static void test_min_duration(void **state)
{
	(void)state;
	check(10, "E1@0/0 E3@3/1 E4@4/2 D4:16s16 D3:18s2 D1:30s10 "
		  "E1@40/0 E2@41/1 E3@42/2 D3:13s13u D2:14s1u D1:15s1 "
		  "E8@100/0 E9@101/1 E10@140/2 D10:10s10 D9:49s39z D8:50s1z ");
	/* one tick more: only what lasted 11 or more */
	check(11, "E1@0/0 E3@3/1 E4@4/2 D4:16s16 D3:18s2 D1:30s10 "
		  "E1@40/0 E2@41/1 E3@42/2 D3:13s13u D2:14s1u D1:15s1 "
		  "E8@100/0 E9@101/1 D9:49s39z D8:50s1z ");
	check(1000, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_call),
		cmocka_unit_test(test_min_duration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
