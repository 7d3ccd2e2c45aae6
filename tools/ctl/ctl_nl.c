// SPDX-License-Identifier: GPL-2.0-only
/* Generic netlink to xray_fdr.ko: see ctl_nl.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "ctl_nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

int ctl_nl_open(struct ctl_nl *nl)
{
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		return -ENOMEM;
	err = genl_connect(nl->sk);
	if (err < 0) {
		err = -ECONNREFUSED;
		goto err_free;
	}
	/* ask for the kernel's error messages along with its errno */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	nl->family = genl_ctrl_resolve(nl->sk, XRAY_FDR_GENL_NAME);
	if (nl->family < 0) {
		err = -ENOENT;
		goto err_free;
	}
	return 0;

err_free:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
	return err;
}

void ctl_nl_close(struct ctl_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

struct nl_msg *ctl_nl_msg(const struct ctl_nl *nl, int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
				flags, cmd, XRAY_FDR_GENL_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/* A reply handler that also sees the message, for repeated attributes. */
typedef int (*ctl_msg_reply_fn)(void *ctx, struct nlmsghdr *nlh,
				struct nlattr **attrs);

struct ctl_call {
	struct ctl_nl *nl;
	int maxattr;
	ctl_nl_reply_fn fn;
	ctl_msg_reply_fn msg_fn;
	void *ctx;
	int err;
	bool done;
};

static int ctl_on_valid(struct nl_msg *msg, void *p)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct ctl_call *c = p;
	struct nlattr *attrs[64];

	if (!c->fn && !c->msg_fn)
		return NL_OK;
	memset(attrs, 0, sizeof(attrs));
	if (c->maxattr >= 64 ||
	    genlmsg_parse(nlh, 0, attrs, c->maxattr, NULL) < 0 ||
	    (c->fn ? c->fn(c->ctx, attrs) : c->msg_fn(c->ctx, nlh, attrs))) {
		c->err = -EBADMSG;
		return NL_SKIP;
	}
	return NL_OK;
}

/* The NLMSGERR_ATTR_MSG of an extended ack, if the kernel sent one. */
static void ctl_ext_ack(struct ctl_nl *nl, struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t skip = sizeof(*e);
	int len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		skip += e->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)nlh->nlmsg_len - NLMSG_HDRLEN - (int)skip;
	if (len <= 0 ||
	    nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)e + NLMSG_ALIGN(skip)), len,
		      NULL) < 0 ||
	    !tb[NLMSGERR_ATTR_MSG])
		return;
	nla_strlcpy(nl->errmsg, tb[NLMSGERR_ATTR_MSG], sizeof(nl->errmsg));
}

static int ctl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *p)
{
	struct ctl_call *c = p;

	(void)who;
	c->err = e->error;
	if (e->error)
		ctl_ext_ack(c->nl, e);
	c->done = true;
	return NL_STOP;
}

static int ctl_on_done(struct nl_msg *msg, void *p)
{
	struct ctl_call *c = p;

	(void)msg;
	c->done = true;
	return NL_STOP;
}

static int ctl_call(struct ctl_nl *nl, struct nl_msg *msg, int maxattr,
		    ctl_nl_reply_fn fn, ctl_msg_reply_fn msg_fn, void *ctx)
{
	struct ctl_call c = {
		.nl = nl,
		.maxattr = maxattr,
		.fn = fn,
		.msg_fn = msg_fn,
		.ctx = ctx,
	};
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err, decode_err = 0;

	nl->errmsg[0] = 0;
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, ctl_on_valid, &c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ctl_on_done, &c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, ctl_on_done, &c);
	nl_cb_err(cb, NL_CB_CUSTOM, ctl_on_error, &c);
	err = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	/* read until the ACK, the dump's end or an error arrives */
	while (err >= 0 && !c.done) {
		err = nl_recvmsgs(nl->sk, cb);
		if (c.err == -EBADMSG)
			decode_err = c.err;
	}
	nl_cb_put(cb);
	if (!c.done)
		return -EIO;
	return c.err ? c.err : decode_err;
}

int ctl_nl_call(struct ctl_nl *nl, struct nl_msg *msg, int maxattr,
		ctl_nl_reply_fn fn, void *ctx)
{
	return ctl_call(nl, msg, maxattr, fn, NULL, ctx);
}

/* A request naming session @id, with a keep attribute if @keep >= 0;
 * NULL when out of memory. */
static struct nl_msg *session_msg(struct ctl_nl *nl, int cmd, uint32_t id,
				  int keep)
{
	struct nl_msg *msg = ctl_nl_msg(nl, cmd, 0);

	if (msg && (nla_put_u32(msg, XRAY_FDR_A_SESSION_ID, id) < 0 ||
		    (keep >= 0 &&
		     nla_put_u8(msg, XRAY_FDR_A_SESSION_KEEP, keep) < 0))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

int ctl_nl_session_cmd(struct ctl_nl *nl, int cmd, uint32_t id, int keep)
{
	struct nl_msg *msg = session_msg(nl, cmd, id, keep);

	if (!msg)
		return -ENOMEM;
	return ctl_nl_call(nl, msg, XRAY_FDR_A_SESSION_MAX, NULL, NULL);
}

static int get_u8(struct nlattr **a, int type, uint8_t *v)
{
	if (!a[type] || nla_len(a[type]) != 1)
		return -EBADMSG;
	*v = nla_get_u8(a[type]);
	return 0;
}

static int get_u32(struct nlattr **a, int type, uint32_t *v)
{
	if (!a[type] || nla_len(a[type]) != 4)
		return -EBADMSG;
	*v = nla_get_u32(a[type]);
	return 0;
}

static int get_u64(struct nlattr **a, int type, uint64_t *v)
{
	if (!a[type] || nla_len(a[type]) != 8)
		return -EBADMSG;
	*v = nla_get_u64(a[type]);
	return 0;
}

static int ctl_decode_config(struct nlattr *nest, struct ctl_config *c)
{
	struct nlattr *a[XRAY_FDR_A_CONFIG_MAX + 1];

	if (!nest || nla_parse_nested(a, XRAY_FDR_A_CONFIG_MAX, nest, NULL))
		return -EBADMSG;
	if (get_u32(a, XRAY_FDR_A_CONFIG_MAX_SESSION_KB, &c->max_session_kb) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_TOTAL_KB, &c->max_total_kb) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_SESSIONS, &c->max_sessions) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_RETAINED, &c->max_retained) ||
	    get_u8(a, XRAY_FDR_A_CONFIG_SCHED_RECORDS, &c->sched_records) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_USER_SESSIONS,
		    &c->max_user_sessions) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_USER_KB, &c->max_user_kb) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_MAX_USER_RETAINED,
		    &c->max_user_retained) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_ADMIN_RESERVE_SESSIONS,
		    &c->admin_reserve_sessions) ||
	    get_u32(a, XRAY_FDR_A_CONFIG_ADMIN_RESERVE_KB,
		    &c->admin_reserve_kb))
		return -EBADMSG;
	/* (not in the modules before them: those answer without) */
	c->has_retained_limits =
		!get_u32(a, XRAY_FDR_A_CONFIG_ADMIN_RESERVE_RETAINED,
			 &c->admin_reserve_retained) &&
		!get_u32(a, XRAY_FDR_A_CONFIG_RETAINED_MAX_AGE,
			 &c->retained_max_age);
	return 0;
}

int ctl_decode_status(struct nlattr **a, struct ctl_status *st)
{
	memset(st, 0, sizeof(*st));
	if (get_u32(a, XRAY_FDR_A_STATUS_ABI_VERSION, &st->abi_version) ||
	    get_u32(a, XRAY_FDR_A_STATUS_NR_CPUS, &st->nr_cpus) ||
	    get_u32(a, XRAY_FDR_A_STATUS_SESSIONS, &st->sessions) ||
	    get_u32(a, XRAY_FDR_A_STATUS_SESSIONS_RETAINED,
		    &st->sessions_retained) ||
	    get_u64(a, XRAY_FDR_A_STATUS_SWITCH_RECORDS, &st->switch_records) ||
	    get_u64(a, XRAY_FDR_A_STATUS_MIGRATION_RECORDS,
		    &st->migration_records) ||
	    get_u64(a, XRAY_FDR_A_STATUS_RECORDS_LOST, &st->records_lost) ||
	    get_u64(a, XRAY_FDR_A_STATUS_BYTES_ALLOCATED,
		    &st->bytes_allocated) ||
	    get_u64(a, XRAY_FDR_A_STATUS_BYTES_MAPPED, &st->bytes_mapped) ||
	    get_u64(a, XRAY_FDR_A_STATUS_TSC_KHZ, &st->tsc_khz) ||
	    get_u32(a, XRAY_FDR_A_STATUS_TSC_FLAGS, &st->tsc_flags))
		return -EBADMSG;
	get_u64(a, XRAY_FDR_A_STATUS_RETAINED_EXPIRED, &st->retained_expired);
	return ctl_decode_config(a[XRAY_FDR_A_STATUS_CONFIG], &st->config);
}

static int ctl_decode_user(struct nlattr *nest, struct ctl_user *u)
{
	struct nlattr *a[XRAY_FDR_A_USER_MAX + 1];

	if (nla_parse_nested(a, XRAY_FDR_A_USER_MAX, nest, NULL) ||
	    get_u32(a, XRAY_FDR_A_USER_UID, &u->uid) ||
	    get_u32(a, XRAY_FDR_A_USER_SESSIONS, &u->sessions) ||
	    get_u32(a, XRAY_FDR_A_USER_RETAINED, &u->retained) ||
	    get_u64(a, XRAY_FDR_A_USER_BYTES, &u->bytes))
		return -EBADMSG;
	return 0;
}

int ctl_decode_users(struct nlattr *head, int len, struct ctl_status *st)
{
	struct nlattr *nla;
	struct ctl_user u;
	int rem;

	st->nr_users = 0;
	st->users_omitted = 0;
	/* nla_ok() checks each header and length against what is left */
	for (nla = head, rem = len; nla_ok(nla, rem);
	     nla = nla_next(nla, &rem)) {
		if (nla_type(nla) != XRAY_FDR_A_STATUS_USER)
			continue;
		/* those past the array too: a malformed one fails the reply */
		if (ctl_decode_user(nla, &u))
			return -EBADMSG;
		if (st->nr_users < CTL_MAX_USERS)
			st->users[st->nr_users++] = u;
		else
			st->users_omitted++;
	}
	return 0;
}

/* The scalars from the parsed table, the users from the whole stream. */
static int ctl_decode_status_msg(struct nlmsghdr *nlh, struct nlattr **attrs,
				 struct ctl_status *st)
{
	struct genlmsghdr *gnlh = nlmsg_data(nlh);

	if (ctl_decode_status(attrs, st))
		return -EBADMSG;
	return ctl_decode_users(genlmsg_attrdata(gnlh, 0),
				genlmsg_attrlen(gnlh, 0), st);
}

int ctl_decode_session(struct nlattr **a, struct ctl_session *s)
{
	struct nlattr *comm = a[XRAY_FDR_A_SESSION_COMM];

	memset(s, 0, sizeof(*s));
	if (get_u32(a, XRAY_FDR_A_SESSION_ID, &s->id) ||
	    get_u32(a, XRAY_FDR_A_SESSION_OWNER_PID, &s->owner_pid) ||
	    get_u32(a, XRAY_FDR_A_SESSION_OWNER_UID, &s->owner_uid) ||
	    get_u32(a, XRAY_FDR_A_SESSION_STATE, &s->state) ||
	    get_u32(a, XRAY_FDR_A_SESSION_GEOM_FLAGS, &s->geom_flags) ||
	    get_u32(a, XRAY_FDR_A_SESSION_SUBBUF_SIZE, &s->subbuf_size) ||
	    get_u32(a, XRAY_FDR_A_SESSION_SUBBUF_COUNT, &s->subbuf_count) ||
	    get_u32(a, XRAY_FDR_A_SESSION_NR_CPUS, &s->nr_cpus) ||
	    get_u64(a, XRAY_FDR_A_SESSION_BYTES, &s->bytes) ||
	    get_u64(a, XRAY_FDR_A_SESSION_SWITCH_RECORDS, &s->switch_records) ||
	    get_u64(a, XRAY_FDR_A_SESSION_MIGRATION_RECORDS,
		    &s->migration_records) ||
	    get_u64(a, XRAY_FDR_A_SESSION_RECORDS_LOST, &s->records_lost))
		return -EBADMSG;
	/* a NUL-terminated name of at most TASK_COMM_LEN bytes */
	if (!comm || nla_len(comm) < 1 || nla_len(comm) > 16 ||
	    memchr(nla_data(comm), 0, nla_len(comm)) == NULL)
		return -EBADMSG;
	memcpy(s->comm, nla_data(comm), nla_len(comm));
	if (a[XRAY_FDR_A_SESSION_EVENT] &&
	    get_u32(a, XRAY_FDR_A_SESSION_EVENT, &s->event))
		return -EBADMSG;
	return 0;
}

static int ctl_status_reply(void *ctx, struct nlmsghdr *nlh,
			    struct nlattr **attrs)
{
	return ctl_decode_status_msg(nlh, attrs, ctx);
}

int ctl_get_status(struct ctl_nl *nl, struct ctl_status *st)
{
	struct nl_msg *msg = ctl_nl_msg(nl, XRAY_FDR_CMD_STATUS_GET, 0);

	memset(st, 0, sizeof(*st));
	if (!msg)
		return -ENOMEM;
	return ctl_call(nl, msg, XRAY_FDR_A_STATUS_MAX, NULL, ctl_status_reply,
			st);
}

static int ctl_session_reply(void *ctx, struct nlattr **attrs)
{
	return ctl_decode_session(attrs, ctx);
}

int ctl_get_session(struct ctl_nl *nl, uint32_t id, struct ctl_session *s)
{
	struct nl_msg *msg = session_msg(nl, XRAY_FDR_CMD_SESSION_GET, id, -1);

	memset(s, 0, sizeof(*s));
	if (!msg)
		return -ENOMEM;
	return ctl_nl_call(nl, msg, XRAY_FDR_A_SESSION_MAX, ctl_session_reply,
			   s);
}

int ctl_decode_message(const void *buf, size_t len, int cmd, void *out)
{
	const struct nlmsghdr *nlh = buf;
	struct nlattr *attrs[64];
	int maxattr;

	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_len > len)
		return -EBADMSG;
	maxattr = cmd == XRAY_FDR_CMD_STATUS_GET ? XRAY_FDR_A_STATUS_MAX :
						   XRAY_FDR_A_SESSION_MAX;
	memset(attrs, 0, sizeof(attrs));
	if (genlmsg_parse((struct nlmsghdr *)nlh, 0, attrs, maxattr, NULL) < 0)
		return -EBADMSG;
	if (cmd == XRAY_FDR_CMD_STATUS_GET)
		return ctl_decode_status_msg((struct nlmsghdr *)nlh, attrs,
					     out);
	return ctl_decode_session(attrs, out);
}
