#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Fetch one of Debian's packaged kernels into the build tree: its image
# (the guest boots it) and its headers (xray_fdr.ko builds against them),
# from a sources list of our own, never the machine's /etc/apt, and without
# installing anything.
#
#   scripts/vm/debian-kernel.sh OUTDIR SUITE
#
# SUITE is a Debian suite whose linux-headers-amd64 names the kernel, e.g.
# bookworm-backports (6.12).  OUTDIR gets:
#   apt/      the sources list, package lists and downloaded .debs
#   root/     linux-image's /boot, linux-headers-*, linux-kbuild-* extracted
#   build     -> the headers tree (KDIR)
#   vmlinuz   -> the kernel image
#   release   the kernel release, e.g. 6.12.95+deb12-amd64
#   stamp     written last: OUTDIR is complete
# Environment: DEBIAN_MIRROR (http://deb.debian.org/debian).
set -eu
out=$1 suite=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

rm -rf "$out"
mkdir -p "$out/apt/lists/partial" "$out/apt/archives/partial" "$out/apt/debs" \
	"$out/root"
out=$(cd "$out" && pwd)
echo "deb [signed-by=$keyring] $mirror $suite main" >"$out/apt/sources.list"
# Our own lists, cache and (empty) dpkg status: the host's apt state is
# neither read nor changed.
set -- -q -o Dir::Etc::sourcelist="$out/apt/sources.list" \
	-o Dir::Etc::sourceparts=/nonexistent \
	-o Dir::State="$out/apt" -o Dir::State::lists="$out/apt/lists" \
	-o Dir::State::status=/dev/null -o Dir::Cache="$out/apt" \
	-o Dir::Cache::archives="$out/apt/archives" \
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root
apt-get "$@" update >"$out/apt/update.log" 2>&1 || {
	cat "$out/apt/update.log" >&2
	echo "debian-kernel: apt-get update of $suite failed ($mirror)" >&2
	exit 1
}
# linux-headers-amd64 depends on the headers of the suite's kernel:
# linux-headers-<release>.
headers=$(apt-cache "$@" depends linux-headers-amd64 |
	sed -n 's/^ *Depends: \(linux-headers-.*-amd64\)$/\1/p' | head -n 1)
if [ -z "$headers" ]; then
	echo "debian-kernel: $suite has no linux-headers-amd64" >&2
	exit 1
fi
release=${headers#linux-headers-}
# The headers' own dependencies: the common headers and the kbuild tools.
deps=$(apt-cache "$@" depends "$headers" |
	sed -n 's/^ *Depends: \(linux-\(headers\|kbuild\)-[^<>]*\)$/\1/p')
(cd "$out/apt/debs" && apt-get "$@" download "linux-image-$release" "$headers" \
	$deps) >"$out/apt/download.log" 2>&1 || {
	cat "$out/apt/download.log" >&2
	echo "debian-kernel: downloading linux-image-$release and its headers failed" >&2
	exit 1
}
for deb in "$out"/apt/debs/linux-headers-*.deb "$out"/apt/debs/linux-kbuild-*.deb; do
	dpkg-deb -x "$deb" "$out/root"
done
# Of the image only /boot: the guest loads no module but ours.
dpkg-deb --fsys-tarfile "$out/apt/debs/linux-image-$release"_*.deb |
	tar -x -C "$out/root" ./boot
kdir=$out/root/usr/src/linux-headers-$release
# The headers' Makefile includes the common half by its absolute path.
sed -i "s|/usr/src/|$out/root/usr/src/|" "$kdir/Makefile"
ln -s "root/usr/src/linux-headers-$release" "$out/build"
ln -s "root/boot/vmlinuz-$release" "$out/vmlinuz"
echo "$release" >"$out/release"
touch "$out/stamp"
