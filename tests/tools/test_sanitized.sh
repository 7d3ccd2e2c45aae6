#!/bin/sh
# The command-line and output suites again, against xrayfdr built with
# AddressSanitizer and UndefinedBehaviorSanitizer ($BUILD/san/bin/xrayfdr):
# any report, leaks included, makes a command fail and so its test.  Both
# suites' TAP is merged into one stream, renumbered.
set -u
BUILD=${BUILD:-build}
XRAYFDR=$BUILD/san/bin/xrayfdr
export BUILD XRAYFDR
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
here=$(dirname "$0")
if [ ! -x "$XRAYFDR" ]; then
	echo "1..1"
	echo "not ok 1 - $XRAYFDR is not built (make $XRAYFDR)"
	exit 1
fi
{
	sh "$here/test_cli.sh" | sed 's/^\(\(not \)\{0,1\}ok [0-9]* - \)/\1cli: /'
	/usr/bin/python3 "$here/test_outputs.py" |
		sed 's/^\(\(not \)\{0,1\}ok [0-9]* - \)/\1outputs: /'
} | awk '
	/^1\.\.[0-9]+$/ { next }
	/^(not )?ok [0-9]+/ { n++; sub(/ok [0-9]+/, "ok " n); if ($0 ~ /^not ok/) bad = 1 }
	{ print }
	END { print "1.." n; exit bad }'
