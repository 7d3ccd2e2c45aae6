#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The selftests on Debian's newest kernel (scripts/vm/Build.mk's guest
# "newest": trixie-backports' or testing's, a gcc-14 build whose module is
# built in a chroot of its release) with the module built against its
# headers: vmtest.sh on $BUILD/vm-newest, once, each result prefixed with
# the kernel's release.
#
# Environment: as vmtest.sh.
set -u
BUILD=${BUILD:-build}
export BUILD
export VM_DIR=${VM_DIR:-$BUILD/vm-newest}
export VM_MODES=${VM_MODES:-default}
export VM_LABEL=${VM_LABEL:-$(cat "$BUILD/kernels/newest/release" 2>/dev/null || echo newest)}
exec "$(dirname "$0")/vmtest.sh"
