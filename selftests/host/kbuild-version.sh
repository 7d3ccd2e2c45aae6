#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kmod/Kbuild's oldest-kernel and compiler checks, read the way Kbuild
# reads it (with the kernel Makefile's VERSION, PATCHLEVEL, KERNELRELEASE
# and CC): a kernel older than 6.1 stops with one line naming the need,
# 6.1 and later pass it; a tree whose compiler is missing stops with one
# line naming it.
set -u
cd "$(dirname "$0")/../.."
# run from make check: the make below must not take the caller's jobserver
# (it says so on stderr, a second line)
unset MAKEFLAGS MFLAGS MAKELEVEL
echo "1..5"
kbuild() { # VERSION PATCHLEVEL [CC]
	make -s --no-print-directory -f kmod/Kbuild VERSION=$1 PATCHLEVEL=$2 \
		KERNELRELEASE="$1.$2.0-test" CC="${3:-cc}" 2>&1
}
one_line() { # N DESCRIPTION PATTERN OUTPUT: OUTPUT is one line matching PATTERN
	if [ "$(echo "$4" | wc -l)" -eq 1 ] && echo "$4" | grep -q "$3"; then
		echo "ok $1 - $2"
	else
		echo "not ok $1 - $2"
		echo "$4" | sed 's/^/# /'
	fi
}
one_line 1 "5.15: one line saying 6.1 or later is needed" \
	'xray_fdr needs Linux 6.1 or later; the kernel tree is 5.15.0-test' "$(kbuild 5 15)"
for v in "6 1" "6 12" "7 3"; do
	n=$((${n:-1} + 1))
	out=$(kbuild $v)
	if echo "$out" | grep -q 'needs Linux'; then
		echo "not ok $n - $v: refused"
		echo "$out" | sed 's/^/# /'
	else
		echo "ok $n - $(echo $v | tr ' ' .): passes the version check"
	fi
done
one_line 5 "a missing compiler: one line naming it" \
	'built with xrayfdr-no-such-gcc-14, which is not installed' \
	"$(kbuild 7 3 xrayfdr-no-such-gcc-14)"
