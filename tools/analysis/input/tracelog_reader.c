// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CoreProfiler TraceLog reader (see text_reader.h): it turns the
 * differences between a thread's successive stack samples back into
 * function entries and exits, one line at a time from text_reader.c's
 * line reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../lib/util/u64map.h"
#include "tracelog_reader.h"

#define MAX_STACK 65536

/* What is known of a thread, by its internal id. */
struct tl_thread {
	uint32_t pid, tid; /* the pid from the high half of its thr crt id */
	int32_t *stack;
	uint32_t depth, cap;
	bool sampled; /* its events carry tid: it stays */
};

struct tracelog_reader {
	struct text_lines *l;
	struct xrayfdr_event ev; /* the event handed out */

	/* events made from one sample, handed out in turn */
	struct xrayfdr_event *queue;
	size_t nqueue, queue_cap, queue_next;
	struct u64map threads;
	struct u64map sampled_tids; /* pid:tid -> the tl_thread whose it is */
	char **names; /* by function id */
	size_t nnames;
};

/* TraceLog calls carry no arguments; events point here all the same, as
 * consumers may copy their nargs (0) of them. */
static const uint64_t no_args[1];

static void free_thread(struct tl_thread *t)
{
	free(t->stack);
	free(t);
}

static int free_thread_cb(void *ctx, void *value)
{
	(void)ctx;
	free_thread(value);
	return 0;
}

/* Parse an unsigned number token (decimal or 0x hex) and advance. */
static int tl_number(struct tracelog_reader *r, struct text_cursor *c,
		     const char *what, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	text_skip_spaces(c);
	errno = 0;
	if (!(*c->p >= '0' && *c->p <= '9'))
		return text_error(r->l, "%s: expected a number at '%.30s'",
				  what, c->p);
	v = strtoull(c->p, &end, 0);
	if (errno || v > max)
		return text_error(r->l, "%s: number out of range", what);
	c->p = end;
	*out = v;
	return 0;
}

static int tl_end(struct tracelog_reader *r, struct text_cursor *c)
{
	text_skip_spaces(c);
	if (*c->p)
		return text_error(r->l, "unexpected text at the end: '%.40s'",
				  c->p);
	return 0;
}

static struct tl_thread *tl_get_thread(struct tracelog_reader *r, uint64_t iid,
				       bool create)
{
	struct tl_thread *t = u64map_get(&r->threads, iid);

	if (t || !create)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = (uint32_t)iid;
	if (u64map_put(&r->threads, iid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

static int tl_queue(struct tracelog_reader *r, uint32_t kind, int32_t func,
		    const struct tl_thread *t, uint64_t ms)
{
	if (r->nqueue == r->queue_cap) {
		size_t cap = r->queue_cap ? 2 * r->queue_cap : 64;
		struct xrayfdr_event *q = realloc(r->queue, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		r->queue = q;
		r->queue_cap = cap;
	}
	r->queue[r->nqueue++] = (struct xrayfdr_event){
		.kind = kind,
		.func_id = func,
		.tid = t->tid,
		.pid = t->pid,
		.tsc = ms,
		.offset = r->l->lineno,
	};
	return 0;
}

/* A quoted TraceLog string ("..." with \" and \\ escaped). */
static int tl_string(struct tracelog_reader *r, struct text_cursor *c,
		     size_t *len)
{
	int ret;

	*len = 0;
	ret = text_append(r->l, len, "", 0);
	if (ret)
		return ret;
	text_skip_spaces(c);
	if (*c->p != '"')
		return text_error(
			r->l, "expected a \"quoted string\" at '%.30s'", c->p);
	c->p++;
	while (*c->p != '"') {
		if (!*c->p)
			return text_error(r->l, "unterminated \"string\"");
		if (*c->p == '\\' && (c->p[1] == '"' || c->p[1] == '\\'))
			c->p++;
		ret = text_append(r->l, len, c->p++, 1);
		if (ret)
			return ret;
	}
	c->p++;
	return 0;
}

static int tl_fun_nam(struct tracelog_reader *r, struct text_cursor *c)
{
	uint64_t iid;
	size_t len;
	char *name;
	int ret = tl_number(r, c, "fun nam", INT32_MAX, &iid);

	if (ret)
		return ret;
	ret = tl_string(r, c, &len);
	if (ret)
		return ret;
	name = strdup(r->l->data);
	if (!name)
		return -ENOMEM;
	/* return type and signature: the signature completes the name */
	if ((ret = tl_string(r, c, &len)) || (ret = tl_string(r, c, &len)) ||
	    (ret = tl_end(r, c))) {
		free(name);
		return ret;
	}
	if (len) {
		char *full;

		if (asprintf(&full, "%s%s", name, r->l->data) < 0) {
			free(name);
			return -ENOMEM;
		}
		free(name);
		name = full;
	}
	if (iid >= r->nnames) {
		size_t n = iid + 1 > 2 * r->nnames ? iid + 1 : 2 * r->nnames;
		char **names;

		if (n > (1u << 24)) {
			free(name);
			return text_error(r->l,
					  "fun nam: function id %" PRIu64
					  " is too large for this reader",
					  iid);
		}
		names = realloc(r->names, n * sizeof(*names));
		if (!names) {
			free(name);
			return -ENOMEM;
		}
		memset(names + r->nnames, 0, (n - r->nnames) * sizeof(*names));
		r->names = names;
		r->nnames = n;
	}
	free(r->names[iid]);
	r->names[iid] = name;
	return 0;
}

/* A signed millisecond timestamp, as a TSC: TraceLog times may be
 * negative (before the start of profiling); TSCs are unsigned. */
#define TL_TSC_BIAS (1ull << 32)

static int tl_time(struct tracelog_reader *r, struct text_cursor *c,
		   uint64_t *tsc)
{
	bool neg;
	uint64_t v;
	int ret;

	text_skip_spaces(c);
	neg = *c->p == '-';
	if (neg)
		c->p++;
	ret = tl_number(r, c, "timestamp", TL_TSC_BIAS - 1, &v);
	if (ret)
		return ret;
	*tsc = neg ? TL_TSC_BIAS - v : TL_TSC_BIAS + v;
	return 0;
}

static int tl_sample(struct tracelog_reader *r, struct text_cursor *c)
{
	uint64_t iid, ms, count, match, size;
	struct tl_thread *t;
	int ret;

	if ((ret = tl_number(r, c, "sam str", UINT32_MAX, &iid)) ||
	    (ret = tl_time(r, c, &ms)) ||
	    (ret = tl_number(r, c, "sam str", UINT64_MAX, &count)) ||
	    (ret = tl_number(r, c, "sam str", MAX_STACK, &match)))
		return ret;
	if (*c->p != ':')
		return text_error(r->l, "sam str: expected MATCH:SIZE");
	c->p++;
	if ((ret = tl_number(r, c, "sam str", MAX_STACK, &size)))
		return ret;
	if (*c->p == ':') {
		/* an instruction pointer: "?" or a number */
		c->p++;
		if (*c->p == '?')
			c->p++;
		else if ((ret = tl_number(r, c, "sam str", UINT64_MAX, &count)))
			return ret;
	}
	t = tl_get_thread(r, iid, false);
	if (!t)
		return text_error(r->l,
				  "sam str: thread 0x%08" PRIx64
				  " was never created ('thr crt')",
				  iid);
	if (size != t->depth || match > size)
		return text_error(r->l,
				  "sam str: %" PRIu64 ":%" PRIu64
				  " does not fit the thread's %u frames",
				  match, size, t->depth);
	if (!t->sampled) {
		/* Calls are matched by tid downstream: one thread's only. */
		uint64_t key = (uint64_t)t->pid << 32 | t->tid;

		if (u64map_get(&r->sampled_tids, key))
			return text_error(r->l,
					  "sam str: thread 0x%08" PRIx64
					  " has the OS thread id %" PRIu32
					  " of another sampled thread",
					  iid, t->tid);
		if (u64map_put(&r->sampled_tids, key, t))
			return -ENOMEM;
		t->sampled = true;
	}
	r->nqueue = r->queue_next = 0;
	while (t->depth > match) {
		ret = tl_queue(r, XRAYFDR_EV_EXIT, t->stack[t->depth - 1], t,
			       ms);
		if (ret)
			return ret;
		t->depth--;
	}
	for (;;) {
		uint64_t fn, ip;

		text_skip_spaces(c);
		if (!*c->p)
			break;
		if ((ret = tl_number(r, c, "sam str frame", INT32_MAX, &fn)))
			return ret;
		if (*c->p == ':') {
			c->p++;
			if ((ret = tl_number(r, c, "sam str frame", UINT64_MAX,
					     &ip)))
				return ret;
		}
		if (t->depth == MAX_STACK)
			return text_error(
				r->l, "sam str: stack deeper than %u frames",
				MAX_STACK);
		if (t->depth == t->cap) {
			uint32_t cap = t->cap ? 2 * t->cap : 16;
			int32_t *s = realloc(t->stack, cap * sizeof(*s));

			if (!s)
				return -ENOMEM;
			t->stack = s;
			t->cap = cap;
		}
		t->stack[t->depth++] = (int32_t)fn;
		ret = tl_queue(r, XRAYFDR_EV_ENTRY, (int32_t)fn, t, ms);
		if (ret)
			return ret;
	}
	return 0;
}

static int tl_line(struct tracelog_reader *r)
{
	struct text_cursor c = { r->l->line };
	char type[4], sub[4];
	uint64_t a, b;
	struct tl_thread *t;
	int ret;

	if (text_blank_or_comment(r->l->line))
		return 0;
	if (r->l->line_len < 7 || r->l->line[3] != ' ' ||
	    (r->l->line[7] && r->l->line[7] != ' '))
		return text_error(r->l, "expected a record '<aaa> <bbb> ...'");
	memcpy(type, r->l->line, 3);
	type[3] = 0;
	memcpy(sub, r->l->line + 4, 3);
	sub[3] = 0;
	c.p = r->l->line + 7;
	if (!strcmp(type, "sam") && !strcmp(sub, "str"))
		return tl_sample(r, &c);
	if (!strcmp(type, "thr") && !strcmp(sub, "crt")) {
		if ((ret = tl_number(r, &c, "thr crt", UINT64_MAX, &a)) ||
		    (ret = tl_number(r, &c, "thr crt", UINT32_MAX, &b)) ||
		    (ret = tl_end(r, &c)))
			return ret;
		if (tl_get_thread(r, b, false))
			return text_error(r->l,
					  "thr crt: thread 0x%08" PRIx64
					  " created twice",
					  b);
		t = tl_get_thread(r, b, true);
		if (!t)
			return -ENOMEM;
		t->pid = (uint32_t)(a >> 32);
		t->tid = (uint32_t)a;
		return 0;
	}
	if (!strcmp(type, "thr") && !strcmp(sub, "aos")) {
		if ((ret = tl_number(r, &c, "thr aos", UINT32_MAX, &a)) ||
		    (ret = tl_number(r, &c, "thr aos", UINT32_MAX, &b)) ||
		    (ret = tl_end(r, &c)))
			return ret;
		t = tl_get_thread(r, a, false);
		if (!t)
			return text_error(r->l,
					  "thr aos: thread 0x%08" PRIx64
					  " was never created ('thr crt')",
					  a);
		/* A managed thread may move to another OS thread; its calls
		 * are matched by tid downstream, so the first one it was
		 * sampled on stays its tid. */
		if (!t->sampled)
			t->tid = (uint32_t)b;
		return 0;
	}
	if (!strcmp(type, "fun") && !strcmp(sub, "nam"))
		return tl_fun_nam(r, &c);
	/* records that carry nothing an XRay trace has: accepted, unused */
	static const char *const known[] = {
		"prf stm", "prf cfg", "prf tps", "prf trs", "prc cpu",
		"thr dst", "thr cpu", "mod ldf", "mod ata", "asm ldf",
		"apd crf", "cls ldf", "cls nam", "fun inf", "fun cmf",
		"fun csf", "jit cms", "jit cmf", "jit css", "jit csf",
		"gch gcs", "gch gcf", "gch alt", "sam mem",
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strncmp(r->l->line, known[i], 7))
			return 0;
	return text_error(r->l, "unknown record '%s %s'", type, sub);
}

int tracelog_reader_next(struct tracelog_reader *r,
			 const struct xrayfdr_event **ev)
{
	int ret;

	for (;;) {
		if (r->queue_next < r->nqueue) {
			r->ev = r->queue[r->queue_next++];
			r->ev.args = no_args;
			*ev = &r->ev;
			return 1;
		}
		r->nqueue = r->queue_next = 0;
		ret = text_next_line(r->l);
		if (ret <= 0)
			return ret;
		ret = text_skip_bad_line(r->l, tl_line(r));
		if (ret < 0) {
			r->nqueue = 0;
			return ret;
		}
	}
}

/*
 * The interface.
 */
struct tracelog_reader *tracelog_reader_new(struct text_lines *l)
{
	struct tracelog_reader *r = calloc(1, sizeof(*r));

	if (r)
		r->l = l;
	return r;
}

void tracelog_reader_free(struct tracelog_reader *r)
{
	if (!r)
		return;
	u64map_each(&r->threads, free_thread_cb, NULL);
	u64map_free(&r->threads);
	u64map_free(&r->sampled_tids);
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r->queue);
	free(r);
}

int tracelog_reader_header(struct trace_header *hdr)
{
	/* milliseconds: the clock of a TraceLog */
	hdr->type = 1;
	hdr->cycle_frequency = 1000;
	return 0;
}

const char *tracelog_reader_function_name(const struct tracelog_reader *r,
					  int32_t func_id)
{
	if (func_id < 0 || (size_t)func_id >= r->nnames)
		return NULL;
	return r->names[func_id];
}
