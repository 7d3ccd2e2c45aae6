#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make vmdemo: the kernel module's four uses in one run.  Boots the test
# guest (Debian's kernel in QEMU, as make vmtest does) with xray_fdr.ko
# loaded and runs scripts/vm/guest-demo.sh there: a multi-threaded program
# recorded in CPU mode on the module's rings, the statistics and
# xrayfdr-ctl status, a kept session's process killed with SIGKILL and its
# rings dumped; then, on this machine, xrayfdr account of those logs with
# the on-CPU and off-CPU columns the scheduler's records give, and two
# live snapshots (xrayfdr-ctl snapshot) of a CPU-mode process that runs on.
#
# Environment: BUILD (build), VM_TIMEOUT (seconds, 300), VM_ACCEL, VM_SMP
# (2), VM_MEM (1G).
set -u
BUILD=${BUILD:-build}
VM=$BUILD/vm
TIMEOUT=${VM_TIMEOUT:-300}
SMP=${VM_SMP:-2}
MEM=${VM_MEM:-1G}
KERNEL=$VM/vmlinuz
INITRD=$VM/initramfs.cpio.gz
X=$BUILD/bin/xrayfdr
PROG=$BUILD/selftests/runtime_guest

for f in "$KERNEL" "$INITRD" "$X" "$PROG"; do
	if [ ! -e "$f" ]; then
		echo "vmdemo: $f is missing (make vmdemo builds it)" >&2
		exit 1
	fi
done
. "$(dirname "$0")/qemu.sh"

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi

ACCEL=$(accel_args)
prefix=$VM/demo
step "booting the guest ($ACCEL; a minute or so under emulation)"
qemu "$ACCEL" "$prefix" \
	"console=ttyS0 panic=-1 oops=panic loglevel=4 xrayfdr.only=demo.sh" \
	"$TIMEOUT"
tr -d '\r' <"$prefix.tests.log" >"$prefix.tests.clean" 2>/dev/null
if ! grep -q '^XRAYFDR-TEST-END demo.sh' "$prefix.tests.clean"; then
	echo "vmdemo: the guest did not finish (logs $prefix.*.log)" >&2
	exit 1
fi

step "in the guest"
awk '/^XRAYFDR-TEST-BEGIN demo.sh/ { on = 1; next }
     /^XRAYFDR-TEST-END demo.sh/ { on = 0 }
     /^XRAYFDR-FILE-BEGIN / { skip = 1; next }
     /^XRAYFDR-FILE-END/ { skip = 0; next }
     on && !skip' "$prefix.tests.clean"

files=$prefix.files
guest_files "$prefix.tests.clean" "$files" >/dev/null

step "here: the guest's logs, verified"
XRAY=$(command -v llvm-xray || command -v llvm-xray-14 || true)
for f in "$files"/*.xray; do
	"$X" dump --verify --quiet "$f"
	[ -n "$XRAY" ] && "$XRAY" fdr-dump -verify "$f" >/dev/null &&
		echo "llvm-xray fdr-dump -verify: $(basename "$f") is valid"
done

step "xrayfdr account -m runtime_guest onoff.xray: on-CPU and off-CPU time per function"
"$X" account -m "$PROG" "$files/onoff.xray"

step "xrayfdr account -m runtime_guest killed.xray: the SIGKILLed process's last calls, named"
"$X" account -m "$PROG" "$files/killed.xray"

step "xrayfdr account -m runtime_guest live2.xray: a snapshot of a running process, on and off CPU"
"$X" account -m "$PROG" "$files/live2.xray"
echo
echo "Logs: $files/"
