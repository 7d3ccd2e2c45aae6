// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The FDR controller in thread mode: what happens to an event that the
 * trampolines' fast path does not handle.
 *
 * The fast path (trampolines.S) appends plain function records while the
 * thread has room, stays on one CPU and the delta fits 32 bits.  Everything
 * else comes here, through the handlers LLVM's API installs: starting a
 * buffer (NewBuffer, WallTimeMarker, Pid), NewCPUId on a CPU change,
 * TSCWrap, arguments, custom and typed events, and LLVM's duration
 * threshold, which "rewinds" the records of calls shorter than it.
 *
 * The C path is not restartable, so it marks the thread busy; an event
 * that arrives meanwhile (a signal handler's) is counted as dropped rather
 * than allowed to interleave.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../fdr/records.h"
#include "../log.h"
#include "runtime.h"

#define MD XRAYFDR_METADATA_RECORD_SIZE
#define FN XRAYFDR_FUNCTION_RECORD_SIZE
/* v1 buffers end with EndOfBuffer and padding a reader must be able to
 * skip: keep room for both (see fdr-format.rst, "Version 1 padding"). */
#define V1_RESERVE (2 * MD)

__thread struct rt_thread rt_self
	__attribute__((tls_model("initial-exec"), aligned(64)));
uint32_t rt_fast_gen;
long rt_rseq_offset;

/* glibc 2.35 and later register an rseq area for every thread. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

enum { RSEQ_UNKNOWN, RSEQ_REGISTERED, RSEQ_NONE };

static void *thread_pointer(void)
{
	return __builtin_thread_pointer();
}

void rt_thread_rseq(struct rt_thread *t)
{
	if (!rt.own_rseq || t->rseq.flags)
		return;
	if (syscall(SYS_rseq, &t->rseq, sizeof(t->rseq), 0, RT_RSEQ_SIG))
		t->rseq.flags = RSEQ_NONE;
	else
		t->rseq.flags = RSEQ_REGISTERED;
}

/* The CPU, as the fast path sees it (from the rseq area). */
static uint32_t thread_cpu(struct rt_thread *t)
{
	if (rt.own_rseq) {
		rt_thread_rseq(t);
		if (t->rseq.flags == RSEQ_NONE) {
			int cpu = sched_getcpu();

			t->rseq.cpu_id = cpu < 0 ? 0 : (uint32_t)cpu;
		}
	}
	return *(volatile uint32_t *)((char *)thread_pointer() +
				      rt_rseq_offset + RT_RSEQ_CPU_ID);
}

/* Where the fast path's thread state points its rseq and CPU reads. */
static void setup_rseq(void)
{
	if (&__rseq_size && __rseq_size) {
		rt_rseq_offset = (long)__rseq_offset;
		rt.own_rseq = false;
	} else {
		rt_rseq_offset = (long)((char *)&rt_self.rseq -
					(char *)thread_pointer());
		rt.own_rseq = true;
		pr_info("libc registered no rseq area; registering our own\n");
	}
	rt.membarrier = !syscall(SYS_membarrier,
				 MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
				 0, 0);
}

static void thread_exit(void *arg)
{
	struct rt_thread *t = &rt_self;

	(void)arg;
	t->gen = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->buf && t->queue_gen == rt.q.generation)
		rt_bufq_retire(&rt.q, t->buf, (size_t)(t->pos - t->buf->data));
	t->buf = NULL;
	t->end = NULL;
	t->key_set = 0; /* a later destructor's events re-arm it */
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		pr_warn("cannot create a thread-exit key; the buffers of exited threads stay in use\n");
}

static bool begin(struct rt_thread *t)
{
	if (t->busy) {
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
		return false;
	}
	t->busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->gen = 0; /* nested events come here and are dropped */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_add_fetch(&rt.c_writers, 1, __ATOMIC_SEQ_CST);
	return true;
}

static void end(struct rt_thread *t)
{
	bool valid = t->buf && t->queue_gen == rt.q.generation;

	t->end = valid ? t->buf->data + rt.q.capacity - (FN - 1) : NULL;
	__atomic_sub_fetch(&rt.c_writers, 1, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->gen = valid ? rt.q.generation : 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

static uint64_t *last_slot(struct rt_thread *t)
{
	return &t->last_tsc[((uintptr_t)t->pos >> 3) & 1];
}

static void publish(struct rt_thread *t, uint8_t *pos)
{
	__atomic_store_n(&t->pos, pos, __ATOMIC_RELEASE);
}

static void put_md(struct rt_thread *t, const struct xrayfdr_metadata *md)
{
	xrayfdr_encode_metadata(t->pos, false, rt.opts.version, md);
	publish(t, t->pos + MD);
}

static void put_fn(struct rt_thread *t, unsigned int kind, int32_t id,
		   uint64_t delta)
{
	uint64_t w =
		fdr_function_record_le(kind, (uint32_t)id, (uint32_t)delta);

	memcpy(t->pos, &w, sizeof(w));
	publish(t, t->pos + FN);
}

/* Make room for @need bytes of records, starting a buffer if needed. */
static bool ensure_space(struct rt_thread *t, size_t need)
{
	size_t preamble = (rt.opts.version >= 3 ? 3 : 2) * MD;
	struct xrayfdr_metadata md;
	struct timespec ts;
	struct rt_buf *b;

	if (t->buf && t->queue_gen != rt.q.generation)
		t->buf = NULL; /* of an earlier trace: never touched again */
	if (t->buf && t->pos + need <= t->buf->data + rt.q.capacity)
		return true;
	if (t->buf)
		rt_bufq_retire(&rt.q, t->buf, (size_t)(t->pos - t->buf->data));
	t->buf = NULL;
	if (need + preamble > rt.q.capacity)
		return false;
	if (!t->key_set) {
		pthread_once(&exit_key_once, make_exit_key);
		t->key_set = !pthread_setspecific(exit_key, (void *)1);
	}
	if (!t->tid)
		t->tid = (uint32_t)syscall(SYS_gettid);
	b = rt_bufq_acquire(&rt.q, t->tid, &t->pos);
	if (!b)
		return false;
	t->buf = b;
	t->queue_gen = rt.q.generation;
	clock_gettime(CLOCK_REALTIME, &ts);
	md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_NEW_BUFFER,
					.tid = (int32_t)t->tid };
	put_md(t, &md);
	md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_WALLTIME_MARKER,
					.seconds = (uint64_t)ts.tv_sec,
					.micros =
						(uint32_t)(ts.tv_nsec / 1000) };
	put_md(t, &md);
	if (rt.opts.version >= 3) {
		md = (struct xrayfdr_metadata){ .kind = XRAYFDR_MD_PID,
						.pid = (int32_t)rt.pid };
		put_md(t, &md);
	}
	t->cpu = UINT32_MAX; /* the first record brings a NewCPUId */
	t->undo_enters = 0;
	t->undo_tails = 0;
	t->last_entry_tsc = 0;
	return true;
}

/* NewCPUId or TSCWrap when the next record needs one (LLVM's
 * recordPreamble).  Return true if one was written. */
static bool preamble(struct rt_thread *t, uint64_t tsc, uint32_t cpu,
		     uint64_t *last)
{
	struct xrayfdr_metadata md = { .tsc = tsc };

	if (cpu != t->cpu) {
		md.kind = XRAYFDR_MD_NEW_CPU_ID;
		md.cpu = (uint16_t)cpu;
		t->cpu = cpu;
	} else if (tsc < *last || tsc - *last > UINT32_MAX) {
		md.kind = XRAYFDR_MD_TSC_WRAP;
	} else {
		return false;
	}
	put_md(t, &md);
	*last = tsc;
	return true;
}

/*
 * LLVM's rewinding: the exit of a call shorter than the threshold erases
 * its entry record instead of writing an exit, and when that leaves no
 * undoable entry, the tail calls that led to it if they were short too.
 * One deliberate difference: after erasing a tail-exit pair, LLVM bases
 * the next delta on the erased entry's time; we base it on the record
 * before it, which is what a reader adds the delta to.
 */
static void rewind_short_call(struct rt_thread *t, uint64_t tsc, uint64_t *last)
{
	uint64_t w;

	memcpy(&w, t->pos - FN, sizeof(w));
	publish(t, t->pos - FN);
	*last -= w >> 32;
	if (--t->undo_enters) {
		t->last_entry_tsc -= w >> 32;
		return;
	}
	t->last_entry_tsc = 0;
	while (t->undo_tails) {
		uint64_t tail, entry, entry_tsc;

		memcpy(&tail, t->pos - FN, sizeof(tail));
		memcpy(&entry, t->pos - 2 * FN, sizeof(entry));
		entry_tsc = *last - (tail >> 32);
		if (tsc - entry_tsc >= rt.threshold_ticks) {
			t->undo_tails = 0;
			return;
		}
		t->undo_tails--;
		publish(t, t->pos - 2 * FN);
		*last = entry_tsc - (entry >> 32);
	}
}

static void record_function(unsigned int kind, int32_t id, uint64_t arg)
{
	struct rt_thread *t = &rt_self;
	size_t need = MD + FN + (kind == XRAYFDR_FUNC_ENTRY_ARGS ? MD : 0);
	uint64_t tsc, last;
	uint32_t cpu;
	bool wrote, short_call;

	if (!begin(t))
		return;
	if (rt.status != XRAY_LOG_INITIALIZED)
		goto out;
	tsc = arch_tsc();
	cpu = thread_cpu(t);
	if (!ensure_space(t, need)) {
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
		goto out;
	}
	last = *last_slot(t);
	wrote = preamble(t, tsc, cpu, &last);
	short_call = !wrote && t->undo_enters &&
		     tsc - t->last_entry_tsc < rt.threshold_ticks;
	switch (kind) {
	case XRAYFDR_FUNC_ENTRY:
		if (wrote) {
			t->undo_enters = 1;
			t->undo_tails = 0;
		} else {
			t->undo_enters++;
		}
		put_fn(t, kind, id, tsc - last);
		t->last_entry_tsc = tsc;
		last = tsc;
		break;
	case XRAYFDR_FUNC_ENTRY_ARGS:
		put_fn(t, kind, id, tsc - last);
		put_md(t,
		       &(struct xrayfdr_metadata){
			       .kind = XRAYFDR_MD_CALL_ARGUMENT, .arg = arg });
		t->last_entry_tsc = 0;
		t->undo_enters = 0;
		t->undo_tails = 0;
		last = tsc;
		break;
	case XRAYFDR_FUNC_EXIT:
		if (short_call) {
			rewind_short_call(t, tsc, &last);
			break;
		}
		put_fn(t, kind, id, tsc - last);
		t->undo_enters = 0;
		t->undo_tails = 0;
		last = tsc;
		break;
	case XRAYFDR_FUNC_TAIL_EXIT:
		if (short_call) {
			rewind_short_call(t, tsc, &last);
			break;
		}
		t->undo_tails = t->undo_enters ? t->undo_tails + 1 : 0;
		t->undo_enters = 0;
		put_fn(t, kind, id, tsc - last);
		last = tsc;
		break;
	}
	t->last_tsc[0] = t->last_tsc[1] = last;
out:
	end(t);
}

void rt_fdr_handle_arg0(int32_t id, enum XRayEntryType kind)
{
	switch (kind) {
	case ENTRY:
	case LOG_ARGS_ENTRY:
		record_function(XRAYFDR_FUNC_ENTRY, id, 0);
		break;
	case EXIT:
		record_function(XRAYFDR_FUNC_EXIT, id, 0);
		break;
	case TAIL:
		record_function(XRAYFDR_FUNC_TAIL_EXIT, id, 0);
		break;
	default:
		break;
	}
}

void rt_fdr_handle_arg1(int32_t id, enum XRayEntryType kind, uint64_t arg)
{
	if (kind == ENTRY || kind == LOG_ARGS_ENTRY)
		record_function(XRAYFDR_FUNC_ENTRY_ARGS, id, arg);
	else
		rt_fdr_handle_arg0(id, kind);
}

static void warn_once(int *done, const char *msg)
{
	if (!__atomic_exchange_n(done, 1, __ATOMIC_RELAXED))
		pr_warn("%s\n", msg);
}

static void record_event(bool typed, uint16_t type, const void *data,
			 size_t size)
{
	static int warned_empty, warned_v1, warned_big;
	struct rt_thread *t = &rt_self;
	struct xrayfdr_metadata md = { .event_size = (int32_t)size };
	uint64_t tsc, last;
	uint32_t cpu;

	if (!begin(t))
		return;
	if (rt.status != XRAY_LOG_INITIALIZED)
		goto out;
	if (!size || (typed && rt.opts.version < 2) || size > rt.q.capacity) {
		if (!size)
			warn_once(
				&warned_empty,
				"dropping events with an empty payload, which llvm-xray rejects");
		else if (size > rt.q.capacity)
			warn_once(&warned_big,
				  "dropping events larger than buffer_size");
		else
			warn_once(
				&warned_v1,
				"dropping typed events: FDR version 1 has none");
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
		goto out;
	}
	tsc = arch_tsc();
	cpu = thread_cpu(t);
	if (!ensure_space(t, 2 * MD + size)) {
		__atomic_add_fetch(&rt.dropped, 1, __ATOMIC_RELAXED);
		goto out;
	}
	last = *last_slot(t);
	preamble(t, tsc, cpu, &last);
	if (typed) {
		md.kind = XRAYFDR_MD_TYPED_EVENT_MARKER;
		md.event_type = type;
		md.tsc_delta = (int32_t)(tsc - last);
		last = tsc;
	} else {
		md.kind = XRAYFDR_MD_CUSTOM_EVENT_MARKER;
		md.tsc = tsc; /* versions 1-4: absolute, the base stays */
		md.cpu = (uint16_t)cpu;
		if (rt.opts.version >= 5) {
			md.tsc_delta = (int32_t)(tsc - last);
			last = tsc;
		}
	}
	put_md(t, &md);
	memcpy(t->pos, data, size);
	publish(t, t->pos + size);
	t->undo_enters = 0;
	t->undo_tails = 0;
	t->last_tsc[0] = t->last_tsc[1] = last;
out:
	end(t);
}

void rt_fdr_handle_custom(void *data, size_t size)
{
	record_event(false, 0, data, size);
}

void rt_fdr_handle_typed(uint16_t type, const void *data, size_t size)
{
	record_event(true, type, data, size);
}

void rt_fdr_update_fast(void)
{
	bool fast = rt.status == XRAY_LOG_INITIALIZED && !rt.threshold_ticks &&
		    rt_handler_arg0 == rt_fdr_handle_arg0 &&
		    (!rt_handler_arg1 || rt_handler_arg1 == rt_fdr_handle_arg1);

	__atomic_store_n(&rt_fast_gen, fast ? rt.q.generation : 0,
			 __ATOMIC_SEQ_CST);
}

void rt_fdr_quiesce(void)
{
	__atomic_store_n(&rt_fast_gen, 0, __ATOMIC_SEQ_CST);
	/* Restart every critical section in flight: after this no fast path
	 * can still be past its check.  Without membarrier, a preempted one
	 * restarts when it resumes anyway; give running ones a moment. */
	if (!rt.membarrier ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0,
		    0)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

/* Wait for the threads in the C path to leave it (before buffers are
 * reused); they are short and never block. */
static void wait_c_writers(void)
{
	for (int i = 0; __atomic_load_n(&rt.c_writers, __ATOMIC_ACQUIRE); i++) {
		if (i > 100000) {
			pr_warn("a thread is stuck in the recording path; reusing buffers anyway\n");
			break;
		}
		sched_yield();
	}
}

int rt_fdr_init(const struct rt_options *o, char *err, size_t errlen)
{
	size_t capacity = o->version == 1 ? o->buffer_size - V1_RESERVE :
					    o->buffer_size;
	int ret;

	if (!rt.generation)
		setup_rseq();
	if (!rt.tsc_known || strcmp(rt.opts.tsc_sysfs, o->tsc_sysfs) ||
	    rt.opts.tsc_sources != o->tsc_sources) {
		struct rt_tsc_paths paths = { .sysfs = o->tsc_sysfs };

		ret = rt_tsc_probe(&paths, o->tsc_sources, &rt.tsc);
		if (ret) {
			snprintf(
				err, errlen,
				"no source of TSC facts answered (tsc_sources)");
			return ret;
		}
		rt.tsc_known = true;
		snprintf(rt.opts.tsc_sysfs, sizeof(rt.opts.tsc_sysfs), "%s",
			 o->tsc_sysfs);
		rt.opts.tsc_sources = o->tsc_sources;
		if (rt.tsc.source == RT_TSC_CALIBRATE)
			pr_info("TSC frequency calibrated against CLOCK_MONOTONIC_RAW (%llu Hz); the log says so\n",
				(unsigned long long)rt.tsc.hz);
	}
	wait_c_writers();
	if (rt.q.mem &&
	    (rt.q.capacity != capacity || rt.q.count != o->buffer_max))
		rt_bufq_destroy(&rt.q);
	if (!rt.q.mem) {
		ret = rt_bufq_init(&rt.q, capacity, o->buffer_max);
		if (ret) {
			snprintf(err, errlen,
				 "cannot map %llu buffers of %llu bytes",
				 (unsigned long long)o->buffer_max,
				 (unsigned long long)o->buffer_size);
			return ret;
		}
	} else {
		rt_bufq_reset(&rt.q);
	}
	rt.q.generation = ++rt.generation;
	rt.opts = *o;
	rt.file_buffer_size = o->buffer_size;
	rt.threshold_ticks = (uint64_t)((unsigned __int128)rt.tsc.hz *
					o->threshold_us / 1000000);
	rt.dropped = 0;
	rt.pid = getpid();
	return 0;
}

int rt_fdr_finalize(void)
{
	if (rt.status != XRAY_LOG_INITIALIZED)
		return rt.status;
	rt.status = XRAY_LOG_FINALIZING;
	rt_fdr_quiesce();
	rt.status = XRAY_LOG_FINALIZED;
	return XRAY_LOG_FINALIZED;
}

void rt_fdr_fork_child(void)
{
	rt.pid = getpid();
	rt_self.tid = 0; /* (its rseq registration is inherited) */
	rt.c_writers = 0;
	rt.q.lock = 0;
	if (!rt.q.mem)
		return;
	rt_bufq_reset(&rt.q);
	rt.q.generation = ++rt.generation;
	rt.dropped = 0;
	if (rt.opts.fork == RT_FORK_OFF && rt.status == XRAY_LOG_INITIALIZED)
		rt.status = XRAY_LOG_UNINITIALIZED;
	rt_fdr_update_fast();
}
