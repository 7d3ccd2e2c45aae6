/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * XRay trampolines for x86_64.
 *
 * A patched entry or tail-exit sled does "mov $word,%r10d; call T", an exit
 * sled "mov $word,%r10d; jmp T" in place of the function's ret (word: the
 * function id and the action, arch_sled_word()); r10 and r11
 * are free at both points.  Everything else may be live: at entry the
 * argument registers (rdi, rsi, rdx, rcx, r8, r9, rax for varargs, vector
 * registers), at exit the return registers (rax, rdx, xmm0-1, st0-1), and
 * any register under a non-standard calling convention.  So:
 *
 * - The fast paths (thread mode, CPU mode) write a function record (and
 *   an argument's CallArgument record) touching only rax
 *   and rdx (and rcx where noted) besides r10/r11, saved in the red zone
 *   (below the stack pointer, where a leaf may write and signals do not
 *   reach), or rdx in r11 where that is free (thread mode's copies).
 *   Each is one rseq critical section ending in the store of the write
 *   position; see lib/runtime/thread.h for why that is enough.
 *   What they rely on, each where it is used: the sled's %r10d already
 *   holds the first half of the record (arch_sled_word()); one compare
 *   of the rseq area's first word against the thread's checks both the
 *   CPU and that the fast path is on (FAST_BEGIN); record times are
 *   relative to a base whose high half one compare checks, so no 64-bit
 *   delta is formed and nothing but the position is stored to commit
 *   (RECORD_WORD, lib/runtime/logbuf.h); the duration threshold is the
 *   drain's, so it does not turn the fast path off.
 * - The event fast path (EVENT_FAST) appends a custom or typed event,
 *   its payload included, the same way, in either mode.
 * - Anything else (a new buffer, a CPU change, a TSC wrap) calls our C
 *   controller, which uses no vector registers, after
 *   saving the general registers.  Handlers
 *   set through LLVM's API, and the controller's rare set-up work, get
 *   the whole vector state saved too (xsave with the components the OS
 *   enabled, minus AMX tiles), on a stack realigned to 64 bytes.
 *
 * Event sleds call __xray_CustomEvent / __xray_TypedEvent from the middle
 * of a function, where anything may be live and the stack may have any
 * alignment: those save the flags too, and realign.
 */
#include "../../runtime/ring.h"
#include "../../runtime/thread.h"

/* Offsets from %rbp of the registers SAVE_GPRS pushes. */
#define SAVED_RDX -32
#define SAVED_RSI -40
#define SAVED_RDI -48
#define SAVED_R10 -72
#define SAVED_R11 -80
#define XSAVE_HEADER 512

	.text

/*
 * Every caller-saved general register, and the flags if @flags (event
 * sleds sit mid-function, where they may be live), with %rbp as the frame
 * pointer and the stack aligned for a call.
 */
.macro SAVE_GPRS flags
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.if \flags
	pushfq
	.else
	subq	$8, %rsp
	.endif
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	andq	$-16, %rsp
.endm

.macro RESTORE_GPRS flags
	leaq	SAVED_R11(%rbp), %rsp
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	.if \flags
	popfq
	.else
	addq	$8, %rsp
	.endif
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_same_value %rbp
.endm

/*
 * After SAVE_GPRS: the whole vector state (xsave with the components the
 * OS enabled, minus AMX tiles; fxsave without XSAVE) on a 64-byte aligned
 * area.  Clobbers %rax and %rdx.  RESTORE_VEC must come before
 * RESTORE_GPRS.
 */
.macro SAVE_VEC
	andq	$-64, %rsp
	subq	rt_xsave_size(%rip), %rsp
	cmpb	$0, rt_xsave_kind(%rip)
	je	101f
	xorl	%eax, %eax
	movq	%rax, XSAVE_HEADER(%rsp)
	movq	%rax, XSAVE_HEADER+8(%rsp)
	movq	%rax, XSAVE_HEADER+16(%rsp)
	movq	%rax, XSAVE_HEADER+24(%rsp)
	movq	%rax, XSAVE_HEADER+32(%rsp)
	movq	%rax, XSAVE_HEADER+40(%rsp)
	movq	%rax, XSAVE_HEADER+48(%rsp)
	movq	%rax, XSAVE_HEADER+56(%rsp)
	movl	rt_xsave_mask(%rip), %eax
	movl	rt_xsave_mask+4(%rip), %edx
	cmpb	$2, rt_xsave_kind(%rip)
	je	102f
	xsave64	(%rsp)
	jmp	103f
102:	xsavec64 (%rsp)
	jmp	103f
101:	fxsave64 (%rsp)
103:
.endm

.macro RESTORE_VEC
	cmpb	$0, rt_xsave_kind(%rip)
	je	104f
	movl	rt_xsave_mask(%rip), %eax
	movl	rt_xsave_mask+4(%rip), %edx
	xrstor64 (%rsp)
	jmp	105f
104:	fxrstor64 (%rsp)
105:
.endm

/* A hidden function of ours, its CFI begun. */
.macro TRAMP_BEGIN name
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
.endm

/*
 * The C path of a function sled.  Our own FDR handlers are called light:
 * fdr.c uses no vector registers, so general registers are all there is
 * to save; if it asks for more (a thread's first event), the heavy
 * variant runs after saving the vector state too.  A handler installed
 * through LLVM's API is called as handler(id, kind[, first argument])
 * with everything saved.  @args: the entry sled of a function that logs
 * its first argument, which prefers the arg1 handler, as LLVM does.
 * The sled's %r10d is the first half of its function record; the id is
 * what it has above the action bits.
 */
.macro GENERIC name, kind, args
	TRAMP_BEGIN \name
	shrl	$RT_FUNC_ID_SHIFT, %r10d	/* the sled's word: the id */
	.if \args
	movq	rt_handler_arg1(%rip), %r11
	testq	%r11, %r11
	jz	1f
	SAVE_GPRS 0
	leaq	rt_fdr_handle_arg1(%rip), %rax
	movl	$3, %edi		/* LOG_ARGS_ENTRY */
	jmp	3f
	.endif
1:	movq	rt_handler_arg0(%rip), %r11
	testq	%r11, %r11
	jz	9f
	SAVE_GPRS 0
	leaq	rt_fdr_handle_arg0(%rip), %rax
	movl	$(\kind % 3), %edi	/* LLVM's arg0 handler: a plain entry */
3:	cmpq	%rax, %r11
	jne	5f
	movl	%edi, -8(%rbp)		/* the op, for the heavy call */
	movq	SAVED_RDI(%rbp), %rdx
	movl	SAVED_R10(%rbp), %esi
	call	rt_fdr_light
	testl	%eax, %eax
	jz	8f
	SAVE_VEC
	movl	-8(%rbp), %edi
	movq	SAVED_RDI(%rbp), %rdx
	movl	SAVED_R10(%rbp), %esi
	call	rt_fdr_heavy
	RESTORE_VEC
	jmp	8f
5:	SAVE_VEC
	movl	SAVED_R10(%rbp), %edi
	movl	$\kind, %esi
	movq	SAVED_RDI(%rbp), %rdx
	call	*SAVED_R11(%rbp)
	RESTORE_VEC
8:	RESTORE_GPRS 0
9:	ret
	.cfi_endproc
	.size \name, . - \name
.endm

GENERIC rt_generic_entry, 0, 0
GENERIC rt_generic_exit, 1, 0
GENERIC rt_generic_tail, 2, 0
GENERIC rt_generic_args, 3, 1

/*
 * What the fast paths share.  Registers: the sled left the first half of
 * the function record in %r10 (arch_sled_word(): id << 4 | action << 1,
 * zero-extended), and %r10 and %r11 are free; %rax and %rdx (rdtsc's) and
 * for @rcx %rcx are saved in the red zone (below the stack pointer, where
 * a leaf may write and signals do not reach) and restored on the way out
 * and before the C path.  Then: arming the critical section; one compare
 * of the rseq area's first word (cpu_id_start, cpu_id) XOR rt_fast_key
 * against t->fast, which checks at once that the fast path may write (the
 * key is the generation armed; 0 when off) and that the thread is on the
 * CPU its records name (thread.h); the rseq signature before the abort
 * handler, which starts over from the arming; the critical section's
 * descriptor from _start to the commit (_post).  In the library, %r11
 * holds the thread's TLS offset (CPU mode reuses it for the area).  In a
 * copy (@copy, the sled kind: see "as a template" below) the offsets are
 * in the instructions and the rest is in the copy's data page.
 */
#define FIX_SELF 0
#define FIX_RSEQ 1
#define COPY_DATA 4096
#define COPY_KEY (COPY_DATA + 0)
#define COPY_SLOW (COPY_DATA + 8)
#define COPY_CS (COPY_DATA + 96)
/* copies 0 to 3 are thread mode's kinds, from 4 CPU mode's */
#define COPY_CPU 4

/* In a copy: the displacement that ends @back bytes before this point is
 * relative to @kind's offset from the thread pointer. */
.macro FIX kind, back
.Lfix\@:
	.subsection 2
	.short	.Lfix\@ - rt_fast_template - (\back), \kind
	.subsection 0
.endm

/* "@insn %fs:@off, @reg", @off into the thread's state. */
.macro SELF_SRC copy, insn, off, reg
	.if \copy < 0
	\insn	%fs:\off(%r11), \reg
	.else
	\insn	%fs:\off, \reg
	FIX	FIX_SELF, 4
	.endif
.endm

/* "@insn @src, %fs:@off", @src a register or an 8-bit immediate. */
.macro SELF_DST copy, insn, src, off, imm=0
	.if \copy < 0
	\insn	\src, %fs:\off(%r11)
	.else
	\insn	\src, %fs:\off
	FIX	FIX_SELF, 4+\imm
	.endif
.endm

/*
 * The library's fast paths: the thread's TLS offset into %r11, the
 * critical section of @name armed (an abort comes back to _arm, and
 * starts over here), then its first load: the rseq area's first word
 * XOR the key into %rdx, for the compare against the thread's.
 */
.macro LIBRARY_ARM name
.L\name\()_arm:
	movq	rt_self@gottpoff(%rip), %r11
	movq	rt_rseq_offset(%rip), %rax
	leaq	.L\name\()_cs(%rip), %rdx
	movq	%rdx, %fs:RT_RSEQ_CS(%rax)
.L\name\()_start:
	movq	%fs:RT_RSEQ_CPU_ID_START(%rax), %rdx
	xorq	rt_fast_key(%rip), %rdx
.endm

.macro FAST_BEGIN name, rcx, copy=-1
	.if \copy < 0
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.endif
	.p2align 5
\name:
	.if \copy < 0
	.cfi_startproc
	.endif
	movq	%rax, -8(%rsp)
	.if \copy >= 0 && \copy < COPY_CPU
	/* thread mode's copies leave %r11 free: a move costs less than a
	 * store and a load (0.5 ns a call in make bench) */
	movq	%rdx, %r11
	.else
	movq	%rdx, -16(%rsp)
	.endif
	.if \rcx
	movq	%rcx, -24(%rsp)
	.endif
	/* an abort comes back to _arm */
	.if \copy < 0
	LIBRARY_ARM \name
	.else
.L\name\()_arm:
	leaq	rt_fast_template+COPY_CS+32*\copy(%rip), %rax
	movq	%rax, %fs:RT_RSEQ_CS
	FIX	FIX_RSEQ, 4
.L\name\()_start:
	movq	%fs:RT_RSEQ_CPU_ID_START, %rdx
	FIX	FIX_RSEQ, 4
	xorq	rt_fast_template+COPY_KEY(%rip), %rdx
	.endif
	SELF_DST \copy, cmpq, %rdx, RT_THREAD_FAST
	jne	.L\name\()_slow
.endm

/* The critical section descriptor (the kernel's struct rseq_cs) of the
 * fast path @name, from _start to the commit (_post), aborting to _abort. */
.macro CS_DESC name
	.pushsection .data.rel.ro, "aw"
	.p2align 5
.L\name\()_cs:
	.long	0, 0
	.quad	.L\name\()_start
	.quad	.L\name\()_post - .L\name\()_start
	.quad	.L\name\()_abort
	.popsection
.endm

/* The registers FAST_BEGIN saved, back. */
.macro FAST_RESTORE rcx, copy
	movq	-8(%rsp), %rax
	.if \copy >= 0 && \copy < COPY_CPU
	movq	%r11, %rdx
	.else
	movq	-16(%rsp), %rdx
	.endif
	.if \rcx
	movq	-24(%rsp), %rcx
	.endif
.endm

/*
 * Discard mode's drop on a fast path, with %rcx the area of the
 * thread's CPU: counted in its control page if the ring is as the C path
 * last found it full (the same commit word and consumed count), else on
 * to @name's C path.
 */
.macro DISCARD_DROP name, copy=-1
	movq	(%rcx), %rax
	SELF_SRC \copy, cmpq, RT_THREAD_FULL_COMMIT, %rax
	jne	.L\name\()_slow
	movq	RT_CTL_CONSUMED(%rcx), %rax
	SELF_SRC \copy, cmpq, RT_THREAD_FULL_CONSUMED, %rax
	jne	.L\name\()_slow
	lock addq $1, RT_CTL_FAST_DROPPED(%rcx)
.endm

.macro FAST_END name, slow, rcx, copy=-1, after, full
.L\name\()_post:
	.ifnb \after
	\after
	.endif
	FAST_RESTORE \rcx, \copy
	ret
	/* ud1 carrying the rseq signature right before the abort handler */
	.byte	0x0f, 0xb9, 0x3d
	.long	RT_RSEQ_SIG
.L\name\()_abort:
	jmp	.L\name\()_arm
	.ifnb \full
	/*
	 * CPU mode (@full): no room in the slot.  Discard mode drops the
	 * event here, outside the critical section, while the ring is as
	 * the C path found it full (the same commit word and consumed
	 * count: it would take the same decision, at a C call's cost for
	 * every event); counted in the CPU's control page.  %rcx is the
	 * area of the thread's CPU.  Also where a time too far from the
	 * sub-buffer's base needs a new one, which a full ring refuses.
	 */
.L\name\()_far:
	.if \copy < 0
	movq	rt_self@gottpoff(%rip), %r11	/* (it held the header) */
	.endif
\full:
	DISCARD_DROP \name, \copy
	FAST_RESTORE \rcx, \copy
	ret
	.endif
.L\name\()_slow:
	FAST_RESTORE \rcx, \copy
	.if \copy < 0
	jmp	\slow
	.cfi_endproc
	.size	\name, . - \name

	CS_DESC \name
	.else
	jmp	*rt_fast_template+COPY_SLOW+8*\copy(%rip)
	.endif
.endm

/*
 * The record's time: thread mode's base has a low half of zero (fdr.c), so
 * once the TSC's high half is the base's, the time is the TSC's low half
 * as rdtsc leaves it in %eax.  CPU mode's base is a sub-buffer's, which
 * the runtime or the kernel took on some CPU (RECORD_TIME): its high half
 * is checked (jumping to @far if it differs), its low half subtracted,
 * and a TSC behind it (another CPU's) takes the C path.  Clobbers %rdx.
 */
.macro RECORD_TIME name, base_hi, base_lo, far
	rdtsc
	cmpl	%edx, \base_hi
	jne	\far
	subl	\base_lo, %eax		/* (zero-extends) */
	jb	.L\name\()_slow
.endm

/* The function record of the sled into %rax, with the time in %eax. */
.macro RECORD_WORD
	shlq	$32, %rax
	orq	%r10, %rax
.endm

/*
 * The FDR fast path of thread mode: append one function record (and for
 * @args the CallArgument record of %rdi, which needs %rcx too) to the
 * thread's buffer, or fall back to @slow with every register as it came.
 * The commit is one add to the position in memory, after the stores of
 * the records.  @copy: see FAST_BEGIN.
 */
.macro FDR_FAST name, args, slow, copy=-1, after, rcx=0
	FAST_BEGIN \name, (\args | \rcx), \copy
	rdtsc
	SELF_DST \copy, cmpl, %edx, RT_THREAD_BASE+4
	jne	.L\name\()_slow
	RECORD_WORD
	SELF_SRC \copy, movq, RT_THREAD_POS, %rdx
	.if \args
	leaq	16(%rdx), %rcx
	SELF_SRC \copy, cmpq, RT_THREAD_END, %rcx
	.else
	SELF_SRC \copy, cmpq, RT_THREAD_END, %rdx
	.endif
	jae	.L\name\()_slow
	movq	%rax, (%rdx)
	.if \args
	movq	%rdi, %rax
	shlq	$8, %rax
	orq	$RT_CALL_ARGUMENT_BYTE, %rax
	movq	%rax, 8(%rdx)
	movq	%rdi, %rax
	shrq	$56, %rax
	movq	%rax, 16(%rdx)
	SELF_DST \copy, addq, $24, RT_THREAD_POS, 1	/* commit */
	.else
	SELF_DST \copy, addq, $8, RT_THREAD_POS, 1	/* commit */
	.endif
	FAST_END \name, \slow, (\args | \rcx), \copy, \after
.endm

FDR_FAST rt_tramp_entry, 0, rt_generic_entry
FDR_FAST rt_tramp_exit, 0, rt_generic_exit
FDR_FAST rt_tramp_tail, 0, rt_generic_tail
FDR_FAST rt_tramp_args, 1, rt_generic_args

/*
 * The fast path of CPU mode (lib/runtime/ring.h): append one function
 * record (and for @args the CallArgument record of %rdi, in the same
 * commit) to the ring of this CPU, or fall back to @slow with every
 * register as it came.  It saves %rcx too, for the CPU's area.  The
 * thread keeps the area of the CPU it last reserved on (on another CPU it
 * takes the C path once) and the sub-buffer its records went in, its
 * slot (struct rt_thread): the commit word minus the slot is the bytes
 * after that sub-buffer's header only if the thread owns the tail and the
 * commit word points into that sub-buffer, and something larger than
 * rt_ring.slot_room otherwise (another owner, another sub-buffer: the
 * difference wraps), so one compare checks ownership, the sub-buffer and
 * the room (for @args, with 16 bytes more: the difference plus 16, whose
 * carry is a difference that wrapped).  The slot's header is read as it is now: whoever opened the
 * sub-buffer (the kernel too, keeping the owner) wrote its base TSC.
 * Its sequence number must be the one the C path reserved at (the
 * thread's slot_seq): after the ring went round, the same place may be
 * a sub-buffer that user writers leave to the kernel (sink_cpu_write.c,
 * "The kernel's reserve").
 * Nothing else writes the commit word inside the critical section (the
 * kernel writes only from a context switch, which restarts us), so it is
 * read again after rdtsc, and the commit adds to it.
 */
.macro CPU_FAST name, args, slow, copy=-1
	FAST_BEGIN \name, 1, \copy
	SELF_SRC \copy, movq, RT_THREAD_RING_STATE, %rax
	testl	$RT_STATE_FROZEN, (%rax)
	jnz	.L\name\()_slow
	SELF_SRC \copy, movq, RT_THREAD_AREA, %rcx	/* this CPU's area */
	movq	(%rcx), %rax			/* the commit word */
	SELF_SRC \copy, subq, RT_THREAD_SLOT, %rax
	.if \args
	addq	$16, %rax
	jc	.L\name\()_slow
	.endif
	SELF_SRC \copy, cmpq, RT_THREAD_ROOM, %rax
	ja	.L\name\()_full
	/* the sub-buffer still, not a later one at its place */
	SELF_SRC \copy, movq, RT_THREAD_HDR, %rdx
	movq	(%rdx), %rax			/* its sequence number */
	SELF_SRC \copy, cmpq, RT_THREAD_SLOT_SEQ, %rax
	jne	.L\name\()_slow
	/* (in the library's, an abort reloads %r11) */
	movq	%rdx, %r11
	/* since the sub-buffer's base (too far: a new sub-buffer) */
	RECORD_TIME \name, RT_SUBBUF_TSC+4(%r11), RT_SUBBUF_TSC(%r11), .L\name\()_far
	RECORD_WORD
	movl	(%rcx), %edx			/* the offset, as read before */
	movq	%rax, RT_RING_CONTROL_SIZE(%rcx,%rdx)
	.if \args
	/* (%r11 is free: an abort reloads it) */
	movq	%rdi, %rax
	shlq	$8, %rax
	orq	$RT_CALL_ARGUMENT_BYTE, %rax
	movq	%rax, RT_RING_CONTROL_SIZE+8(%rcx,%rdx)
	movq	%rdi, %rax
	shrq	$56, %rax
	movq	%rax, RT_RING_CONTROL_SIZE+16(%rcx,%rdx)
	addq	$24, (%rcx)			/* commit */
	.else
	addq	$8, (%rcx)			/* commit */
	.endif
	FAST_END \name, \slow, 1, \copy, , .L\name\()_full
.endm

CPU_FAST rt_cpu_tramp_entry, 0, rt_generic_entry
CPU_FAST rt_cpu_tramp_exit, 0, rt_generic_exit
CPU_FAST rt_cpu_tramp_tail, 0, rt_generic_tail
CPU_FAST rt_cpu_tramp_args, 1, rt_generic_args

/*
 * Duration triggers (lib/runtime/trigger.h).  The sleds of the functions a
 * trigger names call these instead of their kind's trampoline, so no
 * other function pays anything: an entry keeps (function id, TSC) on the
 * thread's trigger stack (struct rt_thread), an exit pops it and calls
 * rt_trigger_exit() only when the call lasted longer than the smallest
 * threshold (rt_trig_min_cycles) or its entry is not on top (an unwound
 * call).  The stack keeps the innermost RT_TRIG_STACK calls; deeper ones
 * are counted, not timed.  A signal handler's calls in between nest like
 * any others.
 *
 * In thread mode the record's own rdtsc times the call: the fast path of
 * FDR_FAST, then, once the record is committed (past the critical
 * section: the stack is the thread's alone), the stack's work with the
 * TSC the record holds (its low half) and the base's high half, which
 * the fast path checked it equals.  Should a signal handler move the
 * base in between, the exit only calls C, which reads the TSC again.
 * When the fast path cannot write, and in CPU mode, a wrapper does the
 * stack's work with an rdtsc of its own and goes on to the trampoline of
 * its kind: the C path, or rt_trig_next[] (the sink's).
 */
.macro TRIG_PUSH
	movl	%fs:RT_THREAD_TRIG_DEPTH(%r11), %ecx
	cmpl	$RT_TRIG_STACK, %ecx
	jae	1f
	movq	%rax, %fs:RT_THREAD_TRIG_TSC(%r11,%rcx,8)
	movl	%r10d, %eax
	shrl	$RT_FUNC_ID_SHIFT, %eax
	movl	%eax, %fs:RT_THREAD_TRIG_ID(%r11,%rcx,4)
1:	addl	$1, %fs:RT_THREAD_TRIG_DEPTH(%r11)
.endm

/* With the TSC in %rax: pop, and jump to 2: if C must see the exit. */
.macro TRIG_POP
	movl	%fs:RT_THREAD_TRIG_DEPTH(%r11), %ecx
	subl	$1, %ecx
	jb	1f			/* no call open: entered before */
	movl	%ecx, %fs:RT_THREAD_TRIG_DEPTH(%r11)
	cmpl	$RT_TRIG_STACK, %ecx
	jae	1f
	subq	%fs:RT_THREAD_TRIG_TSC(%r11,%rcx,8), %rax
	movl	%r10d, %edx
	shrl	$RT_FUNC_ID_SHIFT, %edx
	cmpl	%fs:RT_THREAD_TRIG_ID(%r11,%rcx,4), %edx
	jne	2f
	cmpq	rt_trig_min_cycles(%rip), %rax
	ja	2f
1:
.endm

/* After a committed record at (%rdx): its TSC into %rax. */
.macro TRIG_RECORD_TSC
	movl	4(%rdx), %eax
	movl	%fs:RT_THREAD_BASE+4(%r11), %ecx
	shlq	$32, %rcx
	orq	%rcx, %rax
.endm

.macro TRIG_AFTER_ENTRY
	TRIG_RECORD_TSC
	TRIG_PUSH
.endm

/* rt_trigger_exit(the sled's word), every register kept */
.macro TRIG_CALL_C
	SAVE_GPRS 0
	movl	SAVED_R10(%rbp), %edi
	call	rt_trigger_exit
	RESTORE_GPRS 0
.endm

.macro TRIG_AFTER_EXIT
	TRIG_RECORD_TSC
	TRIG_POP
	jmp	3f
2:	FAST_RESTORE 1, -1
	TRIG_CALL_C
	ret
3:
.endm

.macro TRIG_SAVE
	movq	%rax, -8(%rsp)
	movq	%rdx, -16(%rsp)
	movq	%rcx, -24(%rsp)
	movq	rt_self@gottpoff(%rip), %r11
.endm

.macro TRIG_RESTORE
	movq	-8(%rsp), %rax
	movq	-16(%rsp), %rdx
	movq	-24(%rsp), %rcx
.endm

.macro TRIG_RDTSC
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
.endm

/* The wrappers: the stack's work, then on to @next (a jmp operand). */
.macro TRIG_WRAP name, next, exit
	TRAMP_BEGIN \name
	TRIG_SAVE
	TRIG_RDTSC
	.if \exit
	TRIG_POP
	.else
	TRIG_PUSH
	.endif
	TRIG_RESTORE
	jmp	\next
	.if \exit
2:	TRIG_RESTORE
	TRIG_CALL_C
	jmp	\next
	.endif
	.cfi_endproc
	.size	\name, . - \name
.endm

/* in front of the sink's trampolines (CPU mode) */
TRIG_WRAP rt_trig_entry, *rt_trig_next(%rip), 0
TRIG_WRAP rt_trig_exit, *rt_trig_next+8(%rip), 1
TRIG_WRAP rt_trig_tail, *rt_trig_next+16(%rip), 1
TRIG_WRAP rt_trig_args, *rt_trig_next+24(%rip), 0
/* thread mode's: the C paths when the fast path cannot write */
TRIG_WRAP rt_trig_slow_entry, rt_generic_entry, 0
TRIG_WRAP rt_trig_slow_exit, rt_generic_exit, 1
TRIG_WRAP rt_trig_slow_tail, rt_generic_tail, 1
TRIG_WRAP rt_trig_slow_args, rt_generic_args, 0
/* thread mode's fast paths, timing with the record's TSC */
FDR_FAST rt_trig_fdr_entry, 0, rt_trig_slow_entry, -1, TRIG_AFTER_ENTRY, 1
FDR_FAST rt_trig_fdr_exit, 0, rt_trig_slow_exit, -1, TRIG_AFTER_EXIT, 1
FDR_FAST rt_trig_fdr_tail, 0, rt_trig_slow_tail, -1, TRIG_AFTER_EXIT, 1
FDR_FAST rt_trig_fdr_args, 1, rt_trig_slow_args, -1, TRIG_AFTER_ENTRY, 1

/*
 * The fast paths once more, thread mode's and CPU mode's, as a template
 * the runtime copies next to the instrumented code
 * (lib/arch/x86_64/fastcopy.c): two pages, the code and then its data.
 * A copy is in reach of the sleds, so they call it without a jump stub,
 * and it reaches the thread's state and the rseq area at fixed offsets
 * from %fs, which the copier writes into the instructions (each such
 * displacement is listed in the fix-up table after the pages, with what
 * it is relative to), so it needs no register for them: 21 instructions
 * against the library's 23 in thread mode, 32 against 34 in CPU mode,
 * relying on the same invariants.  Everything else it refers to is
 * inside the two pages, %rip-relative: the key (a copy of rt_fast_key,
 * which arch_fast_key_store() keeps in step), the C paths' addresses, and
 * the critical sections' descriptors, whose addresses the copier makes
 * absolute.  The template itself never runs: it is not executable.
 */

/* A copy's critical section descriptor: offsets the copier makes
 * addresses. */
.macro COPY_DESC name
	.p2align 5
	.long	0, 0
	.quad	.L\name\()_start - rt_fast_template
	.quad	.L\name\()_post - .L\name\()_start
	.quad	.L\name\()_abort - rt_fast_template
.endm

	.section .rodata.rt_fast_template, "a"
	.p2align 12
	.globl	rt_fast_template
	.hidden	rt_fast_template
rt_fast_template:
	FDR_FAST .Lcopy_entry, 0, , 0
	FDR_FAST .Lcopy_exit, 0, , 1
	FDR_FAST .Lcopy_tail, 0, , 2
	FDR_FAST .Lcopy_args, 1, , 3
	CPU_FAST .Lcopy_cpu_entry, 0, , COPY_CPU
	CPU_FAST .Lcopy_cpu_exit, 0, , (COPY_CPU + 1)
	CPU_FAST .Lcopy_cpu_tail, 0, , (COPY_CPU + 2)
	CPU_FAST .Lcopy_cpu_args, 1, , (COPY_CPU + 3)
	.p2align 12, 0xcc
	.quad	0			/* COPY_KEY */
	/* COPY_SLOW: each copy's C path; filled by the copier */
	.quad	0, 0, 0, 0, 0, 0, 0, 0
	COPY_DESC .Lcopy_entry
	COPY_DESC .Lcopy_exit
	COPY_DESC .Lcopy_tail
	COPY_DESC .Lcopy_args
	COPY_DESC .Lcopy_cpu_entry
	COPY_DESC .Lcopy_cpu_exit
	COPY_DESC .Lcopy_cpu_tail
	COPY_DESC .Lcopy_cpu_args
	.p2align 12, 0
	/* where each kind's trampoline starts in a copy */
	.globl	rt_fast_template_entries
	.hidden	rt_fast_template_entries
rt_fast_template_entries:
	.short	.Lcopy_entry - rt_fast_template
	.short	.Lcopy_exit - rt_fast_template
	.short	.Lcopy_tail - rt_fast_template
	.short	.Lcopy_args - rt_fast_template
	.short	.Lcopy_cpu_entry - rt_fast_template
	.short	.Lcopy_cpu_exit - rt_fast_template
	.short	.Lcopy_cpu_tail - rt_fast_template
	.short	.Lcopy_cpu_args - rt_fast_template
	.globl	rt_fast_template_fixups
	.hidden	rt_fast_template_fixups
rt_fast_template_fixups:
	.subsection 3
	.globl	rt_fast_template_fixups_end
	.hidden	rt_fast_template_fixups_end
rt_fast_template_fixups_end:
	.subsection 0
	.text

/*
 * An event's marker and payload at (%r8), the time since the base in
 * %eax (zero-extended), the size in %r10, the payload at @data (a typed
 * event's type in %di); then its bytes, rounded up to 8, in %rax.
 * Clobbers %rdx and %r9.
 */
.macro EVENT_WRITE typed, data
	/* the marker (lib/fdr/records.h): its kind, the size at byte 1,
	 * the delta at byte 5, a typed event's type at byte 9 */
	movq	%rax, %rdx
	shrq	$24, %rdx
	.if \typed
	movzwl	%di, %r9d		/* (the sled set only 16 bits) */
	shll	$8, %r9d
	orq	%r9, %rdx
	.endif
	movq	%rdx, 8(%r8)
	shlq	$40, %rax
	movq	%r10, %rdx
	shlq	$8, %rdx
	orq	%rdx, %rax
	.if \typed
	orq	$RT_TYPED_EVENT_BYTE, %rax
	.else
	orq	$RT_CUSTOM_EVENT_BYTE, %rax
	.endif
	movq	%rax, (%r8)
	/* the payload's words, last first */
	movq	%r10, %r9
	shrq	$3, %r9
	jz	2f
1:	movq	-8(\data,%r9,8), %rax
	movq	%rax, 8(%r8,%r9,8)
	decq	%r9
	jnz	1b
	/* its last bytes, read one by one (no load past its end), in a
	 * word padded with zeros */
2:	movl	%r10d, %r9d
	andl	$7, %r9d
	jz	4f
	leaq	(\data,%r10), %rdx
	subq	%r9, %rdx
	xorl	%eax, %eax
3:	shlq	$8, %rax
	movb	-1(%rdx,%r9), %al
	decl	%r9d
	jnz	3b
	movq	%r10, %rdx
	andq	$-8, %rdx
	movq	%rax, 16(%r8,%rdx)
4:	leaq	23(%r10), %rax
	andq	$-8, %rax
.endm

/*
 * The fast path for events (@typed: a typed one).  CPU mode: append the
 * event's marker and its payload, padded with zeros to 8 bytes, to the
 * ring of this CPU in one rseq critical section ending in the add to the
 * commit word, as CPU_FAST appends a function record, or jump to @slow
 * with every register and the flags as they came.  The event sled sits
 * mid-function, where anything may be live: the flags were pushed (%rsp
 * points at them) and every register used is saved in the red zone
 * below.  Besides CPU_FAST's checks (the key, the state word, the slot,
 * the sequence number, the base's high half), the payload size must be
 * one the C path takes (rt_event_max: our handler's, 1 to the capacity,
 * a marker it can write), and the slot's room is t->event_room, which
 * arm leaves 0 where the C path would stage something before the event
 * (the thread's name, a stretch's NewBuffer).  No room: the C path,
 * which opens the next sub-buffer, or in discard mode, while the ring is
 * as the C path found it full, the drop CPU_FAST makes.  An abort copies
 * the payload again: nothing is committed before the add.
 * Thread mode (rt_event_buffers): the same, into the thread's buffer, as
 * FDR_FAST appends a function record; no room is the C path's, which
 * takes a new buffer and puts the thread's name first, as it does for a
 * function record.
 * Registers: %r10 the size, @data the payload (untouched), %r11 the
 * thread's TLS offset, %rcx the CPU's area, %r8 the marker's place.
 */
.macro EVENT_FAST name, handler, mine, typed, data, slow
	/* (off: two instructions on the way to the C path) */
	cmpq	$0, rt_event_max+8*\typed(%rip)
	je	\slow
	movq	%rax, -8(%rsp)
	movq	%rcx, -16(%rsp)
	movq	%rdx, -24(%rsp)
	movq	%r8, -32(%rsp)
	movq	%r9, -40(%rsp)
	movq	%r10, -48(%rsp)
	movq	%r11, -56(%rsp)
	leaq	\mine(%rip), %rax
	cmpq	%rax, \handler(%rip)
	jne	.L\name\()_slow
	.if \typed
	movq	%rdx, %r10
	.else
	movq	%rsi, %r10
	.endif
	leaq	-1(%r10), %rax		/* (0 wraps: the C path's warning) */
	cmpq	rt_event_max+8*\typed(%rip), %rax
	jae	.L\name\()_slow
	cmpb	$0, rt_event_buffers(%rip)
	jne	.L\name\()_b_arm
	LIBRARY_ARM \name
	cmpq	%rdx, %fs:RT_THREAD_FAST(%r11)
	jne	.L\name\()_slow
	movq	%fs:RT_THREAD_RING_STATE(%r11), %rax
	testl	$RT_STATE_FROZEN, (%rax)
	jnz	.L\name\()_slow
	movq	%fs:RT_THREAD_AREA(%r11), %rcx	/* this CPU's area */
	movq	(%rcx), %r8			/* the commit word */
	movq	%r8, %rax
	subq	%fs:RT_THREAD_SLOT(%r11), %rax
	/* the marker and the padded payload, less the function record
	 * the room leaves (a carry: a difference that wrapped) */
	leaq	15(%r10), %rdx
	andq	$-8, %rdx
	addq	%rdx, %rax
	jc	.L\name\()_slow
	cmpq	%fs:RT_THREAD_EVENT_ROOM(%r11), %rax
	ja	.L\name\()_full
	movq	%fs:RT_THREAD_HDR(%r11), %r9
	movq	(%r9), %rax			/* its sequence number */
	cmpq	%fs:RT_THREAD_SLOT_SEQ(%r11), %rax
	jne	.L\name\()_slow
	RECORD_TIME \name, RT_SUBBUF_TSC+4(%r9), RT_SUBBUF_TSC(%r9), .L\name\()_full
	movl	%r8d, %r8d			/* the offset */
	leaq	RT_RING_CONTROL_SIZE(%rcx,%r8), %r8
	EVENT_WRITE \typed, \data
	addq	%rax, (%rcx)			/* commit */
.L\name\()_post:
.L\name\()_done:
	EVENT_RESTORE
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_adjust_cfa_offset 8
	/* ud1 carrying the rseq signature right before the abort handler */
	.byte	0x0f, 0xb9, 0x3d
	.long	RT_RSEQ_SIG
.L\name\()_abort:
	jmp	.L\name\()_arm
	/* no room, or too far from the base: discard mode's drop, as
	 * CPU_FAST's (the C path, finding the ring as full, would drop) */
.L\name\()_full:
	DISCARD_DROP \name
	EVENT_RESTORE
	popfq
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_adjust_cfa_offset 8
.L\name\()_slow:
	EVENT_RESTORE
	jmp	\slow

	CS_DESC \name

	/* Thread mode: FDR_FAST's checks (the key, the base's high half),
	 * and the marker's and the payload's words before the end; the
	 * commit is the add to the position. */
	LIBRARY_ARM \name\()_b
	cmpq	%rdx, %fs:RT_THREAD_FAST(%r11)
	jne	.L\name\()_slow
	movq	%fs:RT_THREAD_POS(%r11), %r8
	leaq	15(%r10), %rdx			/* (the last word's offset) */
	andq	$-8, %rdx
	addq	%r8, %rdx
	cmpq	%fs:RT_THREAD_END(%r11), %rdx
	jae	.L\name\()_slow
	rdtsc
	cmpl	%edx, %fs:RT_THREAD_BASE+4(%r11)
	jne	.L\name\()_slow
	EVENT_WRITE \typed, \data
	addq	%rax, %fs:RT_THREAD_POS(%r11)	/* commit */
.L\name\()_b_post:
	jmp	.L\name\()_done
	.byte	0x0f, 0xb9, 0x3d
	.long	RT_RSEQ_SIG
.L\name\()_b_abort:
	jmp	.L\name\()_b_arm

	CS_DESC \name\()_b
.endm

/* The registers EVENT_FAST saved, back. */
.macro EVENT_RESTORE
	movq	-8(%rsp), %rax
	movq	-16(%rsp), %rcx
	movq	-24(%rsp), %rdx
	movq	-32(%rsp), %r8
	movq	-40(%rsp), %r9
	movq	-48(%rsp), %r10
	movq	-56(%rsp), %r11
.endm

/*
 * Event sleds: "call __xray_CustomEvent" with (data, size) in rdi/rsi, and
 * "call __xray_TypedEvent" with (type, data, size) in rdi/rsi/rdx, where
 * the sled set only the low 16 bits of the type.  Exported: programs
 * linked with libxrayfdr resolve the sleds' calls to these.  @light and
 * @heavy are our own handler's two paths, @handler the installed one.
 * CPU mode's fast path (EVENT_FAST) comes first.
 */
.macro EVENT name, handler, mine, light, heavy, typed
	.globl	\name
	.type	\name, @function
	.p2align 4
\name:
	.cfi_startproc
	pushfq			/* the cmp must not change live flags */
	.cfi_adjust_cfa_offset 8
	cmpq	$0, \handler(%rip)
	jne	1f
	popfq
	.cfi_adjust_cfa_offset -8
	ret
1:	.cfi_adjust_cfa_offset 8
	.if \typed
	EVENT_FAST \name, \handler, \mine, 1, %rsi, 6f
	.else
	EVENT_FAST \name, \handler, \mine, 0, %rdi, 6f
	.endif
6:	popfq
	.cfi_adjust_cfa_offset -8
	SAVE_GPRS 1
	movq	\handler(%rip), %r11
	testq	%r11, %r11
	jz	8f
	.if \typed
	movzwl	%di, %edi
	.endif
	leaq	\mine(%rip), %rax
	cmpq	%rax, %r11
	jne	5f
	.if \typed
	movl	%edi, %r11d	/* keep the type, rdx is still the size */
	movq	%rsi, %rdx
	movq	%r11, %rsi
	movq	SAVED_RDX(%rbp), %rcx
	movl	$1, %edi
	.else
	movq	%rsi, %rcx
	movq	%rdi, %rdx
	xorl	%esi, %esi
	xorl	%edi, %edi
	.endif
	call	\light
	testl	%eax, %eax
	jz	8f
	SAVE_VEC
	.if \typed
	movzwl	SAVED_RDI(%rbp), %esi
	movq	SAVED_RSI(%rbp), %rdx
	movq	SAVED_RDX(%rbp), %rcx
	movl	$1, %edi
	.else
	movq	SAVED_RDI(%rbp), %rdx
	movq	SAVED_RSI(%rbp), %rcx
	xorl	%esi, %esi
	xorl	%edi, %edi
	.endif
	call	\heavy
	RESTORE_VEC
	jmp	8f
5:	SAVE_VEC
	.if \typed
	movzwl	SAVED_RDI(%rbp), %edi
	movq	SAVED_RDX(%rbp), %rdx
	.else
	movq	SAVED_RDI(%rbp), %rdi
	.endif
	movq	SAVED_RSI(%rbp), %rsi
	call	*%r11		/* SAVE_VEC keeps it */
	RESTORE_VEC
8:	RESTORE_GPRS 1
	ret
	.cfi_endproc
	.size	\name, . - \name
.endm

EVENT __xray_CustomEvent, rt_handler_custom, rt_fdr_handle_custom, rt_fdr_light_event, rt_fdr_heavy_event, 0
EVENT __xray_TypedEvent, rt_handler_typed, rt_fdr_handle_typed, rt_fdr_light_event, rt_fdr_heavy_event, 1

	.section .note.GNU-stack, "", @progbits
