#!/bin/sh
# The main job, end to end: build a small program with XRay sleds, trace it
# with libxrayfdr (`xrayfdr record`), show the log, verify it with our
# reader and with llvm-xray, and account for where the time went (with
# llvm-xray and with our own tools: account, a flame graph, Perfetto JSON).
set -eu
BUILD=${BUILD:-build}
X=$BUILD/bin/xrayfdr
out=$BUILD/demo
mkdir -p "$out"
log=$out/demo.xray
CC=$(command -v clang || command -v clang-14 || true)
XRAY=$(command -v llvm-xray || command -v llvm-xray-14 || true)

if [ -t 1 ]; then
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	step() { printf '\n== %s\n' "$*"; }
fi
if [ -z "$CC" ]; then
	echo "demo: clang is not installed (make deps installs it)" >&2
	exit 1
fi

cat >"$out/demo.c" <<'EOF'
/* A small program to trace: primes, a sort and a recursion. */
#include <stdio.h>
#include <stdlib.h>

#define WORK __attribute__((noinline))

WORK static int is_prime(unsigned int n)
{
	for (unsigned int d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return n > 1;
}

WORK static unsigned int count_primes(unsigned int limit)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < limit; i++)
		n += is_prime(i);
	return n;
}

WORK static void insert(int *a, int n, int v)
{
	while (n > 0 && a[n - 1] > v) {
		a[n] = a[n - 1];
		n--;
	}
	a[n] = v;
}

WORK static int sorted_median(int n)
{
	int *a = malloc(sizeof(*a) * (size_t)n);
	int m;

	srand(1);
	for (int i = 0; i < n; i++)
		insert(a, i, rand() % 100000);
	m = a[n / 2];
	free(a);
	return m;
}

WORK static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
	printf("%u primes below 20000\n", count_primes(20000));
	printf("median of 3000 numbers: %d\n", sorted_median(3000));
	printf("fib(20) = %ld\n", fib(20));
	return 0;
}
EOF

step "1. build a program with XRay sleds, without LLVM's runtime"
echo "\$ clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -fnoxray-link-deps demo.c -o demo"
"$CC" -O2 -fxray-instrument -fxray-instruction-threshold=1 -fnoxray-link-deps \
	"$out/demo.c" -o "$out/demo"

step "2. run it under libxrayfdr: every call is recorded"
echo "\$ xrayfdr record -o $log $out/demo"
$X record -o "$log" "$out/demo"

step "3. the log's first records, with their byte offsets"
echo "\$ xrayfdr dump $log | head -n 14"
$X dump "$log" >"$out/dump.txt"
head -n 14 "$out/dump.txt"
echo "... ($(wc -l <"$out/dump.txt") lines in $out/dump.txt)"

step "4. verified by our reader and by LLVM's own tools"
echo "\$ xrayfdr dump --verify --quiet $log"
$X dump --verify --quiet "$log"
if [ -n "$XRAY" ]; then
	echo "\$ llvm-xray fdr-dump -verify $log"
	"$XRAY" fdr-dump -verify "$log" >/dev/null && echo "llvm-xray: valid"

	step "5. where the time went: llvm-xray account, top 6 by total time"
	echo "\$ llvm-xray account -instr_map=$out/demo -sort=sum -sortorder=dsc -top=6 $log"
	"$XRAY" account -instr_map="$out/demo" -sort=sum -sortorder=dsc -top=6 "$log"
else
	echo "llvm-xray is not installed (make deps installs it)"
fi

step "6. the same with xrayfdr account: the same numbers, plus self time"
echo "\$ xrayfdr account -m $out/demo --sort=sum --sortorder=dsc --top=6 $log"
$X account -q -m "$out/demo" --sort=sum --sortorder=dsc --top=6 "$log"

step "7. a flame graph of exclusive time, and a trace for Perfetto"
echo "\$ xrayfdr stack -m $out/demo -f svg -o $out/flame.svg $log"
$X stack -q -m "$out/demo" -f svg -o "$out/flame.svg" "$log"
echo "\$ xrayfdr convert -m $out/demo -f trace_event -o $out/demo.json $log"
$X convert -q -m "$out/demo" -f trace_event -o "$out/demo.json" "$log"
echo "open $out/flame.svg in a browser, $out/demo.json in ui.perfetto.dev or chrome://tracing"
