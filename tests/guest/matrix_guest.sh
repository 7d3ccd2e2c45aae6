#!/bin/sh
# The runtime matrix's programs in the guest, in CPU mode on the module's
# rings (run by scripts/vm/vmtest.sh).  Each m_NAME here is a program of
# tests/runtime/progs linked statically with libxrayfdr.a; this runs it and
# exports what it printed and its logs, which the host checks
# (tests/guest/check_matrix.py: counts, both verifiers).  Prints TAP.
# A few run a second time streamed (stream=true) through rings far smaller
# than their trace: NAME@stream.  m_mixed also runs with discard=true
# through rings it fills early, so that most of its events are dropped
# (mixed@discard), and with keep=true until it is killed (SIGKILL), and
# its kept session is dumped: mixed@killed.
# What the programs and xrayfdr-ctl printed goes too (m-NAME.err,
# m-mixed@killed.ctl): the host checks that their summary lines say what
# the logs lost.
cd /selftests
mkdir -p /tmp/m
STREAMED="m_threads m_migrate m_recursion m_mixed"
set -- m_*
echo "1..$(($# + $(echo $STREAMED | wc -w) + 2))"
n=0
for run in "$@" $(for s in $STREAMED; do echo "$s@stream"; done) m_mixed@discard; do
	n=$((n + 1))
	prog=${run%@*}
	name=${run#m_}
	case $run in
	*@stream)
		opts="mode=cpu stream=true buffer_size=4096 buffer_max=16"
		what="streamed in CPU mode through 16 of the module's 4 KiB sub-buffers" ;;
	*@discard)
		opts="mode=cpu discard=true buffer_size=4096 buffer_max=16"
		what="in CPU mode with discard=true through 16 of the module's 4 KiB sub-buffers" ;;
	*)
		opts="mode=cpu buffer_max=2048"
		what="in CPU mode on the module's rings" ;;
	esac
	rm -f /tmp/m/"$name".*
	# (output_pid: forked children write FILE.PID, as under xrayfdr record)
	sh -c 'XRAYFDR_OPTIONS="$3 output=/tmp/m/$1.xray output_pid=$$" exec "./$2"' \
		sh "$name" "$prog" "$opts" >/tmp/m/"$name".out 2>/tmp/m/"$name".err
	rc=$?
	if [ "$rc" -eq 0 ] && [ -s "/tmp/m/$name.xray" ] &&
		grep -aq 'rings=module' "/tmp/m/$name.xray"; then
		echo "ok $n $name runs $what and writes its log"
	else
		echo "not ok $n $name runs $what and writes its log (exit $rc)"
		sed 's/^/# /' /tmp/m/"$name".err
	fi
	for f in /tmp/m/"$name".*; do
		echo "XRAYFDR-FILE-BEGIN m-$(basename "$f")"
		base64 "$f"
		echo "XRAYFDR-FILE-END"
	done
done

# kill + dump: the flight recorder of a process that died mid-call
n=$((n + 1))
rm -f /tmp/m/mixed@killed.*
XRAYFDR_OPTIONS="mode=cpu keep=true buffer_size=4096 buffer_max=64" \
	./m_mixed 0 >/tmp/m/mixed@killed.out 2>/tmp/m/mixed@killed.err &
pid=$!
sleep 2
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "killed: no counts" >>/tmp/m/mixed@killed.out
id=$(sed -n 's/^xrayfdr: session \([0-9]*\) is kept.*/\1/p' /tmp/m/mixed@killed.err | tail -n 1)
if [ -n "$id" ] && xrayfdr-ctl dump "$id" -o /tmp/m/mixed@killed.xray --drop \
	>/tmp/m/mixed@killed.ctl 2>&1 && [ -s /tmp/m/mixed@killed.xray ]; then
	echo "ok $n mixed runs in CPU mode with keep=true, is killed, and xrayfdr-ctl dump $id writes its log"
else
	echo "not ok $n mixed runs in CPU mode with keep=true, is killed, and xrayfdr-ctl dump writes its log (session '$id')"
	sed 's/^/# /' /tmp/m/mixed@killed.err /tmp/m/mixed@killed.ctl 2>/dev/null
fi
for f in /tmp/m/mixed@killed.out /tmp/m/mixed@killed.xray /tmp/m/mixed@killed.ctl; do
	[ -e "$f" ] || continue
	echo "XRAYFDR-FILE-BEGIN m-$(basename "$f")"
	base64 "$f"
	echo "XRAYFDR-FILE-END"
done
