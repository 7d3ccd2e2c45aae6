// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ioctls of /dev/xrayfdr: unknown commands, size-extensible structs
 * (short, exact, longer with a zero or non-zero tail, absurd), geometry
 * values outside the limits, and commands in the wrong state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

FIXTURE(fresh)
{
	struct xs_session s;
};

FIXTURE_SETUP(fresh)
{
	ASSERT_EQ(0, xs_open(&self->s));
}

FIXTURE_TEARDOWN(fresh)
{
	xs_close(&self->s);
}

static int ioctl_errno(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* A geometry struct of any size: the known fields, then @tail. */
static int set_geometry(int fd, uint32_t size, uint32_t flags, uint32_t sb,
			uint32_t count, uint8_t tail)
{
	uint8_t buf[8192];
	struct xray_fdr_geometry g = {
		.size = size,
		.flags = flags,
		.subbuf_size = sb,
		.subbuf_count = count,
	};

	memset(buf, tail, sizeof(buf));
	memcpy(buf, &g, sizeof(g));
	return ioctl_errno(fd, XRAY_FDR_IOC_SET_GEOMETRY, buf);
}

TEST_F(fresh, unknown_commands_are_ENOTTY)
{
	int fd = self->s.fd;

	EXPECT_EQ(ENOTTY, ioctl_errno(fd, _IO(XRAY_FDR_IOC_MAGIC, 0x7f), NULL));
	EXPECT_EQ(ENOTTY, ioctl_errno(fd, _IO(XRAY_FDR_IOC_MAGIC, 0x07), NULL));
	EXPECT_EQ(ENOTTY, ioctl_errno(fd, _IO('X', 0x02), NULL));
	/* a known number under another magic */
	EXPECT_EQ(ENOTTY,
		  ioctl_errno(fd, _IOWR('X', 0x00, struct xray_fdr_info),
			      &self->s.info));
	/* and the device is not a file */
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
}

TEST_F(fresh, geometry_struct_sizes)
{
	int fd = self->s.fd;

	EXPECT_EQ(EINVAL, set_geometry(fd, 0, 0, 4096, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 8, 0, 4096, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 15, 0, 4096, 2, 0));
	/* longer than this kernel knows: only zero bytes may follow */
	EXPECT_EQ(E2BIG, set_geometry(fd, 24, 0, 4096, 2, 0xff));
	EXPECT_EQ(E2BIG, set_geometry(fd, 4097, 0, 4096, 2, 0));
	EXPECT_EQ(E2BIG, set_geometry(fd, UINT32_MAX, 0, 4096, 2, 0));
	EXPECT_EQ(EFAULT, ioctl_errno(fd, XRAY_FDR_IOC_SET_GEOMETRY, NULL));
	EXPECT_EQ(EFAULT,
		  ioctl_errno(fd, XRAY_FDR_IOC_SET_GEOMETRY, (void *)8));
	/* none of that set anything */
	EXPECT_EQ(EINVAL,
		  mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ?
			  errno :
			  0);
	EXPECT_EQ(0, set_geometry(fd, 4096, 0, 4096, 2, 0));
	EXPECT_EQ(EBUSY, set_geometry(fd, 16, 0, 4096, 2, 0));
}

TEST_F(fresh, geometry_values_outside_the_limits)
{
	int fd = self->s.fd;
	uint32_t max_sb = self->s.info.max_subbuf_size;
	uint32_t max_n = self->s.info.max_subbufs;

	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0x2, 4096, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0x80000000, 4096, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 0, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 2048, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 6144, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, max_sb * 2, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, UINT32_MAX, 2, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 4096, 0, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 4096, 1, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 4096, max_n + 1, 0));
	EXPECT_EQ(EINVAL, set_geometry(fd, 16, 0, 4096, UINT32_MAX, 0));
	/* within each limit, but beyond the memory of one session */
	EXPECT_EQ(EFBIG, set_geometry(fd, 16, 0, max_sb, max_n, 0));
	/* a longer struct with a zero tail is fine */
	EXPECT_EQ(0, set_geometry(fd, 64, XRAY_FDR_GEOM_DISCARD, 8192, 3, 0));
}

TEST_F(fresh, info_struct_sizes)
{
	struct {
		struct xray_fdr_info info;
		uint8_t more[8];
	} big;
	struct xray_fdr_info info;
	int fd = self->s.fd;

	info.size = 4;
	EXPECT_EQ(EINVAL, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &info));
	info.size = 8192;
	EXPECT_EQ(E2BIG, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &info));
	EXPECT_EQ(EFAULT, ioctl_errno(fd, XRAY_FDR_IOC_INFO, NULL));
	/* a newer caller: the kernel fills what it knows and says so */
	memset(&big, 0xa5, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &big));
	EXPECT_EQ(sizeof(struct xray_fdr_info), big.info.size);
	EXPECT_EQ(XRAY_FDR_ABI_VERSION, big.info.abi_version);
	EXPECT_EQ(0xa5, big.more[0]);
}

TEST_F(fresh, commands_in_the_wrong_state)
{
	int fd = self->s.fd;

	EXPECT_EQ(ENODATA, ioctl_errno(fd, XRAY_FDR_IOC_START, NULL));
	EXPECT_EQ(ENODATA, ioctl_errno(fd, XRAY_FDR_IOC_FREEZE, NULL));
	EXPECT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_STOP, NULL));
	EXPECT_EQ(EINVAL, ioctl(fd, XRAY_FDR_IOC_KEEP, 2UL) ? errno : 0);
	EXPECT_EQ(0, ioctl(fd, XRAY_FDR_IOC_KEEP, 1UL) ? errno : 0);
	EXPECT_EQ(0, ioctl(fd, XRAY_FDR_IOC_KEEP, 0UL) ? errno : 0);
}

/*
 * A file opened read-only may only read: INFO, and attaching a view of a
 * retained session.  Everything that changes a session needs a writable
 * file, through ioctl and through netlink alike.
 */
TEST(read_only_file_may_only_read)
{
	struct xray_fdr_info info = { .size = sizeof(info) };
	int fd = open(XS_DEVICE, O_RDONLY);
	struct ctl_nl nl;

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &info));
	EXPECT_EQ(EBADF, set_geometry(fd, 16, 0, 4096, 2, 0));
	EXPECT_EQ(EBADF, ioctl_errno(fd, XRAY_FDR_IOC_START, NULL));
	EXPECT_EQ(EBADF, ioctl_errno(fd, XRAY_FDR_IOC_STOP, NULL));
	EXPECT_EQ(EBADF, ioctl_errno(fd, XRAY_FDR_IOC_FREEZE, NULL));
	EXPECT_EQ(EBADF, ioctl(fd, XRAY_FDR_IOC_KEEP, 1UL) ? errno : 0);
	/* netlink acts on the session, which was opened read-only */
	ASSERT_EQ(0, ctl_nl_open(&nl));
	EXPECT_EQ(-EBADF, ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_KEEP,
					     info.session_id, 1));
	EXPECT_EQ(-EBADF, ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_START,
					     info.session_id, -1));
	EXPECT_EQ(-EBADF, ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_STOP,
					     info.session_id, -1));
	ctl_nl_close(&nl);
	/* nothing to map: it has no geometry */
	EXPECT_EQ(MAP_FAILED,
		  mmap(NULL, info.page_size, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &info));
	EXPECT_EQ(0, info.state);
	close(fd);
}

/* ...and a read-only file may attach a retained session and map it. */
TEST(read_only_file_may_attach_and_map_a_view)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	struct xray_fdr_info info = { .size = sizeof(info) };
	const struct xray_fdr_header *h;
	struct xs_session kept;
	struct ctl_nl nl;
	void *areas;
	int fd;

	ASSERT_EQ(0, xs_setup(&kept, 4096, 2, 0));
	ASSERT_EQ(0, xs_ioctl(&kept, XRAY_FDR_IOC_KEEP, 1));
	att.session_id = kept.info.session_id;
	xs_close(&kept);

	fd = open(XS_DEVICE, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_ATTACH, &att));
	EXPECT_EQ(0, ioctl_errno(fd, XRAY_FDR_IOC_INFO, &info));
	EXPECT_TRUE(info.state & XRAY_FDR_STATE_READONLY);
	h = mmap(NULL, info.page_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, h);
	areas = mmap(NULL, h->area_size * h->nr_cpus, PROT_READ, MAP_SHARED, fd,
		     h->area_offset);
	EXPECT_NE(MAP_FAILED, areas);
	if (areas != MAP_FAILED)
		munmap(areas, h->area_size * h->nr_cpus);
	munmap((void *)h, info.page_size);
	close(fd);

	ASSERT_EQ(0, ctl_nl_open(&nl));
	EXPECT_EQ(0, ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP,
					att.session_id, -1));
	ctl_nl_close(&nl);
}

TEST_HARNESS_MAIN
