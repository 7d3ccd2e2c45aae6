// SPDX-License-Identifier: GPL-2.0-only
#include <stdlib.h>

#include "testutil.h"
#include "../../lib/util/u64map.h"

static int sum_values(void *ctx, void *value)
{
	*(uintptr_t *)ctx += (uintptr_t)value;
	return 0;
}

/* Insert, look up, delete in an order that exercises wrap-around chains,
 * checking against a plain array model. */
static void test_model(void **state)
{
	enum { N = 5000 };
	static uintptr_t model[N];
	struct u64map m = { 0 };
	uintptr_t sum = 0, want = 0;

	(void)state;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t key = thread_key((uint32_t)(i % 7),
					  (uint32_t)(i * 2654435761u));

		model[i] = i + 1;
		assert_int_equal(u64map_put(&m, key, (void *)model[i]), 0);
	}
	assert_int_equal(m.count, N);
	for (uint64_t i = 0; i < N; i += 3) {
		uint64_t key = thread_key((uint32_t)(i % 7),
					  (uint32_t)(i * 2654435761u));

		assert_ptr_equal(u64map_del(&m, key), (void *)model[i]);
		model[i] = 0;
	}
	for (uint64_t i = 0; i < N; i++) {
		uint64_t key = thread_key((uint32_t)(i % 7),
					  (uint32_t)(i * 2654435761u));

		assert_ptr_equal(u64map_get(&m, key), (void *)model[i]);
		want += model[i];
	}
	u64map_each(&m, sum_values, &sum);
	assert_int_equal(sum, want);
	/* replacing keeps the count */
	assert_int_equal(u64map_put(&m, thread_key(1, 2654435761u), (void *)7),
			 0);
	assert_ptr_equal(u64map_get(&m, thread_key(1, 2654435761u)), (void *)7);
	assert_null(u64map_del(&m, 12345678));
	u64map_free(&m);
	assert_null(u64map_get(&m, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
	};

	return cmocka_run_group_tests_name("u64map", tests, NULL, NULL);
}
