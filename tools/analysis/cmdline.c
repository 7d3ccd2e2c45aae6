// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>

#include "../xrayfdr.h"
#include "cmdline.h"

void analysis_opts_init(struct analysis_opts *o, const char *cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->sort_memory = DEFAULT_SORT_MEMORY;
	o->in.cmd = cmd;
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
	default:
		usage(stderr);
		return -1;
	}
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
