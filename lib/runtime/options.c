// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runtime options: LLVM's flag syntax and names, plus our own. */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "options.h"

enum opt_type {
	OPT_BOOL,
	OPT_UINT,
	OPT_SIZE, /* an integer with an optional K, M or G suffix */
	OPT_STR,
	OPT_VERSION,
	OPT_FORK,
	OPT_RECMODE, /* auto, thread or cpu */
	OPT_SOURCES,
	OPT_DURATION, /* a number with ns, us, ms or s, into ns */
	OPT_LINES, /* each value one more line (trigger=) */
	OPT_IGNORED, /* LLVM names with no meaning here */
};

/* Which variables accept a name. */
#define IN_XRAY (1u << RT_OPT_XRAY)
#define IN_FDR (1u << RT_OPT_FDR)
#define IN_OURS (1u << RT_OPT_OURS)
#define IN_BASIC (1u << RT_OPT_BASIC)

struct opt_def {
	const char *name;
	enum opt_type type;
	size_t offset;
	size_t size; /* OPT_STR: buffer size */
	uint64_t min, max;
	unsigned int in;
};

#define FIELD(f) \
	offsetof(struct rt_options, f), sizeof(((struct rt_options *)0)->f)

static const struct opt_def defs[] = {
	{ "patch_premain", OPT_BOOL, FIELD(patch_premain), 0, 1,
	  IN_XRAY | IN_OURS },
	{ "xray_mode", OPT_STR, FIELD(mode), 0, 0, IN_XRAY | IN_OURS },
	{ "xray_logfile_base", OPT_STR, FIELD(logfile_base), 0, 0,
	  IN_XRAY | IN_OURS },
	{ "verbosity", OPT_UINT, FIELD(verbosity), 0, 9, IN_XRAY | IN_OURS },
	{ "xray_fdr_log_func_duration_threshold_us", OPT_UINT,
	  FIELD(threshold_us), 0, 60000000, IN_XRAY },
	{ "xray_fdr_log_grace_period_ms", OPT_UINT, FIELD(grace_period_ms), 0,
	  60000, IN_XRAY },
	{ "xray_fdr_log", OPT_IGNORED, 0, 0, 0, 0, IN_XRAY },
	{ "xray_naive_log", OPT_BOOL, FIELD(naive_log), 0, 1, IN_XRAY },
	{ "xray_naive_log_func_duration_threshold_us", OPT_UINT,
	  FIELD(naive_threshold_us), 0, 60000000, IN_XRAY },
	{ "xray_naive_log_max_stack_depth", OPT_UINT, FIELD(naive_max_depth), 0,
	  1u << 20, IN_XRAY },
	{ "xray_naive_log_thread_buffer_size", OPT_UINT, FIELD(naive_buffer), 2,
	  1u << 24, IN_XRAY },
	{ "func_duration_threshold_us", OPT_UINT, FIELD(basic_threshold_us), 0,
	  60000000, IN_BASIC },
	{ "max_stack_depth", OPT_UINT, FIELD(basic_max_depth), 0, 1u << 20,
	  IN_BASIC },
	{ "thread_buffer_size", OPT_UINT, FIELD(basic_buffer), 2, 1u << 24,
	  IN_BASIC },
	{ "func_duration_threshold_us", OPT_UINT, FIELD(threshold_us), 0,
	  60000000, IN_FDR | IN_OURS },
	{ "grace_period_ms", OPT_UINT, FIELD(grace_period_ms), 0, 60000,
	  IN_FDR | IN_OURS },
	{ "buffer_size", OPT_SIZE, FIELD(buffer_size), RT_MIN_BUFFER_SIZE,
	  RT_MAX_BUFFER_SIZE, IN_FDR | IN_OURS },
	{ "buffer_max", OPT_SIZE, FIELD(buffer_max), 1, RT_MAX_BUFFER_MAX,
	  IN_FDR | IN_OURS },
	{ "no_file_flush", OPT_BOOL, FIELD(no_file_flush), 0, 1,
	  IN_FDR | IN_OURS },
	{ "max_depth", OPT_UINT, FIELD(max_depth), 0, UINT32_MAX, IN_OURS },
	{ "output", OPT_STR, FIELD(output), 0, 0, IN_OURS },
	{ "output_pid", OPT_UINT, FIELD(output_pid), 1, INT32_MAX, IN_OURS },
	{ "version", OPT_VERSION, FIELD(version), 0, 0, IN_OURS },
	{ "signals", OPT_BOOL, FIELD(signals), 0, 1, IN_OURS },
	{ "fork", OPT_FORK, FIELD(fork), 0, 0, IN_OURS },
	{ "mode", OPT_RECMODE, FIELD(record_mode), 0, 0, IN_OURS },
	{ "device", OPT_STR, FIELD(device), 0, 0, IN_OURS },
	{ "discard", OPT_BOOL, FIELD(discard), 0, 1, IN_OURS },
	{ "keep", OPT_BOOL, FIELD(keep), 0, 1, IN_OURS },
	{ "stream", OPT_BOOL, FIELD(stream), 0, 1, IN_OURS },
	{ "control", OPT_BOOL, FIELD(control), 0, 1, IN_OURS },
	{ "tsc_sysfs", OPT_STR, FIELD(tsc_sysfs), 0, 0, IN_OURS },
	{ "tsc_sources", OPT_SOURCES, FIELD(tsc_sources), 0, 0, IN_OURS },
	{ "tsc_hz", OPT_UINT, FIELD(tsc_hz), 0, 100000000000ull, IN_OURS },
	{ "trigger", OPT_LINES, FIELD(triggers), 0, 0, IN_OURS },
	{ "post", OPT_DURATION, FIELD(post_ns), 0, 3600000000000ull, IN_OURS },
	{ "max_snapshots", OPT_UINT, FIELD(max_snapshots), 0, UINT32_MAX,
	  IN_OURS },
	{ "snapshot_interval", OPT_DURATION, FIELD(snapshot_interval_ns), 0,
	  86400000000000ull, IN_OURS },
	{ "snapshot_dir", OPT_STR, FIELD(snapshot_dir), 0, 0, IN_OURS },
};

void rt_options_defaults(struct rt_options *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->mode, sizeof(o->mode), "xray-fdr");
	snprintf(o->logfile_base, sizeof(o->logfile_base), "xray-log.");
	o->buffer_size = RT_DEFAULT_BUFFER_SIZE;
	o->buffer_max = RT_DEFAULT_BUFFER_MAX;
	o->version = 5;
	o->verbosity = 1;
	o->control = true;
	o->signals = true;
	o->fork = RT_FORK_CLEAN;
	snprintf(o->tsc_sysfs, sizeof(o->tsc_sysfs), "/sys/kernel/xrayfdr");
	snprintf(o->device, sizeof(o->device), "/dev/xrayfdr");
	o->tsc_sources = RT_TSC_ALL;
	/* LLVM's basic-mode defaults */
	o->basic_threshold_us = o->naive_threshold_us = 5;
	o->basic_max_depth = o->naive_max_depth = 64;
	o->basic_buffer = o->naive_buffer = 1024;
}

static int bad(char *err, size_t errlen, const char *name, const char *key,
	       size_t keylen, const char *val, size_t vallen, const char *why)
{
	snprintf(err, errlen, "%s: %.*s=%.*s: %s", name, (int)keylen, key,
		 (int)vallen, val, why);
	return -EINVAL;
}

static bool word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !strncmp(s, word, n);
}

static int parse_bool(const char *s, size_t n, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (word_is(s, n, yes[i])) {
			*out = true;
			return 0;
		}
		if (word_is(s, n, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_number(const char *s, size_t n, bool suffix, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	unsigned int shift = 0;

	if (!n)
		return -EINVAL;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i)
		return -EINVAL;
	if (i < n && suffix) {
		switch (s[i]) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			return -EINVAL;
		}
		i++;
	}
	if (i != n)
		return -EINVAL;
	if (shift && v > UINT64_MAX >> shift)
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int rt_parse_duration(const char *s, size_t len, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "ns", 1 },
		      { "us", 1000 },
		      { "ms", 1000000 },
		      { "s", 1000000000 } };
	uint64_t v = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (!i)
		return -EINVAL;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		if (len - i == strlen(units[u].unit) &&
		    !strncmp(s + i, units[u].unit, len - i)) {
			if (v > UINT64_MAX / units[u].ns)
				return -EINVAL;
			*ns = v * units[u].ns;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_sources(const char *s, size_t n, unsigned int *out)
{
	static const struct {
		const char *name;
		unsigned int bit;
	} names[] = { { "sysfs", RT_TSC_SYSFS },
		      { "perf", RT_TSC_PERF },
		      { "cpuid", RT_TSC_CPUID },
		      { "calibrate", RT_TSC_CALIBRATE } };
	unsigned int mask = 0;
	size_t i = 0;

	/* a '+'-separated list, since ',' separates options */
	while (i < n) {
		size_t j = i;
		bool found = false;

		while (j < n && s[j] != '+')
			j++;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			if (word_is(s + i, j - i, names[k].name)) {
				mask |= names[k].bit;
				found = true;
			}
		}
		if (!found)
			return -EINVAL;
		i = j + 1;
	}
	if (!mask)
		return -EINVAL;
	*out = mask;
	return 0;
}

static int apply(struct rt_options *o, const struct opt_def *d, const char *v,
		 size_t n, const char *name, char *err, size_t errlen)
{
	char *field = (char *)o + d->offset;
	size_t klen = strlen(d->name);
	uint64_t num;
	bool b;
	int ret;

	switch (d->type) {
	case OPT_BOOL:
		if (parse_bool(v, n, &b))
			return bad(err, errlen, name, d->name, klen, v, n,
				   "expected true or false");
		*(bool *)field = b;
		if (d->offset == offsetof(struct rt_options, patch_premain))
			o->premain_set = true;
		return 0;
	case OPT_UINT:
	case OPT_SIZE:
		ret = parse_number(v, n, d->type == OPT_SIZE, &num);
		if (ret || num < d->min || num > d->max) {
			char why[96];

			snprintf(why, sizeof(why),
				 "expected %s from %llu to %llu",
				 d->type == OPT_SIZE ?
					 "a size (suffixes K, M, G)" :
					 "a whole number",
				 (unsigned long long)d->min,
				 (unsigned long long)d->max);
			return bad(err, errlen, name, d->name, klen, v, n, why);
		}
		if (d->offset == offsetof(struct rt_options, buffer_max))
			o->buffer_max_set = true;
		if (d->size == sizeof(uint64_t))
			*(uint64_t *)field = num;
		else
			*(unsigned int *)field = (unsigned int)num;
		return 0;
	case OPT_STR:
		if (n >= d->size)
			return bad(err, errlen, name, d->name, klen, v, n,
				   "too long");
		memcpy(field, v, n);
		field[n] = '\0';
		if (d->offset == offsetof(struct rt_options, mode))
			o->mode_set = true;
		return 0;
	case OPT_VERSION:
		if (parse_number(v, n, false, &num) || (num != 1 && num != 5))
			return bad(err, errlen, name, d->name, klen, v, n,
				   "the FDR version written is 5 or 1");
		o->version = (unsigned int)num;
		return 0;
	case OPT_FORK:
		if (word_is(v, n, "clean"))
			o->fork = RT_FORK_CLEAN;
		else if (word_is(v, n, "off"))
			o->fork = RT_FORK_OFF;
		else
			return bad(err, errlen, name, d->name, klen, v, n,
				   "expected clean or off");
		return 0;
	case OPT_RECMODE:
		if (word_is(v, n, "auto"))
			o->record_mode = RT_MODE_AUTO;
		else if (word_is(v, n, "thread"))
			o->record_mode = RT_MODE_THREAD;
		else if (word_is(v, n, "cpu"))
			o->record_mode = RT_MODE_CPU;
		else
			return bad(err, errlen, name, d->name, klen, v, n,
				   "expected auto, thread or cpu");
		return 0;
	case OPT_SOURCES:
		if (parse_sources(v, n, &o->tsc_sources))
			return bad(
				err, errlen, name, d->name, klen, v, n,
				"expected sources from sysfs+perf+cpuid+calibrate");
		return 0;
	case OPT_DURATION:
		if (rt_parse_duration(v, n, &num) || num > d->max)
			return bad(
				err, errlen, name, d->name, klen, v, n,
				"expected a duration: a number with ns, us, ms or s");
		*(uint64_t *)field = num;
		return 0;
	case OPT_LINES: {
		size_t used = strlen(field);

		if (memchr(v, '\n', n) || used + n + 2 > d->size)
			return bad(err, errlen, name, d->name, klen, v, n,
				   memchr(v, '\n', n) ? "a newline in it" :
							"too many or too long");
		if (used)
			field[used++] = '\n';
		memcpy(field + used, v, n);
		field[used + n] = '\0';
		return 0;
	}
	case OPT_IGNORED:
		return 0;
	}
	return 0;
}

static bool is_separator(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ',' || c == ':';
}

int rt_options_parse(struct rt_options *o, const char *text, size_t len,
		     enum rt_opt_origin origin, const char *name, char *err,
		     size_t errlen)
{
	unsigned int accept = origin == RT_OPT_CONFIG ? IN_FDR | IN_OURS :
							1u << origin;
	size_t i = 0;

	if (!text)
		return 0;
	if (!len)
		len = strlen(text);
	while (i < len) {
		const char *key, *val;
		size_t klen, vlen;
		const struct opt_def *d = NULL;

		while (i < len && is_separator(text[i]))
			i++;
		if (i >= len)
			break;
		key = text + i;
		while (i < len && text[i] != '=' && !is_separator(text[i]))
			i++;
		klen = (size_t)(text + i - key);
		if (i >= len || text[i] != '=') {
			snprintf(err, errlen,
				 "%s: '%.*s' is not of the form name=value",
				 name, (int)klen, key);
			return -EINVAL;
		}
		i++;
		if (i < len && (text[i] == '\'' || text[i] == '"')) {
			char quote = text[i++];

			val = text + i;
			while (i < len && text[i] != quote)
				i++;
			if (i >= len) {
				snprintf(err, errlen,
					 "%s: %.*s: unterminated quoted value",
					 name, (int)klen, key);
				return -EINVAL;
			}
			vlen = (size_t)(text + i - val);
			i++;
		} else {
			val = text + i;
			while (i < len && !is_separator(text[i]))
				i++;
			vlen = (size_t)(text + i - val);
		}

		for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++)
			if (word_is(key, klen, defs[k].name) &&
			    defs[k].in & accept)
				d = &defs[k];
		if (!d && origin == RT_OPT_OURS) {
			snprintf(err, errlen, "%s: unknown option '%.*s'", name,
				 (int)klen, key);
			return -EINVAL;
		}
		if (!d) {
			pr_warn("%s: ignoring '%.*s', which libxrayfdr does not implement\n",
				name, (int)klen, key);
			continue;
		}
		if (apply(o, d, val, vlen, name, err, errlen))
			return -EINVAL;
	}
	return 0;
}

int rt_options_from_env(struct rt_options *o, char *err, size_t errlen)
{
	static const struct {
		const char *var;
		enum rt_opt_origin origin;
	} vars[] = { { "XRAY_OPTIONS", RT_OPT_XRAY },
		     { "XRAY_FDR_OPTIONS", RT_OPT_FDR },
		     { "XRAY_BASIC_OPTIONS", RT_OPT_BASIC },
		     { "XRAYFDR_OPTIONS", RT_OPT_OURS } };
	const char *ours = getenv("XRAYFDR_OPTIONS");

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int ret = rt_options_parse(o, getenv(vars[i].var), 0,
					   vars[i].origin, vars[i].var, err,
					   errlen);

		if (ret)
			return ret;
	}
	o->ours_set = ours;
	if (ours && !o->premain_set)
		o->patch_premain = true;
	o->basic_env = getenv("XRAY_BASIC_OPTIONS") &&
		       *getenv("XRAY_BASIC_OPTIONS");
	if (strcmp(o->mode, "xray-fdr") && strcmp(o->mode, "xrayfdr") &&
	    strcmp(o->mode, "xray-basic") && o->patch_premain) {
		snprintf(
			err, errlen,
			"XRAY_OPTIONS: xray_mode=%s: libxrayfdr records xray-fdr and xray-basic modes",
			o->mode);
		return -EINVAL;
	}
	return 0;
}

bool rt_options_trace_at_start(const struct rt_options *o)
{
	return o->patch_premain && (o->ours_set || o->mode_set);
}

bool rt_options_patch_only(const struct rt_options *o)
{
	return o->patch_premain && !o->ours_set && !o->mode_set;
}
