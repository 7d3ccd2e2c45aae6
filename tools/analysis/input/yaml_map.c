// SPDX-License-Identifier: GPL-2.0-only
/* Instrumentation maps in YAML (see yaml_map.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_map.h"

#define MAX_LINE 65536

/* A line that comes before a document's content: blank or a comment. */
static bool is_preamble(const char *s, const char *lend)
{
	while (s < lend && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	return s == lend || *s == '#';
}

/* Whether the line @s to @lend starts the map: "---", or its first sled
 * (YAML's document marker is optional, and llvm-xray takes maps without). */
static bool is_start(const char *s, const char *lend)
{
	size_t n = (size_t)(lend - s);

	if (n >= 3 && !memcmp(s, "---", 3))
		return n == 3 || s[3] == ' ' || s[3] == '\r';
	return n >= 2 && s[0] == '-' && (s[1] == ' ' || s[1] == '\t');
}

bool yaml_map_looks_like(const char *text, size_t len)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		const char *lend = eol ? eol : end;

		if (!is_preamble(s, lend))
			return is_start(s, lend);
		s = eol ? eol + 1 : end;
	}
	return false;
}

struct parse {
	const char *name;
	size_t line;
	char *err;
	size_t errlen;
};

static int fail(struct parse *p, const char *why, const char *what, size_t n)
{
	snprintf(p->err, p->errlen, "%s: line %zu: %s%s%.*s%s", p->name,
		 p->line, why, what ? " '" : "", (int)(what ? n : 0),
		 what ? what : "", what ? "'" : "");
	return -EINVAL;
}

/* A number (decimal, or hex with 0x) that is all of @n bytes at @s. */
static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	char buf[32], *end;

	if (!n || n >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return !errno && *end == '\0';
}

/* The end of the value that starts at @s (up to @end): past a quoted
 * scalar, or at the next ',' or '}'. */
static const char *value_end(const char *s, const char *end)
{
	if (s < end && (*s == '\'' || *s == '"')) {
		char q = *s++;

		while (s < end) {
			if (*s == '\\' && q == '"' && s + 1 < end) {
				s += 2;
				continue;
			}
			if (*s == q) {
				if (q == '\'' && s + 1 < end && s[1] == '\'') {
					s += 2; /* '' inside '...' */
					continue;
				}
				return s + 1;
			}
			s++;
		}
		return NULL;
	}
	while (s < end && *s != ',' && *s != '}')
		s++;
	return s;
}

static const char *skip_spaces(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static bool key_is(const char *k, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(k, want, n);
}

/* One "- { ... }" line, @s to @end, into @sled and its @id. */
static int parse_entry(struct parse *p, const char *s, const char *end,
		       struct xray_sled *sled, uint64_t *id)
{
	bool have_id = false, have_addr = false, have_fn = false,
	     have_kind = false;

	s = skip_spaces(s + 1, end); /* past '-' */
	if (s == end || *s != '{')
		return fail(p, "a sled is a flow mapping: '- { ... }'", NULL,
			    0);
	s++;
	*sled = (struct xray_sled){ .version = 2 };
	for (;;) {
		const char *key, *colon, *val, *vend;
		size_t klen, vlen;
		uint64_t v;

		s = skip_spaces(s, end);
		if (s < end && *s == '}')
			break;
		key = s;
		colon = memchr(s, ':', (size_t)(end - s));
		if (!colon)
			return fail(p, "a key without ':'", NULL, 0);
		klen = (size_t)(colon - key);
		while (klen && key[klen - 1] == ' ')
			klen--;
		val = skip_spaces(colon + 1, end);
		vend = value_end(val, end);
		if (!vend)
			return fail(p, "an unterminated quoted value of", key,
				    klen);
		vlen = (size_t)(vend - val);
		while (vlen && (val[vlen - 1] == ' ' || val[vlen - 1] == '\t'))
			vlen--;
		if (key_is(key, klen, "id")) {
			if (!parse_u64(val, vlen, id) || !*id ||
			    *id > INT32_MAX)
				return fail(p, "a bad id", val, vlen);
			have_id = true;
		} else if (key_is(key, klen, "address") ||
			   key_is(key, klen, "function")) {
			if (!parse_u64(val, vlen, &v))
				return fail(p, "a bad address", val, vlen);
			if (key[0] == 'a') {
				sled->address = v;
				have_addr = true;
			} else {
				sled->function = v;
				have_fn = true;
			}
		} else if (key_is(key, klen, "kind")) {
			unsigned int k;

			for (k = 0; k < XRAY_SLED_KIND_COUNT; k++)
				if (key_is(val, vlen, xray_sled_kind_name(k)))
					break;
			if (k == XRAY_SLED_KIND_COUNT)
				return fail(p, "an unknown sled kind", val,
					    vlen);
			sled->kind = (uint8_t)k;
			have_kind = true;
		} else if (key_is(key, klen, "always-instrument")) {
			if (!key_is(val, vlen, "true") &&
			    !key_is(val, vlen, "false"))
				return fail(
					p,
					"always-instrument is true or false, not",
					val, vlen);
			sled->always_instrument = val[0] == 't';
		} else if (key_is(key, klen, "version")) {
			if (!parse_u64(val, vlen, &v) || v > 255)
				return fail(p, "a bad version", val, vlen);
			sled->version = (uint8_t)v;
		}
		/* function-name, location and anything else: not needed */
		s = skip_spaces(vend, end);
		if (s < end && *s == ',') {
			s++;
			continue;
		}
		if (s < end && *s == '}')
			break;
		return fail(p, "expected ',' or '}' after the value of", key,
			    klen);
	}
	if (!have_id || !have_addr || !have_fn || !have_kind)
		return fail(p, "a sled needs id, address, function and kind",
			    NULL, 0);
	return 0;
}

/* Append @sled of function @id to @map (ids in order, from 1). */
static int add_sled(struct parse *p, struct xray_instr_map *map,
		    const struct xray_sled *sled, uint64_t id, size_t *cap)
{
	if (id != map->nfunctions && id != map->nfunctions + 1)
		return id < map->nfunctions ?
			       fail(p, "an id goes back", NULL, 0) :
			       fail(p, "an id skips ahead", NULL, 0);
	if (map->nsleds == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct xray_sled *ns = realloc(map->sleds, ncap * sizeof(*ns));
		struct xray_function *nf =
			realloc(map->functions, ncap * sizeof(*nf));

		if (ns)
			map->sleds = ns;
		if (nf)
			map->functions = nf;
		if (!ns || !nf)
			return fail(p, "out of memory", NULL, 0);
		*cap = ncap;
	}
	if (id == map->nfunctions + 1) {
		map->functions[map->nfunctions++] = (struct xray_function){
			.address = sled->function,
			.first_sled = (uint32_t)map->nsleds,
		};
	} else if (map->functions[id - 1].address != sled->function) {
		return fail(p, "a sled's function is not its id's", NULL, 0);
	}
	map->sleds[map->nsleds++] = *sled;
	map->functions[id - 1].nsleds++;
	return 0;
}

int yaml_map_parse(const char *text, size_t len, const char *name,
		   struct xray_instr_map *map, char *err, size_t errlen)
{
	struct parse p = { name, 0, err, errlen };
	const char *s = text, *end = text + len;
	bool started = false, ended = false;
	size_t cap = 0;
	int ret = 0;

	memset(map, 0, sizeof(*map));
	while (!ret && s < end && !ended) {
		const char *eol = memchr(s, '\n', (size_t)(end - s));
		const char *lend = eol ? eol : end, *t;

		p.line++;
		if (lend > s && lend[-1] == '\r')
			lend--;
		if ((size_t)(lend - s) > MAX_LINE) {
			ret = fail(&p, "a line longer than 64 KiB", NULL, 0);
			break;
		}
		t = skip_spaces(s, lend);
		if (!started && is_preamble(s, lend)) {
			/* comments before the document */
		} else if (!started && !is_start(s, lend)) {
			ret = fail(&p, "a YAML map starts with '---'", NULL, 0);
		} else if (!started && *s == '-' && s[1] == '-') {
			started = true;
		} else if (t == lend || *t == '#') {
			/* blank or a comment */
		} else if (lend - t == 3 && !memcmp(t, "...", 3)) {
			ended = true;
		} else if (*t == '-') {
			struct xray_sled sled;
			uint64_t id;

			started = true;
			ret = parse_entry(&p, t, lend, &sled, &id);
			if (!ret)
				ret = add_sled(&p, map, &sled, id, &cap);
		} else {
			ret = fail(&p, "expected '- { ... }'", NULL, 0);
		}
		s = eol ? eol + 1 : end;
	}
	if (!ret && !started)
		ret = fail(&p, "empty", NULL, 0);
	if (ret)
		xray_instr_map_free(map);
	return ret;
}

int yaml_map_load(const char *path, struct xray_instr_map *map, char *err,
		  size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	int ret;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	do {
		if (len == cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory",
					 path);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (ret)
		snprintf(err, errlen, "%s: cannot read it", path);
	else
		ret = yaml_map_parse(buf, len, path, map, err, errlen);
	free(buf);
	return ret;
}
