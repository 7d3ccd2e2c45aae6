// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trampolines, called as patched sleds call them: every register the
 * instrumented code may hold live comes back unchanged, on the fast path
 * and on the C paths (a thread's first event, a CPU change, a full
 * buffer, events), and the records they wrote read back right.  Built
 * twice: for thread mode, and with TRAMP_CPU for CPU mode's trampolines
 * on rings of the runtime's own (full sub-buffers take the C path).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "../../lib/arch/x86_64/arch.h"
#include "../../lib/runtime/controller.h"
#include "../../lib/runtime/ring.h"
#include "../../lib/runtime/sink.h"
#include "../../lib/runtime/state.h"
#include "../../lib/runtime/thread.h"
#include "rtutil.h"

/* What a sled's caller may hold live; the flags only around events. */
struct regs {
	uint64_t rax, rcx, rdx, rsi, rdi, r8, r9, flags;
	uint64_t xmm0[2], xmm1[2], xmm7[2];
};

/* call_sled(tramp, word, regs): load @regs, "mov word,%r10d; call tramp"
 * (word: arch_sled_word()), store the registers back into @regs. */
void call_sled(void (*tramp)(void), uint32_t word, struct regs *r);
__asm__(".text\n"
	".globl call_sled\n"
	".type call_sled, @function\n"
	"call_sled:\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	subq $8, %rsp\n"
	"	movq %rdx, %rbx\n"
	"	movq %rdi, %r12\n"
	"	movl %esi, %r10d\n"
	"	movdqu 64(%rbx), %xmm0\n"
	"	movdqu 80(%rbx), %xmm1\n"
	"	movdqu 96(%rbx), %xmm7\n"
	"	pushq 56(%rbx)\n"
	"	popfq\n"
	"	movq 0(%rbx), %rax\n"
	"	movq 8(%rbx), %rcx\n"
	"	movq 16(%rbx), %rdx\n"
	"	movq 24(%rbx), %rsi\n"
	"	movq 32(%rbx), %rdi\n"
	"	movq 40(%rbx), %r8\n"
	"	movq 48(%rbx), %r9\n"
	"	call *%r12\n"
	"	pushfq\n"
	"	popq 56(%rbx)\n"
	"	movq %rax, 0(%rbx)\n"
	"	movq %rcx, 8(%rbx)\n"
	"	movq %rdx, 16(%rbx)\n"
	"	movq %rsi, 24(%rbx)\n"
	"	movq %rdi, 32(%rbx)\n"
	"	movq %r8, 40(%rbx)\n"
	"	movq %r9, 48(%rbx)\n"
	"	movdqu %xmm0, 64(%rbx)\n"
	"	movdqu %xmm1, 80(%rbx)\n"
	"	movdqu %xmm7, 96(%rbx)\n"
	"	addq $8, %rsp\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	ret\n"
	".size call_sled, . - call_sled\n");

#ifdef TRAMP_CPU
#define MODE "cpu"
static void (*const tramps[])(void) = { rt_cpu_tramp_entry, rt_cpu_tramp_exit,
					rt_cpu_tramp_tail, rt_cpu_tramp_args };
/* the set the runtime gives the patcher (rt_cpu_sink.tramps) */
static const struct arch_tramps set = { rt_cpu_tramp_entry, rt_cpu_tramp_exit,
					rt_cpu_tramp_tail, rt_cpu_tramp_args };
#else
#define MODE "thread"
static void (*const tramps[])(void) = { rt_tramp_entry, rt_tramp_exit,
					rt_tramp_tail, rt_tramp_args };
/* the set the runtime gives the patcher (rt_thread_sink.tramps) */
static const struct arch_tramps set = { rt_tramp_entry, rt_tramp_exit,
					rt_tramp_tail, rt_tramp_args };
#endif

static char dir[64], log_path[128];

/* the fast path as the runtime copies it next to programs */
static void (*copy_tramps[4])(void);

static void make_copy(void)
{
	void *at = mmap(NULL, ARCH_FAST_COPY_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long self, rseq;

	assert_true(at != MAP_FAILED);
	rt_tls_offsets(&self, &rseq);
	assert_int_equal(arch_fast_copy(at, self, rseq), 0);
	for (unsigned int k = 0; k < 4; k++)
		copy_tramps[k] =
			(void (*)(void))arch_fast_copy_entry(at, k, &set);
}

/* The trampoline of call @i: kinds in turn; four calls to the library's
 * and four to a copy's. */
static void (*tramp_of(int i))(void)
{
	if (i / 4 % 2)
		return copy_tramps[i % 4];
	return tramps[i % 4];
}

static struct regs sentinel(uint64_t seed)
{
	struct regs r;
	uint64_t *w = (uint64_t *)&r;

	for (size_t i = 0; i < sizeof(r) / 8; i++)
		w[i] = seed * 0x9e3779b97f4a7c15ull + i * 0x1111111111111111ull;
	/* carry, parity, zero, sign, overflow set; the rest as popfq allows */
	r.flags = 0x8d5 | 0x2;
	return r;
}

static void check_regs(const struct regs *want, const struct regs *got,
		       bool flags)
{
	struct regs a = *want, b = *got;

	if (!flags)
		a.flags = b.flags = 0;
	else
		a.flags &= 0x8d5, b.flags &= 0x8d5;
	assert_memory_equal(&a, &b, sizeof(a));
}

static int setup(void **state)
{
	char config[512];

	(void)state;
	if (rt_tmpdir(dir, "tramp"))
		return -1;
	snprintf(log_path, sizeof(log_path), "%s/log.xray", dir);
	snprintf(
		config, sizeof(config),
		"output=%s verbosity=0 buffer_size=4096 buffer_max=64 mode=" MODE,
		log_path);
	return __xray_log_init_mode("xray-fdr", config) ==
			       XRAY_LOG_INITIALIZED ?
		       0 :
		       -1;
}

static int teardown(void **state)
{
	(void)state;
	return rt_rmdir(dir);
}

/* CPU mode writes an argument on the C path. */
static bool has_fast_path(unsigned int kind)
{
	return strcmp(MODE, "cpu") || kind != XRAY_SLED_LOG_ARGS_ENTRY;
}

/* The kernel's struct rseq_cs, which a fast path's rseq_cs points at. */
struct rseq_cs_desc {
	uint32_t version, flags;
	uint64_t start_ip, post_commit_offset, abort_ip;
};

/*
 * If the rseq area still names the critical section of the call through
 * @tramp just made (the kernel clears it at a preemption outside one,
 * the C path has its own), check it: it commits inside the trampoline's
 * first @span bytes, and its abort handler follows the signature there.
 * Return whether it checked.
 */
static bool check_section_in(void (*tramp)(void), uintptr_t span)
{
	const char *rs =
		(const char *)__builtin_thread_pointer() + rt_rseq_offset;
	const struct rseq_cs_desc *cs;
	uintptr_t lo = (uintptr_t)tramp, hi = lo + span;
	uint32_t sig;

	memcpy(&cs, rs + RT_RSEQ_CS, sizeof(cs));
	/* (the C path's own, if the call took it) */
	if (!cs || cs->start_ip < lo || cs->start_ip >= hi)
		return false;
	assert_int_equal(cs->version, 0);
	assert_int_equal(cs->flags, 0);
	assert_in_range(cs->start_ip + cs->post_commit_offset, lo + 1, hi);
	assert_in_range(cs->abort_ip, lo + 4, hi);
	memcpy(&sig, (const void *)(uintptr_t)(cs->abort_ip - 4), sizeof(sig));
	assert_int_equal(sig, RT_RSEQ_SIG);
	return true;
}

static bool check_section(void (*tramp)(void))
{
	return check_section_in(tramp, 256);
}

static void test_registers(void **state)
{
	unsigned int sections[8] = { 0 };

	(void)state;
	/* the first call of the thread takes the C path and sets it up;
	 * later ones the fast path; a full buffer the C path again; every
	 * other eight calls are sent to the C path by the thread's state */
	make_copy();
	for (int i = 0; i < 2000; i++) {
		struct regs want = sentinel((uint64_t)i), got = want;
		void (*tramp)(void) = tramp_of(i);
		bool slow = i / 8 % 2;

		if (slow)
			rt_self.fast = RT_FAST_OFF;
		call_sled(tramp, arch_sled_word((unsigned int)i % 4, 1 + i % 7),
			  &got);
		check_regs(&want, &got, false);
		if (!slow && has_fast_path(i % 4))
			sections[i % 8] += check_section(tramp);
	}
	/* each fast path's critical section was seen at least once */
	for (unsigned int k = 0; k < 8; k++)
		if (has_fast_path(k % 4))
			assert_true(sections[k] > 0);
	assert_string_equal(rt_live.sink->name, MODE);
	/* the fast path was armed: the checks above covered it */
	assert_true(rt_fast_key != 0);
	assert_true(rt_self.fast ==
		    rt_fast_word(rt_self.cpu, rt_live.generation));
}

static char custom_seen[32];

static void test_event_registers(void **state)
{
	struct regs want = sentinel(77), got;
	static char payload[] = "event payload";

	(void)state;
	want.rdi = (uintptr_t)payload;
	want.rsi = sizeof(payload) - 1;
	got = want;
	call_sled(__xray_CustomEvent, 0, &got);
	check_regs(&want, &got, true);
	want.rdi = 0x30007; /* the sled sets only the low 16 bits */
	want.rsi = (uintptr_t)payload;
	want.rdx = 5;
	got = want;
	call_sled(__xray_TypedEvent, 0, &got);
	check_regs(&want, &got, true);
	(void)custom_seen;
}

/* What the calls above wrote: the records, in order, with their ids. */
static void test_records(void **state)
{
	struct event_list got;
	unsigned int functions = 0, customs = 0, typeds = 0;
	uint64_t last = 0;

	(void)state;
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
	rt_read_log(log_path, &got);
	for (size_t i = 0; i < got.n; i++) {
		const struct xrayfdr_event *e = &got.ev[i];
		unsigned int n = functions;

		if (e->kind == XRAYFDR_EV_CUSTOM) {
			if (!memcmp(e->data, "event payload", 13))
				customs++;
			continue;
		}
		if (e->kind == XRAYFDR_EV_TYPED) {
			assert_int_equal(e->event_type, 7);
			assert_int_equal(e->data_size, 5);
			typeds++;
			continue;
		}
		/* kinds cycle entry, exit, tail, args; ids 1..7 */
		assert_int_equal(e->kind, n % 4);
		assert_int_equal(e->func_id, 1 + (int)(n % 7));
		if (e->kind == XRAYFDR_EV_ENTRY_ARGS) {
			assert_int_equal(e->nargs, 1);
			assert_int_equal(e->args[0], sentinel(n).rdi);
		}
		assert_true(e->tsc >= last);
		last = e->tsc;
		functions++;
	}
	assert_int_equal(functions, 2000);
	assert_int_equal(customs, 1);
	assert_int_equal(typeds, 1);
	assert_int_equal(rt_live.dropped, 0);
	event_list_free(&got);
}

/*
 * LLVM's duration threshold is the drain's: the fast path stays on, and
 * the calls shorter than it are left out of the log (those of a long
 * threshold, all of them).
 */
static void test_threshold(void **state)
{
	char config[512];
	struct event_list got;
	size_t functions = 0;

	(void)state;
	snprintf(config, sizeof(config),
		 "output=%s verbosity=0 buffer_size=4096 buffer_max=64 "
		 "func_duration_threshold_us=10000000 mode=" MODE,
		 log_path);
	assert_int_equal(__xray_log_init_mode("xray-fdr", config),
			 XRAY_LOG_INITIALIZED);
	for (int i = 0; i < 200; i++) {
		struct regs want = sentinel((uint64_t)i), got_regs = want;
		unsigned int kind = i % 2 ? XRAY_SLED_EXIT : XRAY_SLED_ENTRY;

		call_sled(tramps[kind], arch_sled_word(kind, 3), &got_regs);
		check_regs(&want, &got_regs, false);
	}
	assert_true(rt_fast_key != 0);
	assert_true(rt_self.fast ==
		    rt_fast_word(rt_self.cpu, rt_live.generation));
#ifndef TRAMP_CPU
	{
		/* The copy's fast path itself writes (its fix-ups are right):
		 * with no handler, the C path would write nothing.  The
		 * buffer has room: 200 calls filled 1600 of its 4096 bytes. */
		void (*handler)(int32_t, XRayEntryType) = rt_handler_arg0;
		uint8_t *pos = rt_self.pos;

		rt_handler_arg0 = NULL;
		for (int i = 0; i < 16; i++) {
			struct regs want = sentinel((uint64_t)i), r = want;
			unsigned int kind = i % 2 ? XRAY_SLED_EXIT :
						    XRAY_SLED_ENTRY;

			call_sled(copy_tramps[kind], arch_sled_word(kind, 3),
				  &r);
			check_regs(&want, &r, false);
		}
		rt_handler_arg0 = handler;
		assert_ptr_equal(rt_self.pos, pos + 16 * 8);
	}
#endif
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
	rt_read_log(log_path, &got);
	for (size_t i = 0; i < got.n; i++)
		functions += got.ev[i].kind != XRAYFDR_EV_CUSTOM &&
			     got.ev[i].kind != XRAYFDR_EV_TYPED;
	assert_int_equal(functions, 0);
	event_list_free(&got);
}

static uint8_t ev_data[64];

/*
 * One event of @size bytes of ev_data (@typed: a typed one, of type 7)
 * with the C path unable to write (the thread busy: it drops the event
 * and counts it), at commit word @word: did the fast path append it?
 * Every register and the flags come back.
 */
static void event_call(bool typed, uint64_t size)
{
	struct regs want = sentinel(size), r;

	if (typed) {
		want.rdi = 0xabc0007; /* the sled sets only the low 16 bits */
		want.rsi = (uintptr_t)ev_data;
		want.rdx = size;
	} else {
		want.rdi = (uintptr_t)ev_data;
		want.rsi = size;
	}
	r = want;
	call_sled(typed ? __xray_TypedEvent : __xray_CustomEvent, 0, &r);
	check_regs(&want, &r, true);
}

/* An event's marker and payload at @p, as the event fast path writes
 * them: its kind, size and time (between @before and @after, from
 * @base), a typed event's type 7, the payload padded with zeros. */
static void check_marker(const uint8_t *p, bool typed, uint64_t size,
			 uint64_t base, uint64_t before, uint64_t after)
{
	uint64_t delta;
	uint32_t v;

	assert_int_equal(p[0], typed ? 0x11 : 0x0b);
	memcpy(&v, p + 1, 4);
	assert_int_equal(v, size);
	memcpy(&v, p + 5, 4);
	delta = v;
	/* (its time: between the TSC before and after the call) */
	assert_in_range(base + delta, before, after);
	if (typed) {
		assert_int_equal(p[9] | p[10] << 8, 7);
		for (int i = 11; i < 16; i++)
			assert_int_equal(p[i], 0);
	} else {
		for (int i = 9; i < 16; i++)
			assert_int_equal(p[i], 0);
	}
	assert_memory_equal(p + 16, ev_data, size);
	for (uint64_t i = size; i % 8; i++)
		assert_int_equal(p[16 + i], 0);
}

/* The log of 30 events of sizes 1 to 30, custom and typed in turn, each
 * after a function entry: each comes out as it went in, in order. */
static void check_turns(void)
{
	unsigned int customs = 0, typeds = 0;
	struct event_list got;

	rt_read_log(log_path, &got);
	for (size_t i = 0, last = 0; i < got.n; i++) {
		const struct xrayfdr_event *e = &got.ev[i];
		unsigned int n = customs + typeds;

		if (e->kind != XRAYFDR_EV_CUSTOM && e->kind != XRAYFDR_EV_TYPED)
			continue;
		/* (a thread's name, which the C path may write first, and
		 * the log's info event, last) */
		if (!e->data_size || *(const uint8_t *)e->data != ev_data[0])
			continue;
		assert_true(n < 30);
		assert_int_equal(e->kind,
				 n % 2 ? XRAYFDR_EV_TYPED : XRAYFDR_EV_CUSTOM);
		assert_int_equal(e->data_size, n + 1);
		assert_memory_equal(e->data, ev_data, n + 1);
		if (n % 2)
			assert_int_equal(e->event_type, 7);
		assert_true(i > last);
		assert_true(got.ev[i - 1].kind == XRAYFDR_EV_ENTRY);
		assert_true(e->tsc >= got.ev[i - 1].tsc);
		last = i;
		n % 2 ? typeds++ : customs++;
	}
	assert_int_equal(customs, 15);
	assert_int_equal(typeds, 15);
	event_list_free(&got);
}

#ifndef TRAMP_CPU
/* One event through the fast path with the C path unable to write (the
 * thread busy: it drops and counts): did the fast path append it, at
 * the thread's position? */
static bool event_in_buffer(bool typed, uint64_t size)
{
	uint64_t dropped = rt_live.dropped;
	uint8_t *pos = rt_self.pos;
	bool appended;

	rt_self.busy = 1;
	event_call(typed, size);
	rt_self.busy = 0;
	appended = rt_self.pos != pos;
	assert_int_equal(rt_live.dropped, dropped + !appended);
	if (appended)
		assert_ptr_equal(rt_self.pos, pos + 16 + ((size + 7) & ~7ull));
	return appended;
}

/*
 * Thread mode's event fast path: a custom or typed event of any size the
 * C path takes goes into the thread's buffer, marker and payload, in one
 * critical section, while the function fast path's conditions hold (the
 * key, the base's high half) and the event fits before the buffer's end;
 * anything else is the C path's.  Then events written this way come out
 * of the flush as they went in.
 */
static void test_event_buffer(void **state)
{
	struct regs want = sentinel(3), r = want;
	uint8_t *pos, *buf_end;
	uint64_t base, before;
	unsigned int sections[2] = { 0 };
	char config[512];

	(void)state;
	for (size_t i = 0; i < sizeof(ev_data); i++)
		ev_data[i] = (uint8_t)(0xa1 + i * 7);
	snprintf(config, sizeof(config),
		 "output=%s verbosity=0 buffer_size=4096 buffer_max=64 "
		 "mode=thread",
		 log_path);
	assert_int_equal(__xray_log_init_mode("xray-fdr", config),
			 XRAY_LOG_INITIALIZED);
	/* the C path takes a buffer and arms */
	call_sled(tramps[XRAY_SLED_ENTRY], arch_sled_word(XRAY_SLED_ENTRY, 6),
		  &r);
	check_regs(&want, &r, false);
	assert_non_null(rt_self.end);
	pos = rt_self.pos;
	buf_end = rt_self.end + (XRAYFDR_FUNCTION_RECORD_SIZE - 1);
	assert_true(pos + 16 + 64 <= buf_end);

	/* every size, both kinds, at the position (each taken back after) */
	for (uint64_t n = 1; n <= sizeof(ev_data); n++)
		for (int typed = 0; typed < 2; typed++) {
			memset(pos, 0xff, 16 + 64);
			before = arch_tsc();
			assert_true(event_in_buffer(typed, n));
			check_marker(pos, typed, n, rt_self.base, before,
				     arch_tsc());
			sections[typed] += check_section_in(
				typed ? __xray_TypedEvent : __xray_CustomEvent,
				1024);
			rt_self.pos = pos;
		}
	assert_true(sections[0] > 0 && sections[1] > 0);
	/* at the buffer's end: fits exactly, or not at all */
	rt_self.pos = buf_end - 24;
	assert_true(event_in_buffer(0, 8));
	rt_self.pos = buf_end - 16;
	assert_false(event_in_buffer(0, 8));
	assert_false(event_in_buffer(1, 1));
	rt_self.pos = buf_end - 80;
	assert_true(event_in_buffer(1, 64));
	rt_self.pos = buf_end - 72;
	assert_false(event_in_buffer(1, 57));
	rt_self.pos = pos;
	/* empty; a base whose high half is not the TSC's */
	assert_false(event_in_buffer(0, 0));
	assert_false(event_in_buffer(1, 0));
	base = rt_self.base;
	rt_self.base = base + (1ull << 32);
	assert_false(event_in_buffer(0, 8));
	rt_self.base = base - (1ull << 32);
	assert_false(event_in_buffer(1, 8));
	rt_self.base = base;
	/* the fast path off (another handler, max_depth: the key is 0) */
	arch_fast_key_store(0);
	assert_false(event_in_buffer(0, 8));
	arch_fast_key_store((uint64_t)rt_live.generation << 32);
	assert_true(event_in_buffer(1, 8));
	rt_self.pos = pos;

	/* events and functions in turn, then the flush: each comes out,
	 * in order */
	for (int i = 0; i < 30; i++) {
		uint8_t *at = rt_self.pos;

		want = sentinel((uint64_t)i);
		r = want;
		call_sled(tramps[XRAY_SLED_ENTRY],
			  arch_sled_word(XRAY_SLED_ENTRY, 6), &r);
		check_regs(&want, &r, false);
		assert_ptr_equal(rt_self.pos, at + 8);
		assert_true(event_in_buffer(i % 2, 1 + (uint64_t)i));
	}
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
	check_turns();
}
#endif

#ifdef TRAMP_CPU
/* A CPU-mode trace (@more: options beyond the tests'), with the thread
 * kept on the CPU it is on (its affinity before into *@was), so that the
 * fast path's CPU check holds throughout; that CPU. */
static int cpu_trace_pinned(cpu_set_t *was, const char *more)
{
	char config[512];
	cpu_set_t one;
	int cpu;

	snprintf(config, sizeof(config),
		 "output=%s verbosity=0 buffer_size=4096 buffer_max=64 "
		 "mode=cpu%s",
		 log_path, more);
	assert_int_equal(__xray_log_init_mode("xray-fdr", config),
			 XRAY_LOG_INITIALIZED);
	assert_int_equal(sched_getaffinity(0, sizeof(*was), was), 0);
	cpu = sched_getcpu();
	assert_true(cpu >= 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	return cpu;
}

/* The thread's slot, as the C path left it (struct rt_thread), and the
 * commit word of its CPU's ring. */
struct slot {
	uint64_t *commit;
	uint64_t saved; /* the commit word now */
	uint64_t owner; /* the thread's id where the commit word has it */
	uint32_t off; /* the commit word's offset */
	uint32_t start, size; /* the slot's sub-buffer */
	uint32_t next; /* the sub-buffer after it */
};

static struct slot slot_now(void)
{
	struct slot sl = { .commit = (uint64_t *)rt_self.area };

	sl.saved = *sl.commit;
	sl.owner = (uint64_t)rt_self.tid << 32;
	sl.off = (uint32_t)sl.saved;
	sl.start = (uint32_t)rt_self.slot - sizeof(struct xray_fdr_subbuf);
	sl.size = rt_ring.header->subbuf_size;
	sl.next = (sl.start + sl.size) % (uint32_t)rt_ring.size;
	return sl;
}

/* The thread's affinity back (@was), the trace ended and flushed. */
static void cpu_trace_end(const cpu_set_t *was)
{
	assert_int_equal(sched_setaffinity(0, sizeof(*was), was), 0);
	assert_int_equal(__xray_log_finalize(), XRAY_LOG_FINALIZED);
	assert_int_equal(__xray_log_flushLog(), XRAY_LOG_FLUSHED);
}

/* One entry call through @tramp with no C handler behind it, at commit
 * word @word: did the fast path append (the C path would write nothing)? */
static bool appended(void (*tramp)(void), uint64_t *commit, uint64_t word)
{
	struct regs want = sentinel(5), r = want;

	*commit = word;
	call_sled(tramp, arch_sled_word(XRAY_SLED_ENTRY, 6), &r);
	check_regs(&want, &r, false);
	return *commit != word;
}

/*
 * CPU mode's one compare against the thread's slot: the fast path (the
 * library's and a copy's) appends only while the commit word is the
 * thread's and points into the sub-buffer its slot names, past the header,
 * with room for a record.
 */
static void test_slot(void **state)
{
	const uint32_t hdr = sizeof(struct xray_fdr_subbuf);
	void (*handler)(int32_t, XRayEntryType);
	cpu_set_t was;
	struct regs want = sentinel(3), r = want;
	struct slot sl;
	uint64_t *commit, saved, owner, base, rec, seq;
	uint32_t start, size, off, next;
	int cpu;

	(void)state;
	cpu = cpu_trace_pinned(&was, "");
	/* the C path reserves in this CPU's ring and arms the fast path */
	call_sled(tramps[XRAY_SLED_ENTRY], arch_sled_word(XRAY_SLED_ENTRY, 6),
		  &r);
	check_regs(&want, &r, false);
	assert_int_equal(rt_self.cpu, cpu);
	assert_true(rt_self.fast ==
		    rt_fast_word(rt_self.cpu, rt_live.generation));

	handler = rt_handler_arg0;
	rt_handler_arg0 = NULL;
	sl = slot_now();
	commit = sl.commit, saved = sl.saved, owner = sl.owner;
	off = sl.off, start = sl.start, size = sl.size, next = sl.next;
	assert_int_equal(saved >> 32, rt_self.tid);
	assert_true(off > start + hdr && off <= start + size - 8);
	assert_true(rt_ring.size >= 2 * size);

	for (int c = 0; c < 2; c++) {
		void (*tramp)(void) = c ? copy_tramps[XRAY_SLED_ENTRY] :
					  tramps[XRAY_SLED_ENTRY];

		memset(rt_self.area + RT_RING_CONTROL_SIZE + off, 0, 8);
		assert_true(appended(tramp, commit, saved));
		assert_int_equal(*(uint32_t *)(rt_self.area +
					       RT_RING_CONTROL_SIZE + off),
				 arch_sled_word(XRAY_SLED_ENTRY, 6));
		assert_true(
			appended(tramp, commit, owner | (start + size - 8)));
		assert_true(appended(tramp, commit, owner | (start + hdr)));
		/* full; in the header; the end of the sub-buffer before; in
		 * the next; another thread's tail on either side of this
		 * one's id */
		assert_false(appended(tramp, commit, owner | (start + size)));
		assert_false(appended(tramp, commit, owner | (start + 8)));
		assert_false(appended(tramp, commit, owner | start));
		assert_false(appended(tramp, commit, owner | (next + hdr)));
		assert_false(appended(tramp, commit, saved + (1ull << 32)));
		assert_false(appended(tramp, commit, saved - (1ull << 32)));
		/* the sub-buffer's base is read as the header has it now (a
		 * sub-buffer the kernel opened in the same slot); a base
		 * ahead of the TSC, or too far behind it, is the C path's */
		base = rt_self.hdr->tsc;
		rt_self.hdr->tsc = arch_tsc() - 1000000;
		assert_true(appended(tramp, commit, saved));
		memcpy(&rec, rt_self.area + RT_RING_CONTROL_SIZE + off, 8);
		assert_in_range(rec >> 32, 1000000, 1000000 + (1u << 30));
		rt_self.hdr->tsc = arch_tsc() + (1ull << 40);
		assert_false(appended(tramp, commit, saved));
		rt_self.hdr->tsc = arch_tsc() - (1ull << 33);
		assert_false(appended(tramp, commit, saved));
		rt_self.hdr->tsc = base;
		/* a later sub-buffer at the slot's place (its sequence number
		 * is not the one the C path reserved at: the ring went round,
		 * and it may be the kernel's reserve) is the C path's */
		seq = rt_self.hdr->seq;
		rt_self.hdr->seq = seq + rt_ring.header->subbuf_count;
		assert_false(appended(tramp, commit, saved));
		rt_self.hdr->seq = seq;
		assert_true(appended(tramp, commit, saved));
	}

	*commit = saved;
	rt_handler_arg0 = handler;
	cpu_trace_end(&was);
}

static bool event_appended(bool typed, uint64_t size, uint64_t *commit,
			   uint64_t word)
{
	uint64_t dropped = rt_live.dropped;
	bool appended;

	*commit = word;
	rt_self.busy = 1;
	event_call(typed, size);
	rt_self.busy = 0;
	appended = *commit != word;
	/* one or the other: appended, or dropped by the C path */
	assert_int_equal(rt_live.dropped, dropped + !appended);
	return appended;
}

/* The event @event_appended() just wrote at ring offset @off: its marker
 * and payload, padded with zeros, and the commit word past it. */
static void check_event(bool typed, uint64_t size, uint32_t off, uint64_t word,
			uint64_t before, uint64_t after)
{
	assert_int_equal(*(uint64_t *)rt_self.area,
			 word + 16 + ((size + 7) & ~7ull));
	check_marker(rt_self.area + RT_RING_CONTROL_SIZE + off, typed, size,
		     rt_self.hdr->tsc, before, after);
}

/*
 * CPU mode's event fast path: a custom or typed event of any size the C
 * path takes goes into the slot the C path reserved, marker and payload,
 * in one critical section, while the function fast path's conditions
 * hold and the event fits; anything else is the C path's, which then
 * drops it here (the thread is busy).  Then events written this way
 * come out of the flush as they went in.
 */
static void test_event_slot(void **state)
{
	const uint32_t hdr = sizeof(struct xray_fdr_subbuf);
	cpu_set_t was;
	struct regs want = sentinel(3), r = want;
	struct slot sl;
	uint64_t *commit, saved, owner, seq, base, before, full, was_dropped;
	uint64_t *fast_dropped;
	uint32_t start, size, off, next, frozen = RT_STATE_FROZEN;
	const uint32_t *state_word;
	uint8_t *backup;
	unsigned int sections[2] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(ev_data); i++)
		ev_data[i] = (uint8_t)(0xa1 + i * 7);
	cpu_trace_pinned(&was, "");
	/* the C path reserves (the thread's name goes first) and arms */
	call_sled(tramps[XRAY_SLED_ENTRY], arch_sled_word(XRAY_SLED_ENTRY, 6),
		  &r);
	check_regs(&want, &r, false);
	assert_int_equal(rt_self.event_room, rt_self.room);

	sl = slot_now();
	commit = sl.commit, saved = sl.saved, owner = sl.owner;
	off = sl.off, start = sl.start, size = sl.size, next = sl.next;
	assert_true(off + 16 + 64 <= start + size);

	/* every size, both kinds: appended at the tail */
	for (uint64_t n = 1; n <= sizeof(ev_data); n++)
		for (int typed = 0; typed < 2; typed++) {
			memset(rt_self.area + RT_RING_CONTROL_SIZE + off, 0xff,
			       16 + 64);
			before = arch_tsc();
			assert_true(event_appended(typed, n, commit, saved));
			check_event(typed, n, off, saved, before, arch_tsc());
			sections[typed] += check_section_in(
				typed ? __xray_TypedEvent : __xray_CustomEvent,
				1024);
		}
	/* (each critical section seen at least once: a preemption clears
	 * the rseq area's pointer to it) */
	assert_true(sections[0] > 0 && sections[1] > 0);
	/* (the appends below go over the records committed there) */
	backup = malloc(size);
	assert_non_null(backup);
	memcpy(backup, rt_self.area + RT_RING_CONTROL_SIZE + start, size);
	/* at the end of the sub-buffer: fits exactly, or not at all (a
	 * function record would) */
	assert_true(event_appended(0, 8, commit, owner | (start + size - 24)));
	assert_false(event_appended(0, 8, commit, owner | (start + size - 16)));
	assert_false(event_appended(1, 1, commit, owner | (start + size - 16)));
	assert_true(event_appended(0, 8, commit, owner | (start + hdr)));
	/* empty; in the header; the sub-buffer before, the next one; another
	 * thread's tail on either side of this one's id */
	assert_false(event_appended(0, 0, commit, saved));
	assert_false(event_appended(1, 0, commit, saved));
	assert_false(event_appended(0, 8, commit, owner | (start + 8)));
	assert_false(event_appended(0, 8, commit, owner | start));
	assert_false(event_appended(0, 8, commit, owner | (next + hdr)));
	assert_false(event_appended(0, 8, commit, saved + (1ull << 32)));
	assert_false(event_appended(1, 8, commit, saved - (1ull << 32)));
	/* a base ahead of the TSC, or too far behind it */
	base = rt_self.hdr->tsc;
	rt_self.hdr->tsc = arch_tsc() + (1ull << 40);
	assert_false(event_appended(0, 8, commit, saved));
	rt_self.hdr->tsc = arch_tsc() - (1ull << 33);
	assert_false(event_appended(1, 8, commit, saved));
	rt_self.hdr->tsc = base;
	/* a later sub-buffer at the slot's place (the kernel's reserve) */
	seq = rt_self.hdr->seq;
	rt_self.hdr->seq = seq + rt_ring.header->subbuf_count;
	assert_false(event_appended(0, 8, commit, saved));
	rt_self.hdr->seq = seq;
	/* the session frozen */
	state_word = rt_self.ring_state;
	rt_self.ring_state = &frozen;
	assert_false(event_appended(0, 8, commit, saved));
	rt_self.ring_state = state_word;
	/* discard mode: while the ring is as the C path found it full, no
	 * room is the fast path's drop, counted in the ring; once it moved
	 * (a reader consumed), the C path's */
	full = owner | (start + size - 16);
	fast_dropped = (uint64_t *)(rt_self.area + RT_CTL_FAST_DROPPED);
	was_dropped = *fast_dropped;
	rt_self.full_commit = full;
	rt_self.full_consumed = ((struct xray_fdr_control *)commit)->consumed;
	for (int typed = 0; typed < 2; typed++) {
		uint64_t c_dropped = rt_live.dropped;

		*commit = full;
		rt_self.busy = 1;
		event_call(typed, 8);
		rt_self.busy = 0;
		assert_int_equal(*commit, full);
		assert_int_equal(*fast_dropped, was_dropped + 1 + typed);
		assert_int_equal(rt_live.dropped, c_dropped);
	}
	rt_self.full_consumed--;
	assert_false(event_appended(0, 8, commit, full));
	assert_int_equal(*fast_dropped, was_dropped + 2);
	rt_self.full_commit = 0;
	/* the fast path off (another handler, max_depth: the key is 0) */
	arch_fast_key_store(0);
	assert_false(event_appended(0, 8, commit, saved));
	arch_fast_key_store((uint64_t)rt_live.generation << 32);
	/* a slot whose sub-buffer does not have the thread's name: arm
	 * leaves no room for events, and the C path writes the name */
	rt_self.slot_seq = seq + 1;
	rt_self.hdr->seq = seq + 1;
	rt_live.sink->arm(&rt_self);
	assert_int_equal(rt_self.event_room, 0);
	assert_false(event_appended(0, 8, commit, saved));
	rt_self.slot_seq = seq;
	rt_self.hdr->seq = seq;
	rt_live.sink->arm(&rt_self);
	assert_int_equal(rt_self.event_room, rt_self.room);
	assert_true(event_appended(1, 8, commit, saved));

	memcpy(rt_self.area + RT_RING_CONTROL_SIZE + start, backup, size);
	free(backup);
	/* events and functions in turn, then the flush: each comes out,
	 * in order */
	*commit = saved;
	for (int i = 0; i < 30; i++) {
		uint64_t at = *commit;

		want = sentinel((uint64_t)i);
		r = want;
		call_sled(tramps[XRAY_SLED_ENTRY],
			  arch_sled_word(XRAY_SLED_ENTRY, 6), &r);
		check_regs(&want, &r, false);
		assert_int_equal(*commit, at + 8);
		assert_true(event_appended(i % 2, 1 + (uint64_t)i, commit,
					   *commit));
	}
	cpu_trace_end(&was);
	check_turns();
}

/* Version 1's markers (a custom event's time absolute; no typed events)
 * are the C path's. */
static void test_event_version1(void **state)
{
	struct regs want = sentinel(3), r = want;
	cpu_set_t was;
	struct slot sl;

	(void)state;
	cpu_trace_pinned(&was, " version=1");
	call_sled(tramps[XRAY_SLED_ENTRY], arch_sled_word(XRAY_SLED_ENTRY, 6),
		  &r);
	check_regs(&want, &r, false);
	sl = slot_now();
	assert_int_equal(rt_self.event_room, rt_self.room);
	assert_false(event_appended(0, 8, sl.commit, sl.saved));
	assert_false(event_appended(1, 8, sl.commit, sl.saved));
	*sl.commit = sl.saved;
	cpu_trace_end(&was);
}

/*
 * Whatever takes it, the fast path or the C path, the thread's name is
 * in every sub-buffer its events are in, before the first of them: a
 * named thread's events over many sub-buffers of its CPU's ring, then
 * each sub-buffer walked.  Return the sub-buffers with its events.
 */
static unsigned int named_subbufs(uint32_t tid)
{
	uint32_t size = rt_ring.header->subbuf_size;
	uint32_t tail = (uint32_t) * (uint64_t *)rt_self.area;
	unsigned int with_events = 0;

	for (uint32_t i = 0; i < rt_ring.header->subbuf_count; i++) {
		const uint8_t *sb =
			rt_self.area + RT_RING_CONTROL_SIZE + (size_t)i * size;
		const struct xray_fdr_subbuf *h = (const void *)sb;
		uint32_t used = (tail - 1) / size == i ? tail - i * size :
							 h->used;
		bool named = false, events = false;

		if (h->tid != tid || used <= sizeof(*h) || used > size)
			continue;
		for (uint32_t at = sizeof(*h), len; at < used; at += len) {
			const uint8_t *p = sb + at;
			uint32_t n;

			len = 8;
			if (!(p[0] & 1))
				continue; /* a function record */
			len = 16;
			if (p[0] != 0x0b && p[0] != 0x11)
				continue;
			memcpy(&n, p + 1, 4);
			len += (n + 7) & ~7u;
			if (!memcmp(p + 16, "XFTN", 4))
				named = true;
			else if (p[16] == ev_data[0] && !named)
				fail_msg("sub-buffer %u: an event before the "
					 "name",
					 i);
			else if (p[16] == ev_data[0])
				events = true;
		}
		with_events += events;
	}
	return with_events;
}

/*
 * What the module does when its scheduler record fills a sub-buffer: it
 * closes it and opens the next one, keeping the tail's owner.  And the
 * thread's slot there, armed, as a reserve there whose commit was refused
 * (the thread moved) leaves it: no name in it yet.
 */
static void kernel_opens_next(void)
{
	uint64_t *commit = (uint64_t *)rt_self.area;
	uint32_t size = rt_ring.header->subbuf_size;
	uint32_t off = (uint32_t)*commit, idx = (off - 1) / size;
	uint32_t next = (idx + 1) % rt_ring.header->subbuf_count;
	struct xray_fdr_subbuf *sb =
		(void *)(rt_self.area + RT_RING_CONTROL_SIZE +
			 (size_t)idx * size);
	struct xray_fdr_subbuf *nb =
		(void *)(rt_self.area + RT_RING_CONTROL_SIZE +
			 (size_t)next * size);

	sb->used = off - idx * size;
	*nb = (struct xray_fdr_subbuf){ .seq = sb->seq + 1,
					.tsc = arch_tsc(),
					.cpu = sb->cpu,
					.tid = rt_self.tid,
					.flags = XRAY_FDR_SUBBUF_KERNEL };
	*commit = XRAY_FDR_COMMIT(rt_self.tid, next * size + sizeof(*nb));
	rt_self.slot = (uint64_t)rt_self.tid << 32 |
		       (next * size + sizeof(*nb));
	rt_self.slot_seq = nb->seq;
	rt_self.hdr = nb;
	assert_int_equal(rt_live.sink->arm(&rt_self), rt_live.generation);
}

static void test_event_names(void **state)
{
	char was_name[16] = "";
	cpu_set_t was;
	unsigned int subbufs;

	(void)state;
	assert_int_equal(prctl(PR_GET_NAME, was_name), 0);
	assert_int_equal(prctl(PR_SET_NAME, "event-namer"), 0);
	cpu_trace_pinned(&was, "");
	/* about 60 bytes an iteration: 15 sub-buffers of the ring's 32,
	 * one of them opened by the "kernel" */
	for (int i = 0; i < 1000; i++) {
		struct regs want = sentinel((uint64_t)i), r = want;

		call_sled(tramps[i % 2], arch_sled_word((unsigned int)i % 2, 6),
			  &r);
		check_regs(&want, &r, false);
		event_call(i % 3 == 0, 1 + (uint64_t)i % 40);
		if (i == 500)
			kernel_opens_next();
	}
	assert_true(rt_ring.header->subbuf_count >= 20);
	subbufs = named_subbufs(rt_self.tid);
	cpu_trace_end(&was);
	assert_int_equal(prctl(PR_SET_NAME, was_name), 0);
	assert_true(subbufs >= 10);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registers),
		cmocka_unit_test(test_event_registers),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_threshold),
#ifndef TRAMP_CPU
		cmocka_unit_test(test_event_buffer),
#endif
#ifdef TRAMP_CPU
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_event_slot),
		cmocka_unit_test(test_event_version1),
		cmocka_unit_test(test_event_names),
#endif
	};

	return cmocka_run_group_tests_name("trampolines, mode=" MODE, tests,
					   setup, teardown);
}
