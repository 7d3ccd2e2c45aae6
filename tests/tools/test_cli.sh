#!/bin/sh
# The xrayfdr command line: help, exit statuses, messages and output forms
# of every command, and what bad input of every format says, as a user
# meets them.  Prints TAP.
set -u
BUILD=${BUILD:-build}
# XRAYFDR: another build of the tool (test_sanitized.sh uses it)
X=${XRAYFDR:-$BUILD/bin/xrayfdr}
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

check "xrayfdr --help lists the commands" 0 "dump .*synth|synth" -- $X --help
for c in extract convert account stack graph replay; do
	check "$c --help" 0 "Usage: xrayfdr $c .*" -- $X $c --help
	check "$c --help names its exit statuses" 0 "Exit status: 0" -- $X help $c
	check "$c with no file is a usage error" 2 "expects .*FILE|BINARY|is required" -- $X $c
	check "$c rejects an unknown option" 2 "Usage: xrayfdr $c" -- $X $c --frobnicate x
done
check "cflags: clang's flags by default" 0 "^-fxray-instrument -fnoxray-link-deps$" -- $X cflags
check "cflags --gcc: GCC's entry and return nops, non-PIE" 0 "^-pg -mfentry -mnop-mcount -mrecord-mcount -minstrument-return=nop5 -mrecord-return -fno-pie$" -- $X cflags --gcc
check "cflags --gcc --ldflags" 0 "^-no-pie$" -- $X cflags --gcc --ldflags
check "cflags --pic without --gcc is a usage error" 2 "--pic is for --gcc" -- $X cflags --pic
check "cflags takes no arguments" 2 "takes no arguments" -- $X cflags prog.c
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
check "fdr-dump prints records as llvm-xray fdr-dump, without a header" 0 \
	"^<Buffer: size = [0-9]+ bytes>" -- $X fdr-dump "$tmp/good.xray"
check "fdr-dump --help" 0 "Usage: xrayfdr fdr-dump FILE" -- $X fdr-dump --help
check "fdr-dump -verify points to dump --verify" 2 "'xrayfdr dump --verify FILE'" -- \
	$X fdr-dump -verify "$tmp/good.xray"
check "fdr-dump without a file exits 2" 2 "expects exactly one FILE" -- $X fdr-dump
$X synth --basic -o "$tmp/basic-mode.xray" --calls 20 >/dev/null 2>&1
check "fdr-dump of a basic-mode log exits 2 and says why" 2 \
	"basic-mode.xray: --compat reads FDR logs only" -- $X fdr-dump "$tmp/basic-mode.xray"
check "dump --compat --json is refused" 2 "not with --json" -- \
	$X dump --compat --json "$tmp/good.xray"
head -c 200 "$tmp/good.xray" >"$tmp/cut.xray"
# LLVM's YAML writer wraps long flow mappings: a record on two lines
$X convert -f yaml "$tmp/good.xray" >"$tmp/flat.yaml"
sed 's/, cpu:/,\n      cpu:/' "$tmp/flat.yaml" >"$tmp/wrapped.yaml"
check "YAML: a record wrapped onto two lines reads as on one" 0 "^same$" -- \
	sh -c "grep -q '^      cpu:' '$tmp/wrapped.yaml' && $X account '$tmp/flat.yaml' >'$tmp/f.txt' && $X account '$tmp/wrapped.yaml' >'$tmp/w.txt' && cmp -s '$tmp/f.txt' '$tmp/w.txt' && echo same"
head -n 12 "$tmp/wrapped.yaml" | sed '$ s/ }$//' >"$tmp/open.yaml"
check "YAML: a record that never ends names the line it starts on" 1 "does not end \('}'\)" -- \
	$X account "$tmp/open.yaml"
printf -- '---\n- { id: 1, address: 0x10, function: 0x10, kind: function-enter }\n- { id: 3, address: 0x20, function: 0x20, kind: function-exit }\n' >"$tmp/gap-map.yaml"
check "-m: a YAML map that does not parse names its file and line" 2 "gap-map.yaml: line 3: an id skips ahead" -- \
	$X account -m "$tmp/gap-map.yaml" "$tmp/good.xray"
printf -- '---\n- { id: 1, address: 0x10, function: 0x10, kind: function-sideways }\n' >"$tmp/kind-map.yaml"
check "-m: a YAML map's unknown sled kind is named" 2 "kind-map.yaml: line 2: an unknown sled kind 'function-sideways'" -- \
	$X account -m "$tmp/kind-map.yaml" "$tmp/good.xray"
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
# The analysis commands on good and bad input of each format.
$X synth -o "$tmp/s.xray" --threads 2 --calls 300 --sched --events >/dev/null 2>&1
check "convert needs --output-format" 2 "output-format is required" -- $X convert "$tmp/s.xray"
check "convert names a bad output format" 2 "unknown output format 'xml'" -- \
	$X convert -f xml "$tmp/s.xray"
check "account names a bad sort field" 2 "unknown sort field 'speed'" -- \
	$X account --sort=speed "$tmp/s.xray"
check "graph names a bad statistic" 2 "unknown statistic 'avg'" -- $X graph -e avg "$tmp/s.xray"
for c in account stack graph replay; do
	check "$c names a bad --min-duration" 2 "min-duration wants a time such as 5us.*not '5parsecs'" -- \
		$X $c --min-duration 5parsecs "$tmp/s.xray"
done
check "convert -f yaml refuses --min-duration: a log has no calls" 2 \
	"min-duration leaves out calls, which yaml does not have: use trace_event" -- \
	$X convert -f yaml --min-duration 5us "$tmp/s.xray"
check "account --help tells of --min-duration" 0 "--min-duration=TIME" -- $X account --help
check "account names a bad --jobs" 2 "jobs wants a number from 1 to 64, not '0'" -- \
	$X account -j0 "$tmp/s.xray"
check "stack names a bad --jobs" 2 "jobs wants a number from 1 to 64, not 'x'" -- \
	$X stack -j x "$tmp/s.xray"
check "graph names a bad --jobs" 2 "jobs wants a number from 1 to 64, not '65'" -- \
	$X graph --jobs 65 "$tmp/s.xray"
check "account of a missing file exits 2 and names it" 2 "nope.xray: No such file" -- \
	$X account "$tmp/nope.xray"
check "convert of a cut log: offset and rule" 1 "offset [0-9]+ \(0x[0-9a-f]+\): .*\[truncated\]" -- \
	$X convert -f yaml "$tmp/cut.xray"
check "account --keep-going says what it skipped" 1 "1 errors; skipped [0-9]+ bytes in 1 buffers" -- \
	$X account -k "$tmp/cut.xray"
check "extract of a binary without sleds" 1 "no xray_instr_map section" -- $X extract /bin/sh
check "account --instr-map of a binary without sleds" 2 "no xray_instr_map section" -- \
	$X account -m /bin/sh "$tmp/s.xray"
check "account shows on/off-CPU columns for scheduler events" 0 "on-cpu +off-cpu" -- \
	$X account "$tmp/s.xray"
check "stack -f svg writes an SVG" 0 "^<svg" -- $X stack -f svg "$tmp/s.xray"
check "convert -f trace_event writes JSON" 0 '^\{"displayTimeUnit"' -- \
	$X convert -f trace_event "$tmp/s.xray"
check "convert -f fdr --fdr-version 1 refuses typed events, naming the offset" 1 \
	"typed-event at offset [0-9]+ cannot be written in FDR version 1" -- \
	$X convert -f fdr --fdr-version 1 -o "$tmp/v1.xray" "$tmp/s.xray"

# llvm-xray YAML input
$X convert -f yaml -o "$tmp/s.yaml" "$tmp/s.xray"
check "account reads YAML" 0 "Functions with latencies: [1-9]" -- $X account "$tmp/s.yaml"
sed '12s/kind: [a-z-]*/kind: function-sideways/' "$tmp/s.yaml" >"$tmp/bad.yaml"
check "YAML: a bad kind names the line" 1 "bad.yaml: line 12: kind: unknown record kind 'function-sideways'" -- \
	$X account "$tmp/bad.yaml"
check "YAML --keep-going skips the line and says so" 1 "line 12: .*\(line skipped\).*|1 errors; skipped [0-9]+ bytes in 1 lines" -- \
	$X account -k "$tmp/bad.yaml"
sed '10s/tsc: [0-9]*/tsc: -3/' "$tmp/s.yaml" >"$tmp/bad2.yaml"
check "YAML: a negative tsc names the field" 1 "line 10: tsc: '-3' is not a number" -- \
	$X convert -f yaml "$tmp/bad2.yaml"
printf -- '---\nheader:\n  version: 1\nrecords:\n' >"$tmp/bad3.yaml"
check "YAML: an incomplete header says what is missing" 1 "line 4: the header needs version, type" -- \
	$X stack "$tmp/bad3.yaml"
printf -- '---\nheader:\n  version: 1\n  type: 0\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1000\nrecords:\n  - { type: 0, func-id: 1, cpu: 0, kind: function-enter, tsc: 5, data: "\\q" }\n' >"$tmp/bad4.yaml"
check "YAML: an unknown escape names the line" 1 "line 9: unknown escape" -- $X account "$tmp/bad4.yaml"

# TraceLog input
$X convert -f tracelog -o "$tmp/s.tl" "$tmp/s.xray"
check "account reads TraceLog" 0 "Functions with latencies: [1-9]" -- $X account "$tmp/s.tl"
printf 'thr crt 0x1 0x00000000\nsam str 0x00000000 5 0 1:1 0x3\n' >"$tmp/bad.tl"
check "TraceLog: a stack change that does not fit names the line" 1 "bad.tl: line 2: sam str: 1:1 does not fit the thread's 0 frames" -- \
	$X account "$tmp/bad.tl"
printf 'sam str 0x00000007 5 0 0:0 0x3\n' >"$tmp/bad2.tl"
check "TraceLog: a sample of an unknown thread" 1 "line 1: sam str: thread 0x00000007 was never created" -- \
	$X stack "$tmp/bad2.tl"
printf 'thr crt 0x1 0x00000000\nthr aos 0x00000000 0x10\nsam str 0x00000000 5 0 0:0 0x3\nthr aos 0x00000000 0x20\nsam str 0x00000000 7 0 0:1\n' >"$tmp/moved.tl"
check "TraceLog: a thread moved to another OS thread keeps its calls whole" 0 "Functions with latencies: 1" -- \
	$X account "$tmp/moved.tl"
printf 'thr crt 0x5 0x00000000\nthr crt 0x5 0x00000001\nsam str 0x00000000 5 0 0:0 0x3\nsam str 0x00000001 6 0 0:0 0x4\n' >"$tmp/twice.tl"
check "TraceLog: two threads on one OS thread id are an error naming the line" 1 "twice.tl: line 4: sam str: thread 0x00000001 has the OS thread id 5 of another" -- \
	$X account "$tmp/twice.tl"
printf -- '---\nheader:\n  version: 1\n  type: 1\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1000\nrecords:\n  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-exit, tsc: 5, data: "" }\n' >"$tmp/exit.yaml"
# the unmatched exit, then a call
cp "$tmp/exit.yaml" "$tmp/exit2.yaml"
for r in "0, func-id: 2, cpu: 0, thread: 5, kind: function-enter, tsc: 6" \
	"0, func-id: 2, cpu: 0, thread: 5, kind: function-exit, tsc: 7"; do
	echo "  - { type: $r, data: \"\" }" >>"$tmp/exit2.yaml"
done
# the window begins inside 1; 3 throws out of 4, caught in 2
sed '$d' "$tmp/exit.yaml" >"$tmp/window.yaml"
for r in "0, func-id: 1, cpu: 0, thread: 5, kind: function-exit, tsc: 5" \
	"0, func-id: 2, cpu: 0, thread: 5, kind: function-enter, tsc: 6" \
	"0, func-id: 3, cpu: 0, thread: 5, kind: function-enter, tsc: 7" \
	"0, func-id: 4, cpu: 0, thread: 5, kind: function-enter, tsc: 8" \
	"0, func-id: 3, cpu: 0, thread: 5, kind: function-exit, tsc: 9" \
	"0, func-id: 2, cpu: 0, thread: 5, kind: function-exit, tsc: 10"; do
	echo "  - { type: $r, data: \"\" }" >>"$tmp/window.yaml"
done
for c in account stack graph; do
	check "$c --strict: an unmatched exit in YAML names its line" 1 "exit.yaml: record at line 9: thread 5: exit of function 1" -- \
		$X $c --strict "$tmp/exit.yaml"
	check "$c --strict -k: an unmatched exit is a warning, exit 0 (llvm-xray -k)" 0 "skipped 1 exits|1 exits matched no entry" -- \
		$X $c --strict -k "$tmp/exit2.yaml"
	check "$c: an exit with no entry is of a call entered before the trace, not an error" 0 \
		"window.yaml: 1 exits of calls entered before the trace began \\(not counted\\), 1 calls ended by unwinding" -- \
		$X $c "$tmp/window.yaml"
done
$X convert -f fdr -o "$tmp/window.xray" "$tmp/window.yaml" 2>/dev/null
check "dump --verify: a window that begins inside a call is no warning, said once as a count" 0 \
	"valid: .* 0 errors, 0 warnings; 1 exits of calls entered before the window, in 1 threads" -- \
	$X dump --verify --quiet "$tmp/window.xray"
# llvm-xray's command lines, one-dash long options included, run as they are
for c in account stack graph; do
	check "$c takes llvm-xray's one-dash long options" 0 "^same$" -- \
		sh -c "$X $c -keep-going -output=$tmp/one.out $tmp/window.yaml 2>/dev/null &&
			$X $c --keep-going --output=$tmp/two.out $tmp/window.yaml 2>/dev/null &&
			cmp $tmp/one.out $tmp/two.out && echo same"
done
check "account -sort sum -sortorder dsc -top 1: one-dash options with their values apart" 0 "^ +2 +1 \\[" -- \
	$X account -sort sum -sortorder dsc -top 1 "$tmp/window.yaml"
check "convert -output-format=yaml -demangle" 0 "^header:" -- \
	$X convert -output-format=yaml -demangle "$tmp/window.yaml"
check "convert -f=yaml: a short option's value after '=', as llvm-xray takes it" 0 "^header:" -- \
	$X convert -f=yaml "$tmp/window.yaml"
check "one-dash short options still group: -kd" 0 "Functions with latencies" -- \
	$X account -kd "$tmp/window.yaml"
check "a one-dash word that is no long option is still short options (-s ortx)" 2 "unknown sort field 'ortx'" -- \
	$X account -sortx "$tmp/window.yaml"
printf 'prf zzz 1\n' >"$tmp/bad3.tl"
check "TraceLog: an unknown record" 1 "line 1: unknown record 'prf zzz'" -- $X graph "$tmp/bad3.tl"

# What a new user meets in the first hour
check "account --sort=func sorts rows by name" 0 "^ +1 .*#1\$" -- \
	sh -c "$X account --sort=func '$tmp/s.xray' | sed -n 3p"
check "account --sort=func --sortorder=dsc: the names in reverse" 0 "^same\$" -- \
	sh -c "$X account --sort=func '$tmp/s.xray' | tail -n +3 | tac >'$tmp/asc' &&
		$X account --sort=func --sortorder=dsc '$tmp/s.xray' | tail -n +3 >'$tmp/dsc' &&
		test -s '$tmp/asc' && cmp '$tmp/asc' '$tmp/dsc' && echo same"
# times that add up past 64 bits (a hostile log) stop there, and say so
printf -- '---\nheader:\n  version: 1\n  type: 0\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1\nrecords:\n' >"$tmp/huge.yaml"
for r in "enter, tsc: 1" "exit, tsc: 18446744073709551000" "enter, tsc: 18446744073709551001" "exit, tsc: 18446744073709551010"; do
	echo "  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-$r, data: \"\" }" >>"$tmp/huge.yaml"
done
check "stack: durations past 2^63 ticks saturate, not wrap negative" 0 "^#0 +#1 +2 +9223372036854775807\$" -- \
	$X stack "$tmp/huge.yaml"
check "stack: saturated sums are said" 0 "huge.yaml: warning: the times of 1 stacks add up past" -- \
	$X stack "$tmp/huge.yaml"
check "convert -f tracelog: a time past int64_t is the largest, not INT64_MIN" 0 "^sam str 0x00000000 9223372036854775807 0 0:1\$" -- \
	$X convert -f tracelog "$tmp/huge.yaml"
check "convert -f tracelog: clamped times are said" 0 "warning: 3 times do not fit TraceLog's 64-bit fields" -- \
	$X convert -f tracelog "$tmp/huge.yaml"
# instrumentation maps as llvm-xray's own tests write them
printf '# A map with comment lines first, and no version or names\n\n---\n- { id: 1, address: 0x1, function: 0x1, kind: function-enter, always-instrument: true}\n- { id: 1, address: 0x2, function: 0x1, kind: function-exit, always-instrument: true}\n- { id: 2, address: 0x3, function: 0x3, kind: function-enter }\n- { id: 2, address: 0x4, function: 0x3, kind: function-exit }\n...\n' >"$tmp/llvm-map.yaml"
check "-m: a YAML map with comments before '---' and without the newer fields" 0 "@\\(1\\)" -- \
	$X account -m "$tmp/llvm-map.yaml" "$tmp/s.xray"
grep -v -e '^---' -e '^#' "$tmp/llvm-map.yaml" >"$tmp/bare-map.yaml"
check "-m: a YAML map without '---' (YAML's document marker is optional)" 0 "@\\(3\\)" -- \
	$X account -m "$tmp/bare-map.yaml" "$tmp/s.xray"
for c in account stack graph replay "convert -f yaml" "convert -f folded"; do
	check "$c --tid of a thread the log does not have is an error naming it" 2 \
		"s.xray: --tid 99999: no thread has that id" -- $X $c --tid 99999 "$tmp/s.xray"
done

# symbols from the objects the log's info event names, checked by build id
if command -v clang >/dev/null; then
	printf '__attribute__((xray_always_instrument)) int twice(int x) { return 2 * x; }\nint main(int c, char **v) { (void)v; return twice(c); }\n' >"$tmp/prog.c"
	clang -fxray-instrument -fnoxray-link-deps -Wl,--build-id=0x1234abcd -o "$tmp/prog" "$tmp/prog.c" &&
		clang -fxray-instrument -fnoxray-link-deps -Wl,--build-id=0x56789abc -o "$tmp/other" "$tmp/prog.c" &&
		clang -fxray-instrument -fnoxray-link-deps -Wl,--build-id=none -o "$tmp/noid" "$tmp/prog.c"
	info_log() { # LOG PROGRAM BUILD-ID: a call of function 1 and an info event
		{
			printf -- '---\nheader:\n  version: 1\n  type: 1\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1000\nrecords:\n'
			echo '  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-enter, tsc: 5, data: "" }'
			echo '  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-exit, tsc: 9, data: "" }'
			printf '  - { type: 0, func-id: 0, cpu: 0, thread: 5, kind: custom-event, tsc: 10, data: "xrayfdr-info 1\\nmode=thread\\nobject=0 1 0x0 %s\\nbuild_id=%s\\n" }\n' "$2" "$3"
		} >"$1.yaml"
		$X convert -q -f fdr -o "$1" "$1.yaml"
	}
	info_log "$tmp/named.xray" "$tmp/prog" 1234abcd
	check "without -m: names from the program the log names, same build id" 0 "<invalid>:0:0: twice|prog.c:[0-9]+:[0-9]+: twice" -- \
		$X account "$tmp/named.xray"
	check "-m of another build of it: an error naming both build ids" 2 \
		"-m $tmp/other: its build id is 56789abc, but .*named.xray was recorded from $tmp/prog, build id 1234abcd" -- \
		$X account -m "$tmp/other" "$tmp/named.xray"
	check "--no-build-id-check: -m is used all the same, with a warning" 0 "^warned twice\$" -- \
		sh -c "$X account --no-build-id-check -m '$tmp/other' '$tmp/named.xray' 2>&1 |
			sed -n -e 's/.*warning: -m .*other: .*its names may be wrong.*/warned/p' -e 's/.*: twice\$/twice/p' | paste -sd' '"
	check "-m without a build id: a warning" 0 "noid has no build id" -- \
		$X stack -m "$tmp/noid" "$tmp/named.xray"
	info_log "$tmp/changed.xray" "$tmp/prog" 99999999
	check "without -m: a program rebuilt since is not used, and that is said" 0 \
		"warning: .*prog has changed since the log was recorded \\(build id 1234abcd, the log's 99999999\\)" -- \
		$X graph "$tmp/changed.xray"
else
	n=$((n + 1))
	echo "ok $n - symbols from the log's objects # SKIP clang is not installed"
fi

# progress on a terminal (script(1) gives the command one)
if command -v script >/dev/null; then
	$X synth -o "$tmp/p.xray" --size 64M >/dev/null 2>&1
	check "a progress line on a terminal" 0 "reading .*p.xray: +[0-9]+% \\([0-9]+ MiB of 64 MiB\\)" -- \
		script -qec "$X account '$tmp/p.xray' >/dev/null" /dev/null
	check "no progress line with --quiet" 0 "^done$" -- \
		sh -c "script -qec \"$X account -q '$tmp/p.xray' >/dev/null\" /dev/null; echo done"
else
	n=$((n + 1))
	echo "ok $n - a progress line on a terminal # SKIP script(1) is not installed"
fi

echo "1..$n"
exit $status
