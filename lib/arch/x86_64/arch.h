/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the runtime needs from an architecture: patching XRay sleds, the
 * trampolines they call, far-jump stubs, and the timestamp counter.
 *
 * x86_64 sleds (LLVM's encoding, checked byte for byte before patching):
 *
 *   entry, tail exit   eb 09 + 9-byte nop   ->  mov $word,%r10d; call tramp
 *   exit               c3 + 10-byte nop     ->  mov $word,%r10d; jmp tramp
 *
 * where word, unlike LLVM's plain id, is the first half of the sled's FDR
 * function record (arch_sled_word()), which the fast path stores as is.
 *   custom event       eb 0f + call sequence  ->  66 90 (falls into the call)
 *   typed event        eb 14 + call sequence  ->  66 90
 *
 * A patch writes bytes 2-10 first and then the first two bytes with one
 * atomic 16-bit store, so a thread running through the sled sees either
 * the old jump or the whole new sequence.  Unpatching stores only the first
 * two bytes back; the rest is never executed again and is left in place
 * (rewriting it could pull the instructions from under a thread that is
 * between the mov and the call).
 */
#ifndef XRAYFDR_LIB_ARCH_X86_64_ARCH_H
#define XRAYFDR_LIB_ARCH_X86_64_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xrayfdr/xray.h>

#include "../../xray/instr_map.h"

/* Bytes a patch may touch from the sled address (for page protections). */
#define ARCH_SLED_PATCH_SIZE 11
/* A stub is a 16-byte far jump placed within reach of a sled. */
#define ARCH_STUB_SIZE 16
/* Sleds reach their trampoline with a signed 32-bit displacement. */
#define ARCH_REACH ((int64_t)INT32_MAX)

/*
 * A set of trampolines, one per kind of function sled: a fast path and
 * the C path behind it.  The runtime gives the patcher the set it wants
 * (each record sink brings its own, sink.h); this layer only calls,
 * stubs and copies the set it is given.
 */
struct arch_tramps {
	void (*entry)(void);
	void (*exit)(void);
	void (*tail)(void);
	void (*args)(void);
};

/* The trampolines trampolines.S provides (hidden symbols): two fast
 * paths, FDR_FAST and CPU_FAST, of each kind. */
void rt_tramp_entry(void);
void rt_tramp_exit(void);
void rt_tramp_tail(void);
void rt_tramp_args(void);
/* the duration triggers' (lib/runtime/trigger.h): thread mode's fast
 * paths that time the call too, and a wrapper in front of any set */
void rt_trig_fdr_entry(void);
void rt_trig_fdr_exit(void);
void rt_trig_fdr_tail(void);
void rt_trig_fdr_args(void);
void rt_trig_entry(void);
void rt_trig_exit(void);
void rt_trig_tail(void);
void rt_trig_args(void);
void rt_cpu_tramp_entry(void);
void rt_cpu_tramp_exit(void);
void rt_cpu_tramp_tail(void);
void rt_cpu_tramp_args(void);

/* Handlers the trampolines call when the fast path is off (LLVM's API). */
extern void (*volatile rt_handler_arg0)(int32_t, XRayEntryType);
extern void (*volatile rt_handler_arg1)(int32_t, XRayEntryType, uint64_t);
extern void (*volatile rt_handler_custom)(void *, size_t);
/* called with the type zero-extended to 32 bits */
extern void (*volatile rt_handler_typed)(uint16_t, const void *, size_t);

/* How the trampolines save the vector state around C calls (arch_init). */
extern uint64_t rt_xsave_size;
extern uint64_t rt_xsave_mask;
extern uint8_t rt_xsave_kind; /* 0 fxsave, 1 xsave, 2 xsavec */

/*
 * Check the CPU: rdtsc, and the extended state the trampolines must save.
 * Return 0, or -ENOTSUP with a reason in @err.
 */
int arch_init(char *err, size_t errlen);

/* The trampoline of @set a function sled of @kind calls (0 for event
 * sleds). */
uintptr_t arch_trampoline(unsigned int kind, const struct arch_tramps *set);

/*
 * Patch (@enable) or unpatch one sled whose bytes are writable.  @target is
 * the trampoline or a stub in reach of the sled; @id the function id.
 * Return 0; -EILSEQ if the sled holds bytes we do not recognise (nothing is
 * written); -ERANGE if @target is out of reach; -EINVAL if the sled address
 * is misaligned or its kind unknown.  @err says which, with the address.
 */
int arch_patch_sled(const struct xray_sled *sled, int32_t id, uintptr_t target,
		    bool enable, char *err, size_t errlen);

/* Is the sled patched now?  (1 yes, 0 no, -EILSEQ unknown bytes) */
int arch_sled_patched(const struct xray_sled *sled);

/* What a patched function sled of @kind loads into %r10d for function
 * @id: the first half of its FDR function record (lib/fdr/records.h), id
 * << 4 | action << 1, the action of a sled kind being its number. */
static inline uint32_t arch_sled_word(unsigned int kind, int32_t id)
{
	return (uint32_t)id << 4 | (kind & 7) << 1;
}

/*
 * The fast paths of the trampolines above, copied next to the instrumented code so that
 * sleds call it without a stub and it reaches the thread's state and
 * rseq area at offsets fixed in its code (trampolines.S, "as a
 * template").  A copy takes ARCH_FAST_COPY_SIZE bytes of fresh
 * read-write memory at @at; @self and @rseq are the offsets of rt_self
 * and of the thread's rseq area from the thread pointer.  The first page
 * becomes read-only and executable.  Return 0, or a negative errno (no
 * room for more copies, an offset out of 32-bit reach, mprotect's).
 */
#define ARCH_FAST_COPY_SIZE 8192
int arch_fast_copy(void *at, long self, long rseq);
/* The trampoline of a function sled of @kind for @set in the copy at @at:
 * the copy of arch_trampoline(@kind, @set), 0 if it is none of the
 * trampolines above. */
uintptr_t arch_fast_copy_entry(const void *at, unsigned int kind,
			       const struct arch_tramps *set);
/* rt_fast_key = @key, in every copy too. */
void arch_fast_key_store(uint64_t key);

/*
 * GCC's 5-byte nop sites (entry and return alike) become "call @stub";
 * a stub (ARCH_STUB_SIZE bytes, arch_write_gcc_stub()) loads the sled word
 * and jumps to the trampoline.  An -fPIC entry, "call *__fentry__@GOTPCREL
 * (%rip)", becomes the nop and a 1-byte nop on its first patch (and is
 * left alone by an unpatch before that).  arch_gcc_site_patchable():
 * whether the site lies in an aligned 8 or 16 bytes, which one locked
 * store replaces, or the int3 sequence is available.
 * arch_patch_gcc_site() returns 0, -EILSEQ (neither the nop nor a call),
 * -ERANGE, or -EINVAL (not patchable atomically), with @err saying which.
 */
int arch_gcc_site_patchable(uint64_t address);
void arch_write_gcc_stub(void *at, uint32_t word, uintptr_t target);
int arch_patch_gcc_site(uint64_t address, uintptr_t stub, bool enable,
			char *err, size_t errlen);

/* Write a far-jump stub to @target at @at (ARCH_STUB_SIZE bytes). */
void arch_write_stub(void *at, uintptr_t target);

static inline uint64_t arch_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

#endif
