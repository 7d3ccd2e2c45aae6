// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr synth: write a synthetic but valid XRay log with the library's
 * writer.  A deterministic random walk over a call tree per thread, with
 * threads interleaved, CPU migrations, tail calls, arguments, custom and
 * typed events and TSC gaps on request.  Used by the demo, the tests and
 * the benchmarks (traces of any size, without running a program).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xrayfdr/fdr.h>

#include "xrayfdr.h"

#define MAX_DEPTH 256
#define FREQUENCY 2000000000ull /* the synthetic clock: 2 GHz */

static void synth_usage(FILE *out)
{
	fprintf(out,
		"Usage: xrayfdr synth [OPTIONS] -o FILE\n"
		"\n"
		"Write a synthetic, valid XRay log: a deterministic random walk over a\n"
		"call tree on several threads, written with libxrayfdr's writer.  For\n"
		"demos, tests and benchmarks; the same options and seed give the same\n"
		"bytes.  Every call that is entered is exited before the end.\n"
		"\n"
		"Options:\n"
		"  -o, --output=FILE      where to write ('-': standard output)\n"
		"  -V, --fdr-version=N    FDR version 1-5 (default 5)\n"
		"      --basic            a basic-mode log (version 3) instead of FDR\n"
		"      --big-endian       write big-endian records\n"
		"  -t, --threads=N        threads (default 2)\n"
		"  -c, --calls=N          function calls per thread (default 1000)\n"
		"  -S, --size=BYTES       instead of --calls, stop once the file reaches\n"
		"                         BYTES (suffixes K, M, G: powers of 1024)\n"
		"  -f, --functions=N      distinct function ids, 1.. N (default 16)\n"
		"  -d, --depth=N          maximum call depth (default 8, at most %d)\n"
		"  -b, --buffer-size=N    FDR bytes per thread buffer (default 16384)\n"
		"  -a, --args             entries of every fifth function log an argument\n"
		"  -E, --events           add custom and typed events (FDR only; version 1\n"
		"                         has no typed events)\n"
		"  -w, --wrap-every=N     every N calls, let the clock jump by more than\n"
		"                         2^32 ticks (forces TSCWrap records)\n"
		"  -m, --migrate-every=N  every N calls, move the thread to another CPU\n"
		"                         (default 200; 0: never)\n"
		"      --sched            scheduler events (switch-out, switch-in,\n"
		"                         migration; Documentation/fdr-format.rst) around\n"
		"                         each thread's bursts; CPUs change only there\n"
		"  -s, --seed=N           random seed (default 1)\n"
		"  -h, --help             show this help\n",
		MAX_DEPTH);
}

struct synth_thread {
	uint32_t tid;
	uint16_t cpu;
	bool switched_out;
	unsigned int depth;
	int32_t stack[MAX_DEPTH];
	uint64_t calls;
};

struct synth {
	struct xrayfdr_writer *w;
	uint64_t rng;
	uint64_t tsc;
	uint32_t pid;
	uint64_t functions;
	unsigned int max_depth;
	bool args, events, basic;
	bool typed_ok; /* typed events exist from FDR version 2 on */
	bool sched; /* scheduler events around each burst */
	uint64_t wrap_every, migrate_every;
	uint64_t calls; /* all threads */
	uint64_t nevents;
};

static uint64_t next_rand(struct synth *s)
{
	/* xorshift64*: fast, deterministic, good enough for a workload */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ull;
}

static int put(struct synth *s, struct synth_thread *t, unsigned int kind,
	       int32_t func_id, const uint64_t *args, uint32_t nargs,
	       const void *data, uint32_t size, uint16_t type)
{
	struct xrayfdr_event ev = {
		.tsc = s->tsc,
		.wall_sec = 1700000000 + s->tsc / FREQUENCY,
		.wall_usec =
			(uint32_t)(s->tsc % FREQUENCY / (FREQUENCY / 1000000)),
		.kind = kind,
		.func_id = func_id,
		.tid = t->tid,
		.pid = s->pid,
		.cpu = t->cpu,
		.event_type = type,
		.nargs = nargs,
		.args = args,
		.data_size = size,
		.data = data,
	};

	s->tsc += 5 + next_rand(s) % 400;
	s->nevents++;
	return xrayfdr_writer_event(s->w, &ev);
}

static int sched_event(struct synth *s, struct synth_thread *t, uint8_t kind,
		       uint16_t prev_cpu)
{
	struct xrayfdr_sched_event se = {
		.kind = kind,
		.flags = kind == XRAYFDR_SCHED_SWITCH_OUT ?
				 XRAYFDR_SCHED_PREEMPTED :
				 0,
		.cpu = t->cpu,
		.prev_cpu = prev_cpu,
		.tid = t->tid,
	};
	uint8_t payload[XRAYFDR_SCHED_PAYLOAD_SIZE];

	xrayfdr_sched_encode(payload, &se);
	return put(s, t, XRAYFDR_EV_CUSTOM, 0, NULL, 0, payload,
		   sizeof(payload), 0);
}

/* A burst starts: the thread is switched in, on another CPU now and then. */
static int burst_start(struct synth *s, struct synth_thread *t)
{
	uint16_t prev = t->cpu;
	int ret;

	if (!s->sched || !t->switched_out)
		return 0;
	t->switched_out = false;
	if (next_rand(s) % 4 == 0) {
		t->cpu = (uint16_t)((t->cpu + 1) % 4);
		ret = sched_event(s, t, XRAYFDR_SCHED_MIGRATE, prev);
		if (ret)
			return ret;
	}
	return sched_event(s, t, XRAYFDR_SCHED_SWITCH_IN, prev);
}

static int burst_end(struct synth *s, struct synth_thread *t)
{
	if (!s->sched)
		return 0;
	t->switched_out = true;
	return sched_event(s, t, XRAYFDR_SCHED_SWITCH_OUT, t->cpu);
}

/* One step of a thread's walk: enter, exit, tail call, or an event. */
static int step(struct synth *s, struct synth_thread *t)
{
	uint64_t r = next_rand(s);
	int32_t fn = (int32_t)(1 + r % s->functions);
	int ret;

	if (s->events && r % 97 == 0) {
		char msg[48];
		int n = snprintf(msg, sizeof(msg), "synthetic event %" PRIu64,
				 s->nevents);

		if (r % 2 || !s->typed_ok)
			return put(s, t, XRAYFDR_EV_CUSTOM, 0, NULL, 0, msg,
				   (uint32_t)n, 0);
		return put(s, t, XRAYFDR_EV_TYPED, 0, NULL, 0, msg, (uint32_t)n,
			   7);
	}
	/* Go deeper while shallow, come back up while deep. */
	if (t->depth < s->max_depth &&
	    (t->depth == 0 || r % s->max_depth >= t->depth)) {
		uint64_t arg = r >> 16;

		t->stack[t->depth++] = fn;
		t->calls++;
		s->calls++;
		if (s->wrap_every && s->calls % s->wrap_every == 0)
			s->tsc += (1ull << 32) + next_rand(s) % 1000;
		if (!s->sched && s->migrate_every &&
		    s->calls % s->migrate_every == 0)
			t->cpu = (uint16_t)((t->cpu + 1) % 4);
		if (s->args && fn % 5 == 0)
			return put(s, t, XRAYFDR_EV_ENTRY_ARGS, fn, &arg, 1,
				   NULL, 0, 0);
		return put(s, t, XRAYFDR_EV_ENTRY, fn, NULL, 0, NULL, 0, 0);
	}
	/* Now and then leave by a tail call into a sibling. */
	if (r % 13 == 0 && t->depth > 0) {
		int32_t callee = (int32_t)(1 + (r >> 8) % s->functions);

		ret = put(s, t, XRAYFDR_EV_TAIL_EXIT, t->stack[--t->depth],
			  NULL, 0, NULL, 0, 0);
		if (ret)
			return ret;
		t->stack[t->depth++] = callee;
		t->calls++;
		s->calls++;
		return put(s, t, XRAYFDR_EV_ENTRY, callee, NULL, 0, NULL, 0, 0);
	}
	return put(s, t, XRAYFDR_EV_EXIT, t->stack[--t->depth], NULL, 0, NULL,
		   0, 0);
}

/* Has the thread made all its calls (or the file reached its size)? */
static bool thread_done(struct synth *s, const struct synth_thread *t,
			uint64_t size, uint64_t calls)
{
	return size ? xrayfdr_writer_bytes(s->w) >= size : t->calls >= calls;
}

static int synth_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "fdr-version", required_argument, NULL, 'V' },
		{ "basic", no_argument, NULL, 'B' },
		{ "big-endian", no_argument, NULL, 'e' },
		{ "threads", required_argument, NULL, 't' },
		{ "calls", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 'S' },
		{ "functions", required_argument, NULL, 'f' },
		{ "depth", required_argument, NULL, 'd' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "args", no_argument, NULL, 'a' },
		{ "events", no_argument, NULL, 'E' },
		{ "wrap-every", required_argument, NULL, 'w' },
		{ "migrate-every", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "sched", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct synth s = { .rng = 1,
			   .tsc = 1000000000000ull,
			   .pid = 4242,
			   .functions = 16,
			   .max_depth = 8,
			   .migrate_every = 200 };
	uint64_t version = 0, threads = 2, calls = 1000, size = 0, depth = 8;
	uint64_t buffer_size = 0, seed = 1;
	bool big_endian = false;
	const char *output = NULL;
	struct synth_thread *ts;
	int opt, fd, ret = 0;

	while ((opt = getopt_long(argc, argv, "o:V:t:c:S:f:d:b:aEw:m:s:h",
				  longopts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'V':
			bad = parse_uint(optarg, 1, 5, &version);
			break;
		case 'B':
			s.basic = true;
			break;
		case 'e':
			big_endian = true;
			break;
		case 't':
			bad = parse_uint(optarg, 1, 1u << 20, &threads);
			break;
		case 'c':
			bad = parse_uint(optarg, 0, UINT64_MAX, &calls);
			break;
		case 'S':
			bad = parse_size(optarg, &size);
			break;
		case 'f':
			bad = parse_uint(optarg, 1, XRAYFDR_FUNC_ID_MASK,
					 &s.functions);
			break;
		case 'd':
			bad = parse_uint(optarg, 1, MAX_DEPTH, &depth);
			break;
		case 'b':
			bad = parse_size(optarg, &buffer_size);
			break;
		case 'a':
			s.args = true;
			break;
		case 'E':
			s.events = true;
			break;
		case 'K':
			s.sched = true;
			break;
		case 'w':
			bad = parse_uint(optarg, 0, UINT64_MAX, &s.wrap_every);
			break;
		case 'm':
			bad = parse_uint(optarg, 0, UINT64_MAX,
					 &s.migrate_every);
			break;
		case 's':
			bad = parse_uint(optarg, 0, UINT64_MAX, &seed);
			break;
		case 'h':
			synth_usage(stdout);
			return EXIT_OK;
		default:
			synth_usage(stderr);
			return EXIT_USAGE;
		}
		if (bad) {
			tool_error("synth",
				   "bad value '%s' for --%s (see --help)",
				   optarg, option_name(longopts, opt));
			return EXIT_USAGE;
		}
	}
	if (!output || optind != argc) {
		tool_error("synth",
			   "needs -o FILE and no other arguments (see --help)");
		return EXIT_USAGE;
	}
	if (s.basic && (s.events || version)) {
		tool_error("synth",
			   "--basic cannot carry --events or --fdr-version");
		return EXIT_USAGE;
	}
	s.max_depth = (unsigned int)depth;
	s.typed_ok = version != 1;
	s.rng = seed * 0x9e3779b97f4a7c15ull + 1;

	fd = strcmp(output, "-") ?
		     open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644) :
		     STDOUT_FILENO;
	if (fd < 0) {
		tool_error("synth", "%s: %s", output, strerror(errno));
		return EXIT_USAGE;
	}
	XRAYFDR_OPTS(xrayfdr_writer_opts, wopts, .basic = s.basic,
		     .version = (unsigned int)version, .big_endian = big_endian,
		     .constant_tsc = true, .nonstop_tsc = true,
		     .cycle_frequency = FREQUENCY, .buffer_size = buffer_size);
	s.w = xrayfdr_writer_new_fd(fd, &wopts);
	if (!s.w) {
		tool_error("synth", "cannot write %s: %s", output,
			   strerror(errno));
		return EXIT_USAGE;
	}
	ts = calloc(threads, sizeof(*ts));
	if (!ts) {
		tool_error("synth", "out of memory");
		return EXIT_USAGE;
	}
	for (uint64_t i = 0; i < threads; i++) {
		ts[i].tid = s.pid + 1 + (uint32_t)i;
		ts[i].cpu = (uint16_t)(i % 4);
	}
	/* Interleave threads in bursts, as a scheduler would. */
	for (;;) {
		bool more = false;

		for (uint64_t i = 0; i < threads && !ret; i++) {
			struct synth_thread *t = &ts[i];
			uint64_t burst = 1 + next_rand(&s) % 64;

			if (!t->depth && thread_done(&s, t, size, calls))
				continue;
			ret = burst_start(&s, t);
			for (uint64_t k = 0; k < burst && !ret; k++) {
				bool done = thread_done(&s, t, size, calls);

				if (done && !t->depth)
					break;
				if (done)
					ret = put(&s, t, XRAYFDR_EV_EXIT,
						  t->stack[--t->depth], NULL, 0,
						  NULL, 0, 0);
				else
					ret = step(&s, t);
			}
			if (!ret)
				ret = burst_end(&s, t);
			more |= t->depth || !thread_done(&s, t, size, calls);
		}
		if (ret || !more)
			break;
	}
	if (!ret)
		ret = xrayfdr_writer_close(s.w);
	else
		xrayfdr_writer_close(s.w);
	free(ts);
	if (fd != STDOUT_FILENO && close(fd) && !ret)
		ret = -errno;
	if (ret) {
		tool_error("synth", "%s: %s", output, strerror(-ret));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

const struct command cmd_synth = {
	.name = "synth",
	.summary = "write a synthetic XRay log (for demos, tests, benchmarks)",
	.run = synth_run,
	.usage = synth_usage,
};
