// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC facts and sysfs: the module must say what the guest kernel says
 * (its /proc/cpuinfo flags, its log, its clocksource), the same in sysfs,
 * the header page and netlink; and sysfs keeps its documented format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

/* Does the first "flags" line of /proc/cpuinfo list @flag? */
static int cpuinfo_flag(const char *flag)
{
	char line[8192], *tok, *save;
	FILE *f = fopen("/proc/cpuinfo", "re");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		found = 0;
		for (tok = strtok_r(strchr(line, ':') + 1, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (!strcmp(tok, flag))
				found = 1;
		break;
	}
	fclose(f);
	return found;
}

/* The kernel log, NUL-terminated, malloc()ed. */
static char *kernel_log(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf;
	int n;

	if (size <= 0)
		return NULL;
	buf = malloc(size + 1);
	if (!buf)
		return NULL;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	return buf;
}

/* "2000.024 MHz" after @key in @log, as kHz; the last one wins. */
static uint64_t log_mhz(const char *log, const char *key, const char *suffix)
{
	const char *p = log;
	unsigned long mhz, frac;
	uint64_t khz = 0;
	int end;

	while ((p = strstr(p, key))) {
		p += strlen(key);
		end = 0;
		if (sscanf(p, "%lu.%3lu MHz%n", &mhz, &frac, &end) == 2 &&
		    end && !strncmp(p + end, suffix, strlen(suffix)))
			khz = (uint64_t)mhz * 1000 + frac;
	}
	return khz;
}

TEST(cpuid_facts_match_proc_cpuinfo)
{
	EXPECT_EQ(cpuinfo_flag("constant_tsc"), (int)xs_sysfs("constant_tsc"));
	EXPECT_EQ(cpuinfo_flag("nonstop_tsc"), (int)xs_sysfs("nonstop_tsc"));
	EXPECT_EQ(cpuinfo_flag("tsc_known_freq"),
		  (int)xs_sysfs("tsc_known_freq"));
	TH_LOG("constant_tsc %d nonstop_tsc %d tsc_known_freq %d",
	       cpuinfo_flag("constant_tsc"), cpuinfo_flag("nonstop_tsc"),
	       cpuinfo_flag("tsc_known_freq"));
}

TEST(tsc_khz_is_the_kernels_calibration)
{
	char *log = kernel_log();
	uint64_t khz;

	ASSERT_NE(NULL, log);
	/* tsc_init() prints the TSC's frequency if it differs from the CPU's,
	 * the refinement work a better one if it runs.
	 */
	khz = log_mhz(log, "tsc: Detected ", " processor");
	if (log_mhz(log, "tsc: Detected ", " TSC"))
		khz = log_mhz(log, "tsc: Detected ", " TSC");
	if (log_mhz(log, "tsc: Refined TSC clocksource calibration: ", ""))
		khz = log_mhz(log,
			      "tsc: Refined TSC clocksource calibration: ", "");
	free(log);
	ASSERT_NE(0, khz);
	EXPECT_EQ(khz, xs_sysfs("tsc_khz"));
}

TEST(reliable_means_the_kernel_trusts_the_tsc)
{
	char cmdline[4096], *log = kernel_log();
	bool unstable;

	ASSERT_NE(NULL, log);
	ASSERT_EQ(0, xs_read_line("/proc/cmdline", cmdline, sizeof(cmdline)));
	unstable = strstr(log, "Marking TSC unstable");
	free(log);
	EXPECT_EQ(!unstable, xs_sysfs("tsc_reliable"));
	if (strstr(cmdline, "tsc=reliable")) {
		EXPECT_EQ(1, xs_sysfs("tsc_reliable"));
	}
	TH_LOG("tsc=reliable %s, kernel marked it unstable: %s",
	       strstr(cmdline, "tsc=reliable") ? "given" : "not given",
	       unstable ? "yes" : "no");
}

TEST(clocksource_fact_matches_the_current_clocksource)
{
	char cs[64];

	ASSERT_EQ(
		0,
		xs_read_line(
			"/sys/devices/system/clocksource/clocksource0/current_clocksource",
			cs, sizeof(cs)));
	EXPECT_EQ(!strcmp(cs, "tsc"), xs_sysfs("tsc_clocksource"));
	TH_LOG("current clocksource %s", cs);
}

TEST(header_page_and_netlink_carry_the_same_facts)
{
	uint32_t flags = 0;
	struct ctl_status st;
	struct xs_session s;
	struct ctl_nl nl;

	ASSERT_EQ(0, xs_setup(&s, 4096, 2, 0));
	ASSERT_EQ(0, ctl_nl_open(&nl));
	ASSERT_EQ(0, ctl_get_status(&nl, &st));
	if (xs_sysfs("constant_tsc"))
		flags |= XRAY_FDR_TSC_CONSTANT;
	if (xs_sysfs("nonstop_tsc"))
		flags |= XRAY_FDR_TSC_NONSTOP;
	if (xs_sysfs("tsc_reliable"))
		flags |= XRAY_FDR_TSC_RELIABLE;
	if (xs_sysfs("tsc_clocksource"))
		flags |= XRAY_FDR_TSC_CLOCKSOURCE;
	if (xs_sysfs("tsc_known_freq"))
		flags |= XRAY_FDR_TSC_KNOWN_FREQ;
	EXPECT_EQ(flags, s.hdr->tsc_flags);
	EXPECT_EQ(xs_sysfs("tsc_khz"), s.hdr->tsc_khz);
	EXPECT_EQ(flags, st.tsc_flags);
	EXPECT_EQ(xs_sysfs("tsc_khz"), st.tsc_khz);
	ctl_nl_close(&nl);
	xs_close(&s);
}

static const char *const values[] = {
	"abi_version",	   "sessions",		"sessions_retained",
	"switch_records",  "migration_records", "records_lost",
	"bytes_allocated", "bytes_mapped",	"tsc_khz",
	"constant_tsc",	   "nonstop_tsc",	"tsc_reliable",
	"tsc_clocksource", "tsc_known_freq",
};

TEST(sysfs_values_are_read_only_decimal_lines)
{
	char path[128], buf[64];
	struct stat st;
	unsigned int i;
	ssize_t n;
	FILE *f;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		snprintf(path, sizeof(path), XS_SYSFS "%s", values[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0444, st.st_mode & 0777) TH_LOG("%s", path);
		f = fopen(path, "re");
		ASSERT_NE(NULL, f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		ASSERT_LT(1, n);
		buf[n] = 0;
		/* one decimal integer, one newline */
		EXPECT_EQ(n - 1, (ssize_t)strspn(buf, "0123456789"))
		TH_LOG("%s: '%s'", path, buf);
		EXPECT_EQ('\n', buf[n - 1]);
	}
	EXPECT_EQ(XRAY_FDR_ABI_VERSION, xs_sysfs("abi_version"));
	EXPECT_GE(1, xs_sysfs("tsc_reliable"));
}

TEST(stats_summary_has_every_value)
{
	char line[128], name[64];
	unsigned long long v;
	unsigned int i, found = 0;
	FILE *f = fopen(XS_SYSFS "stats", "re");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		ASSERT_EQ(2, sscanf(line, "%63s %llu", name, &v));
		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			if (!strcmp(name, values[i]))
				found |= 1u << i;
		/* facts that do not move agree with their own file */
		if (!strcmp(name, "tsc_khz") || !strcmp(name, "abi_version") ||
		    !strcmp(name, "constant_tsc")) {
			EXPECT_EQ(xs_sysfs(name), v);
		}
	}
	fclose(f);
	EXPECT_EQ((1u << (sizeof(values) / sizeof(values[0]))) - 1, found);
}

TEST_HARNESS_MAIN
