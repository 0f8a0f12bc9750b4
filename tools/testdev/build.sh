#!/usr/bin/env bash
# build.sh - build the project's vmxnet3 test device: Debian's QEMU source
# package of a pinned version with tools/testdev/patches/*.patch applied,
# only x86_64-softmmu. The build lives in a cache outside the checkout, keyed
# by version + configure flags + patch contents, and is reused while none of
# them changes. Prints the path of qemu-system-x86_64 on stdout (everything
# else goes to stderr).
#
# Usage: tools/testdev/build.sh [--print-dir]
#   --print-dir   print the directory holding a qemu-system-x86_64 to put in
#                 front of PATH (what tools/vm.sh calls), not the binary
#
# A new build is checked with tools/testdev/qtest.py before it is printed:
# any failing check fails build.sh (the failing lines on stderr) and the
# verdict is kept with the build, so that a cached build that failed is
# rejected too (until the series changes). qtest.py runs at normal
# priority: its checks wait on real-time timeouts.
#
# Environment:
#   VMX_TESTDEV_CACHE    cache directory (default /var/cache/vmx-testdev)
#   VMX_TESTDEV_VERSION  Debian source version (default below)
#   VMX_TESTDEV_JOBS     ninja -j (default 2: the cores are shared with guests)
#   VMX_TESTDEV_KEEP     builds of one version kept in the cache (default 3)
#
# Needs root the first time (deb-src entries, apt-get source, build deps).
set -euo pipefail

VERSION=${VMX_TESTDEV_VERSION:-1:10.0.13+ds-0+deb13u1}
CACHE=${VMX_TESTDEV_CACHE:-/var/cache/vmx-testdev}
JOBS=${VMX_TESTDEV_JOBS:-2}
KEEP=${VMX_TESTDEV_KEEP:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
PATCHDIR=$HERE/patches
PRINT=bin
[ "${1:-}" = --print-dir ] && PRINT=dir

# What the guests need: TCG (KVM kept for machines that have it), plugins,
# 9p (virtfs, with xattr support), tap/hub networking (built in, no library),
# vhost for taps. q35, intel-iommu, virtio, pcie-root-port, vmxnet3 come
# with the default device set. fdt would try to download dtc; docs need
# sphinx; neither is needed.
CONFIGURE=(--python=/usr/bin/python3 --disable-download --disable-install-blobs
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
	--target-list=x86_64-softmmu --without-default-features
	--enable-tcg --enable-kvm --enable-plugins --enable-virtfs --enable-attr
	--enable-pixman --enable-vhost-net --enable-vhost-kernel
	--enable-vhost-user --disable-fdt --disable-docs --disable-werror)

# Build dependencies beyond tools/setup.sh's list (meson >= 1.5 comes from
# bookworm-backports; bookworm's 1.0.1 is too old for 10.0).
DEPS=(libglib2.0-dev libpixman-1-dev ninja-build
      pkg-config python3-venv dpkg-dev)
BP_DEPS=(meson)

log() { printf 'testdev: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
quiet() { nice -n 19 ionice -c3 "$@"; }

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

meson_ok() {
	local v
	v=$(meson --version 2>/dev/null) || return 1
	dpkg --compare-versions "$v" ge 1.5
}

ensure_sources() {
	local f=/etc/apt/sources.list.d/vmx-testdev-src.sources
	local pin=/etc/apt/preferences.d/vmx-testdev-no-trixie
	local changed=0
	# never install a trixie binary: they need glibc 2.38
	if [ ! -e "$pin" ]; then
		cat >"$pin" <<'PIN'
# vmx testdev: trixie is only a source of source packages
Package: *
Pin: release n=trixie
Pin-Priority: -1

Package: *
Pin: release n=trixie-backports
Pin-Priority: -1
PIN
	fi
	if [ ! -e "$f" ]; then
		cat >"$f" <<'SRC'
# vmx testdev: Debian source packages (QEMU for tools/testdev/build.sh)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates bookworm-backports trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		changed=1
	fi
	if [ $changed = 1 ]; then
		log "apt-get update (deb-src entries added)"
		apt-get update -qq >&2
	fi
}

ensure_deps() {
	local missing=() p
	for p in "${DEPS[@]}"; do have_pkg "$p" || missing+=("$p"); done
	if [ ${#missing[@]} -gt 0 ] || ! meson_ok; then
		[ "$(id -u)" = 0 ] || die "missing build dependencies (${missing[*]} meson>=1.5): run as root"
		export DEBIAN_FRONTEND=noninteractive
		[ ${#missing[@]} -eq 0 ] ||
			apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
		meson_ok || apt-get install -y -qq --no-install-recommends \
			-t bookworm-backports "${BP_DEPS[@]}" >&2
		meson_ok || die "meson >= 1.5 not available"
	fi
}

# key: version, configure flags, patch names and contents
key() {
	{
		echo "$VERSION"
		printf '%s\n' "${CONFIGURE[@]}"
		for p in "$PATCHDIR"/*.patch; do
			[ -e "$p" ] || continue
			echo "== $(basename "$p")"
			cat "$p"
		done
	} | sha256sum | cut -c1-12
}

upstream=${VERSION#*:}
upstream=${upstream%-*}
srcname=qemu-$upstream
verslug=$(printf '%s' "${VERSION#*:}" | tr -c 'A-Za-z0-9.+\n' '_')
KEY=$(key)
# $CACHE/work/$verslug: the one source + build tree of this version, patched
#   with whatever series was built last (recorded in its patches-applied/)
# $CACHE/$verslug-$KEY: a finished build, the binary and the series it has
WORK=$CACHE/work/$verslug
DIR=$CACHE/$verslug-$KEY
BIN=$DIR/bin/qemu-system-x86_64

result() {
	if [ $PRINT = dir ]; then echo "$DIR/bin"; else echo "$BIN"; fi
}

# qtest.py's verdict on a build, kept beside it: $DIR/qtest holds "ok N"
# or "failed"; $DIR/qtest.log its TAP output
qtest() {
	local t0 rc=0 ran failed
	t0=$(date +%s)
	log "qtest.py against the new build (about 30 s)"
	python3 "$HERE/qtest.py" "$BIN" >"$DIR/qtest.log" 2>&1 || rc=$?
	ran=$(grep -c '^\(not \)\?ok ' "$DIR/qtest.log" || true)
	failed=$(grep -c '^not ok ' "$DIR/qtest.log" || true)
	if [ "$rc" = 0 ] && [ "$failed" = 0 ] && [ "$ran" -gt 0 ]; then
		echo "ok $ran" >"$DIR/qtest"
		log "qtest: $ran checks passed in $(( $(date +%s) - t0 ))s"
		return 0
	fi
	echo failed >"$DIR/qtest"
	qtest_failed
	return 1
}

qtest_failed() {
	local failed
	failed=$(grep -c '^not ok ' "$DIR/qtest.log" || true)
	grep '^not ok ' "$DIR/qtest.log" >&2 || tail -n 20 "$DIR/qtest.log" >&2
	die "qtest.py failed ($failed failing checks, $DIR/qtest.log): this build of the test device is rejected"
}

# a cached build: only if qtest.py passed on it (a build from before
# build.sh ran qtest.py has no verdict: it gets one now, once)
cached() {
	[ -e "$DIR/.done" ] && [ -x "$BIN" ] || return 1
	case "$(cat "$DIR/qtest" 2>/dev/null)" in
	ok*) ;;
	failed) qtest_failed ;;
	*) qtest || exit 1 ;;
	esac
	return 0
}

mkdir -p "$CACHE"
if [ -e "$DIR/.done" ] && [ -x "$BIN" ] && [ -e "$DIR/qtest" ]; then
	cached
	log "cached: $DIR"
	result
	exit 0
fi

exec 9>"$CACHE/.lock"
flock 9
if cached; then
	log "cached: $DIR"
	result
	exit 0
fi

start=$(date +%s)
ensure_deps
SRC=$WORK/$srcname
if [ ! -e "$WORK/.unpacked" ]; then
	rm -rf "$WORK"
	mkdir -p "$CACHE/dl" "$WORK"
	if ! [ -e "$CACHE/dl/qemu_${VERSION#*:}.dsc" ]; then
		[ "$(id -u)" = 0 ] || die "apt-get source needs root the first time"
		ensure_sources
		log "apt-get source qemu=$VERSION"
		(cd "$CACHE/dl" && apt-get source -q --download-only "qemu=$VERSION" >&2)
	fi
	log "unpacking $srcname (Debian's own patches applied)"
	dpkg-source -q -x "$CACHE/dl/qemu_${VERSION#*:}.dsc" "$SRC" >&2
	rm -f "$WORK"/qemu_*.orig.tar.*   # dpkg-source's copy of the tarball
	mkdir -p "$WORK/patches-applied"
	touch "$WORK/.unpacked"
fi

# Take the tree back to Debian's source (newest patch first), then apply the
# series: ninja rebuilds only what changed (a few seconds for vmxnet3.c).
unapply() {
	local applied=("$WORK/patches-applied"/*.patch) i
	for ((i = ${#applied[@]} - 1; i >= 0; i--)); do
		[ -e "${applied[i]}" ] || continue
		patch -d "$SRC" -p1 -R -s --no-backup-if-mismatch <"${applied[i]}" ||
			die "cannot reverse $(basename "${applied[i]}"); remove $WORK to start over"
		rm -f "${applied[i]}"
	done
}
unapply
for p in "$PATCHDIR"/*.patch; do
	[ -e "$p" ] || continue
	log "applying $(basename "$p")"
	if ! patch -d "$SRC" -p1 -s --no-backup-if-mismatch <"$p"; then
		# leave the tree as Debian's source for the next attempt
		patch -d "$SRC" -p1 -R -s --no-backup-if-mismatch <"$p" >/dev/null 2>&1 || true
		unapply
		die "$(basename "$p") does not apply to $srcname"
	fi
	cp "$p" "$WORK/patches-applied/"
done

cd "$SRC"
if [ ! -e build/build.ninja ] || [ "$(cat build/vmx-configure 2>/dev/null)" != "${CONFIGURE[*]}" ]; then
	log "configure"
	rm -rf build
	mkdir -p build
	(cd build && quiet ../configure "${CONFIGURE[@]}" >configure.log 2>&1) ||
		{ tail -n 30 build/configure.log >&2; die "configure failed ($SRC/build/configure.log)"; }
	echo "${CONFIGURE[*]}" >build/vmx-configure
fi
log "ninja -j$JOBS qemu-system-x86_64 (about 7 minutes from scratch on 2 cores)"
quiet ninja -C build -j"$JOBS" qemu-system-x86_64 >build/ninja.log 2>&1 ||
	{ tail -n 40 build/ninja.log >&2; die "build failed ($SRC/build/ninja.log)"; }
cd /

rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/patches"
cp "$SRC/build/qemu-system-x86_64" "$DIR/bin/"
cp "$WORK/patches-applied/"*.patch "$DIR/patches/" 2>/dev/null || true
echo "$VERSION" >"$DIR/version"
touch "$DIR/.done"
log "built in $(( $(date +%s) - start ))s: $BIN"
qtest || exit 1

# keep the newest $KEEP builds of this version
find "$CACHE" -mindepth 1 -maxdepth 1 -name "$verslug-*" -printf '%T@ %p\n' |
	sort -rn | tail -n +$((KEEP + 1)) | cut -d' ' -f2- |
	while read -r old; do log "pruning $old"; rm -rf "$old"; done

result
