#!/usr/bin/env bash
# build.sh - build the project's counting TCG plugin (vmxcount.so) and its
# guest marker program (vmx-mark) for one QEMU binary. The plugin must be
# compiled against the qemu-plugin.h of the QEMU version that loads it, so
# the header comes from that version's Debian source package (apt-get source,
# unpacked in the cache; never copied into the checkout). Prints the
# directory holding vmxcount.so and vmx-mark on stdout (logs on stderr).
#
# Usage: tools/count/build.sh [QEMU-BINARY]   (default: qemu-system-x86_64 on PATH)
#
# Which source version: a test-device build (tools/testdev/build.sh) has a
# "version" file next to its bin/ directory; any other binary is looked up
# with dpkg (the source version of the package that ships it).
#
# Environment:
#   VMX_COUNT_CACHE  cache directory (default /var/cache/vmx-count); builds
#                    are <version>-<hash of sources and flags>/, sources
#                    src/<version>/, downloads dl/ (the test device's dl/
#                    is reused when it holds the package)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${VMX_COUNT_CACHE:-/var/cache/vmx-count}
TESTDEV_DL=${VMX_TESTDEV_CACHE:-/var/cache/vmx-testdev}/dl
CFLAGS=(-O2 -g -Wall -Wextra -Wno-unused-parameter -fPIC)

log() { printf 'count: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# a name (vm.sh passes its QEMU_BIN, "qemu-system-x86_64" for the stock
# device) is looked up on PATH
qemu=$(command -v "${1:-qemu-system-x86_64}" || true)
if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then die "no qemu-system-x86_64 (give its path)"; fi
qemu=$(readlink -f "$qemu")
if [ -r "$(dirname "$qemu")/../version" ]; then
	VERSION=$(cat "$(dirname "$qemu")/../version")
else
	pkg=$(dpkg -S "$qemu" 2>/dev/null | head -n1 | cut -d: -f1) ||
		die "$qemu belongs to no Debian package and has no version file"
	VERSION=$(dpkg-query -W -f '${source:Version}' "$pkg")
fi
[ -n "$VERSION" ] || die "cannot tell the QEMU source version of $qemu"
upstream=${VERSION#*:}
verslug=$(printf '%s' "$upstream" | tr -c 'A-Za-z0-9.+\n' '_')
KEY=$({ echo "$VERSION"; printf '%s\n' "${CFLAGS[@]}"
	cat "$HERE/vmxcount.c" "$HERE/mark.c" "$0"; } | sha256sum | cut -c1-12)
OUT=$CACHE/$verslug-$KEY
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

mkdir -p "$CACHE/dl" "$CACHE/src"
exec 9>"$CACHE/.lock"
flock 9
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

SRC=$CACHE/src/$verslug
HDR=$SRC/include/qemu/qemu-plugin.h
if [ ! -e "$HDR" ]; then
	dsc=qemu_${upstream}.dsc
	dl=$CACHE/dl
	if [ ! -e "$dl/$dsc" ] && [ -e "$TESTDEV_DL/$dsc" ]; then
		dl=$TESTDEV_DL
	elif [ ! -e "$dl/$dsc" ]; then
		[ "$(id -u)" = 0 ] || die "apt-get source qemu=$VERSION needs root the first time"
		# deb-src entries: tools/testdev/build.sh adds them (bookworm's
		# sources list has none by default)
		grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ /etc/apt/sources.list ||
			die "no deb-src entry in apt's sources (tools/testdev/build.sh adds them)"
		log "apt-get source qemu=$VERSION"
		(cd "$dl" && apt-get source -q --download-only "qemu=$VERSION" >&2)
	fi
	log "unpacking qemu $VERSION (Debian's patches applied)"
	rm -rf "$SRC"
	dpkg-source -q -x "$dl/$dsc" "$SRC" >&2
	rm -f "$CACHE/src/"qemu_*.orig.tar.*
	[ -e "$HDR" ] || die "no include/qemu/qemu-plugin.h in qemu $VERSION"
fi

tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046  # pkg-config prints several flags
gcc "${CFLAGS[@]}" -shared $(pkg-config --cflags glib-2.0) -I"$SRC/include/qemu" \
	-o "$tmp/vmxcount.so" "$HERE/vmxcount.c" || die "plugin build failed"
gcc -O2 -Wall -Wextra -static -o "$tmp/vmx-mark" "$HERE/mark.c" || die "vmx-mark build failed"
# the marker's NOPs must carry the magic as 32-bit displacements
grep -q 'nopl *0x564d0300(%rax)' <<<"$(objdump -d "$tmp/vmx-mark")" ||
	die "vmx-mark: the compiler did not emit the marker NOPs"
echo "$VERSION" >"$tmp/version"
rm -rf "$OUT"
mv "$tmp" "$OUT"
trap - EXIT
touch "$OUT/.done"
log "built $OUT"
echo "$OUT"
