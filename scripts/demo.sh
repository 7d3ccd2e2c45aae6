#!/bin/sh
# The main job, end to end, on any machine: write an XRay FDR log with
# libxrayfdr, show it, verify it with our reader and with llvm-xray.
#
# (Until the tracing runtime lands, the log comes from `xrayfdr synth`, the
# library's writer driving a synthetic call tree on two threads.)
set -eu
BUILD=${BUILD:-build}
X=$BUILD/bin/xrayfdr
out=$BUILD/demo
mkdir -p "$out"
log=$out/sample.xray

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi

step "1. write a sample FDR log (version 5) with libxrayfdr's writer"
echo "\$ xrayfdr synth -o $log --threads 2 --calls 40 --args --events --migrate-every 25"
$X synth -o "$log" --threads 2 --calls 40 --args --events --migrate-every 25
ls -l "$log"

step "2. its records, with byte offsets (first 24 lines)"
echo "\$ xrayfdr dump $log"
$X dump "$log" >"$out/dump.txt"
head -n 24 "$out/dump.txt"
echo "... ($(wc -l <"$out/dump.txt") lines in $out/dump.txt)"

step "3. the same trace decoded into events (first 10)"
echo "\$ xrayfdr dump --events $log"
$X dump --events "$log" >"$out/events.txt"
head -n 10 "$out/events.txt"

step "4. verified by our reader and by LLVM's own tools"
echo "\$ xrayfdr dump --verify --quiet $log"
$X dump --verify --quiet "$log"
xray=$(command -v llvm-xray || command -v llvm-xray-14 || true)
if [ -n "$xray" ]; then
	echo "\$ llvm-xray fdr-dump -verify $log"
	"$xray" fdr-dump -verify "$log" >/dev/null && echo "llvm-xray: valid"
	echo "\$ llvm-xray convert --output-format=yaml $log | head"
	"$xray" convert --output-format=yaml "$log" | head -n 12
else
	echo "llvm-xray is not installed (make deps installs it)"
fi
