// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mapping of a session: what it contains, which mappings are accepted,
 * and that every other one fails with its documented errno; teardown while
 * mapped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define SUBBUF 4096
#define COUNT 4

FIXTURE(mapped)
{
	struct xs_session s;
	size_t page;
};

FIXTURE_SETUP(mapped)
{
	ASSERT_EQ(0, xs_setup(&self->s, SUBBUF, COUNT, 0));
	self->page = self->s.info.page_size;
}

FIXTURE_TEARDOWN(mapped)
{
	xs_close(&self->s);
}

/* Possible CPUs, from the same sysfs list the kernel sizes nr_cpu_ids by. */
static int possible_cpus(void)
{
	char line[128];
	int lo, hi;

	if (xs_read_line("/sys/devices/system/cpu/possible", line,
			 sizeof(line)))
		return -1;
	if (sscanf(line, "%d-%d", &lo, &hi) == 2)
		return hi + 1;
	return sscanf(line, "%d", &lo) == 1 ? lo + 1 : -1;
}

TEST_F(mapped, info_describes_the_abi)
{
	const struct xray_fdr_info *i = &self->s.info;

	EXPECT_EQ(sizeof(*i), i->size);
	EXPECT_EQ(XRAY_FDR_ABI_VERSION, i->abi_version);
	EXPECT_NE(0, i->session_id);
	EXPECT_EQ(possible_cpus(), (int)i->nr_cpus);
	EXPECT_EQ((unsigned long)sysconf(_SC_PAGESIZE), i->page_size);
	EXPECT_EQ(sizeof(struct xray_fdr_header), i->header_size);
	EXPECT_EQ(i->page_size, i->control_size);
	EXPECT_EQ(sizeof(struct xray_fdr_subbuf), i->subbuf_header_size);
	EXPECT_EQ(XRAY_FDR_SUBBUF_MIN_SIZE, i->min_subbuf_size);
	EXPECT_GE(i->max_subbuf_size, i->min_subbuf_size);
	EXPECT_GE(i->max_subbufs, 2);
	/* info was read before the geometry was set */
	EXPECT_EQ(0, i->state);
}

TEST_F(mapped, header_page_describes_the_session)
{
	const struct xray_fdr_header *h = self->s.hdr;

	EXPECT_EQ(XRAY_FDR_MAGIC, h->magic);
	EXPECT_EQ(XRAY_FDR_ABI_VERSION, h->abi_version);
	EXPECT_EQ(sizeof(*h), h->header_size);
	EXPECT_EQ(self->page, h->page_size);
	EXPECT_EQ(self->s.info.session_id, h->session_id);
	EXPECT_EQ(self->s.info.nr_cpus, h->nr_cpus);
	EXPECT_EQ(0, h->geom_flags);
	EXPECT_EQ(SUBBUF, h->subbuf_size);
	EXPECT_EQ(COUNT, h->subbuf_count);
	EXPECT_EQ(self->page, h->control_size);
	EXPECT_EQ(self->page, h->area_offset);
	EXPECT_EQ(self->page + SUBBUF * COUNT, h->area_size);
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED, h->state);
	EXPECT_EQ((uint32_t)getpid(), h->owner_pid);
	EXPECT_EQ((uint32_t)geteuid(), h->owner_uid);
	EXPECT_NE(0, h->created_wall_ns);
	EXPECT_NE(0, h->created_tsc);
}

TEST_F(mapped, rings_start_empty)
{
	const struct xray_fdr_subbuf *sb;
	struct xray_fdr_control *ctl;
	unsigned int cpu;
	char err[256];

	for (cpu = 0; cpu < self->s.hdr->nr_cpus; cpu++) {
		ctl = xs_control(&self->s, cpu);
		EXPECT_EQ(XRAY_FDR_COMMIT(0, sizeof(*sb)), ctl->commit);
		EXPECT_EQ(0, ctl->consumed);
		EXPECT_EQ(0, ctl->records_lost);
		sb = (const void *)xs_ring(&self->s, cpu);
		EXPECT_EQ(0, sb->seq);
		EXPECT_EQ(cpu, sb->cpu);
		EXPECT_EQ(0, sb->tid);
		EXPECT_EQ(XRAY_FDR_SUBBUF_KERNEL, sb->flags);
		EXPECT_EQ(0, xs_walk_ring(&self->s, cpu, NULL, NULL, err,
					  sizeof(err)));
	}
}

TEST_F(mapped, header_state_follows_start_and_stop)
{
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_ENABLED,
		  self->s.hdr->state);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_KEEP, 1));
	EXPECT_TRUE(self->s.hdr->state & XRAY_FDR_STATE_KEEP);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_KEEP, 0));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_FREEZE, 0));
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED | XRAY_FDR_STATE_FROZEN,
		  self->s.hdr->state);
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_STOP, 0));
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED, self->s.hdr->state);
}

TEST_F(mapped, every_area_maps_alone_and_in_runs)
{
	const struct xray_fdr_header *h = self->s.hdr;
	unsigned int cpu;
	uint8_t *p;

	for (cpu = 0; cpu < h->nr_cpus; cpu++) {
		p = mmap(NULL, h->area_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->s.fd, h->area_offset + cpu * h->area_size);
		ASSERT_NE(MAP_FAILED, p);
		/* the same pages as in the big mapping */
		p[h->area_size - 1] = 0x5a;
		EXPECT_EQ(0x5a, xs_ring(&self->s, cpu)[SUBBUF * COUNT - 1]);
		EXPECT_EQ(0, munmap(p, h->area_size));
	}
	if (h->nr_cpus >= 2) {
		p = mmap(NULL, 2 * h->area_size, PROT_READ, MAP_SHARED,
			 self->s.fd,
			 h->area_offset + (h->nr_cpus - 2) * h->area_size);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(0, munmap(p, 2 * h->area_size));
	}
}

static int map_errno(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

TEST_F(mapped, header_is_read_only)
{
	void *p;

	EXPECT_EQ(EACCES, map_errno(self->s.fd, self->page,
				    PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	p = mmap(NULL, self->page, PROT_READ, MAP_SHARED, self->s.fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, self->page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, self->page));
}

TEST_F(mapped, bad_mappings_fail_with_their_errno)
{
	const struct xray_fdr_header *h = self->s.hdr;
	size_t page = self->page, area = h->area_size;
	off_t first = h->area_offset, end = first + h->nr_cpus * area;
	int fd = self->s.fd, rw = PROT_READ | PROT_WRITE;

	/* sizes */
	EXPECT_EQ(EINVAL, map_errno(fd, 2 * page, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, map_errno(fd, area - page, rw, MAP_SHARED, first));
	EXPECT_EQ(EINVAL, map_errno(fd, area + page, rw, MAP_SHARED, first));
	EXPECT_EQ(EINVAL, map_errno(fd, area * (h->nr_cpus + 1), rw, MAP_SHARED,
				    first));
	/* offsets */
	EXPECT_EQ(EINVAL, map_errno(fd, area, rw, MAP_SHARED, first + page));
	EXPECT_EQ(EINVAL, map_errno(fd, area, rw, MAP_SHARED, end));
	EXPECT_EQ(EINVAL, map_errno(fd, area, rw, MAP_SHARED, (off_t)1 << 40));
	EXPECT_EQ(EINVAL, map_errno(fd, 2 * area, rw, MAP_SHARED, end - area));
	/* protections and flags */
	EXPECT_EQ(EPERM,
		  map_errno(fd, area, rw | PROT_EXEC, MAP_SHARED, first));
	EXPECT_EQ(EPERM,
		  map_errno(fd, page, PROT_READ | PROT_EXEC, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, map_errno(fd, area, rw, MAP_PRIVATE, first));
	EXPECT_EQ(EINVAL, map_errno(fd, page, PROT_READ, MAP_PRIVATE, 0));
}

TEST_F(mapped, mappings_cannot_gain_exec_or_be_split)
{
	size_t area = self->s.hdr->area_size;
	uint8_t *p;

	p = mmap(NULL, area, PROT_READ | PROT_WRITE, MAP_SHARED, self->s.fd,
		 self->s.hdr->area_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, area, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, munmap(p, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(p + self->page, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mremap(p, area, area + self->page, 0));
	EXPECT_EQ(0, munmap(p, area));
}

TEST(no_mapping_before_the_geometry)
{
	struct xs_session s;

	ASSERT_EQ(0, xs_open(&s));
	EXPECT_EQ(EINVAL,
		  map_errno(s.fd, s.info.page_size, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, map_errno(s.fd, s.info.page_size, PROT_READ,
				    MAP_SHARED, s.info.page_size));
	xs_close(&s);
}

TEST(mapped_bytes_follow_mappings)
{
	uint64_t before = xs_sysfs("bytes_mapped");
	struct xs_session s;

	ASSERT_NE(UINT64_MAX, before);
	ASSERT_EQ(0, xs_setup(&s, SUBBUF, COUNT, 0));
	EXPECT_EQ(before + s.info.page_size + s.areas_len,
		  xs_sysfs("bytes_mapped"));
	xs_close(&s);
	EXPECT_EQ(before, xs_sysfs("bytes_mapped"));
}

TEST(closing_while_mapped_keeps_the_session_until_unmapped)
{
	uint64_t sessions = xs_sysfs("sessions");
	struct xs_session s;
	uint8_t *ring;

	ASSERT_EQ(0, xs_setup(&s, SUBBUF, COUNT, 0));
	EXPECT_EQ(sessions + 1, xs_sysfs("sessions"));
	close(s.fd);
	s.fd = -1;
	/* the mapping holds the file, and the file the session */
	EXPECT_EQ(sessions + 1, xs_sysfs("sessions"));
	ring = xs_ring(&s, 0);
	ring[100] = 0xa5;
	EXPECT_EQ(0xa5, ring[100]);
	xs_close(&s);
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
}

TEST(exit_while_mapped_and_recording_is_clean)
{
	uint64_t sessions = xs_sysfs("sessions");
	uint64_t mapped = xs_sysfs("bytes_mapped");
	int status, i;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct xs_session s;

			if (xs_setup(&s, SUBBUF, COUNT, 0) ||
			    xs_ioctl(&s, XRAY_FDR_IOC_START, 0))
				_exit(1);
			usleep(10000);
			if (i)
				raise(SIGKILL);
			_exit(0); /* no munmap, no close */
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (i) {
			EXPECT_TRUE(WIFSIGNALED(status));
		} else {
			EXPECT_EQ(0, status);
		}
	}
	EXPECT_EQ(sessions, xs_sysfs("sessions"));
	EXPECT_EQ(mapped, xs_sysfs("bytes_mapped"));
}

TEST_HARNESS_MAIN
