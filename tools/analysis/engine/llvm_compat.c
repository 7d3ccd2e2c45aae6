// SPDX-License-Identifier: GPL-2.0-only
/* LLVM's DenseMap: hashes and iteration order (see llvm_compat.h). */
#include <errno.h>
#include <stdlib.h>

#include "llvm_compat.h"

uint32_t llvm_hash_u32(uint32_t v)
{
	return v * 37u;
}

uint32_t llvm_hash_u64(uint64_t v)
{
	return (uint32_t)(v * 37ull);
}

/* LLVM's detail::combineHashValue, a 64-bit integer mix. */
uint32_t llvm_hash_pair(uint32_t a, uint32_t b)
{
	uint64_t key = (uint64_t)a << 32 | b;

	key += ~(key << 32);
	key ^= key >> 22;
	key += ~(key << 13);
	key ^= key >> 8;
	key += key << 3;
	key ^= key >> 15;
	key += ~(key << 27);
	key ^= key >> 31;
	return (uint32_t)key;
}

#define EMPTY UINT32_MAX

/* Quadratic probing from the hash, as DenseMap's LookupBucketFor. */
static void place(uint32_t *buckets, uint32_t nbuckets, const uint32_t *hashes,
		  uint32_t item)
{
	uint32_t mask = nbuckets - 1, at = hashes[item] & mask, step = 1;

	while (buckets[at] != EMPTY)
		at = (at + step++) & mask;
	buckets[at] = item;
}

static uint32_t *alloc_buckets(uint32_t n)
{
	uint32_t *b = malloc((size_t)n * sizeof(*b));

	if (b)
		for (uint32_t i = 0; i < n; i++)
			b[i] = EMPTY;
	return b;
}

int llvm_densemap_order(const uint32_t *hashes, size_t n, uint32_t *order)
{
	uint32_t nbuckets = 0, *buckets = NULL;
	size_t k = 0;

	if (n >= EMPTY / 4)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* grow at three quarters full: 64 buckets, then doubling,
		 * re-inserting the old buckets in bucket order */
		if ((i + 1) * 4 >= (size_t)nbuckets * 3) {
			uint32_t grown = nbuckets ? nbuckets * 2 : 64;
			uint32_t *nb = alloc_buckets(grown);

			if (!nb) {
				free(buckets);
				return -ENOMEM;
			}
			for (uint32_t b = 0; b < nbuckets; b++)
				if (buckets[b] != EMPTY)
					place(nb, grown, hashes, buckets[b]);
			free(buckets);
			buckets = nb;
			nbuckets = grown;
		}
		place(buckets, nbuckets, hashes, (uint32_t)i);
	}
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] != EMPTY)
			order[k++] = buckets[b];
	free(buckets);
	return 0;
}

int llvm_thread_ranks(const uint64_t *block_pid, const uint32_t *tid,
		      uint32_t n, uint32_t *rank)
{
	uint32_t *hashes = calloc((size_t)n + 1, sizeof(*hashes));
	uint32_t *order = malloc(((size_t)n + 1) * sizeof(*order));
	int ret = -ENOMEM;

	if (hashes && order) {
		for (uint32_t i = 0; i < n; i++)
			hashes[i] = llvm_hash_pair(llvm_hash_u64(block_pid[i]),
						   llvm_hash_u32(tid[i]));
		ret = llvm_densemap_order(hashes, n, order);
		if (!ret)
			for (uint32_t i = 0; i < n; i++)
				rank[order[i]] = i;
	}
	free(hashes);
	free(order);
	return ret;
}
