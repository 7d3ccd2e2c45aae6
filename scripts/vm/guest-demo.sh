#!/bin/sh
# The guest's half of `make vmdemo` (scripts/vm/vmdemo.sh): the four uses
# of the kernel module in one run.  runtime_guest is an instrumented
# program linked with libxrayfdr.a; as "runtime_guest child NAME" it runs
# one workload traced by the environment's XRAYFDR_OPTIONS.
cd /selftests
say() { printf '\n=== %s\n' "$*"; }

say "the module is loaded: cat /sys/kernel/xrayfdr/stats"
cat /sys/kernel/xrayfdr/stats

say "1. record 8 threads in CPU mode (the module's per-CPU rings)"
XRAYFDR_OPTIONS="mode=cpu verbosity=1 output=/tmp/threads.xray" \
	./runtime_guest child threads
say "2. the same, a sleep and a spin: the scheduler's switches land in the log"
XRAYFDR_OPTIONS="mode=cpu verbosity=1 output=/tmp/onoff.xray" \
	./runtime_guest child onoff

say "xrayfdr-ctl status, and the statistics again"
xrayfdr-ctl status
cat /sys/kernel/xrayfdr/stats

say "3. a process that keeps its rings (keep=true) is killed with SIGKILL"
XRAYFDR_OPTIONS="mode=cpu keep=true" ./runtime_guest child killme \
	>/tmp/killme.out 2>&1 &
pid=$!
sleep 2
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "process $pid: killed by SIGKILL; it had completed call $(cat /tmp/last)"
cat /tmp/killme.out
xrayfdr-ctl list
id=$(sed -n 's/^xrayfdr: session \([0-9]*\) is kept.*/\1/p' /tmp/killme.out)

say "4. the crash recorder: xrayfdr-ctl dump $id -o /tmp/killed.xray --drop"
xrayfdr-ctl dump "$id" -o /tmp/killed.xray --drop
xrayfdr-ctl list

for f in threads onoff killed; do
	echo "XRAYFDR-FILE-BEGIN $f.xray"
	base64 /tmp/$f.xray
	echo "XRAYFDR-FILE-END"
done
