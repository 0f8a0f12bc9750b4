#!/usr/bin/env bash
# link.sh - carrier and operstate across "ip link set down/up" loops, link
# settings through ethtool, no traffic while down, a second NIC independent.
source "$(dirname "$0")/lib.sh"

N=${VMX_LINK_LOOPS:-20}

vmx_setup

operstate() { cat "/sys/class/net/$1/operstate"; }
is_up() { [ "$(operstate "$1")" = up ]; }

updown() {
	local i
	for i in $(seq "$N"); do
		ip link set "$DUT" down || return 1
		if [ "$(operstate "$DUT")" != down ]; then
			echo "cycle $i: operstate after down is $(operstate "$DUT")"
			return 1
		fi
		ip link set "$DUT" up || return 1
		wait_carrier "$DUT" 10 || { echo "cycle $i"; return 1; }
		wait_for 5 is_up "$DUT" ||
			{ echo "cycle $i: operstate $(operstate "$DUT") after up"; return 1; }
	done
	echo "$N down/up cycles"
}
check "down/up x$N: carrier and operstate" updown
check "ping after down/up loop" dut_ping -c 5 -i 0.05 "$PEER_IP"

link_detected() { ethtool "$DUT" | show_grep "Link detected: yes"; }
check "ethtool: link detected" link_detected
speed_ok() {
	local s
	s=$(cat "/sys/class/net/$DUT/speed" 2>/dev/null)
	echo "speed: $s"
	[ -n "$s" ] && [ "$s" -gt 0 ]
}
check "link speed reported" speed_ok

down_silent() {
	ip link set "$DUT" down || return 1
	peer_no_reply -c 3 -i 0.2 "$DUT_IP"
	local rc=$?
	ip link set "$DUT" up && wait_carrier "$DUT" 10 || return 1
	return $rc
}
check "no reply while down" down_silent
check "ping after up" peer_ping -c 5 -i 0.05 "$DUT_IP"

bg_start ip netns exec "$PEER_NS" ping -q -i 0.005 -W 1 "$DUT_IP"
flood=$BG_PID
updown_traffic() {
	local i
	for i in $(seq 10); do
		ip link set "$DUT" down || return 1
		sleep 0.05
		ip link set "$DUT" up || return 1
		wait_carrier "$DUT" 10 || { echo "cycle $i"; return 1; }
	done
}
check "down/up x10 under ping flood" updown_traffic
bg_stop "$flood"
check "ping after flood" dut_ping -c 10 -i 0.05 "$PEER_IP"

if [ -n "$DUT2" ]; then
	second() {
		local i
		for i in $(seq 5); do
			ip link set "$DUT2" up || return 1
			wait_carrier "$DUT2" 10 || return 1
			ip link set "$DUT2" down || return 1
		done
		has_carrier "$DUT" || { echo "$DUT lost carrier"; return 1; }
		dut_ping -c 5 -i 0.05 "$PEER_IP"
	}
	check "second NIC up/down leaves the first alone" second
else
	skip "second NIC up/down leaves the first alone" "only one NIC"
fi

vmx_done
