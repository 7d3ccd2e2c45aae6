# SPDX-License-Identifier: GPL-2.0-only
#
# What the package suites share, sourced first (. "$(dirname "$0")/pkglib.sh"):
# it sets -u, moves to the top of the tree and sets BUILD (build), the
# version and the packages' paths (the Makefile's VERSION; make deb);
# result() prints TAP lines, whose diagnostics keep the last 30 lines;
# need_files and need_root end a suite that cannot run; fresh_root,
# in_root, clean_root, owned_files and purge_result are the chroot
# suites' (the chroot in $root, a command's output in $log).
# shellcheck shell=bash
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
version=$(make -s --no-print-directory --eval 'pv: ; @echo $(VERSION)' pv)
arch=$(dpkg --print-architecture)
deb=$BUILD/pkg/xray-fdr-dkms_${version}_all.deb
packages="xrayfdr libxrayfdr0 libxrayfdr-dev xray-fdr-dkms"
debs="$BUILD/pkg/xrayfdr_${version}_$arch.deb $BUILD/pkg/libxrayfdr0_${version}_$arch.deb
$BUILD/pkg/libxrayfdr-dev_${version}_$arch.deb $deb"
n=0 status=0

result() { # ok|fail|skip, description, [diagnostics]
	n=$((n + 1))
	case $1 in
	ok) echo "ok $n - $2" ;;
	skip) echo "ok $n - $2 # SKIP ${3:-}" ;;
	*)
		status=1
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | tail -n 30 | sed 's/^/# /'
		;;
	esac
}

need_files() { # FILE...: a missing one is the suite's one failure
	local f
	for f; do
		if [ ! -f "$f" ]; then
			echo "1..1"
			echo "not ok 1 - $f is missing (make $f)"
			exit 1
		fi
	done
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP chroot and mount namespaces need root"
		exit 0
	fi
}

# A command in the chroot $root, in a mount namespace that takes its
# /proc away when it ends; its output in $log.
# shellcheck disable=SC2154 # root: the suite's
in_root() {
	unshare --mount --propagation private sh -c \
		'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' \
		_ "$root" "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		LANG=C.UTF-8 "$@" >"$log" 2>&1
}

# Never remove a tree with something mounted in it.
clean_root() {
	if grep -q " $root/" /proc/self/mounts; then
		echo "# $root has mounts; not removing it" >&2
		return 1
	fi
	rm -rf "$root" "$log"
}

fresh_root() { # TARBALL: a clean copy of it in $root
	log=$root.log
	clean_root || exit 1
	mkdir -p "$root"
	tar -xf "$1" -C "$root"
}

owned_files() { # PACKAGE...: the files (not directories) they own in $root
	local p f
	for p; do
		in_root dpkg -L "$p" && cat "$log"
	done | while read -r f; do
		[ -d "$root$f" ] || echo "$f"
	done
}

# What is left in $root of purged packages: a module, sources, DKMS
# state or udev rule of ours, one of the files they owned, a package
# still installed.
left_after_purge() { # OWNED-FILES, PACKAGE...
	local f p owned=$1
	shift
	(cd "$root" && find lib/modules usr/src var/lib/dkms usr/lib/udev/rules.d \
		\( -name 'xray_fdr.ko*' -o -name 'xray-fdr*' -o -name '60-xrayfdr.rules' \) \
		2>/dev/null)
	for f in $owned; do
		[ -e "$root$f" ] || [ -L "$root$f" ] && echo "$f"
	done
	for p; do
		in_root dpkg -s "$p" && echo "$p(installed)"
	done
}

purge_result() { # OWNED-FILES, NOTE, PACKAGE...: the TAP result of the purge
	local owned=$1 note=$2 left
	shift 2
	left=$(left_after_purge "$owned" "$@")
	if [ -n "$owned" ] && [ -z "$left" ]; then
		result ok "purged: none of the $(echo "$owned" | wc -l) files, no module, source or DKMS state$note"
	else
		result fail "left after the purge" "$left"
	fi
}
