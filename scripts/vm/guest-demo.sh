#!/bin/sh
# The guest's half of `make vmdemo` (scripts/vm/vmdemo.sh): the four uses
# of the kernel module in one run, and a live snapshot.  runtime_guest is an instrumented
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

say "5. a live snapshot: the rings of a CPU-mode process that goes on running"
XRAYFDR_OPTIONS="mode=cpu" ./runtime_guest child killme >/tmp/live.out 2>&1 &
pid=$!
sleep 2
xrayfdr-ctl --json list >/tmp/live.list
id=$(sed -n "s/.*{\"id\":\([0-9]*\),\"pid\":$pid,.*/\1/p" /tmp/live.list)
echo "process $pid (session $id) has completed call $(cat /tmp/last)"
xrayfdr-ctl snapshot "$id" -o /tmp/live.xray
sleep 1
echo "process $pid goes on: it has completed call $(cat /tmp/last)"
xrayfdr-ctl snapshot "$id" -o /tmp/live2.xray
kill "$pid"
wait "$pid" 2>/dev/null

for f in threads onoff killed live live2; do
	echo "XRAYFDR-FILE-BEGIN $f.xray"
	base64 /tmp/$f.xray
	echo "XRAYFDR-FILE-END"
done
