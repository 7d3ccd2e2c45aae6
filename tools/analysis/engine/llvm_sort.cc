// SPDX-License-Identifier: GPL-2.0-only
// libstdc++'s std::sort, as llvm::sort calls it: the only way to leave
// elements that compare equal exactly where llvm-xray leaves them is to run
// the same algorithm.
#include <algorithm>

#include "llvm_compat.h"

void llvm_sort_by_walltime(uint32_t *idx, size_t n, const uint64_t *sec,
			   const uint32_t *usec)
{
	std::sort(idx, idx + n, [sec, usec](uint32_t a, uint32_t b) {
		return sec[a] < sec[b] && usec[a] < usec[b];
	});
}

void llvm_sort_by_key(uint32_t *idx, size_t n, const double *key,
		      bool descending)
{
	if (descending)
		std::sort(idx, idx + n, [key](uint32_t a, uint32_t b) {
			return key[a] > key[b];
		});
	else
		std::sort(idx, idx + n, [key](uint32_t a, uint32_t b) {
			return key[a] < key[b];
		});
}
