#!/usr/bin/env bash
# guest-suite.sh - run selftests one after the other INSIDE a tools/vm.sh
# guest; used by tools/run-tests.sh (one boot per group).
#
# Usage (in the guest, cwd = project dir):
#   tools/guest-suite.sh OUTDIR TEST.sh [TEST.sh...]
#
# For each test: runs selftests/drivers/net/vmx/TEST.sh under `timeout`
# (the test's "# vmx-timeout: N" header line, else $VMX_TEST_TIMEOUT, else
# 300 s; times VMX_TIMEOUT_SCALE, default 1: the debug kernel's groups
# triple it), output to OUTDIR/TEST.log, then writes OUTDIR/TEST.rc holding
# "<exit status> <seconds>". A test without a .rc file never finished (the
# guest crashed or was killed). Between tests it removes the peer netns and
# unloads the driver under test, so each test starts from the same state.
# One progress line per test goes to stdout (the guest console).
#
# mode.sh, when run first (tools/run-tests.sh puts it there), proves the
# guest runs in the group's mode; if it fails, the other tests are not run
# and each is recorded as a failure ("not run: group mode not in effect").
#
# After the last test, OUTDIR/kernel_log.log (+ .rc), a TAP result of its
# own: the kernel log outside the tests' "vmx-selftest: begin/end" markers
# (boot, between tests, after the last test) checked with lib.sh's
# kernel_log_bad (lib/log.sh); a test killed before its end marker leaves
# the rest of its log to this check.
#
# On a debug kernel (kmemleak, lockdep: tools/kernels), every test is also
# checked after its driver unload for kmemleak reports from vmx, the debug
# tools' own log lines and lockdep still being on (see debug_check below);
# a failed check adds a "not ok" line to its log and makes its status 1.
#
# On the project's test device (VMX_TESTDEV_NICS, tools/vm.sh --nic
# vmxnet3t), every test must leave the device's strict-mode violation count
# (stat-violations of every test-device NIC, testdev_violations in
# lib/testdev.sh) where it found it, counting its own run and the driver
# unload after it: otherwise a "not ok" line naming the kinds is added to
# its log and its exit status becomes 1. A test that causes violations on
# purpose says so with a "# vmx-expects: violations" header line.
# Violations before the first test (boot) count against the first one
# (mode.sh).
set -u

[ $# -ge 1 ] || { echo "usage: $0 OUTDIR TEST..." >&2; exit 2; }
OUT=$1
shift
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../selftests/drivers/net/vmx" && pwd)
mkdir -p "$OUT" || exit 2
# lib.sh's kernel log part only (lib/log.sh: kernel_log_bad and its
# regexes, the kmemleak helpers): the rest of lib.sh starts a test when
# sourced (TAP header, kernel log marker, traps).
# shellcheck source=../selftests/drivers/net/vmx/lib.sh
# shellcheck disable=SC2034  # read by lib.sh
VMX_LIB_LOGCHECK_ONLY=1
source "$DIR/lib.sh" || exit 2
unset VMX_LIB_LOGCHECK_ONLY
if [ -n "${VMX_TESTDEV_NICS:-}" ]; then
	# hmp, testdev_stat, testdev_violations, testdev_violation_kinds...
	# shellcheck source=../selftests/drivers/net/vmx/lib/testdev.sh
	source "$DIR/lib/testdev.sh" || exit 2
fi

# ------------------------------------------------ debug kernel checks
# On a kernel with kmemleak, lockdep or KASAN (tools/kernels' debug 6.12),
# after every test and the driver unload that follows it:
#  - kmemleak: one scan (after 5 s, so that what the unload freed or
#    leaked is old enough to be reported); a suspected leak whose backtrace
#    has a vmx frame, or a frame of an unloaded module (vmx: the only module
#    the tests unload), fails the test. Other new reports are only listed
#    (OUTDIR/TEST.kmemleak): they are the kernel's, not the driver's. The
#    boot's reports are cleared before the first test.
#  - the kernel log from the test's start on: the debug tools' own lines
#    that lib.sh's kernel_log_bad does not match (its WARNING:/BUG:/KASAN/
#    DMA-API/unreferenced object already cover KASAN, KFENCE, lockdep,
#    DMA-API debug and leak reports): VMX_DEBUG_BAD.
#  - lockdep still on (/proc/lockdep_stats debug_locks 1): lockdep turns
#    itself off for good after its first report or on some taints, and
#    every later test would pass unchecked; kmemleak still on likewise.
#    Not trouble: "kmemleak: Cannot allocate a scan area, scanning the
#    full object" (its fallback when faults.sh's injected failure hits its
#    own allocation; it stays on and scans more, not less).
VMX_DEBUG_BAD='stalled pool shutdown|kmemleak: .*([Dd]isabl|[Cc]annot allocate a kmemleak|[Ff]ail)|DMA-API: .*(out of memory|disabl)|lockdep is turned off|blocked for more than'
DEBUG_KMEMLEAK=0
if [ -w /sys/kernel/debug/kmemleak ]; then
	if have_kmemleak; then
		DEBUG_KMEMLEAK=1
		kmemleak_scan > "$OUT/kmemleak-boot.txt" 2>&1
	fi
fi
debug_locks() { sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats 2>/dev/null; }
# a lockdep already off at boot fails the first test (it checked nothing)
DEBUG_LOCKDEP=0
LOCKDEP_BOOT=
if [ -r /proc/lockdep_stats ]; then
	DEBUG_LOCKDEP=1
	[ "$(debug_locks)" = 1 ] || LOCKDEP_BOOT="; off since boot"
fi

# debug_check NAME: the checks above for test NAME.
debug_check() {
	local name=$1 f=$OUT/$1.kmemleak vmx bad n
	if [ "$DEBUG_KMEMLEAK" = 1 ]; then
		sleep 5
		if ! have_kmemleak || ! kmemleak_scan > "$f" 2>&1; then
			add_failure "$name" "kmemleak still on after the test" "$(dmesg | grep -i kmemleak | tail -n 5)"
			DEBUG_KMEMLEAK=0
		else
			vmx=$(kmemleak_vmx < "$f")
			n=$(grep -c '^unreferenced object' "$f")
			if [ -n "$vmx" ]; then
				add_failure "$name" "kmemleak: no suspected leak with vmx in its backtrace ($(printf '%s\n' "$vmx" | grep -c '^unreferenced object') of $n new reports)" \
					"$(printf '%s\n' "$vmx" | head -n 60)"
			else
				echo "# vmx-suite: kmemleak: no leak from vmx ($n other new reports, $f)" >> "$OUT/$name.log"
			fi
		fi
	fi
	bad=$(dmesg 2>/dev/null | awk -v m="vmx-suite: $name starting" 'f { print } index($0, m) { f = 1 }' |
		grep -E "$VMX_DEBUG_BAD")
	[ -z "$bad" ] || add_failure "$name" "kernel log: no page_pool, kmemleak, DMA-API debug, lockdep or hung-task trouble" "$bad"
	if [ "$DEBUG_LOCKDEP" = 1 ] && [ "$(debug_locks)" != 1 ]; then
		add_failure "$name" "lockdep still on after the test (debug_locks $(debug_locks)$LOCKDEP_BOOT)" \
			"$(dmesg | grep -E -A 3 'WARNING: .*(lock|RCU)|BUG: .*lock' | head -n 20)"
		DEBUG_LOCKDEP=0
	fi
}

{
	echo "kernel: $(uname -r)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "cpus: $(nproc)"
	echo "driver: ${VMX_DRIVER:-vmx}"
	lspci -nn 2>/dev/null
	ip -br link
} > "$OUT/guest-info.txt" 2>&1

# Bounded: after an oops rmmod can block for ever on rtnl.
# (Only what a test left: each process is tens of milliseconds under TCG.)
cleanup_between() {
	local m=${VMX_DRIVER:-vmx}
	[ ! -e /run/netns/peer ] || timeout 60 ip netns del peer 2>/dev/null
	[ ! -d "/sys/module/$m" ] || timeout 60 rmmod "$m" 2>/dev/null
}

# not_run NAME WHY: record NAME as a failed test that never ran.
not_run() {
	echo "not ok 1 $1 # not run: $2" > "$OUT/$1.log"
	echo "1 0" > "$OUT/$1.rc"
	echo "vmx-suite: $1: not run ($2)"
}

# add_failure NAME MSG [DETAILS]: one more failing subtest MSG at the end
# of test NAME's log (DETAILS as diagnostics), its exit status 1.
add_failure() {
	local log=$OUT/$1.log rcf=$OUT/$1.rc n rc secs
	n=$(grep -oE '^(not )?ok [0-9]+' "$log" 2>/dev/null | awk '{ print $NF }' | sort -n | tail -n1)
	{ echo "not ok $((${n:-0} + 1)) $2"
	  [ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/#   /'; } >> "$log"
	read -r rc secs < "$rcf"
	[ "$rc" = 0 ] && echo "1 $secs" > "$rcf"
	echo "vmx-suite: $1: $2"
	[ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 20 | sed 's/^/vmx-suite:   /'
}

# violations_check NAME SCRIPT: the test device's violation count after
# test NAME (and its cleanup) is still $td_seen, or NAME expects some.
td_seen=0
violations_check() {
	local log=$OUT/$1.log v kinds msg
	[ -n "${VMX_TESTDEV_NICS:-}" ] || return 0
	if v=$(testdev_violations 2>&1); then
		[ "$v" = "$td_seen" ] && {
			echo "# vmx-suite: test device stat-violations $v (unchanged)" >> "$log"
			return 0
		}
		kinds=$(testdev_violation_kinds 2>&1)
		if [ -f "$2" ] && grep -qE '^# vmx-expects:(.*[[:space:]])?violations([[:space:]]|$)' "$2"; then
			{ echo "# vmx-suite: test device stat-violations $td_seen -> $v (expected by the test)"
			  printf '%s\n' "$kinds" | sed 's/^/#   /'; } >> "$log"
			td_seen=$v
			return 0
		fi
		msg="test device strict checks: no violation (stat-violations $td_seen -> $v)"
		td_seen=$v
	else
		msg="test device strict checks: stat-violations readable"
		kinds=$v
	fi
	add_failure "$1" "$msg" "$kinds"
}

mode_failed=
for t in "$@"; do
	name=${t%.sh}
	script=$DIR/$name.sh
	log=$OUT/$name.log
	rm -f "$OUT/$name.rc"
	if [ -n "$mode_failed" ]; then
		not_run "$name" "group mode not in effect"
		continue
	fi
	if [ ! -f "$script" ]; then
		echo "not ok 1 $name # no such test: $script" > "$log"
		echo "1 0" > "$OUT/$name.rc"
		echo "vmx-suite: $name: missing"
		continue
	fi
	tmo=$(sed -n 's/^# vmx-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n1)
	tmo=$(( ${tmo:-${VMX_TEST_TIMEOUT:-300}} * ${VMX_TIMEOUT_SCALE:-1} ))
	echo "vmx-suite: $name starting (timeout ${tmo}s)" > /dev/kmsg
	start=$EPOCHSECONDS
	timeout -k 10 "$tmo" bash "$script" > "$log" 2>&1 < /dev/null
	rc=$?
	secs=$((EPOCHSECONDS - start))
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "# TIMEOUT: killed after ${tmo}s" >> "$log"
	fi
	echo "$rc $secs" > "$OUT/$name.rc.tmp" && mv "$OUT/$name.rc.tmp" "$OUT/$name.rc"
	printf 'vmx-suite: %-14s exit %-3s %4ss  %s\n' "$name" "$rc" "$secs" \
		"$(grep -c '^ok ' "$log") ok, $(grep -c '^not ok ' "$log") not ok"
	cleanup_between
	violations_check "$name" "$script"
	debug_check "$name"
	[ "$name" = mode ] && [ "$rc" != 0 ] && mode_failed=1
done

# The kernel log outside every test's own window.
outside_tests() {
	dmesg -r 2>/dev/null | awk '
		/vmx-selftest: begin / { inside = 1; next }
		/vmx-selftest: end / { inside = 0; next }
		!inside { print }'
}
# (the debug kernel's DMA-API debug announces itself at boot: not trouble)
bad=$(outside_tests | kernel_log_bad 'DMA-API: (preallocated [0-9]+ debug entries|debugging enabled by kernel config)$')
{
	echo "TAP version 13"
	if [ -n "$bad" ]; then
		echo "not ok 1 kernel log clean outside the tests (boot, between tests, after the last)"
		printf '%s\n' "$bad" | head -n 40 | sed 's/^/#   /'
		rc=1
	else
		echo "ok 1 kernel log clean outside the tests (boot, between tests, after the last)"
		rc=0
	fi
	echo "1..1"
} > "$OUT/kernel_log.log"
echo "$rc 0" > "$OUT/kernel_log.rc"
printf 'vmx-suite: %-14s exit %-3s\n' kernel_log "$rc"
dmesg > "$OUT/dmesg.txt" 2>&1
# Which interrupt mode (MSI-X, MSI, IO-APIC INTx) the NICs ended up with.
cat /proc/interrupts > "$OUT/interrupts.txt" 2>&1
exit 0
