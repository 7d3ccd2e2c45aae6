#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the debug guest kernel (KASAN, lockdep, UBSAN...) from Debian's
# linux-source tarball: `make tinyconfig`, the fragment merged over it,
# then bzImage and the tree the module is built against.
#
#   scripts/vm/debug-kernel.sh OUTDIR FRAGMENT
#
# OUTDIR/src holds the sources, OUTDIR/build the objects (a KDIR for
# M= builds) and OUTDIR/stamp the hash of what the kernel was built from
# (fragment, this script, tarball, compiler): when it matches, nothing is
# rebuilt and only the stamp is touched, so make sees it up to date.
#
# Environment: KSRC_TAR (the newest /usr/src/linux-source-6.1*.tar.xz),
# DK_JOBS (parallel jobs, nproc).
set -u
out=$1 fragment=$2
tarball=${KSRC_TAR:-}
if [ -z "$tarball" ]; then
	for tarball in /usr/src/linux-source-6.1*.tar.xz; do :; done # the newest
fi
jobs=${DK_JOBS:-$(nproc)}
src=$out/src
obj=$out/build
stamp=$out/stamp

if [ ! -f "$tarball" ]; then
	echo "debug-kernel: no linux-source tarball (KSRC_TAR='$tarball'); run make deps" >&2
	exit 1
fi
for tool in flex bison bc; do
	if ! command -v $tool >/dev/null; then
		echo "debug-kernel: $tool is missing; run make deps" >&2
		exit 1
	fi
done

hash=$( {
	cat "$fragment" "$0"
	ls -l --time-style=+%s "$tarball"
	gcc --version | head -n1
} | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -f "$obj/arch/x86/boot/bzImage" ] &&
	[ -f "$obj/Module.symvers" ]; then
	touch "$stamp"
	exit 0
fi

start=$(date +%s)
rm -rf "$out"
mkdir -p "$src" "$obj"
echo "  debug-kernel: extracting $(basename "$tarball")"
tar -xJf "$tarball" -C "$src" --strip-components=1 || exit 1

# Run from make: the kernel's make must not inherit our command line's
# variables (BUILD=, KDIR=, V=...) nor its jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
# ARCH=x86_64: with ARCH=x86, tinyconfig (allnoconfig) would pick 32 bits
kmake() {
	make -s -C "$src" O="$(realpath "$obj")" ARCH=x86_64 "$@"
}
echo "  debug-kernel: configuring (tinyconfig + $(basename "$fragment"))"
if ! { kmake tinyconfig &&
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" &&
	kmake olddefconfig; } >"$out/config.log" 2>&1; then
	cat "$out/config.log" >&2
	exit 1
fi
# olddefconfig silently drops an option whose dependencies are not met
lost=$(grep -E '^CONFIG_[A-Z0-9_]+=' "$fragment" | while IFS= read -r line; do
	grep -qxF "$line" "$obj/.config" || echo "$line"
done)
if [ -n "$lost" ]; then
	echo "debug-kernel: these options of $fragment did not survive olddefconfig:" >&2
	echo "$lost" >&2
	exit 1
fi

echo "  debug-kernel: building with -j$jobs (6 to 15 minutes on 2 cores)"
if ! kmake -j"$jobs" bzImage modules >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "debug-kernel: build failed (log $out/build.log)" >&2
	exit 1
fi
echo "$hash" >"$stamp"
echo "  debug-kernel: built in $(($(date +%s) - start))s"
