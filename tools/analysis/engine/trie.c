// SPDX-License-Identifier: GPL-2.0-only
/* The call-stack trie; see trie.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trie.h"

/* (parent, function) -> node + 1; 0 is an empty slot, as mmap() gives.
 * Found at the child's path hash (trie_child()), kept for growing. */
struct trie_slot {
	uint32_t parent;
	int32_t func_id;
	uint32_t node_plus_1;
	uint32_t path;
};

/*
 * Large arrays of the trie are mapped, not malloc()ed: they grow by
 * mremap() with no copy, and ask for transparent huge pages, as a trie
 * of millions of stacks is read at random and its walks would otherwise
 * be TLB misses on top of cache misses.
 */
static void *map_grow(void *old, size_t old_size, size_t size)
{
	void *p = old ? mremap(old, old_size, size, MREMAP_MAYMOVE) :
			mmap(NULL, size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);
	return p;
}

static void map_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

static int push_index(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
	if (*n == *cap) {
		uint32_t c = *n ? 2 * *n : 4;
		/* cap 0 with entries: a list in trie_finish()'s block */
		uint32_t *nv = *cap ? realloc(*v, c * sizeof(*nv)) :
				      malloc(c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		if (!*cap && *n)
			memcpy(nv, *v, *n * sizeof(*nv));
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

int trie_reserve(struct trie *t, uint32_t n)
{
	struct trie_node *nodes;

	if (n <= t->cap)
		return 0;
	if (n > TRIE_NONE / 2)
		return -ENOMEM;
	nodes = map_grow(t->nodes, (size_t)t->cap * sizeof(*nodes),
			 (size_t)n * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	t->cap = n;
	return 0;
}

uint32_t trie_new_node(struct trie *t, uint32_t parent, int32_t func_id)
{
	if (t->n == t->cap && trie_reserve(t, t->cap ? 2 * t->cap : 1u << 16))
		return TRIE_NONE;
	t->nodes[t->n] =
		(struct trie_node){ .func_id = func_id, .parent = parent };
	return t->n++;
}

int trie_add_child(struct trie *t, uint32_t node, uint32_t child)
{
	struct trie_node *p = &t->nodes[node];

	return push_index(&p->children, &p->nchildren, &p->cap, child);
}

int trie_add_root(struct trie_thread *th, uint32_t node)
{
	return push_index(&th->roots, &th->nroots, &th->cap, node);
}

uint32_t trie_path_hash(uint32_t parent_path, int32_t func_id)
{
	uint64_t key = (uint64_t)parent_path << 32 | (uint32_t)func_id;

	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

static uint32_t slot_of(uint32_t path, uint32_t bits)
{
	return path >> (32 - bits);
}

void trie_prefetch(const struct trie *t, uint32_t path)
{
	if (t->index)
		__builtin_prefetch(&t->index[slot_of(path, t->index_bits)]);
}

void trie_prefetch_node(const struct trie *t, uint32_t path)
{
	uint32_t mask, i;

	if (!t->index)
		return;
	mask = (1u << t->index_bits) - 1;
	i = slot_of(path, t->index_bits);
	for (int probe = 0; probe < 4 && t->index[i].node_plus_1; probe++) {
		if (t->index[i].path == path) {
			__builtin_prefetch(
				&t->nodes[t->index[i].node_plus_1 - 1], 1);
			return;
		}
		i = (i + 1) & mask;
	}
}

static void index_put(struct trie_slot *index, uint32_t bits,
		      const struct trie_slot *e)
{
	uint32_t mask = (1u << bits) - 1;
	uint32_t i = slot_of(e->path, bits);

	while (index[i].node_plus_1)
		i = (i + 1) & mask;
	index[i] = *e;
}

/* Room for one more entry, at most three quarters full. */
static int index_room(struct trie *t)
{
	uint32_t bits = t->index_bits ? t->index_bits + 1 : 16;
	size_t size = sizeof(struct trie_slot) << bits;
	struct trie_slot *index;

	if (t->index && (uint64_t)(t->indexed + 1) * 4 <= 3ull << t->index_bits)
		return 0;
	if (bits > 31)
		return -ENOMEM;
	index = map_grow(NULL, 0, size);
	if (!index)
		return -ENOMEM;
	for (uint64_t i = 0; t->index && i < 1ull << t->index_bits; i++)
		if (t->index[i].node_plus_1)
			index_put(index, bits, &t->index[i]);
	map_free(t->index, sizeof(struct trie_slot) << t->index_bits);
	t->index = index;
	t->index_bits = bits;
	return 0;
}

static uint32_t index_child(struct trie *t, uint32_t parent, uint32_t path,
			    int32_t func_id)
{
	uint32_t mask, i, node;

	if (index_room(t))
		return TRIE_NONE;
	mask = (1u << t->index_bits) - 1;
	for (i = slot_of(path, t->index_bits); t->index[i].node_plus_1;
	     i = (i + 1) & mask)
		if (t->index[i].parent == parent &&
		    t->index[i].func_id == func_id)
			return t->index[i].node_plus_1 - 1;
	node = trie_new_node(t, parent, func_id);
	if (node == TRIE_NONE)
		return TRIE_NONE;
	t->index[i] = (struct trie_slot){ .parent = parent,
					  .func_id = func_id,
					  .node_plus_1 = node + 1,
					  .path = path };
	t->indexed++;
	return node;
}

uint32_t trie_child(struct trie *t, struct trie_thread *th, uint32_t parent,
		    uint32_t path, int32_t func_id)
{
	const uint32_t *list;
	uint32_t n, node;

	if (parent != TRIE_NONE && !t->finished)
		return index_child(t, parent, path, func_id);
	if (parent == TRIE_NONE) {
		list = th->roots;
		n = th->nroots;
	} else {
		list = t->nodes[parent].children;
		n = t->nodes[parent].nchildren;
	}
	for (uint32_t i = 0; i < n; i++)
		if (t->nodes[list[i]].func_id == func_id)
			return list[i];
	node = trie_new_node(t, parent, func_id);
	if (node == TRIE_NONE)
		return TRIE_NONE;
	if (parent == TRIE_NONE ? trie_add_root(th, node) :
				  trie_add_child(t, parent, node))
		return TRIE_NONE;
	return node;
}

void trie_drop_index(struct trie *t)
{
	map_free(t->index, sizeof(struct trie_slot) << t->index_bits);
	t->index = NULL;
	t->index_bits = 0;
	t->indexed = 0;
}

static int add_block(struct trie *t, uint32_t *block)
{
	uint32_t **b = realloc(t->blocks, (t->nblocks + 1) * sizeof(*b));

	if (!b)
		return -ENOMEM;
	t->blocks = b;
	t->blocks[t->nblocks++] = block;
	return 0;
}

int trie_finish(struct trie *t)
{
	uint32_t *block, at = 0;

	if (t->finished)
		return 0;
	trie_drop_index(t);
	/* every node but a root is a child; its parent came before it */
	block = malloc(((size_t)t->n + 1) * sizeof(*block));
	if (!block || add_block(t, block)) {
		free(block);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->n; i++)
		if (t->nodes[i].parent != TRIE_NONE)
			t->nodes[t->nodes[i].parent].nchildren++;
	for (uint32_t i = 0; i < t->n; i++) {
		t->nodes[i].children = block + at;
		at += t->nodes[i].nchildren;
		t->nodes[i].nchildren = 0;
	}
	for (uint32_t i = 0; i < t->n; i++)
		if (t->nodes[i].parent != TRIE_NONE) {
			struct trie_node *p = &t->nodes[t->nodes[i].parent];

			p->children[p->nchildren++] = i;
		}
	t->finished = true;
	return 0;
}

#define GIVE_BACK_NODES (1u << 16)

/* The whole pages of [@from, @to), which will not be read again. */
static void give_back(const void *from, const void *to)
{
	uintptr_t a = ((uintptr_t)from + 4095) & ~(uintptr_t)4095;
	uintptr_t b = (uintptr_t)to & ~(uintptr_t)4095;

	if (a < b)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

int trie_append(struct trie *t, struct trie *from, uint32_t *base)
{
	struct trie *f = from;
	uint32_t at = t->n;

	*base = at;
	trie_drop_index(f);
	if (!t->nodes) {
		trie_free(t);
		*t = *f;
		memset(f, 0, sizeof(*f));
		return 0;
	}
	if (f->n > TRIE_NONE / 2 - at || trie_reserve(t, at + f->n))
		return -ENOMEM;
	for (uint32_t i = 0; i < f->nblocks; i++)
		if (add_block(t, f->blocks[i])) {
			t->nblocks -= i;
			return -ENOMEM;
		}
	for (uint32_t i = 0; i < f->n; i++) {
		struct trie_node *n = &t->nodes[at + i];

		*n = f->nodes[i];
		if (n->parent != TRIE_NONE)
			n->parent += at;
		/* each list is one node's, renumbered once */
		for (uint32_t c = 0; c < n->nchildren; c++)
			n->children[c] += at;
		if ((i + 1) % GIVE_BACK_NODES == 0)
			give_back(&f->nodes[i + 1 - GIVE_BACK_NODES],
				  &f->nodes[i + 1]);
	}
	t->n += f->n;
	/* what the nodes and blocks hold is t's now */
	f->n = 0;
	f->nblocks = 0;
	trie_free(f);
	return 0;
}

uint64_t trie_saturated(const struct trie *t)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < t->n; i++)
		n += t->nodes[i].term_sum == INT64_MAX ||
		     t->nodes[i].inter_sum == INT64_MAX ||
		     t->nodes[i].self == UINT64_MAX;
	return n;
}

void trie_free(struct trie *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->nodes[i].cap)
			free(t->nodes[i].children);
	map_free(t->nodes, (size_t)t->cap * sizeof(*t->nodes));
	trie_drop_index(t);
	for (uint32_t i = 0; i < t->nblocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	memset(t, 0, sizeof(*t));
}

void trie_thread_free(struct trie_thread *th)
{
	free(th->roots);
	memset(th, 0, sizeof(*th));
}
