#!/usr/bin/env bash
# qstats_down.sh - queue statistics over netlink (netdev qstats-get) read by
# an unprivileged user while the DUT is down: before its first open and
# after a close, device scope and queue scope. In 6.12 the device-scope
# dump (netdev_nl_stats_by_netdev) calls the driver's per-queue callbacks
# for every real queue whether or not the device is up, and qstats-get
# needs no privilege: a driver whose queues exist only while up must answer
# from its base stats there. Expected: no oops, the totals readable while
# down and never going backwards across down/up, growing with traffic.
# Kernel 6.10+ (qstats netlink); SKIP on older kernels.
# vmx-timeout: 240
source "$(dirname "$0")/lib.sh"

vmx_setup --no-load
if ! have_qstats; then
	skip "qstats-get while down" "no qstats netlink (netdev family qstats-get) in kernel $(uname -r)"
	vmx_done
fi
check "driver $VMX_DRIVER bound, DUT not opened yet" dut_up_driver || vmx_done
log "DUT=$DUT (ifindex $(cat "/sys/class/net/$DUT/ifindex")) PEER=$PEER"

is_down() { ! ip link show dev "$DUT" | head -n1 | grep -q '[<,]UP[,>]'; }

# dump_ok SCOPE: one unprivileged qstats-get dump of SCOPE (dev|queue) on
# the DUT; fails on an error, and stops the test when the kernel oopsed
# (the dump holds rtnl: everything after would hang).
dump_ok() {
	local rc
	nl_qstats "$1" "$DUT"
	rc=$?
	if kernel_oopsed; then
		echo "the kernel oopsed during qstats-get ($1 scope), exit status $rc"
		return 99
	fi
	[ "$rc" = 0 ] || echo "nlstats.py exit status $rc"
	return "$rc"
}

# check_dump NAME SCOPE: subtest around dump_ok, aborting on an oops.
check_dump() {
	check "$1" dump_ok "$2" && return 0
	kernel_oopsed >/dev/null && vmx_abort_wedged "oops in qstats-get: rtnl is held, stopping"
	return 1
}

# read_totals: device-scope totals (qstats_totals, as nobody) into TOT.
TOT=
read_totals() {
	TOT=$(qstats_totals "$DUT") || { echo "$TOT"; return 1; }
	echo "rx-packets tx-packets rx-bytes tx-bytes: $TOT"
	kernel_oopsed && return 1
	return 0
}

# ------------------------------------------------ before the first open
check "DUT is down before its first open" is_down
check_dump "device-scope qstats-get before the first open (unprivileged)" dev
check_dump "queue-scope qstats-get before the first open (unprivileged)" queue
check "device-scope totals readable before the first open" read_totals ||
	{ kernel_oopsed >/dev/null && vmx_abort_wedged "oops in qstats-get"; }
T0=$TOT

# ------------------------------------------------ up, traffic
check "DUT up, carrier" dut_addr_setup
check "ping with the DUT up" dut_ping -c 5 -i 0.2 "$PEER_IP"
check_dump "queue-scope qstats-get while up" queue
up_totals() {
	read_totals || return 1
	not_backwards "${T0:-0 0 0 0}" "$TOT" || { echo "went backwards from $T0"; return 1; }
	local t
	read -r -a t <<<"$TOT"
	[ "${t[0]}" -gt 0 ] && [ "${t[1]}" -gt 0 ] ||
		{ echo "rx-packets/tx-packets still 0 after ping"; return 1; }
}
check "device-scope totals count the ping, none went backwards" up_totals
T1=$TOT

# ------------------------------------------------ closed, reopened
down_totals() {
	ip link set "$DUT" down || return 1
	is_down || { echo "$DUT still up"; return 1; }
	read_totals || return 1
	not_backwards "$T1" "$TOT" || { echo "went backwards from $T1 after close"; return 1; }
}
check "device-scope totals after close: readable, not backwards" down_totals ||
	{ kernel_oopsed >/dev/null && vmx_abort_wedged "oops in qstats-get after close"; }
T2=$TOT
check_dump "device-scope qstats-get after close (unprivileged)" dev
check_dump "queue-scope qstats-get after close (unprivileged)" queue

reopen_totals() {
	ip link set "$DUT" up || return 1
	wait_carrier "$DUT" 10 || return 1
	read_totals || return 1
	not_backwards "${T2:-$T1}" "$TOT" || { echo "went backwards from ${T2:-$T1} after reopen"; return 1; }
	dut_ping -c 5 -i 0.2 "$PEER_IP" || return 1
	local b t
	read -r -a b <<<"${T2:-$T1}"
	read_totals || return 1
	read -r -a t <<<"$TOT"
	[ "${t[0]}" -gt "${b[0]}" ] && [ "${t[1]}" -gt "${b[1]}" ] ||
		{ echo "totals did not grow with traffic after reopen"; return 1; }
}
check "reopened: totals not backwards, growing with traffic" reopen_totals

# A few more close/open rounds with a dump in each state.
flap_totals() {
	local i prev=$TOT
	for i in 1 2 3; do
		ip link set "$DUT" down || return 1
		read_totals >/dev/null || { echo "round $i: no totals while down"; return 1; }
		not_backwards "$prev" "$TOT" || { echo "round $i down: $prev -> $TOT"; return 1; }
		prev=$TOT
		ip link set "$DUT" up || return 1
		wait_carrier "$DUT" 10 || return 1
		dut_ping -c 2 -i 0.2 "$PEER_IP" >/dev/null || { echo "round $i: no ping"; return 1; }
		read_totals >/dev/null || { echo "round $i: no totals while up"; return 1; }
		not_backwards "$prev" "$TOT" || { echo "round $i up: $prev -> $TOT"; return 1; }
		prev=$TOT
		echo "round $i: $TOT"
	done
}
check "3 close/open rounds: totals never backwards" flap_totals ||
	{ kernel_oopsed >/dev/null && vmx_abort_wedged "oops in qstats-get during close/open"; }

vmx_done
