// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the dump of a kept session (lib/runtime/dump.c):
 * what root runs on rings, control pages and notes a dead process wrote.
 *
 * The input is a session's mapping (fuzz_dump.h): what the module would
 * have set and the process cannot change (the number of CPUs, 1 to 64,
 * the sub-buffer size and count, discard or overwrite mode, the TSC
 * flags), then the CPU areas the process wrote: control pages (commit
 * word, counters, notes) and sub-buffers.  The header page is written
 * here as the module writes it.
 *
 * Beyond "no crash, no hang (libFuzzer's -timeout), no sanitizer report",
 * the log the dump writes must read to its end without error, as
 * `xrayfdr dump --verify` reads it.
 *
 * FUZZ_DUMP_KEEP=1 keeps the log of a failing input in /dev/shm.
 *
 * Seeds: tests/runtime/test_sink with XRAYFDR_DUMP_SEEDS=DIR writes the
 * rings of each of its CPU scenarios in this form, the hostile ones of
 * its scribble scenario among them (tests/fuzz/make-corpus.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/xray_fdr.h>
#include <xrayfdr/fdr.h>
#include <xrayfdr/runtime.h>

#include "../../lib/runtime/dump.h"
#include "../../lib/runtime/ring.h"
#include "fuzz_dump.h"

/* One mapping for every run, FUZZ_DUMP_MAX_BYTES of areas after the
 * header page: a file resized per run spends its time in page faults. */
#define MAP_BYTES (RT_RING_CONTROL_SIZE + FUZZ_DUMP_MAX_BYTES)
static int memfd = -1;
static uint8_t *map;
static size_t map_dirty; /* bytes the last run may have written */
static char out_path[64];

static int quiet(enum xrayfdr_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* sealed, as a process's own rings are (a view refuses others) */
	memfd = memfd_create("fuzz_dump", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, MAP_BYTES) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW))
		abort();
	map = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, memfd,
		   0);
	if (map == MAP_FAILED)
		abort();
	snprintf(out_path, sizeof(out_path), "/dev/shm/fuzz_dump.%ld.xray",
		 (long)getpid());
	xrayfdr_set_print(quiet);
	return 0;
}

/* The log must read to its end with no error. */
static void check_log(void)
{
	struct xrayfdr_reader *r = xrayfdr_reader_open(out_path, NULL);
	const struct xrayfdr_event *ev;
	int ret;

	if (!r)
		abort();
	while ((ret = xrayfdr_reader_next_event(r, &ev)) == 1)
		;
	/* every buffer the dump wrote carries a checksum that matches */
	if (!ret && (xrayfdr_reader_stats(r)->sum_failed ||
		     xrayfdr_reader_stats(r)->sum_ok !=
			     xrayfdr_reader_stats(r)->buffers)) {
		fprintf(stderr, "the dump's log fails its checksums\n");
		abort();
	}
	if (ret) {
		const struct xrayfdr_diag *d = xrayfdr_reader_error(r);

		fprintf(stderr, "the dump's log does not verify: %s at %llu\n",
			d ? d->rule : "?",
			d ? (unsigned long long)d->offset : 0ull);
		if (getenv("FUZZ_DUMP_KEEP"))
			exit(1); /* the log stays, for `xrayfdr dump` */
		abort();
	}
	xrayfdr_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_dump_geometry g;
	struct xray_fdr_header *h;
	size_t total, areas;
	int ret;

	if (size < FUZZ_DUMP_GEOMETRY_SIZE)
		return -1;
	fuzz_dump_decode(data, &g);
	data += FUZZ_DUMP_GEOMETRY_SIZE;
	size -= FUZZ_DUMP_GEOMETRY_SIZE;
	areas = (size_t)g.area_size * g.nr_cpus;
	total = RT_RING_CONTROL_SIZE + areas;
	memset(map, 0, map_dirty > total ? map_dirty : total);
	map_dirty = total;
	h = (struct xray_fdr_header *)map;
	*h = (struct xray_fdr_header){
		.magic = XRAY_FDR_MAGIC,
		.abi_version = XRAY_FDR_ABI_VERSION,
		.header_size = sizeof(*h),
		.page_size = RT_RING_CONTROL_SIZE,
		.session_id = 1,
		.nr_cpus = g.nr_cpus,
		.geom_flags = g.geom_flags,
		.subbuf_size = g.subbuf_size,
		.subbuf_count = g.subbuf_count,
		.control_size = RT_RING_CONTROL_SIZE,
		.area_offset = RT_RING_CONTROL_SIZE,
		.area_size = g.area_size,
		.state = XRAY_FDR_STATE_RETAINED | XRAY_FDR_STATE_FROZEN,
		.tsc_flags = g.tsc_flags,
		.tsc_khz = 2000000,
		.owner_pid = 4242,
		.owner_uid = 1000,
	};
	fuzz_dump_layout(data, size, map + RT_RING_CONTROL_SIZE, &g);
	unlink(out_path);
	/* a snapshot's copy of the rings too, on odd sizes */
	ret = rt_dump_attached(memfd, 1, out_path, -1, false,
			       size % 2 ? "fuzz" : NULL, NULL);
	if (!ret)
		check_log();
	else if (ret != -EPROTO && ret != -ENOMEM)
		abort(); /* nothing else may stop a dump of readable memory */
	if (!getenv("FUZZ_DUMP_KEEP"))
		unlink(out_path);
	return 0;
}
