#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# LTTng-UST's lossless function tracing around one run, for bench_calls.py:
#
#   lttng-record.sh OUTDIR SUBBUF_SIZE NUM_SUBBUF PROGRAM ARGS...
#
# A session daemon of its own (started if none answers, user-space only), a
# session writing to OUTDIR with one user-space channel that blocks when
# its sub-buffers are full (never discards: the program's environment must
# have LTTNG_UST_ALLOW_BLOCKING=1), the cyg_profile_fast events enabled;
# PROGRAM runs (with LD_PRELOAD=liblttng-ust-cyg-profile-fast.so.1 from the
# caller), then the session is stopped and destroyed, which flushes it.
# Exits with PROGRAM's status; LTTng's own output goes to stderr.
set -u
out=$1 size=$2 count=$3
shift 3
session=xrayfdr-bench-$$

lttng list >/dev/null 2>&1 ||
	env -u LD_PRELOAD lttng-sessiond --daemonize --no-kernel >&2 || exit 1
rm -rf "$out"
lttng() { env -u LD_PRELOAD lttng "$@" >&2; }
lttng create "$session" --output="$out" || exit 1
if ! { lttng enable-channel --userspace --blocking-timeout=inf \
	--subbuf-size="$size" --num-subbuf="$count" ch &&
	lttng enable-event --userspace --channel=ch 'lttng_ust_cyg_profile_fast:*' &&
	lttng start; }; then
	lttng destroy "$session"
	exit 1
fi
"$@"
rc=$?
lttng stop "$session"
lttng destroy "$session"
exit $rc
