// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "xrayfdr.h"

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
