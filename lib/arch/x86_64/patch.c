// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Patching x86_64 XRay sleds (the encodings are in arch.h). */
#include <cpuid.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch.h"

enum {
	JMP9 = 0x09eb, /* eb 09: jump over an entry or tail sled */
	JMP15 = 0x0feb, /* eb 0f: over a custom-event call */
	JMP20 = 0x14eb, /* eb 14: over a typed-event call */
	MOV_R10D = 0xba41, /* 41 ba: the start of mov $imm32, %r10d */
	NOP2 = 0x9066, /* 66 90 */
	RET_NOP = 0x2ec3, /* c3 2e: ret, then the exit sled's nop */
	OP_CALL = 0xe8,
	OP_JMP = 0xe9,
	OP_RET = 0xc3,
};

#define SLED_TAIL_OFF 2 /* bytes 2-10: the id, the opcode and the rel32 */
#define SLED_OPCODE_OFF 6
#define SLED_REL_OFF 7

/* The nops that follow the first instruction in a sled as emitted. */
static const uint8_t entry_nop[9] = { 0x66, 0x0f, 0x1f, 0x84, 0x00,
				      0x00, 0x02, 0x00, 0x00 };
static const uint8_t exit_nop[10] = { 0x2e, 0x66, 0x0f, 0x1f, 0x84,
				      0x00, 0x00, 0x02, 0x00, 0x00 };

uint64_t rt_xsave_size = 512;
uint64_t rt_xsave_mask;
uint8_t rt_xsave_kind;

/* XCR0 components the trampolines save: x87, SSE, AVX, AVX-512. */
#define XSAVE_WANTED 0xe7ull

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

int arch_init(char *err, size_t errlen)
{
	unsigned int a, b, c, d;
	uint64_t size = 576; /* legacy area and header */

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(d & (1u << 4))) {
		snprintf(err, errlen, "this CPU has no time stamp counter");
		return -ENOTSUP;
	}
	if (!(c & bit_OSXSAVE)) {
		rt_xsave_kind = 0;
		rt_xsave_size = 512;
		return 0;
	}
	rt_xsave_mask = xgetbv0() & XSAVE_WANTED;
	for (unsigned int i = 2; i < 64; i++) {
		if (!(rt_xsave_mask >> i & 1))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if ((uint64_t)a + b > size)
			size = (uint64_t)a + b;
	}
	rt_xsave_size = (size + 63) & ~63ull;
	__cpuid_count(0xd, 1, a, b, c, d);
	rt_xsave_kind = (a & 0x2) ? 2 : 1; /* XSAVEC saves only what is live */
	return 0;
}

uintptr_t arch_trampoline(unsigned int kind, const struct arch_tramps *set)
{
	switch (kind) {
	case XRAY_SLED_ENTRY:
		return (uintptr_t)set->entry;
	case XRAY_SLED_EXIT:
		return (uintptr_t)set->exit;
	case XRAY_SLED_TAIL:
		return (uintptr_t)set->tail;
	case XRAY_SLED_LOG_ARGS_ENTRY:
		return (uintptr_t)set->args;
	default:
		return 0;
	}
}

static uint16_t load16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The nine bytes after the first two of a patched function sled. */
static void patched_tail(uint8_t out[9], uint32_t word, uint8_t opcode,
			 int32_t rel)
{
	memcpy(out, &word, 4);
	out[4] = opcode;
	memcpy(out + 5, &rel, 4);
}

enum sled_state { PRISTINE, PATCHED, UNPATCHED, UNKNOWN };

/* What a function sled holds; for patched or unpatched ones, the bytes
 * after the first two are those of a patch. */
static enum sled_state function_sled_state(const uint8_t *p, bool exit)
{
	uint8_t op = exit ? OP_JMP : OP_CALL;
	uint16_t first = load16(p);

	if (first == MOV_R10D)
		return p[SLED_OPCODE_OFF] == op ? PATCHED : UNKNOWN;
	if (exit ? p[0] == OP_RET : first == JMP9) {
		if (!memcmp(p + 1, exit_nop, sizeof(exit_nop)) && exit)
			return PRISTINE;
		if (!exit && !memcmp(p + 2, entry_nop, sizeof(entry_nop)))
			return PRISTINE;
		/* after an unpatch: ours writes "c3 2e", LLVM's only "c3" */
		if (exit && p[1] != exit_nop[0] && p[1] != 0xba)
			return UNKNOWN;
		return p[SLED_OPCODE_OFF] == op ? UNPATCHED : UNKNOWN;
	}
	return UNKNOWN;
}

static int unknown_bytes(const struct xray_sled *s, char *err, size_t errlen)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)s->address;

	snprintf(
		err, errlen,
		"%s sled at 0x%" PRIx64
		" holds unexpected bytes %02x %02x %02x %02x %02x %02x %02x; not touching it",
		xray_sled_kind_name(s->kind), s->address, p[0], p[1], p[2],
		p[3], p[4], p[5], p[6]);
	return -EILSEQ;
}

int arch_sled_patched(const struct xray_sled *s)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)s->address;
	uint16_t first = load16(p);

	switch (s->kind) {
	case XRAY_SLED_CUSTOM_EVENT:
	case XRAY_SLED_TYPED_EVENT:
		if (first == NOP2)
			return 1;
		return first == (s->kind == XRAY_SLED_CUSTOM_EVENT ? JMP15 :
								     JMP20) ?
			       0 :
			       -EILSEQ;
	case XRAY_SLED_ENTRY:
	case XRAY_SLED_EXIT:
	case XRAY_SLED_TAIL:
	case XRAY_SLED_LOG_ARGS_ENTRY:
		switch (function_sled_state(p, s->kind == XRAY_SLED_EXIT)) {
		case PATCHED:
			return 1;
		case UNKNOWN:
			return -EILSEQ;
		default:
			return 0;
		}
	default:
		return -EILSEQ;
	}
}

static int patch_event(const struct xray_sled *s, bool enable, char *err,
		       size_t errlen)
{
	uint16_t jump = s->kind == XRAY_SLED_CUSTOM_EVENT ? JMP15 : JMP20;
	uint16_t *p = (uint16_t *)(uintptr_t)s->address;
	uint16_t first = *p;

	if (first != jump && first != NOP2)
		return unknown_bytes(s, err, errlen);
	__atomic_store_n(p, enable ? NOP2 : jump, __ATOMIC_RELEASE);
	return 0;
}

int arch_patch_sled(const struct xray_sled *s, int32_t id, uintptr_t target,
		    bool enable, char *err, size_t errlen)
{
	uint8_t *p = (uint8_t *)(uintptr_t)s->address;
	bool exit = s->kind == XRAY_SLED_EXIT;
	uint8_t tail[9];
	int64_t rel;
	enum sled_state state;

	if (s->address & 1) {
		snprintf(
			err, errlen,
			"sled at 0x%" PRIx64
			" is not 2-byte aligned; it cannot be patched atomically",
			s->address);
		return -EINVAL;
	}
	switch (s->kind) {
	case XRAY_SLED_CUSTOM_EVENT:
	case XRAY_SLED_TYPED_EVENT:
		return patch_event(s, enable, err, errlen);
	case XRAY_SLED_ENTRY:
	case XRAY_SLED_EXIT:
	case XRAY_SLED_TAIL:
	case XRAY_SLED_LOG_ARGS_ENTRY:
		break;
	default:
		snprintf(err, errlen,
			 "sled at 0x%" PRIx64 " has unknown kind %u",
			 s->address, s->kind);
		return -EINVAL;
	}

	state = function_sled_state(p, exit);
	if (state == UNKNOWN)
		return unknown_bytes(s, err, errlen);
	if (!enable) {
		if (state == PATCHED)
			__atomic_store_n((uint16_t *)p,
					 (uint16_t)(exit ? RET_NOP : JMP9),
					 __ATOMIC_RELEASE);
		return 0;
	}

	rel = (int64_t)target - (int64_t)(s->address + ARCH_SLED_PATCH_SIZE);
	if (rel < -ARCH_REACH - 1 || rel > ARCH_REACH) {
		snprintf(err, errlen,
			 "trampoline 0x%" PRIxPTR
			 " is out of 32-bit reach of the sled at 0x%" PRIx64,
			 target, s->address);
		return -ERANGE;
	}
	patched_tail(tail, arch_sled_word(s->kind, id), exit ? OP_JMP : OP_CALL,
		     (int32_t)rel);
	if (state == PATCHED) {
		if (memcmp(p + SLED_TAIL_OFF, tail, sizeof(tail))) {
			snprintf(err, errlen,
				 "sled at 0x%" PRIx64
				 " is already patched to call 0x%" PRIx64
				 " (another XRay runtime?)",
				 s->address,
				 s->address + ARCH_SLED_PATCH_SIZE +
					 (int64_t)(int32_t)load32(
						 p + SLED_REL_OFF));
			return -EBUSY;
		}
		return 0;
	}
	/* The tail is never executed while the first two bytes jump over it
	 * (or return), so it can be written in any order; bytes that are
	 * already right are left alone, in case a thread that ran the old
	 * mov is about to run the old call. */
	for (unsigned int i = 0; i < sizeof(tail); i++)
		if (p[SLED_TAIL_OFF + i] != tail[i])
			((volatile uint8_t *)p)[SLED_TAIL_OFF + i] = tail[i];
	__atomic_store_n((uint16_t *)p, (uint16_t)MOV_R10D, __ATOMIC_RELEASE);
	return 0;
}

void arch_write_stub(void *at, uintptr_t target)
{
	/* jmp *0(%rip), the target, int3 padding */
	static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	uint8_t *p = at;

	memcpy(p, jmp, sizeof(jmp));
	memcpy(p + sizeof(jmp), &target, sizeof(target));
	memset(p + sizeof(jmp) + sizeof(target), 0xcc,
	       ARCH_STUB_SIZE - sizeof(jmp) - sizeof(target));
}

/*
 * GCC's sites: a 5-byte nop (0f 1f 44 00 00) that becomes "call stub",
 * where the stub is "mov $word,%r10d; jmp trampoline" (a call, also at a
 * return site: the trampoline returns to the ret or the sibling call's
 * jmp after the site).  The five bytes are stored with one locked compare
 * and exchange of the aligned 8 or 16 bytes that hold them, so a thread
 * running through sees the nop or the call, never a mix.  A site across a
 * 16-byte boundary is rewritten as the kernel's text_poke_bp() does: an
 * int3 first, then the last four bytes, then the first, each step made
 * visible to every thread with membarrier(SYNC_CORE); a thread that meets
 * the int3 meanwhile is sent on as the new instruction would send it (our
 * SIGTRAP handler, installed on first use, passes other traps on to the
 * program's own handler).
 *
 * In -fPIC code an entry site is "call *__fentry__@GOTPCREL(%rip)" (ff 15
 * and a 32-bit displacement, 6 bytes).  Before its first patch it becomes
 * the 5-byte nop and a 1-byte nop, the same way, so that from then on it is
 * an ordinary site whose call returns to the 1-byte nop; a thread already
 * in __fentry__ returns after both.
 */
static const uint8_t gcc_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const uint8_t gcc_nop6[6] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x90 };

static bool cas16(void *at, const uint8_t old[16], const uint8_t new[16])
{
	uint64_t o[2], n[2];
	bool ok;

	memcpy(o, old, 16);
	memcpy(n, new, 16);
	__asm__ volatile("lock cmpxchg16b %1; sete %0"
			 : "=q"(ok), "+m"(*(volatile uint64_t(*)[2])at),
			   "+a"(o[0]), "+d"(o[1])
			 : "b"(n[0]), "c"(n[1])
			 : "memory", "cc");
	return ok;
}

#define POKED 4096 /* sites rewritten through an int3, newest last */
static struct {
	uintptr_t site, stub;
	size_t len;
} poked[POKED];
static unsigned int npoked;
static struct sigaction poke_old;
static int poke_ready; /* 1 handler in and membarrier registered, -1 no */

static void poke_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t site = (uintptr_t)g[REG_RIP] - 1;
	unsigned int n = __atomic_load_n(&npoked, __ATOMIC_ACQUIRE);

	for (unsigned int i = n < POKED ? n : POKED; i-- > 0;) {
		const uint8_t *p = (const uint8_t *)site;

		if (poked[i].site != site)
			continue;
		/* the int3 stands for the nop or the call: which one is
		 * where the patch is going (the stub is 0 for an unpatch) */
		if (poked[i].stub && p[1] != gcc_nop5[1]) {
			g[REG_RSP] -= 8;
			*(uint64_t *)g[REG_RSP] = site + 5;
			g[REG_RIP] = (greg_t)poked[i].stub;
		} else {
			g[REG_RIP] = (greg_t)(site + poked[i].len);
		}
		return;
	}
	if (poke_old.sa_flags & SA_SIGINFO) {
		poke_old.sa_sigaction(sig, si, ctx);
	} else if (poke_old.sa_handler == SIG_DFL) {
		sigaction(SIGTRAP, &poke_old, NULL);
		raise(SIGTRAP);
	} else if (poke_old.sa_handler != SIG_IGN) {
		poke_old.sa_handler(sig);
	}
}

static bool poke_init(void)
{
	struct sigaction sa = { 0 };

	if (poke_ready)
		return poke_ready > 0;
	poke_ready = -1;
	if (syscall(__NR_membarrier,
		    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0))
		return false;
	sa.sa_sigaction = poke_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &poke_old))
		return false;
	poke_ready = 1;
	return true;
}

static void sync_core(void)
{
	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0,
		0);
}

/* Rewrite the @len bytes at @p across a 16-byte boundary (see above). */
static void poke(uint8_t *p, const uint8_t *new, size_t len, uintptr_t stub)
{
	unsigned int i = npoked % POKED;

	poked[i].site = (uintptr_t)p;
	poked[i].stub = stub;
	poked[i].len = len;
	__atomic_store_n(&npoked, npoked + 1, __ATOMIC_RELEASE);
	__atomic_store_n(p, 0xcc, __ATOMIC_RELEASE);
	sync_core();
	for (size_t k = 1; k < len; k++)
		((volatile uint8_t *)p)[k] = new[k];
	sync_core();
	__atomic_store_n(p, new[0], __ATOMIC_RELEASE);
	sync_core();
}

static bool got_call(const uint8_t *p)
{
	return p[0] == 0xff && p[1] == 0x15;
}

/* Whether the @len bytes at @address lie in an aligned 8 or 16 bytes. */
static bool fits(uint64_t address, size_t len)
{
	return (address & 7) + len <= 8 || (address & 15) + len <= 16;
}

int arch_gcc_site_patchable(uint64_t address)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)address;

	return fits(address, got_call(p) ? 6 : 5) || poke_init();
}

/* Replace the @len bytes at @p with @want: one locked compare and exchange
 * of the aligned 8 or 16 bytes holding them, or poke(). */
static void replace(uint8_t *p, const uint8_t *want, size_t len, uintptr_t stub)
{
	uintptr_t address = (uintptr_t)p;
	size_t width = (address & 7) + len <= 8 ? 8 : 16;
	uint8_t *base = (uint8_t *)(address & ~(uintptr_t)(width - 1));
	size_t off = address - (uintptr_t)base;
	uint8_t old[16], new[16];

	if (!fits(address, len)) {
		poke(p, want, len, stub);
		return;
	}
	for (;;) {
		memcpy(old, base, width);
		memcpy(new, old, width);
		memcpy(new + off, want, len);
		if (!memcmp(new, old, width))
			return;
		if (width == 8) {
			uint64_t o, n;

			memcpy(&o, old, 8);
			memcpy(&n, new, 8);
			if (__atomic_compare_exchange_n((uint64_t *)base, &o, n,
							false, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				return;
		} else if (cas16(base, old, new)) {
			return;
		}
	}
}

void arch_write_gcc_stub(void *at, uint32_t word, uintptr_t target)
{
	uint8_t *p = at;
	int32_t rel =
		(int32_t)((int64_t)target - (int64_t)((uintptr_t)at + 11));

	p[0] = 0x41;
	p[1] = 0xba;
	memcpy(p + 2, &word, 4);
	p[6] = OP_JMP;
	memcpy(p + 7, &rel, 4);
	memset(p + 11, 0xcc, ARCH_STUB_SIZE - 11);
}

int arch_patch_gcc_site(uint64_t address, uintptr_t stub, bool enable,
			char *err, size_t errlen)
{
	uint8_t *p = (uint8_t *)(uintptr_t)address;
	int64_t rel = (int64_t)stub - (int64_t)(address + 5);
	uint8_t call[5] = { OP_CALL };
	const uint8_t *want;

	if (!arch_gcc_site_patchable(address)) {
		snprintf(
			err, errlen,
			"GCC site at 0x%" PRIx64
			" crosses a 16-byte boundary; it cannot be patched atomically",
			address);
		return -EINVAL;
	}
	if (enable && (rel < -ARCH_REACH - 1 || rel > ARCH_REACH)) {
		snprintf(err, errlen,
			 "stub 0x%" PRIxPTR
			 " is out of 32-bit reach of the site at 0x%" PRIx64,
			 stub, address);
		return -ERANGE;
	}
	if (got_call(p)) {
		if (!enable)
			return 0; /* never patched: the program's own call */
		replace(p, gcc_nop6, sizeof(gcc_nop6), 0);
	}
	if (memcmp(p, gcc_nop5, 5) && p[0] != OP_CALL) {
		snprintf(
			err, errlen,
			"GCC site at 0x%" PRIx64
			" holds unexpected bytes %02x %02x %02x %02x %02x; not touching it",
			address, p[0], p[1], p[2], p[3], p[4]);
		return -EILSEQ;
	}
	memcpy(call + 1, &(int32_t){ (int32_t)rel }, 4);
	want = enable ? call : gcc_nop5;
	if (memcmp(p, want, 5))
		replace(p, want, 5, enable ? stub : 0);
	return 0;
}
