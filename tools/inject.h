/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Calls made in another process (xrayfdr attach): one of its threads,
 * stopped with ptrace at a point where it holds none of the C library's
 * locks, is made to call functions of the process (dlopen(), then the
 * runtime's entry) and is put back as it was, registers and vector state
 * included; its other threads run meanwhile, so a lock one of them holds
 * is released as it would be.
 */
#ifndef XRAYFDR_TOOLS_INJECT_H
#define XRAYFDR_TOOLS_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct inject {
	pid_t pid, tid;
	int mem; /* /proc/PID/mem */
	struct user_regs_struct saved;
	uint8_t *xstate; /* the thread's FPU and vector state */
	size_t xstate_len;
	uint64_t scratch; /* below the thread's stack pointer */
	size_t scratch_used;
	int pending; /* a signal the stop held back, delivered on release */
};

/* An executable mapping of a process: [start, end) from @path. */
struct proc_map {
	uint64_t start, end, offset;
	char path[4096];
	char perms[5];
};

/*
 * Stop a thread of @pid where it may call into the C library: running
 * the program's own code, or blocked in a system call that holds no lock
 * (read, poll, nanosleep, a futex wait, ...), with the loader not in
 * the middle of loading.  Other threads are looked at in turn and let go
 * at once.  Gives up after about @timeout_ms.  0, or a negative errno
 * with the reason in @err (-EPERM: ptrace refused).
 */
int inject_seize(pid_t pid, unsigned int timeout_ms, struct inject *in,
		 char *err, size_t errlen);

/* Copy @len bytes of @data into the thread's scratch area; its address
 * in *@addr.  0 or -ENOSPC, -EIO. */
int inject_push(struct inject *in, const void *data, size_t len,
		uint64_t *addr);
int inject_read(const struct inject *in, uint64_t addr, void *buf, size_t len);

/*
 * Call the function at @fn with up to six integer arguments in the
 * stopped thread, and wait (at most @timeout_ms) for it to return; its
 * %rax into *@ret.  Signals that arrive meanwhile are delivered to the
 * thread as they would have been.  0, or a negative errno with @err
 * (-ESRCH: the process is gone).
 */
int inject_call(struct inject *in, uint64_t fn, const uint64_t *args,
		unsigned int nargs, unsigned int timeout_ms, uint64_t *ret,
		char *err, size_t errlen);

/* Put the thread back as it was stopped and let it go. */
void inject_release(struct inject *in);

/*
 * The mappings of @pid, one at a time: @fn is called for each, and a
 * nonzero return stops the walk and is returned.  -errno if the maps
 * cannot be read.
 */
int proc_maps(pid_t pid, int (*fn)(const struct proc_map *m, void *arg),
	      void *arg);

/* The text after "@key:" in the status file of @pid (of its thread @tid,
 * unless 0), into @out ("" if none).  False if the file cannot be read. */
bool proc_status_text(pid_t pid, pid_t tid, const char *key, char *out,
		      size_t size);

/*
 * The address in @pid of the symbol @sym of the object whose path @match
 * accepts (a base name prefix such as "libc.so."), or of the executable
 * for NULL: its .dynsym, else .symtab.  0 or -ENOENT (no such object or
 * symbol), with the object's path in @path if not NULL.
 */
int proc_symbol(pid_t pid, const char *match, const char *sym, uint64_t *addr,
		char *path, size_t pathlen);

#endif
