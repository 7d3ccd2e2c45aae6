// SPDX-License-Identifier: GPL-2.0-only
/* The events an analysis looks at; see evfilter.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evfilter.h"
#include "../cmdline/report.h"

/* A thread's open calls of functions the rules match. */
struct filter_thread {
	uint32_t selected; /* by a "+" rule */
	uint32_t left_out; /* by a "-" rule */
};

int event_filter_init(struct event_filter *f, const struct event_filter_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->o = *o;
	f->active = o->ntids || o->range.set || o->filter;
	if (o->ntids) {
		f->tid_seen = calloc(o->ntids, sizeof(*f->tid_seen));
		if (!f->tid_seen) {
			tool_error(o->cmd, "out of memory");
			return -ENOMEM;
		}
	}
	if (o->filter) {
		char err[512];

		if (!o->names) {
			tool_error(o->cmd, "function filters need names");
			free(f->tid_seen);
			return -EINVAL;
		}
		f->rules = fn_filter_new();
		if (!f->rules) {
			tool_error(o->cmd, "out of memory");
			free(f->tid_seen);
			return -ENOMEM;
		}
		if (fn_filter_parse(f->rules, o->filter, strlen(o->filter), err,
				    sizeof(err))) {
			tool_error(o->cmd, "%s", err);
			fn_filter_free(f->rules);
			f->rules = NULL;
			free(f->tid_seen);
			return -EINVAL;
		}
		func_filter_init(&f->funcs, f->rules, o->names, o->map_path);
		f->selects = fn_filter_selects(f->rules);
	}
	return 0;
}

void event_filter_input(struct event_filter *f, const char *path, double freq)
{
	f->path = path;
	f->freq = freq;
	f->seen_event = false;
}

void event_filter_free(struct event_filter *f)
{
	func_filter_free(&f->funcs);
	fn_filter_free(f->rules);
	u64map_free_values(&f->threads);
	free(f->tid_seen);
}

static bool tid_wanted(struct event_filter *f, uint32_t tid)
{
	if (!f->o.ntids)
		return true;
	for (size_t i = 0; i < f->o.ntids; i++)
		if (f->o.tids[i] == tid) {
			f->tid_seen[i] = true;
			return true;
		}
	return false;
}

bool event_filter_unseen_tid(const struct event_filter *f, uint32_t *tid)
{
	for (size_t i = 0; i < f->o.ntids; i++)
		if (!f->tid_seen[i]) {
			*tid = f->o.tids[i];
			return true;
		}
	return false;
}

/* The range in TSC ticks once the first event is known: 0 or -EINVAL. */
static int range_ticks(struct event_filter *f, uint64_t first_tsc)
{
	const struct replay_range *rg = &f->o.range;
	double ticks_per_ns = f->freq / 1e9;

	if (!rg->relative) {
		f->from = rg->from;
		f->to = rg->to;
		return 0;
	}
	if (!f->freq) {
		tool_error(
			f->o.cmd,
			"%s: --time-range: the trace does not say its TSC frequency; give the range in TSC values (no unit)",
			f->path);
		return -EINVAL;
	}
	f->from = first_tsc + (uint64_t)((double)rg->from * ticks_per_ns);
	f->to = rg->to == UINT64_MAX ?
			UINT64_MAX :
			first_tsc + (uint64_t)((double)rg->to * ticks_per_ns);
	return 0;
}

/* Whether the function filters keep @ev (1, 0) or negative errno. */
static int funcs_wanted(struct event_filter *f, const struct xrayfdr_event *ev)
{
	uint64_t key = f->o.by_tid ? ev->tid : thread_key(ev->pid, ev->tid);
	struct filter_thread *ft;
	bool entry;
	int c;

	if (ev->kind > XRAYFDR_EV_ENTRY_ARGS)
		return 1;
	ft = u64map_get(&f->threads, key);
	if (!ft) {
		ft = calloc(1, sizeof(*ft));
		if (!ft || u64map_put(&f->threads, key, ft)) {
			free(ft);
			return -ENOMEM;
		}
	}
	c = func_filter_classify(&f->funcs, ev->func_id);
	if (c < 0)
		return c;
	entry = ev->kind == XRAYFDR_EV_ENTRY ||
		ev->kind == XRAYFDR_EV_ENTRY_ARGS;
	if (c & FN_FILTER_LEFT_OUT) {
		if (entry)
			ft->left_out++;
		else if (ft->left_out)
			ft->left_out--;
		return 0;
	}
	if (ft->left_out)
		return 0;
	if (entry) {
		ft->selected += !!(c & FN_FILTER_SELECTED);
		return !f->selects || ft->selected;
	}
	if (!f->selects || !ft->selected)
		return !f->selects;
	ft->selected -= !!(c & FN_FILTER_SELECTED);
	return 1;
}

int event_filter_check(struct event_filter *f, const struct xrayfdr_event *ev)
{
	int ret;

	if (!f->seen_event) {
		f->seen_event = true;
		if (f->o.range.set && range_ticks(f, ev->tsc))
			return -EINVAL;
	}
	if (!tid_wanted(f, ev->tid))
		return 0;
	/* the function filters follow every call of the thread, in range
	 * or not */
	if (f->o.filter && (ret = funcs_wanted(f, ev)) <= 0)
		return ret;
	return !f->o.range.set || (ev->tsc >= f->from && ev->tsc <= f->to);
}
