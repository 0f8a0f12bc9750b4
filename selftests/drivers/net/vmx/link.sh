#!/usr/bin/env bash
# link.sh - carrier and operstate across "ip link set down/up" loops, link
# settings through ethtool, nothing delivered while down (counters), a
# second NIC independent.
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

# While DUT is down the device delivers nothing: the peer sends N
# datagrams at DUT's MAC (a static neighbour entry, so they leave without
# ARP; the peer's tx_packets shows they left) and none of DUT's counters
# (ethtool -S, /sys/class/net/DUT/statistics, interrupts) moves. Without a
# route no reply could come back anyway, so the reply is not what counts.
down_silent() {
	local n=20 p0 p1 rc=0
	pexec ip neigh replace "$DUT_IP" lladdr "$(mac_of "$DUT")" dev "$PEER" nud permanent
	ip link set "$DUT" down || return 1
	snap "$DUT" > "$VMX_TMP/down0"
	p0=$(peer_link_stat tx_packets)
	udp_send --ns "$PEER_NS" "$DUT_IP" 5010 $n
	sleep 0.5
	p1=$(peer_link_stat tx_packets)
	snap "$DUT" > "$VMX_TMP/down1"
	echo "peer tx_packets +$((p1 - p0)) while $DUT was down ($n datagrams at $(mac_of "$DUT"))"
	[ $((p1 - p0)) -ge $n ] || { echo "the peer did not send them"; rc=1; }
	if smoved "$VMX_TMP/down0" "$VMX_TMP/down1"; then
		echo "all $(wc -l < "$VMX_TMP/down1") counters of $DUT unchanged"
	else
		echo "$DUT counters moved while down"; rc=1
	fi
	pexec ip neigh del "$DUT_IP" dev "$PEER"
	ip link set "$DUT" up && wait_carrier "$DUT" 10 || return 1
	return $rc
}
check "down: the device delivers nothing (counters still while the peer sends)" down_silent
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
