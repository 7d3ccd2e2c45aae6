/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A trie of call stacks: one node per distinct path of function ids from a
 * thread's root call, with the time spent there.  Its size grows with the
 * number of distinct stacks, not with the trace.
 *
 * Nodes keep two accounts of their time:
 *  - llvm-xray stack's: durations of the node's calls split into
 *    "terminal" (the call was a leaf when it ended) and "intermediate"
 *    (it had callees) counts and sums;
 *  - exclusive (self) time, for flame graphs: the sum of self
 *    over a subtree is the time of its root.
 *
 * Children are kept in creation order, as llvm-xray keeps them, so that
 * outputs that walk the trie come out in the same order.
 */
#ifndef XRAYFDR_TOOLS_TRIE_H
#define XRAYFDR_TOOLS_TRIE_H

#include <stdbool.h>
#include <stdint.h>

#define TRIE_NONE UINT32_MAX

struct trie_node {
	int32_t func_id;
	uint32_t parent; /* TRIE_NONE for a root */
	uint32_t *children;
	uint32_t nchildren, cap;
	uint64_t term_count, inter_count;
	int64_t term_sum, inter_sum;
	uint64_t self;
};

struct trie_thread {
	uint32_t tid;
	uint32_t *roots;
	uint32_t nroots, cap;
};

struct trie {
	struct trie_node *nodes;
	uint32_t n, cap;
};

/* The child of @parent (TRIE_NONE: among @roots) for @func_id, created
 * at the end if absent.  Return its index, or TRIE_NONE if out of memory. */
uint32_t trie_child(struct trie *t, struct trie_thread *th, uint32_t parent,
		    int32_t func_id);

/* A new node (for merging), with @parent, no children.  TRIE_NONE on
 * failure. */
uint32_t trie_new_node(struct trie *t, uint32_t parent, int32_t func_id);
int trie_add_child(struct trie *t, uint32_t node, uint32_t child);
int trie_add_root(struct trie_thread *th, uint32_t node);

void trie_free(struct trie *t);
void trie_thread_free(struct trie_thread *th);

#endif
