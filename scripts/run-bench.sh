#!/bin/sh
# Run the benchmarks registered by the Build.mk files (BENCH_SUITES entries
# NAME:EXECUTABLE).  Each prints its own table of figures and ratios against
# the peers it runs side by side; nothing here passes or fails on a time.
# Exit status: non-zero only if a benchmark could not run.
set -u
BUILD=${BUILD:-build}
export BUILD
if [ $# -eq 0 ]; then
	echo "bench: no benchmarks are registered yet"
	exit 0
fi
status=0
for spec in "$@"; do
	name=${spec%%:*}
	cmd=${spec#*:}
	printf '\n== %s (load: %s)\n' "$name" "$(cut -d' ' -f1-3 /proc/loadavg)"
	if ! "$cmd"; then
		echo "bench: $name failed" >&2
		status=1
	fi
done
exit $status
