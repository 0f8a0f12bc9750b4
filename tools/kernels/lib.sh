# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# lib.sh - the steps build.sh (the debug 6.12) and newest.sh (the newest
# Debian source kernel) share; sourced by both, never run.
#
# The caller sets ME (its name in messages), CACHE_ROOT, JOBS, FRAGMENT
# (its config fragment), MODLIST and BASE_CONFIG, then, in this order:
#   kernels_mode SCRIPT EXTRA "${1:-}"   the command line (sets mode)
#   HASH=$(kernels_hash LINE FILE...)  the cache key over LINE, the FILEs
#                               and this library; then ID and D=$CACHE_ROOT/$ID
#   kernels_report MODE WHAT HOW   --id / --cached: print and exit
#   kernels_begin               lock; exit printing $D if built; else a
#                               fresh or resumed $D (resume=0/1)
#   when resume=0: unpack the source into $D/src, kernels_unpacked,
#                               kernels_configure
#   kernels_finish              build, install, mark ok, print $D
#
# Cache layout ($D): src/ (the configured, built tree, vmx's headers tree),
# bzImage, kver, config, modules/lib/modules/<kver>/ (build -> src),
# build.log, build.time (seconds per step), ok (written last).

KLIB=${BASH_SOURCE[0]}

die() { echo "$ME: $*" >&2; exit 1; }
say() { echo "$ME: $*" >&2; }

# kernels_mode SCRIPT EXTRA ARG: mode from the script's one argument: build
# (none), cached (--cached), id (--id), EXTRA (--EXTRA, when EXTRA is not
# empty); --help prints SCRIPT's header comment and exits; anything else
# fails
kernels_mode() {
	local script=$1 extra=$2 arg=$3

	mode=build
	case "$arg" in
	"") ;;
	--cached) mode=cached ;;
	--id) mode=id ;;
	-h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$script"; exit 0 ;;
	*)
		if [ -z "$extra" ] || [ "$arg" != "--$extra" ]; then
			die "unknown option '$arg' (see --help)"
		fi
		mode=$extra ;;
	esac
}

# kernels_hash LINE FILE...: the first 12 hex digits of the SHA-256 of LINE,
# the FILEs and this library, so that a change of any of them builds afresh
kernels_hash() {
	local line=$1
	shift
	{ echo "$line"; cat "$@" "$KLIB"; } | sha256sum | cut -c1-12
}

# kernels_report MODE WHAT HOW: for MODE id print $ID, for MODE cached print
# $D if the build is complete ("WHAT is not built ...: run HOW" and exit 1
# if not); both exit. Any other MODE returns.
kernels_report() {
	case $1 in
	id) echo "$ID"; exit 0 ;;
	cached)
		[ -e "$D/ok" ] || die "$2 is not built ($D): run $3"
		echo "$D"; exit 0 ;;
	esac
}

# kernels_begin: one build of $ID at a time (a second waits for the first);
# a complete build is printed and ends the script. An interrupted build
# whose configuration was complete (config saved and still the tree's
# .config) goes on where make stopped (resume=1); anything else starts
# afresh in an empty $D (resume=0). Sets LOG, NICE, MAKE and t0.
kernels_begin() {
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
	MAKE=("${NICE[@]}" make -j"$JOBS")
	t0=$(date +%s)
}

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

# kernels_unpacked: record the unpack's time (the caller unpacked $D/src)
kernels_unpacked() { echo "unpack $(( $(date +%s) - t0 ))" >>"$D/build.time"; }

# kernels_configure: BASE_CONFIG, make olddefconfig, make localmodconfig
# keeping only the modules of MODLIST (lsmod format: the first word counts),
# FRAGMENT merged, olddefconfig again; every line of FRAGMENT must have taken
# effect (a dependency left unmet silently drops an option). The result is
# saved as $D/config.
kernels_configure() {
	local bad=0 line sym want have

	cp "$BASE_CONFIG" "$D/src/.config"
	grep -vE '^[[:space:]]*(#|$)' "$MODLIST" | awk '{print $1, 0, 0}' >"$D/lsmod"
	step olddefconfig make olddefconfig
	step localmodconfig sh -c "yes '' | make LSMOD=$D/lsmod localmodconfig"
	step fragment scripts/kconfig/merge_config.sh -m .config "$FRAGMENT"
	step olddefconfig2 make olddefconfig

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
	[ $bad = 0 ] || die "$(basename "$FRAGMENT") did not fully apply (see above)"
	cp "$D/src/.config" "$D/config"
}

# kernels_finish: build bzImage and modules, install the modules (stripped)
# with build -> src, copy the kernel, write kver, the total time and ok
# last; print $D.
kernels_finish() {
	local kver

	step build "${MAKE[@]}" bzImage modules
	kver=$(make -s -C "$D/src" kernelrelease)
	step modules_install "${MAKE[@]}" INSTALL_MOD_PATH="$D/modules" INSTALL_MOD_STRIP=1 \
		DEPMOD=/sbin/depmod modules_install
	ln -sfn "$D/src" "$D/modules/lib/modules/$kver/build"
	rm -f "$D/modules/lib/modules/$kver/source"
	cp "$D/src/arch/x86/boot/bzImage" "$D/bzImage"
	echo "$kver" >"$D/kver"
	echo "total $(( $(date +%s) - t0 ))$([ "$resume" = 1 ] && echo ' (resumed)')" >>"$D/build.time"
	date -u +%FT%TZ >"$D/ok"
	say "built $kver in $(( ($(date +%s) - t0) / 60 )) min: $D"
	echo "$D"
}
