// SPDX-License-Identifier: GPL-2.0-only
/* The call-stack trie: a child is found again however its path hash
 * collides with others', across the hash table's growth, and
 * trie_finish() lists children in the order they were made. */
#include "testutil.h"
#include "../../tools/analysis/engine/trie.h"

/* A path hash for (parent, function): every hash at most 2 values, so
 * that lookups walk long runs of slots that are not theirs */
static uint32_t bad_hash(uint32_t parent, int32_t func_id)
{
	return (parent + (uint32_t)func_id) % 2 ? 0xdeadbeef : 0;
}

static void build(struct trie *t, struct trie_thread *th, uint32_t nroots,
		  uint32_t fanout, uint32_t (*hash)(uint32_t, int32_t))
{
	/* two levels under each root: node (r, a, b) for function
	 * 1000 * a + b under function a, both in increasing order */
	for (uint32_t r = 0; r < nroots; r++) {
		uint32_t root = trie_child(t, th, TRIE_NONE, 0, (int32_t)r);

		assert_int_not_equal(root, TRIE_NONE);
		for (uint32_t a = 0; a < fanout; a++) {
			uint32_t mid = trie_child(t, th, root,
						  hash(root, (int32_t)a),
						  (int32_t)a);

			assert_int_not_equal(mid, TRIE_NONE);
			for (uint32_t b = 0; b < fanout; b++) {
				int32_t f = (int32_t)(1000 * a + b);

				assert_int_not_equal(
					trie_child(t, th, mid, hash(mid, f), f),
					TRIE_NONE);
			}
		}
	}
}

static void check_trie(uint32_t nroots, uint32_t fanout,
		       uint32_t (*hash)(uint32_t, int32_t))
{
	struct trie t = { 0 };
	struct trie_thread th = { 0 };
	uint32_t n;

	build(&t, &th, nroots, fanout, hash);
	n = t.n;
	assert_int_equal(n, nroots * (1 + fanout + fanout * fanout));
	/* the same paths again: found, none made */
	build(&t, &th, nroots, fanout, hash);
	assert_int_equal(t.n, n);
	assert_int_equal(trie_finish(&t), 0);
	assert_int_equal(th.nroots, nroots);
	for (uint32_t r = 0; r < nroots; r++) {
		const struct trie_node *root = &t.nodes[th.roots[r]];

		assert_int_equal(root->func_id, r);
		assert_int_equal(root->parent, TRIE_NONE);
		assert_int_equal(root->nchildren, fanout);
		for (uint32_t a = 0; a < fanout; a++) {
			uint32_t m = root->children[a];
			const struct trie_node *mid = &t.nodes[m];

			assert_int_equal(mid->func_id, a);
			assert_int_equal(mid->parent, th.roots[r]);
			assert_int_equal(mid->nchildren, fanout);
			for (uint32_t b = 0; b < fanout; b++) {
				const struct trie_node *leaf =
					&t.nodes[mid->children[b]];

				assert_int_equal(leaf->func_id, 1000 * a + b);
				assert_int_equal(leaf->parent, m);
				assert_int_equal(leaf->nchildren, 0);
			}
		}
	}
	/* after trie_finish(), children are walked and added to lists */
	n = t.n;
	assert_int_not_equal(trie_child(&t, &th, th.roots[0], 0, 7777),
			     TRIE_NONE);
	assert_int_equal(t.n, n + 1);
	assert_int_equal(t.nodes[th.roots[0]].nchildren, fanout + 1);
	assert_int_equal(t.nodes[t.nodes[th.roots[0]].children[fanout]].func_id,
			 7777);
	assert_int_equal(trie_child(&t, &th, th.roots[0], 0, 7777), n);
	trie_free(&t);
	trie_thread_free(&th);
}

static void test_colliding_hashes(void **state)
{
	(void)state;
	check_trie(3, 20, bad_hash);
}

static uint32_t good_hash(uint32_t parent, int32_t func_id)
{
	return trie_path_hash(parent * 2654435761u, func_id);
}

/* more nodes than the first hash table holds (2^16 slots) */
static void test_growth(void **state)
{
	(void)state;
	check_trie(5, 160, good_hash);
}

/* Two finished tries end to end: the second's nodes, parents and children
 * renumbered, its lists still its nodes' */
static void test_append(void **state)
{
	struct trie t = { 0 }, f = { 0 };
	struct trie_thread tt = { 0 }, ft = { 0 };
	uint32_t base, n;

	(void)state;
	build(&t, &tt, 2, 3, good_hash);
	build(&f, &ft, 3, 4, good_hash);
	n = t.n;
	assert_int_equal(trie_finish(&t), 0);
	assert_int_equal(trie_finish(&f), 0);
	assert_int_equal(trie_append(&t, &f, &base), 0);
	assert_int_equal(base, n);
	assert_int_equal(f.n, 0);
	assert_int_equal(t.n, n + 3 * (1 + 4 + 16));
	for (uint32_t r = 0; r < ft.nroots; r++) {
		uint32_t root = ft.roots[r] + base;

		assert_int_equal(t.nodes[root].func_id, r);
		assert_int_equal(t.nodes[root].parent, TRIE_NONE);
		assert_int_equal(t.nodes[root].nchildren, 4);
		for (uint32_t a = 0; a < 4; a++) {
			uint32_t m = t.nodes[root].children[a];

			assert_true(m > root && m < t.n);
			assert_int_equal(t.nodes[m].parent, root);
			assert_int_equal(t.nodes[m].func_id, a);
			for (uint32_t b = 0; b < 4; b++) {
				uint32_t l = t.nodes[m].children[b];

				assert_int_equal(t.nodes[l].parent, m);
				assert_int_equal(t.nodes[l].func_id,
						 1000 * a + b);
			}
		}
	}
	/* the first trie's nodes are as they were */
	assert_int_equal(t.nodes[tt.roots[1]].nchildren, 3);
	assert_int_equal(t.nodes[t.nodes[tt.roots[1]].children[2]].parent,
			 tt.roots[1]);
	trie_free(&t);
	trie_free(&f);
	trie_thread_free(&tt);
	trie_thread_free(&ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colliding_hashes),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_append),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
