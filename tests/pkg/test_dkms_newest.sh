#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# DKMS builds the module for Debian's newest kernel (scripts/vm/Build.mk's
# guest "newest": trixie-backports' 7.3 when written, whose headers name
# gcc-14) in a system of that kernel's release: a fresh copy of the chroot
# scripts/pkg/mkchroot.sh made ($BUILD/chroot/dkms-newest.tar: the
# release with its backports, dkms, and what the kernel's headers depend
# on, not the headers).  There dpkg installs xray-fdr-dkms while no
# kernel's headers are installed (its postinst registers the module with
# DKMS, which builds nothing), then, as a kernel upgrade does, the
# kernel's headers and kbuild fetched into $BUILD/kernels/newest: their
# DKMS hook must build the module with the release's gcc-14, without a
# compiler warning, and install xray_fdr.ko for that kernel; then dpkg
# purges xray-fdr-dkms, which must leave no module, source or DKMS state
# behind.  Runs in a mount namespace of its own; nothing is loaded.
# make pkgtest-newest and make vmtest-all run it.  Prints TAP.
# shellcheck source=tests/pkg/pkglib.sh
. "$(dirname "$0")/pkglib.sh"
kdir=$BUILD/kernels/newest
tarball=$BUILD/chroot/dkms-newest.tar
root=$(realpath -m "$BUILD/pkg/dkms-newest-test")

need_files "$deb" "$kdir/stamp" "$tarball"
need_root
kver=$(cat "$kdir/release")
kdebs=$(ls "$kdir"/apt/debs/linux-headers-*.deb "$kdir"/apt/debs/linux-kbuild-*.deb)
fresh_root "$tarball"
# shellcheck disable=SC2086
cp "$deb" $kdebs "$root/tmp/"
echo "1..6"

dkms_state=var/lib/dkms/xray-fdr
modules() { (cd "$root" && find usr/lib/modules -name 'xray_fdr.ko*' 2>/dev/null); }
if [ ! -e "$root/usr/src/linux-headers-$kver" ] &&
	in_root dpkg -i "/tmp/$(basename "$deb")" && in_root dkms status -m xray-fdr &&
	grep -q "^xray-fdr/$version: added" "$log" && [ -z "$(modules)" ]; then
	result ok "dpkg -i xray-fdr-dkms with no kernel headers: added to DKMS, nothing built"
else
	result fail "dpkg -i xray-fdr-dkms in $(cat "$kdir/suite")'s release" \
		"modules: $(modules)
$(cat "$log")"
fi
owned=$(owned_files xray-fdr-dkms)

# What installing the kernel's headers runs: their postinst's
# /etc/kernel/header_postinst.d/dkms.
names=$(for d in $kdebs; do echo "/tmp/$(basename "$d")"; done)
ko=$root/usr/lib/modules/$kver/updates/dkms/xray_fdr.ko
# shellcheck disable=SC2086
if in_root dpkg -i $names; then
	installed=$(cat "$log")
	in_root dkms status -m xray-fdr -k "$kver"
	if grep -q "^xray-fdr/$version, $kver, [^:]*: installed" "$log" && [ -f "$ko" ] &&
		[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] &&
		modinfo -F parm "$ko" | grep -q '^dev_mode:'; then
		result ok "dpkg -i the headers of $kver: their DKMS hook builds and installs xray_fdr.ko for it"
	else
		result fail "the DKMS hook of $kver's headers" "$installed
$(cat "$log")
modules: $(modules)"
	fi
else
	result fail "dpkg -i $names" "$(cat "$log")"
fi

# The release's compiler, as the headers name it, and no warning.
make_log=$root/$dkms_state/$version/$kver/x86_64/log/make.log
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$root/usr/src/linux-headers-$kver/.config" 2>/dev/null)
comment=$(readelf -p .comment "$ko" 2>/dev/null | grep -o 'GCC: .*' | sort -u)
# (the module's .comment has the version text without the program's name)
if [ -f "$make_log" ] && [ -n "$cc" ] && [ "$comment" = "GCC: ${cc#* }" ] &&
	! grep -qi 'warning:' "$make_log"; then
	result ok "built by $cc, as the kernel was, with no warning"
else
	result fail "the compiler ('$cc', the module's: '$comment') or warnings" \
		"$(cat "$make_log" 2>&1)"
fi

# DKMS leaves depmod to the kernel image's postinst when the image is
# not installed (no modules.dep), as here: run it as that would.
if in_root depmod -a "$kver" && in_root modinfo -k "$kver" xray_fdr &&
	grep -q "updates/dkms/xray_fdr.ko" "$log"; then
	result ok "depmod -a $kver, as the kernel image's postinst runs it, finds the module"
else
	result fail "depmod -a $kver; modinfo -k $kver xray_fdr" "$(cat "$log")"
fi

if in_root dpkg -P xray-fdr-dkms; then
	result ok "dpkg -P xray-fdr-dkms"
else
	result fail "dpkg -P xray-fdr-dkms" "$(cat "$log")"
fi
purge_result "$owned" "" xray-fdr-dkms
[ $status -eq 0 ] && clean_root
exit $status
