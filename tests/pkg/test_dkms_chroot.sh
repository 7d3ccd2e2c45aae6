#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages of make deb installed, used and removed in a clean Debian
# 12 system: a fresh copy of the chroot scripts/pkg/mkchroot.sh made
# ($BUILD/chroot/bookworm.tar: dkms, linux-headers-amd64, clang,
# pkg-config and the libraries the packages depend on installed).  In it,
# dpkg installs xrayfdr, libxrayfdr0, libxrayfdr-dev and xray-fdr-dkms
# (whose postinst creates the group xrayfdr and registers the module with
# DKMS), the kernel's own DKMS hook (/etc/kernel/postinst.d/dkms, what
# installing a kernel runs) builds and installs the module for the
# headers' kernel, clang builds a traced program against the installed
# -dev package through pkg-config, xrayfdr record traces it in thread
# mode and xrayfdr dump --verify checks the log; then dpkg purges the
# packages, which must leave none of their files, no module and no DKMS
# state behind.  Runs in a mount namespace of its own (only /proc is
# mounted, and goes with it); nothing is loaded.  Prints TAP.
# shellcheck source=tests/pkg/pkglib.sh
. "$(dirname "$0")/pkglib.sh"
tarball=$BUILD/chroot/bookworm.tar
root=$(realpath -m "$BUILD/pkg/chroot-test")

# shellcheck disable=SC2086
need_files $debs "$tarball"
need_root
fresh_root "$tarball"
cp $debs "$root/tmp/"
echo "1..8"

kver=$(ls "$root/lib/modules" | head -n 1)
names=$(for d in $debs; do echo "/tmp/$(basename "$d")"; done)
# (build is a symbolic link to /usr/src: look from inside)
# shellcheck disable=SC2086
if [ -n "$kver" ] && in_root test -d "/lib/modules/$kver/build/include" &&
	in_root dpkg -i $names; then
	result ok "dpkg -i $packages in a clean bookworm with the headers of $kver"
else
	result fail "dpkg -i in the chroot (kernel '$kver')" "$(cat "$log")"
fi
# What the packages own, to look for after the purge.
# shellcheck disable=SC2086
owned=$(owned_files $packages)

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

# A traced program built as README says, against the -dev package.
cat >"$root/tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <xrayfdr/fdr.h>

__attribute__((xray_always_instrument, noinline)) static int leaf(int x)
{
	return x * 3 + 1;
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < 1000; i++)
		s += leaf(i);
	printf("%s %d\n", xrayfdr_version_string(), s);
	return 0;
}
PROG
if in_root sh -c 'clang -O1 -fxray-instrument -fnoxray-link-deps \
		$(pkg-config --cflags libxrayfdr) -o /tmp/prog /tmp/prog.c \
		$(pkg-config --libs libxrayfdr) && /tmp/prog' &&
	grep -qx "$version 1499500" "$log"; then
	result ok "clang -fxray-instrument with pkg-config libxrayfdr builds a program that runs"
else
	result fail "clang and pkg-config against libxrayfdr-dev" "$(cat "$log")"
fi

# thread mode: the chroot has no /dev/xrayfdr, and nothing is loaded
rec=fail
if in_root xrayfdr record -M thread -o /tmp/prog.xray /tmp/prog &&
	grep -q '(thread mode)' "$log" && in_root xrayfdr dump --verify /tmp/prog.xray &&
	grep -q ': valid: .* 0 errors' "$log"; then
	rec=ok
fi
diag=$(cat "$log")
if [ $rec = ok ] && in_root xrayfdr account /tmp/prog.xray &&
	grep -Eq '^ *[0-9]+ +1000 \[.*[: ]leaf$' "$log"; then
	result ok "xrayfdr record -M thread: dump --verify passes, account finds leaf's 1000 calls"
else
	result fail "xrayfdr record, dump --verify, account in the chroot" "$diag
$(cat "$log")"
fi

# shellcheck disable=SC2086
if in_root dpkg -s $packages && in_root dpkg -P $packages; then
	result ok "dpkg -P $packages"
else
	result fail "dpkg -P $packages" "$(cat "$log")"
fi
# shellcheck disable=SC2086
purge_result "$owned" " (the group stays)" $packages
[ $status -eq 0 ] && clean_root
exit $status
