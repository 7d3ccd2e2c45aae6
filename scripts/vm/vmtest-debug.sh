#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The selftests on the debug kernel (scripts/vm/debug-kernel.config: KASAN,
# lockdep, UBSAN, DEBUG_VM, DEBUG_LIST, atomic-sleep and preemption checks)
# with the module built against it: vmtest.sh on $BUILD/vm-debug, once
# (the TSC modes are Debian's run's business).  Any sanitizer or lock
# checker report fails the boot; so does a kernel log without KASAN's
# banner, lest a kernel built without it pass unnoticed.
#
# Environment: as vmtest.sh.  VM_TIMEOUT defaults to 1200 s: the whole run
# takes about 2 minutes under TCG with KASAN on 2 busy cores, and the
# suite's own limit (run-tests.sh) is 1800 s.  VM_TEST_TIMEOUT defaults to
# 600 s per selftest (the longest, matrix_guest.sh, takes about 55 s).
set -u
BUILD=${BUILD:-build}
export BUILD
export VM_DIR=${VM_DIR:-$BUILD/vm-debug}
export VM_MODES=${VM_MODES:-default}
export VM_TIMEOUT=${VM_TIMEOUT:-1200}
export VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-600}
export VM_LABEL=${VM_LABEL:-debug}
# Both vCPUs in one host thread (TCG round-robin, where PAUSE hands over
# to the other vCPU): with a thread per vCPU on a busy host, a vCPU that
# spins on a lock the other holds burns the holder's time, and under
# lockdep and KASAN the guest's 17 MB of logs through ttyS1 (a port-lock
# handover per 16 bytes) took 160-570 s instead of 55 s.
export VM_TCG_THREAD=${VM_TCG_THREAD:-single}
# kasan_multi_shot: every KASAN report, not just the first
export VM_APPEND="kasan_multi_shot${VM_APPEND:+ $VM_APPEND}"
export VM_REQUIRE="KernelAddressSanitizer initialized"
# lockdep's reports that carry neither BUG: nor WARNING:, and SLUB's
export VM_BAD_EXTRA='INFO: trying to register non-static key|INFO: lockdep is turned off|^\[[ 0-9.]*\] BUG [^ ]+ \('
exec "$(dirname "$0")/vmtest.sh"
