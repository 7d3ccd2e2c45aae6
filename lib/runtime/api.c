// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Start-up and shut-down, and the xrayfdr_* API.
 *
 * Loading the library does nothing unless a trace is asked for
 * (XRAYFDR_OPTIONS, XRAY_OPTIONS with patch_premain=true and xray_mode, or
 * the program's __xray_default_options() saying so): then the constructor
 * sets up FDR mode, patches every sled before main() runs, and the
 * destructor (or a fatal signal) writes the log.  Programs that
 * drive tracing through the API get the same set-up on first use.  This
 * is the top of the runtime: it drives the others through LLVM's API.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xrayfdr/runtime.h>
#include <xrayfdr/xray.h>

#include "../log.h"
#include "../util/opts.h"
#include "../util/outfile.h"
#include "basic.h"
#include "control.h"
#include "init.h"
#include "objects.h"
#include "state.h"
#include "trace.h"
#include "trigger.h"

static int opts_from(const struct xrayfdr_trace_opts *in, char *config,
		     size_t size)
{
	struct xrayfdr_trace_opts o = {
		.output = OPTS_GET(in, output, NULL),
		.logfile_base = OPTS_GET(in, logfile_base, NULL),
		.buffer_size = OPTS_GET(in, buffer_size, 0),
		.buffer_max = OPTS_GET(in, buffer_max, 0),
		.threshold_us = OPTS_GET(in, threshold_us, 0),
		.version = OPTS_GET(in, version, 0),
		.max_depth = OPTS_GET(in, max_depth, 0),
		.stream = OPTS_GET(in, stream, 0),
	};
	int n;

	if (!OPTS_VALID(in))
		return -E2BIG;
	if ((o.output && strpbrk(o.output, "\"")) ||
	    (o.logfile_base && strpbrk(o.logfile_base, "\"")))
		return -EINVAL;
	n = snprintf(config, size, "%s%s%s%s%s%s", o.output ? "output=\"" : "",
		     o.output ? o.output : "", o.output ? "\" " : "",
		     o.logfile_base ? "xray_logfile_base=\"" : "",
		     o.logfile_base ? o.logfile_base : "",
		     o.logfile_base ? "\" " : "");
#define NUM(field, name)                                                   \
	if (o.field && n >= 0 && (size_t)n < size)                         \
		n += snprintf(config + n, size - (size_t)n, name "=%llu ", \
			      (unsigned long long)o.field);
	NUM(buffer_size, "buffer_size")
	NUM(buffer_max, "buffer_max")
	NUM(threshold_us, "func_duration_threshold_us")
	NUM(version, "version")
	NUM(max_depth, "max_depth")
	NUM(stream, "stream")
#undef NUM
	return n >= 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

/* Start FDR mode with the environment's options plus @config, and patch. */
static int start(const char *config)
{
	int ret;

	if (rt_live.status != XRAY_LOG_UNINITIALIZED)
		return -EBUSY;
	if (__xray_log_init_mode("xray-fdr", config ? config : "") !=
	    XRAY_LOG_INITIALIZED)
		return rt_live.status == XRAY_LOG_UNINITIALIZED ? -EINVAL :
								  -EBUSY;
	ret = rt_patch_all(true);
	if (ret) {
		__xray_log_finalize();
		rt_api_lock();
		rt_live.status = XRAY_LOG_UNINITIALIZED;
		rt_api_unlock();
		return ret;
	}
	if (rt_live.opts.signals)
		rt_trace_install_signal_handlers();
	return 0;
}

static void missing_map(void)
{
	/* LLVM's words, which its tests look for, then ours */
	fprintf(stderr,
		"==%d==XRay instrumentation map missing. Not initializing XRay.\n",
		(int)getpid());
	pr_warn("nothing in this process is instrumented (build with clang -fxray-instrument)\n");
}

/* What LLVM's runtime does at start-up in basic mode: select and start
 * it from XRAY_BASIC_OPTIONS whatever patch_premain says, and patch if it
 * says so. */
static void start_basic(const struct rt_options *o)
{
	const char *env = getenv("XRAY_BASIC_OPTIONS");

	if (rt_init() ||
	    __xray_log_init_mode("xray-basic", env ? env : "") !=
		    XRAY_LOG_INITIALIZED ||
	    !o->patch_premain)
		return;
	if (rt_patch_all(true) == -ENOENT && o->verbosity)
		missing_map();
}

/* LLVM's patch_premain=true without a mode: the sleds patched, nothing
 * recorded. */
static void patch_only(const struct rt_options *o)
{
	int ret;

	if (rt_init())
		return;
	ret = rt_patch_all(true);
	if (ret == -ENOENT && o->verbosity)
		missing_map();
	else if (!ret && o->verbosity)
		pr_info("patch_premain=true without xray_mode: the sleds are patched and nothing is recorded, as with LLVM's runtime (xray_mode=xray-fdr or XRAYFDR_OPTIONS records)\n");
}

__attribute__((constructor)) static void rt_startup(void)
{
	struct rt_options o;
	char err[512];

	rt_note_exec_name(); /* before main() can rename the thread */
	if (!getenv("XRAYFDR_OPTIONS") && !getenv("XRAY_OPTIONS") &&
	    !rt_program_has_options())
		return;
	if (rt_env_options(&o, err, sizeof(err))) {
		pr_warn("%s; tracing is off\n", err);
		return;
	}
	if (!strcmp(o.mode, "xray-basic") || o.naive_log) {
		start_basic(&o);
		return;
	}
	if (rt_options_patch_only(&o)) {
		patch_only(&o);
		return;
	}
	if (!rt_options_trace_at_start(&o) || rt_init())
		return;
	if (start(NULL) == -ENOENT && o.verbosity)
		missing_map();
}

/* The loader's counts of objects loaded and unloaded. */
static int load_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *n = arg;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
			    sizeof(info->dlpi_subs)) {
		n[0] = info->dlpi_adds;
		n[1] = info->dlpi_subs;
	}
	return 1;
}

static unsigned long long loads_seen[2];

/*
 * Attached, the library's dlopen() and dlclose() are not the ones the
 * program calls (it was loaded after they were bound): what the program
 * loads or unloads is seen here, within RT_CONTROL_TICK_MS.
 */
static void objects_tick(void)
{
	unsigned long long now[2] = { 0, 0 };

	dl_iterate_phdr(load_counts, now);
	if (now[1] != loads_seen[1])
		rt_objects_closed();
	if (now[0] != loads_seen[0])
		rt_objects_opened();
	loads_seen[0] = now[0];
	loads_seen[1] = now[1];
}

/*
 * Detach (the control channel's thread): every sled back as it was, the
 * log written, the threads and signal handlers of the trace gone.  The
 * library stays, inert, for the next attach.
 */
static int detach(void)
{
	int ret = rt_patch_all(false), r = 0;

	if (rt_live.status == XRAY_LOG_INITIALIZED)
		__xray_log_finalize();
	if (rt_live.status == XRAY_LOG_FINALIZED &&
	    __xray_log_flushLog() != XRAY_LOG_FLUSHED)
		r = -EIO;
	rt_api_lock();
	rt_trace_release();
	rt_api_unlock();
	rt_trace_remove_signal_handlers();
	rt_trigger_stop();
	return ret ? ret : r;
}

int xrayfdr_attach_begin(const char *options, const char *filter, char *err,
			 size_t errlen)
{
	struct rt_options o;
	int ret;

	if (!err || errlen < 2)
		return -EINVAL;
	err[0] = '\0';
	ret = rt_init();
	if (ret) {
		snprintf(err, errlen, "the runtime cannot start here: %s",
			 strerror(-ret));
		return ret;
	}
	if (rt_live.status != XRAY_LOG_UNINITIALIZED) {
		snprintf(
			err, errlen,
			"the process is traced already (by xrayfdr record, its own code, or an attach)");
		return -EBUSY;
	}
	rt_options_defaults(&o);
	ret = rt_options_parse(&o, options, 0, RT_OPT_CONFIG, "options", err,
			       errlen);
	if (!ret)
		ret = rt_trig_parse(o.triggers, err, errlen);
	if (!ret)
		ret = rt_objects_set_filter(filter, err, errlen);
	if (ret)
		return ret;
	dl_iterate_phdr(load_counts, loads_seen);
	rt_control_set_detach(detach);
	rt_control_set_tick(objects_tick);
	ret = start(options);
	if (!ret && !rt_control_listening()) {
		snprintf(
			err, errlen,
			"no control channel: detach could not reach the process");
		detach();
		ret = -ENOTCONN;
	} else if (ret == -ENOENT) {
		snprintf(
			err, errlen,
			"nothing in this process is instrumented (build with clang -fxray-instrument)");
	} else if (ret) {
		snprintf(err, errlen, "tracing did not start: %s",
			 strerror(-ret));
	}
	if (ret)
		rt_control_set_detach(NULL);
	return ret;
}

/* LLVM's entry point, here with the constructor: a static link that
 * names it (-Wl,-u,__xray_init) pulls in the start-up from the
 * environment too. */
void __xray_init(void)
{
	rt_init();
}

__attribute__((destructor)) static void rt_shutdown(void)
{
	rt_basic_shutdown();
	if (rt_live.status == XRAY_LOG_INITIALIZED)
		__xray_log_finalize();
	if (rt_live.status == XRAY_LOG_FINALIZED &&
	    rt_live.flush_status != XRAY_LOG_FLUSHED)
		__xray_log_flushLog();
}

static int fail(int err)
{
	errno = -err;
	return err;
}

int xrayfdr_trace_start(const struct xrayfdr_trace_opts *opts)
{
	char config[2 * PATH_MAX + 256];
	int ret = rt_init();

	if (!ret)
		ret = opts_from(opts, config, sizeof(config));
	if (!ret)
		ret = start(config);
	return ret ? fail(ret) : 0;
}

int xrayfdr_trace_stop(void)
{
	if (rt_init() || rt_live.status != XRAY_LOG_INITIALIZED)
		return fail(-EINVAL);
	__xray_log_finalize();
	return 0;
}

int xrayfdr_trace_flush(char *path, size_t size)
{
	if (rt_init() || rt_live.status == XRAY_LOG_UNINITIALIZED)
		return fail(-ENODATA);
	if (rt_live.status != XRAY_LOG_FINALIZED)
		return fail(-EAGAIN);
	if (__xray_log_flushLog() != XRAY_LOG_FLUSHED)
		return fail(-EIO);
	if (path && size)
		snprintf(path, size, "%s", rt_live.last_log);
	return 0;
}

int xrayfdr_trace_stats(struct xrayfdr_trace_stats *stats)
{
	struct rt_totals tot;

	if (!OPTS_HAS(stats, sz))
		return fail(-EINVAL);
	rt_api_lock();
	rt_trace_totals(&tot);
	rt_api_unlock();
	rt_totals_give(stats, &tot);
	return 0;
}

int xrayfdr_snapshot(const char *path, const struct xrayfdr_snapshot_opts *opts)
{
	struct xrayfdr_trace_stats *stats = OPTS_GET(opts, stats, NULL);
	bool overwrite = OPTS_GET(opts, overwrite, false);
	struct rt_totals tot;
	int fd, ret;

	if (!OPTS_VALID(opts))
		return fail(-E2BIG);
	if (!path)
		return fail(-EINVAL);
	ret = rt_init();
	if (ret)
		return fail(ret);
	rt_api_lock();
	ret = rt_trace_snapshot_ready();
	fd = ret ? ret : out_create(path, 0644, overwrite ? OUT_REPLACE : 0);
	if (fd >= 0) {
		ret = rt_trace_snapshot(fd, "api", &tot);
		if (close(fd) && !ret)
			ret = -errno;
	} else {
		ret = fd;
	}
	rt_api_unlock();
	if (ret)
		return fail(ret);
	if (OPTS_HAS(stats, sz))
		rt_totals_give(stats, &tot);
	return 0;
}

static int patch_result(int ret)
{
	return ret ? fail(ret) : 0;
}

int xrayfdr_patch(void)
{
	return patch_result(rt_patch(0, true));
}

int xrayfdr_unpatch(void)
{
	return patch_result(rt_patch(0, false));
}

int xrayfdr_patch_function(int32_t id)
{
	return patch_result(id ? rt_patch(id, true) : -EINVAL);
}

int xrayfdr_unpatch_function(int32_t id)
{
	return patch_result(id ? rt_patch(id, false) : -EINVAL);
}

int xrayfdr_tsc_info(struct xrayfdr_tsc_info *info)
{
	struct xrayfdr_tsc_info out = { .sz = sizeof(out) };

	if (!OPTS_HAS(info, sz))
		return fail(-EINVAL);
	rt_api_lock();
	if (!rt.tsc_known) {
		struct rt_options o;
		char err[512];

		if (rt_env_options(&o, err, sizeof(err))) {
			pr_warn("%s\n", err);
			rt_options_defaults(&o);
		}
		rt_tsc_ensure(&o);
	}
	if (rt.tsc_known) {
		out.hz = rt.tsc.hz;
		out.constant_tsc = rt.tsc.constant_tsc;
		out.nonstop_tsc = rt.tsc.nonstop_tsc;
		out.reliable = rt.tsc.reliable;
		out.source = rt_tsc_source_name(rt.tsc.source);
	}
	rt_api_unlock();
	if (!out.hz)
		return fail(-ENODATA);
	OPTS_PUT(info, &out);
	return 0;
}

int xrayfdr_object_info(unsigned int index, struct xrayfdr_object_info *info)
{
	struct xrayfdr_object_info out = { .sz = sizeof(out) };
	int ret = rt_init();

	if (!OPTS_HAS(info, sz))
		return fail(-EINVAL);
	if (ret)
		return fail(ret);
	rt_api_lock();
	ret = rt_object_describe(index, &out);
	rt_api_unlock();
	if (ret)
		return fail(ret);
	OPTS_PUT(info, &out);
	return 0;
}
