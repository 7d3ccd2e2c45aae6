#!/bin/sh
# The objects of the xrayfdr tool use each other in layers, without a
# cycle: an object that uses a global another defines sits above it
# (scripts/object-deps.py says which uses which, from nm).  The objects
# are those the tool is linked from, as tools/Build.mk lists them.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
list=$BUILD/obj/tools/objects.list
echo "1..2"
if ! [ -s "$list" ]; then
	echo "not ok 1 - the tool's objects are listed in $list (make first)"
	echo "not ok 2 - no cycle among the tool's objects (none listed)"
	exit 1
fi
echo "ok 1 - the tool's objects are listed in $list"
out=$("$PYTHON" scripts/object-deps.py "@$list" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc -eq 0 ]; then
	echo "ok 2 - no cycle among the tool's objects"
else
	echo "not ok 2 - the tool's objects use each other in a cycle"
	exit 1
fi
