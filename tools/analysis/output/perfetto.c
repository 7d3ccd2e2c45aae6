// SPDX-License-Identifier: GPL-2.0-only
/*
 * Perfetto protobuf writer; see perfetto.h.
 *
 * A minimal protobuf encoder of our own: varints and length-delimited
 * fields, a packet built in one growable buffer (nested messages get their
 * length inserted when they end) and written as one Trace.packet.
 *
 * Field numbers used, from the public schema in google/perfetto's
 * protos/perfetto/ (tests/tools/perfetto_subset.proto repeats them):
 *
 *   trace/trace.proto
 *     Trace.packet                            = 1
 *   trace/trace_packet.proto
 *     TracePacket.clock_snapshot              = 6
 *     TracePacket.timestamp                   = 8
 *     TracePacket.trusted_packet_sequence_id  = 10
 *     TracePacket.track_event                 = 11
 *     TracePacket.interned_data               = 12
 *     TracePacket.sequence_flags              = 13
 *     TracePacket.trace_packet_defaults       = 59
 *     TracePacket.track_descriptor            = 60
 *     TracePacket.first_packet_on_sequence    = 87
 *     TracePacket.SequenceFlags: SEQ_INCREMENTAL_STATE_CLEARED = 1,
 *                                SEQ_NEEDS_INCREMENTAL_STATE = 2
 *   trace/trace_packet_defaults.proto
 *     TracePacketDefaults.track_event_defaults = 11
 *   trace/track_event/track_event.proto
 *     TrackEvent.debug_annotations            = 4
 *     TrackEvent.type                         = 9
 *     TrackEvent.name_iid                     = 10
 *     TrackEvent.Type: TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2,
 *                      TYPE_INSTANT = 3
 *     TrackEventDefaults.track_uuid           = 11
 *     EventName.iid                           = 1
 *     EventName.name                          = 2
 *   trace/track_event/debug_annotation.proto
 *     DebugAnnotation.bool_value              = 2
 *     DebugAnnotation.uint_value              = 3
 *     DebugAnnotation.string_value            = 6
 *     DebugAnnotation.name                    = 10
 *   trace/interned_data/interned_data.proto
 *     InternedData.event_names                = 2
 *   trace/track_event/track_descriptor.proto
 *     TrackDescriptor.uuid                    = 1
 *     TrackDescriptor.process                 = 3
 *     TrackDescriptor.thread                  = 4
 *     TrackDescriptor.parent_uuid             = 5
 *   trace/track_event/process_descriptor.proto
 *     ProcessDescriptor.pid                   = 1
 *   trace/track_event/thread_descriptor.proto
 *     ThreadDescriptor.pid                    = 1
 *     ThreadDescriptor.tid                    = 2
 *     ThreadDescriptor.thread_name            = 5
 *   trace/clock_snapshot.proto
 *     ClockSnapshot.clocks                    = 1
 *     ClockSnapshot.primary_trace_clock       = 2
 *     ClockSnapshot.Clock.clock_id            = 1
 *     ClockSnapshot.Clock.timestamp           = 2
 *   common/builtin_clock.proto
 *     BuiltinClock: BUILTIN_CLOCK_REALTIME = 1, BUILTIN_CLOCK_BOOTTIME = 6
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../../lib/util/u64map.h"
#include "../engine/calls.h"
#include "perfetto.h"

enum {
	/* Trace */
	F_TRACE_PACKET = 1,
	/* TracePacket */
	F_PKT_CLOCK_SNAPSHOT = 6,
	F_PKT_TIMESTAMP = 8,
	F_PKT_SEQUENCE_ID = 10,
	F_PKT_TRACK_EVENT = 11,
	F_PKT_INTERNED_DATA = 12,
	F_PKT_SEQUENCE_FLAGS = 13,
	F_PKT_DEFAULTS = 59,
	F_PKT_TRACK_DESCRIPTOR = 60,
	F_PKT_FIRST_ON_SEQUENCE = 87,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	/* TracePacketDefaults, TrackEventDefaults */
	F_DEFAULTS_TRACK_EVENT = 11,
	F_TE_DEFAULTS_TRACK_UUID = 11,
	/* TrackEvent */
	F_TE_DEBUG_ANNOTATIONS = 4,
	F_TE_TYPE = 9,
	F_TE_NAME_IID = 10,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	/* DebugAnnotation */
	F_DA_BOOL = 2,
	F_DA_UINT = 3,
	F_DA_STRING = 6,
	F_DA_NAME = 10,
	/* InternedData, EventName */
	F_INTERNED_EVENT_NAMES = 2,
	F_EVENT_NAME_IID = 1,
	F_EVENT_NAME_NAME = 2,
	/* TrackDescriptor */
	F_TD_UUID = 1,
	F_TD_PROCESS = 3,
	F_TD_THREAD = 4,
	F_TD_PARENT_UUID = 5,
	/* ProcessDescriptor, ThreadDescriptor */
	F_PD_PID = 1,
	F_THD_PID = 1,
	F_THD_TID = 2,
	F_THD_NAME = 5,
	/* ClockSnapshot, ClockSnapshot.Clock, BuiltinClock */
	F_CS_CLOCKS = 1,
	F_CS_PRIMARY = 2,
	F_CLOCK_ID = 1,
	F_CLOCK_TIMESTAMP = 2,
	CLOCK_REALTIME_ID = 1,
	CLOCK_BOOTTIME_ID = 6,
};

/* protobuf wire types */
enum { WT_VARINT = 0, WT_LEN = 2 };

/* Interning ids of the names that are not functions; a function's is its
 * id + FUNC_IID_BASE (ids are int32: every one maps to its own iid, and
 * an iid is never 0, which Perfetto reserves). */
enum {
	IID_OFF_CPU = 1,
	IID_CUSTOM = 2,
	IID_TYPED = 3,
	FUNC_IID_BASE = 4,
};

/* Sequence 1 holds the clock snapshot and the process tracks; thread i
 * (in order of appearance) writes sequence i + 2. */
#define HEADER_SEQ 1u

/* Track uuids, global to the trace: distinct for processes and threads. */
#define UUID_BASE 0x7866647200000000ull /* "xfdr" */
#define PROCESS_UUID(pid) (UUID_BASE ^ (1ull << 32) ^ (uint64_t)(pid))
#define THREAD_UUID(index) (UUID_BASE ^ (2ull << 32) ^ (uint64_t)(index))

/* One packet being built; it grows to the largest packet (a long name or
 * payload), not with the trace. */
struct pb {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

struct pf_thread {
	uint32_t seq;
	uint64_t last_ns; /* timestamps never go back on a sequence */
	bool off_pending; /* switched out at off_since, not yet written */
	uint64_t off_since;
	struct u64map interned; /* iids already emitted on the sequence */
};

struct perfetto_writer {
	FILE *out;
	struct symbols *names;
	struct calls *calls;
	uint64_t freq;
	bool started;
	uint64_t packets; /* written */
	uint64_t unmatched;
	int error;
	/* perfetto_writer_min_duration(): a call's begin is written when
	 * the call is known to be long enough, after what happened in it
	 * until then, so with its own time (trace_processor sorts a
	 * sequence's events; every other time only goes forward) */
	bool late_begins;
	struct pb pkt;
	struct u64map pids; /* processes with a track */
	struct u64map threads; /* pid << 32 | tid -> struct pf_thread */
};

/*
 * The encoder.
 */
static __attribute__((noinline)) bool pb_grow(struct pb *b, size_t n)
{
	size_t cap = b->cap ? 2 * b->cap : 256;
	uint8_t *p;

	if (b->oom)
		return false;
	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->buf, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->buf = p;
	b->cap = cap;
	return true;
}

/* Room for @n more bytes; false once out of memory.  (oom leaves len
 * and cap as they were, so the first test is all the common case costs.) */
static inline bool pb_need(struct pb *b, size_t n)
{
	if (b->cap - b->len >= n && !b->oom)
		return true;
	return pb_grow(b, n);
}

static size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Most varints are tags and small values: one byte, inline. */
static inline void pb_varint(struct pb *b, uint64_t v)
{
	if (!pb_need(b, 10))
		return;
	if (v < 0x80)
		b->buf[b->len++] = (uint8_t)v;
	else
		b->len += varint_put(b->buf + b->len, v);
}

static void pb_tag(struct pb *b, unsigned int field, unsigned int wire_type)
{
	pb_varint(b, (uint64_t)field << 3 | wire_type);
}

static void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	pb_tag(b, field, WT_VARINT);
	pb_varint(b, v);
}

/* int32 fields: negative values are sign-extended to ten bytes. */
static void pb_int32(struct pb *b, unsigned int field, int32_t v)
{
	pb_uint(b, field, (uint64_t)(int64_t)v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *data,
		     size_t len)
{
	pb_tag(b, field, WT_LEN);
	pb_varint(b, len);
	if (len && pb_need(b, len)) {
		memcpy(b->buf + b->len, data, len);
		b->len += len;
	}
}

static void pb_string(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

/* Start a nested message; its length goes in front of it at pb_end(). */
static size_t pb_begin(struct pb *b, unsigned int field)
{
	pb_tag(b, field, WT_LEN);
	return b->len;
}

static void pb_end(struct pb *b, size_t start)
{
	size_t len, n;

	if (b->oom)
		return;
	len = b->len - start;
	n = varint_size(len);
	if (!pb_need(b, n))
		return;
	memmove(b->buf + start + n, b->buf + start, len);
	varint_put(b->buf + start, len);
	b->len += n;
}

/*
 * Packets.
 */
static uint64_t to_ns(const struct perfetto_writer *w, uint64_t tsc)
{
	unsigned __int128 ns;

	if (w->freq == 1000000000u)
		return tsc;
	ns = (unsigned __int128)tsc * 1000000000u / w->freq;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/*
 * A packet is built after PACKET_ROOM bytes, where its Trace.packet tag
 * and length go when it is written, so that it goes out in one write.
 */
#define PACKET_ROOM 11

static void packet_start(struct perfetto_writer *w, uint32_t seq)
{
	w->pkt.len = 0;
	if (pb_need(&w->pkt, PACKET_ROOM))
		w->pkt.len = PACKET_ROOM;
	pb_uint(&w->pkt, F_PKT_SEQUENCE_ID, seq);
}

/* Write the packet built as one Trace.packet. */
static void packet_write(struct perfetto_writer *w)
{
	uint8_t head[PACKET_ROOM], *p;
	size_t n, len = w->pkt.len - PACKET_ROOM;

	if (w->pkt.oom) {
		w->error = w->error ?: -ENOMEM;
		return;
	}
	head[0] = F_TRACE_PACKET << 3 | WT_LEN;
	n = 1 + varint_put(head + 1, len);
	p = w->pkt.buf + PACKET_ROOM - n;
	memcpy(p, head, n);
	/* the output is ours alone: no stdio lock per packet */
	if (fwrite_unlocked(p, 1, n + len, w->out) != n + len)
		w->error = w->error ?: -EIO;
	w->packets++;
}

static void header_packet(struct perfetto_writer *w,
			  const struct xrayfdr_event *ev)
{
	struct pb *b = &w->pkt;
	uint64_t boot = to_ns(w, ev->tsc);
	size_t cs, c;

	packet_start(w, HEADER_SEQ);
	pb_uint(b, F_PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pb_uint(b, F_PKT_FIRST_ON_SEQUENCE, 1);
	pb_uint(b, F_PKT_TIMESTAMP, boot);
	/* our timestamps are BOOTTIME; the wall time of the first event's
	 * buffer (FDR) ties them to the calendar, approximately */
	cs = pb_begin(b, F_PKT_CLOCK_SNAPSHOT);
	c = pb_begin(b, F_CS_CLOCKS);
	pb_uint(b, F_CLOCK_ID, CLOCK_BOOTTIME_ID);
	pb_uint(b, F_CLOCK_TIMESTAMP, boot);
	pb_end(b, c);
	if (ev->wall_sec) {
		c = pb_begin(b, F_CS_CLOCKS);
		pb_uint(b, F_CLOCK_ID, CLOCK_REALTIME_ID);
		pb_uint(b, F_CLOCK_TIMESTAMP,
			ev->wall_sec * 1000000000u +
				(uint64_t)ev->wall_usec * 1000u);
		pb_end(b, c);
	}
	pb_uint(b, F_CS_PRIMARY, CLOCK_BOOTTIME_ID);
	pb_end(b, cs);
	packet_write(w);
}

static void process_packet(struct perfetto_writer *w, uint32_t pid)
{
	struct pb *b = &w->pkt;
	size_t td, pd;

	packet_start(w, HEADER_SEQ);
	td = pb_begin(b, F_PKT_TRACK_DESCRIPTOR);
	pb_uint(b, F_TD_UUID, PROCESS_UUID(pid));
	pd = pb_begin(b, F_TD_PROCESS);
	pb_int32(b, F_PD_PID, (int32_t)pid);
	pb_end(b, pd);
	pb_end(b, td);
	packet_write(w);
}

static struct pf_thread *pthread_of(struct call_thread *t)
{
	return t->user;
}

/* The descriptor of @t's track, named @name, ending the packet begun. */
static void thread_descriptor(struct perfetto_writer *w,
			      const struct call_thread *t, const char *name)
{
	struct pb *b = &w->pkt;
	size_t td, th;

	td = pb_begin(b, F_PKT_TRACK_DESCRIPTOR);
	pb_uint(b, F_TD_UUID, THREAD_UUID(t->index));
	if (t->pid)
		pb_uint(b, F_TD_PARENT_UUID, PROCESS_UUID(t->pid));
	th = pb_begin(b, F_TD_THREAD);
	pb_int32(b, F_THD_PID, (int32_t)t->pid);
	pb_int32(b, F_THD_TID, (int32_t)t->tid);
	pb_string(b, F_THD_NAME, name);
	pb_end(b, th);
	pb_end(b, td);
	packet_write(w);
}

/* A new thread: its process's track if new, then the first packet of its
 * sequence: cleared incremental state, its track as the default one, and
 * the track's descriptor. */
static void on_thread(void *ctx, struct call_thread *t)
{
	struct perfetto_writer *w = ctx;
	struct pf_thread *pt = calloc(1, sizeof(*pt));
	struct pb *b = &w->pkt;
	char name[32];
	size_t d, e;

	if (!pt || u64map_put(&w->threads, thread_key(t->pid, t->tid), pt)) {
		free(pt);
		w->error = -ENOMEM;
		return;
	}
	t->user = pt;
	pt->seq = t->index + 2;
	/* pid 0: the log does not record processes (FDR 1, basic mode) */
	if (t->pid && !u64map_get(&w->pids, t->pid)) {
		if (u64map_put(&w->pids, t->pid, w)) {
			w->error = -ENOMEM;
			return;
		}
		process_packet(w, t->pid);
	}
	pt->last_ns = to_ns(w, t->first_tsc);
	packet_start(w, pt->seq);
	pb_uint(b, F_PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	pb_uint(b, F_PKT_FIRST_ON_SEQUENCE, 1);
	pb_uint(b, F_PKT_TIMESTAMP, pt->last_ns);
	d = pb_begin(b, F_PKT_DEFAULTS);
	e = pb_begin(b, F_DEFAULTS_TRACK_EVENT);
	pb_uint(b, F_TE_DEFAULTS_TRACK_UUID, THREAD_UUID(t->index));
	pb_end(b, e);
	pb_end(b, d);
	/* the name trace_event gives it until the log names it */
	snprintf(name, sizeof(name), "thread %" PRIu32, t->tid);
	thread_descriptor(w, t, name);
}

static const char *iid_name(struct perfetto_writer *w, uint64_t iid)
{
	switch (iid) {
	case IID_OFF_CPU:
		return "off-CPU";
	case IID_CUSTOM:
		return "custom-event";
	case IID_TYPED:
		return "typed-event";
	}
	return symbols_name(w->names, (int32_t)(uint32_t)(iid - FUNC_IID_BASE));
}

static uint64_t func_iid(int32_t func_id)
{
	return (uint64_t)(uint32_t)func_id + FUNC_IID_BASE;
}

/* Start a TrackEvent packet on @pt's sequence at @tsc (never before the
 * sequence's last timestamp: a TSC that went back, e.g. across CPUs, must
 * not unbalance the slices); intern @iid there if it is new.  Return
 * where the TrackEvent starts, for event_end(). */
static size_t event_start(struct perfetto_writer *w, struct pf_thread *pt,
			  uint64_t tsc, unsigned int type, uint64_t iid)
{
	struct pb *b = &w->pkt;
	uint64_t ns = to_ns(w, tsc);
	size_t te;

	if (ns >= pt->last_ns)
		pt->last_ns = ns;
	else if (!w->late_begins || type != TYPE_SLICE_BEGIN ||
		 iid == IID_OFF_CPU)
		ns = pt->last_ns;
	packet_start(w, pt->seq);
	pb_uint(b, F_PKT_TIMESTAMP, ns);
	/* interned names and the default track are incremental state */
	pb_uint(b, F_PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	if (iid && !u64map_get(&pt->interned, iid)) {
		size_t id, en;

		if (u64map_put(&pt->interned, iid, pt))
			b->oom = true;
		id = pb_begin(b, F_PKT_INTERNED_DATA);
		en = pb_begin(b, F_INTERNED_EVENT_NAMES);
		pb_uint(b, F_EVENT_NAME_IID, iid);
		pb_string(b, F_EVENT_NAME_NAME, iid_name(w, iid));
		pb_end(b, en);
		pb_end(b, id);
	}
	te = pb_begin(b, F_PKT_TRACK_EVENT);
	pb_uint(b, F_TE_TYPE, type);
	if (iid)
		pb_uint(b, F_TE_NAME_IID, iid);
	return te;
}

static void event_end(struct perfetto_writer *w, size_t te)
{
	pb_end(&w->pkt, te);
	packet_write(w);
}

static void annotate_bool(struct pb *b, const char *name)
{
	size_t da = pb_begin(b, F_TE_DEBUG_ANNOTATIONS);

	pb_string(b, F_DA_NAME, name);
	pb_uint(b, F_DA_BOOL, 1);
	pb_end(b, da);
}

/*
 * Time off the CPU becomes a slice when the thread is back (as trace_event
 * writes it, and a thread still off at the end gets none): at its
 * switch-in, or at its next event of any kind if the switch-in was lost,
 * so that nothing was written on the sequence in between and the slice
 * nests and keeps the timestamps in order.
 */
static void end_off_cpu(struct perfetto_writer *w, struct pf_thread *pt,
			uint64_t tsc)
{
	if (!pt->off_pending)
		return;
	pt->off_pending = false;
	event_end(w, event_start(w, pt, pt->off_since, TYPE_SLICE_BEGIN,
				 IID_OFF_CPU));
	event_end(w, event_start(w, pt, tsc, TYPE_SLICE_END, 0));
}

static void on_enter(void *ctx, struct call_thread *t, struct call_frame *f,
		     uint32_t depth, const struct xrayfdr_event *ev)
{
	struct perfetto_writer *w = ctx;
	struct pf_thread *pt = pthread_of(t);

	(void)depth;
	if (!pt)
		return;
	end_off_cpu(w, pt, ev->tsc);
	event_end(w, event_start(w, pt, ev->tsc, TYPE_SLICE_BEGIN,
				 func_iid(f->func_id)));
}

static void on_done(void *ctx, struct call_thread *t, const struct call_done *d)
{
	struct perfetto_writer *w = ctx;
	struct pf_thread *pt = pthread_of(t);
	size_t te;

	if (!pt)
		return;
	end_off_cpu(w, pt, d->exit_tsc);
	te = event_start(w, pt, d->exit_tsc, TYPE_SLICE_END, 0);
	/* as trace_event says it: the END's annotations join the slice */
	if (d->at_end)
		annotate_bool(&w->pkt, "open_at_end");
	else if (!d->by_exit)
		annotate_bool(&w->pkt, "ended_by_caller_exit");
	event_end(w, te);
}

static void on_sched(void *ctx, struct call_thread *t, bool off, uint64_t tsc)
{
	struct perfetto_writer *w = ctx;
	struct pf_thread *pt = pthread_of(t);

	if (!pt)
		return;
	if (off) {
		pt->off_pending = true;
		pt->off_since = tsc;
	} else {
		end_off_cpu(w, pt, tsc);
	}
}

static void on_unmatched(void *ctx, struct call_thread *t,
			 const struct xrayfdr_event *ev)
{
	struct perfetto_writer *w = ctx;

	(void)t;
	(void)ev;
	w->unmatched++;
}

static const struct calls_ops perfetto_ops = {
	.enter = on_enter,
	.done = on_done,
	.sched = on_sched,
	.thread = on_thread,
	.unmatched = on_unmatched,
};

/* A payload as a printable string (string fields hold UTF-8): ASCII as
 * is, other bytes and the backslash escaped. */
static void payload_string(struct pb *b, const uint8_t *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t s = pb_begin(b, F_DA_STRING);

	for (size_t i = 0; i < len && pb_need(b, 4); i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
			b->buf[b->len++] = p[i];
		} else if (p[i] == '\\') {
			b->buf[b->len++] = '\\';
			b->buf[b->len++] = '\\';
		} else {
			b->buf[b->len++] = '\\';
			b->buf[b->len++] = 'x';
			b->buf[b->len++] = (uint8_t)hex[p[i] >> 4];
			b->buf[b->len++] = (uint8_t)hex[p[i] & 15];
		}
	}
	pb_end(b, s);
}

/* Custom and typed events other than the scheduler's: instant events. */
static void instant_event(struct perfetto_writer *w,
			  const struct xrayfdr_event *ev)
{
	struct pf_thread *pt =
		u64map_get(&w->threads, thread_key(ev->pid, ev->tid));
	struct xrayfdr_sched_event se;
	struct pb *b = &w->pkt;
	bool typed = ev->kind == XRAYFDR_EV_TYPED;
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	const struct call_thread *t;
	size_t te, da;
	uint32_t tid;

	if (!pt ||
	    (!typed && xrayfdr_sched_decode(ev->data, ev->data_size, &se)))
		return;
	/* a name from the runtime: the track's descriptor again, renamed */
	if (!typed &&
	    xrayfdr_thread_name_decode(ev->data, ev->data_size, &tid, name)) {
		/* (a thread's sequence is numbered after its index) */
		t = calls_thread(w->calls, pt->seq - 2);
		packet_start(w, pt->seq);
		pb_uint(b, F_PKT_TIMESTAMP, pt->last_ns);
		thread_descriptor(w, t, name);
		return;
	}
	end_off_cpu(w, pt, ev->tsc);
	te = event_start(w, pt, ev->tsc, TYPE_INSTANT,
			 typed ? IID_TYPED : IID_CUSTOM);
	if (typed) {
		da = pb_begin(b, F_TE_DEBUG_ANNOTATIONS);
		pb_string(b, F_DA_NAME, "type");
		pb_uint(b, F_DA_UINT, ev->event_type);
		pb_end(b, da);
	}
	da = pb_begin(b, F_TE_DEBUG_ANNOTATIONS);
	pb_string(b, F_DA_NAME, "data");
	payload_string(b, ev->data, ev->data_size);
	pb_end(b, da);
	event_end(w, te);
}

struct perfetto_writer *perfetto_writer_new(FILE *out,
					    const struct trace_header *hdr,
					    struct symbols *names)
{
	struct perfetto_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->out = out;
	w->names = names;
	/* without a frequency, call a tick a nanosecond (as trace_event) */
	w->freq = hdr->cycle_frequency ? hdr->cycle_frequency : 1000000000u;
	w->calls = calls_new(CALLS_UNWIND, false, &perfetto_ops, w);
	if (!w->calls) {
		free(w);
		return NULL;
	}
	return w;
}

static int status(struct perfetto_writer *w)
{
	if (!w->error && ferror(w->out))
		w->error = -EIO;
	return w->error;
}

int perfetto_writer_event(struct perfetto_writer *w,
			  const struct xrayfdr_event *ev)
{
	int ret;

	if (!w->started) {
		w->started = true;
		header_packet(w, ev);
	}
	ret = calls_event(w->calls, ev);
	if (ret)
		return ret;
	if (ev->kind == XRAYFDR_EV_CUSTOM || ev->kind == XRAYFDR_EV_TYPED)
		instant_event(w, ev);
	return status(w);
}

int perfetto_writer_calls(struct perfetto_writer *w,
			  const struct xrayfdr_event *last,
			  const struct xrayfdr_call_event *calls, size_t n)
{
	uint64_t seq = 0;
	int ret = calls_batch(w->calls, last, calls, n, &seq);

	return ret ? ret : status(w);
}

int perfetto_writer_finish(struct perfetto_writer *w)
{
	/* a thread still off the CPU has no end to its time off (and gets
	 * no slice, as in trace_event); its open calls end at its last
	 * event */
	for (uint32_t i = 0; i < calls_nthreads(w->calls); i++) {
		struct pf_thread *pt = pthread_of(calls_thread(w->calls, i));

		if (pt)
			pt->off_pending = false;
	}
	calls_close_all(w->calls);
	return status(w);
}

void perfetto_writer_min_duration(struct perfetto_writer *w, uint64_t ticks)
{
	calls_min_duration(w->calls, ticks);
	w->late_begins = ticks != 0;
}

uint64_t perfetto_writer_packets(const struct perfetto_writer *w)
{
	return w->packets;
}

uint64_t perfetto_writer_unmatched(const struct perfetto_writer *w)
{
	return w->unmatched;
}

void perfetto_writer_free(struct perfetto_writer *w)
{
	if (!w)
		return;
	if (w->calls) {
		for (uint32_t i = 0; i < calls_nthreads(w->calls); i++) {
			struct pf_thread *pt =
				pthread_of(calls_thread(w->calls, i));

			if (pt)
				u64map_free(&pt->interned);
			free(pt);
		}
	}
	calls_free(w->calls);
	u64map_free(&w->threads);
	u64map_free(&w->pids);
	free(w->pkt.buf);
	free(w);
}
