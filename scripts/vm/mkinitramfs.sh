#!/bin/sh
# Pack the test guest's initramfs: static busybox, /init, the module, the
# selftests (with their run order) and xrayfdr-ctl.
#
#   scripts/vm/mkinitramfs.sh OUT.cpio.gz MODULE.ko CTL SELFTEST...
#
# EXTRA="FILE..." adds programs to /selftests that run only when asked for
# (xrayfdr.only=NAME), such as the demo.  DYNAMIC="SRC:DEST..." adds
# dynamically linked files at DEST, with the shared libraries ldd says
# they need at their own paths (xrayfdr attach loads a library through
# the target's own loader).
set -eu
out=$1 ko=$2 ctl=$3
shift 3
busybox=${BUSYBOX:-/bin/busybox}
if ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
	# `file` may be missing: fall back to ldd's verdict
	if ldd "$busybox" >/dev/null 2>&1; then
		echo "mkinitramfs: $busybox is not static (install busybox-static)" >&2
		exit 1
	fi
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root" # mktemp made it 0700: the guest's / must be searchable by all
mkdir -p "$root/bin" "$root/lib/modules" "$root/selftests" "$root/etc"
# users for the tests that drop privileges (su nobody)
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
cp "$busybox" "$root/bin/busybox"
cp "$(dirname "$0")/guest-init" "$root/init"
cp "$ko" "$root/lib/modules/"
cp "$ctl" "$root/bin/xrayfdr-ctl"
for t in "$@"; do
	cp "$t" "$root/selftests/"
	basename "$t" >>"$root/selftests/list"
done
for t in ${EXTRA:-}; do
	cp "$t" "$root/selftests/"
done
for pair in ${DYNAMIC:-}; do
	src=${pair%%:*} dest=${pair#*:}
	mkdir -p "$root$(dirname "$dest")"
	cp -L "$src" "$root$dest"
	for lib in $(ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
