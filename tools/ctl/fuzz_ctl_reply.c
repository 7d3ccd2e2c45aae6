// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the decoding of the module's netlink replies
 * (ctl_decode_message()): any bytes, as a status reply and as a session
 * reply.  Beyond "no crash": a decoded command name is always a
 * terminated string.  Built with -DCTL_FUZZ_SEEDS it is instead the
 * program that writes the seed corpus: one valid reply of each kind.
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
	ctl_decode_message(copy, size, XRAY_FDR_CMD_STATUS_GET, &st);
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

int main(int argc, char **argv)
{
	struct nl_msg *st = nlmsg_alloc(), *se = nlmsg_alloc();
	struct nlattr *nest;
	int a;

	if (argc != 2 || !st || !se)
		return 2;
	genlmsg_put(st, 0, 1, 20, 0, 0, XRAY_FDR_CMD_STATUS_GET, 1);
	for (a = XRAY_FDR_A_STATUS_ABI_VERSION; a < XRAY_FDR_A_STATUS_CONFIG;
	     a++)
		if (a >= XRAY_FDR_A_STATUS_SWITCH_RECORDS &&
		    a <= XRAY_FDR_A_STATUS_TSC_KHZ)
			nla_put_u64(st, a, 1000 + a);
		else
			nla_put_u32(st, a, a);
	nest = nla_nest_start(st, XRAY_FDR_A_STATUS_CONFIG);
	for (a = XRAY_FDR_A_CONFIG_MAX_SESSION_KB;
	     a < XRAY_FDR_A_CONFIG_SCHED_RECORDS; a++)
		nla_put_u32(st, a, 64 * a);
	nla_put_u8(st, XRAY_FDR_A_CONFIG_SCHED_RECORDS, 1);
	nla_nest_end(st, nest);

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
	return save(st, argv[1], "status") || save(se, argv[1], "session");
}
#endif
