#!/bin/sh
# Install every Debian package xrayfdr needs, idempotently and without
# questions.  Safe to run again: packages already present are skipped, and a
# dpkg lock held by another apt waits instead of failing.
set -eu

PACKAGES="
	make gcc g++ pkg-config git ca-certificates
	clang clang-format llvm libclang-rt-14-dev
	libcmocka-dev python3 python3-yaml
	libelf-dev libdw-dev libnl-3-dev libnl-genl-3-dev
	qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
	busybox-static cpio kmod xz-utils dwarves
	flex bison bc libssl-dev
	uftrace chromium hyperfine valgrind graphviz protobuf-compiler
	strace gdb
	lttng-tools liblttng-ust1 babeltrace2
	groff-base dkms mmdebstrap
	dpkg-dev debhelper fakeroot lintian
"

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: must run as root (it calls apt-get)" >&2
	exit 1
fi

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -q -y -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
$APT update
# shellcheck disable=SC2086
$APT install --no-install-recommends $missing
echo "deps: done"
