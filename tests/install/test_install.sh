#!/bin/sh
# `make install` into a scratch DESTDIR, then build programs against the
# installed headers and library through pkg-config, as a user would: a C11
# program linked with the shared library, the same linked statically, and
# the public headers included from C++.
set -u
BUILD=${BUILD:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 status=0
echo "1..4"
result() { # ok|fail, description, [log]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		status=1
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" | head -n 20
	fi
}

make -C "$top" --no-print-directory install BUILD="$BUILD" DESTDIR="$tmp/root" \
	PREFIX=/usr >"$tmp/install.log" 2>&1
if [ $? -eq 0 ] && [ -f "$tmp/root/usr/lib/pkgconfig/libxrayfdr.pc" ] &&
	[ -x "$tmp/root/usr/bin/xrayfdr" ] && [ -f "$tmp/root/usr/include/xrayfdr/fdr.h" ] &&
	[ -f "$tmp/root/usr/share/man/man1/xrayfdr.1" ] &&
	[ -f "$tmp/root/usr/share/man/man8/xrayfdr-ctl.8" ] &&
	[ -f "$tmp/root/usr/share/man/man3/libxrayfdr.3" ]; then
	result ok "make install DESTDIR= PREFIX=/usr lays out bin, lib, include, pkgconfig, man"
else
	result fail "make install DESTDIR= PREFIX=/usr" "$tmp/install.log"
fi

cat >"$tmp/prog.c" <<'PROG'
#include <stdio.h>
#include <xrayfdr/fdr.h>

static unsigned char buf[4096];
static size_t len;

static int sink(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	if (len + size > sizeof(buf))
		return -28;
	for (size_t i = 0; i < size; i++)
		buf[len++] = ((const unsigned char *)data)[i];
	return 0;
}

int main(void)
{
	XRAYFDR_OPTS(xrayfdr_writer_opts, wo, .cycle_frequency = 1000000);
	struct xrayfdr_writer *w = xrayfdr_writer_new(sink, NULL, &wo);
	struct xrayfdr_event ev = { .kind = XRAYFDR_EV_ENTRY, .func_id = 3, .tsc = 10, .tid = 1 };
	const struct xrayfdr_event *got;
	struct xrayfdr_reader *r;
	int n = 0;

	if (!w || xrayfdr_writer_event(w, &ev) || xrayfdr_writer_close(w))
		return 1;
	r = xrayfdr_reader_new_mem(buf, len, "mem", NULL);
	while (xrayfdr_reader_next_event(r, &got) == 1)
		n += got->func_id == 3 && got->tsc == 10;
	xrayfdr_reader_free(r);
	printf("%s %d\n", xrayfdr_version_string(), n);
	return n == 1 ? 0 : 1;
}
PROG
export PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_LIBDIR="$tmp/root/usr/lib/pkgconfig"
cflags=$(pkg-config --cflags libxrayfdr) libs=$(pkg-config --libs libxrayfdr)
if cc -std=c11 -Wall -Wextra -Werror -pedantic $cflags "$tmp/prog.c" -o "$tmp/prog" $libs \
	>"$tmp/cc.log" 2>&1 && LD_LIBRARY_PATH="$tmp/root/usr/lib" "$tmp/prog" >"$tmp/run.log" 2>&1; then
	result ok "a C11 -pedantic program builds with pkg-config and runs on the shared library ($(cat "$tmp/run.log"))"
else
	cat "$tmp/run.log" >>"$tmp/cc.log" 2>/dev/null
	result fail "a C11 program builds with pkg-config and runs on the shared library" "$tmp/cc.log"
fi

if cc -std=c11 $cflags "$tmp/prog.c" -o "$tmp/prog-static" "$tmp/root/usr/lib/libxrayfdr.a" \
	>"$tmp/st.log" 2>&1 && "$tmp/prog-static" >>"$tmp/st.log" 2>&1; then
	result ok "the same program links the static library"
else
	result fail "the same program links the static library" "$tmp/st.log"
fi

printf '#include <xrayfdr/fdr.h>\nint main() { return xrayfdr_md_kind_name(0) ? 0 : 1; }\n' >"$tmp/prog.cc"
if c++ -Wall -Werror $cflags "$tmp/prog.cc" -o "$tmp/prog-cxx" $libs >"$tmp/cxx.log" 2>&1 &&
	LD_LIBRARY_PATH="$tmp/root/usr/lib" "$tmp/prog-cxx" >>"$tmp/cxx.log" 2>&1; then
	result ok "the public headers compile and link as C++"
else
	result fail "the public headers compile and link as C++" "$tmp/cxx.log"
fi
exit $status
