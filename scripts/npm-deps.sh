#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The npm packages the viewer suite (tests/tools/test_viewer.py) loads:
# speedscope, at the exact versions tests/viewer/package-lock.json pins,
# installed into the build tree, never globally nor into the source tree.
#
#   scripts/npm-deps.sh BUILD     npm ci into BUILD/viewer/node_modules, then
#                                 touch BUILD/viewer/npm.stamp (make's target)
#   scripts/npm-deps.sh --system  as root (make deps): Debian's nodejs and npm,
#                                 if no npm is on the PATH
#
# Without npm, BUILD mode says so and installs nothing, and the viewer suite
# skips with that reason; a failing npm ci fails.  To change a version: edit
# tests/viewer/package.json, then in a scratch copy of that directory run
# `npm install --ignore-scripts --omit-lockfile-registry-resolved` and copy
# its package-lock.json back (the lock names no registry host).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" = "--system" ]; then
	if command -v npm >/dev/null 2>&1; then
		echo "npm-deps: npm $(npm --version 2>/dev/null) present"
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "npm-deps: --system must run as root (it calls apt-get)" >&2
		exit 1
	fi
	echo "npm-deps: installing Debian's nodejs and npm"
	export DEBIAN_FRONTEND=noninteractive
	APT="apt-get -q -y -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"
	$APT update
	$APT install --no-install-recommends nodejs npm
	exit 0
fi

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: scripts/npm-deps.sh BUILD | --system" >&2
	exit 2
fi
dest=$1/viewer
stamp=$dest/npm.stamp
rm -f "$stamp"

if ! command -v npm >/dev/null 2>&1; then
	echo "npm-deps: npm is not installed (make deps installs it):" \
		"speedscope is not installed and the viewer suite will skip" >&2
	exit 0
fi

mkdir -p "$dest"
cp "$top/tests/viewer/package.json" "$top/tests/viewer/package-lock.json" "$dest/"
cd "$dest"
# ci: exactly the lock's versions and integrity hashes, or an error;
# no install scripts run
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
test -f node_modules/speedscope/dist/release/index.html
touch npm.stamp
