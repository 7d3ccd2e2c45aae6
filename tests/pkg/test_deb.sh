#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The packages of make deb (scripts/pkg/Build.mk, scripts/pkg/debian):
# xrayfdr, libxrayfdr0, libxrayfdr-dev and xray-fdr-dkms at the
# Makefile's VERSION; each holds what make install lays out for it (the
# -dev package the tree's public headers, byte for byte), no file is in
# two of them, the library's dependants ask for its exact version, the
# pkg-config file points at Debian's multiarch directory, and lintian
# finds no error and no warning.  tests/pkg/test_dkms_chroot.sh installs
# them.  Prints TAP.
# shellcheck source=tests/pkg/pkglib.sh
. "$(dirname "$0")/pkglib.sh"
work=$(realpath -m "$BUILD/pkg/deb-test")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$multiarch

# shellcheck disable=SC2086
need_files $debs
echo "1..6"
rm -rf "$work" && mkdir -p "$work"

bad=""
set -- $debs
for p in $packages; do
	d=$1 && shift
	got="$(dpkg-deb --field "$d" Package) $(dpkg-deb --field "$d" Version)"
	[ "$got" = "$p $version" ] || bad="$bad $(basename "$d"):'$got'"
done
if [ -z "$bad" ]; then
	result ok "make deb: $packages, version $version"
else
	result fail "package names and versions" "$bad"
fi

# The files (not directories) of a package, as ./path.
files() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ { print $6 }' | sort; }
missing=""
want() { # deb, paths
	local d=$1 f list
	shift
	list=$(files "$d")
	for f in "$@"; do
		printf '%s\n' "$list" | grep -qx "./$f" || missing="$missing $(basename "$d"):$f"
	done
}
set -- $debs
want "$1" usr/bin/xrayfdr usr/bin/xrayfdr-ctl usr/share/man/man1/xrayfdr.1.gz \
	usr/share/man/man8/xrayfdr-ctl.8.gz
want "$2" "$libdir/libxrayfdr.so.0" "$libdir/libxrayfdr.so.$version"
headers=$(cd lib/include && ls xrayfdr/*.h)
# shellcheck disable=SC2086
want "$3" $(printf 'usr/include/%s\n' $headers) "$libdir/libxrayfdr.a" \
	"$libdir/libxrayfdr.so" "$libdir/pkgconfig/libxrayfdr.pc" usr/share/man/man3/libxrayfdr.3.gz
want "$4" "usr/src/xray-fdr-$version/dkms.conf" usr/lib/udev/rules.d/60-xrayfdr.rules
dpkg-deb -x "$3" "$work/dev"
differ=""
for h in $headers; do
	cmp -s "lib/include/$h" "$work/dev/usr/include/$h" || differ="$differ $h"
done
twice=$(for d in $debs; do files "$d" | grep -v '^\./usr/share/doc/'; done | sort | uniq -d)
if [ -z "$missing$differ$twice" ]; then
	result ok "each package holds its files (the headers as in lib/include), none in two"
else
	result fail "package contents" "missing:$missing
headers that differ:$differ
in two packages: $twice"
fi

dep() { dpkg-deb --field "$1" Depends; }
exact="libxrayfdr0 (= $version)"
if dep "$1" | grep -qF "$exact" && dep "$3" | grep -qF "$exact" &&
	dpkg-deb --field "$2" Multi-Arch | grep -qx same &&
	dpkg-deb --info "$2" shlibs | grep -qx "libxrayfdr 0 libxrayfdr0 (>= $version)"; then
	result ok "xrayfdr and libxrayfdr-dev depend on $exact; libxrayfdr0's shlibs"
else
	result fail "dependencies" "$(for d in $debs; do dpkg-deb --field "$d" Package Depends; done)
$(dpkg-deb --info "$2" shlibs 2>&1)"
fi

pc=$work/dev/$libdir/pkgconfig/libxrayfdr.pc
if grep -qx "libdir=/$libdir" "$pc" && grep -qx 'includedir=/usr/include' "$pc" &&
	grep -qx 'Libs: -L${libdir} -lxrayfdr' "$pc"; then
	result ok "libxrayfdr.pc: the library in /$libdir, the headers in /usr/include"
else
	result fail "libxrayfdr.pc" "$(cat "$pc")"
fi

# xrayfdr-ctl: linked against the shared libraries in the package
dpkg-deb -x "$1" "$work/tools"
if readelf -d "$work/tools/usr/bin/xrayfdr-ctl" | grep -q 'NEEDED.*libnl-genl-3'; then
	result ok "xrayfdr-ctl is linked against libnl's shared libraries"
else
	result fail "xrayfdr-ctl is a static binary" "$(readelf -d "$work/tools/usr/bin/xrayfdr-ctl" 2>&1)"
fi

changes=$BUILD/pkg/xrayfdr_${version}_$arch.changes
if ! command -v lintian >/dev/null; then
	result fail "lintian" "lintian is not installed (make deps)"
elif lintian -I --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1; then
	result ok "lintian: no error, no warning ($(grep -c '^[EWIP]:' "$work/lintian.log") informational tags)"
else
	result fail "lintian $(basename "$changes")" "$(grep -v 'root privileges' "$work/lintian.log")"
fi
[ $status -eq 0 ] && rm -rf "$work"
exit $status
