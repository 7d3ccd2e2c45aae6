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
rm -rf "$tmp"
