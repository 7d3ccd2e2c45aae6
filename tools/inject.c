// SPDX-License-Identifier: GPL-2.0-only
/* Calls made in another process with ptrace (inject.h). */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#define SCRATCH_SIZE (16u << 10)
#define RED_ZONE 128
#define XSTATE_MAX (64u << 10)

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

int proc_maps(pid_t pid, int (*fn)(const struct proc_map *m, void *arg),
	      void *arg)
{
	char name[64], line[4096 + 256];
	FILE *f;
	int ret = 0;

	snprintf(name, sizeof(name), "/proc/%ld/maps", (long)pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct proc_map m = { 0 };
		int path_at = 0;

		if (sscanf(line,
			   "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s %n",
			   &m.start, &m.end, m.perms, &m.offset, &path_at) < 4)
			continue;
		if (path_at > 0) {
			snprintf(m.path, sizeof(m.path), "%s", line + path_at);
			m.path[strcspn(m.path, "\n")] = '\0';
		}
		ret = fn(&m, arg);
	}
	fclose(f);
	return ret;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

struct find_object {
	const char *match; /* base name prefix; NULL: the executable */
	char exe[PATH_MAX];
	struct proc_map first; /* its mapping of file offset 0 */
	bool found;
};

static int find_object_map(const struct proc_map *m, void *arg)
{
	struct find_object *fo = arg;
	bool ours;

	if (m->path[0] != '/' || m->offset)
		return 0;
	ours = fo->match ? !strncmp(base_name(m->path), fo->match,
				    strlen(fo->match)) :
			   !strcmp(m->path, fo->exe);
	if (!ours || (fo->found && m->start >= fo->first.start))
		return 0;
	fo->first = *m;
	fo->found = true;
	return 0;
}

/* Open the object mapped at @m: as the process sees it, else by path. */
static int open_mapped(pid_t pid, const struct proc_map *m)
{
	char name[PATH_MAX + 64];
	int fd;

	snprintf(name, sizeof(name), "/proc/%ld/map_files/%" PRIx64 "-%" PRIx64,
		 (long)pid, m->start, m->end);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(name, sizeof(name), "/proc/%ld/root%s", (long)pid, m->path);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	return fd >= 0 ? fd : open(m->path, O_RDONLY | O_CLOEXEC);
}

/* @sym's value in @elf (.dynsym first), and the bias of @first. */
static int elf_symbol(Elf *elf, const struct proc_map *first, const char *sym,
		      uint64_t *addr)
{
	static const unsigned int types[] = { SHT_DYNSYM, SHT_SYMTAB };
	uint64_t bias = UINT64_MAX;
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset == 0) {
			bias = first->start - (ph.p_vaddr & ~(uint64_t)4095);
			break;
		}
	}
	if (bias == UINT64_MAX)
		return -ENOEXEC;
	for (unsigned int t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] ||
			    !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t i = 0;
			     data && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *name;

				if (!gelf_getsym(data, (int)i, &s) ||
				    s.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(s.st_info) == STT_TLS)
					continue;
				name = elf_strptr(elf, sh.sh_link, s.st_name);
				if (name && !strcmp(name, sym)) {
					*addr = bias + s.st_value;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int proc_symbol(pid_t pid, const char *match, const char *sym, uint64_t *addr,
		char *path, size_t pathlen)
{
	struct find_object fo = { .match = match };
	char name[64];
	Elf *elf;
	ssize_t n;
	int fd, ret;

	if (!match) {
		snprintf(name, sizeof(name), "/proc/%ld/exe", (long)pid);
		n = readlink(name, fo.exe, sizeof(fo.exe) - 1);
		if (n < 0)
			return -errno;
		fo.exe[n] = '\0';
	}
	ret = proc_maps(pid, find_object_map, &fo);
	if (ret)
		return ret;
	if (!fo.found)
		return -ENOENT;
	if (path)
		snprintf(path, pathlen, "%s", fo.first.path);
	fd = open_mapped(pid, &fo.first);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ret = elf ? elf_symbol(elf, &fo.first, sym, addr) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* Where @addr is: the mapping's path, or "" if none has it. */
struct where {
	uint64_t addr;
	char path[PATH_MAX];
	bool found;
};

static int find_addr(const struct proc_map *m, void *arg)
{
	struct where *w = arg;

	if (w->addr < m->start || w->addr >= m->end)
		return 0;
	snprintf(w->path, sizeof(w->path), "%s", m->path);
	w->found = true;
	return 1;
}

/* Code of the C library and the loader, where a thread may hold their
 * locks (and of the runtime, which a thread of an earlier attach may be
 * in). */
static bool system_code(pid_t pid, uint64_t addr)
{
	static const char *const libs[] = { "libc.so", "ld-linux",
					    "libpthread.so", "libdl.so",
					    "libxrayfdr.so" };
	struct where w = { .addr = addr };
	const char *base;

	if (proc_maps(pid, find_addr, &w) < 0 || !w.found)
		return true; /* unknown: as unsafe */
	base = base_name(w.path);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return true;
	return false;
}

bool proc_status_text(pid_t pid, pid_t tid, const char *key, char *out,
		      size_t size)
{
	char name[96], line[256];
	size_t klen = strlen(key);
	FILE *f;

	out[0] = '\0';
	if (tid)
		snprintf(name, sizeof(name), "/proc/%ld/task/%ld/status",
			 (long)pid, (long)tid);
	else
		snprintf(name, sizeof(name), "/proc/%ld/status", (long)pid);
	f = fopen(name, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':')
			snprintf(out, size, "%s", line + klen + 1);
	fclose(f);
	return true;
}

/* Does the thread block a signal it has a handler for (as it would in
 * that handler)? */
static bool maybe_in_handler(pid_t pid, pid_t tid)
{
	char blocked[64], caught[64];

	if (!proc_status_text(pid, tid, "SigBlk", blocked, sizeof(blocked)) ||
	    !proc_status_text(pid, tid, "SigCgt", caught, sizeof(caught)))
		return true;
	return (strtoull(blocked, NULL, 16) & strtoull(caught, NULL, 16)) != 0;
}

/* System calls that block holding none of the C library's locks. */
static bool quiet_syscall(long nr, const struct user_regs_struct *r,
			  bool futex_too)
{
	switch (nr) {
	case 0: /* read */
	case 7: /* poll */
	case 17: /* pread64 */
	case 19: /* readv */
	case 23: /* select */
	case 34: /* pause */
	case 35: /* nanosleep */
	case 43: /* accept */
	case 45: /* recvfrom */
	case 47: /* recvmsg */
	case 61: /* wait4 */
	case 128: /* rt_sigtimedwait */
	case 130: /* rt_sigsuspend */
	case 230: /* clock_nanosleep */
	case 232: /* epoll_wait */
	case 247: /* waitid */
	case 270: /* pselect6 */
	case 271: /* ppoll */
	case 281: /* epoll_pwait */
	case 288: /* accept4 */
	case 299: /* recvmmsg */
	case 441: /* epoll_pwait2 */
		return true;
	case 202: /* futex: a wait, not inside a lock of its own */
		return futex_too &&
		       ((r->rsi & 127) == 0 || (r->rsi & 127) == 9);
	default:
		return false;
	}
}

/* Is the loader between loads (r_debug's r_state RT_CONSISTENT)? */
static bool loader_idle(const struct inject *in, uint64_t r_debug)
{
	int32_t state;

	if (!r_debug)
		return true; /* a loader without it: nothing to go by */
	return inject_read(in, r_debug + 24, &state, sizeof(state)) == 0 &&
	       state == 0;
}

static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);

		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int save_state(struct inject *in)
{
	struct iovec iov = { in->xstate, XSTATE_MAX };

	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &in->saved))
		return -errno;
	if (ptrace(PTRACE_GETREGSET, in->tid, (void *)(uintptr_t)NT_X86_XSTATE,
		   &iov))
		return -errno;
	in->xstate_len = iov.iov_len;
	return 0;
}

/* Which safe points a round of the search takes, best first: a thread
 * idle in a system call loses nothing while it loads the library. */
enum safe_points {
	SAFE_IDLE, /* blocked in a quiet system call, not a futex wait */
	SAFE_RUNNING, /* also: running the program's own code */
	SAFE_ANY, /* also: waiting on a futex */
};

/*
 * Try thread @tid: 1 if it is stopped at a safe point (kept), 0 if not
 * (let go), or a negative errno that ends the search.
 */
static int try_thread(struct inject *in, pid_t tid, enum safe_points take,
		      uint64_t r_debug)
{
	int status, ret;
	bool in_syscall, safe;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return errno == ESRCH ? 0 : -errno;
	in->tid = tid;
	in->pending = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) ||
	    wait_stop(tid, &status))
		return 0;
	if (!WIFSTOPPED(status))
		return 0; /* it ended */
	if (status >> 16 != PTRACE_EVENT_STOP)
		in->pending = WSTOPSIG(status);
	ret = save_state(in);
	if (ret) {
		ptrace(PTRACE_DETACH, tid, NULL,
		       (void *)(uintptr_t)in->pending);
		return ret == -ESRCH ? 0 : ret;
	}
	in_syscall = (int64_t)in->saved.orig_rax >= 0;
	if (in_syscall)
		safe = quiet_syscall((long)in->saved.orig_rax, &in->saved,
				     take == SAFE_ANY);
	else
		safe = take >= SAFE_RUNNING &&
		       !system_code(in->pid, in->saved.rip) &&
		       !maybe_in_handler(in->pid, tid);
	if (safe)
		safe = loader_idle(in, r_debug);
	if (safe)
		return 1;
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)in->pending);
	return 0;
}

static int pick_thread(struct inject *in, enum safe_points take,
		       uint64_t r_debug)
{
	char name[64];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(name, sizeof(name), "/proc/%ld/task", (long)in->pid);
	d = opendir(name);
	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		ret = try_thread(in, (pid_t)tid, take, r_debug);
	}
	closedir(d);
	return ret;
}

int inject_seize(pid_t pid, unsigned int timeout_ms, struct inject *in,
		 char *err, size_t errlen)
{
	uint64_t deadline = now_ms() + timeout_ms, r_debug = 0;
	char name[64];
	unsigned int round = 0;
	int ret;

	memset(in, 0, sizeof(*in));
	in->pid = pid;
	in->xstate = malloc(XSTATE_MAX);
	if (!in->xstate)
		return -ENOMEM;
	snprintf(name, sizeof(name), "/proc/%ld/mem", (long)pid);
	in->mem = open(name, O_RDWR | O_CLOEXEC);
	if (in->mem < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", name, strerror(-ret));
		free(in->xstate);
		return ret;
	}
	if (proc_symbol(pid, "ld-linux", "_r_debug", &r_debug, NULL, 0))
		r_debug = 0;
	do {
		ret = pick_thread(in,
				  round < 4  ? SAFE_IDLE :
				  round < 20 ? SAFE_RUNNING :
					       SAFE_ANY,
				  r_debug);
		if (ret)
			break;
		pause_us(round < 20 ? 500 : 2000);
		round++;
	} while (now_ms() < deadline);
	if (ret == 1) {
		in->scratch = (in->saved.rsp - RED_ZONE - SCRATCH_SIZE) &
			      ~(uint64_t)63;
		return 0;
	}
	if (!ret) {
		ret = -EAGAIN;
		snprintf(
			err, errlen,
			"no thread of the process came to a point where it may load a library in %u ms (each was inside the C library, a signal handler or a load)",
			timeout_ms);
	} else {
		snprintf(err, errlen, "ptrace: %s", strerror(-ret));
	}
	close(in->mem);
	free(in->xstate);
	in->xstate = NULL;
	return ret;
}

int inject_read(const struct inject *in, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(in->mem, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -EIO;
}

int inject_push(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	size_t at = (in->scratch_used + 15) & ~(size_t)15;
	ssize_t n;

	if (at + len > SCRATCH_SIZE)
		return -ENOSPC;
	n = pwrite(in->mem, data, len, (off_t)(in->scratch + at));
	if (n != (ssize_t)len)
		return -EIO;
	*addr = in->scratch + at;
	in->scratch_used = at + len;
	return 0;
}

int inject_call(struct inject *in, uint64_t fn, const uint64_t *args,
		unsigned int nargs, unsigned int timeout_ms, uint64_t *ret,
		char *err, size_t errlen)
{
	struct user_regs_struct r = in->saved;
	unsigned long long *const argregs[] = { &r.rdi, &r.rsi, &r.rdx,
						&r.rcx, &r.r8,	&r.r9 };
	uint64_t deadline = now_ms() + timeout_ms, zero = 0;
	long backoff = 20;

	if (nargs > 6)
		return -E2BIG;
	for (unsigned int i = 0; i < nargs; i++)
		*argregs[i] = args[i];
	/* a return to address 0 faults, which stops the thread for us */
	r.rsp = ((in->scratch - RED_ZONE) & ~(uint64_t)15) - 8;
	if (pwrite(in->mem, &zero, 8, (off_t)r.rsp) != 8) {
		snprintf(err, errlen, "cannot write the thread's stack");
		return -EIO;
	}
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system call restarts */
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r) ||
	    ptrace(PTRACE_CONT, in->tid, NULL, NULL)) {
		snprintf(err, errlen, "ptrace: %s", strerror(errno));
		return -errno;
	}
	for (;;) {
		int status, sig;
		pid_t w = waitpid(in->tid, &status, __WALL | WNOHANG);

		if (w < 0 && errno != EINTR) {
			snprintf(err, errlen, "the process ended");
			return -ESRCH;
		}
		if (w <= 0) {
			if (now_ms() >= deadline)
				break;
			pause_us(backoff);
			backoff = backoff < 2000 ? backoff * 2 : 2000;
			continue;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			snprintf(err, errlen, "the process ended");
			return -ESRCH;
		}
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, in->tid, NULL, NULL);
			continue;
		}
		if (sig == SIGSEGV &&
		    !ptrace(PTRACE_GETREGS, in->tid, NULL, &r) && r.rip == 0) {
			*ret = r.rax;
			return 0;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL) {
			snprintf(err, errlen,
				 "the call faulted (signal %d at %#llx)", sig,
				 (unsigned long long)r.rip);
			return -EFAULT;
		}
		/* the program's own signal: as it would have come */
		ptrace(PTRACE_CONT, in->tid, NULL, (void *)(uintptr_t)sig);
	}
	/* stop it again, so that release can put it back */
	ptrace(PTRACE_INTERRUPT, in->tid, NULL, NULL);
	{
		int status;

		wait_stop(in->tid, &status);
	}
	snprintf(err, errlen, "the call did not return in %u ms", timeout_ms);
	return -ETIMEDOUT;
}

void inject_release(struct inject *in)
{
	struct iovec iov = { in->xstate, in->xstate_len };

	if (!in->xstate)
		return;
	ptrace(PTRACE_SETREGS, in->tid, NULL, &in->saved);
	ptrace(PTRACE_SETREGSET, in->tid, (void *)(uintptr_t)NT_X86_XSTATE,
	       &iov);
	ptrace(PTRACE_DETACH, in->tid, NULL, (void *)(uintptr_t)in->pending);
	close(in->mem);
	free(in->xstate);
	in->xstate = NULL;
}
