// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the decoding of the module's netlink replies
 * (ctl_decode_message()): any bytes, as a status reply and as a session
 * reply.  Beyond "no crash": a decoded command name is always a
 * terminated string, and a status never holds more users than its array
 * (the rest are counted).  Built with -DCTL_FUZZ_SEEDS it is instead the
 * program that writes the seed corpus: valid replies of each kind, the
 * status ones with no, a few and too many users.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "ctl_nl.h"

#ifndef CTL_FUZZ_SEEDS
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_session s;
	struct ctl_status st;
	/* a private, aligned copy, as a received message would be */
	void *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (ctl_decode_message(copy, size, XRAY_FDR_CMD_STATUS_GET, &st) == 0 &&
	    st.nr_users > CTL_MAX_USERS)
		abort();
	if (ctl_decode_message(copy, size, XRAY_FDR_CMD_SESSION_GET, &s) == 0 &&
	    !memchr(s.comm, 0, sizeof(s.comm)))
		abort();
	free(copy);
	return 0;
}
#else
static int save(struct nl_msg *msg, const char *dir, const char *name)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(nlh, 1, nlh->nlmsg_len, f) != nlh->nlmsg_len) {
		perror(path);
		return 1;
	}
	fclose(f);
	nlmsg_free(msg);
	return 0;
}

/* A status-get reply with @users user nests, every other one padded. */
static struct nl_msg *status_msg(int users)
{
	struct nl_msg *st = nlmsg_alloc_size(65536);
	struct nlattr *nest;
	int a, u;

	if (!st)
		exit(2);
	genlmsg_put(st, 0, 1, 20, 0, 0, XRAY_FDR_CMD_STATUS_GET, 1);
	for (a = XRAY_FDR_A_STATUS_ABI_VERSION; a < XRAY_FDR_A_STATUS_CONFIG;
	     a++)
		if (a >= XRAY_FDR_A_STATUS_SWITCH_RECORDS &&
		    a <= XRAY_FDR_A_STATUS_TSC_KHZ)
			nla_put_u64(st, a, 1000 + a);
		else
			nla_put_u32(st, a, a);
	nest = nla_nest_start(st, XRAY_FDR_A_STATUS_CONFIG);
	for (a = XRAY_FDR_A_CONFIG_MAX_SESSION_KB; a <= XRAY_FDR_A_CONFIG_MAX;
	     a++)
		if (a == XRAY_FDR_A_CONFIG_SCHED_RECORDS)
			nla_put_u8(st, a, 1);
		else
			nla_put_u32(st, a, 64 * a);
	nla_nest_end(st, nest);
	for (u = 0; u < users; u++) {
		nest = nla_nest_start(st, XRAY_FDR_A_STATUS_USER);
		nla_put_u32(st, XRAY_FDR_A_USER_UID, 1000 + u);
		nla_put_u32(st, XRAY_FDR_A_USER_SESSIONS, 1 + u % 16);
		nla_put_u32(st, XRAY_FDR_A_USER_RETAINED, u % 4);
		/* as nla_put_u64_64bit() aligns the u64 where it must */
		if (u % 2)
			nla_put(st, XRAY_FDR_A_USER_PAD, 0, NULL);
		nla_put_u64(st, XRAY_FDR_A_USER_BYTES, 69632ULL * u);
		nla_nest_end(st, nest);
	}
	return st;
}

int main(int argc, char **argv)
{
	struct nl_msg *se = nlmsg_alloc();
	int a;

	if (argc != 2 || !se)
		return 2;
	genlmsg_put(se, 0, 1, 20, 0, 0, XRAY_FDR_CMD_SESSION_GET, 1);
	for (a = XRAY_FDR_A_SESSION_ID; a <= XRAY_FDR_A_SESSION_EVENT; a++)
		if (a == XRAY_FDR_A_SESSION_KEEP)
			continue;
		else if (a == XRAY_FDR_A_SESSION_COMM)
			nla_put_string(se, a, "traced-prog");
		else if (a >= XRAY_FDR_A_SESSION_BYTES &&
			 a <= XRAY_FDR_A_SESSION_RECORDS_LOST)
			nla_put_u64(se, a, 4096 * a);
		else
			nla_put_u32(se, a, a);
	return save(status_msg(0), argv[1], "status") ||
	       save(status_msg(3), argv[1], "status-users") ||
	       save(status_msg(CTL_MAX_USERS + 2), argv[1],
		    "status-users-omitted") ||
	       save(se, argv[1], "session");
}
#endif
