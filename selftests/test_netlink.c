// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic netlink family: every command with good and bad attributes
 * (missing, wrong type, out of range, unknown), what an unprivileged user
 * may do, the global limits, and notifications.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "kselftest_harness.h"
#include "xrayfdr_test.h"

#define NOBODY 65534

FIXTURE(nl)
{
	struct ctl_nl nl;
	struct ctl_config saved;
	struct xs_session s;
};

/* Ids of the sessions a dump shows, as a bit set of the first 4096. */
struct dump {
	int count;
	uint8_t seen[4096 / 8];
};

static int dump_reply(void *ctx, struct nlattr **attrs)
{
	struct dump *d = ctx;
	struct ctl_session s;

	if (ctl_decode_session(attrs, &s))
		return -1;
	d->count++;
	if (s.id < 4096)
		d->seen[s.id / 8] |= 1 << (s.id % 8);
	return 0;
}

static int dump_sessions(struct ctl_nl *nl, struct dump *d)
{
	memset(d, 0, sizeof(*d));
	return ctl_nl_call(nl,
			   ctl_nl_msg(nl, XRAY_FDR_CMD_SESSION_GET, NLM_F_DUMP),
			   XRAY_FDR_A_SESSION_MAX, dump_reply, d);
}

static bool dumped(const struct dump *d, uint32_t id)
{
	return id < 4096 && (d->seen[id / 8] & (1 << (id % 8)));
}

/* Command @cmd with one attribute @type of @len bytes (none if len < 0). */
static int request(struct ctl_nl *nl, int cmd, int type, const void *data,
		   int len)
{
	struct nl_msg *msg = ctl_nl_msg(nl, cmd, 0);

	if (len >= 0)
		nla_put(msg, type, len, data);
	return ctl_nl_call(nl, msg, 0, NULL, NULL);
}

static int set_config(struct ctl_nl *nl, const struct ctl_config *c)
{
	struct nl_msg *msg = ctl_nl_msg(nl, XRAY_FDR_CMD_CONFIG_SET, 0);

	nla_put_u32(msg, XRAY_FDR_A_CONFIG_MAX_SESSION_KB, c->max_session_kb);
	nla_put_u32(msg, XRAY_FDR_A_CONFIG_MAX_TOTAL_KB, c->max_total_kb);
	nla_put_u32(msg, XRAY_FDR_A_CONFIG_MAX_SESSIONS, c->max_sessions);
	nla_put_u32(msg, XRAY_FDR_A_CONFIG_MAX_RETAINED, c->max_retained);
	nla_put_u8(msg, XRAY_FDR_A_CONFIG_SCHED_RECORDS, c->sched_records);
	return ctl_nl_call(nl, msg, 0, NULL, NULL);
}

FIXTURE_SETUP(nl)
{
	struct ctl_status st;

	ASSERT_EQ(0, ctl_nl_open(&self->nl));
	ASSERT_EQ(0, ctl_get_status(&self->nl, &st));
	self->saved = st.config;
	ASSERT_EQ(0, xs_setup(&self->s, 4096, 4, 0));
}

FIXTURE_TEARDOWN(nl)
{
	/* whatever a test changed, the next one starts from the defaults */
	EXPECT_EQ(0, set_config(&self->nl, &self->saved));
	xs_close(&self->s);
	ctl_nl_close(&self->nl);
}

TEST_F(nl, status_get_matches_sysfs)
{
	struct ctl_status st;

	ASSERT_EQ(0, ctl_get_status(&self->nl, &st));
	EXPECT_EQ(XRAY_FDR_ABI_VERSION, st.abi_version);
	EXPECT_EQ(self->s.info.nr_cpus, st.nr_cpus);
	EXPECT_EQ(xs_sysfs("sessions"), st.sessions);
	EXPECT_EQ(xs_sysfs("sessions_retained"), st.sessions_retained);
	EXPECT_EQ(xs_sysfs("bytes_allocated"), st.bytes_allocated);
	EXPECT_EQ(xs_sysfs("bytes_mapped"), st.bytes_mapped);
	EXPECT_EQ(xs_sysfs("tsc_khz"), st.tsc_khz);
	EXPECT_EQ(xs_sysfs("constant_tsc"),
		  !!(st.tsc_flags & XRAY_FDR_TSC_CONSTANT));
	EXPECT_EQ(xs_sysfs("tsc_reliable"),
		  !!(st.tsc_flags & XRAY_FDR_TSC_RELIABLE));
	EXPECT_LE(st.switch_records, xs_sysfs("switch_records"));
	/* the defaults of the module parameters */
	EXPECT_EQ(65536, st.config.max_session_kb);
	EXPECT_EQ(262144, st.config.max_total_kb);
	EXPECT_EQ(64, st.config.max_sessions);
	EXPECT_EQ(8, st.config.max_retained);
	EXPECT_EQ(1, st.config.sched_records);
}

TEST_F(nl, status_get_takes_no_attributes)
{
	uint32_t v = 1;

	EXPECT_EQ(-EINVAL, request(&self->nl, XRAY_FDR_CMD_STATUS_GET,
				   XRAY_FDR_A_STATUS_PAD, &v, 4));
	EXPECT_EQ(-EINVAL, request(&self->nl, XRAY_FDR_CMD_STATUS_GET,
				   XRAY_FDR_A_STATUS_ABI_VERSION, &v, 4));
}

TEST_F(nl, session_get_describes_the_session)
{
	struct ctl_session s;
	uint32_t id = self->s.info.session_id;

	ASSERT_EQ(0, ctl_get_session(&self->nl, id, &s));
	EXPECT_EQ(id, s.id);
	EXPECT_EQ((uint32_t)getpid(), s.owner_pid);
	EXPECT_EQ(0, s.owner_uid);
	EXPECT_STREQ("test_netlink", s.comm);
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED, s.state);
	EXPECT_EQ(4096, s.subbuf_size);
	EXPECT_EQ(4, s.subbuf_count);
	EXPECT_EQ(self->s.info.nr_cpus, s.nr_cpus);
	EXPECT_LT(self->s.info.nr_cpus * 4 * 4096, s.bytes);
	EXPECT_EQ(0, s.switch_records);
}

TEST_F(nl, session_get_dump_lists_own_sessions)
{
	struct xs_session other;
	struct dump d;

	ASSERT_EQ(0, xs_open(&other));
	ASSERT_EQ(0, dump_sessions(&self->nl, &d));
	EXPECT_TRUE(dumped(&d, self->s.info.session_id));
	EXPECT_TRUE(dumped(&d, other.info.session_id));
	EXPECT_LE(2, d.count);
	xs_close(&other);
	ASSERT_EQ(0, dump_sessions(&self->nl, &d));
	EXPECT_FALSE(dumped(&d, other.info.session_id));
}

TEST_F(nl, session_commands_reject_bad_attributes)
{
	static const int cmds[] = {
		XRAY_FDR_CMD_SESSION_GET,  XRAY_FDR_CMD_SESSION_START,
		XRAY_FDR_CMD_SESSION_STOP, XRAY_FDR_CMD_SESSION_FREEZE,
		XRAY_FDR_CMD_SESSION_KEEP, XRAY_FDR_CMD_SESSION_DROP,
	};
	uint64_t wide = self->s.info.session_id;
	uint16_t narrow = self->s.info.session_id;
	uint32_t zero = 0, none = 0x7fffffff;
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		TH_LOG("command %d", cmds[i]);
		/* missing */
		EXPECT_EQ(-EINVAL, request(&self->nl, cmds[i], 0, NULL, -1));
		/* wrong type: 2 or 8 bytes for a u32 */
		EXPECT_EQ(-EINVAL, request(&self->nl, cmds[i],
					   XRAY_FDR_A_SESSION_ID, &narrow, 2));
		EXPECT_EQ(-EINVAL, request(&self->nl, cmds[i],
					   XRAY_FDR_A_SESSION_ID, &wide, 8));
		/* out of range: ids start at 1 */
		EXPECT_EQ(-ERANGE, request(&self->nl, cmds[i],
					   XRAY_FDR_A_SESSION_ID, &zero, 4));
		/* unknown attribute */
		EXPECT_EQ(-EINVAL, request(&self->nl, cmds[i], 60, &zero, 4));
		/* a session that does not exist */
		if (cmds[i] != XRAY_FDR_CMD_SESSION_KEEP) {
			EXPECT_EQ(-ENOENT,
				  request(&self->nl, cmds[i],
					  XRAY_FDR_A_SESSION_ID, &none, 4));
		}
	}
}

/*
 * Each command's policy, as the attribute audit sees it: what a request may
 * carry.  Attribute numbers of the three enums overlap, so every number is
 * tried against every command.
 */
struct cmd_policy {
	int cmd;
	const char *name;
	uint32_t accepts; /* bit n: attribute n */
};

static const struct cmd_policy policies[] = {
	{ XRAY_FDR_CMD_STATUS_GET, "status-get", 0 },
	{ XRAY_FDR_CMD_SESSION_GET, "session-get",
	  1u << XRAY_FDR_A_SESSION_ID },
	{ XRAY_FDR_CMD_CONFIG_SET, "config-set",
	  ((1u << (XRAY_FDR_A_CONFIG_MAX + 1)) - 1) & ~1u },
	{ XRAY_FDR_CMD_SESSION_START, "session-start",
	  1u << XRAY_FDR_A_SESSION_ID },
	{ XRAY_FDR_CMD_SESSION_STOP, "session-stop",
	  1u << XRAY_FDR_A_SESSION_ID },
	{ XRAY_FDR_CMD_SESSION_FREEZE, "session-freeze",
	  1u << XRAY_FDR_A_SESSION_ID },
	{ XRAY_FDR_CMD_SESSION_KEEP, "session-keep",
	  1u << XRAY_FDR_A_SESSION_ID | 1u << XRAY_FDR_A_SESSION_KEEP },
	{ XRAY_FDR_CMD_SESSION_DROP, "session-drop",
	  1u << XRAY_FDR_A_SESSION_ID },
};

/*
 * A handler must never look at an attribute its command's policy does not
 * have (the kernel sizes info->attrs by that policy): every command,
 * alone and with a valid session id, refuses each foreign attribute, and
 * nothing happens to the session.  Run under KASAN, this is also the test
 * that a handler reads within its own policy.
 */
TEST_F(nl, every_command_refuses_attributes_outside_its_policy)
{
	int max = XRAY_FDR_A_SESSION_MAX;
	uint32_t id = self->s.info.session_id, v = 1;
	struct nl_msg *msg;
	unsigned int i;
	int a, err;

	if (XRAY_FDR_A_STATUS_MAX > max)
		max = XRAY_FDR_A_STATUS_MAX;
	for (i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		const struct cmd_policy *p = &policies[i];
		bool session = p->accepts & (1u << XRAY_FDR_A_SESSION_ID) &&
			       p->cmd != XRAY_FDR_CMD_CONFIG_SET;

		for (a = 1; a <= max + 2; a++) {
			if (p->accepts & (1u << a))
				continue;
			msg = ctl_nl_msg(&self->nl, p->cmd, 0);
			ASSERT_NE(NULL, msg);
			if (session)
				nla_put_u32(msg, XRAY_FDR_A_SESSION_ID, id);
			if (p->cmd == XRAY_FDR_CMD_SESSION_KEEP)
				nla_put_u8(msg, XRAY_FDR_A_SESSION_KEEP, 1);
			nla_put(msg, a, sizeof(v), &v);
			err = ctl_nl_call(&self->nl, msg, 0, NULL, NULL);
			if (err != -EINVAL)
				TH_LOG("%s with attribute %d: %d", p->name, a,
				       err);
			EXPECT_EQ(-EINVAL, err);
			/* and alone, the request the KASAN report was about */
			err = request(&self->nl, p->cmd, a, &v, sizeof(v));
			EXPECT_EQ(-EINVAL, err);
		}
	}
	/* none of them acted */
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED, self->s.hdr->state);
	EXPECT_EQ(0, self->s.hdr->state & XRAY_FDR_STATE_KEEP);
}

/*
 * The requests of the out-of-bounds report: every session command with its
 * session id and nothing else is served (and, under KASAN, read within
 * bounds).
 */
TEST_F(nl, session_commands_with_only_an_id_are_served)
{
	uint32_t id = self->s.info.session_id;

	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_START,
					id, -1));
	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_STOP,
					id, -1));
	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_FREEZE,
					id, -1));
	/* drop is for retained sessions: this one is still open */
	EXPECT_EQ(-EBUSY,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_DROP, id,
				     -1));
	EXPECT_EQ(-EINVAL,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_KEEP, id,
				     -1));
	EXPECT_TRUE(self->s.hdr->state & XRAY_FDR_STATE_FROZEN);
}

TEST_F(nl, keep_checks_its_flag)
{
	uint32_t id = self->s.info.session_id;
	struct nl_msg *msg;
	uint32_t wide = 1;

	/* the flag missing, too wide, out of range */
	EXPECT_EQ(-EINVAL, request(&self->nl, XRAY_FDR_CMD_SESSION_KEEP,
				   XRAY_FDR_A_SESSION_ID, &id, 4));
	msg = ctl_nl_msg(&self->nl, XRAY_FDR_CMD_SESSION_KEEP, 0);
	nla_put_u32(msg, XRAY_FDR_A_SESSION_ID, id);
	nla_put_u32(msg, XRAY_FDR_A_SESSION_KEEP, wide);
	EXPECT_EQ(-EINVAL, ctl_nl_call(&self->nl, msg, 0, NULL, NULL));
	EXPECT_EQ(-ERANGE,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_KEEP, id,
				     2));
	EXPECT_FALSE(self->s.hdr->state & XRAY_FDR_STATE_KEEP);
	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_KEEP,
					id, 1));
	EXPECT_TRUE(self->s.hdr->state & XRAY_FDR_STATE_KEEP);
	EXPECT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_KEEP,
					id, 0));
	EXPECT_FALSE(self->s.hdr->state & XRAY_FDR_STATE_KEEP);
}

TEST_F(nl, start_stop_freeze_drive_the_session)
{
	uint32_t id = self->s.info.session_id;
	const struct xray_fdr_header *h = self->s.hdr;
	struct xs_session bare;

	ASSERT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_START,
					id, -1));
	EXPECT_TRUE(h->state & XRAY_FDR_STATE_ENABLED);
	/* one recording session per process */
	ASSERT_EQ(0, xs_setup(&bare, 4096, 2, 0));
	EXPECT_EQ(-EBUSY,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_START,
				     bare.info.session_id, -1));
	xs_close(&bare);
	ASSERT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_STOP,
					id, -1));
	EXPECT_FALSE(h->state & XRAY_FDR_STATE_ENABLED);
	ASSERT_EQ(0, ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_FREEZE,
					id, -1));
	EXPECT_TRUE(h->state & XRAY_FDR_STATE_FROZEN);
	/* a live session cannot be dropped */
	EXPECT_EQ(-EBUSY,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_DROP, id,
				     -1));
	/* a session without geometry cannot record */
	ASSERT_EQ(0, xs_open(&bare));
	EXPECT_EQ(-ENODATA,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_START,
				     bare.info.session_id, -1));
	EXPECT_EQ(-ENODATA,
		  ctl_nl_session_cmd(&self->nl, XRAY_FDR_CMD_SESSION_FREEZE,
				     bare.info.session_id, -1));
	xs_close(&bare);
}

TEST_F(nl, config_set_checks_every_limit)
{
	struct ctl_status st;
	uint32_t v;
	uint8_t b;

	v = 0;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_SESSIONS, &v, 4));
	v = 4097;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_SESSIONS, &v, 4));
	v = 63;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_SESSION_KB, &v, 4));
	v = 67108865;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_TOTAL_KB, &v, 4));
	v = 1025;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_RETAINED, &v, 4));
	b = 2;
	EXPECT_EQ(-ERANGE, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_SCHED_RECORDS, &b, 1));
	/* wrong types */
	EXPECT_EQ(-EINVAL, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_MAX_SESSIONS, &b, 1));
	v = 1;
	EXPECT_EQ(-EINVAL, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
				   XRAY_FDR_A_CONFIG_SCHED_RECORDS, &v, 4));
	EXPECT_EQ(-EINVAL,
		  request(&self->nl, XRAY_FDR_CMD_CONFIG_SET, 40, &v, 4));
	/* nothing changed */
	ASSERT_EQ(0, ctl_get_status(&self->nl, &st));
	EXPECT_EQ(0, memcmp(&st.config, &self->saved, sizeof(st.config)));
	/* good values stick */
	v = 100;
	EXPECT_EQ(0, request(&self->nl, XRAY_FDR_CMD_CONFIG_SET,
			     XRAY_FDR_A_CONFIG_MAX_SESSIONS, &v, 4));
	ASSERT_EQ(0, ctl_get_status(&self->nl, &st));
	EXPECT_EQ(100, st.config.max_sessions);
	EXPECT_EQ(self->saved.max_retained, st.config.max_retained);
}

TEST_F(nl, limits_are_enforced)
{
	struct ctl_config c = self->saved;
	struct xs_session a, b;
	uint64_t sessions =
		xs_sysfs("sessions") + xs_sysfs("sessions_retained");

	/* sessions: the fixture's is open already */
	c.max_sessions = sessions + 1;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	ASSERT_EQ(0, xs_open(&a));
	EXPECT_EQ(-EMFILE, xs_open(&b));
	xs_close(&a);
	c.max_sessions = self->saved.max_sessions;
	/* memory of one session: 2 CPUs * (4 KiB + 64 KiB) > 100 KiB */
	c.max_session_kb = 100;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	ASSERT_EQ(0, xs_open(&a));
	EXPECT_EQ(-EFBIG, xs_configure(&a, 4096, 16, 0));
	xs_close(&a);
	c.max_session_kb = self->saved.max_session_kb;
	/* memory of all sessions */
	c.max_total_kb = xs_sysfs("bytes_allocated") / 1024 + 64;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	ASSERT_EQ(0, xs_open(&a));
	EXPECT_EQ(-ENOSPC, xs_configure(&a, 65536, 4, 0));
	xs_close(&a);
	c.max_total_kb = self->saved.max_total_kb;
	/* sessions marked keep */
	c.max_retained = 0;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	EXPECT_EQ(-ENOSPC, xs_ioctl(&self->s, XRAY_FDR_IOC_KEEP, 1));
}

TEST_F(nl, sched_records_can_be_turned_off)
{
	struct ctl_config c = self->saved;
	struct xray_fdr_control *ctl = xs_control(&self->s, 0);
	int i;

	ASSERT_EQ(0, xs_pin_cpu(0));
	c.sched_records = 0;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	for (i = 0; i < 20; i++)
		usleep(1000);
	EXPECT_EQ(0, ctl->switch_records);
	c.sched_records = 1;
	ASSERT_EQ(0, set_config(&self->nl, &c));
	for (i = 0; i < 20; i++)
		usleep(1000);
	EXPECT_LE(20, ctl->switch_records);
}

/* Run @fn as uid/gid 65534 without capabilities; its exit status. */
static int as_nobody(int (*fn)(uint32_t id), uint32_t id)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		_exit(fn(id));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

#define CHILD_CHECK(cond)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "# as nobody: %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                             \
			return 1;                                             \
		}                                                             \
	} while (0)

static int nobody_checks(uint32_t root_id)
{
	struct xray_fdr_attach att = { .size = sizeof(att) };
	struct ctl_session cs;
	struct ctl_status st;
	struct xs_session own;
	struct ctl_nl nl;
	struct dump d;
	uint32_t v = 10;
	int fd;

	CHILD_CHECK(ctl_nl_open(&nl) == 0);
	/* reading the global status is allowed */
	CHILD_CHECK(ctl_get_status(&nl, &st) == 0);
	/* the limits are not */
	CHILD_CHECK(request(&nl, XRAY_FDR_CMD_CONFIG_SET,
			    XRAY_FDR_A_CONFIG_MAX_SESSIONS, &v, 4) == -EPERM);
	/* nor is root's session, for anything */
	CHILD_CHECK(ctl_get_session(&nl, root_id, &cs) == -EPERM);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_START, root_id,
				       -1) == -EPERM);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_STOP, root_id,
				       -1) == -EPERM);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_FREEZE,
				       root_id, -1) == -EPERM);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_KEEP, root_id,
				       1) == -EPERM);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_DROP, root_id,
				       -1) == -EPERM);
	CHILD_CHECK(dump_sessions(&nl, &d) == 0 && !dumped(&d, root_id));
	/* but the device is open to all, and a user's own session is theirs */
	CHILD_CHECK(xs_open(&own) == 0);
	CHILD_CHECK(xs_configure(&own, 4096, 2, 0) == 0);
	v = -xs_map(&own, true);
	if (v)
		fprintf(stderr, "# as nobody: xs_map: %s\n", strerror(v));
	CHILD_CHECK(v == 0);
	CHILD_CHECK(ctl_get_session(&nl, own.info.session_id, &cs) == 0);
	CHILD_CHECK(cs.owner_uid == NOBODY);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_START,
				       own.info.session_id, -1) == 0);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_KEEP,
				       own.info.session_id, 1) == 0);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_KEEP,
				       own.info.session_id, 0) == 0);
	CHILD_CHECK(ctl_nl_session_cmd(&nl, XRAY_FDR_CMD_SESSION_FREEZE,
				       own.info.session_id, -1) == 0);
	CHILD_CHECK(dump_sessions(&nl, &d) == 0 && d.count == 1 &&
		    dumped(&d, own.info.session_id));
	/* root's session cannot be attached either */
	fd = open(XS_DEVICE, O_RDWR);
	if (fd < 0)
		fprintf(stderr, "# as nobody: open: %s\n", strerror(errno));
	CHILD_CHECK(fd >= 0);
	att.session_id = root_id;
	v = ioctl(fd, XRAY_FDR_IOC_ATTACH, &att) < 0 ? errno : 0;
	if (v != EPERM)
		fprintf(stderr, "# as nobody: attach: %s\n", strerror(v));
	CHILD_CHECK(v == EPERM);
	/* but its own live session can: a snapshot of its own process */
	att.session_id = own.info.session_id;
	v = ioctl(fd, XRAY_FDR_IOC_ATTACH, &att) < 0 ? errno : 0;
	if (v)
		fprintf(stderr, "# as nobody: attach own: %s\n", strerror(v));
	CHILD_CHECK(v == 0);
	close(fd);
	xs_close(&own);
	ctl_nl_close(&nl);
	return 0;
}

TEST_F(nl, unprivileged_user_is_confined_to_own_sessions)
{
	EXPECT_EQ(0, as_nobody(nobody_checks, self->s.info.session_id));
	/* root's session was not touched */
	EXPECT_EQ(XRAY_FDR_STATE_CONFIGURED, self->s.hdr->state);
}

static int nobody_monitor(uint32_t id)
{
	struct nl_sock *sk = nl_socket_alloc();
	int grp;

	(void)id;
	CHILD_CHECK(sk && genl_connect(sk) == 0);
	grp = genl_ctrl_resolve_grp(sk, XRAY_FDR_GENL_NAME,
				    XRAY_FDR_GENL_MCGRP_MONITOR);
	CHILD_CHECK(grp > 0);
	/* notifications name other users' processes: admins only */
	CHILD_CHECK(nl_socket_add_membership(sk, grp) < 0);
	nl_socket_free(sk);
	return 0;
}

struct ntf {
	struct ctl_session s;
	int count;
};

static int ntf_reply(struct nl_msg *msg, void *p)
{
	struct nlattr *attrs[XRAY_FDR_A_SESSION_MAX + 1];
	struct ntf *n = p;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, attrs, XRAY_FDR_A_SESSION_MAX,
			  NULL) == 0 &&
	    ((struct genlmsghdr *)nlmsg_data(nlmsg_hdr(msg)))->cmd ==
		    XRAY_FDR_CMD_SESSION_NTF &&
	    ctl_decode_session(attrs, &n->s) == 0)
		n->count++;
	return NL_OK;
}

TEST_F(nl, monitor_group_announces_changes)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct pollfd pfd;
	struct ntf n = { 0 };
	int grp;

	ASSERT_NE(NULL, sk);
	ASSERT_EQ(0, genl_connect(sk));
	grp = genl_ctrl_resolve_grp(sk, XRAY_FDR_GENL_NAME,
				    XRAY_FDR_GENL_MCGRP_MONITOR);
	ASSERT_LT(0, grp);
	ASSERT_EQ(0, nl_socket_add_membership(sk, grp));
	nl_socket_disable_seq_check(sk);
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, ntf_reply, &n);

	ASSERT_EQ(0, xs_ioctl(&self->s, XRAY_FDR_IOC_START, 0));
	pfd = (struct pollfd){ .fd = nl_socket_get_fd(sk), .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 2000));
	nl_recvmsgs_default(sk);
	EXPECT_EQ(1, n.count);
	EXPECT_EQ(self->s.info.session_id, n.s.id);
	EXPECT_EQ(XRAY_FDR_EVENT_STARTED, n.s.event);
	EXPECT_EQ((uint32_t)getpid(), n.s.owner_pid);
	nl_socket_free(sk);

	EXPECT_EQ(0, as_nobody(nobody_monitor, 0));
}

TEST_HARNESS_MAIN
