/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Orders that llvm-xray's output inherits from LLVM's containers and from
 * libstdc++, reproduced so that our output can equal it byte for byte:
 *
 *  - llvm::DenseMap iterates in bucket order, which depends on the hashes
 *    of its keys and the order they were inserted (llvm-xray groups a
 *    log's buffers by thread in one, and keeps per-function and per-thread
 *    tables in others);
 *  - llvm::sort is std::sort, which is not stable: where its comparator
 *    calls elements equal, their order is whatever libstdc++'s introsort
 *    leaves.  llvm-xray sorts a thread's buffers with a comparator that
 *    calls most of them equal, and account's rows by a column that often
 *    ties.
 */
#ifndef XRAYFDR_TOOLS_LLVM_COMPAT_H
#define XRAYFDR_TOOLS_LLVM_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DenseMapInfo hashes: 32-bit and 64-bit integers, and a pair. */
uint32_t llvm_hash_u32(uint32_t v);
uint32_t llvm_hash_u64(uint64_t v);
uint32_t llvm_hash_pair(uint32_t first_hash, uint32_t second_hash);

/*
 * The iteration order of a DenseMap into which @n distinct keys with
 * hashes @hashes were inserted in index order (and none erased): on
 * return order[i] is the index of the i-th key visited.  Return 0 or
 * -ENOMEM.
 */
int llvm_densemap_order(const uint32_t *hashes, size_t n, uint32_t *order);

/* The process id llvm-xray files a buffer under: that of its Pid record,
 * which buffers have from version 3 on; 0 before. */
static inline uint64_t llvm_block_pid(unsigned int version, uint32_t pid)
{
	return version >= 3 ? pid : 0;
}

/*
 * llvm-xray's loader walks an FDR log thread by thread, in the order of a
 * DenseMap keyed by (process id of the buffer's Pid record, or 0 before
 * version 3; thread id), filled in order of first appearance.  Given each
 * thread's key in order of first appearance, set rank[i] to the position
 * of thread i in that walk.  Return 0 or -ENOMEM.
 */
int llvm_thread_ranks(const uint64_t *block_pid, const uint32_t *tid,
		      uint32_t n, uint32_t *rank);

/*
 * std::sort(idx, idx + n) with comparator
 *   sec[a] < sec[b] && usec[a] < usec[b]
 * (llvm-xray's ordering of a thread's buffers by their wall-clock time).
 */
void llvm_sort_by_walltime(uint32_t *idx, size_t n, const uint64_t *sec,
			   const uint32_t *usec);

/* std::sort(idx, idx + n) comparing key[a] < key[b] (or > if @descending). */
void llvm_sort_by_key(uint32_t *idx, size_t n, const double *key,
		      bool descending);

#ifdef __cplusplus
}
#endif

#endif
