# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Booting the test guest, sourced by vmtest.sh and vmdemo.sh.  Expects
# KERNEL, INITRD, MEM, SMP and VM (the guest's directory: $BUILD/vm, or
# $BUILD/vm-debug for the debug kernel) to be set.
qemu() { # accel-args log-prefix append timeout
	local accel=$1 prefix=$2 append=$3 limit=$4 pid waited=0
	rm -f "$prefix.console.log" "$prefix.tests.log" "$prefix.cpus.log" \
		"$prefix.mon"
	qemu-system-x86_64 $accel -m "$MEM" -smp "$SMP" \
		-kernel "$KERNEL" -initrd "$INITRD" -append "$append" \
		-display none -nic none -no-reboot \
		-monitor "unix:$prefix.mon,server=on,wait=off" \
		-serial "file:$prefix.console.log" -serial "file:$prefix.tests.log" \
		</dev/null >"$prefix.qemu.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$limit" ]; do
		sleep 1
		waited=$((waited + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		# hung: keep where each CPU was, then stop the guest
		cpu_state "$prefix.mon" >"$prefix.cpus.log" 2>&1
		kill "$pid"
		sleep 1
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# The registers of every vCPU, from the QEMU monitor, with each RIP
# named from System.map (shifted by the guest's KASLR offset, which the
# guest printed) or from the module's symbols the guest listed.
cpu_state() { # monitor-socket
	local map
	map=/boot/System.map-$(basename "$(readlink -f "$KERNEL")" | sed 's/^vmlinuz-//')
	# a kernel built here (the debug one) has its map beside it
	[ -e "$VM/System.map" ] && map=$VM/System.map
	python3 - "$1" "$map" "${1%.mon}.tests.log" <<'PY'
import re, socket, sys, time
mon, sysmap, tests = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.settimeout(2)
s.sendall(b"info registers -a\n")
time.sleep(2)
out = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
text = out.decode(errors="replace")
print(text)
# Debian's /boot/System.map is a stub (the real one is in the -dbg
# package): name kernel addresses from it only if it is real, else as
# offsets from _stext; module addresses from the symbols the guest printed.
log = open(tests, errors="replace").read()
m = re.search(r"^# _stext ([0-9a-f]+)", log, re.M)
stext = int(m.group(1), 16) if m else None
kernel = []
try:
    for line in open(sysmap):
        a, t, n = line.split()[:3]
        if t in "tTwW":
            kernel.append((int(a, 16), n))
except (OSError, ValueError):
    pass
base = dict((n, a) for a, n in kernel).get("_stext")
kernel = [(a - base + stext, n) for a, n in kernel] if base and stext else []
module = sorted((int(a, 16), n + " [xray_fdr]") for a, n in
                re.findall(r"^# ksym ([0-9a-f]+) \w (\S+)", log, re.M))


def lookup(table, addr, limit):
    best = None
    for a, n in table:
        if a > addr:
            break
        best = (a, n)
    if best and addr - best[0] < limit:
        return "%s+0x%x" % (best[1], addr - best[0])
    return None


for rip in re.findall(r"RIP=([0-9a-f]+)", text):
    addr = int(rip, 16)
    name = (lookup(module, addr, 0x10000) or
            lookup(sorted(kernel), addr, 0x100000) or
            ("_stext+0x%x" % (addr - stext) if stext and addr >= stext
             else "?"))
    print("RIP %s = %s" % (rip, name))
PY
}

# KVM only if it can boot this kernel here: some hosts expose a /dev/kvm
# that hangs in the decompressor.  The verdict is kept for the build tree.
# VM_TCG_THREAD=single: both vCPUs in one host thread (vmtest-debug.sh).
accel_args() {
	local mode=${VM_ACCEL:-auto}
	if [ "$mode" = auto ]; then
		if [ -f "$VM/accel" ]; then
			mode=$(cat "$VM/accel")
		elif [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
			qemu "-accel kvm -cpu host" "$VM/kvm-probe" \
				"console=ttyS0 panic=-1 xrayfdr.probe" 15
			if grep -q XRAYFDR-PROBE-OK "$VM/kvm-probe.tests.log" 2>/dev/null; then
				mode=kvm
			else
				mode=tcg
			fi
			echo "$mode" >"$VM/accel"
		else
			mode=tcg
		fi
	fi
	if [ "$mode" = kvm ]; then
		echo "-accel kvm -cpu host"
	else
		echo "-accel tcg${VM_TCG_THREAD:+,thread=$VM_TCG_THREAD} -cpu max"
	fi
}

# The files the guest printed in base64 between XRAYFDR-FILE markers of
# @log, decoded into @dir (emptied first).  Prints the decoded files.
guest_files() { # log dir
	rm -rf "$2"
	mkdir -p "$2"
	awk -v dir="$2" '
		/^XRAYFDR-FILE-BEGIN / { out = dir "/" $2 ".b64"; next }
		/^XRAYFDR-FILE-END/ { if (out != "") close(out); out = ""; next }
		out != "" { print > out }' "$1"
	for b in "$2"/*.b64; do
		[ -e "$b" ] || continue
		if base64 -d <"$b" >"${b%.b64}" 2>/dev/null; then
			echo "${b%.b64}"
		else
			rm -f "${b%.b64}"
		fi
	done
}
