#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A clean Debian 12 system for the package tests, as a tarball cached in
# the build tree: mmdebstrap's apt variant of bookworm with what the
# packages of make deb need installed beforehand (dkms and its build
# tools, the libraries the tools and libxrayfdr0 link against, libelf-dev
# for libxrayfdr-dev), Debian's 6.1 kernel headers (linux-headers-amd64)
# and what a user builds a traced program with (clang, pkg-config), so
# the test installs the packages with dpkg and no network; from Debian's
# archive with a sources list of its own; the host's apt state is neither
# read nor changed.  tests/pkg/test_dkms_chroot.sh unpacks a fresh copy
# for every run.
#
#   scripts/pkg/mkchroot.sh OUT.tar
#
# Environment: DEBIAN_MIRROR (http://deb.debian.org/debian).
set -eu
out=$1
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$(dirname "$out")"
rm -f "$out.tmp.tar"
mmdebstrap --quiet --variant=apt --format=tar \
	--include=dkms,linux-headers-amd64,passwd,kmod,clang,pkg-config \
	--include=libelf-dev,libdw1,libnl-genl-3-200,libstdc++6 \
	bookworm "$out.tmp.tar" "deb [signed-by=$keyring] $mirror bookworm main"
mv "$out.tmp.tar" "$out"
