# SPDX-License-Identifier: GPL-2.0-only
#
# What the package suites share, sourced from the top of the tree: the
# version and the packages' paths (the Makefile's VERSION; make deb), and
# result() for TAP lines, whose diagnostics keep the last 30 lines.
# shellcheck shell=bash
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
