#!/usr/bin/env bash
# build.sh - build the vmx debug 6.12 kernel from Debian's linux-source-6.12,
# or print where the cached build is.
#
# Usage:
#   tools/kernels/build.sh            build unless cached; print the cache dir
#   tools/kernels/build.sh --cached   print the cache dir if it is built, else
#                                     fail (exit 1) without building
#   tools/kernels/build.sh --id       print the cache dir name (nothing built)
#
# Inputs: /usr/src/linux-source-6.12.tar.xz (package linux-source-6.12),
# Debian's config of the newest installed 6.12 (/boot/config-6.12.*),
# tools/kernels/modules.list (make localmodconfig: the only loadable modules
# kept), tools/kernels/debug.config (the fragment applied last), this script
# and tools/kernels/lib.sh (the steps it shares with newest.sh). The cache
# is /var/cache/vmx-kernels/<version>-debug-<hash>/
# (VMX_KERNEL_CACHE overrides the parent), <hash> covering all of those
# inputs, so a change of any of them builds afresh and an unchanged set is
# reused. Holding:
#   src/          the unpacked, configured and built tree: vmx builds
#                 against it (make -C src M=...), it is the headers tree
#   bzImage       the kernel
#   kver          its release (uname -r), e.g. 6.12.95-vmx-debug
#   modules/lib/modules/<kver>/   modules_install output (stripped), with
#                 build -> the src/ above
#   config        the final .config
#   build.log     the build's output; build.time the seconds each step took
#   ok            written last: the build is complete
# The build runs niced (nice -n 19, ionice idle), -j$VMX_KERNEL_JOBS
# (default 2): test guests share the same cores. An interrupted build
# (no ok) whose configuration was complete is resumed by the next run.
set -euo pipefail

ME=kernels/build.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TARBALL=${VMX_KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
CACHE_ROOT=${VMX_KERNEL_CACHE:-/var/cache/vmx-kernels}
JOBS=${VMX_KERNEL_JOBS:-2}
FRAGMENT=$HERE/debug.config
MODLIST=$HERE/modules.list
# shellcheck source=SCRIPTDIR/lib.sh
source "$HERE/lib.sh"

kernels_mode "${BASH_SOURCE[0]}" "" "${1:-}"

[ -r "$TARBALL" ] || die "$TARBALL missing: apt-get install -t bookworm-backports linux-source-6.12"
BASE_CONFIG=$(printf '%s\n' /boot/config-6.12.* | sort -V | tail -n1)
[ -e "$BASE_CONFIG" ] || die "no /boot/config-6.12.*: install Debian's 6.12 kernel (tools/setup.sh)"
SRC_VERSION=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || true)
[ -n "$SRC_VERSION" ] || SRC_VERSION=$(stat -c %s-%Y "$TARBALL")
HASH=$(kernels_hash "$SRC_VERSION" "$BASE_CONFIG" "$MODLIST" "$FRAGMENT" "${BASH_SOURCE[0]}")
ID=$(echo "${SRC_VERSION%%-*}" | tr -c 'A-Za-z0-9.\n' '_')-debug-$HASH
D=$CACHE_ROOT/$ID

kernels_report "$mode" "the debug kernel" "make kernels"
kernels_begin
if [ "$resume" = 0 ]; then
	mkdir -p "$D/src"
	say "unpacking $TARBALL"
	"${NICE[@]}" tar -xJf "$TARBALL" -C "$D/src" --strip-components=1 || die "unpacking failed"
	kernels_unpacked
	kernels_configure
fi
kernels_finish
