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
 *
 * While the trie is built, a child is found in a hash table at its path's
 * hash, which a caller keeps beside each frame and extends from the
 * parent's with trie_path_hash(): no step needs the one before it in
 * memory, so the cache misses of a thread's calls overlap, where a walk
 * of the parent's list costs two in a row (the list, then its nodes).
 * The lists are made once, by trie_finish(), from the nodes' parents.
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
	uint32_t nchildren;
	uint32_t cap; /* 0: children is in trie_finish()'s block */
	uint64_t term_count, inter_count;
	int64_t term_sum, inter_sum;
	uint64_t self;
};

/*
 * Sums of durations that stop at the largest value instead of wrapping
 * (a hostile log's durations can add up past 2^63 ticks); a sum there
 * is counted by trie_saturated().
 */
static inline int64_t trie_sum_add(int64_t sum, uint64_t dur)
{
	return dur >= (uint64_t)(INT64_MAX - sum) ? INT64_MAX :
						    sum + (int64_t)dur;
}

static inline uint64_t trie_self_add(uint64_t sum, uint64_t dur)
{
	return dur >= UINT64_MAX - sum ? UINT64_MAX : sum + dur;
}

struct trie_thread {
	uint32_t tid;
	uint32_t *roots;
	uint32_t nroots, cap;
};

struct trie_slot;

struct trie {
	struct trie_node *nodes;
	uint32_t n, cap;
	/* until trie_finish(): (parent, function) -> child */
	struct trie_slot *index;
	uint32_t index_bits, indexed;
	bool finished;
	/* the children lists trie_finish() made (more than one after
	 * trie_append()) */
	uint32_t **blocks;
	uint32_t nblocks;
};

/* The hash of a path: @parent_path's (anything for a root) and then
 * @func_id. */
uint32_t trie_path_hash(uint32_t parent_path, int32_t func_id);

/* Start reading where trie_child() will look for @path. */
void trie_prefetch(const struct trie *t, uint32_t path);

/* And, once that is read, start reading the node it leads to (the
 * first of that hash; a hint). */
void trie_prefetch_node(const struct trie *t, uint32_t path);

/* The child of @parent (TRIE_NONE: among @roots) for @func_id, created
 * at the end if absent; @path is trie_path_hash() of the child's path.
 * Return its index, or TRIE_NONE if out of memory. */
uint32_t trie_child(struct trie *t, struct trie_thread *th, uint32_t parent,
		    uint32_t path, int32_t func_id);

/* Make every node's list of children (in the order the children were
 * made); trie_child() walks them from then on.  0 or -ENOMEM. */
int trie_finish(struct trie *t);

/* Forget the hash of a trie that trie_child() will not add to again (its
 * nodes are to be copied into another's). */
void trie_drop_index(struct trie *t);

/*
 * Put @from's nodes after @t's, renumbered (its children lists too, which
 * become @t's); @from is left empty, its memory given back as its nodes
 * are copied, so that they are not held twice.  Both tries are finished,
 * or neither is.  @from's node i is @t's node *@base + i.  0 or -ENOMEM
 * (@from is then as it was).
 */
int trie_append(struct trie *t, struct trie *from, uint32_t *base);

/* Room for @n nodes in all.  0 or -ENOMEM. */
int trie_reserve(struct trie *t, uint32_t n);

/* A new node (for merging), with @parent, no children.  TRIE_NONE on
 * failure. */
uint32_t trie_new_node(struct trie *t, uint32_t parent, int32_t func_id);
int trie_add_child(struct trie *t, uint32_t node, uint32_t child);
int trie_add_root(struct trie_thread *th, uint32_t node);

void trie_free(struct trie *t);
void trie_thread_free(struct trie_thread *th);

/* The nodes one of whose sums stopped at the largest value. */
uint64_t trie_saturated(const struct trie *t);

#endif
