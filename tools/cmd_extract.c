// SPDX-License-Identifier: GPL-2.0-only
/* xrayfdr extract: a binary's XRay instrumentation map, as YAML. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cmdline/cmdline.h"
#include "analysis/engine/funcfilter.h"
#include "analysis/input/symbols.h"
#include "analysis/output/yaml_scalar.h"
#include "../lib/filter/filter.h"
#include "xrayfdr.h"

static void extract_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr extract [OPTIONS] BINARY\n"
		"\n"
		"Print the XRay instrumentation map of BINARY (an executable, a shared\n"
		"object or a relocatable object built with clang -fxray-instrument, or an\n"
		"executable or shared object built with GCC's flags of 'xrayfdr cflags\n"
		"--gcc'): one YAML line per sled with its function id, address, function\n"
		"address, kind, always-instrument flag, function name and sled version.\n"
		"The ids are those llvm-xray extract and LLVM's runtime assign, and the\n"
		"output is byte for byte what 'llvm-xray extract' prints, for every sled\n"
		"kind: function-enter, function-exit, tail-exit, log-args-enter,\n"
		"custom-event and typed-event (llvm-xray 14 refuses binaries with\n"
		"typed-event sleds).  A relocatable object holds one map per function; all\n"
		"are read, and addresses are offsets in the sections they belong to.\n"
		"\n"
		"Options:\n"
		"  -s, --symbolize      name each function from the binary's symbol table\n"
		"                       and DWARF (libdw), C++ names demangled; without\n"
		"                       it function-name is ''\n"
		"      --demangle       C++ names demangled (the default)\n"
		"      --no-demangle    keep C++ names mangled\n"
		"  -l, --locations      add 'location: FILE:LINE:COLUMN' to each sled,\n"
		"                       the source position of its function's entry (this\n"
		"                       field is ours: llvm-xray has no such field)\n"
		"  -F, --filter=PATTERN only the functions PATTERN names, as xrayfdr\n"
		"                       record -F selects them (repeatable): what a\n"
		"                       record with these filters would patch\n"
		"  -N, --notrace=PATTERN leave out what PATTERN names (repeatable)\n"
		"  -o, --output=FILE    write to FILE instead of standard output\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 done, 1 BINARY has no usable instrumentation map,\n"
		"2 usage or I/O error.\n");
}

static int extract_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "symbolize", no_argument, NULL, 's' },
		{ "demangle", no_argument, NULL, 'M' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "locations", no_argument, NULL, 'l' },
		{ "output", required_argument, NULL, 'o' },
		{ "filter", required_argument, NULL, 'F' },
		{ "notrace", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool symbolize = false, demangle_names = true, locations = false;
	char *filter = NULL;
	uint8_t *selected = NULL;
	struct analysis_opts ao = { .cmd = "extract" };
	const struct xray_instr_map *map;
	struct symbols *syms;
	char err[512];
	FILE *out;
	int opt;

	if (llvm_style_options("extract", argc, argv, longopts))
		return EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "slo:F:N:h", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'F':
		case 'N':
			if (!filter_add_rule("extract", &filter,
					     opt == 'F' ? '+' : '-', optarg)) {
				free(filter);
				return EXIT_USAGE;
			}
			break;
		case 's':
			symbolize = true;
			break;
		case 'M': /* llvm-xray's, the default */
			demangle_names = true;
			break;
		case 'D':
			demangle_names = false;
			break;
		case 'l':
			locations = true;
			break;
		case 'o':
			ao.output = optarg;
			break;
		case 'h':
			extract_usage(stdout);
			return EXIT_OK;
		default:
			extract_usage(stderr);
			free(filter);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_error("extract",
			   "expects exactly one BINARY (see --help)");
		return EXIT_USAGE;
	}
	syms = symbols_open(argv[optind], demangle_names, err, sizeof(err));
	if (!syms) {
		tool_error("extract", "%s", err);
		return strstr(err, "No such file") || strstr(err, "denied") ?
			       EXIT_USAGE :
			       EXIT_INVALID;
	}
	out = analysis_open_output(&ao);
	if (!out) {
		symbols_free(syms);
		return EXIT_USAGE;
	}
	map = symbols_map(syms);
	if (filter) {
		/* the runtime's choice, from the file's link addresses */
		struct fn_filter *rules = fn_filter_new();

		/* the rules were checked as -F and -N gave them */
		if (rules)
			fn_filter_parse(rules, filter, strlen(filter), err,
					sizeof(err));
		if (!rules ||
		    fn_filter_select(rules, argv[optind], 0, map, &selected))
			selected = NULL;
		fn_filter_free(rules);
		free(filter);
		if (!selected) {
			tool_error("extract", "out of memory");
			symbols_free(syms);
			analysis_close_output(&ao, out, EXIT_USAGE);
			return EXIT_USAGE;
		}
	}
	fputs("---\n", out);
	for (size_t f = 0; f < map->nfunctions; f++) {
		const struct xray_function *fn = &map->functions[f];
		int32_t id = (int32_t)(f + 1);

		if (selected && !selected[f])
			continue;

		for (uint32_t i = 0; i < fn->nsleds; i++) {
			const struct xray_sled *s =
				&map->sleds[fn->first_sled + i];

			fprintf(out,
				"- { id: %" PRId32 ", address: 0x%" PRIX64
				", function: 0x%" PRIX64
				", kind: %s, always-instrument: %s, function-name: ",
				id, s->address, s->function,
				xray_sled_kind_name(s->kind),
				s->always_instrument ? "true" : "false");
			yaml_write_str(out,
				       symbolize ? symbols_name(syms, id) : "");
			fprintf(out, ", version: %u", s->version);
			if (locations) {
				fputs(", location: ", out);
				yaml_write_str(out, symbols_location(syms, id));
			}
			fputs(" }\n", out);
		}
	}
	fputs("...\n", out);
	free(selected);
	symbols_free(syms);
	return analysis_close_output(&ao, out, EXIT_OK);
}

const struct command cmd_extract = {
	.name = "extract",
	.summary =
		"print a binary's XRay instrumentation map (llvm-xray extract)",
	.run = extract_run,
	.usage = extract_usage,
};
