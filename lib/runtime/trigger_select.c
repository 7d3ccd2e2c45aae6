// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Triggers as the options give them, and the functions they name
 * (trigger.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../filter/filter.h"
#include "options.h"
#include "trigger.h"

static struct rt_trig_spec specs[RT_TRIG_MAX];
static size_t nspecs;
static struct fn_filter *rules[RT_TRIG_MAX];

/* "USR2", "SIGUSR2", "RTMIN+3" or a number. */
static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = { { "HUP", SIGHUP },       { "INT", SIGINT },
		      { "QUIT", SIGQUIT },     { "USR1", SIGUSR1 },
		      { "USR2", SIGUSR2 },     { "ALRM", SIGALRM },
		      { "TERM", SIGTERM },     { "CONT", SIGCONT },
		      { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN },
		      { "TTOU", SIGTTOU },     { "URG", SIGURG },
		      { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
		      { "WINCH", SIGWINCH },   { "IO", SIGIO },
		      { "PWR", SIGPWR } };
	char *end;
	long n;

	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].sig;
	if (!strncasecmp(s, "RTMIN", 5)) {
		n = s[5] == '+' ? strtol(s + 6, &end, 10) : 0;
		if ((s[5] && (s[5] != '+' || *end)) || n < 0 ||
		    SIGRTMIN + n > SIGRTMAX)
			return -EINVAL;
		return SIGRTMIN + (int)n;
	}
	n = strtol(s, &end, 10);
	if (*s && !*end && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP)
		return (int)n;
	return -EINVAL;
}

static int spec_error(char *err, size_t errlen, const char *line, size_t len,
		      const char *why)
{
	snprintf(err, errlen, "trigger=%.*s: %s", (int)len, line, why);
	return -EINVAL;
}

static int parse_one(const char *line, size_t len, char *err, size_t errlen)
{
	struct rt_trig_spec *sp = &specs[nspecs];
	const char *gt;
	char rule[sizeof(sp->pattern) + 2];
	int sig;

	if (nspecs == RT_TRIG_MAX)
		return spec_error(err, errlen, line, len,
				  "more than 8 triggers");
	if (len >= sizeof(sp->text))
		return spec_error(err, errlen, line, len, "too long");
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->text, line, len);
	if (!strncmp(sp->text, "signal=", 7)) {
		sig = parse_signal(sp->text + 7);
		if (sig < 0 || sig == SIGKILL || sig == SIGSTOP)
			return spec_error(err, errlen, line, len,
					  "not a signal a process can catch");
		sp->kind = RT_TRIG_SIGNAL;
		sp->signal = sig;
		nspecs++;
		return 0;
	}
	gt = strrchr(sp->text, '>');
	if (!gt || gt == sp->text)
		return spec_error(
			err, errlen, line, len,
			"wants FUNCTION>DURATION (slow>1ms) or signal=SIG");
	if (rt_parse_duration(gt + 1, strlen(gt + 1), &sp->ns) || !sp->ns)
		return spec_error(
			err, errlen, line, len,
			"the duration is a number with ns, us, ms or s, above 0");
	memcpy(sp->pattern, sp->text, (size_t)(gt - sp->text));
	sp->kind = RT_TRIG_DURATION;
	rules[nspecs] = fn_filter_new();
	if (!rules[nspecs])
		return -ENOMEM;
	snprintf(rule, sizeof(rule), "+%s", sp->pattern);
	if (fn_filter_parse(rules[nspecs], rule, strlen(rule), err, errlen)) {
		fn_filter_free(rules[nspecs]);
		rules[nspecs] = NULL;
		return -EINVAL;
	}
	nspecs++;
	return 0;
}

int rt_trig_parse(const char *text, char *err, size_t errlen)
{
	for (size_t i = 0; i < nspecs; i++)
		fn_filter_free(rules[i]);
	memset(rules, 0, sizeof(rules));
	nspecs = 0;
	for (const char *s = text; s && *s;) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		int ret = len ? parse_one(s, len, err, errlen) : 0;

		if (ret)
			return ret;
		s = eol ? eol + 1 : NULL;
	}
	return 0;
}

size_t rt_trig_count(void)
{
	return nspecs;
}

const struct rt_trig_spec *rt_trig_spec(size_t i)
{
	return i < nspecs ? &specs[i] : NULL;
}

bool rt_trig_durations(void)
{
	for (size_t i = 0; i < nspecs; i++)
		if (specs[i].kind == RT_TRIG_DURATION)
			return true;
	return false;
}

static uint64_t ns_to_cycles(uint64_t ns, uint64_t hz)
{
	unsigned __int128 c = (unsigned __int128)ns * (hz ? hz : 1000000000);

	c /= 1000000000u;
	return c > UINT64_MAX ? UINT64_MAX : (uint64_t)c;
}

void rt_trig_arm(uint64_t hz)
{
	uint64_t min = UINT64_MAX;

	for (size_t i = 0; i < nspecs; i++) {
		if (specs[i].kind != RT_TRIG_DURATION)
			continue;
		rt_trig_cycles[i] = ns_to_cycles(specs[i].ns, hz);
		if (rt_trig_cycles[i] < min)
			min = rt_trig_cycles[i];
	}
	__atomic_store_n(&rt_trig_min_cycles, min, __ATOMIC_RELEASE);
}

int rt_trig_select(size_t index, const char *path, uintptr_t bias,
		   const struct xray_instr_map *map)
{
	uint8_t *fn = NULL;
	int marked = 0;

	if (index >= RT_TRIG_OBJECTS || !map->nfunctions)
		return 0;
	for (size_t i = 0; i < nspecs; i++) {
		uint8_t *sel;

		if (specs[i].kind != RT_TRIG_DURATION)
			continue;
		if (fn_filter_select(rules[i], path, bias, map, &sel)) {
			free(fn);
			return -ENOMEM;
		}
		for (size_t f = 0; f < map->nfunctions; f++) {
			if (!sel[f])
				continue;
			if (!fn) {
				fn = calloc(map->nfunctions, 1);
				if (!fn) {
					free(sel);
					return -ENOMEM;
				}
			}
			/* the first trigger naming it is its own */
			if (!fn[f]) {
				fn[f] = (uint8_t)(i + 1);
				marked++;
			}
		}
		free(sel);
	}
	rt_trig_forget(index);
	if (fn) {
		rt_trig_nfn[index] = (uint32_t)map->nfunctions;
		__atomic_store_n(&rt_trig_fn[index], fn, __ATOMIC_RELEASE);
	}
	return marked;
}

bool rt_trig_marked(size_t index, uint32_t f)
{
	return index < RT_TRIG_OBJECTS && rt_trig_fn[index] && f &&
	       f <= rt_trig_nfn[index] && rt_trig_fn[index][f - 1];
}

void rt_trig_forget(size_t index)
{
	uint8_t *old;

	if (index >= RT_TRIG_OBJECTS)
		return;
	old = __atomic_exchange_n(&rt_trig_fn[index], NULL, __ATOMIC_ACQ_REL);
	/* (kept: an exit in flight may still read it; an object's marks
	 * change only when it is loaded again) */
	(void)old;
}
