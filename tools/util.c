// SPDX-License-Identifier: GPL-2.0-only
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/filter/filter.h"
#include "xrayfdr.h"

void tool_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xrayfdr %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

void print_escaped(FILE *out, const void *data, size_t len, size_t max)
{
	const unsigned char *p = data;
	size_t n = len < max ? len : max;

	fputc('"', out);
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"' || p[i] == '\\')
			fprintf(out, "\\%c", p[i]);
		else if (p[i] >= 0x20 && p[i] < 0x7f)
			fputc(p[i], out);
		else
			fprintf(out, "\\x%02x", p[i]);
	}
	fputc('"', out);
	if (n < len)
		fprintf(out, "...(%zu more bytes)", len - n);
}

void print_hex(FILE *out, const void *data, size_t len)
{
	const unsigned char *p = data;

	fputc('"', out);
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%02x", p[i]);
	fputc('"', out);
}

const char *option_name(const struct option *opts, int val)
{
	for (; opts->name; opts++)
		if (opts->val == val)
			return opts->name;
	return "?";
}

bool filter_add_rule(const char *cmd, char **filter, char sign,
		     const char *pattern)
{
	size_t n = strlen(pattern), old = *filter ? strlen(*filter) : 0;
	char line[PATH_MAX + 2], err[512];
	struct fn_filter *check;
	char *f;
	int ret;

	if (!n || strchr(pattern, '\n') || n > PATH_MAX) {
		tool_error(cmd, "-%c: '%s' is not a pattern",
			   sign == '+' ? 'F' : 'N', pattern);
		return false;
	}
	/* the runtime's own parser, so that what it would refuse is
	 * refused here */
	n = (size_t)snprintf(line, sizeof(line), "%c%s", sign, pattern);
	check = fn_filter_new();
	if (!check) {
		tool_error(cmd, "out of memory");
		return false;
	}
	ret = fn_filter_parse(check, line, n, err, sizeof(err));
	fn_filter_free(check);
	if (ret == -ENOMEM) {
		tool_error(cmd, "out of memory");
		return false;
	}
	if (ret) {
		tool_error(cmd, "-%c '%s': %s", sign == '+' ? 'F' : 'N',
			   pattern,
			   strchr(err, ':') ? strchr(err, ':') + 2 : err);
		return false;
	}
	f = realloc(*filter, old + n + 2);
	if (!f) {
		tool_error(cmd, "out of memory");
		return false;
	}
	snprintf(f + old, n + 2, "%s\n", line);
	*filter = f;
	return true;
}

int parse_time_ns(const char *text, uint64_t default_unit, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t scale;
	} units[] = { { "ns", 1 },	     { "us", 1000 },
		      { "ms", 1000000 },     { "s", 1000000000 },
		      { "sec", 1000000000 }, { "m", 60000000000 },
		      { "min", 60000000000 } };
	uint64_t scale = default_unit;
	char *end;
	double v;

	if (!*text || *text == '-' || *text == '+' || isspace(*text))
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || !(v >= 0))
		return -EINVAL;
	if (*end) {
		scale = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].unit))
				scale = units[i].scale;
	}
	if (!scale || v * (double)scale >= 1.8e19)
		return -EINVAL;
	*ns = (uint64_t)(v * (double)scale + 0.5);
	return 0;
}

/* The arguments rewritten, reachable from here for as long as argv is. */
static char **rewritten;
static size_t nrewritten;

/* "-" @a with its name replaced by @name, kept for as long as argv. */
static char *long_form(const char *name, const char *a)
{
	const char *rest = a + 1 + strcspn(a + 1, "=");
	char **r = realloc(rewritten, (nrewritten + 1) * sizeof(*r));
	char *b = malloc(strlen(name) + strlen(rest) + 3);

	if (r)
		rewritten = r;
	if (!r || !b) {
		free(b);
		return NULL;
	}
	sprintf(b, "--%s%s", name, rest);
	rewritten[nrewritten++] = b;
	return b;
}

int llvm_style_options(const char *cmd, int argc, char **argv,
		       const struct option *longopts)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct option *o;
		size_t len;

		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || a[1] == '-' || !a[1] || !a[2])
			continue;
		len = strcspn(a + 1, "=");
		for (o = longopts; o->name; o++) {
			/* "-xy" may be two short options: only a long name
			 * counts; and "-f=yaml" is -f's long option */
			if (len == 1 ? o->val == a[1] && o->has_arg :
				       strlen(o->name) == len &&
					       !strncmp(o->name, a + 1, len))
				break;
		}
		if (!o->name)
			continue;
		argv[i] = long_form(o->name, a);
		if (!argv[i]) {
			tool_error(cmd, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}
