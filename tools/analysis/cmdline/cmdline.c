// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "../engine/funcfilter.h"
#include "../input/log_objects.h"
#include "../input/symbols.h"
#include "option_values.h"
#include "report.h"

static int parse_tids(const char *arg, uint32_t **tids, size_t *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t tid;
		uint32_t *p;

		if (parse_uint(tok, 0, UINT32_MAX, &tid)) {
			ret = -EINVAL;
			break;
		}
		p = realloc(*tids, (*n + 1) * sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		*tids = p;
		p[(*n)++] = (uint32_t)tid;
	}
	free(copy);
	return ret || *n ? ret : -EINVAL;
}

/* One end of --time-range: with a unit, relative; else a TSC value. */
static int parse_range_end(const char *s, size_t len, bool *relative,
			   uint64_t *out)
{
	char buf[64];
	size_t digits = strspn(s, "0123456789");

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (digits == len)
		return parse_uint(buf, 0, UINT64_MAX, out);
	*relative = true;
	return parse_time_ns(buf, 0, out);
}

static int parse_time_range(const char *arg, struct replay_range *r)
{
	const char *comma = strchr(arg, ',');
	bool rel_from = false, rel_to = false;
	size_t flen;

	if (!comma)
		return -EINVAL;
	flen = (size_t)(comma - arg);
	r->from = 0;
	r->to = UINT64_MAX;
	if (flen && parse_range_end(arg, flen, &rel_from, &r->from))
		return -EINVAL;
	if (comma[1] &&
	    parse_range_end(comma + 1, strlen(comma + 1), &rel_to, &r->to))
		return -EINVAL;
	/* both ends in the same terms (an empty end takes the other's) */
	if ((flen && comma[1] && rel_from != rel_to) || r->from > r->to)
		return -EINVAL;
	r->relative = rel_from || rel_to;
	r->set = true;
	return 0;
}

void analysis_opts_init(struct analysis_opts *o, const char *cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->sort_memory = DEFAULT_SORT_MEMORY;
	o->in.cmd = cmd;
}

void analysis_opts_free(struct analysis_opts *o)
{
	free(o->tids);
	o->tids = NULL;
	o->ntids = 0;
	free(o->filter);
	o->filter = NULL;
	free(o->log_map);
	o->log_map = NULL;
	for (unsigned int i = 0; i < LOG_OBJECTS_MAX; i++) {
		free(o->log_objects[i]);
		o->log_objects[i] = NULL;
	}
}

/* Without -m: the log's program, if it is still the one recorded. */
static void map_from_log(struct analysis_opts *o, const char *log_path,
			 const struct log_objects *lo)
{
	const struct log_object *prog = NULL;
	char id[BUILD_ID_MAX];

	for (unsigned int i = 0; i < lo->n && !prog; i++)
		if (lo->obj[i].index == 0)
			prog = &lo->obj[i];
	if (!prog || access(prog->path, R_OK))
		return; /* elsewhere now: functions stay numbers */
	if (elf_build_id(prog->path, id) < 0)
		return;
	if (!prog->build_id[0] || !id[0]) {
		if (!o->in.quiet)
			tool_error(
				o->cmd,
				"%s: warning: names from %s, which has no build id to show it is the binary the log was recorded from",
				log_path, prog->path);
	} else if (strcmp(id, prog->build_id)) {
		tool_error(
			o->cmd,
			"%s: warning: %s has changed since the log was recorded (build id %s, the log's %s): functions stay numbers; -m BINARY names them",
			log_path, prog->path, id, prog->build_id);
		return;
	}
	o->log_map = strdup(prog->path);
	o->instr_map = o->log_map;
}

/* The log's shared objects that are where they were recorded, unchanged:
 * their functions get names too. */
static void shared_from_log(struct analysis_opts *o, const char *log_path,
			    const struct log_objects *lo)
{
	for (unsigned int i = 0; i < lo->n; i++) {
		const struct log_object *ob = &lo->obj[i];
		char id[BUILD_ID_MAX];

		if (!ob->index || ob->index >= LOG_OBJECTS_MAX ||
		    access(ob->path, R_OK) || elf_build_id(ob->path, id) < 0)
			continue;
		if (ob->build_id[0] && id[0] && strcmp(id, ob->build_id)) {
			if (!o->in.quiet)
				tool_error(
					o->cmd,
					"%s: warning: %s has changed since the log was recorded (build id %s, the log's %s): its functions stay numbers",
					log_path, ob->path, id, ob->build_id);
			continue;
		}
		free(o->log_objects[ob->index]);
		o->log_objects[ob->index] = strdup(ob->path);
	}
}

struct symbols *analysis_symbols_open(const struct analysis_opts *o,
				      bool demangle, char *err, size_t errlen)
{
	struct symbols *s = symbols_open(o->instr_map, demangle, err, errlen);
	char why[256];

	for (unsigned int i = 1; s && i < LOG_OBJECTS_MAX; i++)
		if (o->log_objects[i] &&
		    symbols_add_object(s, i, o->log_objects[i], why,
				       sizeof(why)) &&
		    !o->in.quiet)
			tool_error(o->cmd, "warning: %s", why);
	return s;
}

/* With -m: that its build id is one of the log's objects'. */
static int check_map(struct analysis_opts *o, const char *log_path,
		     const struct log_objects *lo)
{
	const struct log_object *with_id = NULL;
	char id[BUILD_ID_MAX];

	for (unsigned int i = 0; i < lo->n; i++) {
		if (!lo->obj[i].build_id[0])
			continue;
		if (!with_id || lo->obj[i].index == 0)
			with_id = &lo->obj[i];
	}
	if (!with_id || elf_build_id(o->instr_map, id) < 0)
		return 0; /* nothing to check by, or a YAML map */
	if (!id[0]) {
		tool_error(
			o->cmd,
			"warning: %s has no build id: nothing shows it is the binary %s was recorded from",
			o->instr_map, log_path);
		return 0;
	}
	for (unsigned int i = 0; i < lo->n; i++)
		if (!strcmp(lo->obj[i].build_id, id))
			return 0;
	tool_error(
		o->cmd,
		"%s-m %s: its build id is %s, but %s was recorded from %s, build id %s%s",
		o->no_build_id_check ? "warning: " : "", o->instr_map, id,
		log_path, with_id->path, with_id->build_id,
		o->no_build_id_check ?
			" (--no-build-id-check: its names may be wrong)" :
			" (--no-build-id-check uses it all the same)");
	return o->no_build_id_check ? 0 : -1;
}

/* --around-trigger: the time range around what fired, from @lo (the
 * info event of @path, if @found).  0, or -1 having said why. */
static int trigger_range(struct analysis_opts *o, const char *path,
			 const struct log_objects *lo, bool found)
{
	const struct log_trigger *t = &lo->trigger;
	uint64_t span, call;

	if (o->range.set) {
		tool_error(
			o->cmd,
			"--around-trigger and --time-range exclude each other");
		return -1;
	}
	if (!found || !t->set || !t->tsc) {
		tool_error(
			o->cmd,
			"%s: not a snapshot a trigger took (its info event names no trigger)",
			path);
		return -1;
	}
	if (!lo->tsc_hz) {
		tool_error(o->cmd, "%s: its info event gives no TSC frequency",
			   path);
		return -1;
	}
	o->trigger = *t;
	/* (replay says it above its table) */
	if (strcmp(o->cmd, "replay") && !o->in.quiet)
		analysis_say_trigger(stderr, t, NULL);
	span = (uint64_t)((unsigned __int128)o->around_ns * lo->tsc_hz /
			  1000000000u);
	call = (uint64_t)((unsigned __int128)t->duration_ns * lo->tsc_hz /
			  1000000000u);
	o->range = (struct replay_range){
		.set = true,
		.from = t->tsc > call + span ? t->tsc - call - span : 0,
		.to = t->tsc > UINT64_MAX - span ? UINT64_MAX : t->tsc + span,
	};
	return 0;
}

void analysis_say_trigger(FILE *out, const struct log_trigger *t,
			  const char *name)
{
	char id[16];

	if (!t->function) {
		fprintf(out, "# trigger %s at TSC %" PRIu64 "\n", t->spec,
			t->tsc);
		return;
	}
	snprintf(id, sizeof(id), "#%" PRId32, t->function);
	fprintf(out,
		"# trigger %s: thread %" PRIu32
		", %s%s%s%s, %.3f ms, returned at TSC %" PRIu64 "\n",
		t->spec, t->tid, name ? name : id, name ? " (" : "",
		name ? id : "", name ? ")" : "", (double)t->duration_ns / 1e6,
		t->tsc);
}

int analysis_find_map(struct analysis_opts *o, const char *log_path)
{
	struct log_objects *lo = malloc(sizeof(*lo));
	bool found;
	int ret = 0;

	if (!lo) {
		tool_error(o->cmd, "out of memory");
		return -1;
	}
	/* a log that cannot be read is said where it is read */
	found = log_objects_read(log_path, lo) > 0;
	if (found) {
		if (!o->instr_map)
			map_from_log(o, log_path, lo);
		else
			ret = check_map(o, log_path, lo);
		shared_from_log(o, log_path, lo);
	}
	if (!ret && o->around)
		ret = trigger_range(o, log_path, lo, found);
	free(lo);
	return ret;
}

int analysis_option(struct analysis_opts *o, int opt, const char *arg,
		    void (*usage)(FILE *out))
{
	switch (opt) {
	case 'm':
		o->instr_map = arg;
		return 0;
	case 'k':
		o->in.keep_going = true;
		return 0;
	case 0x105:
		o->no_build_id_check = true;
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'q':
		o->in.quiet = true;
		return 0;
	case 0x100:
		if (parse_size(arg, &o->sort_memory)) {
			tool_error(o->cmd, "bad value '%s' for --sort-memory",
				   arg);
			return -1;
		}
		return 0;
	case 0x101:
		if (trace_format_parse(arg, &o->in.format)) {
			tool_error(
				o->cmd,
				"bad value '%s' for --input-format (xray, yaml, tracelog)",
				arg);
			return -1;
		}
		return 0;
	case 0x102:
		if (parse_tids(arg, &o->tids, &o->ntids)) {
			tool_error(
				o->cmd,
				"--tid wants thread ids separated by commas, not '%s'",
				arg);
			return -1;
		}
		return 0;
	case 'F':
	case 'N':
		return filter_add_rule(o->cmd, &o->filter,
				       opt == 'F' ? '+' : '-', arg) ?
			       0 :
			       -1;
	case 0x104:
		if (parse_time_ns(arg, 1000, &o->min_ns)) {
			tool_error(
				o->cmd,
				"--min-duration wants a time such as 5us, 2ms or 1s, not '%s'",
				arg);
			return -1;
		}
		return 0;
	case 0x106:
		o->around = true;
		o->around_ns = 1000000;
		if (arg && parse_time_ns(arg, 1000, &o->around_ns)) {
			tool_error(
				o->cmd,
				"--around-trigger wants a time such as 500us or 2ms, not '%s'",
				arg);
			return -1;
		}
		return 0;
	case 0x103:
		if (parse_time_range(arg, &o->range)) {
			tool_error(
				o->cmd,
				"--time-range wants START,END (1.5ms,2s or TSC values), not '%s'",
				arg);
			return -1;
		}
		return 0;
	default:
		usage(stderr);
		return -1;
	}
}

unsigned int analysis_default_jobs(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
}

int analysis_jobs(const char *cmd, const char *arg, unsigned int *jobs)
{
	uint64_t n;

	if (parse_uint(arg, 1, 64, &n)) {
		tool_error(cmd, "--jobs wants a number from 1 to 64, not '%s'",
			   arg);
		return -1;
	}
	*jobs = (unsigned int)n;
	return 0;
}

bool analysis_shareable(const struct analysis_opts *o, const char *path,
			unsigned int jobs)
{
	return jobs > 1 && !o->filter && !o->ntids && !o->range.set &&
	       replay_can_share(&o->in, path, o->min_ns);
}

int analysis_shared_done(const char *cmd, const char *path, int alone)
{
	const char *debug = getenv("XRAYFDR_DEBUG");

	if (alone < 0)
		tool_error(cmd, "out of memory");
	else if (debug && strstr(debug, "jobs"))
		tool_error(cmd, "%s: %s", path,
			   alone ? "read again by one reader" :
				   "read by workers");
	return alone;
}

FILE *analysis_open_output(const struct analysis_opts *o)
{
	FILE *out;

	if (!o->output || !strcmp(o->output, "-"))
		return stdout;
	out = fopen(o->output, "w");
	if (!out)
		tool_error(o->cmd, "%s: %s", o->output, strerror(errno));
	return out;
}

int analysis_close_output(const struct analysis_opts *o, FILE *out, int status)
{
	if (fflush(out) || ferror(out)) {
		tool_error(o->cmd, "%s: %s", o->output ? o->output : "<stdout>",
			   strerror(errno ? errno : EIO));
		status = EXIT_USAGE;
	}
	if (out != stdout)
		fclose(out);
	return status;
}
