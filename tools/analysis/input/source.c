// SPDX-License-Identifier: GPL-2.0-only
/* Trace input of any format, with diagnostics and progress; see source.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cmdline/report.h"
#include "source.h"
#include "text_reader.h"

#define MAX_WARNINGS_SHOWN 10
#define PROGRESS_EVERY 65536

struct trace {
	char *path;
	const char *cmd;
	struct trace_opts opts;
	struct trace_header hdr;
	int header_ret; /* 1: not read yet */

	struct xrayfdr_reader *xr;
	struct text_reader *tr;
	FILE *text;

	struct trace_stats stats;
	uint64_t warnings_shown;
	char sum_first[160]; /* the first buffer found damaged, and where */

	/* progress */
	bool progress;
	uint64_t size;
	uint64_t countdown;
	struct timespec last;
	bool drawn;
};

const char *trace_where(enum trace_format format, uint64_t offset, char *buf,
			size_t len)
{
	if (format == TRACE_YAML || format == TRACE_TRACELOG)
		snprintf(buf, len, "line %" PRIu64, offset);
	else
		snprintf(buf, len, "offset %" PRIu64 " (0x%" PRIx64 ")", offset,
			 offset);
	return buf;
}

int trace_format_parse(const char *name, enum trace_format *out)
{
	if (!strcmp(name, "xray") || !strcmp(name, "fdr") ||
	    !strcmp(name, "basic"))
		*out = TRACE_XRAY;
	else if (!strcmp(name, "yaml"))
		*out = TRACE_YAML;
	else if (!strcmp(name, "tracelog"))
		*out = TRACE_TRACELOG;
	else
		return -EINVAL;
	return 0;
}

/* tool_error(), unless the trace is to be silent */
static void say(const struct trace *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct trace *t, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (t->opts.silent)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tool_error(t->cmd, "%s", msg);
}

static void on_diag(void *ctx, const struct xrayfdr_diag *d)
{
	struct trace *t = ctx;

	/* said once, as a count, by trace_status() */
	if (!strcmp(d->rule, "checksum")) {
		if (!t->sum_first[0])
			snprintf(t->sum_first, sizeof(t->sum_first),
				 "%s at offset %" PRIu64, d->record, d->offset);
		return;
	}
	if (d->severity == XRAYFDR_SEV_WARNING) {
		if (t->warnings_shown++ >= MAX_WARNINGS_SHOWN)
			return;
		say(t, "warning: %s [%s]", d->message, d->rule);
		return;
	}
	/* an error skipped in keep-going mode */
	say(t, "%s [%s] (skipped)", d->message, d->rule);
}

static void on_text_skip(void *ctx, const char *message)
{
	struct trace *t = ctx;

	say(t, "%s (line skipped)", message);
}

/* What the first bytes say the file is. */
static enum trace_format sniff(const char *path)
{
	unsigned char b[8] = { 0 };
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return TRACE_XRAY; /* let the reader report it */
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n >= 4 && (!memcmp(b, "---", 3) || !memcmp(b, "%YAM", 4) ||
		       !memcmp(b, "head", 4) || b[0] == '#'))
		return TRACE_YAML;
	if (n >= 4 && b[3] == ' ' &&
	    (!memcmp(b, "prf", 3) || !memcmp(b, "thr", 3) ||
	     !memcmp(b, "fun", 3) || !memcmp(b, "sam", 3) ||
	     !memcmp(b, "prc", 3)))
		return TRACE_TRACELOG;
	return TRACE_XRAY;
}

struct trace *trace_open(const char *path, const struct trace_opts *opts)
{
	struct trace *t = calloc(1, sizeof(*t));
	struct stat st;
	int err;

	if (!t)
		return NULL;
	t->opts = *opts;
	t->cmd = opts->cmd;
	t->header_ret = 1;
	t->path = strdup(path);
	if (!t->path)
		goto fail_errno;
	t->hdr.format = opts->format;
	if (t->hdr.format == TRACE_AUTO)
		t->hdr.format = strcmp(path, "-") ? sniff(path) : TRACE_XRAY;
	if (t->hdr.format == TRACE_XRAY) {
		XRAYFDR_OPTS(xrayfdr_reader_opts, ro,
			     .flags = XRAYFDR_READ_NO_CALL_CHECK |
				      (opts->keep_going ?
					       XRAYFDR_READ_KEEP_GOING :
					       0),
			     .on_diag = on_diag, .diag_ctx = t,
			     .keep_thread = opts->keep_thread,
			     .keep_ctx = opts->keep_ctx);
		t->xr = xrayfdr_reader_open(path, &ro);
		if (!t->xr)
			goto fail_errno;
	} else {
		t->text = strcmp(path, "-") ? fopen(path, "r") : stdin;
		if (!t->text)
			goto fail_errno;
		if (fstat(fileno(t->text), &st) == 0 && S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			goto fail_errno;
		}
		t->tr = text_reader_new(
			t->hdr.format == TRACE_YAML ? TEXT_YAML : TEXT_TRACELOG,
			t->text, path, opts->keep_going, on_text_skip, t);
		if (!t->tr)
			goto fail_errno;
	}
	if (!opts->quiet && isatty(STDERR_FILENO) && strcmp(path, "-") &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		t->progress = true;
		t->size = (uint64_t)st.st_size;
		/* t->last is zero: the first line shows at the first
		 * count, so that even a short run says what it reads */
		t->countdown = PROGRESS_EVERY;
	}
	return t;

fail_errno:
	err = errno;
	say(t, "%s: %s", path, strerror(err));
	trace_close(t);
	errno = err;
	return NULL;
}

static void report_error(struct trace *t)
{
	if (t->xr) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(t->xr);

		if (d)
			say(t, "%s [%s]", d->message, d->rule);
	} else {
		say(t, "%s", text_reader_error(t->tr));
	}
}

int trace_header(struct trace *t, const struct trace_header **hdr)
{
	*hdr = &t->hdr;
	if (t->header_ret != 1)
		return t->header_ret;
	if (t->xr) {
		const struct xrayfdr_file_header *h;

		t->header_ret = xrayfdr_reader_header(t->xr, &h);
		if (!t->header_ret) {
			t->hdr.version = h->version;
			t->hdr.type = h->type;
			t->hdr.constant_tsc = h->constant_tsc;
			t->hdr.nonstop_tsc = h->nonstop_tsc;
			t->hdr.cycle_frequency = h->cycle_frequency;
			t->hdr.buffer_size = h->buffer_size;
		}
	} else {
		t->header_ret = text_reader_header(t->tr, &t->hdr);
	}
	if (t->header_ret < 0)
		report_error(t);
	return t->header_ret;
}

static void human_size(char *buf, size_t len, uint64_t n)
{
	if (n >= 1ull << 30)
		snprintf(buf, len, "%.1f GiB", (double)n / (1ull << 30));
	else
		snprintf(buf, len, "%.0f MiB", (double)n / (1 << 20));
}

static void draw_progress(struct trace *t)
{
	struct timespec now;
	char done[32], total[32];
	double pct;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - t->last.tv_sec) * 1000000000L +
		    (now.tv_nsec - t->last.tv_nsec) <
	    250000000L)
		return;
	t->last = now;
	human_size(done, sizeof(done), t->stats.bytes);
	human_size(total, sizeof(total), t->size);
	pct = t->size ? 100.0 * (double)t->stats.bytes / (double)t->size : 0;
	fprintf(stderr, "\rxrayfdr %s: reading %s: %3.0f%% (%s of %s)\033[K",
		t->cmd, t->path, pct > 100 ? 100 : pct, done, total);
	t->drawn = true;
}

static void update_stats(struct trace *t)
{
	if (t->xr) {
		const struct xrayfdr_reader_stats *rs =
			xrayfdr_reader_stats(t->xr);

		t->stats.bytes = rs->bytes;
		/* damage a checksum found is a warning here */
		t->stats.errors = rs->errors - rs->sum_failed;
		t->stats.sum_failed = rs->sum_failed;
		t->stats.warnings = rs->warnings;
		t->stats.skipped_bytes = rs->skipped_bytes;
		t->stats.skipped_buffers = rs->skipped_buffers;
	} else {
		text_reader_stats(t->tr, &t->stats);
	}
}

/* Out of line, so that trace_next() saves no registers per event. */
static __attribute__((noinline)) int first_header(struct trace *t)
{
	const struct trace_header *hdr;

	return trace_header(t, &hdr);
}

/* @n more events read: counted, and the progress line drawn every
 * PROGRESS_EVERY of them. */
static void counted(struct trace *t, uint64_t n)
{
	t->stats.events += n;
	if (!t->progress)
		return;
	if (t->countdown > n) {
		t->countdown -= n;
		return;
	}
	t->countdown = PROGRESS_EVERY;
	update_stats(t);
	draw_progress(t);
}

static __attribute__((noinline)) int next_done(struct trace *t, int ret)
{
	if (ret == 1) {
		counted(t, 1);
		return 1;
	}
	if (ret < 0)
		report_error(t);
	return ret;
}

int trace_next(struct trace *t, const struct xrayfdr_event **ev)
{
	int ret;

	if (t->header_ret == 1) {
		ret = first_header(t);
		if (ret < 0)
			return ret;
	} else if (t->header_ret < 0) {
		return t->header_ret;
	}
	if (t->xr)
		ret = xrayfdr_reader_next_event(t->xr, ev);
	else
		ret = text_reader_next(t->tr, ev);
	if (ret == 1 && !t->progress) {
		t->stats.events++;
		return 1;
	}
	return next_done(t, ret);
}

size_t trace_next_calls(struct trace *t, struct xrayfdr_call_event *out,
			size_t max, const struct xrayfdr_event **last)
{
	size_t n;

	if (t->header_ret || !t->xr)
		return 0;
	n = xrayfdr_reader_next_calls(t->xr, out, max, last);
	if (n)
		counted(t, n);
	return n;
}

const struct trace_stats *trace_stats(const struct trace *t)
{
	return &t->stats;
}

int trace_status(struct trace *t, int last_ret)
{
	update_stats(t);
	if (t->drawn) {
		fputs("\r\033[K", stderr);
		t->drawn = false;
	}
	if (t->stats.sum_failed)
		say(t,
		    "warning: %s: %" PRIu64
		    " checksums fail (the first: the %s): the log is damaged, and what is read from it may be wrong; 'xrayfdr dump --verify %s' names each damaged buffer",
		    t->path, t->stats.sum_failed, t->sum_first, t->path);
	if (t->warnings_shown > MAX_WARNINGS_SHOWN)
		say(t, "%s: %" PRIu64 " more warnings not shown", t->path,
		    t->warnings_shown - MAX_WARNINGS_SHOWN);
	if (last_ret == -EIO || last_ret == -ENOMEM || last_ret == -EISDIR)
		return EXIT_USAGE;
	if (last_ret < 0 || t->stats.errors) {
		if (t->opts.keep_going && t->stats.errors)
			say(t,
			    "%s: %" PRIu64 " errors; skipped %" PRIu64
			    " bytes in %" PRIu64 " %s",
			    t->path, t->stats.errors, t->stats.skipped_bytes,
			    t->stats.skipped_buffers,
			    t->xr ? "buffers" : "lines");
		return EXIT_INVALID;
	}
	return EXIT_OK;
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	if (t->drawn)
		fputs("\r\033[K", stderr);
	xrayfdr_reader_free(t->xr);
	text_reader_free(t->tr);
	if (t->text && t->text != stdin)
		fclose(t->text);
	free(t->path);
	free(t);
}

const char *trace_function_name(void *ctx, int32_t func_id)
{
	struct trace *t = ctx;

	return t->tr ? text_reader_function_name(t->tr, func_id) : NULL;
}
