#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The xray-fdr-dkms package (make dkms-deb, the same build as make deb:
# scripts/pkg/Build.mk, scripts/pkg/debian): its fields and version are
# the Makefile's, it holds every source of the module under
# /usr/src/xray-fdr-VERSION with a dkms.conf, the udev rule and sound
# maintainer scripts; then DKMS builds it from the unpacked
# package against Debian's 6.1 headers (KDIR) and the 6.12 headers in the
# build tree ($BUILD/kernels/6.12), as it would for installed kernels.
# DKMS works in a tree of its own under $BUILD/pkg (--dkmstree,
# --sourcetree, --installtree, --kernelsourcedir; signing off through
# sign_file), and the test checks that nothing under /var/lib/dkms,
# /lib/modules or /etc/dkms changed.  Nothing is installed or loaded.
# Prints TAP.
# shellcheck source=tests/pkg/pkglib.sh
. "$(dirname "$0")/pkglib.sh"
work=$(realpath -m "$BUILD/pkg/dkms-test")
src=usr/src/xray-fdr-$version

rm -rf "$work" && mkdir -p "$work/dkms" "$work/install"
touch "$work/marker"
if ! out=$(make -s --no-print-directory BUILD="$BUILD" dkms-deb 2>&1) || [ ! -f "$deb" ]; then
	echo "1..1"
	echo "not ok 1 - make dkms-deb builds $deb"
	printf '%s\n' "$out" | sed 's/^/# /'
	exit 1
fi
echo "1..9"

field() { dpkg-deb --field "$deb" "$1"; }
if [ "$(field Package)" = xray-fdr-dkms ] && [ "$(field Version)" = "$version" ] &&
	[ "$(field Architecture)" = all ] && field Depends | grep -q '\bdkms\b'; then
	result ok "make dkms-deb: xray-fdr-dkms $version, all, depends on dkms"
else
	result fail "package fields" "$(dpkg-deb --field "$deb")"
fi

dpkg-deb -x "$deb" "$work/root"
listing=$(dpkg-deb -c "$deb")
want=$(git ls-files kmod/Kbuild 'kmod/*.c' 'kmod/*.h' | sed "s|^|$src/|")
want="$want $src/include/uapi/linux/xray_fdr.h $src/dkms.conf usr/lib/udev/rules.d/60-xrayfdr.rules"
missing="" differ=""
for f in $want; do
	[ -f "$work/root/$f" ] || missing="$missing $f"
done
for f in $(git ls-files kmod/Kbuild 'kmod/*.c' 'kmod/*.h') include/uapi/linux/xray_fdr.h; do
	cmp -s "$f" "$work/root/$src/$f" || differ="$differ $f"
done
foreign=$(printf '%s\n' "$listing" | awk '$2 != "root/root" || $6 !~ /^\.\/(usr\/|$)/')
if [ -z "$missing$differ$foreign" ]; then
	result ok "the module's sources, the uapi header, dkms.conf and the udev rule, root's, under /usr"
else
	result fail "package contents" "missing:$missing
differ:$differ
foreign: $foreign"
fi

conf=$work/root/$src/dkms.conf
got=$(bash -c '. "$1"; echo "$PACKAGE_NAME $PACKAGE_VERSION $BUILT_MODULE_NAME $AUTOINSTALL"' _ "$conf")
bad=""
for k in 6.1.0-56-amd64 6.12.95+deb12-amd64 7.3.0-1-amd64 10.0.0-1-amd64; do
	bash -c '. "$1"; [[ $2 =~ $BUILD_EXCLUSIVE_KERNEL ]]' _ "$conf" "$k" || bad="$bad $k(refused)"
done
for k in 6.0.0-1-amd64 5.10.0-30-amd64 4.19.0-27-amd64; do
	bash -c '. "$1"; [[ $2 =~ $BUILD_EXCLUSIVE_KERNEL ]]' _ "$conf" "$k" && bad="$bad $k(accepted)"
done
if [ "$got" = "xray-fdr $version xray_fdr yes" ] && [ -z "$bad" ]; then
	result ok "dkms.conf: xray-fdr $version, autoinstall, kernels from 6.1 on only"
else
	result fail "dkms.conf" "got: $got; kernels:$bad"
fi

ctrl=$work/ctrl
dpkg-deb -e "$deb" "$ctrl"
if sh -n "$ctrl/postinst" && sh -n "$ctrl/prerm" &&
	grep -q 'groupadd --system xrayfdr' "$ctrl/postinst" &&
	grep -q "common.postinst \"\$NAME\" \"\$VERSION\"" "$ctrl/postinst" &&
	grep -q "^VERSION=$version\$" "$ctrl/postinst" && grep -q "^VERSION=$version\$" "$ctrl/prerm" &&
	grep -q 'dkms remove' "$ctrl/prerm"; then
	result ok "postinst creates group xrayfdr and runs DKMS; prerm removes the module's builds"
else
	result fail "maintainer scripts" "$(cat "$ctrl/postinst" "$ctrl/prerm")"
fi

# The rule reads the parameter the module defines, for the device the
# uapi header names.
rule=$work/root/usr/lib/udev/rules.d/60-xrayfdr.rules
devname=$(sed -n 's/^#define XRAY_FDR_DEVICE_NAME "\(.*\)"$/\1/p' include/uapi/linux/xray_fdr.h)
if grep -q "KERNEL==\"$devname\"" "$rule" && grep -q 'GROUP="xrayfdr"' "$rule" &&
	grep -q 'PROGRAM="/bin/cat /sys/module/xray_fdr/parameters/dev_mode"' "$rule" &&
	grep -q 'MODE="%c"' "$rule" && grep -q 'module_param_cb(dev_mode,' kmod/main.c; then
	result ok "60-xrayfdr.rules: group xrayfdr on /dev/$devname, mode from dev_mode"
else
	result fail "udev rule" "$(cat "$rule")"
fi

# The release of a kernel build directory, as uname -r says it (Debian's
# include/config/kernel.release has the upstream version).
release() {
	sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$1/include/generated/utsrelease.h" 2>/dev/null
}

# dkms build KERNEL_DIR: in the private trees, unsigned.
dkms_build() { # description, kernel build directory
	local kdir=$1 kver
	kver=$(release "$kdir")
	sign_file=$work/no-sign-file dkms build -m xray-fdr -v "$version" -k "$kver" \
		--kernelsourcedir "$kdir" --sourcetree "$work/root/usr/src" \
		--dkmstree "$work/dkms" --installtree "$work/install" \
		>"$work/build-$kver.log" 2>&1 || return 1
	ko=$work/dkms/xray-fdr/$version/$kver/x86_64/module/xray_fdr.ko
	[ -f "$ko" ] && [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] &&
		modinfo -F parm "$ko" | grep -q '^dev_mode:'
}

k61=$(make -s --no-print-directory --eval 'pk: ; @echo $(KDIR)' pk)
k612=$BUILD/kernels/6.12/build
if ! command -v dkms >/dev/null; then
	result fail "dkms add" "dkms is not installed (make deps)"
	result skip "dkms build against 6.1" "no dkms"
	result skip "dkms build against 6.12" "no dkms"
else
	if dkms add -m xray-fdr -v "$version" --sourcetree "$work/root/usr/src" \
		--dkmstree "$work/dkms" >"$work/add.log" 2>&1; then
		result ok "dkms add from the unpacked package"
	else
		result fail "dkms add" "$(cat "$work/add.log")"
	fi
	for k in "$k61" "$k612"; do
		if [ ! -d "$k/include" ]; then
			result skip "dkms build against $k" "no kernel headers there (make deps; make kmod-6.12)"
		elif dkms_build "$(realpath "$k")"; then
			result ok "dkms build against $(release "$k") ($k): xray_fdr.ko of that kernel"
		else
			result fail "dkms build against $k" "$(tail -n 30 "$work"/build-*.log)"
		fi
	done
fi

changed=$(find /var/lib/dkms /lib/modules /etc/dkms -newer "$work/marker" 2>/dev/null | head)
if [ -z "$changed" ]; then
	result ok "nothing under /var/lib/dkms, /lib/modules or /etc/dkms changed"
else
	result fail "the host's DKMS or module trees changed" "$changed"
fi
exit $status
