// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

void assert_hex_(const void *bytes, size_t len, const char *hex,
		 const char *file, int line)
{
	uint8_t want[256];
	size_t n = 0;
	const uint8_t *got = bytes;

	for (const char *p = hex; *p;) {
		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (n == sizeof(want) || !isxdigit((unsigned char)p[0]) ||
		    !isxdigit((unsigned char)p[1]))
			_fail(file, line);
		char pair[3] = { p[0], p[1], 0 };

		want[n++] = (uint8_t)strtoul(pair, NULL, 16);
		p += 2;
	}
	if (n != len || memcmp(want, got, len)) {
		print_error("bytes differ (%zu vs %zu expected):\n   got:", len,
			    n);
		for (size_t i = 0; i < len; i++)
			print_error(" %02x", got[i]);
		print_error("\n  want:");
		for (size_t i = 0; i < n; i++)
			print_error(" %02x", want[i]);
		print_error("\n");
		_fail(file, line);
	}
}

int membuf_write(void *ctx, const void *data, size_t size)
{
	struct membuf *m = ctx;

	if (m->fail_after > 0 && m->len + size > (size_t)m->fail_after)
		return -ENOSPC;
	if (m->len + size > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;

		while (cap < m->len + size)
			cap *= 2;
		m->data = realloc(m->data, cap);
		assert_non_null(m->data);
		m->cap = cap;
	}
	memcpy(m->data + m->len, data, size);
	m->len += size;
	return 0;
}

void membuf_free(struct membuf *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

void event_list_add(struct event_list *l, const struct xrayfdr_event *ev)
{
	struct xrayfdr_event *e;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->ev = realloc(l->ev, l->cap * sizeof(*l->ev));
		assert_non_null(l->ev);
	}
	e = &l->ev[l->n++];
	*e = *ev;
	if (ev->nargs) {
		uint64_t *args = malloc(ev->nargs * sizeof(*args));

		assert_non_null(args);
		memcpy(args, ev->args, ev->nargs * sizeof(*args));
		e->args = args;
	} else {
		e->args = NULL;
	}
	if (ev->data_size) {
		void *data = malloc(ev->data_size);

		assert_non_null(data);
		memcpy(data, ev->data, ev->data_size);
		e->data = data;
	} else {
		e->data = NULL;
	}
}

void event_list_free(struct event_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((void *)l->ev[i].args);
		free((void *)l->ev[i].data);
	}
	free(l->ev);
	memset(l, 0, sizeof(*l));
}

static void count_diag(void *ctx, const struct xrayfdr_diag *d)
{
	struct read_result *res = ctx;

	if (d->severity == XRAYFDR_SEV_WARNING) {
		res->warnings_seen++;
		snprintf(res->last_warning_rule, sizeof(res->last_warning_rule),
			 "%s", d->rule);
	}
}

void read_all(const void *data, size_t size, unsigned int flags,
	      struct event_list *out, struct read_result *res)
{
	XRAYFDR_OPTS(xrayfdr_reader_opts, opts, .flags = flags,
		     .on_diag = count_diag, .diag_ctx = res);
	struct xrayfdr_reader *r;
	const struct xrayfdr_event *ev;
	const struct xrayfdr_diag *d;
	int ret;

	memset(res, 0, sizeof(*res));
	r = xrayfdr_reader_new_mem(data, size, "test", &opts);
	assert_non_null(r);
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1)
		if (out)
			event_list_add(out, ev);
	res->ret = ret;
	d = xrayfdr_reader_error(r);
	res->rule = d ? d->rule : "";
	res->offset = d ? d->offset : 0;
	res->stats = *xrayfdr_reader_stats(r);
	xrayfdr_reader_free(r);
}

void assert_event_equal_(const struct xrayfdr_event *a,
			 const struct xrayfdr_event *b, const char *file,
			 int line)
{
	bool same = a->kind == b->kind && a->tsc == b->tsc &&
		    a->func_id == b->func_id && a->tid == b->tid &&
		    a->pid == b->pid && a->cpu == b->cpu &&
		    a->nargs == b->nargs && a->data_size == b->data_size &&
		    a->event_type == b->event_type &&
		    (!a->nargs ||
		     !memcmp(a->args, b->args, a->nargs * sizeof(*a->args))) &&
		    (!a->data_size || !memcmp(a->data, b->data, a->data_size));

	if (!same) {
		print_error(
			"events differ:\n"
			"  kind %u/%u tsc %llu/%llu func %d/%d tid %u/%u pid %u/%u cpu %u/%u\n"
			"  nargs %u/%u size %u/%u type %u/%u\n",
			a->kind, b->kind, (unsigned long long)a->tsc,
			(unsigned long long)b->tsc, a->func_id, b->func_id,
			a->tid, b->tid, a->pid, b->pid, a->cpu, b->cpu,
			a->nargs, b->nargs, a->data_size, b->data_size,
			a->event_type, b->event_type);
		_fail(file, line);
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

void gen_events(const struct gen_opts *o, struct event_list *out)
{
	uint64_t s = o->seed * 2654435761u + 88172645463325252ull;
	unsigned int threads = o->threads ? o->threads : 1;
	struct {
		uint64_t tsc;
		uint16_t cpu;
		int depth;
		int32_t stack[64];
	} th[16] = { 0 };
	static const char payload[] = "payload-\x00\x01\xff-bytes-of-an-event";

	assert_true(threads <= 16);
	for (unsigned int t = 0; t < threads; t++) {
		th[t].tsc = 1000000 * (t + 1);
		th[t].cpu = (uint16_t)t;
	}
	for (unsigned int i = 0; i < o->count; i++) {
		unsigned int t = (unsigned int)(rnd(&s) % threads);
		uint64_t r = rnd(&s);
		uint64_t arg[3] = { r, ~r, 42 };
		struct xrayfdr_event ev = {
			.tid = 100 + t,
			.pid = 7,
			.wall_sec = 1000 + i,
			.wall_usec = i % 1000000,
		};

		th[t].tsc += 1 + r % 5000;
		if (o->wraps && r % 50 == 0)
			th[t].tsc += 0x100000000ull + r % 1000;
		if (o->backwards && r % 60 == 1 && th[t].tsc > 100000)
			th[t].tsc -= 50000;
		if (r % 40 == 2)
			th[t].cpu = (uint16_t)((th[t].cpu + 1) % 300);
		ev.tsc = th[t].tsc;
		ev.cpu = th[t].cpu;
		if (o->custom && r % 17 == 3) {
			ev.kind = XRAYFDR_EV_CUSTOM;
			ev.data = payload;
			ev.data_size =
				1 + (uint32_t)(r % (sizeof(payload) - 1));
		} else if (o->typed && r % 19 == 4) {
			ev.kind = XRAYFDR_EV_TYPED;
			ev.event_type = (uint16_t)(r >> 20);
			ev.data = payload;
			ev.data_size =
				1 + (uint32_t)(r % (sizeof(payload) - 1));
		} else if (th[t].depth < 64 &&
			   (th[t].depth == 0 || r % 3 != 0)) {
			int32_t fn = (int32_t)(1 + (r >> 8) % 1000);

			th[t].stack[th[t].depth++] = fn;
			ev.func_id = fn;
			ev.kind = XRAYFDR_EV_ENTRY;
			if (o->args && r % 5 == 0) {
				ev.kind = XRAYFDR_EV_ENTRY_ARGS;
				ev.args = arg;
				ev.nargs = (uint32_t)(r % 4); /* 0 to 3 */
			}
		} else {
			ev.func_id = th[t].stack[--th[t].depth];
			ev.kind = r % 7 == 0 ? XRAYFDR_EV_TAIL_EXIT :
					       XRAYFDR_EV_EXIT;
		}
		event_list_add(out, &ev);
	}
}

void write_events(const struct xrayfdr_writer_opts *opts,
		  const struct event_list *events, struct membuf *m)
{
	struct xrayfdr_writer *w = xrayfdr_writer_new(membuf_write, m, opts);

	assert_non_null(w);
	for (size_t i = 0; i < events->n; i++)
		assert_int_equal(xrayfdr_writer_event(w, &events->ev[i]), 0);
	assert_int_equal(xrayfdr_writer_close(w), 0);
}
