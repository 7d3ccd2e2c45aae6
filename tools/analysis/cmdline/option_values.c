// SPDX-License-Identifier: GPL-2.0-only
/* Values of command-line options (see option_values.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "option_values.h"

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
