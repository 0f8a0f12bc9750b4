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
# config, modules.list, newest.config and this script. Same layout as
# build.sh's: src/ (the built tree, vmx's headers tree), bzImage, kver, config,
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

die() { echo "$ME: $*" >&2; exit 1; }
say() { echo "$ME: $*" >&2; }

mode=build
case "${1:-}" in
"") ;;
--cached) mode=cached ;;
--id) mode=id ;;
--latest) mode=latest ;;
-h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
*) die "unknown option '$1' (see --help)" ;;
esac

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

if [ $mode = latest ]; then
	apt_setup
	APT_TOOL=apt-cache apt_private search '^linux-source-[0-9.]+$' | awk '{print $1}' |
	while read -r p; do
		echo "$p $(APT_TOOL=apt-cache apt_private show "$p" | sed -n 's/^Version: //p' | sort -V | tail -n1)"
	done | sort -V
	exit 0
fi

BASE_CONFIG=${VMX_NEWEST_BASE_CONFIG:-$(printf '%s\n' /boot/config-6.12.* | sort -V | tail -n1)}
[ -e "$BASE_CONFIG" ] || die "no base config ($BASE_CONFIG): install Debian's 6.12 kernel (tools/setup.sh)"
HASH=$( { echo "$PKG=$VERSION"; cat "$BASE_CONFIG" "$MODLIST" "$FRAGMENT" "${BASH_SOURCE[0]}"; } |
	sha256sum | cut -c1-12)
ID=$(echo "${VERSION%%-*}" | tr -c 'A-Za-z0-9.\n' '_')-newest-$HASH
D=$CACHE_ROOT/$ID

case $mode in
id) echo "$ID"; exit 0 ;;
cached)
	[ -e "$D/ok" ] || die "the newest kernel is not built ($D): run tools/kernels/newest.sh"
	echo "$D"; exit 0 ;;
esac

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.$ID.lock"
if ! flock -n 9; then
	say "another build of $ID is running; waiting for it"
	flock 9
fi
if [ -e "$D/ok" ]; then
	say "cached: $D ($(cat "$D/kver"))"
	echo "$D"; exit 0
fi

LOG=$D/build.log
resume=0
if [ -s "$D/config" ] && cmp -s "$D/config" "$D/src/.config"; then
	resume=1
	say "resuming the interrupted build in $D (log: $LOG)"
	echo "== resumed $(date -u +%FT%TZ)" >>"$LOG"
else
	rm -rf "$D"
	mkdir -p "$D"
	: >"$LOG"
	: >"$D/build.time"
	say "building $ID in $D (log: $LOG)"
fi
NICE=(nice -n 19)
command -v ionice >/dev/null && NICE+=(ionice -c 3)
step() {
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	say "$name..."
	echo "== $name: $*" >>"$LOG"
	(cd "$D/src" && "$@") >>"$LOG" 2>&1 || rc=$?
	echo "$name $(( $(date +%s) - t0 ))" >>"$D/build.time"
	[ $rc = 0 ] || { tail -n 30 "$LOG" >&2; die "$name failed (rc $rc); see $LOG"; }
}
MAKE=("${NICE[@]}" make -j"$JOBS")

t0=$(date +%s)
if [ $resume = 0 ]; then
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
echo "unpack $(( $(date +%s) - t0 ))" >>"$D/build.time"

cp "$BASE_CONFIG" "$D/src/.config"
grep -vE '^[[:space:]]*(#|$)' "$MODLIST" | awk '{print $1, 0, 0}' >"$D/lsmod"
step olddefconfig make olddefconfig
step localmodconfig sh -c "yes '' | make LSMOD=$D/lsmod localmodconfig"
step fragment scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
step olddefconfig2 make olddefconfig

bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) sym=${line%%=*}; want=$line ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want=off ;;
	*) continue ;;
	esac
	have=$(grep -E "^$sym=" "$D/src/.config" || true)
	if [ "$want" = off ]; then
		[ -z "$have" ] && continue
	else
		[ "$have" = "$want" ] && continue
	fi
	say "config: wanted '${want/off/$sym off}', got '${have:-$sym off}'"
	bad=1
done <"$FRAGMENT"
[ $bad = 0 ] || die "newest.config did not fully apply (see above)"
cp "$D/src/.config" "$D/config"
fi

step build "${MAKE[@]}" bzImage modules
KVER=$(make -s -C "$D/src" kernelrelease)
step modules_install "${MAKE[@]}" INSTALL_MOD_PATH="$D/modules" INSTALL_MOD_STRIP=1 \
	DEPMOD=/sbin/depmod modules_install
ln -sfn "$D/src" "$D/modules/lib/modules/$KVER/build"
rm -f "$D/modules/lib/modules/$KVER/source"
cp "$D/src/arch/x86/boot/bzImage" "$D/bzImage"
echo "$KVER" >"$D/kver"
echo "total $(( $(date +%s) - t0 ))$([ $resume = 1 ] && echo ' (resumed)')" >>"$D/build.time"
date -u +%FT%TZ >"$D/ok"
say "built $KVER in $(( ($(date +%s) - t0) / 60 )) min: $D"
echo "$D"
