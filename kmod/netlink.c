// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generic netlink family "xrayfdr" (Documentation/netlink/specs/
 * xrayfdr.yaml): status, configuration and session control for
 * xrayfdr-ctl.  Each command has its own policy and is validated strictly;
 * acting on another user's session, and config-set, need CAP_SYS_ADMIN.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/net_namespace.h>

#include "xfdr.h"

enum xfdr_nl_mcgrp {
	XFDR_MCGRP_MONITOR,
};

static const struct nla_policy
	xfdr_status_get_nl_policy[XRAY_FDR_A_STATUS_PAD + 1] = {
		[XRAY_FDR_A_STATUS_PAD] = { .type = NLA_REJECT },
	};

static const struct nla_policy
	xfdr_session_get_nl_policy[XRAY_FDR_A_SESSION_ID + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	};

/* Not const: 6.1's NLA_POLICY_FULL_RANGE() takes a plain pointer. */
static struct netlink_range_validation xfdr_session_kb_range = {
	.min = 64,
	.max = 16777216,
};

static struct netlink_range_validation xfdr_total_kb_range = {
	.min = 64,
	.max = 67108864,
};

static struct netlink_range_validation xfdr_user_kb_range = {
	.min = 64,
	.max = 67108864,
};

static struct netlink_range_validation xfdr_reserve_kb_range = {
	.max = 67108864,
};

static const struct nla_policy
	xfdr_config_set_nl_policy[XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE + 1] = {
		[XRAY_FDR_A_CONFIG_MAX_SESSION_KB] =
			NLA_POLICY_FULL_RANGE(NLA_U32, &xfdr_session_kb_range),
		[XRAY_FDR_A_CONFIG_MAX_TOTAL_KB] =
			NLA_POLICY_FULL_RANGE(NLA_U32, &xfdr_total_kb_range),
		[XRAY_FDR_A_CONFIG_MAX_SESSIONS] =
			NLA_POLICY_RANGE(NLA_U32, 1, 4096),
		[XRAY_FDR_A_CONFIG_MAX_RETAINED] =
			NLA_POLICY_MAX(NLA_U32, 1024),
		[XRAY_FDR_A_CONFIG_SCHED_RECORDS] = NLA_POLICY_MAX(NLA_U8, 1),
		[XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS] =
			NLA_POLICY_RANGE(NLA_U32, 1, 4096),
		[XRAY_FDR_A_CONFIG_MAX_USER_KB] =
			NLA_POLICY_FULL_RANGE(NLA_U32, &xfdr_user_kb_range),
		[XRAY_FDR_A_CONFIG_MAX_USER_RETAINED] =
			NLA_POLICY_MAX(NLA_U32, 1024),
		[XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS] =
			NLA_POLICY_MAX(NLA_U32, 4096),
		[XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB] =
			NLA_POLICY_FULL_RANGE(NLA_U32, &xfdr_reserve_kb_range),
		[XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED] =
			NLA_POLICY_MAX(NLA_U32, 1024),
		[XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE] = { .type = NLA_U32 },
	};

/* The u32 limits: config-set writes them, status reports them. */
static const struct {
	int attr;
	u32 *value;
} xfdr_nl_limits[] = {
	{ XRAY_FDR_A_CONFIG_MAX_SESSION_KB, &xfdr_config.max_session_kb },
	{ XRAY_FDR_A_CONFIG_MAX_TOTAL_KB, &xfdr_config.max_total_kb },
	{ XRAY_FDR_A_CONFIG_MAX_SESSIONS, &xfdr_config.max_sessions },
	{ XRAY_FDR_A_CONFIG_MAX_RETAINED, &xfdr_config.max_retained },
	{ XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS, &xfdr_config.max_user_sessions },
	{ XRAY_FDR_A_CONFIG_MAX_USER_KB, &xfdr_config.max_user_kb },
	{ XRAY_FDR_A_CONFIG_MAX_USER_RETAINED, &xfdr_config.max_user_retained },
	{ XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS,
	  &xfdr_config.admin_reserve_sessions },
	{ XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB, &xfdr_config.admin_reserve_kb },
	{ XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED,
	  &xfdr_config.admin_reserve_retained },
	{ XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE, &xfdr_config.retained_max_age },
};

static const struct nla_policy
	xfdr_session_start_nl_policy[XRAY_FDR_A_SESSION_ID + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	};

static const struct nla_policy
	xfdr_session_stop_nl_policy[XRAY_FDR_A_SESSION_ID + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	};

static const struct nla_policy
	xfdr_session_freeze_nl_policy[XRAY_FDR_A_SESSION_ID + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	};

static const struct nla_policy
	xfdr_session_keep_nl_policy[XRAY_FDR_A_SESSION_KEEP + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
		[XRAY_FDR_A_SESSION_KEEP] = NLA_POLICY_MAX(NLA_U8, 1),
	};

static const struct nla_policy
	xfdr_session_drop_nl_policy[XRAY_FDR_A_SESSION_ID + 1] = {
		[XRAY_FDR_A_SESSION_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	};

static struct genl_family xfdr_family;

static int xfdr_nl_put_config(struct sk_buff *msg)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start(msg, XRAY_FDR_A_STATUS_CONFIG);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(xfdr_nl_limits); i++) {
		if (nla_put_u32(msg, xfdr_nl_limits[i].attr,
				*xfdr_nl_limits[i].value))
			goto err_cancel;
	}
	if (nla_put_u8(msg, XRAY_FDR_A_CONFIG_SCHED_RECORDS,
		       xfdr_config.sched_records))
		goto err_cancel;
	nla_nest_end(msg, nest);
	return 0;

err_cancel:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

/* Every user's use for an admin, else the caller's own; xfdr_lock held. */
static int xfdr_nl_put_users(struct sk_buff *msg, bool admin)
{
	struct user_namespace *ns = current_user_ns();
	struct xfdr_user *u;
	struct nlattr *nest;

	list_for_each_entry(u, &xfdr_users, node) {
		if (!admin && !uid_eq(u->uid, current_euid()))
			continue;
		nest = nla_nest_start(msg, XRAY_FDR_A_STATUS_USER);
		if (!nest)
			return -EMSGSIZE;
		if (nla_put_u32(msg, XRAY_FDR_A_USER_UID,
				from_kuid_munged(ns, u->uid)) ||
		    nla_put_u32(msg, XRAY_FDR_A_USER_SESSIONS, u->sessions) ||
		    nla_put_u32(msg, XRAY_FDR_A_USER_RETAINED, u->kept) ||
		    nla_put_u64_64bit(msg, XRAY_FDR_A_USER_BYTES, u->bytes,
				      XRAY_FDR_A_USER_PAD)) {
			nla_nest_cancel(msg, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(msg, nest);
	}
	return 0;
}

static int xfdr_nl_put_status(struct sk_buff *msg, bool admin)
{
	struct xfdr_counts c;
	int err = -EMSGSIZE;

	xfdr_stats_counts(&c);
	mutex_lock(&xfdr_lock);
	if (nla_put_u32(msg, XRAY_FDR_A_STATUS_ABI_VERSION,
			XRAY_FDR_ABI_VERSION) ||
	    nla_put_u32(msg, XRAY_FDR_A_STATUS_NR_CPUS, nr_cpu_ids) ||
	    nla_put_u32(msg, XRAY_FDR_A_STATUS_SESSIONS,
			xfdr_totals.sessions) ||
	    nla_put_u32(msg, XRAY_FDR_A_STATUS_SESSIONS_RETAINED,
			xfdr_totals.retained) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_SWITCH_RECORDS,
			      c.switch_records, XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_MIGRATION_RECORDS,
			      c.migration_records, XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_RECORDS_LOST,
			      c.records_lost, XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_BYTES_ALLOCATED,
			      xfdr_totals.bytes_allocated,
			      XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_BYTES_MAPPED,
			      c.bytes_mapped, XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_TSC_KHZ, xfdr_tsc_khz(),
			      XRAY_FDR_A_STATUS_PAD) ||
	    nla_put_u32(msg, XRAY_FDR_A_STATUS_TSC_FLAGS, xfdr_tsc_flags()) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_STATUS_RETAINED_EXPIRED,
			      xfdr_totals.retained_expired,
			      XRAY_FDR_A_STATUS_PAD))
		goto out_unlock;
	err = xfdr_nl_put_config(msg) ?: xfdr_nl_put_users(msg, admin);
out_unlock:
	mutex_unlock(&xfdr_lock);
	return err;
}

/*
 * The attributes describing @s, ids as @pid_ns and @user_ns see them;
 * xfdr_lock held.
 */
static int xfdr_nl_put_session(struct sk_buff *msg, struct xfdr_session *s,
			       struct pid_namespace *pid_ns,
			       struct user_namespace *user_ns)
{
	struct xfdr_counts c;

	xfdr_session_counts(s, &c);
	if (nla_put_u32(msg, XRAY_FDR_A_SESSION_ID, s->id) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_OWNER_PID,
			pid_nr_ns(s->owner, pid_ns)) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_OWNER_UID,
			from_kuid_munged(user_ns, s->owner_uid)) ||
	    nla_put_string(msg, XRAY_FDR_A_SESSION_COMM, s->comm) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_STATE, s->state) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_GEOM_FLAGS, s->geom_flags) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_SUBBUF_SIZE, s->subbuf_size) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_SUBBUF_COUNT,
			s->subbuf_count) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_NR_CPUS, nr_cpu_ids) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_SESSION_BYTES, s->bytes,
			      XRAY_FDR_A_SESSION_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_SESSION_SWITCH_RECORDS,
			      c.switch_records, XRAY_FDR_A_SESSION_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_SESSION_MIGRATION_RECORDS,
			      c.migration_records, XRAY_FDR_A_SESSION_PAD) ||
	    nla_put_u64_64bit(msg, XRAY_FDR_A_SESSION_RECORDS_LOST,
			      c.records_lost, XRAY_FDR_A_SESSION_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * A page holds the status and ~80 users; with more (max_sessions can be
 * 4096, one user each) the reply is built again in a larger buffer.
 */
#define XFDR_NL_STATUS_MAX_SIZE (4096 * 64 + NLMSG_GOODSIZE)

static int xfdr_nl_status_get(struct sk_buff *skb, struct genl_info *info)
{
	bool admin = netlink_capable(skb, CAP_SYS_ADMIN);
	size_t size = NLMSG_GOODSIZE;
	struct sk_buff *msg;
	void *hdr;
	int err;

again:
	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &xfdr_family, 0,
				XRAY_FDR_CMD_STATUS_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}
	err = xfdr_nl_put_status(msg, admin);
	if (err == -EMSGSIZE && size < XFDR_NL_STATUS_MAX_SIZE) {
		nlmsg_free(msg);
		size = min_t(size_t, size * 4, XFDR_NL_STATUS_MAX_SIZE);
		goto again;
	}
	if (err)
		goto err_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

/* The session a request names, with a reference, if the caller may act. */
static struct xfdr_session *xfdr_nl_session(struct sk_buff *skb,
					    struct genl_info *info)
{
	struct nlattr *attr = info->attrs[XRAY_FDR_A_SESSION_ID];
	struct xfdr_session *s;

	if (GENL_REQ_ATTR_CHECK(info, XRAY_FDR_A_SESSION_ID))
		return ERR_PTR(-EINVAL);
	s = xfdr_session_find(nla_get_u32(attr));
	if (!s) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such session");
		return ERR_PTR(-ENOENT);
	}
	if (!xfdr_session_may_control(s, skb)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "needs CAP_SYS_ADMIN");
		xfdr_session_put(s);
		return ERR_PTR(-EPERM);
	}
	return s;
}

static int xfdr_nl_session_get(struct sk_buff *skb, struct genl_info *info)
{
	struct xfdr_session *s;
	struct sk_buff *msg;
	void *hdr;
	int err;

	s = xfdr_nl_session(skb, info);
	if (IS_ERR(s))
		return PTR_ERR(s);
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out_put;
	}
	hdr = genlmsg_put_reply(msg, info, &xfdr_family, 0,
				XRAY_FDR_CMD_SESSION_GET);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}
	mutex_lock(&xfdr_lock);
	err = xfdr_nl_put_session(msg, s, task_active_pid_ns(current),
				  current_user_ns());
	mutex_unlock(&xfdr_lock);
	if (err)
		goto err_free;
	genlmsg_end(msg, hdr);
	err = genlmsg_reply(msg, info);
	goto out_put;

err_free:
	nlmsg_free(msg);
out_put:
	xfdr_session_put(s);
	return err;
}

/* cb->args[0]: how many visible sessions earlier parts already sent. */
static int xfdr_nl_session_dump(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	bool admin = netlink_capable(cb->skb, CAP_SYS_ADMIN);
	long skip = cb->args[0], sent = 0;
	struct xfdr_session *s;
	void *hdr;

	mutex_lock(&xfdr_lock);
	list_for_each_entry(s, &xfdr_sessions, node) {
		if (!xfdr_session_listed(s) ||
		    (!admin && !uid_eq(current_euid(), s->owner_uid)))
			continue;
		if (sent < skip) {
			sent++;
			continue;
		}
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &xfdr_family, NLM_F_MULTI,
				  XRAY_FDR_CMD_SESSION_GET);
		if (!hdr)
			break;
		if (xfdr_nl_put_session(skb, s, task_active_pid_ns(current),
					current_user_ns())) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		sent++;
	}
	mutex_unlock(&xfdr_lock);
	cb->args[0] = sent;
	return skb->len;
}

static int xfdr_nl_config_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	unsigned int i;

	/* GENL_ADMIN_PERM checked CAP_NET_ADMIN; limits need more. */
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "config-set needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	mutex_lock(&xfdr_lock);
	for (i = 0; i < ARRAY_SIZE(xfdr_nl_limits); i++) {
		if (a[xfdr_nl_limits[i].attr])
			*xfdr_nl_limits[i].value =
				nla_get_u32(a[xfdr_nl_limits[i].attr]);
	}
	if (a[XRAY_FDR_A_CONFIG_SCHED_RECORDS])
		WRITE_ONCE(xfdr_config.sched_records,
			   nla_get_u8(a[XRAY_FDR_A_CONFIG_SCHED_RECORDS]));
	mutex_unlock(&xfdr_lock);
	/* a shorter age frees what it makes due before this returns */
	if (a[XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE])
		xfdr_sessions_expire();
	return 0;
}

/*
 * start, stop, freeze, keep and drop: a session, then one action on it.
 * info->attrs has room for this command's policy only: read
 * XRAY_FDR_A_SESSION_KEEP (beyond the other commands' maxattr) for
 * session-keep alone.
 */
static int xfdr_nl_session_act(struct sk_buff *skb, struct genl_info *info)
{
	u8 cmd = info->genlhdr->cmd;
	struct xfdr_session *s;
	bool keep = false;
	int err;

	if (cmd == XRAY_FDR_CMD_SESSION_KEEP) {
		if (GENL_REQ_ATTR_CHECK(info, XRAY_FDR_A_SESSION_KEEP))
			return -EINVAL;
		keep = nla_get_u8(info->attrs[XRAY_FDR_A_SESSION_KEEP]);
	}
	s = xfdr_nl_session(skb, info);
	if (IS_ERR(s))
		return PTR_ERR(s);
	if (!s->writable) {
		NL_SET_ERR_MSG(info->extack, "session was opened read-only");
		err = -EBADF;
		goto out_put;
	}
	switch (cmd) {
	case XRAY_FDR_CMD_SESSION_START:
		err = xfdr_session_start(s);
		break;
	case XRAY_FDR_CMD_SESSION_STOP:
		err = xfdr_session_stop(s);
		break;
	case XRAY_FDR_CMD_SESSION_FREEZE:
		err = xfdr_session_freeze(s);
		break;
	case XRAY_FDR_CMD_SESSION_KEEP:
		err = xfdr_session_keep(s, keep);
		break;
	default:
		err = xfdr_session_drop(s);
		break;
	}
out_put:
	xfdr_session_put(s);
	return err;
}

static const struct genl_ops xfdr_nl_ops[] = {
	{
		.cmd = XRAY_FDR_CMD_STATUS_GET,
		.doit = xfdr_nl_status_get,
		.policy = xfdr_status_get_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_status_get_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_GET,
		.doit = xfdr_nl_session_get,
		.dumpit = xfdr_nl_session_dump,
		.policy = xfdr_session_get_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_get_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_CONFIG_SET,
		.doit = xfdr_nl_config_set,
		.policy = xfdr_config_set_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_config_set_nl_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_START,
		.doit = xfdr_nl_session_act,
		.policy = xfdr_session_start_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_start_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_STOP,
		.doit = xfdr_nl_session_act,
		.policy = xfdr_session_stop_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_stop_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_FREEZE,
		.doit = xfdr_nl_session_act,
		.policy = xfdr_session_freeze_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_freeze_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_KEEP,
		.doit = xfdr_nl_session_act,
		.policy = xfdr_session_keep_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_keep_nl_policy) - 1,
	},
	{
		.cmd = XRAY_FDR_CMD_SESSION_DROP,
		.doit = xfdr_nl_session_act,
		.policy = xfdr_session_drop_nl_policy,
		.maxattr = ARRAY_SIZE(xfdr_session_drop_nl_policy) - 1,
	},
};

/* Notifications name other users' processes: admins only. */
static const struct genl_multicast_group xfdr_nl_mcgrps[] = {
	[XFDR_MCGRP_MONITOR] = {
		.name = XRAY_FDR_GENL_MCGRP_MONITOR,
		.flags = GENL_MCAST_CAP_SYS_ADMIN,
	},
};

static struct genl_family xfdr_family __ro_after_init = {
	.name = XRAY_FDR_GENL_NAME,
	.version = XRAY_FDR_GENL_VERSION,
	.module = THIS_MODULE,
	.parallel_ops = true,
	.ops = xfdr_nl_ops,
	.n_ops = ARRAY_SIZE(xfdr_nl_ops),
	.mcgrps = xfdr_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(xfdr_nl_mcgrps),
};

static bool xfdr_nl_registered;

/**
 * xfdr_netlink_notify() - tell the monitor group that a session changed
 * @s: the session; xfdr_lock held
 * @event: what happened
 */
void xfdr_netlink_notify(struct xfdr_session *s, enum xray_fdr_event event)
{
	struct sk_buff *msg;
	void *hdr;

	lockdep_assert_held(&xfdr_lock);
	if (!xfdr_nl_registered ||
	    !genl_has_listeners(&xfdr_family, &init_net, XFDR_MCGRP_MONITOR))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &xfdr_family, 0, XRAY_FDR_CMD_SESSION_NTF);
	if (!hdr)
		goto err_free;
	if (xfdr_nl_put_session(msg, s, &init_pid_ns, &init_user_ns) ||
	    nla_put_u32(msg, XRAY_FDR_A_SESSION_EVENT, event))
		goto err_free;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&xfdr_family, msg, 0, XFDR_MCGRP_MONITOR, GFP_KERNEL);
	return;

err_free:
	nlmsg_free(msg);
}

int xfdr_netlink_init(void)
{
	int err;

	err = genl_register_family(&xfdr_family);
	if (err)
		return err;
	mutex_lock(&xfdr_lock);
	xfdr_nl_registered = true;
	mutex_unlock(&xfdr_lock);
	return 0;
}

void xfdr_netlink_exit(void)
{
	mutex_lock(&xfdr_lock);
	xfdr_nl_registered = false;
	mutex_unlock(&xfdr_lock);
	genl_unregister_family(&xfdr_family);
}
