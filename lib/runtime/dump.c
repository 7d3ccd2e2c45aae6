// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Dumping a session the kernel module kept after its process died: the
 * crash recorder's other half (xrayfdr_session_dump(), xrayfdr-ctl dump).
 *
 * The dumping process attaches to the session read-only, maps its rings
 * as a view of the CPU sink's (rt_cpu_view_open()), describes the session's trace
 * in a struct rt_trace of its own from what that process left in the
 * session's notes (ring.h): the log's version and buffer size, its TSC
 * facts, its program and instrumented objects; and writes it with the
 * same drain and log writer (logfile.h) as the dead process's own flush
 * would have.  The process's own trace (rt_live) is not touched.  The
 * notes are in memory the process could write, so every value is checked
 * and a missing one falls back to the module's own facts.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/xray_fdr.h>
#include <xrayfdr/runtime.h>
#include <xrayfdr/xray.h>

#include "../fdr/frame.h"
#include "../log.h"
#include "../util/opts.h"
#include "../util/outfile.h"
#include "dump.h"
#include "logfile.h"
#include "options.h"
#include "ring.h"
#include "sink.h"
#include "state.h"

/* The value of "key=" in @notes as a number; @dflt if absent or bad. */
static uint64_t note_u64(const char *notes, const char *key, uint64_t dflt)
{
	size_t klen = strlen(key);

	for (const char *p = notes; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			char *end;
			unsigned long long v = strtoull(p + klen + 1, &end, 10);

			return *end == '\n' || !*end ? v : dflt;
		}
	}
	return dflt;
}

/*
 * The object lines of @notes (and its program), for the info event: paths
 * the dead process wrote, kept as text and never opened here, with control
 * characters made '?' so no tool that prints them sends a terminal escape.
 */
static void note_objects(const char *notes, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (const char *p = notes; p && *p;
	     p = strchr(p, '\n'), p = p ? p + 1 : p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);

		if (strncmp(p, "object=", 7) && strncmp(p, "program=", 8) &&
		    strncmp(p, "build_id=", 9))
			continue;
		if (n + len + 2 > size) /* a newline and the NUL may follow */
			break;
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)p[i];

			out[n++] = (c < 0x20 && c != '\n') || c == 0x7f ?
					   '?' :
					   (char)c;
		}
		if (!eol)
			out[n++] = '\n';
		out[n] = '\0';
	}
}

/* The enum rt_tsc_source of a tsc_source= name. */
static enum rt_tsc_source note_source(const char *notes)
{
	static const enum rt_tsc_source all[] = { RT_TSC_SYSFS, RT_TSC_PERF,
						  RT_TSC_CPUID,
						  RT_TSC_CALIBRATE };
	const char *p = strstr(notes, "\ntsc_source=");

	for (size_t i = 0; p && i < sizeof(all) / sizeof(all[0]); i++) {
		const char *name = rt_tsc_source_name(all[i]);
		size_t n = strlen(name);

		if (!strncmp(p + 12, name, n) && p[12 + n] == '\n')
			return all[i];
	}
	return RT_TSC_SYSFS; /* the module's facts */
}

/* What the log holds, as far as the caller's struct reaches: the
 * writer's drops as its rings count them. */
static void give_stats(struct xrayfdr_trace_stats *out,
		       const struct rt_trace *view, const struct rt_totals *tot)
{
	struct rt_totals t = *tot;

	t.dropped = view->dropped;
	rt_totals_give(out, &t);
}

/* The log of @view, whose rings @rings are (a drain of them), to @out. */
static int write_view(const struct rt_trace *view, struct rt_cpu_view *rings,
		      int out, const char *objects, const char *snapshot,
		      struct rt_totals *tot)
{
	const struct rt_log_extra x = { .objects = objects,
					.snapshot = snapshot };
	struct rt_drain d = { .trace = view };
	int ret;

	rt_cpu_view_drain(rings, &d);
	ret = rt_log_write(view, out, &d, &x, tot);
	view->sink->drain_end(&d);
	return ret;
}

static int fail(int err)
{
	errno = -err;
	return err;
}

/*
 * Map the session @fd into *@rings (a copy of them for a @snapshot) and
 * describe its trace in @view from its notes; its objects into @objects.
 */
static int view_prepare(int fd, uint32_t id, const char *snapshot,
			struct rt_cpu_view **rings, struct rt_trace *view,
			char *objects, size_t size)
{
	static char notes[RT_NOTES_MAX];
	const struct xray_fdr_header *h;
	unsigned int version;
	uint64_t buffer_size;
	char err[256];
	int ret;

	ret = rt_cpu_view_open(fd, rings, err, sizeof(err));
	if (!ret && snapshot)
		ret = rt_cpu_view_copy(*rings, err, sizeof(err));
	if (ret) {
		pr_warn("session %u: %s\n", id, err);
		return ret;
	}
	h = rt_cpu_view_header(*rings);
	rt_cpu_notes(*rings, notes, sizeof(notes));
	if (strncmp(notes, "xrayfdr-session 1\n", 18))
		pr_warn("session %u: its notes are missing or damaged; the log has the module's TSC facts and no objects\n",
			id);
	version = (unsigned int)note_u64(notes, "version", 5);
	if (version != 1)
		version = 5;
	buffer_size = note_u64(notes, "buffer_size", h->subbuf_size);
	if (buffer_size < RT_MIN_BUFFER_SIZE ||
	    buffer_size > RT_MAX_BUFFER_SIZE)
		buffer_size = h->subbuf_size;
	note_objects(notes, objects, size);

	*view = (struct rt_trace){
		.sink = &rt_cpu_sink,
		.capacity = fdr_frame_capacity(version, buffer_size),
		.pid = (pid_t)note_u64(notes, "pid", h->owner_pid),
		.tsc = {
			.hz = note_u64(notes, "tsc_hz", h->tsc_khz * 1000),
			.constant_tsc = note_u64(
				notes, "constant_tsc",
				!!(h->tsc_flags & XRAY_FDR_TSC_CONSTANT)),
			.nonstop_tsc = note_u64(
				notes, "nonstop_tsc",
				!!(h->tsc_flags & XRAY_FDR_TSC_NONSTOP)),
			.reliable = note_u64(
				notes, "tsc_reliable",
				!!(h->tsc_flags & XRAY_FDR_TSC_RELIABLE)),
			.source = note_source(notes),
		},
		.dropped = rt_cpu_user_lost(*rings),
	};
	view->opts.version = version;
	view->opts.buffer_size = buffer_size;
	return rt_cpu_view_setup(*rings, version, view->capacity, view->pid);
}

int rt_dump_attached(int fd, uint32_t id, const char *path, int out,
		     bool overwrite, const char *snapshot,
		     struct xrayfdr_trace_stats *stats)
{
	static char objects[RT_NOTES_MAX];
	static struct rt_trace view; /* the session's trace, as its notes say */
	struct rt_cpu_view *rings = NULL;
	struct rt_totals tot;
	const char *name = path ? path : "the log";
	int ret;

	ret = view_prepare(fd, id, snapshot, &rings, &view, objects,
			   sizeof(objects));
	if (ret) {
		rt_cpu_view_close(rings);
		return ret;
	}
	/* mode 0600, so a dump root makes of another user's session is
	 * root's alone; never through a symlink or a second link */
	if (path)
		out = out_create(path, 0600, overwrite ? OUT_REPLACE : 0);
	ret = out < 0 ? out :
			write_view(&view, rings, out, objects, snapshot, &tot);
	rt_cpu_view_close(rings);
	if (path && out >= 0 && close(out) && !ret)
		ret = -errno;
	if (ret)
		pr_warn("%s: cannot write the log: %s\n", name,
			out_create_reason(ret) ? out_create_reason(ret) :
						 strerror(-ret));
	else if (OPTS_HAS(stats, sz))
		give_stats(stats, &view, &tot);
	return ret;
}

int xrayfdr_session_dump(uint32_t id, const char *path,
			 const struct xrayfdr_dump_opts *opts)
{
	struct xray_fdr_attach attach = { .size = sizeof(attach),
					  .session_id = id };
	struct xray_fdr_info info;
	int fd, ret;

	const char *device = OPTS_GET(opts, device, NULL);
	struct xrayfdr_trace_stats *stats = OPTS_GET(opts, stats, NULL);
	bool overwrite = OPTS_GET(opts, overwrite, false);
	const char *snapshot = OPTS_GET(opts, snapshot, NULL);

	if (!OPTS_VALID(opts))
		return fail(-E2BIG);
	if (!path)
		return fail(-EINVAL);
	if (!device)
		device = "/dev/xrayfdr";
	rt_api_lock();
	if (rt_live.status != XRAY_LOG_UNINITIALIZED) {
		/* this process's own trace uses the same state */
		pr_warn("cannot dump a session while this process traces\n");
		rt_api_unlock();
		return fail(-EBUSY);
	}
	fd = open(device, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = errno == ENOENT || errno == ENXIO ? -ENODEV : -errno;
		pr_warn("%s: %s\n", device, strerror(errno));
		goto out_unlock;
	}
	if (ioctl(fd, XRAY_FDR_IOC_ATTACH, &attach)) {
		ret = -errno;
		pr_warn("session %u: %s\n", id,
			errno == ENOENT ?
				(snapshot ? "no such session" :
					    "no such session is kept") :
			errno == EPERM ?
				"not yours (CAP_SYS_ADMIN may read it)" :
			errno == EBUSY ?
				(snapshot ?
					 "it has no rings yet" :
					 "its process still has it (a snapshot reads it)") :
				strerror(errno));
		goto out_close;
	}
	/* a dump is of rings no one writes; a live session's are copied */
	info.size = sizeof(info);
	if (!snapshot && !ioctl(fd, XRAY_FDR_IOC_INFO, &info) &&
	    !(info.state & XRAY_FDR_STATE_RETAINED)) {
		pr_warn("session %u: its process still has it (a snapshot reads it)\n",
			id);
		ret = -EBUSY;
		goto out_close;
	}
	ret = rt_dump_attached(fd, id, path, -1, overwrite, snapshot, stats);
out_close:
	close(fd);
out_unlock:
	rt_api_unlock();
	return ret ? fail(ret) : 0;
}

int xrayfdr_rings_write(int rings, int out,
			const struct xrayfdr_dump_opts *opts)
{
	struct xrayfdr_trace_stats *stats = OPTS_GET(opts, stats, NULL);
	const char *snapshot = OPTS_GET(opts, snapshot, NULL);
	int ret;

	if (!OPTS_VALID(opts))
		return fail(-E2BIG);
	if (rings < 0 || out < 0)
		return fail(-EBADF);
	rt_api_lock();
	if (rt_live.status != XRAY_LOG_UNINITIALIZED) {
		pr_warn("cannot read rings while this process traces\n");
		rt_api_unlock();
		return fail(-EBUSY);
	}
	ret = rt_dump_attached(rings, 0, NULL, out, false, snapshot, stats);
	rt_api_unlock();
	return ret ? fail(ret) : 0;
}
