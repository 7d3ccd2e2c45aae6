// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrayfdr_rings_write() on the rings a process hands out (xrayfdr
 * snapshot, which root may run): a sealed memfd whose header claims rings
 * larger than half the machine's memory, sparse so that it costs the
 * process nothing, is refused at once, before any of it is copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/xray_fdr.h>
#include <xrayfdr/runtime.h>

#include "testutil.h"
#include "../../lib/runtime/ring.h"

static int quiet(enum xrayfdr_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* A sealed memfd laid out as rings of @nr_cpus areas of @count
 * sub-buffers of @size bytes; only its header page is written. */
static int rings_memfd(uint32_t nr_cpus, uint32_t size, uint32_t count)
{
	uint64_t area = RT_RING_CONTROL_SIZE + (uint64_t)size * count;
	struct xray_fdr_header h = {
		.magic = XRAY_FDR_MAGIC,
		.control_size = RT_RING_CONTROL_SIZE,
		.nr_cpus = nr_cpus,
		.subbuf_size = size,
		.subbuf_count = count,
		.area_size = area,
		.area_offset = RT_RING_CONTROL_SIZE,
	};
	int fd = memfd_create("test_rings_view",
			      MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(
		ftruncate(fd, (off_t)(RT_RING_CONTROL_SIZE + area * nr_cpus)),
		0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW),
			 0);
	return fd;
}

static void test_rings_over_half_the_memory_are_refused(void **state)
{
	uint64_t half = (uint64_t)sysconf(_SC_PHYS_PAGES) *
			(uint64_t)sysconf(_SC_PAGESIZE) / 2;
	/* 1 GiB sub-buffers, as many as make the rings pass half */
	uint32_t count = (uint32_t)(half >> 30) + 2;
	int rings, out = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)state;
	if (count > 65536)
		skip(); /* a machine of more than 128 TiB */
	rings = rings_memfd(1, 1u << 30, count);
	xrayfdr_set_print(quiet);
	assert_int_equal(xrayfdr_rings_write(rings, out, NULL), -EFBIG);
	assert_int_equal(errno, EFBIG);
	xrayfdr_set_print(NULL);
	close(rings);
	close(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rings_over_half_the_memory_are_refused),
	};

	/* without the limit the copy would run out of memory, or take
	 * minutes: either fails here */
	alarm(60);
	return cmocka_run_group_tests_name("rings view", tests, NULL, NULL);
}
