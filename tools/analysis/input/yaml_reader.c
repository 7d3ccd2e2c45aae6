// SPDX-License-Identifier: GPL-2.0-only
/*
 * The llvm-xray YAML trace reader (see text_reader.h).  It understands the
 * subset of YAML that llvm-xray's emitter produces (and block-style
 * records), not YAML in general, one line at a time from text_reader.c's
 * line reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_reader.h"

#define MAX_ARGS 64

/* A record's payload, kept apart from r->l->data, which the fields after
 * it reuse. */
struct payload {
	char *p;
	size_t len, cap;
};

struct yaml_reader {
	struct text_lines *l;
	bool done; /* "..." seen */
	struct payload payload;

	/* the event handed out and its arguments */
	struct xrayfdr_event ev;
	uint64_t args[MAX_ARGS];
};

struct yaml_reader *yaml_reader_new(struct text_lines *l)
{
	struct yaml_reader *r = calloc(1, sizeof(*r));

	if (r)
		r->l = l;
	return r;
}

void yaml_reader_free(struct yaml_reader *r)
{
	if (!r)
		return;
	free(r->payload.p);
	free(r);
}

/*
 * Scalars and values.
 */
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

static int append_utf8(struct yaml_reader *r, size_t *len, uint32_t cp)
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
	return text_append(r->l, len, b, n);
}

/* A double-quoted scalar's escape after the backslash at c->p. */
static int yaml_escape(struct yaml_reader *r, struct text_cursor *c,
		       size_t *len)
{
	char e = *c->p++, b;
	int digits;
	uint32_t cp = 0;

	switch (e) {
	case '0':
		b = 0;
		return text_append(r->l, len, &b, 1);
	case 'a':
		return text_append(r->l, len, "\a", 1);
	case 'b':
		return text_append(r->l, len, "\b", 1);
	case 't':
	case '\t':
		return text_append(r->l, len, "\t", 1);
	case 'n':
		return text_append(r->l, len, "\n", 1);
	case 'v':
		return text_append(r->l, len, "\v", 1);
	case 'f':
		return text_append(r->l, len, "\f", 1);
	case 'r':
		return text_append(r->l, len, "\r", 1);
	case 'e':
		return text_append(r->l, len, "\x1b", 1);
	case ' ':
	case '"':
	case '/':
	case '\\':
		return text_append(r->l, len, &e, 1);
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
		return text_error(r->l,
				  "unknown escape '\\%c' in a quoted string",
				  e ? e : '0');
	}
	for (int i = 0; i < digits; i++) {
		int v = hex_value(*c->p);

		if (v < 0)
			return text_error(r->l, "'\\%c' needs %d hex digits", e,
					  digits);
		cp = cp << 4 | (uint32_t)v;
		c->p++;
	}
	if (e == 'x') {
		b = (char)cp;
		return text_append(r->l, len, &b, 1);
	}
	if (cp > 0x10ffff)
		return text_error(r->l, "'\\U%08X' is not a code point", cp);
	return append_utf8(r, len, cp);
}

/*
 * Read a scalar at c->p into r->l->data (NUL-terminated; *len bytes, which
 * may include NULs).  @stop: characters that end a plain scalar.
 */
static int yaml_scalar(struct yaml_reader *r, struct text_cursor *c,
		       const char *stop, size_t *len)
{
	int ret;

	*len = 0;
	ret = text_append(r->l, len, "", 0);
	if (ret)
		return ret;
	text_skip_spaces(c);
	if (*c->p == '\'') {
		c->p++;
		for (;;) {
			if (!*c->p)
				return text_error(r->l,
						  "unterminated 'string'");
			if (*c->p == '\'') {
				if (c->p[1] != '\'') {
					c->p++;
					break;
				}
				c->p++;
			}
			ret = text_append(r->l, len, c->p++, 1);
			if (ret)
				return ret;
		}
	} else if (*c->p == '"') {
		c->p++;
		for (;;) {
			if (!*c->p)
				return text_error(r->l,
						  "unterminated \"string\"");
			if (*c->p == '"') {
				c->p++;
				break;
			}
			if (*c->p == '\\') {
				c->p++;
				ret = yaml_escape(r, c, len);
			} else {
				ret = text_append(r->l, len, c->p++, 1);
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
		ret = text_append(r->l, len, start, (size_t)(end - start));
		if (ret)
			return ret;
	}
	text_skip_spaces(c);
	return 0;
}

static int parse_u64(struct yaml_reader *r, const char *key, const char *s,
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
	return text_error(r->l, "%s: '%s' is not a number from 0 to %" PRIu64,
			  key, s, max);
}

static int parse_i32(struct yaml_reader *r, const char *key, const char *s,
		     int32_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < INT32_MIN || v > INT32_MAX)
		return text_error(r->l, "%s: '%s' is not a 32-bit integer", key,
				  s);
	*out = (int32_t)v;
	return 0;
}

static int parse_bool(struct yaml_reader *r, const char *key, const char *s,
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
	return text_error(r->l, "%s: '%s' is not true or false", key, s);
}

/* A key up to ':' followed by a space or the end. */
static int yaml_key(struct yaml_reader *r, struct text_cursor *c, char *key,
		    size_t keylen)
{
	const char *start;
	size_t n;

	text_skip_spaces(c);
	start = c->p;
	while (*c->p && *c->p != ':' && *c->p != ',' && *c->p != '}')
		c->p++;
	if (*c->p != ':' || (c->p[1] && c->p[1] != ' '))
		return text_error(r->l, "expected 'key: value' at '%.40s'",
				  start);
	n = (size_t)(c->p - start);
	while (n && start[n - 1] == ' ')
		n--;
	if (!n || n >= keylen)
		return text_error(r->l, "bad key at '%.40s'", start);
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

static int yaml_args(struct yaml_reader *r, struct text_cursor *c,
		     struct yaml_record *rec)
{
	size_t len;
	int ret;

	text_skip_spaces(c);
	if (*c->p != '[')
		return text_error(r->l, "args: expected a [ list ]");
	c->p++;
	text_skip_spaces(c);
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
			return text_error(r->l, "args: more than %d arguments",
					  MAX_ARGS);
		ret = parse_u64(r, "args", r->l->data, UINT64_MAX, &v);
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
		return text_error(r->l, "args: expected ',' or ']'");
	}
}

/* One "key: value" of a record; the value ends at one of @stop. */
static int yaml_field(struct yaml_reader *r, struct text_cursor *c,
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
		 * spare half, as later fields reuse r->l->data */
		rec->have_data = true;
		rec->data_len = len;
		return 1;
	}
	if (strlen(r->l->data) != len)
		return text_error(r->l, "%s: unexpected NUL byte", key);
	if (!strcmp(key, "type")) {
		rec->seen |= F_TYPE;
		return parse_u64(r, key, r->l->data, UINT16_MAX, &rec->type);
	}
	if (!strcmp(key, "func-id"))
		return parse_i32(r, key, r->l->data, &rec->func_id);
	if (!strcmp(key, "function"))
		return 0; /* a name for people; the id is what counts */
	if (!strcmp(key, "cpu")) {
		rec->seen |= F_CPU;
		return parse_u64(r, key, r->l->data, UINT16_MAX, &rec->cpu);
	}
	if (!strcmp(key, "thread"))
		return parse_u64(r, key, r->l->data, UINT32_MAX, &rec->thread);
	if (!strcmp(key, "process"))
		return parse_u64(r, key, r->l->data, UINT32_MAX, &rec->process);
	if (!strcmp(key, "tsc")) {
		rec->seen |= F_TSC;
		return parse_u64(r, key, r->l->data, UINT64_MAX, &rec->tsc);
	}
	if (!strcmp(key, "kind")) {
		for (uint32_t k = 0; k < 6; k++) {
			if (!strcmp(r->l->data, xrayfdr_event_kind_name(k))) {
				rec->kind = k;
				rec->seen |= F_KIND;
				return 0;
			}
		}
		return text_error(r->l, "kind: unknown record kind '%s'",
				  r->l->data);
	}
	return text_error(r->l, "unknown record field '%s'", key);
}

static int keep_payload(struct yaml_reader *r, struct payload *pl, size_t len)
{
	if (len + 1 > pl->cap) {
		char *n = realloc(pl->p, len + 1);

		if (!n)
			return -ENOMEM;
		pl->p = n;
		pl->cap = len + 1;
	}
	memcpy(pl->p, r->l->data, len);
	pl->len = len;
	return 0;
}

static int yaml_finish_record(struct yaml_reader *r, struct yaml_record *rec)
{
	struct xrayfdr_event *ev = &r->ev;
	int ret;
	size_t len = 0;

	if ((rec->seen & (F_TYPE | F_CPU | F_KIND | F_TSC)) !=
	    (F_TYPE | F_CPU | F_KIND | F_TSC))
		return text_error(
			r->l,
			"a record needs type, cpu, kind and tsc (missing %s)",
			!(rec->seen & F_TYPE) ? "type" :
			!(rec->seen & F_CPU)  ? "cpu" :
			!(rec->seen & F_KIND) ? "kind" :
						"tsc");
	if (rec->nargs && rec->kind != XRAYFDR_EV_ENTRY_ARGS)
		return text_error(r->l, "args on a %s record",
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
	ev->offset = r->l->lineno;
	if (rec->kind == XRAYFDR_EV_CUSTOM || rec->kind == XRAYFDR_EV_TYPED) {
		ret = text_append(r->l, &len, "", 0);
		if (ret)
			return ret;
		if (rec->have_data) {
			ret = text_append(r->l, &len, r->payload.p,
					  r->payload.len);
			if (ret)
				return ret;
		}
		ev->data = r->l->data;
		ev->data_size = (uint32_t)len;
	}
	return 1;
}

/*
 * In a flow mapping, at the end of a line: the mapping goes on on the
 * next one (LLVM's YAML writer wraps long ones).  Return 0 with the
 * cursor on it, or an error.
 */
static int flow_continues(struct yaml_reader *r, struct text_cursor *c)
{
	uint64_t first = r->l->lineno;
	int ret;

	while (!*c->p) {
		ret = text_next_line(r->l);
		if (ret < 0)
			return ret;
		if (!ret)
			return text_error(
				r->l,
				"the record that starts on line %" PRIu64
				" does not end ('}')",
				first);
		c->p = r->l->line;
		text_skip_spaces(c);
	}
	return 0;
}

/* A whole flow mapping: "- { key: value, ... }", on one line or more. */
static int yaml_flow_record(struct yaml_reader *r, struct text_cursor *c)
{
	struct yaml_record rec = { 0 };
	int ret;

	c->p++; /* '{' */
	text_skip_spaces(c);
	if ((ret = flow_continues(r, c)))
		return ret;
	while (*c->p != '}') {
		ret = yaml_field(r, c, &rec, ",}");
		if (ret < 0)
			return ret;
		if (ret == 1 &&
		    (ret = keep_payload(r, &r->payload, rec.data_len)))
			return ret;
		text_skip_spaces(c);
		if ((ret = flow_continues(r, c)))
			return ret;
		if (*c->p == ',') {
			c->p++;
			text_skip_spaces(c);
			if ((ret = flow_continues(r, c)))
				return ret;
			continue;
		}
		if (*c->p != '}')
			return text_error(
				r->l, "expected ',' or '}' at '%.40s'", c->p);
	}
	c->p++;
	text_skip_spaces(c);
	if (*c->p && *c->p != '#')
		return text_error(r->l,
				  "unexpected text after the record: '%.40s'",
				  c->p);
	return yaml_finish_record(r, &rec);
}

/* A block mapping: "- key: value" then "  key: value" lines. */
static int yaml_block_record(struct yaml_reader *r, struct text_cursor *c,
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
		/* the next line with text: a blank line or a comment inside
		 * the mapping is no field (and the line read over it leaves
		 * the cursor pointing at nothing) */
		do {
			ret = text_next_line(r->l);
		} while (ret > 0 && text_blank_or_comment(r->l->line));
		if (ret < 0)
			return ret;
		if (!ret)
			break;
		if (text_indent(r->l->line) <= indent) {
			r->l->have_line = true;
			break;
		}
		c->p = r->l->line;
	}
	return yaml_finish_record(r, &rec);
}

static int yaml_header_field(struct yaml_reader *r, struct text_cursor *c,
			     unsigned int *seen, struct trace_header *hdr)
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
		ret = parse_u64(r, key, r->l->data, UINT16_MAX, &v);
		hdr->version = (uint16_t)v;
	} else if (!strcmp(key, "type")) {
		*seen |= 2;
		ret = parse_u64(r, key, r->l->data, UINT16_MAX, &v);
		hdr->type = (uint16_t)v;
	} else if (!strcmp(key, "constant-tsc")) {
		*seen |= 4;
		ret = parse_bool(r, key, r->l->data, &hdr->constant_tsc);
	} else if (!strcmp(key, "nonstop-tsc")) {
		*seen |= 8;
		ret = parse_bool(r, key, r->l->data, &hdr->nonstop_tsc);
	} else if (!strcmp(key, "cycle-frequency")) {
		*seen |= 16;
		ret = parse_u64(r, key, r->l->data, UINT64_MAX,
				&hdr->cycle_frequency);
	} else {
		ret = text_error(r->l, "unknown header field '%s'", key);
	}
	return ret;
}

int yaml_reader_header(struct yaml_reader *r, struct trace_header *hdr)
{
	unsigned int seen = 0;
	bool in_header = false, started = false;
	int ret;

	while ((ret = text_next_line(r->l)) > 0) {
		struct text_cursor c = { r->l->line };
		char key[32];

		if (text_blank_or_comment(r->l->line))
			continue;
		if (!started && (!strncmp(r->l->line, "---", 3) ||
				 !strncmp(r->l->line, "%YAML", 5))) {
			started = !strncmp(r->l->line, "---", 3);
			continue;
		}
		started = true;
		if (in_header && text_indent(r->l->line) > 0) {
			ret = yaml_header_field(r, &c, &seen, hdr);
			if (ret)
				return ret;
			continue;
		}
		in_header = false;
		ret = yaml_key(r, &c, key, sizeof(key));
		if (ret)
			return ret;
		text_skip_spaces(&c);
		if (!strcmp(key, "header") && !*c.p) {
			in_header = true;
			continue;
		}
		if (!strcmp(key, "records")) {
			if (seen != 31)
				return text_error(
					r->l,
					"the header needs version, type, constant-tsc, nonstop-tsc and cycle-frequency");
			if (!strcmp(c.p, "[]"))
				r->done = true;
			else if (*c.p)
				return text_error(r->l,
						  "records: expected a list");
			return 0;
		}
		return text_error(r->l,
				  "expected 'header:' or 'records:', not '%s'",
				  key);
	}
	if (ret < 0)
		return ret;
	r->l->lineno++;
	return text_error(
		r->l, "no 'records:' in the file: not an llvm-xray YAML trace");
}

int yaml_reader_next(struct yaml_reader *r, const struct xrayfdr_event **ev)
{
	int ret;

	while (!r->done && (ret = text_next_line(r->l)) != 0) {
		struct text_cursor c;
		size_t indent;

		if (ret < 0)
			return ret;
		if (text_blank_or_comment(r->l->line))
			continue;
		if (!strcmp(r->l->line, "...") ||
		    !strncmp(r->l->line, "---", 3)) {
			r->done = true;
			break;
		}
		indent = text_indent(r->l->line);
		c.p = r->l->line + indent;
		if (c.p[0] != '-' || (c.p[1] != ' ' && c.p[1])) {
			ret = text_skip_bad_line(
				r->l,
				text_error(r->l,
					   "expected a record ('- {...}')"));
			if (ret)
				return ret;
			continue;
		}
		c.p++;
		text_skip_spaces(&c);
		if (*c.p == '{')
			ret = yaml_flow_record(r, &c);
		else
			ret = yaml_block_record(r, &c, indent);
		if (ret == 1) {
			*ev = &r->ev;
			return 1;
		}
		ret = text_skip_bad_line(r->l, ret);
		if (ret)
			return ret;
	}
	return 0;
}
