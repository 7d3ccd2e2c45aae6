// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Function filters: rules and their matching (see filter.h). */
#define LOG_DOMAIN "xrayfdr"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"

#define MAX_RULES 64

struct rule {
	bool select; /* +: select, -: leave out */
	bool regex;
	char *pattern; /* glob, or the regex's text */
	char *object; /* glob on the object's base name, or NULL */
	regex_t re;
};

struct fn_filter {
	struct rule rules[MAX_RULES];
	size_t nrules;
	bool any_select;
};

struct fn_filter *fn_filter_new(void)
{
	struct fn_filter *f = calloc(1, sizeof(*f));

	if (!f)
		errno = ENOMEM;
	return f;
}

#define MAX_REGEX 128
#define MAX_REPEAT 255
#define MAX_REPETITIONS 16

/*
 * What the C library's regcomp() may take exponential time and memory on,
 * or NULL: bytes other than printable ASCII, a repetition of a repetition
 * ("a++", "a{9}*"), a bound over MAX_REPEAT, more than MAX_REPETITIONS
 * repetitions, a pattern over MAX_REGEX bytes.  Function names need none
 * of these.
 */
static const char *regex_problem(const char *re)
{
	const char *list = NULL; /* the open bracket expression's first byte */
	bool repeated = false;
	unsigned int repetitions = 0;

	if (strlen(re) > MAX_REGEX)
		return "longer than 128 bytes";
	for (const char *p = re; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			return "a byte that is not printable ASCII";
	for (const char *p = re; *p; p++) {
		if (list) {
			/* "]" first in the list, after any "^", is a member */
			if (p == list && *p == '^') {
				list++;
			} else if (*p == '[' && (p[1] == ':' || p[1] == '=' ||
						 p[1] == '.')) {
				/* [:class:], [=x=], [.x.] may hold a "]" */
				const char close[3] = { p[1], ']', '\0' };
				const char *end = strstr(p + 2, close);

				if (end)
					p = end + 1;
			} else if (*p == ']' && p != list) {
				list = NULL;
			}
			continue;
		}
		if (*p == '\\' && p[1]) {
			p++;
			repeated = false;
			continue;
		}
		if (*p == '*' || *p == '+' || *p == '?' || *p == '{') {
			if (repeated)
				return "repeats a repetition";
			if (++repetitions > MAX_REPETITIONS)
				return "more than 16 repetitions";
			repeated = true;
			if (*p == '{') {
				char *end;
				unsigned long n = strtoul(p + 1, &end, 10);

				if (n > MAX_REPEAT)
					return "a bound over 255";
				if (*end == ',' && end[1] != '}' &&
				    strtoul(end + 1, &end, 10) > MAX_REPEAT)
					return "a bound over 255";
				p = strchr(p, '}') ? strchr(p, '}') : p;
			}
			continue;
		}
		repeated = false;
		if (*p == '[')
			list = p + 1;
	}
	return NULL;
}

/* One "+PATTERN[@OBJECT]" or "-..." rule of @len bytes at @text. */
static int parse_rule(struct fn_filter *f, const char *text, size_t len,
		      char *err, size_t errlen)
{
	struct rule *r = &f->rules[f->nrules];
	char *body, *at;
	int rc;

	if (len < 2 || (text[0] != '+' && text[0] != '-')) {
		snprintf(err, errlen,
			 "rule %zu '%.*s': wants +PATTERN or -PATTERN",
			 f->nrules + 1, (int)len, text);
		return -EINVAL;
	}
	if (f->nrules == MAX_RULES) {
		snprintf(err, errlen, "rule %zu: more than %d rules",
			 f->nrules + 1, MAX_RULES);
		return -EINVAL;
	}
	body = strndup(text + 1, len - 1);
	if (!body)
		return -ENOMEM;
	*r = (struct rule){ .select = text[0] == '+' };
	/* @OBJECT: after the last '@' outside a regex's slashes */
	at = strrchr(body, '@');
	if (at && (body[0] != '/' || at > strrchr(body, '/'))) {
		*at = '\0';
		r->object = at + 1;
	}
	r->pattern = body;
	if (body[0] == '/') {
		size_t n = strlen(body);

		if (n < 2 || body[n - 1] != '/') {
			snprintf(
				err, errlen,
				"rule %zu '%.*s': a regular expression ends with '/'",
				f->nrules + 1, (int)len, text);
			free(body);
			return -EINVAL;
		}
		body[n - 1] = '\0';
		r->pattern = body + 1;
		if (regex_problem(r->pattern)) {
			snprintf(err, errlen, "rule %zu '%.*s': %s",
				 f->nrules + 1, (int)len, text,
				 regex_problem(r->pattern));
			free(body);
			return -EINVAL;
		}
		r->regex = true;
		rc = regcomp(&r->re, r->pattern, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[128];

			regerror(rc, &r->re, why, sizeof(why));
			snprintf(err, errlen, "rule %zu '%.*s': %s",
				 f->nrules + 1, (int)len, text, why);
			free(body);
			return -EINVAL;
		}
	}
	f->any_select = f->any_select || r->select;
	f->nrules++;
	return 0;
}

static void clear_rules(struct fn_filter *f)
{
	for (size_t i = 0; i < f->nrules; i++) {
		struct rule *r = &f->rules[i];

		if (r->regex)
			regfree(&r->re);
		free(r->regex ? r->pattern - 1 : r->pattern);
	}
	f->nrules = 0;
	f->any_select = false;
}

void fn_filter_free(struct fn_filter *f)
{
	if (!f)
		return;
	clear_rules(f);
	free(f);
}

int fn_filter_parse(struct fn_filter *f, const char *spec, size_t len,
		    char *err, size_t errlen)
{
	const char *end = spec + len;
	int ret;

	clear_rules(f);
	while (spec < end) {
		const char *eol = memchr(spec, '\n', (size_t)(end - spec));

		if (!eol)
			eol = end;
		if (eol > spec && memchr(spec, '\0', (size_t)(eol - spec))) {
			snprintf(err, errlen, "rule %zu holds a NUL byte",
				 f->nrules + 1);
			clear_rules(f);
			return -EINVAL;
		}
		if (eol > spec) {
			ret = parse_rule(f, spec, (size_t)(eol - spec), err,
					 errlen);
			if (ret) {
				clear_rules(f);
				return ret;
			}
		}
		spec = eol < end ? eol + 1 : end;
	}
	return 0;
}

bool fn_filter_active(const struct fn_filter *f)
{
	return f->nrules > 0;
}

bool fn_filter_selects(const struct fn_filter *f)
{
	return f->any_select;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool rule_matches(const struct rule *r, const char *name)
{
	if (r->regex)
		return !regexec(&r->re, name, 0, NULL, 0);
	return !fnmatch(r->pattern, name, 0);
}

/* @name as written, demangled, and demangled without its parameters. */
static bool matches(const struct rule *r, const char *name,
		    const char *demangled)
{
	char *paren;
	bool hit;

	if (rule_matches(r, name))
		return true;
	if (!demangled)
		return false;
	if (rule_matches(r, demangled))
		return true;
	paren = strchr(demangled, '(');
	if (!paren || paren == demangled)
		return false;
	*paren = '\0';
	hit = rule_matches(r, demangled);
	*paren = '(';
	return hit;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Which kinds of rule @name in @object matches (FN_FILTER_*): each kind
 * is looked for until one rule of it matches. */
static unsigned int classify(const struct fn_filter *f, const char *name,
			     const char *object)
{
	static demangle_fn demangle;
	static bool looked;
	char *demangled = NULL;
	unsigned int hits = 0;
	int status = -1;

	if (!looked) {
		demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = true;
	}
	if (demangle && name[0] == '_' && name[1] == 'Z')
		demangled = demangle(name, NULL, NULL, &status);
	if (status)
		demangled = NULL; /* (failed: nothing allocated) */
	for (size_t i = 0; i < f->nrules && !(hits & FN_FILTER_LEFT_OUT); i++) {
		const struct rule *r = &f->rules[i];
		unsigned int kind = r->select ? FN_FILTER_SELECTED :
						FN_FILTER_LEFT_OUT;

		if (hits & kind)
			continue;
		if (r->object && fnmatch(r->object, object, 0))
			continue;
		if (matches(r, name, demangled))
			hits |= kind;
	}
	free(demangled);
	return hits;
}

static bool passes(const struct fn_filter *f, const char *name,
		   const char *object)
{
	unsigned int hits = classify(f, name, object);

	return (!f->any_select || (hits & FN_FILTER_SELECTED)) &&
	       !(hits & FN_FILTER_LEFT_OUT);
}

bool fn_filter_match(const struct fn_filter *f, const char *name,
		     const char *path)
{
	return passes(f, name, base_name(path));
}

unsigned int fn_filter_classify(const struct fn_filter *f, const char *name,
				const char *path)
{
	return classify(f, name, base_name(path));
}

struct sym {
	uint64_t value, size;
	const char *name;
};

static int by_value(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->value < y->value ? -1 : x->value > y->value;
}

/* The function symbols of @elf, sorted by address; their count. */
static size_t read_symbols(Elf *elf, struct sym **out)
{
	Elf_Scn *scn = NULL, *best = NULL;
	struct sym *syms = NULL;
	size_t n = 0, count;
	GElf_Shdr sh, best_sh = { 0 };
	Elf_Data *data;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		/* the full table if there is one, else the dynamic one */
		if (sh.sh_type == SHT_SYMTAB ||
		    (sh.sh_type == SHT_DYNSYM && !best)) {
			best = scn;
			best_sh = sh;
		}
	}
	if (!best || !best_sh.sh_entsize)
		return 0;
	data = elf_getdata(best, NULL);
	count = best_sh.sh_size / best_sh.sh_entsize;
	syms = calloc(count ? count : 1, sizeof(*syms));
	if (!data || !syms) {
		free(syms);
		return 0;
	}
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(data, (int)i, &s) ||
		    GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
			continue;
		name = elf_strptr(elf, best_sh.sh_link, s.st_name);
		if (name && *name)
			syms[n++] = (struct sym){ s.st_value, s.st_size, name };
	}
	qsort(syms, n, sizeof(*syms), by_value);
	*out = syms;
	return n;
}

/* The symbol whose function holds link address @a, or NULL. */
static const struct sym *symbol_at(const struct sym *s, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s += lo - 1;
	return a < s->value + (s->size ? s->size : 1) ? s : NULL;
}

int fn_filter_select(const struct fn_filter *f, const char *path,
		     uintptr_t bias, const struct xray_instr_map *map,
		     uint8_t **selected)
{
	uint8_t *sel = calloc(map->nfunctions ? map->nfunctions : 1, 1);
	const char *object = base_name(path);
	struct sym *syms = NULL;
	size_t nsyms = 0;
	Elf *elf = NULL;
	int fd;

	if (!sel)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && elf_version(EV_CURRENT) != EV_NONE)
		elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		nsyms = read_symbols(elf, &syms);
	for (size_t i = 0; i < map->nfunctions; i++) {
		const struct sym *s = symbol_at(
			syms, nsyms, map->functions[i].address - bias);

		sel[i] = passes(f, s ? s->name : "", object);
	}
	free(syms);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	*selected = sel;
	return 0;
}
