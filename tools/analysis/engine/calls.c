// SPDX-License-Identifier: GPL-2.0-only
/* Per-thread call stacks; see calls.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "../stats/table.h"

struct calls {
	enum calls_mode mode;
	bool by_tid;
	const struct calls_ops *ops;
	void *ctx;
	struct table threads;
	struct call_thread *last; /* the thread of the last event */
	uint64_t last_key;
	bool saw_sched;
	bool stop; /* calls_stop() during a batch */
	uint64_t min_dur; /* calls_min_duration(); 0: every call is shown */
	uint64_t unmatched, unwound;
};

struct calls *calls_new(enum calls_mode mode, bool by_tid,
			const struct calls_ops *ops, void *ctx)
{
	struct calls *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->mode = mode;
	c->by_tid = by_tid;
	table_init(&c->threads, sizeof(struct call_thread), 0);
	c->ops = ops;
	c->ctx = ctx;
	return c;
}

void calls_free(struct calls *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->threads.n; i++)
		free(calls_thread(c, i)->stack);
	table_free(&c->threads);
	free(c);
}

uint32_t calls_nthreads(const struct calls *c)
{
	return c->threads.n;
}

struct call_thread *calls_thread(const struct calls *c, uint32_t index)
{
	return table_at(&c->threads, index);
}

bool calls_saw_sched(const struct calls *c)
{
	return c->saw_sched;
}

const char *calls_thread_label(const struct call_thread *t, char *buf,
			       size_t len)
{
	if (t->name[0])
		snprintf(buf, len, "%s (%" PRIu32 ")", t->name, t->tid);
	else
		snprintf(buf, len, "thread %" PRIu32, t->tid);
	return buf;
}

uint64_t calls_unmatched(const struct calls *c)
{
	return c->unmatched;
}

uint64_t calls_unwound(const struct calls *c)
{
	return c->unwound;
}

static struct call_thread *get_thread(struct calls *c,
				      const struct xrayfdr_event *ev)
{
	uint64_t key = c->by_tid ? ev->tid : thread_key(ev->pid, ev->tid);
	struct call_thread *t;
	uint32_t index;
	bool created;

	if (c->last && c->last_key == key)
		return c->last;
	t = table_get(&c->threads, key, &index, &created);
	if (!t)
		return NULL;
	if (created) {
		t->pid = ev->pid;
		t->tid = ev->tid;
		t->index = index;
		t->first_tsc = ev->tsc;
		if (c->ops->thread)
			c->ops->thread(c->ctx, t);
	}
	c->last = t;
	c->last_key = key;
	return t;
}

/* The thread's off-CPU total as of @tsc (counting an open interval). */
static uint64_t off_total_at(const struct call_thread *t, uint64_t tsc)
{
	uint64_t total = t->off_total;

	if (t->off_cpu && tsc > t->off_since)
		total += tsc - t->off_since;
	return total;
}

static uint64_t span(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

void calls_min_duration(struct calls *c, uint64_t ticks)
{
	c->min_dur = ticks;
}

/*
 * With a minimum duration, a frame's enter hook waits until the call is
 * known to be shown: when it, or a call inside it, ends long enough.
 * Calls inside a shown one last no longer than it, so the shown frames
 * are always the bottom t->shown ones, and their enter hooks run in order
 * of entry, each before anything inside it is reported.
 */
static __attribute__((noinline)) void
show_frames(struct calls *c, struct call_thread *t, uint32_t upto)
{
	struct xrayfdr_event ev = {
		.kind = XRAYFDR_EV_ENTRY,
		.pid = t->pid,
		.tid = t->tid,
	};

	for (; t->shown <= upto; t->shown++) {
		struct call_frame *f = &t->stack[t->shown];

		ev.tsc = f->entry_tsc;
		ev.func_id = f->func_id;
		if (c->ops->enter)
			c->ops->enter(c->ctx, t, f, t->shown, &ev);
	}
}

/* Pop the top frame at @tsc and report it. */
static inline __attribute__((always_inline)) void
pop(struct calls *c, struct call_thread *t, uint64_t tsc, uint64_t offset,
    bool by_exit, bool deepest, bool at_end)
{
	struct call_frame *f = &t->stack[t->depth - 1];
	uint64_t dur = span(tsc, f->entry_tsc);
	uint64_t off = off_total_at(t, tsc) - f->off_at_entry;
	struct call_done d = {
		.func_id = f->func_id,
		.depth = t->depth - 1,
		.entry_tsc = f->entry_tsc,
		.exit_tsc = tsc,
		.offset = offset,
		.dur = dur,
		.self = dur > f->child_time ? dur - f->child_time : 0,
		.off_cpu = off,
		.by_exit = by_exit,
		.deepest = deepest,
		.at_end = at_end,
		.frame = f,
	};

	if (!by_exit && !at_end)
		c->unwound++;
	if (c->min_dur) {
		/* a frame already shown is reported whatever its time (with
		 * a clock that steps back, a callee can seem the longer) */
		if (dur >= c->min_dur || t->depth <= t->shown) {
			if (t->depth > t->shown)
				show_frames(c, t, t->depth - 1);
			if (c->ops->done)
				c->ops->done(c->ctx, t, &d);
			t->shown = t->depth - 1;
		}
	} else if (c->ops->done) {
		c->ops->done(c->ctx, t, &d);
	}
	t->depth--;
	if (t->depth)
		t->stack[t->depth - 1].child_time += dur;
}

static inline __attribute__((always_inline)) int
push(struct calls *c, struct call_thread *t, const struct xrayfdr_event *ev)
{
	struct call_frame *f;

	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 32;
		struct call_frame *s;

		if (t->cap >= CALLS_MAX_DEPTH)
			return -E2BIG;
		s = realloc(t->stack, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		t->stack = s;
		t->cap = cap;
	}
	f = &t->stack[t->depth];
	*f = (struct call_frame){
		.func_id = ev->func_id,
		.entry_tsc = ev->tsc,
		.off_at_entry = off_total_at(t, ev->tsc),
	};
	if (c->ops->enter && !c->min_dur)
		c->ops->enter(c->ctx, t, f, t->depth, ev);
	t->depth++;
	return 0;
}

/* An exit that is not the top frame's. */
static __attribute__((noinline)) void exit_below(struct calls *c,
						 struct call_thread *t,
						 const struct xrayfdr_event *ev)
{
	uint32_t match = 0;

	/* only the top may exit in strict mode; else look down the stack */
	if (c->mode != CALLS_STRICT) {
		match = t->depth;
		while (match && t->stack[match - 1].func_id != ev->func_id)
			match--;
	}
	if (!match) {
		for (bool first = true; c->mode == CALLS_CLEAR && t->depth;
		     first = false)
			pop(c, t, ev->tsc, ev->offset, false, first, false);
		c->unmatched++;
		if (c->ops->unmatched)
			c->ops->unmatched(c->ctx, t, ev);
		return;
	}
	for (bool first = true; t->depth >= match; first = false)
		pop(c, t, ev->tsc, ev->offset, t->depth == match, first, false);
}

static inline __attribute__((always_inline)) void
exit_event(struct calls *c, struct call_thread *t,
	   const struct xrayfdr_event *ev)
{
	if (t->depth && t->stack[t->depth - 1].func_id == ev->func_id)
		pop(c, t, ev->tsc, ev->offset, true, true, false);
	else
		exit_below(c, t, ev);
}

static void sched_event(struct calls *c, struct call_thread *t,
			const struct xrayfdr_event *ev)
{
	struct xrayfdr_sched_event se;

	if (!xrayfdr_sched_decode(ev->data, ev->data_size, &se))
		return;
	c->saw_sched = true;
	t->saw_sched = true;
	if (se.kind == XRAYFDR_SCHED_SWITCH_OUT && !t->off_cpu) {
		t->off_cpu = true;
		t->off_since = ev->tsc;
		if (c->ops->sched)
			c->ops->sched(c->ctx, t, true, ev->tsc);
	} else if (se.kind == XRAYFDR_SCHED_SWITCH_IN && t->off_cpu) {
		t->off_total += span(ev->tsc, t->off_since);
		t->off_cpu = false;
		if (c->ops->sched)
			c->ops->sched(c->ctx, t, false, ev->tsc);
	}
}

static void name_event(struct call_thread *t, const struct xrayfdr_event *ev)
{
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	uint32_t tid;

	if (xrayfdr_thread_name_decode(ev->data, ev->data_size, &tid, name))
		memcpy(t->name, name, sizeof(name));
}

int calls_event(struct calls *c, const struct xrayfdr_event *ev)
{
	struct call_thread *t = get_thread(c, ev);
	int ret = 0;

	if (!t)
		return -ENOMEM;
	t->last_tsc = ev->tsc;
	switch (ev->kind) {
	case XRAYFDR_EV_ENTRY:
	case XRAYFDR_EV_ENTRY_ARGS:
		ret = push(c, t, ev);
		t->last_was_exit = false;
		break;
	case XRAYFDR_EV_EXIT:
	case XRAYFDR_EV_TAIL_EXIT:
		exit_event(c, t, ev);
		t->last_was_exit = true;
		break;
	case XRAYFDR_EV_CUSTOM:
		sched_event(c, t, ev);
		name_event(t, ev);
		if (c->ops->other)
			c->ops->other(c->ctx, t, ev);
		break;
	case XRAYFDR_EV_TYPED:
		if (c->ops->other)
			c->ops->other(c->ctx, t, ev);
		break;
	default:
		break;
	}
	return ret;
}

int calls_batch(struct calls *c, const struct xrayfdr_event *last,
		const struct xrayfdr_call_event *calls, size_t n, uint64_t *seq)
{
	struct call_thread *t = get_thread(c, last);
	struct xrayfdr_event ev = *last;

	if (!t)
		return -ENOMEM;
	c->stop = false;
	if (c->ops->ahead)
		c->ops->ahead(c->ctx, t, calls, n);
	/* the first one's; each record is 8 bytes */
	ev.offset = last->offset - (n - 1) * XRAYFDR_FUNCTION_RECORD_SIZE;
	for (size_t i = 0; i < n && !c->stop;
	     i++, ev.offset += XRAYFDR_FUNCTION_RECORD_SIZE) {
		ev.tsc = calls[i].tsc;
		ev.kind = calls[i].kind;
		ev.func_id = calls[i].func_id;
		++*seq;
		t->last_tsc = ev.tsc;
		if (ev.kind == XRAYFDR_EV_ENTRY) {
			int ret = push(c, t, &ev);

			if (ret)
				return ret;
			t->last_was_exit = false;
		} else {
			exit_event(c, t, &ev);
			t->last_was_exit = true;
		}
	}
	return 0;
}

void calls_stop(struct calls *c)
{
	c->stop = true;
}

void calls_close_all(struct calls *c)
{
	for (uint32_t i = 0; i < c->threads.n; i++) {
		struct call_thread *t = calls_thread(c, i);

		while (t->depth)
			pop(c, t, t->last_tsc, UINT64_MAX, false, false, true);
	}
}
