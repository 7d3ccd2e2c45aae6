// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LLVM's basic mode ("xray-basic", or xray_naive_log=true): every event a
 * 32-byte record of the basic log format (version 3, with the process id),
 * the log llvm-xray reads as LLVM's runtime writes it.
 *
 * As in LLVM's runtime, each thread fills a buffer of thread_buffer_size
 * records and appends it to the log when it is full; a shadow stack of the
 * thread's open calls, max_stack_depth deep, lets an exit that comes
 * within func_duration_threshold_us (default 5) of its entry, on the same
 * CPU, with the entry still the buffer's last record, take the entry back
 * instead of writing itself; calls deeper than max_stack_depth are not
 * recorded; a full buffer empties the stack.  Unlike LLVM's runtime, the
 * finalize (and the exit of the process) appends what every thread still
 * holds, not only the main thread's, and a forked child writes a log of
 * its own.
 *
 * The handlers take the C path of any handler (every register saved), so
 * they may call the C library; a thread's state is marked busy while it
 * records, which keeps out an event of a signal handler that interrupts
 * it (dropped, as LLVM's recursion guard does) and lets the finalize wait
 * for a thread in the middle of a record.
 */
#define LOG_DOMAIN "xrayfdr"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../fdr/records.h"
#include "../log.h"
#include "basic.h"
#include "handlers.h"
#include "logfile.h"
#include "modes.h"
#include "options.h"
#include "state.h"

#define REC XRAYFDR_BASIC_RECORD_SIZE

/* An open call on the shadow stack. */
struct basic_frame {
	int32_t id;
	uint8_t type, cpu;
	uint64_t tsc;
};

struct basic_thread {
	struct basic_thread *next;
	uint32_t tid, pid;
	uint32_t gen; /* the trace it records for */
	volatile uint32_t busy;
	size_t used, cap; /* records in the buffer, and room */
	size_t depth; /* calls open, also those deeper than the stack */
	struct basic_frame *stack;
	uint8_t *records;
	size_t map_size;
};

static struct {
	volatile int status; /* enum XRayLogInitStatus */
	uint32_t gen; /* of the current trace; a thread's state follows it */
	struct rt_options o; /* of the current trace */
	uint64_t threshold_ticks;
	size_t max_depth, buffer;
	int fd; /* -1 until the trace's first buffer is written */
	bool failed; /* the log could not be opened or written */
	char path[PATH_MAX];
	struct basic_thread *threads;
} basic = { .fd = -1 };

/* Guards basic.fd, the writes and the list of threads. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Threads inside record(): the finalize waits for them, without the lock
 * (they may need it) */
static volatile int recording;
static pthread_key_t exit_key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread struct basic_thread *self
	__attribute__((tls_model("initial-exec")));

static void say_log(void)
{
	char pid[24];
	const char *parts[] = { "==", rt_utoa((uint64_t)getpid(), pid),
				"==XRay: Log file in '", basic.path, "'\n" };

	rt_say(parts, sizeof(parts) / sizeof(parts[0]));
}

/* The log, opened with its header at the trace's first event (lock
 * held); -1 if it cannot be. */
static int log_fd(void)
{
	uint8_t hdr[XRAYFDR_FILE_HEADER_SIZE];

	if (basic.fd >= 0 || basic.failed || basic.status == XRAY_LOG_FINALIZED)
		return basic.fd;
	basic.fd = rt_open_log(&basic.o, basic.path, sizeof(basic.path));
	if (basic.fd < 0) {
		basic.failed = true;
		pr_warn("cannot open the basic-mode log '%s': %s\n", basic.path,
			strerror(errno));
		return -1;
	}
	xrayfdr_encode_file_header(
		hdr, &(struct xrayfdr_file_header){
			     .version = 3, /* with the process id */
			     .type = XRAYFDR_FILE_BASIC,
			     .constant_tsc = rt.tsc.constant_tsc,
			     .nonstop_tsc = rt.tsc.nonstop_tsc,
			     .cycle_frequency = rt.tsc.hz });
	if (rt_write_all(basic.fd, hdr, sizeof(hdr)))
		basic.failed = true;
	if (basic.o.verbosity)
		say_log();
	return basic.fd;
}

/* Append @t's records to the log and empty its buffer and stack, as a
 * full buffer does in LLVM's runtime (lock held). */
static void write_thread(struct basic_thread *t)
{
	int fd;

	if (!t->used)
		return;
	fd = log_fd();
	if (fd >= 0 && rt_write_all(fd, t->records, t->used * REC)) {
		basic.failed = true;
		pr_warn("cannot write the basic-mode log '%s': %s\n",
			basic.path, strerror(errno));
	}
	t->used = 0;
	t->depth = 0;
}

static void thread_exit(void *arg)
{
	struct basic_thread *t = arg, **pp;

	pthread_mutex_lock(&lock);
	if (t->gen == basic.gen)
		write_thread(t);
	for (pp = &basic.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	self = NULL;
	munmap(t, t->map_size);
}

/* The child of a fork: the records belong to the parent, which writes
 * them; the child's go to a log of its own, and only this thread is
 * left. */
static void fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	recording = 0; /* (the threads that were are gone) */
	if (basic.fd >= 0)
		close(basic.fd);
	basic.fd = -1;
	basic.failed = false;
	basic.threads = self;
	if (self) {
		self->next = NULL;
		self->used = 0;
		self->depth = 0;
		self->tid = (uint32_t)syscall(SYS_gettid);
		self->pid = (uint32_t)getpid();
	}
}

static void setup_once(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(NULL, NULL, fork_child);
}

/* The calling thread's state for the current trace, made at its first
 * event (or NULL without memory). */
static struct basic_thread *thread_state(void)
{
	struct basic_thread *t = self;
	size_t size;
	void *m;

	if (t && t->gen == basic.gen)
		return t;
	if (t)
		thread_exit(t); /* a state of an earlier trace */
	size = sizeof(*t) + basic.max_depth * sizeof(struct basic_frame) +
	       basic.buffer * REC;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	t = m;
	t->map_size = size;
	t->gen = basic.gen;
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->pid = (uint32_t)getpid();
	t->cap = basic.buffer;
	t->stack = (struct basic_frame *)(t + 1);
	t->records = (uint8_t *)(t->stack + basic.max_depth);
	pthread_mutex_lock(&lock);
	t->next = basic.threads;
	basic.threads = t;
	/* LLVM's runtime opens the log (and says where) at a thread's first
	 * event, so a run whose calls all stay under the threshold still
	 * leaves a log, of the header alone */
	log_fd();
	pthread_mutex_unlock(&lock);
	pthread_setspecific(exit_key, t);
	self = t;
	return t;
}

/* One more record in @t's buffer; a full buffer goes to the log. */
static void commit(struct basic_thread *t)
{
	if (++t->used == t->cap) {
		pthread_mutex_lock(&lock);
		write_thread(t);
		pthread_mutex_unlock(&lock);
	}
}

/* Is the record of this event kept (the shadow stack's rules)? */
static bool keep(struct basic_thread *t, int32_t id, XRayEntryType type,
		 uint8_t cpu, uint64_t tsc)
{
	struct basic_frame *top;

	switch (type) {
	case ENTRY:
	case LOG_ARGS_ENTRY:
		if (t->depth++ >= basic.max_depth)
			return false;
		t->stack[t->depth - 1] = (struct basic_frame){
			.id = id, .type = (uint8_t)type, .cpu = cpu, .tsc = tsc
		};
		return true;
	case EXIT:
	case TAIL:
		if (!t->depth)
			return true;
		if (--t->depth >= basic.max_depth)
			return false;
		top = &t->stack[t->depth];
		if (top->id == id && top->cpu == cpu && top->tsc < tsc &&
		    tsc - top->tsc < basic.threshold_ticks) {
			size_t back = top->type == ENTRY ? 1 : 2;

			/* the entry (and its argument) is the last record */
			t->used = t->used >= back ? t->used - back : 0;
			return false;
		}
		return true;
	default:
		return false;
	}
}

static void record(int32_t id, XRayEntryType type, bool with_arg, uint64_t arg)
{
	struct basic_thread *t = self;
	unsigned int aux;
	uint64_t tsc;
	uint8_t cpu;

	if (t && t->busy)
		return; /* a signal handler's event inside this thread's */
	if (t)
		t->busy = 1;
	__atomic_add_fetch(&recording, 1, __ATOMIC_SEQ_CST);
	if (basic.status != XRAY_LOG_INITIALIZED)
		goto out;
	if (!t || t->gen != basic.gen) {
		if (t)
			t->busy = 0;
		t = thread_state();
		if (!t)
			goto out;
		t->busy = 1;
	}
	/* the entry and its argument go together */
	if (with_arg && t->used + 2 > t->cap) {
		pthread_mutex_lock(&lock);
		write_thread(t);
		pthread_mutex_unlock(&lock);
	}
	tsc = __builtin_ia32_rdtscp(&aux);
	cpu = (uint8_t)aux; /* the CPU number's low byte, as LLVM keeps it */
	if (!keep(t, id, type, cpu, tsc))
		goto out;
	fdr_put_basic_function(t->records + t->used * REC, false, cpu,
			       (uint8_t)type, id, tsc, t->tid, t->pid);
	if (with_arg) {
		/* (room for both: no write between them) */
		t->used++;
		fdr_put_basic_arg(t->records + t->used * REC, false, id, t->tid,
				  t->pid, arg);
	}
	commit(t);
out:
	__atomic_sub_fetch(&recording, 1, __ATOMIC_SEQ_CST);
	if (t)
		t->busy = 0;
}

static void handle_arg0(int32_t id, XRayEntryType type)
{
	record(id, type, false, 0);
}

static void handle_arg1(int32_t id, XRayEntryType type, uint64_t arg)
{
	record(id, type, true, arg);
}

static XRayLogInitStatus basic_init(size_t buffer_size, size_t buffer_max,
				    void *args, size_t args_size)
{
	struct rt_options o;
	char err[512];
	int ret;

	(void)buffer_size; /* (LLVM's basic mode takes neither) */
	(void)buffer_max;
	if (basic.status == XRAY_LOG_INITIALIZED)
		return XRAY_LOG_INITIALIZED;
	pthread_once(&once, setup_once);
	ret = rt_env_options(&o, err, sizeof(err));
	if (!ret && !o.basic_env) {
		/* LLVM: without XRAY_BASIC_OPTIONS, XRAY_OPTIONS' old names */
		o.basic_threshold_us = o.naive_threshold_us;
		o.basic_max_depth = o.naive_max_depth;
		o.basic_buffer = o.naive_buffer;
	}
	if (!ret && args)
		ret = rt_options_parse(&o, args, args_size, RT_OPT_BASIC,
				       "xray-basic configuration", err,
				       sizeof(err));
	if (!ret && rt_tsc_ensure(&o) < 0) {
		snprintf(err, sizeof(err), "no TSC frequency");
		ret = -ENODEV;
	}
	if (ret) {
		pr_warn("%s; basic mode is off\n", err);
		return XRAY_LOG_UNINITIALIZED;
	}
	pthread_mutex_lock(&lock);
	basic.o = o;
	basic.threshold_ticks = (uint64_t)((unsigned __int128)rt.tsc.hz *
					   o.basic_threshold_us / 1000000);
	basic.max_depth = o.basic_max_depth;
	basic.buffer = o.basic_buffer;
	basic.fd = -1;
	basic.failed = false;
	basic.gen++;
	__atomic_store_n(&basic.status, XRAY_LOG_INITIALIZED, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&lock);
	rt_set_handler_arg1(handle_arg1);
	rt_set_handler_arg0(handle_arg0);
	rt_set_handler_custom(NULL);
	rt_set_handler_typed(NULL);
	return XRAY_LOG_INITIALIZED;
}

static XRayLogInitStatus basic_finalize(void)
{
	if (basic.status != XRAY_LOG_INITIALIZED)
		return XRAY_LOG_FINALIZED;
	__atomic_store_n(&basic.status, XRAY_LOG_FINALIZING, __ATOMIC_SEQ_CST);
	/* threads in the middle of a record finish it (new ones see the
	 * status and leave); the caller may be one, from a handler */
	for (int spins = 0; __atomic_load_n(&recording, __ATOMIC_SEQ_CST) >
				    (self && self->busy) &&
			    spins < 100000;
	     spins++)
		sched_yield();
	pthread_mutex_lock(&lock);
	for (struct basic_thread *t = basic.threads; t; t = t->next)
		if (t->gen == basic.gen)
			write_thread(t);
	if (basic.fd >= 0)
		close(basic.fd);
	basic.fd = -1;
	__atomic_store_n(&basic.status, XRAY_LOG_FINALIZED, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&lock);
	return XRAY_LOG_FINALIZED;
}

static XRayLogFlushStatus basic_flush(void)
{
	/* the finalize wrote the log: nothing is left to flush */
	return XRAY_LOG_FLUSHED;
}

void rt_basic_shutdown(void)
{
	if (basic.status == XRAY_LOG_INITIALIZED)
		basic_finalize();
}

void rt_basic_register(void)
{
	rt_modes_register("xray-basic",
			  (XRayLogImpl){ .log_init = basic_init,
					 .log_finalize = basic_finalize,
					 .handle_arg0 = handle_arg0,
					 .flush_log = basic_flush });
}
