// SPDX-License-Identifier: GPL-2.0-only
/* The runtime's options: LLVM's names and syntax, ours, and bad input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/testutil.h"
#include "../../lib/runtime/options.h"

static int parse(struct rt_options *o, const char *text,
		 enum rt_opt_origin origin, char *err)
{
	return rt_options_parse(o, text, 0, origin, "TEST", err, 256);
}

static void test_defaults(void **state)
{
	struct rt_options o;

	(void)state;
	rt_options_defaults(&o);
	assert_string_equal(o.mode, "xray-fdr");
	assert_string_equal(o.logfile_base, "xray-log.");
	assert_int_equal(o.buffer_size, RT_DEFAULT_BUFFER_SIZE);
	assert_int_equal(o.buffer_max, RT_DEFAULT_BUFFER_MAX);
	assert_false(o.buffer_max_set);
	assert_int_equal(o.version, 5);
	assert_int_equal(o.threshold_us, 0);
	assert_false(o.patch_premain);
	assert_true(o.signals);
	assert_int_equal(o.tsc_sources, RT_TSC_ALL);
}

static void test_llvm_names_and_separators(void **state)
{
	struct rt_options o;
	char err[256] = "";

	(void)state;
	rt_options_defaults(&o);
	assert_int_equal(parse(&o,
			       "patch_premain=true xray_mode=xray-fdr,"
			       "xray_logfile_base=/tmp/x-:verbosity=2",
			       RT_OPT_XRAY, err),
			 0);
	assert_true(o.patch_premain);
	assert_true(o.premain_set);
	assert_string_equal(o.logfile_base, "/tmp/x-");
	assert_int_equal(o.verbosity, 2);
	assert_int_equal(parse(&o,
			       "buffer_size=16K buffer_max=7 "
			       "func_duration_threshold_us=5 grace_period_ms=3",
			       RT_OPT_FDR, err),
			 0);
	assert_int_equal(o.buffer_size, 16384);
	assert_int_equal(o.buffer_max, 7);
	assert_true(o.buffer_max_set);
	assert_int_equal(o.threshold_us, 5);
	assert_int_equal(o.grace_period_ms, 3);
}

static void test_ours_and_quotes(void **state)
{
	struct rt_options o;
	char err[256] = "";

	(void)state;
	rt_options_defaults(&o);
	assert_int_equal(parse(&o,
			       "output=\"/tmp/a b:c,d\" version=1 fork=off "
			       "signals=no tsc_sources=perf+calibrate "
			       "tsc_sysfs='/x y' output_pid=42",
			       RT_OPT_OURS, err),
			 0);
	assert_string_equal(o.output, "/tmp/a b:c,d");
	assert_string_equal(o.tsc_sysfs, "/x y");
	assert_int_equal(o.version, 1);
	assert_int_equal(o.fork, RT_FORK_OFF);
	assert_false(o.signals);
	assert_int_equal(o.tsc_sources, RT_TSC_PERF | RT_TSC_CALIBRATE);
	assert_int_equal(o.output_pid, 42);
	/* a configuration string takes both LLVM's FDR names and ours */
	assert_int_equal(
		parse(&o, "buffer_max=3 version=5", RT_OPT_CONFIG, err), 0);
	assert_int_equal(o.buffer_max, 3);
	assert_int_equal(o.version, 5);
}

/* Every bad value is an error that names the variable, the option and
 * the value. */
static void test_bad_values(void **state)
{
	static const struct {
		const char *text;
		enum rt_opt_origin origin;
		const char *expect;
	} cases[] = {
		{ "buffer_size=abc", RT_OPT_FDR, "TEST: buffer_size=abc: " },
		{ "buffer_size=100", RT_OPT_FDR, "buffer_size=100" },
		{ "buffer_size=1G", RT_OPT_FDR, "buffer_size=1G" },
		{ "buffer_max=0", RT_OPT_FDR, "buffer_max=0" },
		{ "patch_premain=maybe", RT_OPT_XRAY,
		  "expected true or false" },
		{ "version=3", RT_OPT_OURS, "5 or 1" },
		{ "fork=sometimes", RT_OPT_OURS, "clean or off" },
		{ "tsc_sources=magic", RT_OPT_OURS, "tsc_sources=magic" },
		{ "colour=blue", RT_OPT_OURS, "unknown option 'colour'" },
		{ "output=\"open", RT_OPT_OURS, "unterminated" },
		{ "novalue", RT_OPT_FDR, "not of the form name=value" },
		{ "func_duration_threshold_us=99999999999999999999", RT_OPT_FDR,
		  "func_duration_threshold_us=" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rt_options o;
		char err[256] = "";

		rt_options_defaults(&o);
		assert_int_equal(parse(&o, cases[i].text, cases[i].origin, err),
				 -EINVAL);
		if (!strstr(err, cases[i].expect))
			fail_msg("'%s': message '%s' lacks '%s'", cases[i].text,
				 err, cases[i].expect);
	}
}

/* LLVM's variables may carry names of modes we do not implement: those
 * are ignored with a warning, not errors. */
static void test_unknown_llvm_names(void **state)
{
	struct rt_options o;
	char err[256] = "";

	(void)state;
	rt_options_defaults(&o);
	assert_int_equal(parse(&o, "xray_profiling_whatever=1 patch_premain=1",
			       RT_OPT_XRAY, err),
			 0);
	assert_true(o.patch_premain);
	assert_int_equal(parse(&o, "output=x", RT_OPT_FDR, err), 0);
	assert_string_equal(o.output, ""); /* not an LLVM name */
}

static void test_environment(void **state)
{
	struct rt_options o;
	char err[256] = "";

	(void)state;
	unsetenv("XRAYFDR_OPTIONS");
	setenv("XRAY_OPTIONS", "xray_logfile_base=a- verbosity=0", 1);
	setenv("XRAY_FDR_OPTIONS", "buffer_max=9 buffer_size=4K", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), 0);
	assert_false(rt_options_trace_at_start(&o));
	assert_int_equal(o.buffer_max, 9);

	/* ours win, and setting them alone asks for a trace */
	setenv("XRAYFDR_OPTIONS", "buffer_max=11", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), 0);
	assert_int_equal(o.buffer_max, 11);
	assert_int_equal(o.buffer_size, 4096);
	assert_string_equal(o.logfile_base, "a-");
	assert_true(rt_options_trace_at_start(&o));

	setenv("XRAYFDR_OPTIONS", "patch_premain=false", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), 0);
	assert_false(rt_options_trace_at_start(&o));

	/* a mode we do not have: refused, by name */
	unsetenv("XRAYFDR_OPTIONS");
	setenv("XRAY_OPTIONS", "patch_premain=true xray_mode=xray-profiling",
	       1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "xray_mode=xray-profiling"));

	/* basic mode: XRAY_BASIC_OPTIONS wins over XRAY_OPTIONS' old names,
	 * which stay apart for when it is unset (basic.c) */
	setenv("XRAY_OPTIONS",
	       "patch_premain=true xray_mode=xray-basic "
	       "xray_naive_log_max_stack_depth=7",
	       1);
	setenv("XRAY_BASIC_OPTIONS",
	       "func_duration_threshold_us=9 thread_buffer_size=99", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), 0);
	assert_true(o.basic_env);
	assert_int_equal(o.basic_threshold_us, 9);
	assert_int_equal(o.basic_buffer, 99);
	assert_int_equal(o.basic_max_depth, 64);
	assert_int_equal(o.naive_max_depth, 7);
	assert_int_equal(o.threshold_us, 0); /* FDR's is another */
	setenv("XRAY_BASIC_OPTIONS", "thread_buffer_size=1", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "thread_buffer_size=1"));
	unsetenv("XRAY_BASIC_OPTIONS");

	setenv("XRAY_FDR_OPTIONS", "buffer_max=many", 1);
	setenv("XRAY_OPTIONS", "", 1);
	rt_options_defaults(&o);
	assert_int_equal(rt_options_from_env(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "XRAY_FDR_OPTIONS: buffer_max=many"));
	unsetenv("XRAY_OPTIONS");
	unsetenv("XRAY_FDR_OPTIONS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_llvm_names_and_separators),
		cmocka_unit_test(test_ours_and_quotes),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_unknown_llvm_names),
		cmocka_unit_test(test_environment),
	};

	return cmocka_run_group_tests_name("runtime options", tests, NULL,
					   NULL);
}
