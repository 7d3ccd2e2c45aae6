#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot Debian's packaged kernel in QEMU with the test initramfs, once per
# TSC mode, and report what the guest's selftests said as TAP.
#
# The host decides from the serial logs alone (QEMU exits 0 even after a
# guest panic): a boot passes only if the guest reached its end marker, the
# module loaded, every expected selftest ran to completion with its whole
# plan of results and exit status 0, and the kernel log has no BUG,
# WARNING, Oops, Call Trace, panic, RIP, UBSAN, soft lockup or hung task
# line (nor an RCU stall).  A hang fails by timeout.
#
# Environment: BUILD (build), VM_MODES ("default reliable": without and
# with tsc=reliable), VM_TIMEOUT (seconds per boot, 420), VM_ACCEL (auto:
# KVM only if a quick probe boots, else TCG; or tcg, kvm), VM_SMP (2),
# VM_MEM (1G), VM_ONLY ("test_sched,test_tsc": run only those selftests).
# For another guest kernel (vmtest-debug.sh): VM_DIR (the guest's files,
# $BUILD/vm), VM_LABEL (prefixes each result), VM_APPEND (more kernel
# parameters), VM_TEST_TIMEOUT (seconds per selftest in the guest, 180),
# VM_REQUIRE (a line the kernel log must have, e.g. proof that KASAN is
# on), VM_BAD_EXTRA (more kernel log lines that fail the boot, an ERE),
# VM_TCG_THREAD (single: one host thread for both vCPUs, qemu.sh).
# Files: $VM_DIR/{vmlinuz,initramfs.cpio.gz,selftests.list}, and
# System.map if the kernel has a real one; logs in
# $VM_DIR/<mode>.console.log and <mode>.tests.log.
set -u
BUILD=${BUILD:-build}
VM=${VM_DIR:-$BUILD/vm}
MODES=${VM_MODES:-default reliable}
TIMEOUT=${VM_TIMEOUT:-420}
SMP=${VM_SMP:-2}
MEM=${VM_MEM:-1G}
KERNEL=$VM/vmlinuz
INITRD=$VM/initramfs.cpio.gz
LIST=$VM/selftests.list
BAD='BUG:|WARNING:|blocked for more than|Oops|general protection fault|Kernel panic|Call Trace:|RIP:|UBSAN:|soft lockup|hung task|kernel BUG|detected stalls'
[ -n "${VM_BAD_EXTRA:-}" ] && BAD="$BAD|$VM_BAD_EXTRA"

n=0
result() { # status description
	n=$((n + 1))
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

for f in "$KERNEL" "$INITRD" "$LIST"; do
	if [ ! -e "$f" ]; then
		echo "1..1"
		echo "not ok 1 - $f is missing (make vmtest builds it)"
		exit 1
	fi
done
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "1..1"
	echo "not ok 1 - qemu-system-x86_64 not installed (make deps)"
	exit 1
fi

# qemu(), cpu_state() and accel_args(): shared with vmdemo.sh
. "$(dirname "$0")/qemu.sh"

ACCEL=$(accel_args)
echo "# accelerator: $ACCEL; load: $(cut -d' ' -f1-3 /proc/loadavg)"

for mode in $MODES; do
	append="console=ttyS0 panic=-1 oops=panic loglevel=7 xrayfdr.timeout=${VM_TEST_TIMEOUT:-180}"
	[ "$mode" = reliable ] && append="$append tsc=reliable"
	[ -n "${VM_APPEND:-}" ] && append="$append $VM_APPEND"
	[ -n "${VM_ONLY:-}" ] && append="$append xrayfdr.only=$VM_ONLY"
	tag="${VM_LABEL:+$VM_LABEL }tsc=$mode"
	prefix=$VM/$mode
	start=$(date +%s.%N)
	qemu "$ACCEL" "$prefix" "$append" "$TIMEOUT"
	rc=$?
	# Under TCG on a busy host the guest's PIT loop can run so slowly that
	# the kernel keeps a TSC frequency many times too low (Debian's 6.12
	# took 124 MHz for 2596 MHz: "PIT calibration deviates from HPET");
	# every duration the selftests measure is then off by that factor,
	# through no fault of the module.  Such a boot is made again, once.
	miscal=$(grep -a -m 1 -o 'PIT calibration deviates from .*' \
		"$prefix.console.log" 2>/dev/null | tr -d '\r')
	if [ -n "$miscal" ]; then
		echo "# $tag: the guest kernel miscalibrated its TSC ($miscal); booting again"
		qemu "$ACCEL" "$prefix" "$append" "$TIMEOUT"
		rc=$?
	fi
	secs=$(echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}')
	tests=$prefix.tests.log
	console=$prefix.console.log
	tr -d '\r' <"$tests" >"$tests.clean" 2>/dev/null || : >"$tests.clean"

	booted=$(sed -n 's/^XRAYFDR-VM-BEGIN uptime=//p' "$tests.clean")
	ended=$(sed -n 's/^XRAYFDR-VM-END uptime=//p' "$tests.clean")
	if [ -n "$ended" ]; then
		result ok "$tag: guest ran every selftest (init after ${booted}s of guest time, done at ${ended}s; ${secs}s wall)"
	elif [ "$rc" -eq 124 ]; then
		result fail "$tag: guest timed out after ${TIMEOUT}s (logs $prefix.*.log)"
		grep '^RIP ' "$prefix.cpus.log" 2>/dev/null | sed 's/^/# /'
	else
		result fail "$tag: guest stopped before its end marker, qemu status $rc (logs $prefix.*.log)"
	fi
	if grep -q '^XRAYFDR-INSMOD ok' "$tests.clean"; then
		result ok "$tag: insmod xray_fdr.ko"
	else
		result fail "$tag: insmod xray_fdr.ko"
	fi

	for t in $(if [ -n "${VM_ONLY:-}" ]; then echo "$VM_ONLY" | tr , ' '; else cat "$LIST"; fi); do
		# One selftest's TAP: its results, plan, totals and exit status.
		awk -v t="$t" -v mode="$tag" -v start="$n" '
			$0 == "XRAYFDR-TEST-BEGIN " t { on = 1; next }
			on && index($0, "XRAYFDR-TEST-END " t " ") == 1 {
				on = 0; ended = 1
				rc = $3; sub(/rc=/, "", rc)
				next
			}
			!on { next }
			/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
			/^# Totals:/ { totals = $0; sub(/^# Totals: /, "", totals); next }
			/^(not )?ok [0-9]+/ {
				line = $0
				status = "ok"
				if (line ~ /^not /) { status = "not ok"; sub(/^not /, "", line) }
				sub(/^ok [0-9]+ ?/, "", line)
				seen++
				start++
				if (line ~ /^# SKIP/) {
					printf "%s %d - %s %s: result %d %s\n", status, start, mode, t, seen, line
				} else {
					printf "%s %d - %s %s: %s\n", status, start, mode, t, line
				}
				if (status != "ok") failed++
			}
			END {
				start++
				why = ""
				if (!ended) why = why " no end marker (crashed or hung);"
				if (plan == 0) why = why " no plan;"
				if (seen != plan) why = why " " seen " results for a plan of " plan ";"
				if (ended && rc != 0) why = why " exit status " rc ";"
				if (why == "")
					printf "ok %d - %s %s: %d results, %s\n", start, mode, t, seen, totals
				else
					printf "not ok %d - %s %s:%s\n", start, mode, t, why
			}' "$tests.clean" >"$prefix.$t.tap"
		cat "$prefix.$t.tap"
		n=$((n + $(wc -l <"$prefix.$t.tap")))
	done

	# logs the guest's runtime test exported in base64: llvm-xray and our
	# verifier must accept each
	files=$prefix.files
	llvm_xray=$(command -v llvm-xray || command -v llvm-xray-14 || true)
	for f in $(guest_files "$tests.clean" "$files"); do
		case $f in
		*.xray | *.xray.[0-9]*) ;;
		*) continue ;; # (a program's output)
		esac
		if [ -z "$llvm_xray" ]; then
			result fail "$tag: llvm-xray not installed (make deps)"
		elif err=$("$llvm_xray" fdr-dump -verify "$f" 2>&1 >/dev/null); then
			result ok "$tag: llvm-xray fdr-dump -verify accepts the guest's $(basename "$f")"
		else
			result fail "$tag: llvm-xray fdr-dump -verify refuses the guest's $(basename "$f"): $(echo "$err" | tail -n1)"
		fi
		if err=$("$BUILD/bin/xrayfdr" dump --verify --quiet "$f" 2>&1 >/dev/null); then
			result ok "$tag: xrayfdr dump --verify accepts the guest's $(basename "$f")"
		else
			result fail "$tag: xrayfdr dump --verify refuses the guest's $(basename "$f"): $(echo "$err" | tail -n1)"
		fi
	done

	# the matrix's programs the guest ran: the host checks their logs
	if grep -q '^XRAYFDR-TEST-BEGIN matrix_guest.sh' "$tests.clean"; then
		python3 "$(dirname "$0")/../../tests/guest/check_matrix.py" \
			"$files" "$BUILD/selftests" >"$prefix.matrix.log" 2>&1
		while IFS= read -r l; do
			case $l in
			"ok "*) result ok "$tag: ${l#ok }" ;;
			"not ok "*) result fail "$tag: ${l#not ok }" ;;
			*) echo "$l" ;;
			esac
		done <"$prefix.matrix.log"
	fi

	# when runtime_guest ran, its logs must all be there
	if grep -q '^XRAYFDR-TEST-BEGIN runtime_guest' "$tests.clean"; then
		missing=""
		for f in threads migrate onoff pingpong killed scribbled; do
			[ -s "$files/$f.xray" ] || missing="$missing $f.xray"
		done
		if [ -z "$missing" ]; then
			result ok "$tag: runtime_guest exported all its logs"
		else
			result fail "$tag: runtime_guest's logs missing or not decodable:$missing"
		fi
	fi

	# the dump of a killed process names its functions with the binary
	if [ -s "$files/killed.xray" ]; then
		if "$BUILD/bin/xrayfdr" account -m "$BUILD/selftests/runtime_guest" \
			"$files/killed.xray" 2>/dev/null | grep -q ' numbered$'; then
			result ok "$tag: xrayfdr account -m names the functions of the killed process's dump"
		else
			result fail "$tag: xrayfdr account -m names the functions of the killed process's dump"
		fi
	fi

	# on-CPU and off-CPU time as xrayfdr account reports it, from the
	# switch records in the stream: compared with each other (the 50 ms
	# spin's CPU time is the loose yardstick of the 50 ms sleep, as the
	# spin's ticks include the guest's interrupts), not with seconds,
	# which a TCG guest's TSC frequency on a loaded host skews
	if [ -s "$files/onoff.xray" ]; then
		if out=$("$BUILD/bin/xrayfdr" account -m "$BUILD/selftests/runtime_guest" \
			"$files/onoff.xray" 2>&1) && echo "$out" | awk '
				/ sleeper$/ { son = $11; soff = $12; s = 1 }
				/ spinner$/ { pon = $11; poff = $12; p = 1 }
				END { exit !(s && p && pon > 0 && soff >= 0.5 * pon &&
					     son < soff / 4 && poff < pon / 4) }'; then
			result ok "$tag: xrayfdr account: a 50 ms sleep is off-CPU, a 50 ms spin on-CPU"
		else
			result fail "$tag: xrayfdr account: a 50 ms sleep is off-CPU, a 50 ms spin on-CPU"
			echo "$out" | sed 's/^/# /'
		fi
	fi

	# xrayfdr-ctl --json answers the guest echoed: each must parse
	json=$(sed -n 's/^# json: //p' "$tests.clean")
	if [ -n "$json" ]; then
		if err=$(printf '%s\n' "$json" | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin, 1):
    json.loads(line)
print(i)' 2>&1); then
			result ok "$tag: $err xrayfdr-ctl --json answers are valid JSON"
		else
			result fail "$tag: an xrayfdr-ctl --json answer is not JSON: $(echo "$err" | tail -n1)"
		fi
	fi

	if [ -n "${VM_REQUIRE:-}" ]; then
		if grep -qaF "$VM_REQUIRE" "$console" 2>/dev/null; then
			result ok "$tag: kernel log says \"$VM_REQUIRE\""
		else
			result fail "$tag: kernel log lacks \"$VM_REQUIRE\" ($console)"
		fi
	fi
	bad=$(grep -aE "$BAD" "$console" 2>/dev/null | head -n 20)
	if [ -z "$bad" ]; then
		result ok "$tag: kernel log has no BUG/WARNING/Oops/panic lines"
	else
		result fail "$tag: kernel log has BUG/WARNING/Oops/panic lines ($console)"
		sed 's/^/# /' <<<"$bad"
	fi
done
echo "1..$n"
