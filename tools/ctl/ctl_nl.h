/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Generic netlink to xray_fdr.ko, on libnl-genl-3: one request and its
 * answer at a time, the kernel's own errno and extended-ack message, and
 * the replies decoded into plain structs.  Used by xrayfdr-ctl and the
 * module's selftests.
 */
#ifndef XRAYFDR_CTL_NL_H
#define XRAYFDR_CTL_NL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/xray_fdr.h>

struct nl_sock;
struct nl_msg;
struct nlattr;

struct ctl_nl {
	struct nl_sock *sk;
	int family;
	/* the kernel's extended-ack message of the last failed request */
	char errmsg[256];
};

/*
 * Connect and resolve the family.  Returns 0, -ENOENT if the family is not
 * registered (the module is not loaded), or another -errno.
 */
int ctl_nl_open(struct ctl_nl *nl);
void ctl_nl_close(struct ctl_nl *nl);

/* A request for command @cmd (NLM_F_DUMP in @flags for a dump), or NULL. */
struct nl_msg *ctl_nl_msg(const struct ctl_nl *nl, int cmd, int flags);

/*
 * Called for each reply message with its attributes, parsed up to
 * @maxattr without validation (the decoders below check lengths).  Return
 * non-zero to report a malformed reply.
 */
typedef int (*ctl_nl_reply_fn)(void *ctx, struct nlattr **attrs);

/*
 * Send @msg (always freed) and wait for the answer: the ACK, the end of a
 * dump, or an error.  Returns 0, the kernel's -errno (its message, if any,
 * in nl->errmsg), or -EBADMSG if a reply could not be decoded.
 */
int ctl_nl_call(struct ctl_nl *nl, struct nl_msg *msg, int maxattr,
		ctl_nl_reply_fn fn, void *ctx);

/* Shorthand: a request naming session @id, with XRAY_FDR_A_SESSION_KEEP
 * = @keep if @keep >= 0.  Returns as ctl_nl_call(), or -ENOMEM. */
int ctl_nl_session_cmd(struct ctl_nl *nl, int cmd, uint32_t id, int keep);

struct ctl_config {
	uint32_t max_session_kb;
	uint32_t max_total_kb;
	uint32_t max_sessions;
	uint32_t max_retained;
	uint8_t sched_records;
	/* the per-user limits and the reserves bind the unprivileged only */
	uint32_t max_user_sessions;
	uint32_t max_user_kb;
	uint32_t max_user_retained;
	uint32_t admin_reserve_sessions;
	uint32_t admin_reserve_kb;
	uint32_t admin_reserve_retained;
	uint32_t retained_max_age; /* seconds; 0: until dropped */
	bool has_retained_limits; /* the two above: a module that has them */
};

/* One user's use: an XRAY_FDR_A_STATUS_USER nest. */
struct ctl_user {
	uint32_t uid;
	uint32_t sessions; /* open plus retained */
	uint32_t retained; /* marked keep, retained ones included */
	uint64_t bytes;
};

/*
 * Users a status holds.  The kernel's reply is one page, room for about
 * 80; entries past this many are counted in users_omitted, not kept.
 */
#define CTL_MAX_USERS 128

struct ctl_status {
	uint32_t abi_version;
	uint32_t nr_cpus;
	uint32_t sessions;
	uint32_t sessions_retained;
	uint64_t switch_records;
	uint64_t migration_records;
	uint64_t records_lost;
	uint64_t bytes_allocated;
	uint64_t bytes_mapped;
	uint64_t tsc_khz;
	uint32_t tsc_flags;
	uint64_t retained_expired; /* (config.has_retained_limits) */
	struct ctl_config config;
	/* every user with sessions for CAP_SYS_ADMIN, else the caller's own */
	uint32_t nr_users;
	uint32_t users_omitted; /* entries beyond CTL_MAX_USERS */
	struct ctl_user users[CTL_MAX_USERS];
};

struct ctl_session {
	uint32_t id;
	uint32_t owner_pid;
	uint32_t owner_uid;
	char comm[17];
	uint32_t state;
	uint32_t geom_flags;
	uint32_t subbuf_size;
	uint32_t subbuf_count;
	uint32_t nr_cpus;
	uint64_t bytes;
	uint64_t switch_records;
	uint64_t migration_records;
	uint64_t records_lost;
	uint32_t event; /* notifications only */
};

/*
 * Decode a status-get reply / a session reply or notification from its
 * attributes.  Returns 0, or -EBADMSG naming nothing: a missing or
 * wrong-sized attribute.  A parsed table keeps only the last of repeated
 * attributes, so ctl_decode_status() leaves the users empty:
 * ctl_decode_users() reads them from the reply's whole attribute stream
 * (@head, @len bytes), which ctl_get_status() does too.
 */
int ctl_decode_status(struct nlattr **attrs, struct ctl_status *st);
int ctl_decode_users(struct nlattr *head, int len, struct ctl_status *st);
int ctl_decode_session(struct nlattr **attrs, struct ctl_session *s);

/* status-get, decoded; 0 or -errno. */
int ctl_get_status(struct ctl_nl *nl, struct ctl_status *st);
/* session-get of session @id, decoded; 0 or -errno. */
int ctl_get_session(struct ctl_nl *nl, uint32_t id, struct ctl_session *s);

/*
 * Decode one whole netlink message of command @cmd (status-get or
 * session-get/ntf) from @len bytes: what the fuzz target feeds.  Returns 0
 * or -EBADMSG.
 */
int ctl_decode_message(const void *buf, size_t len, int cmd, void *out);

#endif
