#!/bin/sh
# The xrayfdr command line: help, exit statuses, messages and output forms
# of `dump` and `synth`, as a user meets them.  Prints TAP.
set -u
BUILD=${BUILD:-build}
X=$BUILD/bin/xrayfdr
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 status=0

# check DESCRIPTION EXPECTED-STATUS PATTERN -- COMMAND...: the command exits
# with EXPECTED-STATUS and its stdout+stderr match the grep -E PATTERN.
check() {
	desc=$1 want=$2 pattern=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	got=$?
	n=$((n + 1))
	if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$tmp/out"; then
		echo "ok $n - $desc"
	else
		status=1
		echo "not ok $n - $desc (exit $got, want $want; pattern '$pattern')"
		head -n 5 "$tmp/out" | sed 's/^/# /'
	fi
}

echo "1..16"
check "xrayfdr --help lists the commands" 0 "dump .*synth|synth" -- $X --help
check "xrayfdr with no command is a usage error" 2 "Usage: xrayfdr" -- $X
check "an unknown command says so" 2 "'frobnicate' is not a command" -- $X frobnicate
check "xrayfdr help dump prints dump's help" 0 "Usage: xrayfdr dump" -- $X help dump
check "dump --help" 0 "Exit status: 0 valid, 1 invalid, 2 usage" -- $X dump --help
check "synth --help" 0 "Usage: xrayfdr synth" -- $X synth --help
check "synth rejects a bad value, naming the option" 2 "bad value 'x' for --threads" -- \
	$X synth -o "$tmp/a" --threads x
check "synth writes a log" 0 "^written$" -- \
	sh -c "$X synth -o '$tmp/good.xray' --args --events --calls 50 && test -s '$tmp/good.xray' && echo written"
check "dump --verify of a valid log exits 0" 0 "valid: .* 0 errors" -- \
	$X dump --verify --quiet "$tmp/good.xray"
check "dump of a missing file exits 2 and names it" 2 "nope.xray: No such file" -- \
	$X dump "$tmp/nope.xray"
check "dump of a directory exits 2" 2 "Is a directory" -- $X dump "$tmp"
head -c 200 "$tmp/good.xray" >"$tmp/cut.xray"
check "dump --verify of a cut log exits 1 with offset and rule" 1 \
	"offset [0-9]+ \(0x[0-9a-f]+\): .*\[truncated\]" -- $X dump --verify --quiet "$tmp/cut.xray"
check "dump --keep-going reports what it skipped" 1 "INVALID: .* 1 errors" -- \
	$X dump --keep-going --quiet "$tmp/cut.xray"
printf 'not an xray log at all, just text' >"$tmp/text"
check "dump of a text file says it is not an XRay log" 1 "not an XRay log \[header-type\]" -- \
	$X dump "$tmp/text"
check "dump reads standard input" 0 "valid" -- sh -c "$X dump --verify --quiet - <'$tmp/good.xray'"
$X dump --events --json "$tmp/good.xray" >"$tmp/json" 2>&1
n=$((n + 1))
if /usr/bin/python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/json" 2>"$tmp/err" &&
	[ "$(wc -l <"$tmp/json")" -gt 50 ]; then
	echo "ok $n - dump --events --json prints one JSON object per line"
else
	status=1
	echo "not ok $n - dump --events --json prints one JSON object per line"
	sed 's/^/# /' "$tmp/err" | head -n 5
fi
exit $status
