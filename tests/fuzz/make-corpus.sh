#!/bin/sh
# Seed the fuzz corpus with small valid logs of every flavour from
# `xrayfdr synth`: each FDR version, basic mode, both byte orders, with
# arguments, events, TSC wraps and small buffers.
set -eu
BUILD=${BUILD:-build}
out=$BUILD/fuzz/corpus
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
