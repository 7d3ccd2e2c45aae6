#!/bin/sh
# Seed the fuzz corpus with small valid logs of every flavour from
# `xrayfdr synth`: each FDR version, basic mode, both byte orders, with
# arguments, events, TSC wraps and small buffers.
set -eu
BUILD=${BUILD:-build}
out=$BUILD/fuzz/corpus-reader
mkdir -p "$out"
synth() { "$BUILD/bin/xrayfdr" synth --calls 12 --threads 2 --depth 4 "$@"; }
for v in 1 2 3 4 5; do
	synth -V $v -o "$out/fdr-v$v" --buffer-size 256
	synth -V $v -o "$out/fdr-v$v-be" --big-endian --buffer-size 256 --seed 2
	synth -V $v -o "$out/fdr-v$v-all" --args --events --wrap-every 5 \
		--migrate-every 3 --buffer-size 256 --seed 3
done
synth --basic -o "$out/basic" --args
synth --basic -o "$out/basic-be" --args --big-endian --seed 4

# instrumentation maps: an 8-byte section address, then real sections
mkdir -p "$BUILD/fuzz/corpus-instr_map"
tmp=$(mktemp -d)
printf 'int f(int x) { return x + 1; }\nint main(int c, char **v) { (void)v; return f(c); }\n' >"$tmp/t.c"
if clang -O1 -fxray-instrument -fxray-instruction-threshold=1 "$tmp/t.c" -o "$tmp/t" 2>/dev/null; then
	addr=$(readelf -SW "$tmp/t" | awk '$2 == "xray_instr_map" { print $4 }')
	off=$(readelf -SW "$tmp/t" | awk '$2 == "xray_instr_map" { print $5 }')
	size=$(readelf -SW "$tmp/t" | awk '$2 == "xray_instr_map" { print $6 }')
	{
		printf '%016x' "0x$addr" | sed 's/../& /g' | awk '{ for (i = NF; i >= 1; i--) printf "\\x%s", $i }' | xargs -0 printf
		tail -c +$((0x$off + 1)) "$tmp/t" | head -c $((0x$size))
	} >"$BUILD/fuzz/corpus-instr_map/pie"
fi
# logs the runtime writes, with a checksum per buffer (fdr-format.rst,
# "Checksums"): version 5 and 1, and one with a flipped bit in a record
printf '#include <pthread.h>\nvolatile long s;\n__attribute__((xray_always_instrument, noinline)) void f(long i) { s += i; }\nstatic void *w(void *a) { for (long i = 0; i < 30; i++) f(i); return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, w, 0); w(0); pthread_join(t, 0); return 0; }\n' >"$tmp/s.c"
if clang -O1 -fxray-instrument -fnoxray-link-deps -pthread "$tmp/s.c" -o "$tmp/s" 2>/dev/null; then
	"$BUILD/bin/xrayfdr" record -q -b 256 -o "$out/runtime-v5" -- "$tmp/s" &&
		"$BUILD/bin/xrayfdr" record -q -b 256 -V 1 -o "$out/runtime-v1" -- "$tmp/s" &&
		python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[120] ^= 4; open(sys.argv[2], "wb").write(d)' \
			"$out/runtime-v5" "$out/runtime-v5-damaged"
fi
rm -rf "$tmp"

# llvm-xray YAML and TraceLog text: what `xrayfdr convert` writes from small
# logs (flow records, arguments, payloads with escapes), and a block-style
# YAML record as people write them by hand.
X=$BUILD/bin/xrayfdr
mkdir -p "$BUILD/fuzz/corpus-yaml" "$BUILD/fuzz/corpus-tracelog"
for f in "$out/fdr-v5-all" "$out/fdr-v3" "$out/basic"; do
	name=${f##*/}
	"$X" convert -q -f yaml -o "$BUILD/fuzz/corpus-yaml/$name" "$f"
	"$X" convert -q -f tracelog -o "$BUILD/fuzz/corpus-tracelog/$name" "$f"
done
synth -o "$tmp.sched" --sched --seed 5 && {
	"$X" convert -q -f tracelog -o "$BUILD/fuzz/corpus-tracelog/sched" "$tmp.sched"
	rm -f "$tmp.sched"
}
printf -- '---\nheader:\n  version: 1\n  type: 1\n  constant-tsc: true\n  nonstop-tsc: false\n  cycle-frequency: 1000\nrecords:\n  - type: 0\n    func-id: 3\n    cpu: 1\n    thread: 7\n    kind: function-enter-arg\n    args: [ 1, 0x2 ]\n    tsc: 10\n  - { type: 4, func-id: 3, cpu: 1, kind: typed-event, tsc: 12, data: "a\\x01\\u00e9\\N" }\n  - { type: 0, func-id: 3, cpu: 1, kind: function-exit, tsc: 20, data: '\''it'\'''\''s'\'' }\n...\n' >"$BUILD/fuzz/corpus-yaml/block"

# Thread names (XFTN custom events, lib/include/xrayfdr/fdr.h): the
# shortest and longest names, a rename, as YAML and as FDR logs.
printf -- '---\nheader:\n  version: 1\n  type: 1\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1000\nrecords:\n  - { type: 0, func-id: 0, cpu: 1, thread: 7, process: 5, kind: custom-event, tsc: 10, data: "XFTN\\x07\\0\\0\\0a" }\n  - { type: 0, func-id: 3, cpu: 1, thread: 7, process: 5, kind: function-enter, tsc: 10 }\n  - { type: 0, func-id: 3, cpu: 1, thread: 7, process: 5, kind: custom-event, tsc: 12, data: "XFTN\\x07\\0\\0\\0alpha-renamed" }\n  - { type: 0, func-id: 3, cpu: 1, thread: 7, process: 5, kind: function-exit, tsc: 20 }\n  - { type: 0, func-id: 0, cpu: 0, thread: 8, process: 5, kind: custom-event, tsc: 11, data: "XFTN\\x08\\0\\0\\0fifteen-bytes!!" }\n...\n' >"$BUILD/fuzz/corpus-yaml/thread-names"
"$X" convert -q -f fdr -o "$out/thread-names" "$BUILD/fuzz/corpus-yaml/thread-names"
"$X" convert -q -f fdr --fdr-version 1 -o "$out/thread-names-v1" "$BUILD/fuzz/corpus-yaml/thread-names"

# The pipelines (fuzz_pipeline): a few logs of each kind the commands read,
# and times that add up past 64 bits.
mkdir -p "$BUILD/fuzz/corpus-pipeline"
for f in "$out/fdr-v5-all" "$out/fdr-v1" "$out/fdr-v3-be" "$out/basic" "$out/thread-names" \
	"$out/runtime-v5" "$out/runtime-v5-damaged" \
	"$BUILD/fuzz/corpus-yaml/fdr-v5-all" "$BUILD/fuzz/corpus-tracelog/fdr-v5-all"; do
	[ -f "$f" ] && cp "$f" "$BUILD/fuzz/corpus-pipeline/$(basename "$(dirname "$f")")-${f##*/}"
done
# a snapshot a trigger took: its info event says what fired (replay
# --around-trigger)
printf -- '---\nheader:\n  version: 1\n  type: 1\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1000\nrecords:\n  - { type: 0, func-id: 3, cpu: 1, thread: 7, process: 5, kind: function-enter, tsc: 10 }\n  - { type: 0, func-id: 3, cpu: 1, thread: 7, process: 5, kind: function-exit, tsc: 20 }\n  - { type: 0, func-id: 0, cpu: 1, thread: 7, process: 5, kind: custom-event, tsc: 21, data: "xrayfdr-info 1\\ntsc_hz=1000\\nsnapshot=trigger\\ntrigger=f>1ms\\ntrigger_tid=7\\ntrigger_function=3\\ntrigger_duration_ns=10000000\\ntrigger_tsc=20\\n" }\n...\n' >"$BUILD/fuzz/corpus-pipeline/trigger.yaml"
"$X" convert -q -f fdr -o "$BUILD/fuzz/corpus-pipeline/trigger" "$BUILD/fuzz/corpus-pipeline/trigger.yaml"
printf -- '---\nheader:\n  version: 1\n  type: 0\n  constant-tsc: true\n  nonstop-tsc: true\n  cycle-frequency: 1\nrecords:\n  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-enter, tsc: 1 }\n  - { type: 0, func-id: 1, cpu: 0, thread: 5, kind: function-exit, tsc: 18446744073709551000 }\n...\n' >"$BUILD/fuzz/corpus-pipeline/huge-times"

# GCC's site tables (fuzz_gcc_map): small GCC builds with the flags of
# README, non-PIE and as an object file; a PIC shared object whose tables
# need relocations.
mkdir -p "$BUILD/fuzz/corpus-gcc_map"
tmp=$(mktemp -d)
printf 'int g(int x);\n__attribute__((noinline)) int f(int x) { return x + 1; }\nint h(int x) { return g(x); }\nint g(int x) { if (x > 3) return f(x) * 2; return x; }\nint main(int c, char **v) { (void)v; return h(c) + f(c); }\n' >"$tmp/t.c"
gflags="-pg -mfentry -mrecord-mcount -minstrument-return=nop5 -mrecord-return"
if gcc -O2 $gflags -mnop-mcount -fno-pie -no-pie -s "$tmp/t.c" -o "$BUILD/fuzz/corpus-gcc_map/nopie" 2>/dev/null; then
	gcc -O0 $gflags -mnop-mcount -fno-pie -c "$tmp/t.c" -o "$BUILD/fuzz/corpus-gcc_map/object.o"
	gcc -O2 $gflags -fPIC -shared -s "$tmp/t.c" -o "$BUILD/fuzz/corpus-gcc_map/pic.so" 2>/dev/null || :
fi
rm -rf "$tmp"
