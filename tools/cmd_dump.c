// SPDX-License-Identifier: GPL-2.0-only
/* xrayfdr dump: print and verify an XRay log, record by record. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <xrayfdr/fdr.h>

#include "analysis/input/log_objects.h"
#include "xrayfdr.h"

#define DATA_PREVIEW 64

static void dump_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr dump [OPTIONS] FILE\n"
		"\n"
		"Print every record of an XRay log, one line each with its byte offset,\n"
		"as 'llvm-xray fdr-dump' does.  Reads FDR logs of versions 1 to 5 and\n"
		"basic-mode logs of versions 1 to 3, in either byte order, streaming:\n"
		"memory does not grow with the file.  FILE '-' reads standard input.\n"
		"\n"
		"Options:\n"
		"  -v, --verify         check the whole file against the format's grammar;\n"
		"                       report every problem with its offset, record and\n"
		"                       rule, and exit 1 if the file is invalid\n"
		"  -e, --events         print decoded events (absolute TSC, thread, process,\n"
		"                       CPU, arguments, payloads) instead of raw records\n"
		"  -j, --json           one JSON object per line instead of text\n"
		"  -c, --compat         print the records as 'llvm-xray fdr-dump' does,\n"
		"                       byte for byte (no header line, payloads raw;\n"
		"                       version 1's padding, which llvm-xray reads as\n"
		"                       records, left out); FDR logs only ('xrayfdr\n"
		"                       fdr-dump FILE' is this)\n"
		"  -k, --keep-going     after an error, skip to the next buffer and go on;\n"
		"                       the exit status still says the file is invalid\n"
		"  -s, --strict         with --verify: warnings make the file invalid too\n"
		"  -q, --quiet          print no records; only problems and the summary\n"
		"      --max-warnings=N print at most N warnings (default 20, 0: all)\n"
		"  -h, --help           show this help\n"
		"\n"
		"Warnings (the file is readable but odd) include an exit with no entry\n"
		"before it on its thread; errors (the file breaks the format) stop the\n"
		"reader unless --keep-going is given.  A buffer that fails its checksum\n"
		"(logs libxrayfdr writes carry one per buffer) is an error [checksum]\n"
		"naming the buffer's offset and thread; the reader goes on.  A thread\n"
		"whose time goes back [time-order] is an error in a log libxrayfdr wrote\n"
		"(it ends with the runtime's info event), a warning in others' logs;\n"
		"the reader goes on.  Rule ids are listed in Documentation/fdr-format.rst.\n"
		"\n"
		"Exit status: 0 valid, 1 invalid, 2 usage or I/O error.\n");
}

struct dump_ctx {
	bool json;
	bool no_warnings; /* --compat: llvm-xray fdr-dump gives none */
	uint64_t max_warnings;
	uint64_t printed;
	uint64_t suppressed;
};

static void on_diag(void *arg, const struct xrayfdr_diag *d)
{
	struct dump_ctx *ctx = arg;
	/* a log out of order may step back at every switch: cap those too */
	bool capped = d->severity == XRAYFDR_SEV_WARNING ||
		      !strcmp(d->rule, "time-order");

	if (d->severity == XRAYFDR_SEV_WARNING && ctx->no_warnings)
		return;
	if (capped && ctx->max_warnings && ctx->printed >= ctx->max_warnings) {
		ctx->suppressed++;
		return;
	}
	if (capped)
		ctx->printed++;
	fprintf(stderr, "%s: %s [%s]\n",
		d->severity == XRAYFDR_SEV_ERROR ? "error" : "warning",
		d->message, d->rule);
}

static void print_header(const struct xrayfdr_file_header *h, bool json)
{
	const char *type = h->type == XRAYFDR_FILE_FDR ? "fdr" : "basic";
	const char *order = h->big_endian ? "big" : "little";

	if (json) {
		printf("{\"header\":{\"version\":%u,\"type\":\"%s\",\"byte_order\":\"%s\","
		       "\"constant_tsc\":%s,\"nonstop_tsc\":%s,\"cycle_frequency\":%" PRIu64
		       ",\"buffer_size\":%" PRIu64 "}}\n",
		       h->version, type, order,
		       h->constant_tsc ? "true" : "false",
		       h->nonstop_tsc ? "true" : "false", h->cycle_frequency,
		       h->buffer_size);
		return;
	}
	printf("header: %s version %u, %s-endian, constant_tsc=%d nonstop_tsc=%d, "
	       "cycle_frequency=%" PRIu64 " Hz, buffer_size=%" PRIu64 "\n",
	       type, h->version, order, h->constant_tsc, h->nonstop_tsc,
	       h->cycle_frequency, h->buffer_size);
}

static void print_metadata_text(const struct xrayfdr_record *rec,
				unsigned int version)
{
	const struct xrayfdr_metadata *md = &rec->md;

	switch (md->kind) {
	case XRAYFDR_MD_NEW_BUFFER:
		printf("tid=%" PRId32, md->tid);
		break;
	case XRAYFDR_MD_NEW_CPU_ID:
		printf("cpu=%u tsc=%" PRIu64, md->cpu, md->tsc);
		break;
	case XRAYFDR_MD_TSC_WRAP:
		printf("tsc=%" PRIu64, md->tsc);
		break;
	case XRAYFDR_MD_WALLTIME_MARKER:
		printf("seconds=%" PRIu64 ".%06" PRIu32, md->seconds,
		       md->micros);
		break;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
		printf("size=%" PRId32, md->event_size);
		if (version >= 5)
			printf(" delta=%+" PRId32, md->tsc_delta);
		if (version == 4)
			printf(" cpu=%u", md->cpu);
		printf(" tsc=%" PRIu64 " data=", rec->tsc);
		print_escaped(stdout, md->payload, (size_t)md->event_size,
			      DATA_PREVIEW);
		break;
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		printf("size=%" PRId32 " delta=%+" PRId32
		       " type=%u tsc=%" PRIu64 " data=",
		       md->event_size, md->tsc_delta, md->event_type, rec->tsc);
		print_escaped(stdout, md->payload, (size_t)md->event_size,
			      DATA_PREVIEW);
		break;
	case XRAYFDR_MD_CALL_ARGUMENT:
		printf("arg=%" PRIu64 " (0x%" PRIx64 ")", md->arg, md->arg);
		break;
	case XRAYFDR_MD_BUFFER_EXTENTS:
		printf("size=%" PRIu64, md->extents);
		break;
	case XRAYFDR_MD_PID:
		printf("pid=%" PRId32, md->pid);
		break;
	default:
		break;
	}
}

static void print_record_text(const struct xrayfdr_record *rec,
			      unsigned int version)
{
	printf("0x%08" PRIx64 "  ", rec->offset);
	switch (rec->type) {
	case XRAYFDR_REC_FUNCTION:
		printf("%-19s id=%" PRId32 " delta=+%" PRIu32 " tsc=%" PRIu64,
		       xrayfdr_func_kind_name(rec->func_kind), rec->func_id,
		       rec->tsc_delta, rec->tsc);
		break;
	case XRAYFDR_REC_METADATA:
		printf("%-19s ", xrayfdr_md_kind_name(rec->md.kind));
		print_metadata_text(rec, version);
		break;
	case XRAYFDR_REC_PADDING:
		printf("%-19s bytes=%" PRIu64, "padding", rec->size);
		break;
	case XRAYFDR_REC_BASIC:
		printf("%-19s id=%" PRId32 " cpu=%u tid=%" PRIu32
		       " pid=%" PRIu32 " tsc=%" PRIu64,
		       xrayfdr_func_kind_name(rec->func_kind), rec->func_id,
		       rec->cpu, rec->tid, rec->pid, rec->tsc);
		break;
	case XRAYFDR_REC_BASIC_ARG:
		printf("%-19s id=%" PRId32 " tid=%" PRIu32 " pid=%" PRIu32
		       " arg=%" PRIu64 " (0x%" PRIx64 ")",
		       "Argument Payload", rec->func_id, rec->tid, rec->pid,
		       rec->arg, rec->arg);
		break;
	}
	putchar('\n');
}

/* @n bytes of @p as they are: llvm-xray prints payloads raw. */
static void put_raw(const void *p, size_t n)
{
	fwrite(p, 1, n, stdout);
}

/*
 * @rec as 'llvm-xray fdr-dump' prints it (its RecordPrinter), byte for
 * byte, its quirks included: a typed event's line lacks its closing '>',
 * and a custom event before version 5 shows its TSC and its CPU (0 before
 * version 4).  Version 1's padding after EndOfBuffer, which llvm-xray
 * parses as records, is left out.
 */
static void print_record_llvm(const struct xrayfdr_record *rec,
			      unsigned int version)
{
	static const char *const func[] = {
		[XRAYFDR_FUNC_ENTRY] = "Enter",
		[XRAYFDR_FUNC_EXIT] = "Exit",
		[XRAYFDR_FUNC_TAIL_EXIT] = "Tail Exit",
		[XRAYFDR_FUNC_ENTRY_ARGS] = "Enter With Arg",
	};
	const struct xrayfdr_metadata *md = &rec->md;

	if (rec->type == XRAYFDR_REC_PADDING)
		return;
	if (rec->type == XRAYFDR_REC_FUNCTION) {
		printf("<Function %s: #%" PRId32 " delta = +%" PRIu32 ">\n",
		       func[rec->func_kind & 3], rec->func_id, rec->tsc_delta);
		return;
	}
	switch (md->kind) {
	case XRAYFDR_MD_NEW_BUFFER:
		printf("<Thread ID: %" PRId32 ">", md->tid);
		break;
	case XRAYFDR_MD_END_OF_BUFFER:
		printf("<End of Buffer>");
		break;
	case XRAYFDR_MD_NEW_CPU_ID:
		printf("<CPU: id = %u, tsc = %" PRIu64 ">", md->cpu, md->tsc);
		break;
	case XRAYFDR_MD_TSC_WRAP:
		printf("<TSC Wrap: base = %" PRIu64 ">", md->tsc);
		break;
	case XRAYFDR_MD_WALLTIME_MARKER:
		printf("<Wall Time: seconds = %" PRIu64 ".%06" PRIu32 ">",
		       md->seconds, md->micros);
		break;
	case XRAYFDR_MD_CUSTOM_EVENT_MARKER:
		if (version >= 5)
			printf("<Custom Event: delta = +%" PRId32
			       ", size = %" PRId32 ", data = '",
			       md->tsc_delta, md->event_size);
		else
			printf("<Custom Event: tsc = %" PRIu64
			       ", cpu = %u, size = %" PRId32 ", data = '",
			       rec->tsc, version == 4 ? md->cpu : 0,
			       md->event_size);
		put_raw(md->payload, (size_t)md->event_size);
		printf("'>");
		break;
	case XRAYFDR_MD_TYPED_EVENT_MARKER:
		printf("<Typed Event: delta = +%" PRId32
		       ", type = %u, size = %" PRId32 ", data = '",
		       md->tsc_delta, md->event_type, md->event_size);
		put_raw(md->payload, (size_t)md->event_size);
		printf("'");
		break;
	case XRAYFDR_MD_CALL_ARGUMENT:
		printf("<Call Argument: data = %" PRIu64 " (hex = 0x%" PRIx64
		       ")>",
		       md->arg, md->arg);
		break;
	case XRAYFDR_MD_BUFFER_EXTENTS:
		printf("<Buffer: size = %" PRIu64 " bytes>", md->extents);
		break;
	case XRAYFDR_MD_PID:
		printf("<PID: %" PRId32 ">", md->pid);
		break;
	default:
		break;
	}
	putchar('\n');
}

static void print_record_json(const struct xrayfdr_record *rec)
{
	const struct xrayfdr_metadata *md = &rec->md;

	printf("{\"offset\":%" PRIu64 ",\"size\":%" PRIu64, rec->offset,
	       rec->size);
	switch (rec->type) {
	case XRAYFDR_REC_FUNCTION:
	case XRAYFDR_REC_BASIC:
		printf(",\"record\":\"%s\",\"func_id\":%" PRId32
		       ",\"tsc\":%" PRIu64,
		       xrayfdr_func_kind_name(rec->func_kind), rec->func_id,
		       rec->tsc);
		if (rec->type == XRAYFDR_REC_FUNCTION)
			printf(",\"delta\":%" PRIu32, rec->tsc_delta);
		else
			printf(",\"cpu\":%u,\"tid\":%" PRIu32
			       ",\"pid\":%" PRIu32,
			       rec->cpu, rec->tid, rec->pid);
		break;
	case XRAYFDR_REC_BASIC_ARG:
		printf(",\"record\":\"Argument Payload\",\"func_id\":%" PRId32
		       ",\"tid\":%" PRIu32 ",\"pid\":%" PRIu32
		       ",\"arg\":%" PRIu64,
		       rec->func_id, rec->tid, rec->pid, rec->arg);
		break;
	case XRAYFDR_REC_PADDING:
		printf(",\"record\":\"padding\"");
		break;
	case XRAYFDR_REC_METADATA:
		printf(",\"record\":\"%s\",\"tid\":%" PRId32 ",\"pid\":%" PRId32
		       ",\"cpu\":%u,\"tsc\":%" PRIu64 ",\"seconds\":%" PRIu64
		       ",\"micros\":%" PRIu32 ",\"event_size\":%" PRId32
		       ",\"tsc_delta\":%" PRId32
		       ",\"event_type\":%u,\"arg\":%" PRIu64
		       ",\"extents\":%" PRIu64,
		       xrayfdr_md_kind_name(md->kind), md->tid, md->pid,
		       md->cpu,
		       md->kind == XRAYFDR_MD_NEW_CPU_ID ||
				       md->kind == XRAYFDR_MD_TSC_WRAP ?
			       md->tsc :
			       rec->tsc,
		       md->seconds, md->micros, md->event_size, md->tsc_delta,
		       md->event_type, md->arg, md->extents);
		if (md->payload) {
			printf(",\"data\":");
			print_hex(stdout, md->payload, (size_t)md->event_size);
		}
		break;
	}
	printf("}\n");
}

static const char *sched_kind_name(unsigned int kind)
{
	switch (kind) {
	case XRAYFDR_SCHED_SWITCH_OUT:
		return "switch-out";
	case XRAYFDR_SCHED_SWITCH_IN:
		return "switch-in";
	default:
		return "migrate";
	}
}

/* @s as a JSON string: bytes outside printable ASCII as \u00XX. */
static void print_json_string(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p >= 0x20 && *p < 0x7f)
			putchar(*p);
		else
			printf("\\u%04x", *p);
	}
	putchar('"');
}

static void print_event(const struct xrayfdr_event *ev, bool json)
{
	struct xrayfdr_sched_event se;
	bool sched = ev->kind == XRAYFDR_EV_CUSTOM &&
		     xrayfdr_sched_decode(ev->data, ev->data_size, &se);
	char name[XRAYFDR_THREAD_NAME_MAX + 1];
	uint32_t name_tid;
	bool named = !sched && ev->kind == XRAYFDR_EV_CUSTOM &&
		     xrayfdr_thread_name_decode(ev->data, ev->data_size,
						&name_tid, name);

	if (json) {
		printf("{\"offset\":%" PRIu64
		       ",\"kind\":\"%s\",\"func_id\":%" PRId32
		       ",\"tid\":%" PRIu32 ",\"pid\":%" PRIu32
		       ",\"cpu\":%u,\"tsc\":%" PRIu64 ",\"wall_sec\":%" PRIu64
		       ",\"wall_usec\":%" PRIu32,
		       ev->offset, xrayfdr_event_kind_name(ev->kind),
		       ev->func_id, ev->tid, ev->pid, ev->cpu, ev->tsc,
		       ev->wall_sec, ev->wall_usec);
		if (ev->kind == XRAYFDR_EV_ENTRY_ARGS) {
			printf(",\"args\":[");
			for (uint32_t i = 0; i < ev->nargs; i++)
				printf("%s%" PRIu64, i ? "," : "", ev->args[i]);
			printf("]");
		}
		if (ev->kind == XRAYFDR_EV_TYPED)
			printf(",\"event_type\":%u", ev->event_type);
		if (ev->kind == XRAYFDR_EV_CUSTOM ||
		    ev->kind == XRAYFDR_EV_TYPED) {
			printf(",\"data\":");
			print_hex(stdout, ev->data, ev->data_size);
		}
		if (named) {
			printf(",\"thread_name\":{\"tid\":%" PRIu32
			       ",\"name\":",
			       name_tid);
			print_json_string(name);
			putchar('}');
		}
		printf("}\n");
		return;
	}
	printf("0x%08" PRIx64 "  tsc=%" PRIu64 " tid=%" PRIu32 " pid=%" PRIu32
	       " cpu=%u %-18s",
	       ev->offset, ev->tsc, ev->tid, ev->pid, ev->cpu,
	       xrayfdr_event_kind_name(ev->kind));
	if (ev->kind <= XRAYFDR_EV_ENTRY_ARGS)
		printf(" id=%" PRId32, ev->func_id);
	if (ev->kind == XRAYFDR_EV_ENTRY_ARGS) {
		printf(" args=[");
		for (uint32_t i = 0; i < ev->nargs; i++)
			printf("%s%" PRIu64, i ? "," : "", ev->args[i]);
		printf("]");
	}
	if (ev->kind == XRAYFDR_EV_TYPED)
		printf(" type=%u", ev->event_type);
	if (sched) {
		printf(" sched %s cpu=%u", sched_kind_name(se.kind), se.cpu);
		if (se.kind == XRAYFDR_SCHED_MIGRATE)
			printf(" prev_cpu=%u", se.prev_cpu);
		if (se.flags & XRAYFDR_SCHED_PREEMPTED)
			printf(" preempted");
	} else if (named) {
		printf(" thread-name tid=%" PRIu32 " name=", name_tid);
		print_escaped(stdout, name, strlen(name), DATA_PREVIEW);
	} else if (ev->kind == XRAYFDR_EV_CUSTOM ||
		   ev->kind == XRAYFDR_EV_TYPED) {
		printf(" data=");
		print_escaped(stdout, ev->data, ev->data_size, DATA_PREVIEW);
	}
	putchar('\n');
}

/* Did libxrayfdr write the log at @path?  Its info event says so. */
static bool own_log(const char *path)
{
	struct log_objects *lo = malloc(sizeof(*lo));
	bool own = lo && strcmp(path, "-") && log_objects_read(path, lo) == 1;

	free(lo);
	return own;
}

static int dump_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verify", no_argument, NULL, 'v' },
		{ "events", no_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "compat", no_argument, NULL, 'c' },
		{ "keep-going", no_argument, NULL, 'k' },
		{ "strict", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "max-warnings", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct dump_ctx ctx = { .max_warnings = 20 };
	bool verify = false, events = false, keep_going = false;
	bool strict = false, quiet = false, compat = false;
	const struct xrayfdr_file_header *hdr;
	const struct xrayfdr_reader_stats *st;
	struct xrayfdr_reader *r;
	const char *path;
	int opt, ret, status;

	while ((opt = getopt_long(argc, argv, "vejcksqh", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			compat = true;
			break;
		case 'v':
			verify = true;
			break;
		case 'e':
			events = true;
			break;
		case 'j':
			ctx.json = true;
			break;
		case 'k':
			keep_going = true;
			break;
		case 's':
			strict = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'W':
			if (parse_uint(optarg, 0, UINT64_MAX,
				       &ctx.max_warnings)) {
				tool_error(
					"dump",
					"--max-warnings wants a number, not '%s'",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			dump_usage(stdout);
			return EXIT_OK;
		default:
			dump_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		tool_error("dump", "expects exactly one FILE (see --help)");
		return EXIT_USAGE;
	}
	if (compat && (events || ctx.json || verify)) {
		tool_error("dump",
			   "--compat prints raw records as text: not with %s",
			   events   ? "--events" :
			   ctx.json ? "--json" :
				      "--verify");
		return EXIT_USAGE;
	}
	path = argv[optind];
	ctx.no_warnings = compat;

	XRAYFDR_OPTS(xrayfdr_reader_opts, opts,
		     .flags = (keep_going ? XRAYFDR_READ_KEEP_GOING : 0) |
			      (!compat && own_log(path) ?
				       XRAYFDR_READ_TIME_ERRORS :
				       0),
		     .on_diag = on_diag, .diag_ctx = &ctx);
	r = xrayfdr_reader_open(path, &opts);
	if (!r) {
		tool_error("dump", "%s: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	ret = xrayfdr_reader_header(r, &hdr);
	if (!ret && compat && hdr->type != XRAYFDR_FILE_FDR) {
		tool_error(
			"dump",
			"%s: --compat reads FDR logs only, as 'llvm-xray fdr-dump' does; this is a basic-mode log",
			path);
		xrayfdr_reader_free(r);
		return EXIT_USAGE;
	}
	if (!ret && !quiet && !compat)
		print_header(hdr, ctx.json);
	while (ret == 0) {
		if (events) {
			const struct xrayfdr_event *ev;

			ret = xrayfdr_reader_next_event(r, &ev);
			if (ret == 1 && !quiet)
				print_event(ev, ctx.json);
		} else {
			const struct xrayfdr_record *rec;

			ret = xrayfdr_reader_next_record(r, &rec);
			if (ret == 1 && !quiet) {
				if (compat)
					print_record_llvm(rec, hdr->version);
				else if (ctx.json)
					print_record_json(rec);
				else
					print_record_text(rec, hdr->version);
			}
		}
		if (ret == 1)
			ret = 0;
		else if (ret == 0)
			break;
	}
	fflush(stdout);
	st = xrayfdr_reader_stats(r);
	if (ret < 0) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(r);

		fprintf(stderr, "error: %s [%s]\n",
			d ? d->message : strerror(-ret), d ? d->rule : "io");
	}
	if (ctx.suppressed)
		fprintf(stderr,
			"warning: %" PRIu64
			" more warnings or time-order errors not shown (--max-warnings)\n",
			ctx.suppressed);

	status = EXIT_OK;
	if (ret < 0 || st->errors) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(r);

		/* unreadable input is a usage problem, not an invalid file */
		status = d && (!strcmp(d->rule, "io") ||
			       !strcmp(d->rule, "memory")) ?
				 EXIT_USAGE :
				 EXIT_INVALID;
	} else if (strict && st->warnings) {
		status = EXIT_INVALID;
	}
	if (verify || keep_going || status != EXIT_OK) {
		/* JSON lines stay JSON: the summary then goes to stderr */
		FILE *out = verify && !ctx.json ? stdout : stderr;

		fprintf(out,
			"%s: %s: %" PRIu64 " bytes, %" PRIu64
			" buffers, %" PRIu64 " records, %" PRIu64
			" errors, %" PRIu64 " warnings",
			path, status == EXIT_OK ? "valid" : "INVALID",
			st->bytes, st->buffers, st->records, st->errors,
			st->warnings);
		if (st->skipped_bytes || st->skipped_buffers)
			fprintf(out,
				", skipped %" PRIu64 " bytes in %" PRIu64
				" buffers",
				st->skipped_bytes, st->skipped_buffers);
		if (st->sum_ok || st->sum_failed)
			fprintf(out,
				"; checksums: %" PRIu64 " match, %" PRIu64
				" fail",
				st->sum_ok, st->sum_failed);
		if (st->time_back)
			fprintf(out,
				"; %" PRIu64
				" steps back in a thread's time [time-order]",
				st->time_back);
		if (st->window_exits)
			fprintf(out,
				"; %" PRIu64
				" exits of calls entered before the window, in %" PRIu64
				" threads (not warnings)",
				st->window_exits, st->window_threads);
		fputc('\n', out);
	}
	xrayfdr_reader_free(r);
	return status;
}

const struct command cmd_dump = {
	.name = "dump",
	.summary = "print and verify an XRay log record by record",
	.run = dump_run,
	.usage = dump_usage,
};

static void fdr_dump_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr fdr-dump FILE\n"
		"\n"
		"Print the records of an FDR log as 'llvm-xray fdr-dump FILE' does, byte\n"
		"for byte (but for version 1's padding after EndOfBuffer, which llvm-xray\n"
		"reads as records): 'xrayfdr dump --compat FILE'.  Its -verify is not\n"
		"taken:\n"
		"'xrayfdr dump --verify' checks a log, naming each problem's offset.\n"
		"\n"
		"Exit status: 0 the log was read, 1 it is invalid, 2 usage or I/O error.\n");
}

/* llvm-xray's subcommand name, for scripts written for it. */
static int fdr_dump_run(int argc, char **argv)
{
	char *args[4] = { "dump", "--compat", NULL, NULL };

	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	     !strcmp(argv[1], "-help"))) {
		fdr_dump_usage(stdout);
		return EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-verify") ||
				  !strcmp(argv[1], "--verify")))
			tool_error(
				"fdr-dump",
				"-verify is llvm-xray's; 'xrayfdr dump --verify FILE' checks a log");
		else
			tool_error("fdr-dump",
				   "expects exactly one FILE (see --help)");
		return EXIT_USAGE;
	}
	args[2] = argv[1];
	optind = 1;
	return dump_run(3, args);
}

const struct command cmd_fdr_dump = {
	.name = "fdr-dump",
	.summary = "print an FDR log's records as 'llvm-xray fdr-dump' does",
	.run = fdr_dump_run,
	.usage = fdr_dump_usage,
};
