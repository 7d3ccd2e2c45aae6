#!/bin/sh
# The runtime matrix's programs in the guest, in CPU mode on the module's
# rings (run by scripts/vm/vmtest.sh).  Each m_NAME here is a program of
# tests/runtime/progs linked statically with libxrayfdr.a; this runs it and
# exports what it printed and its logs, which the host checks
# (tests/guest/check_matrix.py: counts, both verifiers).  Prints TAP.
cd /selftests
mkdir -p /tmp/m
set -- m_*
echo "1..$#"
n=0
for prog in "$@"; do
	n=$((n + 1))
	name=${prog#m_}
	rm -f /tmp/m/"$name".*
	# (output_pid: forked children write FILE.PID, as under xrayfdr record)
	sh -c 'XRAYFDR_OPTIONS="mode=cpu buffer_max=2048 output=/tmp/m/$1.xray output_pid=$$" exec "./$2"' \
		sh "$name" "$prog" >/tmp/m/"$name".out 2>/tmp/m/"$name".err
	rc=$?
	if [ "$rc" -eq 0 ] && [ -s "/tmp/m/$name.xray" ] &&
		grep -aq 'rings=module' "/tmp/m/$name.xray"; then
		echo "ok $n $name runs in CPU mode on the module's rings and writes its log"
	else
		echo "not ok $n $name runs in CPU mode on the module's rings and writes its log (exit $rc)"
		sed 's/^/# /' /tmp/m/"$name".err
	fi
	for f in /tmp/m/"$name".*; do
		case $f in *.err) continue ;; esac
		echo "XRAYFDR-FILE-BEGIN m-$(basename "$f")"
		base64 "$f"
		echo "XRAYFDR-FILE-END"
	done
done
