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
# kept), tools/kernels/debug.config (the fragment applied last) and this
# script. The cache is /var/cache/vmx-kernels/<version>-<hash>/
# (VMX_KERNEL_CACHE overrides the parent), <hash> covering all of those
# inputs, so a change of any of them builds afresh and an unchanged set is
# reused. Holding:
#   src/          the unpacked, configured and built tree: vmx builds
#                 against it (make -C src M=...), it is the headers tree
#   bzImage       the kernel
#   kver          its release (uname -r), e.g. 6.12.95-vmx-debug
#   modules/lib/modules/<kver>/   modules_install output (stripped), with
#                 build -> ../../../../src
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

die() { echo "$ME: $*" >&2; exit 1; }
say() { echo "$ME: $*" >&2; }

mode=build
case "${1:-}" in
"") ;;
--cached) mode=cached ;;
--id) mode=id ;;
-h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
*) die "unknown option '$1' (see --help)" ;;
esac

[ -r "$TARBALL" ] || die "$TARBALL missing: apt-get install -t bookworm-backports linux-source-6.12"
BASE_CONFIG=$(printf '%s\n' /boot/config-6.12.* | sort -V | tail -n1)
[ -e "$BASE_CONFIG" ] || die "no /boot/config-6.12.*: install Debian's 6.12 kernel (tools/setup.sh)"
SRC_VERSION=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || true)
[ -n "$SRC_VERSION" ] || SRC_VERSION=$(stat -c %s-%Y "$TARBALL")
HASH=$( { echo "$SRC_VERSION"; cat "$BASE_CONFIG" "$MODLIST" "$FRAGMENT" "${BASH_SOURCE[0]}"; } |
	sha256sum | cut -c1-12)
ID=$(echo "${SRC_VERSION%%-*}" | tr -c 'A-Za-z0-9.\n' '_')-debug-$HASH
D=$CACHE_ROOT/$ID

case $mode in
id) echo "$ID"; exit 0 ;;
cached)
	[ -e "$D/ok" ] || die "the debug kernel is not built ($D): run make kernels"
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
# An interrupted build whose configuration was complete (config saved and
# still the tree's .config) goes on where make stopped; anything else
# starts afresh.
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
# step NAME CMD...: run CMD in src/ into the log, timing it
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
mkdir -p "$D/src"
say "unpacking $TARBALL"
"${NICE[@]}" tar -xJf "$TARBALL" -C "$D/src" --strip-components=1 || die "unpacking failed"
echo "unpack $(( $(date +%s) - t0 ))" >>"$D/build.time"

cp "$BASE_CONFIG" "$D/src/.config"
# Modules: only those of modules.list (lsmod format: the first word counts).
grep -vE '^[[:space:]]*(#|$)' "$MODLIST" | awk '{print $1, 0, 0}' >"$D/lsmod"
step olddefconfig make olddefconfig
step localmodconfig sh -c "yes '' | make LSMOD=$D/lsmod localmodconfig"
step fragment scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
step olddefconfig2 make olddefconfig

# Every line of the fragment must have taken effect (a dependency left
# unmet silently drops an option).
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
[ $bad = 0 ] || die "debug.config did not fully apply (see above)"
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
