#!/bin/sh
# xrayfdr attach in the guest, in CPU mode on the kernel module's rings
# (run by scripts/vm/vmtest.sh): a dynamically linked program built
# without any runtime (bench/runtime/attach_target.c, two threads calling
# a traced function, its main thread blocked in read()) is attached for a
# while, then attached again and detached with xrayfdr detach; each log
# is on the module's rings, has the scheduler's records of the program's
# threads, and passes xrayfdr dump --verify; the program goes on and ends
# well.  xrayfdr, libxrayfdr.so and the C library are in /opt/xrayfdr
# and /lib of the initramfs (scripts/vm/mkinitramfs.sh, DYNAMIC).
# Prints TAP.
X=/opt/xrayfdr/bin/xrayfdr
echo "1..7"
cd /tmp || exit 1
rm -f in att1.xray att2.xray
mkfifo in
/selftests/attach_target 2 <in >out 2>&1 &
pid=$!
exec 3>in # keeps its stdin open
i=0
while [ "$i" -lt 100 ] && ! grep -q ready out; do
	sleep 0.1
	i=$((i + 1))
done

failed=0
ok() { # n status description
	if [ "$2" -eq 0 ]; then
		echo "ok $1 $3"
	else
		echo "not ok $1 $3"
		failed=$((failed + 1))
	fi
}

# small rings: the guest reads the whole log with dump --events
$X attach --mode cpu -b 16K -m 16 --for 2s -o /tmp/att1.xray "$pid" 2>att1.err
rc=$?
ok 1 "$rc" "attach: attaching to a running program in CPU mode for 2 s writes a valid log"
[ "$rc" -eq 0 ] || sed 's/^/# /' att1.err
grep -aq 'rings=module' att1.xray && $X dump --verify --quiet att1.xray >/dev/null
ok 2 $? "attach: its log is on the module's rings and verifies"
n=$($X dump --events att1.xray 2>/dev/null | grep -c "switch-\(in\|out\).*pid=$pid\|pid=$pid.*switch-\(in\|out\)")
[ "${n:-0}" -gt 0 ]
ok 3 $? "attach: the window has the scheduler's records of the program's threads ($n)"

$X attach --mode cpu -b 16K -m 16 -o /tmp/att2.xray "$pid" 2>att2.err &
apid=$!
i=0
while [ "$i" -lt 300 ] && ! grep -q "tracing process" att2.err; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1
$X detach "$pid" >det.out 2>&1
drc=$?
wait "$apid"
arc=$?
[ "$drc" -eq 0 ] && [ "$arc" -eq 0 ] && $X dump --verify --quiet att2.xray >/dev/null
ok 4 $? "attach: xrayfdr detach ends a second attach, whose log verifies"
[ "$drc" -eq 0 ] || sed 's/^/# /' att2.err det.out
if [ -d "/proc/$pid" ]; then st=0; else st=1; fi
ok 5 "$st" "attach: the program runs on after two attaches"
echo quit >&3
exec 3>&-
wait "$pid"
ok 6 $? "attach: the program ends well"

# Yama's ptrace_scope=2: a user's attach to their own process is refused
# with what to do, the program unchanged
yama=/proc/sys/kernel/yama/ptrace_scope
if [ -w "$yama" ]; then
	old=$(cat "$yama")
	rm -f in2
	mkfifo in2
	chmod 666 in2
	rm -f upid
	# shellcheck disable=SC2016 # ($$: the user's shell, which exec keeps)
	su -s /bin/sh nobody -c 'echo $$ >/tmp/upid; exec /selftests/attach_target 1 <in2 >/dev/null 2>&1' &
	exec 4>in2
	sleep 1
	upid=$(cat upid)
	echo 2 >"$yama"
	su -s /bin/sh nobody -c "$X attach --for 1s -o /tmp/nobody.xray $upid" >yama.out 2>&1
	rc=$?
	echo "$old" >"$yama"
	st=1
	if [ "$rc" -eq 1 ] && grep -q "ptrace_scope=2" yama.out &&
		! grep -q libxrayfdr "/proc/$upid/maps"; then
		st=0
	fi
	ok 7 "$st" "attach: with ptrace_scope=2 a user's attach is refused, saying what to do"
	[ "$st" -eq 0 ] || sed 's/^/# /' yama.out
	echo quit >&4
	exec 4>&-
	wait
else
	echo "ok 7 # SKIP this kernel has no Yama (kernel.yama.ptrace_scope)"
fi
[ "$failed" -eq 0 ]
