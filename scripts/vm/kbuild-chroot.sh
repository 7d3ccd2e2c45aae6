#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Run a command in a Debian chroot of scripts/pkg/mkchroot.sh's (a kernel
# module build against headers installed there, with that release's
# compiler), in the current directory, with the current directory and
# $BUILD bind-mounted at their own paths so that every path the
# top-level Makefile passes means the same inside, and /proc (objtool
# reads it).  The mounts are made
# in a mount namespace of the command's own and go with it; the host's
# tree is only written where the command writes.
#
#   scripts/vm/kbuild-chroot.sh ROOT COMMAND...
#
# Environment: BUILD (build); MAKEFLAGS is passed on (the jobserver's
# descriptors are inherited), nothing else of the caller's.
set -eu
root=$(realpath "$1")
shift
if [ "$(id -u)" -ne 0 ]; then
	echo "kbuild-chroot: building in $root needs root (chroot, mount namespace)" >&2
	exit 1
fi
binds=$PWD
build=$(realpath -m "${BUILD:-build}")
case $build/ in
"$PWD"/*) ;;
*) binds="$binds $build" ;;
esac
# shellcheck disable=SC2016 # expanded by the inner sh
exec unshare --mount --propagation private sh -c '
	root=$1 binds=$2 dir=$3
	shift 3
	for d in $binds; do
		mkdir -p "$root$d" && mount --bind "$d" "$root$d" || exit 1
	done
	mount -t proc proc "$root/proc" || exit 1
	exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 MAKEFLAGS="${MAKEFLAGS:-}" sh -c "cd \"\$0\" && exec \"\$@\"" \
		"$dir" "$@"
' _ "$root" "$binds" "$PWD" "$@"
