#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel's checkpatch.pl (--strict) over every file of the module and
# the uapi header: one TAP result per file.  checkpatch and its data files
# come from Debian's linux-source tarball ($BUILD/ksrc, see kmod/Build.mk).
# LINUX_VERSION_CODE is allowed: kmod/compat.h exists to hold it.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CHECKPATCH=$BUILD/ksrc/scripts/checkpatch.pl
files=$(git ls-files 'kmod/*.c' 'kmod/*.h' 'include/uapi/linux/*.h')
set -- $files
if [ ! -f "$CHECKPATCH" ]; then
	echo "1..1"
	echo "not ok 1 - $CHECKPATCH missing (make $BUILD/ksrc/.extracted)"
	exit 1
fi
echo "1..$#"
n=0 status=0
for f in "$@"; do
	n=$((n + 1))
	out=$(perl "$CHECKPATCH" --no-tree --strict --terse --show-types \
		--ignore LINUX_VERSION_CODE -f "$f" 2>&1)
	# --terse prints nothing at all for a clean file
	if [ -z "$out" ]; then
		echo "ok $n - $f is checkpatch-clean"
	else
		status=1
		echo "not ok $n - $f: checkpatch --strict"
		echo "$out" | grep -v '^total:' | sed 's/^/# /'
	fi
done
exit $status
