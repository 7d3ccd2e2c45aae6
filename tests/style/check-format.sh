#!/bin/sh
# Every C source in the repository is formatted with .clang-format: one
# TAP line per top-level area, listing the files that are not.
set -u
cd "$(dirname "$0")/../.."
if ! command -v clang-format >/dev/null; then
	echo "1..1"
	echo "not ok 1 - clang-format not installed (make deps)"
	exit 1
fi
areas=$(git ls-files '*.c' '*.h' '*.cc' '*.S' | cut -d/ -f1 | sort -u)
set -- $areas
echo "1..$#"
n=0 status=0
for area in "$@"; do
	n=$((n + 1))
	bad=$(git ls-files "$area" | grep -E '\.(c|h|cc)$' | while read -r f; do
		clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"
	done)
	if [ -z "$bad" ]; then
		echo "ok $n - $area/ is formatted with .clang-format"
	else
		status=1
		echo "not ok $n - $area/ has unformatted files (run clang-format -i on them)"
		echo "$bad" | sed 's/^/# /'
	fi
done
exit $status
