// SPDX-License-Identifier: GPL-2.0-only
/* The call-stack trie; see trie.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trie.h"

static int push_index(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t x)
{
	if (*n == *cap) {
		uint32_t c = *cap ? 2 * *cap : 4;
		uint32_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

uint32_t trie_new_node(struct trie *t, uint32_t parent, int32_t func_id)
{
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		struct trie_node *n;

		if (t->cap >= TRIE_NONE / 2)
			return TRIE_NONE;
		n = realloc(t->nodes, cap * sizeof(*n));
		if (!n)
			return TRIE_NONE;
		t->nodes = n;
		t->cap = cap;
	}
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

uint32_t trie_child(struct trie *t, struct trie_thread *th, uint32_t parent,
		    int32_t func_id)
{
	const uint32_t *list;
	uint32_t n, node;

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

void trie_free(struct trie *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->nodes[i].children);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

void trie_thread_free(struct trie_thread *th)
{
	free(th->roots);
	memset(th, 0, sizeof(*th));
}
