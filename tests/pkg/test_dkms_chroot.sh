#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xray-fdr-dkms installed, used by DKMS and removed in a clean Debian 12
# system: a fresh copy of the chroot scripts/pkg/mkchroot.sh made
# ($BUILD/chroot/bookworm.tar: dkms and linux-headers-amd64 installed).
# In it, dpkg installs the package (its postinst creates the group
# xrayfdr and registers the module with DKMS), the kernel's own DKMS hook
# (/etc/kernel/postinst.d/dkms, what installing a kernel runs) builds and
# installs the module for the headers' kernel, and dpkg purges the
# package, which must leave no module, source or DKMS state behind.
# Runs in a mount namespace of its own (only /proc is mounted, and goes
# with it); nothing is loaded.  Prints TAP.
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
. tests/pkg/pkglib.sh
tarball=$BUILD/chroot/bookworm.tar
root=$(realpath -m "$BUILD/pkg/chroot-test")

for f in "$deb" "$tarball"; do
	if [ ! -f "$f" ]; then
		echo "1..1"
		echo "not ok 1 - $f is missing (make $f)"
		exit 1
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP chroot and mount namespaces need root"
	exit 0
fi

# A command in the chroot, in a mount namespace that takes its /proc away
# when it ends; its output in $log.
log=$root.log
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

clean_root || exit 1
mkdir -p "$root"
tar -xf "$tarball" -C "$root"
cp "$deb" "$root/tmp/"
echo "1..7"

kver=$(ls "$root/lib/modules" | head -n 1)
# (build is a symbolic link to /usr/src: look from inside)
if [ -n "$kver" ] && in_root test -d "/lib/modules/$kver/build/include" &&
	in_root dpkg -i "/tmp/$(basename "$deb")"; then
	result ok "dpkg -i $(basename "$deb") in a clean bookworm with the headers of $kver"
else
	result fail "dpkg -i in the chroot (kernel '$kver')" "$(cat "$log")"
fi

gid=$(awk -F: '$1 == "xrayfdr" { print $3 }' "$root/etc/group")
if [ -n "$gid" ] && [ "$gid" -lt 1000 ] &&
	[ -f "$root/usr/lib/udev/rules.d/60-xrayfdr.rules" ] &&
	in_root dkms status -m xray-fdr -v "$version" && grep -q "xray-fdr/$version" "$log"; then
	result ok "postinst: system group xrayfdr ($gid), the udev rule, xray-fdr/$version added to DKMS"
else
	result fail "after the postinst: group '$gid', rule, dkms status" "$(cat "$log")"
fi

# What a kernel's installation runs for DKMS modules.
ko=$root/lib/modules/$kver/updates/dkms/xray_fdr.ko
if in_root /etc/kernel/postinst.d/dkms "$kver" && [ -f "$ko" ] &&
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] &&
	modinfo -F parm "$ko" | grep -q '^dev_mode:'; then
	result ok "the kernel's DKMS hook builds and installs xray_fdr.ko for $kver"
else
	result fail "/etc/kernel/postinst.d/dkms $kver" "$(cat "$log")"
fi

if in_root modinfo -k "$kver" xray_fdr && grep -q "updates/dkms/xray_fdr.ko" "$log"; then
	result ok "depmod knows the module: modinfo -k $kver xray_fdr finds it"
else
	result fail "modinfo -k $kver xray_fdr in the chroot" "$(cat "$log")"
fi

result skip "xrayfdr record in the chroot" "the tools and the library have no Debian package yet"

if in_root dpkg -s xray-fdr-dkms && in_root dpkg -P xray-fdr-dkms; then
	result ok "dpkg -P xray-fdr-dkms"
else
	result fail "dpkg -P xray-fdr-dkms" "$(cat "$log")"
fi
left=$(cd "$root" && find lib/modules usr/src var/lib/dkms usr/lib/udev/rules.d \
	\( -name 'xray_fdr.ko*' -o -name 'xray-fdr*' -o -name '60-xrayfdr.rules' \) 2>/dev/null)
if [ -z "$left" ] && ! in_root dpkg -s xray-fdr-dkms; then
	result ok "purged: no module, source, DKMS state or rule left (the group stays)"
else
	result fail "left after the purge" "$left"
fi
[ $status -eq 0 ] && clean_root
exit $status
