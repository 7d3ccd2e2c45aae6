#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The selftests on Debian's 6.12 kernel (bookworm-backports, the LTS of
# Debian 13) with the module built against its headers: vmtest.sh on
# $BUILD/vm-6.12, once (the TSC modes are the 6.1 run's business).
#
# Environment: as vmtest.sh.
set -u
BUILD=${BUILD:-build}
export BUILD
export VM_DIR=${VM_DIR:-$BUILD/vm-6.12}
export VM_MODES=${VM_MODES:-default}
export VM_LABEL=${VM_LABEL:-6.12}
exec "$(dirname "$0")/vmtest.sh"
