/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the selftests of xray_fdr.ko: sessions and their
 * mappings, a verifying ring reader, the test writer (the commit protocol
 * with rseq, as the runtime will use it) and sysfs values.  They run
 * inside the test VM.
 */
#ifndef XRAYFDR_TEST_H
#define XRAYFDR_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/xray_fdr.h>

#include "ctl_nl.h"

#define XS_DEVICE "/dev/" XRAY_FDR_DEVICE_NAME
#define XS_SYSFS "/sys/kernel/xrayfdr/"
#define XS_MODULE_PATH "/lib/modules/xray_fdr.ko"

/* A session opened by the test, with its mappings once made. */
struct xs_session {
	int fd;
	struct xray_fdr_info info;
	const struct xray_fdr_header *hdr;
	uint8_t *areas;
	size_t areas_len;
};

/* open /dev/xrayfdr and read its info; 0 or -errno. */
int xs_open(struct xs_session *s);
/* set the geometry; 0 or -errno. */
int xs_configure(struct xs_session *s, uint32_t subbuf_size,
		 uint32_t subbuf_count, uint32_t flags);
/* map the header and every CPU area; 0 or -errno. */
int xs_map(struct xs_session *s, bool writable);
/* open, configure and map in one go; 0 or -errno. */
int xs_setup(struct xs_session *s, uint32_t subbuf_size, uint32_t subbuf_count,
	     uint32_t flags);
void xs_close(struct xs_session *s);
int xs_ioctl(struct xs_session *s, unsigned long cmd, unsigned long arg);

struct xray_fdr_control *xs_control(const struct xs_session *s,
				    unsigned int cpu);
uint8_t *xs_ring(const struct xs_session *s, unsigned int cpu);

/*
 * Walk the committed records of @cpu's ring, oldest first, calling @fn for
 * each (return non-zero from @fn to stop).  Checks the framing: commit
 * word, sub-buffer headers and sequence, record lengths.  Returns the
 * number of records, or -EBADMSG with a message in @err.
 */
typedef int (*xs_record_fn)(void *ctx, unsigned int cpu, const uint8_t *rec,
			    uint32_t len, const struct xray_fdr_subbuf *sb);
long xs_walk_ring(const struct xs_session *s, unsigned int cpu, xs_record_fn fn,
		  void *ctx, char *err, size_t errlen);

/* A scheduler record as read back. */
struct xs_sched {
	unsigned int kind; /* enum xray_fdr_rec_kind */
	unsigned int flags;
	unsigned int cpu;
	unsigned int prev_cpu;
	uint32_t tid;
	uint32_t pid;
	uint64_t tsc;
	unsigned int ring; /* the ring it was found in */
};

/*
 * Every scheduler record of every ring, ring by ring, each ring oldest
 * first.  *out is malloc()ed.  Returns the count or -errno / -EBADMSG
 * (message in @err).
 */
long xs_sched_records(const struct xs_session *s, struct xs_sched **out,
		      char *err, size_t errlen);

/*
 * The test writer's record: extended kind 1, 16 bytes: writer id, thread
 * id and a per-writer sequence number.
 */
#define XS_REC_TEST_KIND 1
struct xs_test_record {
	uint8_t type;
	uint8_t len;
	uint16_t writer;
	uint32_t tid;
	uint64_t seq;
};

/* Is rseq registered for this thread (glibc does it)? */
bool xs_rseq_available(void);
/*
 * Append @len bytes at @rec to the ring of the CPU this thread runs on,
 * with the commit protocol, owner @tid.  Returns the CPU used, -EAGAIN if
 * frozen or full (discard mode), -EBADMSG if the commit word is corrupt.
 */
int xs_write(const struct xs_session *s, const void *rec, uint32_t len,
	     uint32_t tid);

/* A value from /sys/kernel/xrayfdr/NAME; 0 or -errno. */
int xs_sysfs_u64(const char *name, uint64_t *v);
/* The same, UINT64_MAX if it cannot be read (never a real value). */
uint64_t xs_sysfs(const char *name);
/* The first line of a file into @buf; 0 or -errno. */
int xs_read_line(const char *path, char *buf, size_t len);

/* Load XS_MODULE_PATH with parameters @params ("" for none); 0 or -errno. */
int xs_module_load(const char *params);
/* Unload the module without waiting for its users; 0 or -errno. */
int xs_module_unload(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t xs_now_ns(void);
int xs_pin_cpu(int cpu);
int xs_nr_online_cpus(void);
pid_t xs_gettid(void);

/* Generic netlink: tools/ctl/ctl_nl.h, as xrayfdr-ctl uses it. */

#endif
