/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * XRay trampolines for x86_64.
 *
 * A patched entry or tail-exit sled does "mov $id,%r10d; call T", an exit
 * sled "mov $id,%r10d; jmp T" in place of the function's ret; r10 and r11
 * are free at both points.  Everything else may be live: at entry the
 * argument registers (rdi, rsi, rdx, rcx, r8, r9, rax for varargs, vector
 * registers), at exit the return registers (rax, rdx, xmm0-1, st0-1), and
 * any register under a non-standard calling convention.  So:
 *
 * - The FDR fast path (thread mode, no duration threshold) touches only
 *   rax, rcx and rdx besides r10/r11, saving them in the red zone (below
 *   the stack pointer, where a leaf may write and signals do not reach).
 *   It is one rseq critical section ending in the store of the write
 *   position; see lib/runtime/thread.h for why that is enough.
 * - Anything else (a new buffer, a CPU change, a TSC wrap, handlers set
 *   through LLVM's API, the duration threshold) goes through SAVE_ALL:
 *   every caller-saved register, the flags, and the whole vector state
 *   (xsave with the components the OS enabled, minus AMX tiles), on a stack
 *   realigned to 64 bytes, then a C call.
 *
 * Event sleds call __xray_CustomEvent / __xray_TypedEvent from the middle
 * of a function, with a stack of any alignment, so those save everything.
 */
#include "../../runtime/thread.h"

/* Offsets from %rbp of the registers SAVE_ALL pushes. */
#define SAVED_RDX -32
#define SAVED_R11 -80
#define XSAVE_HEADER 512

	.text

.macro SAVE_ALL
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushfq
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
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

.macro RESTORE_ALL
	cmpb	$0, rt_xsave_kind(%rip)
	je	104f
	movl	rt_xsave_mask(%rip), %eax
	movl	rt_xsave_mask+4(%rip), %edx
	xrstor64 (%rsp)
	jmp	105f
104:	fxrstor64 (%rsp)
105:	leaq	SAVED_R11(%rbp), %rsp
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popfq
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_same_value %rbp
.endm

/*
 * The C path of a function sled: call the handler installed through
 * LLVM's API (our own FDR controller, or the program's) as
 * handler(id, kind[, first argument]).  @args: try the arg1 handler first,
 * and pass %rdi as the third argument, as LLVM does.
 */
.macro GENERIC name, kind, args
	.p2align 4
\name:
	.cfi_startproc
	.if \args
	movq	rt_handler_arg1(%rip), %r11
	testq	%r11, %r11
	jnz	1f
	.endif
	movq	rt_handler_arg0(%rip), %r11
	testq	%r11, %r11
	jz	2f
1:	SAVE_ALL
	movq	%rdi, %rdx
	movl	%r10d, %edi
	movl	$\kind, %esi
	call	*%r11
	RESTORE_ALL
2:	ret
	.cfi_endproc
	.size \name, . - \name
.endm

GENERIC rt_generic_entry, 0, 0
GENERIC rt_generic_exit, 1, 0
GENERIC rt_generic_tail, 2, 0
GENERIC rt_generic_args, 3, 1

/*
 * The FDR fast path: append one function record (and for @args, the
 * CallArgument record of %rdi) to the thread's buffer, or fall back to
 * @slow with every register as it came.  @bits: the action's bits in the
 * record's first word.
 */
.macro FDR_FAST name, bits, args, slow
	.globl	\name
	.hidden	\name
	.type	\name, @function
	.p2align 5
\name:
	.cfi_startproc
	movq	%rax, -8(%rsp)
	movq	%rdx, -16(%rsp)
	movq	%rcx, -24(%rsp)
	movq	rt_self@gottpoff(%rip), %r11
.L\name\()_arm:
	movq	rt_rseq_offset(%rip), %rcx
	leaq	.L\name\()_cs(%rip), %rax
	movq	%rax, %fs:RT_RSEQ_CS(%rcx)
.L\name\()_start:
	movl	rt_fast_gen(%rip), %eax
	cmpl	%eax, %fs:RT_THREAD_GEN(%r11)
	jne	.L\name\()_slow
	movl	%fs:RT_RSEQ_CPU_ID(%rcx), %eax
	cmpl	%eax, %fs:RT_THREAD_CPU(%r11)
	jne	.L\name\()_slow
	movq	%fs:RT_THREAD_POS(%r11), %rcx
	.if \args
	leaq	16(%rcx), %rax
	cmpq	%fs:RT_THREAD_END(%r11), %rax
	.else
	cmpq	%fs:RT_THREAD_END(%r11), %rcx
	.endif
	jae	.L\name\()_slow
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	/* the next record's base goes to the slot this one does not read */
	movl	%ecx, %edx
	andl	$8, %edx
	xorl	$8, %edx
	movq	%rax, %fs:RT_THREAD_LAST_TSC(%r11,%rdx)
	xorl	$8, %edx
	subq	%fs:RT_THREAD_LAST_TSC(%r11,%rdx), %rax
	movq	%rax, %rdx
	shrq	$32, %rdx
	jnz	.L\name\()_slow		/* needs a TSCWrap */
	movl	%r10d, %edx
	shll	$RT_FUNC_ID_SHIFT, %edx
	.if \bits
	orl	$\bits, %edx
	.endif
	shlq	$32, %rax
	orq	%rdx, %rax
	movq	%rax, (%rcx)
	.if \args
	movq	%rdi, %rax
	shlq	$8, %rax
	orq	$RT_CALL_ARGUMENT_BYTE, %rax
	movq	%rax, 8(%rcx)
	movq	%rdi, %rax
	shrq	$56, %rax
	movq	%rax, 16(%rcx)
	addq	$24, %rcx
	.else
	addq	$8, %rcx
	.endif
	movq	%rcx, %fs:RT_THREAD_POS(%r11)	/* commit */
.L\name\()_post:
	movq	-8(%rsp), %rax
	movq	-16(%rsp), %rdx
	movq	-24(%rsp), %rcx
	ret
	/* ud1 carrying the rseq signature right before the abort handler */
	.byte	0x0f, 0xb9, 0x3d
	.long	RT_RSEQ_SIG
.L\name\()_abort:
	jmp	.L\name\()_arm
.L\name\()_slow:
	movq	-8(%rsp), %rax
	movq	-16(%rsp), %rdx
	movq	-24(%rsp), %rcx
	jmp	\slow
	.cfi_endproc
	.size	\name, . - \name

	.pushsection .data.rel.ro, "aw"
	.p2align 5
.L\name\()_cs:
	.long	0, 0
	.quad	.L\name\()_start
	.quad	.L\name\()_post - .L\name\()_start
	.quad	.L\name\()_abort
	.popsection
.endm

FDR_FAST rt_tramp_entry, 0, 0, rt_generic_entry
FDR_FAST rt_tramp_exit, RT_ACTION_EXIT_BITS, 0, rt_generic_exit
FDR_FAST rt_tramp_tail, RT_ACTION_TAIL_BITS, 0, rt_generic_tail
FDR_FAST rt_tramp_args, RT_ACTION_ARGS_BITS, 1, rt_generic_args

/*
 * Event sleds: "call __xray_CustomEvent" with (data, size) in rdi/rsi, and
 * "call __xray_TypedEvent" with (type, data, size) in rdi/rsi/rdx, where
 * the sled set only the low 16 bits of the type.  Exported: programs
 * linked with libxrayfdr resolve the sleds' calls to these.
 */
	.globl	__xray_CustomEvent
	.type	__xray_CustomEvent, @function
	.p2align 4
__xray_CustomEvent:
	.cfi_startproc
	cmpq	$0, rt_handler_custom(%rip)
	je	2f
	SAVE_ALL
	movq	rt_handler_custom(%rip), %rax
	testq	%rax, %rax
	jz	1f
	call	*%rax
1:	RESTORE_ALL
2:	ret
	.cfi_endproc
	.size	__xray_CustomEvent, . - __xray_CustomEvent

	.globl	__xray_TypedEvent
	.type	__xray_TypedEvent, @function
	.p2align 4
__xray_TypedEvent:
	.cfi_startproc
	cmpq	$0, rt_handler_typed(%rip)
	je	2f
	SAVE_ALL
	movq	rt_handler_typed(%rip), %rax
	testq	%rax, %rax
	jz	1f
	movzwl	%di, %edi
	movq	SAVED_RDX(%rbp), %rdx
	call	*%rax
1:	RESTORE_ALL
2:	ret
	.cfi_endproc
	.size	__xray_TypedEvent, . - __xray_TypedEvent

	.section .note.GNU-stack, "", @progbits
