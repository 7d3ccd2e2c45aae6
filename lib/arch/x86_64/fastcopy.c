// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copies of the fast paths next to the instrumented code (the
 * template and why: trampolines.S, "as a template").
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "../../runtime/thread.h"
#include "arch.h"

#define PAGE 4096
#define COPY_KEY PAGE
#define COPY_SLOW (PAGE + 8)
#define COPY_CS (PAGE + 96)
#define CS_SIZE 32
/* thread mode's four kinds, then CPU mode's */
#define NCS 8
#define MAX_COPIES 64

extern const uint8_t rt_fast_template[];
extern const uint16_t rt_fast_template_entries[];
extern const uint16_t rt_fast_template_fixups[];
extern const uint16_t rt_fast_template_fixups_end[];
void rt_generic_entry(void);
void rt_generic_exit(void);
void rt_generic_tail(void);
void rt_generic_args(void);

_Static_assert(ARCH_FAST_COPY_SIZE == 2 * PAGE, "a code and a data page");

static uint64_t *volatile keys[MAX_COPIES];
static unsigned int ncopies;

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

int arch_fast_copy(void *at, long self, long rseq)
{
	/* the C path of each critical section */
	static void (*const slow[])(
		void) = { rt_generic_entry, rt_generic_exit,  rt_generic_tail,
			  rt_generic_args,  rt_generic_entry, rt_generic_exit,
			  rt_generic_tail,  rt_generic_args };
	uint8_t *p = at;
	unsigned int slot;

	slot = __atomic_fetch_add(&ncopies, 1, __ATOMIC_RELAXED);
	if (slot >= MAX_COPIES)
		return -ENOSPC;
	memcpy(p, rt_fast_template, ARCH_FAST_COPY_SIZE);
	for (const uint16_t *f = rt_fast_template_fixups;
	     f < rt_fast_template_fixups_end; f += 2) {
		int64_t v;
		int32_t d;

		/* every fixed operand is %fs:disp32, a SIB byte of 0x25 (no
		 * base, no index) right before its displacement */
		if (f[0] < 1 || f[0] > PAGE - 4 || p[f[0] - 1] != 0x25)
			return -EILSEQ;
		memcpy(&d, p + f[0], sizeof(d));
		v = (int64_t)d + (f[1] ? rseq : self);
		if (v < INT32_MIN || v > INT32_MAX)
			return -ERANGE;
		d = (int32_t)v;
		memcpy(p + f[0], &d, sizeof(d));
	}
	for (unsigned int k = 0; k < sizeof(slow) / sizeof(*slow); k++)
		put64(p + COPY_SLOW + 8 * k, (uint64_t)(uintptr_t)slow[k]);
	for (unsigned int k = 0; k < NCS; k++) {
		uint8_t *cs = p + COPY_CS + k * CS_SIZE;

		/* start and abort handler: offsets in the template */
		put64(cs + 8, get64(cs + 8) + (uintptr_t)p);
		put64(cs + 24, get64(cs + 24) + (uintptr_t)p);
	}
	put64(p + COPY_KEY, __atomic_load_n(&rt_fast_key, __ATOMIC_SEQ_CST));
	if (mprotect(p, PAGE, PROT_READ | PROT_EXEC))
		return -errno;
	__atomic_store_n(&keys[slot], (uint64_t *)(p + COPY_KEY),
			 __ATOMIC_SEQ_CST);
	/* a key stored meanwhile may have missed this copy */
	__atomic_store_n(keys[slot],
			 __atomic_load_n(&rt_fast_key, __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
	return 0;
}

uintptr_t arch_fast_copy_entry(const void *at, unsigned int kind,
			       const struct arch_tramps *set)
{
	/* the library's trampolines, in the order of the template's
	 * entries (rt_fast_template_entries, trampolines.S) */
	static void (*const library[])(void) = {
		rt_tramp_entry,	   rt_tramp_exit,      rt_tramp_tail,
		rt_tramp_args,	   rt_cpu_tramp_entry, rt_cpu_tramp_exit,
		rt_cpu_tramp_tail, rt_cpu_tramp_args,
	};
	uintptr_t tramp = arch_trampoline(kind, set);

	for (size_t i = 0; tramp && i < sizeof(library) / sizeof(*library); i++)
		if ((uintptr_t)library[i] == tramp)
			return (uintptr_t)at + rt_fast_template_entries[i];
	return 0;
}

void arch_fast_key_store(uint64_t key)
{
	unsigned int n = __atomic_load_n(&ncopies, __ATOMIC_SEQ_CST);

	__atomic_store_n(&rt_fast_key, key, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < n && i < MAX_COPIES; i++) {
		uint64_t *k = __atomic_load_n(&keys[i], __ATOMIC_SEQ_CST);

		if (k)
			__atomic_store_n(k, key, __ATOMIC_SEQ_CST);
	}
}
