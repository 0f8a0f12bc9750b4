#!/usr/bin/env bash
# run.sh - the driver sabotages of tools/sabotage/*.patch against the test
# suite: each must make the tests its header names fail.
#
# Usage:
#   tools/sabotage/run.sh [NAME...]          every sabotage, or these
#   tools/sabotage/run.sh --build-only [NAME...]
#                     apply and build only, no guest (does each patch still
#                     apply to the driver and build?)
#   tools/sabotage/run.sh --baseline [NAME...]
#                     the same runs without the patch: the catching tests
#                     must pass on the driver as it is, or a "caught" says
#                     nothing
#   tools/sabotage/run.sh --list            names, kinds and catch lines
#
# For each NAME: the project's tracked files as they are in the working
# tree (uncommitted changes included) are copied into build/sabotage/NAME
# (with the built XDP programs and a link to .cache), NAME.patch is applied
# there (patch -p1 with no fuzz: it must apply exactly), vmx.ko is built
# there (make all-kernels) and tools/run-tests.sh of that copy runs, once
# per "# catch: GROUP TEST..." line of the patch, only that group with
# TESTS set to those tests (SKIP_SETUP=1 SKIP_BUILD=1 SKIP_CHECK=1). The
# guests load the copy's build/$(uname -r)/vmx.ko: run-tests.sh and the
# tests find the project they run from.
#
# Verdicts, one line each:
#   caught  NAME  at least one test failed (a "not ok" or a failed test);
#                 the failing checks follow
#   MISSED  NAME  every catching test passed with the sabotage in
#   ERROR   NAME  the patch did not apply, the driver did not build, or a
#                 group could not run (its results say why): not caught
# and a summary line; the exit status is 0 only when every sabotage was
# caught (with --baseline: when every catching test passed).
#
# Every guest run takes the machine's guest lock (flock on
# VMX_GUEST_LOCK, default /tmp/vmx-guest.lock; empty: no lock, for a
# caller that holds it already), one run at a time; copying and building
# happen outside it.
#
# Environment:
#   SABOTAGE_OUT=DIR  where the report goes (default
#                     results/sabotage-<date-time>; report.txt)
#   VMX_GUEST_LOCK    see above
#   VMX_*, VERBOSE    passed on to run-tests.sh
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJ=$(cd "$HERE/../.." && pwd)
SCRATCH=$PROJ/build/sabotage
LOCK=${VMX_GUEST_LOCK-/tmp/vmx-guest.lock}
PROGS=selftests/drivers/net/vmx/progs

usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

MODE=run
NAMES=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	-n|--build-only) MODE=build ;;
	--baseline) MODE=baseline ;;
	--list) MODE=list ;;
	-*) echo "sabotage: unknown option $1" >&2; exit 2 ;;
	*) NAMES+=("${1%.patch}") ;;
	esac
	shift
done
if [ ${#NAMES[@]} -eq 0 ]; then
	for p in "$HERE"/*.patch; do
		[ -e "$p" ] || continue
		b=$(basename "$p")
		NAMES+=("${b%.patch}")
	done
fi
for n in "${NAMES[@]}"; do
	[ -f "$HERE/$n.patch" ] || { echo "sabotage: no $n.patch in tools/sabotage" >&2; exit 2; }
done

# catch_lines NAME: the patch's "GROUP TEST..." lines
catch_lines() { sed -n 's/^# catch: *//p' "$HERE/$1.patch"; }
# catch_kernels NAME: the kernels (6.12, 6.1) of its catching groups
catch_kernels() {
	local g
	for g in $(catch_lines "$1" | awk '{ print $1 }'); do
		"$PROJ/tools/run-tests.sh" --list | awk -v g="$g" '$1 == g && $2 == "kernel" { print $3 }'
	done | sort -u
}
# header NAME FIELD: the patch's "# FIELD: ..." line (first line only)
header() { sed -n "s/^# $2: *//p" "$HERE/$1.patch" | head -n 1; }

if [ "$MODE" = list ]; then
	for n in "${NAMES[@]}"; do
		printf '%-24s %s\n' "$n" "$(header "$n" kind)"
		catch_lines "$n" | sed 's/^/                         catch: /'
	done
	exit 0
fi

OUT=${SABOTAGE_OUT:-$PROJ/results/sabotage-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
[ -e "$PROJ/results/.gitignore" ] || { mkdir -p "$PROJ/results"; echo '*' > "$PROJ/results/.gitignore"; }
REPORT=$OUT/report.txt
: > "$REPORT"
say() { echo "sabotage: $*"; }
rep() { printf '%s\n' "$*" | tee -a "$REPORT"; }

# prepare NAME DIR PATCH|"": the copy, patched (unless PATCH is empty) and
# built; 1 with the reason on stdout when something fails.
prepare() {
	local n=$1 d=$2 patch=$3 kdirs
	rm -rf "$d"
	mkdir -p "$d" || { echo "cannot create $d"; return 1; }
	# tracked files as they are now (a deleted one is simply missing)
	(cd "$PROJ" && git ls-files -z --cached | tar --null -T - \
		--ignore-failed-read -cf - 2>/dev/null) | tar -C "$d" -xf - ||
		{ echo "copy of the project into $d failed"; return 1; }
	[ -f "$d/Makefile" ] || { echo "copy of the project into $d is empty"; return 1; }
	# XDP programs already built here (make checks they are up to date)
	cp -a "$PROJ/$PROGS/." "$d/$PROGS/" 2>/dev/null
	# vm.sh's cache (initramfs per kernel, the kernel selftests)
	mkdir -p "$PROJ/.cache"
	ln -sfn "$PROJ/.cache" "$d/.cache"
	mkdir -p "$d/results" && echo '*' > "$d/results/.gitignore"
	if [ -n "$patch" ]; then
		if ! (cd "$d" && patch -p1 -F0 -N -s --no-backup-if-mismatch < "$patch") > "$d/sabotage-patch.log" 2>&1; then
			echo "the patch does not apply: $(head -n 3 "$d/sabotage-patch.log" | tr '\n' ' ')"
			return 1
		fi
	fi
	# only the kernels of the catching groups (make all-kernels builds
	# every installed one)
	kdirs=$(for v in $(catch_kernels "$n"); do
			ls -d /usr/src/linux-headers-"$v".*-amd64 2>/dev/null
		done | sort -u | xargs)
	[ -n "$kdirs" ] || { echo "no kernel headers for the groups' kernels ($(catch_kernels "$n" | xargs))"; return 1; }
	if ! { make -C "$d" all-kernels ALL_KDIRS="$kdirs" && make -C "$d/$PROGS"; } > "$d/sabotage-build.log" 2>&1; then
		echo "the build failed: $(grep -m 3 -E 'error|Error' "$d/sabotage-build.log" | tr '\n' ' ') (log: ${d#"$PROJ"/}/sabotage-build.log)"
		return 1
	fi
	return 0
}

# run_catch DIR GROUP TESTS...: run-tests.sh of the copy, the group with
# those tests; results in DIR/results/GROUP (summary.txt)
run_catch() {
	local d=$1 g=$2 res
	shift 2
	res=$d/results/$g
	rm -rf "$res"
	say "$(basename "$d"): group $g, TESTS=\"$*\" (results: ${res#"$PROJ"/})"
	if [ -n "$LOCK" ]; then
		flock "$LOCK" env SKIP_SETUP=1 SKIP_BUILD=1 SKIP_CHECK=1 \
			TESTS="$*" RESULTS="$res" "$d/tools/run-tests.sh" "$g"
	else
		env SKIP_SETUP=1 SKIP_BUILD=1 SKIP_CHECK=1 \
			TESTS="$*" RESULTS="$res" "$d/tools/run-tests.sh" "$g"
	fi > "$d/results/$g.out" 2>&1
	tail -n 1 "$d/results/$g.out" | sed 's/^/    /'
}

# judge DIR GROUP: VERDICT "pass", "fail" or "error" for one run; the
# failing checks (or what went wrong) in FAILS
judge() {
	local res=$1/results/$2 sum f
	sum=$res/summary.txt
	FAILS=()
	VERDICT=error
	if [ ! -f "$sum" ]; then
		FAILS+=("$2: no summary (run-tests.sh output: ${1#"$PROJ"/}/results/$2.out)")
		return
	fi
	if grep -qE 'not run \((build failed|setup failed|the test device.s QEMU did not build|no vmx\.ko|kernel selftests not)|GROUP COULD NOT START|no tests selected' "$sum"; then
		while IFS= read -r f; do FAILS+=("$f"); done < <(grep -E 'not run \(|GROUP COULD NOT START|no tests selected' "$sum" | sed 's/^ *//' | head -n 3)
		return
	fi
	f=$(tail -n 1 "$sum" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed, .*/\1/p')
	[ -n "$f" ] || { FAILS+=("$2: summary without a count line"); return; }
	if [ "$f" = 0 ]; then VERDICT=pass; return; fi
	# the failing checks, by test; a failed test without "not ok"
	# (crash, timeout, exit status) as the summary puts it
	while IFS= read -r f; do FAILS+=("$f"); done < <(
		for l in "$res/$2"/*.log; do
			[ -f "$l" ] || continue
			grep -E '^not ok [0-9]+' "$l" | sed "s|^|$2/$(basename "$l" .log): |"
		done
		grep -E '^FAIL ' "$sum" | grep -E ' - (timed out|did not finish|not run|exit status|no TAP)|unexpected SKIP' | sed 's/^FAIL  //')
	VERDICT=fail
}

t_all=$(date +%s)
CAUGHT=() MISSED=() ERRORS=() PASSED=() BROKEN=()
rep "# tools/sabotage/run.sh ($MODE) $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$PROJ" describe --always --dirty 2>/dev/null)"
for n in "${NAMES[@]}"; do
	t0=$(date +%s)
	if [ "$MODE" = baseline ]; then
		d=$SCRATCH/baseline-$n; patch=
	else
		d=$SCRATCH/$n; patch=$HERE/$n.patch
	fi
	say "$n: $(header "$n" kind): preparing ${d#"$PROJ"/}"
	if ! why=$(prepare "$n" "$d" "$patch"); then
		rep "ERROR   $n: $why"
		ERRORS+=("$n")
		continue
	fi
	if [ "$MODE" = build ]; then
		rep "built   $n ($(( $(date +%s) - t0 ))s)"
		PASSED+=("$n")
		continue
	fi
	mapfile -t lines < <(catch_lines "$n")
	if [ ${#lines[@]} -eq 0 ]; then
		rep "ERROR   $n: no '# catch: GROUP TEST...' line in $n.patch"
		ERRORS+=("$n")
		continue
	fi
	verdict=pass
	allfails=()
	ran=()
	for l in "${lines[@]}"; do
		read -r g tests <<< "$l"
		# shellcheck disable=SC2086 # the tests are words
		run_catch "$d" "$g" $tests
		judge "$d" "$g"
		v=$VERDICT
		allfails+=("${FAILS[@]}")
		ran+=("$g: $tests ($(tail -n 1 "$d/results/$g/summary.txt" 2>/dev/null || echo 'no summary'))")
		case $v in
		error) verdict=error ;;
		fail) [ "$verdict" = error ] || verdict=fail ;;
		esac
	done
	secs=$(( $(date +%s) - t0 ))
	if [ "$MODE" = baseline ]; then
		case $verdict in
		pass) rep "passes  $n: without the sabotage (${secs}s): ${ran[*]}"; PASSED+=("$n") ;;
		fail) rep "FAILS   $n: the catching tests fail WITHOUT the sabotage (${secs}s)"; BROKEN+=("$n") ;;
		*) rep "ERROR   $n: (${secs}s)"; ERRORS+=("$n") ;;
		esac
	else
		case $verdict in
		fail) rep "caught  $n (${secs}s)"; CAUGHT+=("$n") ;;
		pass) rep "MISSED  $n (${secs}s): every catching test passed: ${ran[*]}"; MISSED+=("$n") ;;
		*) rep "ERROR   $n (${secs}s)"; ERRORS+=("$n") ;;
		esac
	fi
	for f in "${allfails[@]}"; do
		rep "        $(printf '%s' "$f" | cut -c1-200)"
	done
done

secs=$(( $(date +%s) - t_all ))
case $MODE in
build) rep "sabotage: ${#PASSED[@]} built, ${#ERRORS[@]} errors of ${#NAMES[@]} (${secs}s; report $REPORT)" ;;
baseline) rep "sabotage baseline: ${#PASSED[@]} pass, ${#BROKEN[@]} fail without the sabotage, ${#ERRORS[@]} errors of ${#NAMES[@]} (${secs}s; report $REPORT)" ;;
*) rep "sabotage: ${#CAUGHT[@]} caught, ${#MISSED[@]} missed, ${#ERRORS[@]} errors of ${#NAMES[@]} (${secs}s; report $REPORT)"
   [ ${#MISSED[@]} -eq 0 ] || rep "missed: ${MISSED[*]}" ;;
esac
[ ${#MISSED[@]} -eq 0 ] && [ ${#ERRORS[@]} -eq 0 ] && [ ${#BROKEN[@]} -eq 0 ]
