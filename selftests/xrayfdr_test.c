// SPDX-License-Identifier: GPL-2.0-only
/*
 * Helpers shared by the selftests: see xrayfdr_test.h.
 *
 * The test writer follows the commit protocol the runtime will use: read
 * the commit word, prepare the stores, then in one rseq critical section
 * check that the thread is still on that CPU and that the commit word has
 * not moved, do the stores and publish them with one store of the commit
 * word.  Preemption, migration or a signal inside the section aborts it
 * (the kernel moves the instruction pointer to the abort label) and the
 * append starts over.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xrayfdr_test.h"

#define XS_SUBBUF_HDR ((uint32_t)sizeof(struct xray_fdr_subbuf))

int xs_open(struct xs_session *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = open(XS_DEVICE, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	s->info.size = sizeof(s->info);
	if (ioctl(s->fd, XRAY_FDR_IOC_INFO, &s->info) < 0) {
		int err = -errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	return 0;
}

int xs_ioctl(struct xs_session *s, unsigned long cmd, unsigned long arg)
{
	return ioctl(s->fd, cmd, arg) < 0 ? -errno : 0;
}

int xs_configure(struct xs_session *s, uint32_t subbuf_size,
		 uint32_t subbuf_count, uint32_t flags)
{
	struct xray_fdr_geometry g = {
		.size = sizeof(g),
		.flags = flags,
		.subbuf_size = subbuf_size,
		.subbuf_count = subbuf_count,
	};

	return xs_ioctl(s, XRAY_FDR_IOC_SET_GEOMETRY, (unsigned long)&g);
}

int xs_map(struct xs_session *s, bool writable)
{
	void *p;

	p = mmap(NULL, s->info.page_size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	s->hdr = p;
	s->areas_len = s->hdr->area_size * s->hdr->nr_cpus;
	p = mmap(NULL, s->areas_len, PROT_READ | (writable ? PROT_WRITE : 0),
		 MAP_SHARED, s->fd, s->hdr->area_offset);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap((void *)s->hdr, s->info.page_size);
		s->hdr = NULL;
		return err;
	}
	s->areas = p;
	return 0;
}

int xs_setup(struct xs_session *s, uint32_t subbuf_size, uint32_t subbuf_count,
	     uint32_t flags)
{
	int err = xs_open(s);

	if (!err)
		err = xs_configure(s, subbuf_size, subbuf_count, flags);
	if (!err)
		err = xs_map(s, true);
	if (err && s->fd >= 0)
		xs_close(s);
	return err;
}

void xs_close(struct xs_session *s)
{
	if (s->areas)
		munmap(s->areas, s->areas_len);
	if (s->hdr)
		munmap((void *)s->hdr, s->info.page_size);
	if (s->fd >= 0)
		close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

struct xray_fdr_control *xs_control(const struct xs_session *s,
				    unsigned int cpu)
{
	return (struct xray_fdr_control *)(s->areas + cpu * s->hdr->area_size);
}

uint8_t *xs_ring(const struct xs_session *s, unsigned int cpu)
{
	return s->areas + cpu * s->hdr->area_size + s->hdr->control_size;
}

static const struct xray_fdr_subbuf *xs_subbuf(const struct xs_session *s,
					       unsigned int cpu, uint32_t idx)
{
	return (const struct xray_fdr_subbuf *)(xs_ring(s, cpu) +
						(size_t)idx *
							s->hdr->subbuf_size);
}

static long xs_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static long xs_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/*
 * Records of one sub-buffer between its header and @used.  Returns the
 * count or -EBADMSG.
 */
static long xs_walk_subbuf(const struct xs_session *s, unsigned int cpu,
			   const struct xray_fdr_subbuf *sb, uint32_t used,
			   xs_record_fn fn, void *ctx, char *err, size_t errlen)
{
	const uint8_t *base = (const uint8_t *)sb;
	uint32_t off = XS_SUBBUF_HDR, len;
	long n = 0;

	if (used < XS_SUBBUF_HDR || used > s->hdr->subbuf_size || used % 8)
		return xs_fail(err, errlen,
			       "cpu %u seq %llu: used %u out of range", cpu,
			       (unsigned long long)sb->seq, used);
	if (sb->cpu != cpu)
		return xs_fail(err, errlen,
			       "cpu %u seq %llu: header names cpu %u", cpu,
			       (unsigned long long)sb->seq, sb->cpu);
	while (off < used) {
		len = 8;
		if (base[off] & XRAY_FDR_REC_EXTENDED)
			len = base[off + 1] * 8u;
		if (!len || off + len > used)
			return xs_fail(
				err, errlen,
				"cpu %u seq %llu offset %u: record of %u bytes overruns %u",
				cpu, (unsigned long long)sb->seq, off, len,
				used);
		n++;
		if (fn && fn(ctx, cpu, base + off, len, sb))
			return n;
		off += len;
	}
	return n;
}

long xs_walk_ring(const struct xs_session *s, unsigned int cpu, xs_record_fn fn,
		  void *ctx, char *err, size_t errlen)
{
	const struct xray_fdr_control *ctl = xs_control(s, cpu);
	uint32_t count = s->hdr->subbuf_count, size = s->hdr->subbuf_size;
	uint64_t commit = __atomic_load_n(&ctl->commit, __ATOMIC_ACQUIRE);
	uint32_t off = XRAY_FDR_COMMIT_OFFSET(commit), open, k, idx;
	const struct xray_fdr_subbuf *sb;
	uint64_t open_seq;
	long n = 0, r;

	if (!off || off > size * count || off % 8)
		return xs_fail(err, errlen, "cpu %u: commit offset %u invalid",
			       cpu, off);
	open = (off - 1) / size;
	open_seq = xs_subbuf(s, cpu, open)->seq;
	/* Oldest first: the sub-buffers before the open one, if written. */
	for (k = count - 1; k != UINT32_MAX; k--) {
		if (k > open_seq)
			continue;
		idx = (open + count - k) % count;
		sb = xs_subbuf(s, cpu, idx);
		if (sb->seq != open_seq - k)
			continue; /* never written (or torn by a scribbler) */
		r = xs_walk_subbuf(s, cpu, sb, k ? sb->used : off - open * size,
				   fn, ctx, err, errlen);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

struct xs_sched_ctx {
	struct xs_sched *v;
	size_t n, cap;
	char *err;
	size_t errlen;
	int bad;
};

static int xs_collect(void *p, unsigned int cpu, const uint8_t *rec,
		      uint32_t len, const struct xray_fdr_subbuf *sb)
{
	const struct xray_fdr_sched_record *r = (const void *)rec;
	struct xs_sched_ctx *ctx = p;
	unsigned int kind;

	(void)sb;
	if (!(rec[0] & XRAY_FDR_REC_EXTENDED))
		return 0;
	kind = XRAY_FDR_REC_KIND(rec[0]);
	if (kind <= XRAY_FDR_REC_USER_KIND_MAX)
		return 0;
	if (kind < XRAY_FDR_REC_SWITCH_OUT || kind > XRAY_FDR_REC_MIGRATE ||
	    len != sizeof(*r) || r->reserved || r->cpu != cpu ||
	    (kind != XRAY_FDR_REC_MIGRATE && r->prev_cpu != cpu) ||
	    (kind != XRAY_FDR_REC_SWITCH_OUT && r->flags)) {
		snprintf(
			ctx->err, ctx->errlen,
			"ring %u: bad kernel record kind %u len %u cpu %u prev %u flags %u",
			cpu, kind, len, r->cpu, r->prev_cpu, r->flags);
		ctx->bad = 1;
		return 1;
	}
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 256;
		struct xs_sched *v = realloc(ctx->v, cap * sizeof(*v));

		if (!v) {
			ctx->bad = -ENOMEM;
			return 1;
		}
		ctx->v = v;
		ctx->cap = cap;
	}
	ctx->v[ctx->n++] = (struct xs_sched){
		.kind = kind,
		.flags = r->flags,
		.cpu = r->cpu,
		.prev_cpu = r->prev_cpu,
		.tid = r->tid,
		.pid = r->pid,
		.tsc = r->tsc,
		.ring = cpu,
	};
	return 0;
}

long xs_sched_records(const struct xs_session *s, struct xs_sched **out,
		      char *err, size_t errlen)
{
	struct xs_sched_ctx ctx = { .err = err, .errlen = errlen };
	unsigned int cpu;
	long r;

	for (cpu = 0; cpu < s->hdr->nr_cpus; cpu++) {
		r = xs_walk_ring(s, cpu, xs_collect, &ctx, err, errlen);
		if (r < 0 || ctx.bad) {
			free(ctx.v);
			return r < 0 ? r : ctx.bad < 0 ? ctx.bad : -EBADMSG;
		}
	}
	*out = ctx.v;
	return ctx.n;
}

/* rseq: glibc registers each thread's area at thread pointer + offset. */
static struct rseq *xs_rseq(void)
{
	return (struct rseq *)((char *)__builtin_thread_pointer() +
			       __rseq_offset);
}

bool xs_rseq_available(void)
{
	return __rseq_size > 0 && (int32_t)xs_rseq()->cpu_id >= 0;
}

struct xs_store {
	__u64 *addr;
	uint64_t val;
};

/*
 * The critical section.  Returns 0 if committed, 1 if aborted or if the
 * CPU or the commit word changed since the caller looked.
 */
static int xs_rseq_commit(struct rseq *rs, uint32_t cpu, __u64 *commit,
			  uint64_t expect, uint64_t newval,
			  const struct xs_store *st, long n)
{
	int ret;

	__asm__ __volatile__(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0x0, 0x0\n\t"
		".quad 1f, (2f - 1f), 4f\n\t"
		".popsection\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %[rseq_cs]\n\t"
		"1:\n\t"
		"cmpl %[cpu], %[cpu_id]\n\t"
		"jnz 4f\n\t"
		"cmpq %[expect], (%[commit])\n\t"
		"jnz 4f\n\t"
		"testq %[n], %[n]\n\t"
		"jz 6f\n\t"
		"5:\n\t"
		"movq (%[st]), %%rax\n\t"
		"movq 8(%[st]), %%rdx\n\t"
		"movq %%rdx, (%%rax)\n\t"
		"addq $16, %[st]\n\t"
		"decq %[n]\n\t"
		"jnz 5b\n\t"
		"6:\n\t"
		"movq %[newval], (%[commit])\n\t"
		"2:\n\t"
		"movl $0, %[ret]\n\t"
		"jmp 7f\n\t"
		/* the signature the kernel checks before 4: */
		".long 0x53053053\n\t"
		"4:\n\t"
		"movl $1, %[ret]\n\t"
		"7:\n\t"
		: [ret] "=&r"(ret), [st] "+&r"(st), [n] "+&r"(n),
		  [rseq_cs] "=m"(rs->rseq_cs)
		: [cpu] "r"(cpu), [cpu_id] "m"(rs->cpu_id), [commit] "r"(commit),
		  [expect] "r"(expect), [newval] "r"(newval)
		: "rax", "rdx", "memory", "cc");
	return ret;
}

static uint64_t xs_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

int xs_write(const struct xs_session *s, const void *rec, uint32_t len,
	     uint32_t tid)
{
	uint32_t size = s->hdr->subbuf_size, count = s->hdr->subbuf_count;
	struct rseq *rs = xs_rseq();
	struct xs_store st[16];
	struct xray_fdr_control *ctl;
	struct xray_fdr_subbuf *sb, *next;
	uint32_t cpu, off, idx, used, i;
	uint64_t commit, seq;
	__u64 *words;
	long n;

	if (len % 8 || len > 64)
		return -EINVAL;
	for (;;) {
		if (__atomic_load_n(&s->hdr->state, __ATOMIC_RELAXED) &
		    XRAY_FDR_STATE_FROZEN)
			return -EAGAIN;
		cpu = __atomic_load_n(&rs->cpu_id, __ATOMIC_RELAXED);
		ctl = xs_control(s, cpu);
		commit = __atomic_load_n(&ctl->commit, __ATOMIC_RELAXED);
		off = XRAY_FDR_COMMIT_OFFSET(commit);
		if (!off || off > size * count || off % 8)
			return -EBADMSG;
		idx = (off - 1) / size;
		used = off - idx * size;
		n = 0;
		if (used + len > size) {
			sb = (struct xray_fdr_subbuf *)(xs_ring(s, cpu) +
							(size_t)idx * size);
			seq = sb->seq + 1;
			if ((s->hdr->geom_flags & XRAY_FDR_GEOM_DISCARD) &&
			    (int64_t)(seq - ctl->consumed) >= (int64_t)count)
				return -EAGAIN;
			/* used and flags share one 64-bit word */
			st[n++] = (struct xs_store){
				(__u64 *)&sb->used,
				used | (uint64_t)sb->flags << 32,
			};
			idx = (idx + 1) % count;
			next = (struct xray_fdr_subbuf *)(xs_ring(s, cpu) +
							  (size_t)idx * size);
			st[n++] = (struct xs_store){ &next->seq, seq };
			st[n++] = (struct xs_store){ &next->tsc,
						     __builtin_ia32_rdtsc() };
			st[n++] = (struct xs_store){ &next->wall_ns,
						     xs_wall_ns() };
			st[n++] = (struct xs_store){
				(__u64 *)&next->cpu,
				cpu | (uint64_t)tid << 32,
			};
			st[n++] = (struct xs_store){ (__u64 *)&next->used, 0 };
			st[n++] = (struct xs_store){ (__u64 *)&next->user_data,
						     0 };
			off = idx * size + XS_SUBBUF_HDR;
		}
		words = (__u64 *)(xs_ring(s, cpu) + off);
		for (i = 0; i < len / 8; i++) {
			uint64_t w;

			memcpy(&w, (const uint8_t *)rec + 8 * i, 8);
			st[n++] = (struct xs_store){ &words[i], w };
		}
		if (!xs_rseq_commit(rs, cpu, &ctl->commit, commit,
				    XRAY_FDR_COMMIT(tid, off + len), st, n))
			return cpu;
	}
}

int xs_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		err = -EIO;
	else
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return err;
}

int xs_sysfs_u64(const char *name, uint64_t *v)
{
	char path[256], line[64], *end;
	int err;

	snprintf(path, sizeof(path), XS_SYSFS "%s", name);
	err = xs_read_line(path, line, sizeof(line));
	if (err)
		return err;
	errno = 0;
	*v = strtoull(line, &end, 10);
	if (errno || end == line || *end)
		return -EINVAL;
	return 0;
}

uint64_t xs_sysfs(const char *name)
{
	uint64_t v;

	return xs_sysfs_u64(name, &v) ? UINT64_MAX : v;
}

int xs_module_load(const char *params)
{
	int fd = open(XS_MODULE_PATH, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		err = -errno;
	close(fd);
	return err;
}

int xs_module_unload(void)
{
	return syscall(SYS_delete_module, "xray_fdr", O_NONBLOCK) ? -errno : 0;
}

uint64_t xs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

int xs_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int xs_nr_online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

pid_t xs_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}
