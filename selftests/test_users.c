// SPDX-License-Identifier: GPL-2.0-only
/*
 * One user against the others: the per-user limits, the reserves that only
 * CAP_SYS_ADMIN may use (sessions, memory, keep marks), kept sessions of a
 * killed unprivileged process and their expiry,
 * ring memory charged to the opener's memory cgroup, and other users'
 * operations while one user storms start/stop (stopping waits for an RCU
 * grace period, which must not hold the module's global lock).
 *
 * Unprivileged work runs in children that switch to uid 65534 or 65533;
 * the fixture saves every limit (the module parameters show the live
 * values) and puts them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define NOBODY 65534
#define OTHER 65533

static const struct {
	const char *param;
	int attr;
} limits[] = {
	{ "max_session_kb", XRAY_FDR_A_CONFIG_MAX_SESSION_KB },
	{ "max_total_kb", XRAY_FDR_A_CONFIG_MAX_TOTAL_KB },
	{ "max_sessions", XRAY_FDR_A_CONFIG_MAX_SESSIONS },
	{ "max_retained", XRAY_FDR_A_CONFIG_MAX_RETAINED },
	{ "max_user_sessions", XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS },
	{ "max_user_kb", XRAY_FDR_A_CONFIG_MAX_USER_KB },
	{ "max_user_retained", XRAY_FDR_A_CONFIG_MAX_USER_RETAINED },
	{ "admin_reserve_sessions", XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS },
	{ "admin_reserve_kb", XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB },
	{ "admin_reserve_retained", XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED },
	{ "retained_max_age", XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE },
};

#define NLIMITS (sizeof(limits) / sizeof(limits[0]))

static int param(const char *name, uint64_t *v)
{
	char path[128], line[64];
	int err;

	snprintf(path, sizeof(path), "/sys/module/xray_fdr/parameters/%s",
		 name);
	err = xs_read_line(path, line, sizeof(line));
	if (err)
		return err;
	*v = strtoull(line, NULL, 10);
	return 0;
}

static int set_limit(struct ctl_nl *nl, int attr, uint32_t v)
{
	struct nl_msg *msg = ctl_nl_msg(nl, XRAY_FDR_CMD_CONFIG_SET, 0);

	if (!msg)
		return -ENOMEM;
	nla_put_u32(msg, attr, v);
	return ctl_nl_call(nl, msg, 0, NULL, NULL);
}

/* What /sys/kernel/xrayfdr/users says of @uid (all zero if no line). */
struct use {
	unsigned int sessions, retained;
	unsigned long long bytes;
	bool listed;
};

static struct use user_use(unsigned int uid)
{
	struct use u = { 0 };
	unsigned int id;
	char line[128];
	FILE *f = fopen(XS_SYSFS "users", "r");

	if (!f)
		return u;
	while (fgets(line, sizeof(line), f)) {
		struct use l = { .listed = true };

		if (sscanf(line, "%u %u %u %llu", &id, &l.sessions, &l.retained,
			   &l.bytes) == 4 &&
		    id == uid)
			u = l;
	}
	fclose(f);
	return u;
}

/* Sessions marked keep, of every user (the "retained" column). */
static unsigned int kept_by_all(void)
{
	unsigned int id, sessions, kept, all = 0;
	unsigned long long bytes;
	char line[128];
	FILE *f = fopen(XS_SYSFS "users", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %u %llu", &id, &sessions, &kept,
			   &bytes) == 4)
			all += kept;
	fclose(f);
	return all;
}

/* The memory the module charges for a geometry (kernel-module.rst). */
static uint64_t session_bytes(const struct xs_session *s, uint32_t sb,
			      uint32_t count)
{
	uint64_t threads, page = s->info.page_size;

	if (param("max_threads", &threads))
		return 0;
	while (threads & (threads - 1))
		threads++;
	return page + s->info.nr_cpus * (page + (uint64_t)sb * count) +
	       ((threads * 16 + page - 1) / page) * page;
}

/*
 * Run @fn(@arg, @fd) in a child as @uid; @fd is the write end of a pipe
 * to the parent, which gets the read end in *@rd.  Returns the pid.
 */
static pid_t spawn_as(unsigned int uid, int (*fn)(void *arg, int fd), void *arg,
		      int *rd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(100);
		_exit(fn(arg, p[1]));
	}
	close(p[1]);
	*rd = p[0];
	return pid;
}

static int child_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Read a line the child sends (its results), or "" at EOF. */
static void read_report(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < len && (r = read(fd, buf + n, 1)) == 1 && buf[n] != '\n')
		n++;
	buf[n] = 0;
}

#define CHILD_CHECK(cond)                                                  \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "# uid %u: %s:%d: %s\n", getuid(), \
				__FILE__, __LINE__, #cond);                \
			return 1;                                          \
		}                                                          \
	} while (0)

FIXTURE(users)
{
	struct ctl_nl nl;
	uint64_t saved[NLIMITS];
	struct xs_session probe; /* for the page size and the CPU count */
};

FIXTURE_SETUP(users)
{
	unsigned int i;

	ASSERT_EQ(0, ctl_nl_open(&self->nl));
	for (i = 0; i < NLIMITS; i++)
		ASSERT_EQ(0, param(limits[i].param, &self->saved[i]));
	ASSERT_EQ(0, xs_open(&self->probe));
}

FIXTURE_TEARDOWN(users)
{
	unsigned int i;

	xs_close(&self->probe);
	for (i = 0; i < NLIMITS; i++)
		EXPECT_EQ(0,
			  set_limit(&self->nl, limits[i].attr, self->saved[i]));
	ctl_nl_close(&self->nl);
}

/* The defaults leave most of the global caps to others. */
TEST_F(users, defaults_leave_most_to_others)
{
	uint64_t v[NLIMITS];
	unsigned int i;

	for (i = 0; i < NLIMITS; i++)
		v[i] = self->saved[i];
	/* max_user_sessions and max_user_kb under half the global caps */
	EXPECT_LT(2 * v[4], v[2]);
	EXPECT_LT(2 * v[5], v[1]);
	EXPECT_LT(2 * v[6], v[3]);
	EXPECT_LT(0, v[7]);
	EXPECT_LT(0, v[8]);
}

struct hog {
	int sessions; /* to try */
	uint32_t sb, count; /* geometry of the first two */
	int keep; /* mark each keep */
	int hold; /* wait for the parent to close the pipe */
};

/*
 * Open @h->sessions sessions as this user, configuring the first two with
 * the big geometry and keeping each if asked; report "opened configured
 * kept first-errno-of-each ids..." and then hold them until killed or
 * the parent's end closes.
 */
static int hog(void *arg, int fd)
{
	struct xs_session s[32];
	const struct hog *h = arg;
	int opened = 0, configured = 0, kept = 0;
	int open_err = 0, conf_err = 0, keep_err = 0, err, i;
	char out[512];
	int n;

	for (i = 0; i < h->sessions && i < 32; i++) {
		err = xs_open(&s[i]);
		if (err) {
			open_err = -err;
			break;
		}
		opened++;
		if (i < 2) {
			err = xs_configure(&s[i], h->sb, h->count, 0);
			if (err && !conf_err)
				conf_err = -err;
			if (!err)
				configured++;
		}
		if (h->keep) {
			if (i >= 2 && xs_configure(&s[i], 4096, 2, 0) == 0)
				configured++;
			err = xs_ioctl(&s[i], XRAY_FDR_IOC_KEEP, 1);
			if (err && !keep_err)
				keep_err = -err;
			if (!err)
				kept++;
		}
	}
	n = snprintf(out, sizeof(out), "%d %d %d %d %d %d", opened, configured,
		     kept, open_err, conf_err, keep_err);
	for (i = 0; i < opened && n < (int)sizeof(out) - 16; i++)
		n += snprintf(out + n, sizeof(out) - n, " %u",
			      s[i].info.session_id);
	n += snprintf(out + n, sizeof(out) - n, "\n");
	CHILD_CHECK(write(fd, out, n) == n);
	if (h->hold)
		pause();
	for (i = 0; i < opened; i++)
		xs_close(&s[i]);
	return 0;
}

struct report {
	int opened, configured, kept, open_err, conf_err, keep_err;
	unsigned int ids[32];
};

static void parse_report(const char *line, struct report *r)
{
	int n = 0, i;

	memset(r, 0, sizeof(*r));
	sscanf(line, "%d %d %d %d %d %d%n", &r->opened, &r->configured,
	       &r->kept, &r->open_err, &r->conf_err, &r->keep_err, &n);
	for (i = 0; i < r->opened && i < 32; i++) {
		int m = 0;

		if (sscanf(line + n, " %u%n", &r->ids[i], &m) != 1)
			break;
		n += m;
	}
}

/*
 * Run hog(@h) as @uid and wait for its report, logged and parsed into @r.
 * Returns the child's pid (it holds its sessions until killed).
 */
static pid_t start_hog_as(unsigned int uid, struct hog *h, struct report *r)
{
	char line[512];
	pid_t pid;
	int rd;

	pid = spawn_as(uid, hog, h, &rd);
	if (pid < 0)
		return pid;
	read_report(rd, line, sizeof(line));
	close(rd);
	ksft_print_msg("uid %u: %s\n", uid, line);
	parse_report(line, r);
	return pid;
}

static pid_t start_hog(struct hog *h, struct report *r)
{
	return start_hog_as(NOBODY, h, r);
}

static int open_and_configure(void *arg, int fd)
{
	const struct hog *h = arg;
	struct xs_session s;

	(void)fd;
	CHILD_CHECK(xs_open(&s) == 0);
	CHILD_CHECK(xs_configure(&s, h->sb, h->count, 0) == 0);
	xs_close(&s);
	return 0;
}

/*
 * A user at its limits gets EDQUOT for sessions and memory; another user,
 * and root, still get theirs.
 */
TEST_F(users, one_user_cannot_take_what_another_needs)
{
	struct hog h = { .sessions = 8, .sb = 65536, .count = 4, .hold = 1 };
	uint64_t one = session_bytes(&self->probe, h.sb, h.count);
	struct xs_session mine;
	struct report r;
	struct use u;
	pid_t pid;
	int rd;

	ASSERT_LT(0, one);
	ASSERT_EQ(0,
		  set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS, 3));
	/* room for one big session, not two */
	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_USER_KB,
			       (one + one / 2) / 1024));
	pid = start_hog(&h, &r);
	ASSERT_LT(0, pid);
	EXPECT_EQ(3, r.opened);
	EXPECT_EQ(EDQUOT, r.open_err);
	EXPECT_EQ(1, r.configured);
	EXPECT_EQ(EDQUOT, r.conf_err);
	u = user_use(NOBODY);
	EXPECT_TRUE(u.listed);
	EXPECT_EQ(3, u.sessions);
	EXPECT_EQ(one, u.bytes);

	/* another user is not held back by nobody's use */
	EXPECT_EQ(0,
		  child_status(spawn_as(OTHER, open_and_configure, &h, &rd)));
	close(rd);
	/* nor is root, which has no per-user limit */
	ASSERT_EQ(0, xs_open(&mine));
	EXPECT_EQ(0, xs_configure(&mine, h.sb, h.count, 0));
	xs_close(&mine);

	kill(pid, SIGTERM);
	EXPECT_EQ(128 + SIGTERM, child_status(pid));
	EXPECT_FALSE(user_use(NOBODY).listed);
	EXPECT_FALSE(user_use(OTHER).listed);
}

/* The last sessions and KiB of the global caps are root's alone. */
TEST_F(users, the_reserve_is_for_admins_only)
{
	struct hog h = { .sessions = 8, .sb = 4096, .count = 2, .hold = 1 };
	uint64_t open = xs_sysfs("sessions") + xs_sysfs("sessions_retained");
	uint64_t alloc = xs_sysfs("bytes_allocated");
	uint64_t one = session_bytes(&self->probe, 65536, 4);
	struct xs_session mine[5];
	struct report r;
	pid_t pid;
	int i;

	/* six more sessions in all, four of them reserved */
	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_SESSIONS,
			       open + 6));
	ASSERT_EQ(0, set_limit(&self->nl,
			       XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS, 4));
	pid = start_hog(&h, &r);
	ASSERT_LT(0, pid);
	EXPECT_EQ(2, r.opened);
	EXPECT_EQ(EMFILE, r.open_err);
	/* root gets the reserve, and then the global cap holds for it too */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, xs_open(&mine[i]));
	EXPECT_EQ(-EMFILE, xs_open(&mine[4]));
	for (i = 0; i < 4; i++)
		xs_close(&mine[i]);
	kill(pid, SIGTERM);
	EXPECT_EQ(128 + SIGTERM, child_status(pid));

	/* memory: room for two big sessions, one of them reserved */
	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_SESSIONS,
			       open + 16));
	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_TOTAL_KB,
			       (alloc + 2 * one + 1023) / 1024));
	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB,
			       (one + 1023) / 1024));
	h.sb = 65536;
	h.count = 4;
	pid = start_hog(&h, &r);
	ASSERT_LT(0, pid);
	EXPECT_EQ(1, r.configured);
	EXPECT_EQ(ENOSPC, r.conf_err);
	ASSERT_EQ(0, xs_open(&mine[0]));
	EXPECT_EQ(0, xs_configure(&mine[0], 65536, 4, 0));
	xs_close(&mine[0]);
	kill(pid, SIGTERM);
	EXPECT_EQ(128 + SIGTERM, child_status(pid));
}

/*
 * A killed unprivileged process keeps no more than its limit: the kept
 * sessions count against it (sessions, retained, memory) until dropped.
 */
TEST_F(users, kept_sessions_of_a_killed_user_stay_within_its_limit)
{
	struct hog h = {
		.sessions = 4, .sb = 4096, .count = 2, .keep = 1, .hold = 1
	};
	uint64_t one = session_bytes(&self->probe, 4096, 2);
	struct report r;
	struct use u;
	pid_t pid;
	int i;

	ASSERT_EQ(0,
		  set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_USER_RETAINED, 2));
	pid = start_hog(&h, &r);
	ASSERT_LT(0, pid);
	EXPECT_EQ(4, r.opened);
	EXPECT_EQ(4, r.configured);
	EXPECT_EQ(2, r.kept);
	EXPECT_EQ(EDQUOT, r.keep_err);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(pid));

	u = user_use(NOBODY);
	EXPECT_TRUE(u.listed);
	EXPECT_EQ(2, u.sessions);
	EXPECT_EQ(2, u.retained);
	EXPECT_EQ(2 * one, u.bytes);
	/* dropping them gives everything back */
	for (i = 0; i < r.kept; i++)
		EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl,
						XRAY_FDR_CMD_SESSION_DROP,
						r.ids[i], -1));
	EXPECT_FALSE(user_use(NOBODY).listed);
}

/*
 * Users filling the keep slots leave admin_reserve_retained of them to
 * root, who may then need one to keep a crashing service's rings.
 */
TEST_F(users, the_last_keep_slots_are_for_admins_only)
{
	struct hog h = {
		.sessions = 4, .sb = 4096, .count = 2, .keep = 1, .hold = 1
	};
	unsigned int kept = kept_by_all();
	struct xs_session mine[3];
	struct report r;
	pid_t pid;
	int i;

	ASSERT_EQ(0, set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_RETAINED,
			       kept + 3));
	ASSERT_EQ(0, set_limit(&self->nl,
			       XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED, 2));
	ASSERT_EQ(0,
		  set_limit(&self->nl, XRAY_FDR_A_CONFIG_MAX_USER_RETAINED, 8));
	pid = start_hog(&h, &r);
	ASSERT_LT(0, pid);
	EXPECT_EQ(1, r.kept);
	EXPECT_EQ(ENOSPC, r.keep_err);
	/* root gets the two reserved, then the global cap holds for it */
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, xs_open(&mine[i]));
		ASSERT_EQ(0, xs_configure(&mine[i], 4096, 2, 0));
	}
	EXPECT_EQ(0, xs_ioctl(&mine[0], XRAY_FDR_IOC_KEEP, 1));
	EXPECT_EQ(0, xs_ioctl(&mine[1], XRAY_FDR_IOC_KEEP, 1));
	EXPECT_EQ(-ENOSPC, xs_ioctl(&mine[2], XRAY_FDR_IOC_KEEP, 1));
	for (i = 0; i < 3; i++) {
		xs_ioctl(&mine[i], XRAY_FDR_IOC_KEEP, 0);
		xs_close(&mine[i]);
	}
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(pid));
	for (i = 0; i < r.kept; i++)
		EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl,
						XRAY_FDR_CMD_SESSION_DROP,
						r.ids[i], -1));
	EXPECT_EQ(kept, kept_by_all());
}

/*
 * A user's retained sessions are freed once older than retained_max_age
 * (counted in retained_expired); root's stay until dropped.  Setting the
 * age frees at once what it makes due, so the test waits only for the
 * sessions to be two seconds old, however busy the machine.
 */
TEST_F(users, retained_sessions_of_users_expire_and_roots_stay)
{
	struct hog h = {
		.sessions = 2, .sb = 4096, .count = 2, .keep = 1, .hold = 1
	};
	struct report mine, theirs;
	uint64_t expired, retained;
	pid_t pid;

	ASSERT_EQ(0,
		  set_limit(&self->nl, XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE, 0));
	pid = start_hog(&h, &theirs);
	ASSERT_LT(0, pid);
	ASSERT_EQ(2, theirs.kept);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(pid));
	h.sessions = 1;
	pid = start_hog_as(0, &h, &mine);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, mine.kept);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, child_status(pid));
	EXPECT_EQ(2, user_use(NOBODY).retained);
	expired = xs_sysfs("retained_expired");
	retained = xs_sysfs("sessions_retained");

	sleep(2);
	ASSERT_EQ(0,
		  set_limit(&self->nl, XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE, 1));
	EXPECT_EQ(expired + 2, xs_sysfs("retained_expired"));
	EXPECT_EQ(retained - 2, xs_sysfs("sessions_retained"));
	EXPECT_FALSE(user_use(NOBODY).listed);
	EXPECT_EQ(-ENOENT,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_DROP,
				     theirs.ids[0], -1));
	/* root's was kept: it is still there to drop */
	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_DROP,
					mine.ids[0], -1));
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

#define CG "/sys/fs/cgroup"

static int memcg_current(const char *cg, uint64_t *v)
{
	char path[256], line[64];
	int err;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	err = xs_read_line(path, line, sizeof(line));
	if (!err)
		*v = strtoull(line, NULL, 10);
	return err;
}

/* The rings are charged to the memory cgroup of the process that sets the
 * geometry (the opener, for the runtime).
 */
TEST_F(users, ring_memory_is_charged_to_the_memory_cgroup)
{
	const char *cg = CG "/xrayfdr-test";
	uint64_t before, after, one = session_bytes(&self->probe, 65536, 16);
	struct xs_session s;
	char pid[32];
	int status;
	pid_t child;

	mkdir(CG, 0755);
	if (access(CG "/cgroup.controllers", F_OK))
		mount("none", CG, "cgroup2", 0, NULL);
	if (write_file(CG "/cgroup.subtree_control", "+memory"))
		SKIP(return, "no cgroup2 memory controller in this kernel");
	ASSERT_EQ(0, mkdir(cg, 0755) && errno != EEXIST ? -errno : 0);

	child = fork();
	if (child == 0) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_file(CG "/xrayfdr-test/cgroup.procs", pid) ||
		    memcg_current(cg, &before) || xs_open(&s) ||
		    xs_configure(&s, 65536, 16, 0) || memcg_current(cg, &after))
			_exit(2);
		fprintf(stderr,
			"# memory.current %llu -> %llu for %llu bytes\n",
			(unsigned long long)before, (unsigned long long)after,
			(unsigned long long)one);
		/* less what per-CPU charge batching may not show yet */
		_exit(after - before >= one - 512 * 1024 ? 0 : 1);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	rmdir(cg);
}

/* Start/stop as fast as it goes on its own session, @arg times. */
static int storm(void *arg, int fd)
{
	long i, n = *(long *)arg;
	struct xs_session s;

	CHILD_CHECK(xs_open(&s) == 0);
	CHILD_CHECK(xs_configure(&s, 4096, 2, 0) == 0);
	CHILD_CHECK(write(fd, "go\n", 3) == 3);
	for (i = 0; i < n; i++) {
		CHILD_CHECK(xs_ioctl(&s, XRAY_FDR_IOC_START, 0) == 0);
		CHILD_CHECK(xs_ioctl(&s, XRAY_FDR_IOC_STOP, 0) == 0);
	}
	xs_close(&s);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * open() and close() of @path, @n times; latencies in @ns, sorted.  Timed
 * for /dev/null too, as a control: what the guest's scheduler adds under
 * load is not the module's doing.
 */
static int time_opens(const char *path, uint64_t *ns, int n)
{
	uint64_t t;
	int i, fd;

	for (i = 0; i < n; i++) {
		t = xs_now_ns();
		fd = open(path, O_RDWR);
		if (fd < 0)
			return -errno;
		ns[i] = xs_now_ns() - t;
		close(fd);
	}
	qsort(ns, n, sizeof(*ns), cmp_u64);
	return 0;
}

/*
 * Four unprivileged processes storm start/stop on their own sessions;
 * root's open(), ioctl, netlink and sysfs calls all complete meanwhile.
 * The open() latency, quiet and under the storm, is reported (not
 * asserted: it measures the machine as much as the module).
 */
TEST_F(users, others_are_served_during_a_start_stop_storm)
{
	enum { STORMERS = 4, OPENS = 200 };
	struct xray_fdr_info info = { .size = sizeof(info) };
	static uint64_t quiet[OPENS], busy[OPENS], null[OPENS];
	long rounds = 200;
	struct ctl_status st;
	pid_t pid[STORMERS];
	int i, rd[STORMERS];
	char line[16];
	char load[64] = "?";
	uint64_t v;

	xs_read_line("/proc/loadavg", load, sizeof(load));
	ASSERT_EQ(0, time_opens(XS_DEVICE, quiet, OPENS));
	for (i = 0; i < STORMERS; i++) {
		pid[i] = spawn_as(NOBODY, storm, &rounds, &rd[i]);
		ASSERT_LT(0, pid[i]);
	}
	for (i = 0; i < STORMERS; i++) {
		read_report(rd[i], line, sizeof(line));
		EXPECT_STREQ("go", line);
	}
	ASSERT_EQ(0, time_opens(XS_DEVICE, busy, OPENS));
	ASSERT_EQ(0, time_opens("/dev/null", null, OPENS));
	/* the rest of what other users do, once each, during the storm */
	EXPECT_EQ(0, ioctl(self->probe.fd, XRAY_FDR_IOC_INFO, &info));
	EXPECT_EQ(0, ctl_get_status(&self->nl, &st));
	EXPECT_EQ(0, xs_sysfs_u64("sessions", &v));
	for (i = 0; i < STORMERS; i++) {
		EXPECT_EQ(0, child_status(pid[i]));
		close(rd[i]);
	}
	ksft_print_msg(
		"open() latency, quiet: median %llu us, max %llu us; during a start/stop storm of %d users: median %llu us, max %llu us (/dev/null meanwhile: median %llu us, max %llu us; %d opens each; load %s)\n",
		(unsigned long long)quiet[OPENS / 2] / 1000,
		(unsigned long long)quiet[OPENS - 1] / 1000, STORMERS,
		(unsigned long long)busy[OPENS / 2] / 1000,
		(unsigned long long)busy[OPENS - 1] / 1000,
		(unsigned long long)null[OPENS / 2] / 1000,
		(unsigned long long)null[OPENS - 1] / 1000, OPENS, load);
}

TEST_HARNESS_MAIN
