// SPDX-License-Identifier: GPL-2.0-only
/* The losses every summary line reports (lib/util/losses.c): each count
 * in its words when it is not 0, nothing when it is. */
#include <string.h>

#include "testutil.h"
#include "../../lib/util/losses.h"

static void test_losses(void **state)
{
	char buf[LOSSES_TEXT_MAX];

	(void)state;
	assert_string_equal(losses_text(buf, 0, 0), "");
	assert_string_equal(losses_text(buf, 15, 0),
			    ", 15 scheduler records lost");
	assert_string_equal(losses_text(buf, 0, 2),
			    ", 2 damaged parts of the rings skipped");
	assert_string_equal(
		losses_text(buf, 1, 10),
		", 1 scheduler records lost, 10 damaged parts of the rings skipped");
	/* the longest fits */
	memset(buf, 'x', sizeof(buf));
	assert_string_equal(
		losses_text(buf, UINT64_MAX, UINT64_MAX),
		", 18446744073709551615 scheduler records lost, 18446744073709551615 damaged parts of the rings skipped");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_losses),
	};

	return cmocka_run_group_tests_name("losses", tests, NULL, NULL);
}
