// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* TSC facts: frequency and flags, from the most trusted source there is. */
#define LOG_DOMAIN "xrayfdr"
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/x86_64/arch.h"
#include "../log.h"
#include "tsc.h"

#define CALIBRATE_ROUNDS 3
#define CALIBRATE_NS 5000000ull /* per round */

const char *rt_tsc_source_name(enum rt_tsc_source s)
{
	switch (s) {
	case RT_TSC_SYSFS:
		return "sysfs";
	case RT_TSC_PERF:
		return "perf";
	case RT_TSC_CPUID:
		return "cpuid";
	case RT_TSC_CALIBRATE:
		return "calibrated";
	default:
		return "none";
	}
}

int rt_tsc_parse_uint(const char *buf, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(buf[i] - '0');
	}
	if (!i || (i < len && !(buf[i] == '\n' && i + 1 == len)))
		return -EBADMSG;
	*out = v;
	return 0;
}

/* Read a sysfs-style file: one decimal integer and a newline. */
static int read_uint(const char *dir, const char *file, uint64_t *out)
{
	char path[4096], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return rt_tsc_parse_uint(buf, (size_t)n, out);
}

static int from_sysfs(const char *dir, struct rt_tsc_facts *f)
{
	static const char *const files[] = { "tsc_khz", "constant_tsc",
					     "nonstop_tsc", "tsc_reliable" };
	uint64_t v[4];

	for (int i = 0; i < 4; i++) {
		int ret = read_uint(dir, files[i], &v[i]);

		if (ret == -ENOENT && i == 0)
			return ret; /* no module: quietly try the next source */
		if (!ret && (i == 0 ? v[i] == 0 : v[i] > 1))
			ret = -ERANGE;
		if (ret) {
			pr_warn("%s/%s: %s; not using the module's TSC facts\n",
				dir, files[i],
				ret == -EBADMSG ? "not one decimal integer" :
				ret == -ERANGE	? "value out of range" :
						  strerror(-ret));
			return ret;
		}
	}
	f->hz = v[0] * 1000;
	f->constant_tsc = v[1];
	f->nonstop_tsc = v[2];
	f->reliable = v[3];
	return 0;
}

uint64_t rt_tsc_hz_from_mult(uint32_t mult, uint16_t shift)
{
	unsigned __int128 num;

	if (!mult || shift > 63)
		return 0;
	num = (unsigned __int128)1000000000u << shift;
	return (uint64_t)((num + mult / 2) / mult);
}

static int from_perf(struct rt_tsc_facts *f)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	volatile struct perf_event_mmap_page *pc;
	uint32_t seq, mult;
	uint16_t shift;
	bool cap;
	int fd;

	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	pc = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (pc == MAP_FAILED)
		return -errno;
	do {
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		cap = pc->cap_user_time;
		mult = pc->time_mult;
		shift = pc->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (pc->lock != seq || (seq & 1));
	munmap((void *)pc, (size_t)page);
	if (!cap)
		return -ENODATA; /* the TSC is not the kernel's stable clock */
	f->hz = rt_tsc_hz_from_mult(mult, shift);
	return f->hz ? 0 : -ENODATA;
}

static int from_cpuid(struct rt_tsc_facts *f)
{
	unsigned int a, b, c, d, max;

	__cpuid(1, a, b, c, d);
	if (c & (1u << 31)) { /* under a hypervisor: its TSC leaf, in kHz */
		__cpuid(0x40000000, max, b, c, d);
		if (max >= 0x40000010 && max < 0x40010000) {
			__cpuid(0x40000010, a, b, c, d);
			if (a) {
				f->hz = (uint64_t)a * 1000;
				return 0;
			}
		}
	}
	max = __get_cpuid_max(0, NULL);
	if (max >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		if (a && b && c) {
			f->hz = (uint64_t)c * b / a;
			return 0;
		}
	}
	if (max >= 0x16) {
		__cpuid(0x16, a, b, c, d);
		if (a & 0xffff) {
			f->hz = (uint64_t)(a & 0xffff) * 1000000;
			return 0;
		}
	}
	return -ENODATA;
}

static uint64_t now_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int calibrate(struct rt_tsc_facts *f)
{
	uint64_t hz[CALIBRATE_ROUNDS], t;

	for (int i = 0; i < CALIBRATE_ROUNDS; i++) {
		uint64_t t0 = now_raw_ns(), c0 = arch_tsc(), t1, c1;

		do {
			t1 = now_raw_ns();
			c1 = arch_tsc();
		} while (t1 - t0 < CALIBRATE_NS);
		hz[i] = (uint64_t)((unsigned __int128)(c1 - c0) * 1000000000u /
				   (t1 - t0));
	}
	for (int i = 1; i < CALIBRATE_ROUNDS; i++) /* median */
		for (int j = i; j > 0 && hz[j] < hz[j - 1]; j--) {
			t = hz[j];
			hz[j] = hz[j - 1];
			hz[j - 1] = t;
		}
	f->hz = hz[CALIBRATE_ROUNDS / 2];
	return f->hz ? 0 : -ENODATA;
}

/* The kernel's view of the TSC flags, from /proc/cpuinfo's first "flags". */
static int cpuinfo_flags(const char *path, bool *constant, bool *nonstop)
{
	char line[8192];
	FILE *fp = fopen(path, "re");
	int ret = -ENODATA;

	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "flags", 5))
			continue;
		*constant = strstr(line, " constant_tsc") != NULL;
		*nonstop = strstr(line, " nonstop_tsc") != NULL;
		ret = 0;
		break;
	}
	fclose(fp);
	return ret;
}

static bool clocksource_is_tsc(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 3 && !strncmp(buf, "tsc", 3) && (n == 3 || buf[3] == '\n');
}

int rt_tsc_probe(const struct rt_tsc_paths *paths, unsigned int sources,
		 struct rt_tsc_facts *f)
{
	struct rt_tsc_paths p = {
		.sysfs = "/sys/kernel/xrayfdr",
		.cpuinfo = "/proc/cpuinfo",
		.clocksource =
			"/sys/devices/system/clocksource/clocksource0/current_clocksource",
	};
	unsigned int a, b, c, d;

	if (paths) {
		p.sysfs = paths->sysfs ? paths->sysfs : p.sysfs;
		p.cpuinfo = paths->cpuinfo ? paths->cpuinfo : p.cpuinfo;
		p.clocksource = paths->clocksource ? paths->clocksource :
						     p.clocksource;
	}
	memset(f, 0, sizeof(*f));
	if ((sources & RT_TSC_SYSFS) && !from_sysfs(p.sysfs, f)) {
		f->source = RT_TSC_SYSFS;
		return 0;
	}

	if ((sources & RT_TSC_PERF) && !from_perf(f))
		f->source = RT_TSC_PERF;
	else if ((sources & RT_TSC_CPUID) && !from_cpuid(f))
		f->source = RT_TSC_CPUID;
	else if ((sources & RT_TSC_CALIBRATE) &&
		 (paths && paths->calibrated_hz ?
			  (f->hz = paths->calibrated_hz) != 0 :
			  !calibrate(f)))
		f->source = RT_TSC_CALIBRATE;
	else
		return -ENODATA;

	if (cpuinfo_flags(p.cpuinfo, &f->constant_tsc, &f->nonstop_tsc)) {
		/* the invariant TSC bit promises both */
		if (__get_cpuid(0x80000007, &a, &b, &c, &d))
			f->constant_tsc = f->nonstop_tsc = (d >> 8) & 1;
	}
	f->reliable = clocksource_is_tsc(p.clocksource);
	return 0;
}
