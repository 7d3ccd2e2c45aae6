#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Fetch one of Debian's packaged kernels into the build tree: its image
# (the guest boots it) and its headers (xray_fdr.ko builds against them),
# from a sources list of our own, never the machine's /etc/apt, and without
# installing anything.
#
#   scripts/vm/debian-kernel.sh OUTDIR SUITE...
#
# SUITE is a Debian suite whose linux-headers-amd64 names the kernel, e.g.
# bookworm-backports (6.12); of several, the one whose linux-headers-amd64
# is the newest version (Debian's newest kernel: trixie-backports or
# forky).  OUTDIR gets:
#   apt/      the sources list, package lists and downloaded .debs
#   root/     linux-image's /boot, linux-headers-*, linux-kbuild-* extracted
#   build     -> the headers tree (KDIR)
#   vmlinuz   -> the kernel image
#   release   the kernel release, e.g. 6.12.95+deb12-amd64
#   suite     the suite it came from
#   stamp     written last: OUTDIR is complete
# Environment: DEBIAN_MIRROR (http://deb.debian.org/debian).
set -eu
out=$1
shift
suites=$*
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

rm -rf "$out"
mkdir -p "$out/apt/lists/partial" "$out/apt/archives/partial" "$out/apt/debs" \
	"$out/root"
out=$(cd "$out" && pwd)
sources() {
	for s in "$@"; do
		echo "deb [signed-by=$keyring] $mirror $s main"
	done >"$out/apt/sources.list"
}
# shellcheck disable=SC2086
sources $suites
# Our own lists, cache and (empty) dpkg status: the host's apt state is
# neither read nor changed.
set -- -q -o Dir::Etc::sourcelist="$out/apt/sources.list" \
	-o Dir::Etc::sourceparts=/nonexistent \
	-o Dir::State="$out/apt" -o Dir::State::lists="$out/apt/lists" \
	-o Dir::State::status=/dev/null -o Dir::Cache="$out/apt" \
	-o Dir::Cache::archives="$out/apt/archives" \
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root
update() {
	apt-get "$@" update >"$out/apt/update.log" 2>&1 || {
		cat "$out/apt/update.log" >&2
		echo "debian-kernel: apt-get update of $suites failed ($mirror)" >&2
		exit 1
	}
}
update "$@"
suite=$suites
if [ "$suite" != "${suite% *}" ]; then
	# The suite of the newest linux-headers-amd64 (apt's candidate would
	# follow the suites' priorities: backports' are lower), then that
	# suite alone, so that every name below resolves in it.
	suite=$(apt-cache "$@" madison linux-headers-amd64 |
		awk -F' *[|] *' '{ split($3, a, " "); print $2, a[2] }' |
		while read -r ver s; do
			if [ -z "${best:-}" ] || dpkg --compare-versions "$ver" gt "$best"; then
				best=$ver
				echo "${s%%/*}"
			fi
		done | tail -n 1)
	if [ -z "$suite" ]; then
		echo "debian-kernel: none of $suites has linux-headers-amd64" >&2
		exit 1
	fi
	sources "$suite"
	update "$@"
fi
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
# Of the image only the kernel: the guest loads no module but ours.  Up
# to 6.x linux-image-<release> has /boot/vmlinuz-<release>; in 7.x it
# depends on linux-binary-<release>, whose kernel is
# /usr/lib/modules/<release>/vmlinuz.
vmlinuz() { # DEB: its kernel's path in the archive (reads the whole list)
	dpkg-deb -c "$1" | awk -v a="./boot/vmlinuz-$release" \
		-v b="./usr/lib/modules/$release/vmlinuz" '
		($6 == a || $6 == b) && !f { f = $6 }
		END { if (!f) exit 1; print f }'
}
image=$(echo "$out/apt/debs/linux-image-$release"_*.deb)
if ! kernel=$(vmlinuz "$image"); then
	(cd "$out/apt/debs" && apt-get "$@" download "linux-binary-$release") \
		>>"$out/apt/download.log" 2>&1 || {
		cat "$out/apt/download.log" >&2
		echo "debian-kernel: linux-image-$release has no kernel, and downloading linux-binary-$release failed" >&2
		exit 1
	}
	image=$(echo "$out/apt/debs/linux-binary-$release"_*.deb)
	kernel=$(vmlinuz "$image") || {
		echo "debian-kernel: neither linux-image-$release nor linux-binary-$release has a vmlinuz" >&2
		exit 1
	}
fi
dpkg-deb --fsys-tarfile "$image" | tar -x -C "$out/root" "$kernel"
kdir=$out/root/usr/src/linux-headers-$release
# The headers' Makefile includes the common half by its absolute path.
sed -i "s|/usr/src/|$out/root/usr/src/|" "$kdir/Makefile"
ln -s "root/usr/src/linux-headers-$release" "$out/build"
ln -s "root/${kernel#./}" "$out/vmlinuz"
echo "$release" >"$out/release"
echo "$suite" >"$out/suite"
touch "$out/stamp"
