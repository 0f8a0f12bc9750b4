#!/usr/bin/env bash
# lib.sh - the library of the vmx selftests, the one file a test sources.
# Source it from a test script that runs as root inside a guest booted by
# tools/vm.sh (never on the host: the tests load and unload NIC drivers and
# move interfaces between netns).
#
# Environment:
#   VMX_DRIVER       vmx (default): insmod the vmx.ko built for the running
#                    kernel (see vmx_ko_path); vmxnet3: modprobe the in-tree
#                    driver, as a reference.
#   VMX_DRIVER_NAME  name the driver registers under /sys/bus/pci/drivers
#                    (default: the same as VMX_DRIVER).
#   VMX_PROJECT      project top dir (default: four levels above this file).
#   VMX_KO           the vmx.ko to load (default: see vmx_ko_path).
#
# Topology (tools/vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio, or --tap):
# DUT is the first interface bound to the driver under test (DUT2 the second,
# if any); PEER is the first virtio_net interface, moved into netns "peer".
#   DUT  10.99.0.1/24 fd99::1/64        PEER 10.99.0.2/24 fd99::2/64
#
# A test looks like:
#   source "$(dirname "$0")/lib.sh"
#   vmx_setup                  # load drivers, addresses, carrier
#   check "ping v4" dut_ping -c 5 "$PEER_IP"
#   vmx_done                   # dmesg check, plan, exit status
#
# Output is TAP 13 ("ok N name", "not ok N name", "ok N name # SKIP why"),
# diagnostics are "# ..." lines. vmx_done exits 0 when nothing failed, 1 when
# something failed, 4 (kselftest skip) when every subtest was skipped.
#
# This file holds the test's start (TAP header, the check that it runs in
# a guest), TAP output and checks, vmx_setup and the test's end
# (vmx_done). It sources the helpers, one file per topic:
#   lib/base.sh      the settings (project, driver, netns, addresses) and
#                    waiting (wait_for, scaled)
#   lib/log.sh       kernel log: the lines that fail a test, the check of
#                    the test's slice of the log, what the test declares it
#                    causes ("# vmx-expects"), kmemleak (debug kernel)
#   lib/driver.sh    the driver under test: load, unload, its interfaces,
#                    revision, capabilities, forced resets, kernel version
#   lib/net.sh       the peer netns and the links: pexec, addresses,
#                    carrier, MTU, MACs, what QEMU does with TSO frames
#   lib/traffic.sh   traffic: ping, background jobs, iperf3, UDP datagrams,
#                    packet capture, RX filter probes, byte-exact TCP copies,
#                    TCP through a tunnel with the offload counters
#   lib/counters.sh  counters: sysfs and ethtool -S values, snapshots and
#                    their deltas, SNMP, the peer's frames by length (tc),
#                    queue statistics over netlink, the error counters
#                    vmx_done checks
#   lib/testdev.sh   the QEMU monitor (hmp) and the project's test device
#   lib/faultinj.sh  fault injection aimed at vmx's code (failslab,
#                    fail_page_alloc: the debug kernel)
# XDP's helpers are in xdp_lib.sh, which XDP tests source after this file.
# The guest scripts that are not tests (tools/demo.sh --guest,
# tools/bench-guest.sh) source lib/tool.sh instead: the same helpers
# without a TAP test.

set -u

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

# the settings and waiting, shared with the guest tools (lib/tool.sh)
# shellcheck source=lib/base.sh
# (no dirname, basename or id here or below where a builtin does: every
# process costs tens of milliseconds under TCG, and every test sources this)
_vmx_here=${BASH_SOURCE[0]%/*}
[ "$_vmx_here" != "${BASH_SOURCE[0]}" ] || _vmx_here=.
source "$_vmx_here/lib/base.sh"
_vmx_t=${0##*/}
VMX_TEST=${VMX_TEST:-${_vmx_t%.sh}}

# ------------------------------------------------------------ kernel log
# (before anything else: tools/guest-suite.sh sources lib.sh with
# VMX_LIB_LOGCHECK_ONLY=1 to get only this part, lib/log.sh, to check the
# log outside the tests and kmemleak)
# shellcheck source=lib/log.sh
source "$VMX_LIB_DIR/lib/log.sh"
[ "${VMX_LIB_LOGCHECK_ONLY:-0}" = 1 ] && return 0

# ------------------------------------------------------------ the test starts

VMX_TMP=$(mktemp -d /tmp/vmx-"$VMX_TEST".XXXXXX)
_vmx_n=0
_vmx_pass=0
_vmx_fail=0
_vmx_skip=0
_vmx_bg=()
_vmx_marker="vmx-selftest: begin $VMX_TEST $$ $RANDOM"
# bookkeeping subtests vmx_done adds (kernel log, error counters)
_vmx_extra=0
_vmx_done=0

echo "TAP version 13"
# Only inside a tools/vm.sh guest (it mounts /run/vmx): on a host these
# tests would unload NIC drivers and move interfaces away. Nothing is
# touched before this check.
if [ "$EUID" != 0 ] || { [ ! -e /run/vmx/env ] && [ "${VMX_ALLOW_HOST:-0}" != 1 ]; }; then
	echo "ok 1 $VMX_TEST # SKIP must run as root inside a tools/vm.sh guest"
	echo "1..1"
	rm -rf "$VMX_TMP"
	exit $KSFT_SKIP
fi
echo "$_vmx_marker" >/dev/kmsg 2>/dev/null
# The test's TAP output, for subtests reported while a check's command
# runs with its output redirected (lib/counters.sh: the error counters
# checked before an unload).
exec {_vmx_tap}>&1

# ------------------------------------------------------------ the helpers

# shellcheck source=lib/driver.sh
source "$VMX_LIB_DIR/lib/driver.sh"
# shellcheck source=lib/net.sh
source "$VMX_LIB_DIR/lib/net.sh"
# shellcheck source=lib/traffic.sh
source "$VMX_LIB_DIR/lib/traffic.sh"
# shellcheck source=lib/counters.sh
source "$VMX_LIB_DIR/lib/counters.sh"
# shellcheck source=lib/testdev.sh
source "$VMX_LIB_DIR/lib/testdev.sh"
# shellcheck source=lib/faultinj.sh
source "$VMX_LIB_DIR/lib/faultinj.sh"

# ------------------------------------------------------- TAP output and checks

log() { printf '# %s\n' "$*"; }

# Indent command output as TAP diagnostics, line by line as it comes (a
# builtin loop: check calls this for every subtest).
diag() {
	local l
	while IFS= read -r l || [ -n "$l" ]; do
		printf '#   %s\n' "$l"
	done
}

ok() {
	_vmx_flush_unload_fails
	_vmx_n=$((_vmx_n + 1)); _vmx_pass=$((_vmx_pass + 1))
	echo "ok $_vmx_n $1"
}

fail() {
	_vmx_flush_unload_fails
	_vmx_n=$((_vmx_n + 1)); _vmx_fail=$((_vmx_fail + 1))
	echo "not ok $_vmx_n $1"
	[ $# -lt 2 ] || log "$2"
}

skip() {
	_vmx_flush_unload_fails
	_vmx_n=$((_vmx_n + 1)); _vmx_skip=$((_vmx_skip + 1))
	echo "ok $_vmx_n $1 # SKIP ${2:-}"
}

# check NAME CMD...: one subtest, passing when CMD exits 0. CMD's output
# is shown as diagnostics.
check() {
	local name=$1 rc
	shift
	"$@" > "$VMX_TMP/check.out" 2>&1
	rc=$?
	[ ! -s "$VMX_TMP/check.out" ] || diag <"$VMX_TMP/check.out"
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		fail "$name" "exit status $rc: $*"
	fi
	return $rc
}

# check_fails NAME CMD...: passes when CMD fails.
check_fails() {
	local name=$1 rc
	shift
	"$@" > "$VMX_TMP/check.out" 2>&1
	rc=$?
	[ ! -s "$VMX_TMP/check.out" ] || diag <"$VMX_TMP/check.out"
	if [ $rc -ne 0 ]; then
		ok "$name"
		return 0
	fi
	fail "$name" "unexpectedly succeeded: $*"
	return 1
}

# ... | show_grep REGEX: print stdin, succeed if a line matches REGEX.
show_grep() {
	local o
	o=$(cat)
	printf '%s\n' "$o"
	printf '%s\n' "$o" | grep -q -E "$1"
}

# Abort the whole test (e.g. setup failed): one failing subtest, then done.
bail() {
	fail "${2:-setup}" "$1"
	vmx_done
}

# ------------------------------------------------------------ setup

# vmx_setup [--no-load]: peer netns + driver + addresses. On failure the
# test bails out with one failed subtest.
vmx_setup() {
	local f
	for f in all default; do
		echo 0 > "/proc/sys/net/ipv6/conf/$f/accept_dad"
		echo 1 > "/proc/sys/net/ipv6/conf/$f/keep_addr_on_down"
	done
	peer_setup > "$VMX_TMP/setup.out" 2>&1 ||
		{ diag <"$VMX_TMP/setup.out"; bail "peer setup failed" setup; }
	if [ "${1:-}" != --no-load ]; then
		dut_up_driver > "$VMX_TMP/setup.out" 2>&1 ||
			{ diag <"$VMX_TMP/setup.out"; bail "driver $VMX_DRIVER did not come up" setup; }
		dut_addr_setup > "$VMX_TMP/setup.out" 2>&1 ||
			{ diag <"$VMX_TMP/setup.out"; bail "DUT $DUT setup failed" setup; }
		log "driver $VMX_DRIVER ($(dut_module)) kernel $(kernel_release): DUT=$DUT DUT2=${DUT2:-none} PEER=$PEER (netns $PEER_NS)"
	fi
}

# ------------------------------------------------------------ the test ends

vmx_cleanup() {
	local p
	for p in "${_vmx_bg[@]}"; do
		_bg_kill "$p"
	done
	for p in "${_vmx_bg[@]}"; do
		wait "$p" 2>/dev/null
	done
	_vmx_bg=()
	ip netns del "$PEER_NS" 2>/dev/null
	dut_unload 2>/dev/null
}

# vmx_done: error counters of the driver's interfaces (while it is still
# loaded; the instances unloaded before were checked by dut_unload, and
# their counts add up against the test's allowances), clean up, the kernel log check, the plan, exit. Writes
# "vmx-selftest: end ..." to the kernel log: tools/guest-suite.sh checks
# what lies outside the tests' begin/end markers.
vmx_done() {
	[ $_vmx_done = 0 ] || exit $KSFT_FAIL
	_vmx_done=1
	if dut_loaded && [ -n "$(dut_ifaces)" ]; then
		_vmx_extra=$((_vmx_extra + 1))
		check "error counters zero (bad completions, resets, TX timeouts)" \
			_vmx_counters_check
	fi
	vmx_cleanup
	if dut_loaded; then
		fail "driver unload" "rmmod $(dut_module) failed"
	fi
	_vmx_flush_unload_fails
	# The end marker first, then the check of everything since the start
	# marker: a line the driver or kernel prints later falls outside the
	# test's window, where tools/guest-suite.sh checks the log, never
	# between the two checks.
	echo "${_vmx_marker/begin/end}" >/dev/kmsg 2>/dev/null
	_vmx_extra=$((_vmx_extra + 1))
	check "kernel log clean" kernel_log_check
	echo "1..$_vmx_n"
	log "$VMX_TEST: $_vmx_pass passed, $_vmx_fail failed, $_vmx_skip skipped"
	rm -rf "$VMX_TMP"
	trap - EXIT
	if [ $_vmx_fail -gt 0 ]; then
		exit $KSFT_FAIL
	fi
	# The bookkeeping subtests pass whatever the test did, so compare
	# with the number of real subtests.
	if [ $_vmx_skip -gt 0 ] && [ $_vmx_skip -eq $((_vmx_n - _vmx_extra)) ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# vmx_abort_wedged WHY: the kernel is wedged (e.g. an oops holding rtnl,
# after which every ip/ethtool/rmmod would hang): one failed subtest, the
# plan, and exit without vmx_done's cleanup.
vmx_abort_wedged() {
	fail "kernel still usable" "$1"
	_vmx_done=1
	trap - EXIT
	echo "1..$_vmx_n"
	log "$VMX_TEST: $_vmx_pass passed, $_vmx_fail failed, $_vmx_skip skipped (aborted)"
	exit $KSFT_FAIL
}

_vmx_on_exit() {
	[ $_vmx_done = 1 ] && return
	fail "test script ended early" "exit before vmx_done"
	vmx_done
}
trap _vmx_on_exit EXIT
trap 'exit 1' INT TERM
