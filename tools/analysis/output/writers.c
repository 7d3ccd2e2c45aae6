// SPDX-License-Identifier: GPL-2.0-only
/* trace_event JSON and TraceLog writers; see writers.h. */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../engine/calls.h"
#include "outbuf.h"
#include "../engine/ticks.h"
#include "writers.h"

struct call_writer {
	enum call_writer_kind kind;
	FILE *out;
	struct symbols *names;
	struct calls *calls;
	double freq;
	uint64_t hz; /* freq as an integer */
	struct outbuf *ob; /* trace_event: text goes through it */
	bool started;
	uint64_t base_tsc;
	bool first_record;
	uint64_t records; /* trace_event: events written */
	uint64_t unmatched;
	uint64_t clamped; /* TraceLog: times beyond its 64-bit fields */
	int error;
	/* TraceLog: functions named so far (bitset by id) */
	uint8_t *named;
	size_t named_bytes;
};

/* Per thread: when it was last switched in or reported (TraceLog). */
struct writer_thread {
	uint64_t on_since;
	bool running;
};

/* trace_event: nanoseconds of @ticks, printed as microseconds with three
 * decimals, need no floating point. */
static uint64_t nanos(const struct call_writer *w, uint64_t ticks)
{
	return ticks_to_ns(ticks, w->hz);
}

/* TraceLog: milliseconds since the first event in the file, negative for
 * events of other threads written earlier (TraceLog's times are signed).
 * A time beyond int64_t (a slow clock's huge count) is written as the
 * nearest end and counted (call_writer_clamped()). */
static int64_t millis(struct call_writer *w, uint64_t tsc)
{
	double d = tsc >= w->base_tsc ? (double)(tsc - w->base_tsc) :
					-(double)(w->base_tsc - tsc);
	double ms = floor(d * 1e3 / w->freq);

	if (ms >= -0x1p63 && ms < 0x1p63)
		return (int64_t)ms;
	w->clamped++;
	return ms < 0 ? INT64_MIN : INT64_MAX;
}

/* TraceLog's microseconds of @ticks, clamped as millis() clamps. */
static uint64_t micros(struct call_writer *w, uint64_t ticks)
{
	double us = (double)ticks * 1e6 / w->freq;

	if (us < 0x1p64)
		return (uint64_t)us;
	w->clamped++;
	return UINT64_MAX;
}

static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void json_bytes(struct outbuf *o, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = data;

	ob_char(o, '"');
	for (size_t i = 0, run; i < len; i++) {
		/* runs that need no escape, the whole of most names, at once */
		for (run = i; run < len && json_plain(p[run]); run++)
			;
		ob_write(o, p + i, run - i);
		i = run;
		if (i == len)
			break;
		if (p[i] == '"' || p[i] == '\\') {
			ob_char(o, '\\');
			ob_char(o, (char)p[i]);
		} else {
			ob_str(o, "\\u00");
			ob_char(o, hex[p[i] >> 4]);
			ob_char(o, hex[p[i] & 15]);
		}
	}
	ob_char(o, '"');
}

static const char *fname(struct call_writer *w, int32_t id)
{
	return symbols_name(w->names, id);
}

/*
 * trace_event.
 */
static void te_record_start(struct call_writer *w)
{
	ob_str(w->ob, w->first_record ? "\n" : ",\n");
	w->first_record = false;
	w->records++;
}

/* ",\"KEY\":" then @ns as microseconds: "12.345" */
static inline void te_micros(struct call_writer *w, const char *key,
			     uint64_t ns)
{
	ob_str(w->ob, key);
	ob_thousandths(w->ob, ns);
}

static void te_ids(struct call_writer *w, uint32_t pid, uint32_t tid)
{
	ob_str(w->ob, ",\"pid\":");
	ob_u64(w->ob, pid);
	ob_str(w->ob, ",\"tid\":");
	ob_u64(w->ob, tid);
}

static void te_thread(void *ctx, struct call_thread *t)
{
	struct call_writer *w = ctx;

	te_record_start(w);
	ob_str(w->ob, "{\"name\":\"thread_name\",\"ph\":\"M\"");
	te_ids(w, t->pid, t->tid);
	ob_str(w->ob, ",\"args\":{\"name\":\"thread ");
	ob_u64(w->ob, t->tid);
	ob_str(w->ob, "\"}}");
}

/*
 * A complete event per call.  Its arguments are what a viewer cannot
 * work out: the function id and how the call ended if not by its exit.
 * (Self time follows from the callees, time off the CPU from the off-CPU
 * slices; and viewers such as speedscope tell frames apart by their
 * arguments, so per-call values would split a function into many.)
 */
static void te_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct call_writer *w = ctx;
	const char *name = fname(w, d->func_id);

	te_record_start(w);
	ob_str(w->ob, "{\"name\":");
	json_bytes(w->ob, name, strlen(name));
	ob_str(w->ob, ",\"cat\":\"function\",\"ph\":\"X\"");
	te_micros(w, ",\"ts\":", nanos(w, d->entry_tsc));
	te_micros(w, ",\"dur\":",
		  nanos(w, d->exit_tsc > d->entry_tsc ?
				   d->exit_tsc - d->entry_tsc :
				   0));
	te_ids(w, t->pid, t->tid);
	ob_str(w->ob, ",\"args\":{\"func_id\":");
	ob_i64(w->ob, d->func_id);
	if (d->at_end)
		ob_str(w->ob, ",\"open_at_end\":true");
	if (!d->by_exit && !d->at_end)
		ob_str(w->ob, ",\"ended_by_caller_exit\":true");
	ob_str(w->ob, "}}");
}

static void te_sched(void *ctx, struct call_thread *t, bool off, uint64_t tsc)
{
	struct call_writer *w = ctx;

	if (off)
		return;
	/* the thread is back: its time off the CPU as a slice */
	te_record_start(w);
	ob_str(w->ob, "{\"name\":\"off-CPU\",\"cat\":\"sched\",\"ph\":\"X\"");
	te_micros(w, ",\"ts\":", nanos(w, t->off_since));
	te_micros(w, ",\"dur\":",
		  nanos(w, tsc > t->off_since ? tsc - t->off_since : 0));
	te_ids(w, t->pid, t->tid);
	ob_char(w->ob, '}');
}

static void te_event(struct call_writer *w, const struct xrayfdr_event *ev)
{
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	struct xrayfdr_sched_event se;
	uint32_t tid;

	if (ev->kind == XRAYFDR_EV_CUSTOM &&
	    xrayfdr_sched_decode(ev->data, ev->data_size, &se))
		return; /* shown as off-CPU slices */
	/* a name from the runtime: the thread's name metadata again */
	if (ev->kind == XRAYFDR_EV_CUSTOM &&
	    xrayfdr_thread_name_decode(ev->data, ev->data_size, &tid, name)) {
		te_record_start(w);
		ob_str(w->ob, "{\"name\":\"thread_name\",\"ph\":\"M\"");
		te_ids(w, ev->pid, ev->tid);
		ob_str(w->ob, ",\"args\":{\"name\":");
		json_bytes(w->ob, name, strlen(name));
		ob_str(w->ob, "}}");
		return;
	}
	te_record_start(w);
	ob_str(w->ob, ev->kind == XRAYFDR_EV_TYPED ?
			      "{\"name\":\"typed-event\"" :
			      "{\"name\":\"custom-event\"");
	ob_str(w->ob, ",\"cat\":\"event\",\"ph\":\"i\",\"s\":\"t\"");
	te_micros(w, ",\"ts\":", nanos(w, ev->tsc));
	te_ids(w, ev->pid, ev->tid);
	ob_str(w->ob, ",\"args\":{");
	if (ev->kind == XRAYFDR_EV_TYPED) {
		ob_str(w->ob, "\"type\":");
		ob_u64(w->ob, ev->event_type);
		ob_char(w->ob, ',');
	}
	ob_str(w->ob, "\"data\":");
	json_bytes(w->ob, ev->data, ev->data_size);
	ob_str(w->ob, "}}");
}

/*
 * TraceLog.
 */
static struct writer_thread *wthread(struct call_thread *t)
{
	return t->user;
}

static void tl_thread(void *ctx, struct call_thread *t)
{
	struct call_writer *w = ctx;
	struct writer_thread *wt = calloc(1, sizeof(*wt));

	if (!wt) {
		w->error = -ENOMEM;
		return;
	}
	wt->running = true;
	wt->on_since = t->first_tsc;
	t->user = wt;
	/* the thread's internal id is its index */
	fprintf(w->out, "thr crt 0x%016" PRIX64 " 0x%08" PRIX32 "\n",
		(uint64_t)t->pid << 32 | t->tid, t->index);
	fprintf(w->out, "thr aos 0x%08" PRIX32 " %" PRIu32 "\n", t->index,
		t->tid);
}

/* A function name as TraceLog's full name and signature: the signature
 * is the final parenthesised part, if any. */
static void tl_name(struct call_writer *w, int32_t id)
{
	const char *name = fname(w, id);
	size_t len = strlen(name), split = len, byte = (uint32_t)id / 8;

	if (byte >= w->named_bytes) {
		size_t n = byte + 64;
		uint8_t *b = realloc(w->named, n);

		if (!b) {
			w->error = -ENOMEM;
			return;
		}
		memset(b + w->named_bytes, 0, n - w->named_bytes);
		w->named = b;
		w->named_bytes = n;
	}
	if (w->named[byte] & (1u << (id % 8)))
		return;
	w->named[byte] |= (uint8_t)(1u << (id % 8));
	if (len && name[len - 1] == ')') {
		int depth = 0;

		for (size_t i = len; i-- > 0;) {
			if (name[i] == ')')
				depth++;
			else if (name[i] == '(' && --depth == 0) {
				split = i;
				break;
			}
		}
	}
	fprintf(w->out, "fun nam 0x%08" PRIX32 " \"", (uint32_t)id);
	for (size_t i = 0; i < len; i++) {
		if (i == split)
			fputs("\" \"\" \"", w->out);
		if (name[i] == '"' || name[i] == '\\')
			putc('\\', w->out);
		putc(name[i], w->out);
	}
	fputs(split == len ? "\" \"\" \"\"\n" : "\"\n", w->out);
}

static void tl_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct call_writer *w = ctx;

	if (f->func_id < 0) {
		w->error = -EINVAL;
		return;
	}
	tl_name(w, f->func_id);
	fprintf(w->out,
		"sam str 0x%08" PRIX32 " %" PRId64 " 0 %" PRIu32 ":%" PRIu32
		" 0x%" PRIx32 "\n",
		t->index, millis(w, ev->tsc), depth, depth,
		(uint32_t)f->func_id);
}

static void tl_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct call_writer *w = ctx;

	if (d->at_end)
		return;
	fprintf(w->out,
		"sam str 0x%08" PRIX32 " %" PRId64 " 0 %" PRIu32 ":%" PRIu32
		"\n",
		t->index, millis(w, d->exit_tsc), d->depth, d->depth + 1);
}

static void tl_cpu(struct call_writer *w, struct call_thread *t, uint64_t tsc)
{
	struct writer_thread *wt = wthread(t);
	uint64_t on = 0;

	if (!wt)
		return;
	/* on-CPU time since the last report */
	if (wt->running && tsc > wt->on_since)
		on = tsc - wt->on_since;
	fprintf(w->out, "thr cpu 0x%08" PRIX32 " %" PRId64 " %" PRIu64 "\n",
		t->index, millis(w, tsc), micros(w, on));
	wt->on_since = tsc;
}

static void tl_sched(void *ctx, struct call_thread *t, bool off, uint64_t tsc)
{
	struct call_writer *w = ctx;
	struct writer_thread *wt = wthread(t);

	if (!wt)
		return;
	if (off) {
		tl_cpu(w, t, tsc);
		wt->running = false;
	} else {
		wt->running = true;
		wt->on_since = tsc;
	}
}

static void tl_header(struct call_writer *w, const struct xrayfdr_event *ev)
{
	time_t sec = (time_t)ev->wall_sec;
	struct tm tm;

	if (!localtime_r(&sec, &tm))
		memset(&tm, 0, sizeof(tm));
	fprintf(w->out,
		"prf stm %04d-%02d-%02d %02d:%02d:%02d.%03u\n"
		"prf cfg CollectionMethod Instrumentation\n"
		"prf cfg SamplingTimeoutMs 0\n"
		"prf cfg HighGranularityEnabled F\n"
		"prf cfg LineTraceEnabled F\n"
		"prf cfg CpuTraceThreadEnabled T\n"
		"prf cfg ExecutionTraceEnabled T\n",
		tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		tm.tm_min, tm.tm_sec, ev->wall_usec / 1000);
}

static void count_unmatched(void *ctx, struct call_thread *t,
			    const struct xrayfdr_event *ev)
{
	struct call_writer *w = ctx;

	(void)t;
	(void)ev;
	w->unmatched++;
}

static const struct calls_ops te_ops = {
	.done = te_done,
	.sched = te_sched,
	.thread = te_thread,
	.unmatched = count_unmatched,
};

static const struct calls_ops tl_ops = {
	.enter = tl_enter,
	.done = tl_done,
	.sched = tl_sched,
	.thread = tl_thread,
	.unmatched = count_unmatched,
};

struct call_writer *call_writer_new(enum call_writer_kind kind, FILE *out,
				    const struct trace_header *hdr,
				    struct symbols *names)
{
	struct call_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->kind = kind;
	w->out = out;
	w->names = names;
	/* without a frequency, call a tick a nanosecond */
	w->hz = hdr->cycle_frequency ? hdr->cycle_frequency : 1000000000;
	w->freq = (double)w->hz;
	if (kind == WRITER_TRACE_EVENT) {
		w->ob = malloc(sizeof(*w->ob));
		if (!w->ob) {
			free(w);
			return NULL;
		}
		ob_init(w->ob, out);
	}
	w->first_record = true;
	w->calls = calls_new(CALLS_UNWIND, false,
			     kind == WRITER_TRACELOG ? &tl_ops : &te_ops, w);
	if (!w->calls) {
		free(w);
		return NULL;
	}
	return w;
}

int call_writer_event(struct call_writer *w, const struct xrayfdr_event *ev)
{
	int ret;

	if (!w->started) {
		w->started = true;
		w->base_tsc = ev->tsc;
		if (w->kind == WRITER_TRACE_EVENT)
			ob_str(w->ob,
			       "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
		else
			tl_header(w, ev);
	}
	ret = calls_event(w->calls, ev);
	if (!ret && w->kind == WRITER_TRACE_EVENT &&
	    (ev->kind == XRAYFDR_EV_CUSTOM || ev->kind == XRAYFDR_EV_TYPED))
		te_event(w, ev);
	return ret ? ret : w->error;
}

int call_writer_calls(struct call_writer *w, const struct xrayfdr_event *last,
		      const struct xrayfdr_call_event *calls, size_t n)
{
	uint64_t seq = 0;
	int ret = calls_batch(w->calls, last, calls, n, &seq);

	return ret ? ret : w->error;
}

void call_writer_min_duration(struct call_writer *w, uint64_t ticks)
{
	calls_min_duration(w->calls, ticks);
}

int call_writer_finish(struct call_writer *w)
{
	if (w->kind == WRITER_TRACE_EVENT) {
		calls_close_all(w->calls);
		if (!w->started)
			ob_str(w->ob,
			       "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
		ob_str(w->ob, "\n]}\n");
		/* a failed write is the output's error, which closing it says */
		ob_flush(w->ob);
		return w->error;
	}
	/* TraceLog: report the CPU time since the last report */
	for (uint32_t i = 0; i < calls_nthreads(w->calls); i++) {
		struct call_thread *t = calls_thread(w->calls, i);

		if (t->saw_sched)
			tl_cpu(w, t, t->last_tsc);
	}
	return w->error;
}

uint64_t call_writer_records(const struct call_writer *w)
{
	return w->records;
}

uint64_t call_writer_unmatched(const struct call_writer *w)
{
	return w->unmatched;
}

uint64_t call_writer_clamped(const struct call_writer *w)
{
	return w->clamped;
}

void call_writer_free(struct call_writer *w)
{
	if (!w)
		return;
	if (w->calls)
		for (uint32_t i = 0; i < calls_nthreads(w->calls); i++)
			free(calls_thread(w->calls, i)->user);
	calls_free(w->calls);
	free(w->named);
	free(w->ob);
	free(w);
}
