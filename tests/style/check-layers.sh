#!/bin/sh
# The objects of the library and of the xrayfdr tool use each other in
# layers, without a cycle: an object that uses a global another defines
# sits above it (scripts/object-deps.py says which uses which, from nm).
# The objects are those each is linked from, as tools/Build.mk lists
# them.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
echo "1..4"
n=0 status=0
for what in lib:library tools:tool; do
	list=$BUILD/obj/${what%%:*}/objects.list
	name=${what#*:}
	n=$((n + 1))
	if ! [ -s "$list" ]; then
		echo "not ok $n - the $name's objects are listed in $list (make first)"
		n=$((n + 1))
		echo "not ok $n - no cycle among the $name's objects (none listed)"
		status=1
		continue
	fi
	echo "ok $n - the $name's objects are listed in $list"
	n=$((n + 1))
	out=$("$PYTHON" scripts/object-deps.py "@$list" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		echo "ok $n - no cycle among the $name's objects"
	else
		echo "not ok $n - the $name's objects use each other in a cycle"
		status=1
	fi
done
exit $status
