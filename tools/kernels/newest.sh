#!/usr/bin/env bash
# newest.sh - build the vmx "newest" kernel: the newest Linux Debian ships as
# source (trixie-backports' linux-source-7.x, arch all), with a short non-debug
# config, or print where the cached build is.
#
# Usage:
#   tools/kernels/newest.sh            build unless cached; print the cache dir
#   tools/kernels/newest.sh --cached   print the cache dir if it is built, else
#                                      fail (exit 1) without building
#   tools/kernels/newest.sh --id       print the cache dir name (nothing built)
#   tools/kernels/newest.sh --latest   print the newest linux-source-* version
#                                      trixie-backports offers now (to bump the pin)
#
# Source: the package VMX_NEWEST_PKG (default linux-source-7.3) at the pinned
# version VMX_NEWEST_VERSION (default below), fetched with `apt-get download`
# through an apt state of its own under <cache>/apt-trixie-backports/ (its own
# sources.list naming only trixie-backports, signed by Debian's trixie key):
# the system's apt sources and status are never touched, nothing is installed,
# no trixie binary can be pulled in. The .deb is verified by apt against the
# signed Release file and unpacked with dpkg-deb.
#
# Config: Debian's config of the newest installed 6.12 (/boot/config-6.12.*;
# VMX_NEWEST_BASE_CONFIG overrides, e.g. Debian's own 7.x config from the
# package linux-config-7.x, fetched alongside into the same directory), then
# make olddefconfig (new options at their defaults), make localmodconfig
# against tools/kernels/modules.list (as build.sh), tools/kernels/newest.config
# (release -vmx-newest, what the guests and tests need, no debug options),
# olddefconfig again; the build fails if a line of newest.config did not take.
#
# Cache: /var/cache/vmx-kernels/<version>-newest-<hash>/ (VMX_KERNEL_CACHE
# overrides the parent), <hash> over the pinned package and version, the base
# config, modules.list, newest.config, this script and tools/kernels/lib.sh
# (the steps it shares with build.sh). Same layout as build.sh's: src/ (the
# built tree, vmx's headers tree), bzImage, kver, config,
# modules/lib/modules/<kver>/ (build -> src), build.log, build.time, ok
# (written last). An interrupted build (no ok) whose configuration was
# complete is resumed by the next run. Runs nice -n 19 (ionice idle),
# -j$VMX_KERNEL_JOBS (default 2).
set -euo pipefail

ME=kernels/newest.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${VMX_KERNEL_CACHE:-/var/cache/vmx-kernels}
JOBS=${VMX_KERNEL_JOBS:-2}
PKG=${VMX_NEWEST_PKG:-linux-source-7.3}
VERSION=${VMX_NEWEST_VERSION:-7.3.4-1~bpo13+1}
SUITE=trixie-backports
KEYRING=/usr/share/keyrings/debian-archive-trixie-automatic.gpg
FRAGMENT=$HERE/newest.config
MODLIST=$HERE/modules.list
APTDIR=$CACHE_ROOT/apt-$SUITE
# shellcheck source=SCRIPTDIR/lib.sh
source "$HERE/lib.sh"

kernels_mode "${BASH_SOURCE[0]}" "latest" "${1:-}"

# apt_private ARGS...: apt-get (or apt-cache with APT_TOOL=apt-cache) on the
# private state: only trixie-backports, no system sources, no system status.
apt_private() {
	"${APT_TOOL:-apt-get}" -q \
		-o Dir::Etc::sourcelist="$APTDIR/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::Etc::preferencesparts=- \
		-o Dir::State="$APTDIR/state" \
		-o Dir::State::status="$APTDIR/state/status" \
		-o Dir::Cache="$APTDIR/cache" \
		-o APT::Architecture=amd64 \
		-o APT::Sandbox::User=root \
		"$@"
}
apt_setup() {
	[ -r "$KEYRING" ] || die "$KEYRING missing (package debian-archive-keyring)"
	mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/dl"
	echo "deb [signed-by=$KEYRING] http://deb.debian.org/debian $SUITE main" >"$APTDIR/sources.list"
	touch "$APTDIR/state/status"
	apt_private update >/dev/null || die "apt-get update of $SUITE failed"
}

if [ "$mode" = latest ]; then
	apt_setup
	APT_TOOL=apt-cache apt_private search '^linux-source-[0-9.]+$' | awk '{print $1}' |
	while read -r p; do
		echo "$p $(APT_TOOL=apt-cache apt_private show "$p" | sed -n 's/^Version: //p' | sort -V | tail -n1)"
	done | sort -V
	exit 0
fi

BASE_CONFIG=${VMX_NEWEST_BASE_CONFIG:-$(printf '%s\n' /boot/config-6.12.* | sort -V | tail -n1)}
[ -e "$BASE_CONFIG" ] || die "no base config ($BASE_CONFIG): install Debian's 6.12 kernel (tools/setup.sh)"
HASH=$(kernels_hash "$PKG=$VERSION" "$BASE_CONFIG" "$MODLIST" "$FRAGMENT" "${BASH_SOURCE[0]}")
ID=$(echo "${VERSION%%-*}" | tr -c 'A-Za-z0-9.\n' '_')-newest-$HASH
D=$CACHE_ROOT/$ID

kernels_report "$mode" "the newest kernel" "tools/kernels/newest.sh"
kernels_begin
if [ "$resume" = 0 ]; then
	# the package: fetched once into the private apt dir, kept there
	deb=$APTDIR/dl/${PKG}_${VERSION//:/%3a}_all.deb
	if [ ! -s "$deb" ]; then
		apt_setup
		say "fetching $PKG=$VERSION from $SUITE"
		(cd "$APTDIR/dl" && apt_private download "$PKG=$VERSION") >>"$LOG" 2>&1 ||
			die "apt-get download $PKG=$VERSION failed (see $LOG; tools/kernels/newest.sh --latest lists what $SUITE has)"
	fi
	[ -s "$deb" ] || die "$deb missing after the download"
	mkdir -p "$D/src"
	say "unpacking $deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$PKG.tar.xz" |
		"${NICE[@]}" tar -xJ -C "$D/src" --strip-components=1 || die "unpacking failed"
	kernels_unpacked
	kernels_configure
fi
kernels_finish
