// SPDX-License-Identifier: GPL-2.0-only
/*
 * The YAML and TraceLog readers (see text_reader.h).  Both are line
 * driven: the YAML reader understands the subset of YAML that llvm-xray's
 * emitter produces (and block-style records), not YAML in general; the
 * TraceLog reader turns stack differences back into entries and exits.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/util/u64map.h"
#include "text_reader.h"

#define MAX_LINE (64u << 20)
#define MAX_ARGS 64
#define MAX_STACK 65536

/* TraceLog: what is known of a thread, by its internal id. */
struct tl_thread {
	uint32_t pid, tid; /* the pid from the high half of its thr crt id */
	int32_t *stack;
	uint32_t depth, cap;
	bool sampled; /* its events carry tid: it stays */
};

/* A YAML record's payload, kept apart from r->data, which the fields
 * after it reuse. */
struct payload {
	char *p;
	size_t len, cap;
};

struct text_reader {
	enum text_kind kind;
	FILE *f;
	char *name;
	bool keep_going;
	void (*on_skip)(void *ctx, const char *msg);
	void *skip_ctx;

	char *line;
	size_t line_cap;
	size_t line_len;
	uint64_t lineno;
	bool eof;
	char err[768];
	struct trace_stats stats;

	struct trace_header hdr;
	int header_ret; /* 1 before reading */

	/* the event handed out, its arguments and payload */
	struct xrayfdr_event ev;
	uint64_t args[MAX_ARGS];
	char *data;
	size_t data_cap;

	/* YAML */
	bool in_records;
	bool done; /* "..." seen */
	bool have_line; /* r->line holds a line not consumed yet */
	struct payload payload;

	/* TraceLog: events made from one sample, handed out in turn */
	struct xrayfdr_event *queue;
	size_t nqueue, queue_cap, queue_next;
	struct u64map threads;
	struct u64map sampled_tids; /* pid:tid -> the tl_thread whose it is */
	char **names; /* by function id */
	size_t nnames;
};

/*
 * Lines and errors.
 */
static int error(struct text_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int error(struct text_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s: line %" PRIu64 ": ",
			 r->name, r->lineno);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(r->err))
		vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	r->stats.errors++;
	return -EBADMSG;
}

/* In keep-going mode, report a bad line and go on; else stop. */
static int bad_line(struct text_reader *r, int ret)
{
	if (ret != -EBADMSG || !r->keep_going)
		return ret;
	if (r->on_skip)
		r->on_skip(r->skip_ctx, r->err);
	r->stats.skipped_buffers++;
	r->stats.skipped_bytes += r->line_len;
	return 0;
}

/* The next line, without its line break: 1, 0 at the end, or -errno. */
static int next_line(struct text_reader *r)
{
	size_t len = 0;
	int c;

	if (r->have_line) {
		r->have_line = false;
		return 1;
	}
	if (r->eof)
		return 0;
	for (;;) {
		c = getc_unlocked(r->f);
		if (c == EOF)
			break;
		r->stats.bytes++;
		if (c == '\n')
			break;
		if (len + 2 > r->line_cap) {
			size_t cap = r->line_cap ? 2 * r->line_cap : 256;
			char *n;

			if (cap > MAX_LINE + 2) {
				r->lineno++;
				return error(r, "line longer than %u bytes",
					     MAX_LINE);
			}
			n = realloc(r->line, cap);
			if (!n)
				return -ENOMEM;
			r->line = n;
			r->line_cap = cap;
		}
		r->line[len++] = (char)c;
	}
	if (ferror(r->f)) {
		snprintf(r->err, sizeof(r->err), "%s: %s", r->name,
			 strerror(errno ? errno : EIO));
		return -EIO;
	}
	if (c == EOF) {
		r->eof = true;
		if (!len)
			return 0;
	}
	if (len && r->line[len - 1] == '\r')
		len--;
	if (!r->line)
		r->line = calloc(1, 1);
	if (!r->line)
		return -ENOMEM;
	r->line[len] = 0;
	r->line_len = len;
	r->lineno++;
	return 1;
}

static size_t indent_of(const char *s)
{
	size_t i = 0;

	while (s[i] == ' ')
		i++;
	return i;
}

static bool blank_or_comment(const char *s)
{
	s += indent_of(s);
	return !*s || *s == '#';
}

/*
 * YAML scalars and values.
 */
struct cursor {
	const char *p;
};

static void skip_spaces(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static int append(struct text_reader *r, size_t *len, const void *b, size_t n)
{
	if (*len + n + 1 > r->data_cap) {
		size_t cap = r->data_cap ? r->data_cap : 64;
		char *d;

		while (cap < *len + n + 1)
			cap *= 2;
		d = realloc(r->data, cap);
		if (!d)
			return -ENOMEM;
		r->data = d;
		r->data_cap = cap;
	}
	memcpy(r->data + *len, b, n);
	*len += n;
	r->data[*len] = 0;
	return 0;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int append_utf8(struct text_reader *r, size_t *len, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return append(r, len, b, n);
}

/* A double-quoted scalar's escape after the backslash at c->p. */
static int yaml_escape(struct text_reader *r, struct cursor *c, size_t *len)
{
	char e = *c->p++, b;
	int digits;
	uint32_t cp = 0;

	switch (e) {
	case '0':
		b = 0;
		return append(r, len, &b, 1);
	case 'a':
		return append(r, len, "\a", 1);
	case 'b':
		return append(r, len, "\b", 1);
	case 't':
	case '\t':
		return append(r, len, "\t", 1);
	case 'n':
		return append(r, len, "\n", 1);
	case 'v':
		return append(r, len, "\v", 1);
	case 'f':
		return append(r, len, "\f", 1);
	case 'r':
		return append(r, len, "\r", 1);
	case 'e':
		return append(r, len, "\x1b", 1);
	case ' ':
	case '"':
	case '/':
	case '\\':
		return append(r, len, &e, 1);
	case 'N':
		return append_utf8(r, len, 0x85);
	case '_':
		return append_utf8(r, len, 0xa0);
	case 'L':
		return append_utf8(r, len, 0x2028);
	case 'P':
		return append_utf8(r, len, 0x2029);
	case 'x':
		digits = 2;
		break;
	case 'u':
		digits = 4;
		break;
	case 'U':
		digits = 8;
		break;
	default:
		c->p--;
		return error(r, "unknown escape '\\%c' in a quoted string",
			     e ? e : '0');
	}
	for (int i = 0; i < digits; i++) {
		int v = hex_value(*c->p);

		if (v < 0)
			return error(r, "'\\%c' needs %d hex digits", e,
				     digits);
		cp = cp << 4 | (uint32_t)v;
		c->p++;
	}
	if (e == 'x') {
		b = (char)cp;
		return append(r, len, &b, 1);
	}
	if (cp > 0x10ffff)
		return error(r, "'\\U%08X' is not a code point", cp);
	return append_utf8(r, len, cp);
}

/*
 * Read a scalar at c->p into r->data (NUL-terminated; *len bytes, which
 * may include NULs).  @stop: characters that end a plain scalar.
 */
static int yaml_scalar(struct text_reader *r, struct cursor *c,
		       const char *stop, size_t *len)
{
	int ret;

	*len = 0;
	ret = append(r, len, "", 0);
	if (ret)
		return ret;
	skip_spaces(c);
	if (*c->p == '\'') {
		c->p++;
		for (;;) {
			if (!*c->p)
				return error(r, "unterminated 'string'");
			if (*c->p == '\'') {
				if (c->p[1] != '\'') {
					c->p++;
					break;
				}
				c->p++;
			}
			ret = append(r, len, c->p++, 1);
			if (ret)
				return ret;
		}
	} else if (*c->p == '"') {
		c->p++;
		for (;;) {
			if (!*c->p)
				return error(r, "unterminated \"string\"");
			if (*c->p == '"') {
				c->p++;
				break;
			}
			if (*c->p == '\\') {
				c->p++;
				ret = yaml_escape(r, c, len);
			} else {
				ret = append(r, len, c->p++, 1);
			}
			if (ret)
				return ret;
		}
	} else {
		const char *start = c->p, *end;

		while (*c->p && !strchr(stop, *c->p) &&
		       !(*c->p == ' ' && c->p[1] == '#'))
			c->p++;
		end = c->p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		ret = append(r, len, start, (size_t)(end - start));
		if (ret)
			return ret;
	}
	skip_spaces(c);
	return 0;
}

static int parse_u64(struct text_reader *r, const char *key, const char *s,
		     uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s == '-' || *s == '+' || !*s)
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return error(r, "%s: '%s' is not a number from 0 to %" PRIu64, key, s,
		     max);
}

static int parse_i32(struct text_reader *r, const char *key, const char *s,
		     int32_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < INT32_MIN || v > INT32_MAX)
		return error(r, "%s: '%s' is not a 32-bit integer", key, s);
	*out = (int32_t)v;
	return 0;
}

static int parse_bool(struct text_reader *r, const char *key, const char *s,
		      bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
		*out = false;
		return 0;
	}
	return error(r, "%s: '%s' is not true or false", key, s);
}

/* A key up to ':' followed by a space or the end. */
static int yaml_key(struct text_reader *r, struct cursor *c, char *key,
		    size_t keylen)
{
	const char *start;
	size_t n;

	skip_spaces(c);
	start = c->p;
	while (*c->p && *c->p != ':' && *c->p != ',' && *c->p != '}')
		c->p++;
	if (*c->p != ':' || (c->p[1] && c->p[1] != ' '))
		return error(r, "expected 'key: value' at '%.40s'", start);
	n = (size_t)(c->p - start);
	while (n && start[n - 1] == ' ')
		n--;
	if (!n || n >= keylen)
		return error(r, "bad key at '%.40s'", start);
	memcpy(key, start, n);
	key[n] = 0;
	c->p++;
	return 0;
}

/*
 * YAML records.
 */
enum {
	F_TYPE = 1 << 0,
	F_CPU = 1 << 1,
	F_KIND = 1 << 2,
	F_TSC = 1 << 3,
};

struct yaml_record {
	unsigned int seen;
	uint64_t type, cpu, thread, process, tsc;
	int32_t func_id;
	uint32_t kind;
	uint32_t nargs;
	size_t data_len;
	bool have_data;
};

static int yaml_args(struct text_reader *r, struct cursor *c,
		     struct yaml_record *rec)
{
	size_t len;
	int ret;

	skip_spaces(c);
	if (*c->p != '[')
		return error(r, "args: expected a [ list ]");
	c->p++;
	skip_spaces(c);
	if (*c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		uint64_t v;

		ret = yaml_scalar(r, c, ",]", &len);
		if (ret)
			return ret;
		if (rec->nargs == MAX_ARGS)
			return error(r, "args: more than %d arguments",
				     MAX_ARGS);
		ret = parse_u64(r, "args", r->data, UINT64_MAX, &v);
		if (ret)
			return ret;
		r->args[rec->nargs++] = v;
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		return error(r, "args: expected ',' or ']'");
	}
}

/* One "key: value" of a record; the value ends at one of @stop. */
static int yaml_field(struct text_reader *r, struct cursor *c,
		      struct yaml_record *rec, const char *stop)
{
	char key[32];
	size_t len;
	int ret = yaml_key(r, c, key, sizeof(key));

	if (ret)
		return ret;
	if (!strcmp(key, "args"))
		return yaml_args(r, c, rec);
	ret = yaml_scalar(r, c, stop, &len);
	if (ret)
		return ret;
	if (!strcmp(key, "data")) {
		/* keep the payload: move it to the front of the buffer's
		 * spare half, as later fields reuse r->data */
		rec->have_data = true;
		rec->data_len = len;
		return 1;
	}
	if (strlen(r->data) != len)
		return error(r, "%s: unexpected NUL byte", key);
	if (!strcmp(key, "type")) {
		rec->seen |= F_TYPE;
		return parse_u64(r, key, r->data, UINT16_MAX, &rec->type);
	}
	if (!strcmp(key, "func-id"))
		return parse_i32(r, key, r->data, &rec->func_id);
	if (!strcmp(key, "function"))
		return 0; /* a name for people; the id is what counts */
	if (!strcmp(key, "cpu")) {
		rec->seen |= F_CPU;
		return parse_u64(r, key, r->data, UINT16_MAX, &rec->cpu);
	}
	if (!strcmp(key, "thread"))
		return parse_u64(r, key, r->data, UINT32_MAX, &rec->thread);
	if (!strcmp(key, "process"))
		return parse_u64(r, key, r->data, UINT32_MAX, &rec->process);
	if (!strcmp(key, "tsc")) {
		rec->seen |= F_TSC;
		return parse_u64(r, key, r->data, UINT64_MAX, &rec->tsc);
	}
	if (!strcmp(key, "kind")) {
		for (uint32_t k = 0; k < 6; k++) {
			if (!strcmp(r->data, xrayfdr_event_kind_name(k))) {
				rec->kind = k;
				rec->seen |= F_KIND;
				return 0;
			}
		}
		return error(r, "kind: unknown record kind '%s'", r->data);
	}
	return error(r, "unknown record field '%s'", key);
}

static int keep_payload(struct text_reader *r, struct payload *pl, size_t len)
{
	if (len + 1 > pl->cap) {
		char *n = realloc(pl->p, len + 1);

		if (!n)
			return -ENOMEM;
		pl->p = n;
		pl->cap = len + 1;
	}
	memcpy(pl->p, r->data, len);
	pl->len = len;
	return 0;
}

static int yaml_finish_record(struct text_reader *r, struct yaml_record *rec)
{
	struct xrayfdr_event *ev = &r->ev;
	int ret;
	size_t len = 0;

	if ((rec->seen & (F_TYPE | F_CPU | F_KIND | F_TSC)) !=
	    (F_TYPE | F_CPU | F_KIND | F_TSC))
		return error(
			r,
			"a record needs type, cpu, kind and tsc (missing %s)",
			!(rec->seen & F_TYPE) ? "type" :
			!(rec->seen & F_CPU)  ? "cpu" :
			!(rec->seen & F_KIND) ? "kind" :
						"tsc");
	if (rec->nargs && rec->kind != XRAYFDR_EV_ENTRY_ARGS)
		return error(r, "args on a %s record",
			     xrayfdr_event_kind_name(rec->kind));
	memset(ev, 0, sizeof(*ev));
	ev->kind = rec->kind;
	ev->func_id = rec->func_id;
	ev->tsc = rec->tsc;
	ev->tid = (uint32_t)rec->thread;
	ev->pid = (uint32_t)rec->process;
	ev->cpu = (uint16_t)rec->cpu;
	/* the record's own type: a typed event's, or whatever it carries */
	ev->event_type = (uint16_t)rec->type;
	ev->nargs = rec->nargs;
	ev->args = r->args;
	ev->offset = r->lineno;
	if (rec->kind == XRAYFDR_EV_CUSTOM || rec->kind == XRAYFDR_EV_TYPED) {
		ret = append(r, &len, "", 0);
		if (ret)
			return ret;
		if (rec->have_data) {
			ret = append(r, &len, r->payload.p, r->payload.len);
			if (ret)
				return ret;
		}
		ev->data = r->data;
		ev->data_size = (uint32_t)len;
	}
	return 1;
}

/*
 * In a flow mapping, at the end of a line: the mapping goes on on the
 * next one (LLVM's YAML writer wraps long ones).  Return 0 with the
 * cursor on it, or an error.
 */
static int flow_continues(struct text_reader *r, struct cursor *c)
{
	uint64_t first = r->lineno;
	int ret;

	while (!*c->p) {
		ret = next_line(r);
		if (ret < 0)
			return ret;
		if (!ret)
			return error(r,
				     "the record that starts on line %" PRIu64
				     " does not end ('}')",
				     first);
		c->p = r->line;
		skip_spaces(c);
	}
	return 0;
}

/* A whole flow mapping: "- { key: value, ... }", on one line or more. */
static int yaml_flow_record(struct text_reader *r, struct cursor *c)
{
	struct yaml_record rec = { 0 };
	int ret;

	c->p++; /* '{' */
	skip_spaces(c);
	if ((ret = flow_continues(r, c)))
		return ret;
	while (*c->p != '}') {
		ret = yaml_field(r, c, &rec, ",}");
		if (ret < 0)
			return ret;
		if (ret == 1 &&
		    (ret = keep_payload(r, &r->payload, rec.data_len)))
			return ret;
		skip_spaces(c);
		if ((ret = flow_continues(r, c)))
			return ret;
		if (*c->p == ',') {
			c->p++;
			skip_spaces(c);
			if ((ret = flow_continues(r, c)))
				return ret;
			continue;
		}
		if (*c->p != '}')
			return error(r, "expected ',' or '}' at '%.40s'", c->p);
	}
	c->p++;
	skip_spaces(c);
	if (*c->p && *c->p != '#')
		return error(r, "unexpected text after the record: '%.40s'",
			     c->p);
	return yaml_finish_record(r, &rec);
}

/* A block mapping: "- key: value" then "  key: value" lines. */
static int yaml_block_record(struct text_reader *r, struct cursor *c,
			     size_t indent)
{
	struct yaml_record rec = { 0 };
	int ret;

	for (;;) {
		ret = yaml_field(r, c, &rec, "");
		if (ret < 0)
			return ret;
		if (ret == 1 &&
		    (ret = keep_payload(r, &r->payload, rec.data_len)))
			return ret;
		ret = next_line(r);
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		if (blank_or_comment(r->line))
			continue;
		if (indent_of(r->line) <= indent) {
			r->have_line = true;
			break;
		}
		c->p = r->line;
	}
	return yaml_finish_record(r, &rec);
}

static int yaml_header_field(struct text_reader *r, struct cursor *c,
			     unsigned int *seen)
{
	char key[32];
	size_t len;
	uint64_t v;
	int ret = yaml_key(r, c, key, sizeof(key));

	if (ret)
		return ret;
	ret = yaml_scalar(r, c, "", &len);
	if (ret)
		return ret;
	if (!strcmp(key, "version")) {
		*seen |= 1;
		ret = parse_u64(r, key, r->data, UINT16_MAX, &v);
		r->hdr.version = (uint16_t)v;
	} else if (!strcmp(key, "type")) {
		*seen |= 2;
		ret = parse_u64(r, key, r->data, UINT16_MAX, &v);
		r->hdr.type = (uint16_t)v;
	} else if (!strcmp(key, "constant-tsc")) {
		*seen |= 4;
		ret = parse_bool(r, key, r->data, &r->hdr.constant_tsc);
	} else if (!strcmp(key, "nonstop-tsc")) {
		*seen |= 8;
		ret = parse_bool(r, key, r->data, &r->hdr.nonstop_tsc);
	} else if (!strcmp(key, "cycle-frequency")) {
		*seen |= 16;
		ret = parse_u64(r, key, r->data, UINT64_MAX,
				&r->hdr.cycle_frequency);
	} else {
		ret = error(r, "unknown header field '%s'", key);
	}
	return ret;
}

static int yaml_header(struct text_reader *r)
{
	unsigned int seen = 0;
	bool in_header = false, started = false;
	int ret;

	while ((ret = next_line(r)) > 0) {
		struct cursor c = { r->line };
		char key[32];

		if (blank_or_comment(r->line))
			continue;
		if (!started && (!strncmp(r->line, "---", 3) ||
				 !strncmp(r->line, "%YAML", 5))) {
			started = !strncmp(r->line, "---", 3);
			continue;
		}
		started = true;
		if (in_header && indent_of(r->line) > 0) {
			ret = yaml_header_field(r, &c, &seen);
			if (ret)
				return ret;
			continue;
		}
		in_header = false;
		ret = yaml_key(r, &c, key, sizeof(key));
		if (ret)
			return ret;
		skip_spaces(&c);
		if (!strcmp(key, "header") && !*c.p) {
			in_header = true;
			continue;
		}
		if (!strcmp(key, "records")) {
			if (seen != 31)
				return error(
					r,
					"the header needs version, type, constant-tsc, nonstop-tsc and cycle-frequency");
			if (!strcmp(c.p, "[]"))
				r->done = true;
			else if (*c.p)
				return error(r, "records: expected a list");
			r->in_records = true;
			return 0;
		}
		return error(r, "expected 'header:' or 'records:', not '%s'",
			     key);
	}
	if (ret < 0)
		return ret;
	r->lineno++;
	return error(r,
		     "no 'records:' in the file: not an llvm-xray YAML trace");
}

static int yaml_next(struct text_reader *r)
{
	int ret;

	while (!r->done && (ret = next_line(r)) != 0) {
		struct cursor c;
		size_t indent;

		if (ret < 0)
			return ret;
		if (blank_or_comment(r->line))
			continue;
		if (!strcmp(r->line, "...") || !strncmp(r->line, "---", 3)) {
			r->done = true;
			break;
		}
		indent = indent_of(r->line);
		c.p = r->line + indent;
		if (c.p[0] != '-' || (c.p[1] != ' ' && c.p[1])) {
			ret = bad_line(
				r, error(r, "expected a record ('- {...}')"));
			if (ret)
				return ret;
			continue;
		}
		c.p++;
		skip_spaces(&c);
		if (*c.p == '{')
			ret = yaml_flow_record(r, &c);
		else
			ret = yaml_block_record(r, &c, indent);
		if (ret == 1)
			return 1;
		ret = bad_line(r, ret);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * TraceLog.
 */
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
static int tl_number(struct text_reader *r, struct cursor *c, const char *what,
		     uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	skip_spaces(c);
	errno = 0;
	if (!(*c->p >= '0' && *c->p <= '9'))
		return error(r, "%s: expected a number at '%.30s'", what, c->p);
	v = strtoull(c->p, &end, 0);
	if (errno || v > max)
		return error(r, "%s: number out of range", what);
	c->p = end;
	*out = v;
	return 0;
}

static int tl_end(struct text_reader *r, struct cursor *c)
{
	skip_spaces(c);
	if (*c->p)
		return error(r, "unexpected text at the end: '%.40s'", c->p);
	return 0;
}

static struct tl_thread *tl_get_thread(struct text_reader *r, uint64_t iid,
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

static int tl_queue(struct text_reader *r, uint32_t kind, int32_t func,
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
		.offset = r->lineno,
	};
	return 0;
}

/* A quoted TraceLog string ("..." with \" and \\ escaped). */
static int tl_string(struct text_reader *r, struct cursor *c, size_t *len)
{
	int ret;

	*len = 0;
	ret = append(r, len, "", 0);
	if (ret)
		return ret;
	skip_spaces(c);
	if (*c->p != '"')
		return error(r, "expected a \"quoted string\" at '%.30s'",
			     c->p);
	c->p++;
	while (*c->p != '"') {
		if (!*c->p)
			return error(r, "unterminated \"string\"");
		if (*c->p == '\\' && (c->p[1] == '"' || c->p[1] == '\\'))
			c->p++;
		ret = append(r, len, c->p++, 1);
		if (ret)
			return ret;
	}
	c->p++;
	return 0;
}

static int tl_fun_nam(struct text_reader *r, struct cursor *c)
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
	name = strdup(r->data);
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

		if (asprintf(&full, "%s%s", name, r->data) < 0) {
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
			return error(r,
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

static int tl_time(struct text_reader *r, struct cursor *c, uint64_t *tsc)
{
	bool neg;
	uint64_t v;
	int ret;

	skip_spaces(c);
	neg = *c->p == '-';
	if (neg)
		c->p++;
	ret = tl_number(r, c, "timestamp", TL_TSC_BIAS - 1, &v);
	if (ret)
		return ret;
	*tsc = neg ? TL_TSC_BIAS - v : TL_TSC_BIAS + v;
	return 0;
}

static int tl_sample(struct text_reader *r, struct cursor *c)
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
		return error(r, "sam str: expected MATCH:SIZE");
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
		return error(r,
			     "sam str: thread 0x%08" PRIx64
			     " was never created ('thr crt')",
			     iid);
	if (size != t->depth || match > size)
		return error(r,
			     "sam str: %" PRIu64 ":%" PRIu64
			     " does not fit the thread's %u frames",
			     match, size, t->depth);
	if (!t->sampled) {
		/* Calls are matched by tid downstream: one thread's only. */
		uint64_t key = (uint64_t)t->pid << 32 | t->tid;

		if (u64map_get(&r->sampled_tids, key))
			return error(r,
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

		skip_spaces(c);
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
			return error(r, "sam str: stack deeper than %u frames",
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

static int tl_line(struct text_reader *r)
{
	struct cursor c = { r->line };
	char type[4], sub[4];
	uint64_t a, b;
	struct tl_thread *t;
	int ret;

	if (blank_or_comment(r->line))
		return 0;
	if (r->line_len < 7 || r->line[3] != ' ' ||
	    (r->line[7] && r->line[7] != ' '))
		return error(r, "expected a record '<aaa> <bbb> ...'");
	memcpy(type, r->line, 3);
	type[3] = 0;
	memcpy(sub, r->line + 4, 3);
	sub[3] = 0;
	c.p = r->line + 7;
	if (!strcmp(type, "sam") && !strcmp(sub, "str"))
		return tl_sample(r, &c);
	if (!strcmp(type, "thr") && !strcmp(sub, "crt")) {
		if ((ret = tl_number(r, &c, "thr crt", UINT64_MAX, &a)) ||
		    (ret = tl_number(r, &c, "thr crt", UINT32_MAX, &b)) ||
		    (ret = tl_end(r, &c)))
			return ret;
		if (tl_get_thread(r, b, false))
			return error(r,
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
			return error(r,
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
		if (!strncmp(r->line, known[i], 7))
			return 0;
	return error(r, "unknown record '%s %s'", type, sub);
}

static int tl_next(struct text_reader *r)
{
	int ret;

	for (;;) {
		if (r->queue_next < r->nqueue) {
			r->ev = r->queue[r->queue_next++];
			r->ev.args = r->args;
			return 1;
		}
		r->nqueue = r->queue_next = 0;
		ret = next_line(r);
		if (ret <= 0)
			return ret;
		ret = bad_line(r, tl_line(r));
		if (ret < 0) {
			r->nqueue = 0;
			return ret;
		}
	}
}

/*
 * The interface.
 */
struct text_reader *text_reader_new(enum text_kind kind, FILE *f,
				    const char *name, bool keep_going,
				    void (*on_skip)(void *ctx, const char *msg),
				    void *ctx)
{
	struct text_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->kind = kind;
	r->f = f;
	r->keep_going = keep_going;
	r->on_skip = on_skip;
	r->skip_ctx = ctx;
	r->header_ret = 1;
	r->name = strdup(name);
	if (!r->name) {
		free(r);
		return NULL;
	}
	return r;
}

void text_reader_free(struct text_reader *r)
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
	free(r->line);
	free(r->data);
	free(r->payload.p);
	free(r->name);
	free(r);
}

int text_reader_header(struct text_reader *r, struct trace_header *hdr)
{
	if (r->header_ret == 1) {
		r->hdr.format = r->kind == TEXT_YAML ? TRACE_YAML :
						       TRACE_TRACELOG;
		if (r->kind == TEXT_YAML) {
			r->header_ret = yaml_header(r);
		} else {
			/* milliseconds: the clock of a TraceLog */
			r->hdr.type = 1;
			r->hdr.cycle_frequency = 1000;
			r->header_ret = 0;
		}
	}
	*hdr = r->hdr;
	return r->header_ret;
}

int text_reader_next(struct text_reader *r, const struct xrayfdr_event **ev)
{
	struct trace_header hdr;
	int ret = r->header_ret == 1 ? text_reader_header(r, &hdr) :
				       r->header_ret;

	if (ret < 0)
		return ret;
	ret = r->kind == TEXT_YAML ? yaml_next(r) : tl_next(r);
	if (ret == 1)
		*ev = &r->ev;
	return ret;
}

const char *text_reader_error(const struct text_reader *r)
{
	return r->err;
}

void text_reader_stats(const struct text_reader *r, struct trace_stats *st)
{
	st->bytes = r->stats.bytes;
	st->errors = r->stats.errors;
	st->skipped_bytes = r->stats.skipped_bytes;
	st->skipped_buffers = r->stats.skipped_buffers;
}

const char *text_reader_function_name(const struct text_reader *r,
				      int32_t func_id)
{
	if (func_id < 0 || (size_t)func_id >= r->nnames)
		return NULL;
	return r->names[func_id];
}
