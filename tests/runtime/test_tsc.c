// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC facts: the order of trust (the module's sysfs files, the kernel's
 * perf conversion, CPUID, calibration), fall-back on bad or missing
 * files, and the frequency against what the kernel says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/runtime/tsc.h"
#include "rtutil.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	rt_put_file(dir, name, text);
}

static int setup(void **state)
{
	(void)state;
	return rt_tmpdir(dir, "tsc");
}

static int teardown(void **state)
{
	(void)state;
	return rt_rmdir(dir);
}

static void test_parse_uint(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(rt_tsc_parse_uint("2000000\n", 8, &v), 0);
	assert_int_equal(v, 2000000);
	assert_int_equal(rt_tsc_parse_uint("7", 1, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(rt_tsc_parse_uint("", 0, &v), -EBADMSG);
	assert_int_equal(rt_tsc_parse_uint("\n", 1, &v), -EBADMSG);
	assert_int_equal(rt_tsc_parse_uint("12 \n", 4, &v), -EBADMSG);
	assert_int_equal(rt_tsc_parse_uint("12\n\n", 4, &v), -EBADMSG);
	assert_int_equal(rt_tsc_parse_uint("-1\n", 3, &v), -EBADMSG);
	assert_int_equal(rt_tsc_parse_uint("99999999999999999999\n", 21, &v),
			 -ERANGE);
}

static void test_hz_from_mult(void **state)
{
	(void)state;
	/* the kernel's cyc2ns for 2 GHz: mult = 2^31 / 2, shift 31 */
	assert_int_equal(rt_tsc_hz_from_mult(1u << 30, 31), 2000000000u);
	/* 2.4 GHz: mult 894784853, shift 31 -> 2.4e9 within rounding */
	assert_true(rt_tsc_hz_from_mult(894784853, 31) / 1000 == 2399999 ||
		    rt_tsc_hz_from_mult(894784853, 31) / 1000 == 2400000);
	assert_int_equal(rt_tsc_hz_from_mult(0, 31), 0);
}

/* The module's files win over everything, as they are. */
static void test_sysfs_first(void **state)
{
	struct rt_tsc_paths paths = { .sysfs = dir };
	struct rt_tsc_facts f;

	(void)state;
	put("tsc_khz", "1234567\n");
	put("constant_tsc", "0\n");
	put("nonstop_tsc", "1\n");
	put("tsc_reliable", "0\n");
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_ALL, &f), 0);
	assert_int_equal(f.source, RT_TSC_SYSFS);
	assert_int_equal(f.hz, 1234567000u);
	assert_false(f.constant_tsc);
	assert_true(f.nonstop_tsc);
	assert_false(f.reliable);
	assert_string_equal(rt_tsc_source_name(f.source), "sysfs");
}

/* A malformed or missing file means the module's facts are not used. */
static void test_sysfs_bad_falls_back(void **state)
{
	struct rt_tsc_paths paths = { .sysfs = dir };
	static const char *const bad[] = { "12x\n", "", "5\n6\n", "0\n" };
	struct rt_tsc_facts f;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("tsc_khz", bad[i]);
		put("constant_tsc", "1\n");
		put("nonstop_tsc", "1\n");
		put("tsc_reliable", "1\n");
		assert_int_equal(rt_tsc_probe(&paths, RT_TSC_ALL, &f), 0);
		assert_int_not_equal(f.source, RT_TSC_SYSFS);
	}
	put("tsc_khz", "1000\n");
	put("nonstop_tsc", "2\n"); /* a flag is 0 or 1 */
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_ALL, &f), 0);
	assert_int_not_equal(f.source, RT_TSC_SYSFS);
	put("nonstop_tsc", "1\n");
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/tsc_reliable", dir);
		unlink(path);
	}
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_ALL, &f), 0);
	assert_int_not_equal(f.source, RT_TSC_SYSFS);
	paths.sysfs = "/nonexistent/xrayfdr";
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_ALL, &f), 0);
	assert_int_not_equal(f.source, RT_TSC_SYSFS);
	/* nothing allowed, nothing found */
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_SYSFS, &f), -ENODATA);
}

/* Without the module, the flags are the kernel's /proc/cpuinfo ones. */
static void test_cpuinfo_flags(void **state)
{
	struct rt_tsc_paths paths = { .sysfs = "/nonexistent",
				      .cpuinfo = NULL };
	char path[128];
	struct rt_tsc_facts f;

	(void)state;
	put("cpuinfo",
	    "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good\n");
	snprintf(path, sizeof(path), "%s/cpuinfo", dir);
	paths.cpuinfo = path;
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_CALIBRATE, &f), 0);
	assert_int_equal(f.source, RT_TSC_CALIBRATE);
	assert_true(f.constant_tsc);
	assert_false(f.nonstop_tsc);
	put("clocksource", "tsc\n");
	snprintf(path, sizeof(path), "%s/clocksource", dir);
	paths.clocksource = path;
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_CALIBRATE, &f), 0);
	assert_true(f.reliable);
	put("clocksource", "hpet\n");
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_CALIBRATE, &f), 0);
	assert_false(f.reliable);
}

/* A frequency calibrated by another process (xrayfdr attach's tsc_hz=)
 * is taken where calibrating would be the answer, and only there. */
static void test_calibrated_elsewhere(void **state)
{
	struct rt_tsc_paths paths = { .sysfs = "/nonexistent",
				      .calibrated_hz = 1234567891 };
	struct rt_tsc_facts f;

	(void)state;
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_CALIBRATE, &f), 0);
	assert_int_equal(f.source, RT_TSC_CALIBRATE);
	assert_int_equal(f.hz, 1234567891);
	paths.calibrated_hz = 0;
	assert_int_equal(rt_tsc_probe(&paths, RT_TSC_CALIBRATE, &f), 0);
	assert_int_not_equal(f.hz, 1234567891);
}

/* The kernel's own figure, from its boot messages, when we may read them:
 * "tsc: Refined TSC clocksource calibration: 1999.999 MHz" or "tsc:
 * Detected 2000.000 MHz processor". */
static uint64_t kernel_tsc_khz(void)
{
	FILE *p = popen(
		"dmesg 2>/dev/null | grep -E 'tsc: (Refined TSC clocksource calibration|Detected) ' | tail -n1",
		"r");
	char line[256] = "";
	unsigned long mhz, frac;
	char *s;

	if (!p)
		return 0;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	s = strstr(line, "calibration: ");
	s = s ? s + 13 : strstr(line, "Detected ");
	if (s && s[0] == 'D')
		s += 9;
	if (!s || sscanf(s, "%lu.%3lu MHz", &mhz, &frac) != 2)
		return 0;
	return mhz * 1000 + frac;
}

/* Whatever source answers on this machine, the frequency is within
 * 0.1 % of the kernel's tsc_khz. */
static void test_frequency_is_true(void **state)
{
	struct rt_tsc_paths paths = { .sysfs = "/nonexistent" };
	uint64_t khz = kernel_tsc_khz();
	unsigned int sources[] = { RT_TSC_PERF, RT_TSC_CPUID,
				   RT_TSC_CALIBRATE };
	int answered = 0;

	(void)state;
	if (!khz) {
		skip_because(
			"the kernel's TSC frequency is not readable here (dmesg)");
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		struct rt_tsc_facts f;
		double err;

		if (rt_tsc_probe(&paths, sources[i], &f))
			continue; /* this source does not answer here */
		answered++;
		err = ((double)f.hz - (double)khz * 1000) /
		      ((double)khz * 1000);
		print_message("# %s: %llu Hz, kernel %llu kHz, %+.5f %%\n",
			      rt_tsc_source_name(f.source),
			      (unsigned long long)f.hz, (unsigned long long)khz,
			      err * 100);
		if (err > 0.001 || err < -0.001)
			fail_msg("%s is %.4f %% off the kernel's tsc_khz",
				 rt_tsc_source_name(f.source), err * 100);
	}
	assert_true(answered >= 1); /* calibration always answers */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_hz_from_mult),
		cmocka_unit_test(test_sysfs_first),
		cmocka_unit_test(test_sysfs_bad_falls_back),
		cmocka_unit_test(test_cpuinfo_flags),
		cmocka_unit_test(test_calibrated_elsewhere),
		cmocka_unit_test(test_frequency_is_true),
	};

	return cmocka_run_group_tests_name("runtime TSC facts", tests, setup,
					   teardown);
}
