#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A clean Debian system made with mmdebstrap's apt variant from Debian's
# archive, with a sources list of its own (the host's apt state is
# neither read nor changed), cached in the build tree.
#
#   scripts/pkg/mkchroot.sh OUT.tar
#   scripts/pkg/mkchroot.sh OUT SUITE[,SUITE...] PACKAGE...
#
# The first form is Debian 12 for the package tests: bookworm with what
# the packages of make deb need installed beforehand (dkms and its build
# tools, the libraries the tools and libxrayfdr0 link against, libelf-dev
# for libxrayfdr-dev), Debian's 6.1 kernel headers (linux-headers-amd64)
# and what a user builds a traced program with (clang, pkg-config), so
# the test installs the packages with dpkg and no network;
# tests/pkg/test_dkms_chroot.sh unpacks a fresh copy for every run.
#
# The second installs PACKAGEs (names, or paths of .deb files) into the
# release of the first SUITE, with every SUITE in its sources list (e.g.
# trixie,trixie-backports: a backported kernel's headers and the
# compiler of that release); OUT is a tarball if it ends in .tar, else a
# directory (scripts/vm/Build.mk builds a module in one).  A PACKAGE
# deps:FILE.deb installs what FILE.deb depends on, not FILE.deb itself
# (the dependencies' first alternatives, from the archive, but not the
# packages of the other deps: files): a test installs those with dpkg
# later, offline, as an upgrade would (scripts/pkg/Build.mk's chroot for
# DKMS on the newest kernel).
#
# Environment: DEBIAN_MIRROR (http://deb.debian.org/debian).
set -eu
out=$1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [ $# -eq 1 ]; then
	set -- bookworm dkms linux-headers-amd64 passwd kmod clang pkg-config \
		libelf-dev libdw1 libnl-genl-3-200 libstdc++6
else
	shift
fi
suites=$1
shift
own=""
for p; do
	case $p in deps:*) own="$own $(dpkg-deb --field "${p#deps:}" Package)" ;; esac
done
include=$(for p; do
	case $p in
	deps:*)
		dpkg-deb --field "${p#deps:}" Depends | tr , '\n' |
			sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | while read -r d; do
			[ -n "$d" ] || continue
			case " $own " in *" $d "*) ;; *) echo "$d" ;; esac
		done
		;;
	*) echo "$p" ;;
	esac
done | awk '!seen[$0]++')
mkdir -p "$(dirname "$out")"
case $out in
*.tar) format=tar tmp=$out.tmp.tar ;;
*) format=directory tmp=$out.tmp ;;
esac
set -- "${suites%%,*}" "$tmp"
for s in $(echo "$suites" | tr , ' '); do
	set -- "$@" "deb [signed-by=$keyring] $mirror $s main"
done
# One --include each: mmdebstrap takes a list that starts with a path
# for one path.
for p in $include; do
	set -- "$@" --include="$p"
done
rm -rf "$tmp"
mmdebstrap --quiet --variant=apt --format=$format "$@"
rm -rf "$out"
mv "$tmp" "$out"
