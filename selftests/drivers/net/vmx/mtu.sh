#!/usr/bin/env bash
# mtu.sh - full-size frames (DF set) both ways at several MTUs, MTU set
# while down, MTU changes while the peer is pinging, IPv6 at jumbo MTU.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

full_frames() {
	local mtu=$1
	set_mtu_both "$mtu" || return 1
	dut_ping -c 5 -i 0.05 -s $((mtu - 28)) -M do "$PEER_IP" || return 1
	peer_ping -c 5 -i 0.05 -s $((mtu - 28)) -M do "$DUT_IP" || return 1
	if [ "$mtu" -ge 1280 ]; then
		dut_ping -c 3 -i 0.05 -s $((mtu - 48)) -M do "$PEER_IP6" || return 1
		peer_ping -c 3 -i 0.05 -s $((mtu - 48)) -M do "$DUT_IP6" || return 1
	fi
}
for mtu in ${VMX_MTUS:-576 1500 1504 2000 4000 4096 8192 9000 1500}; do
	check "MTU $mtu: full-size frames both ways" full_frames "$mtu"
done

too_big_dropped() {
	# Peer at 9000, DUT at 1500: a 4000-byte DF frame must not be
	# answered (the DUT cannot take it) but must not break anything.
	pexec ip link set "$PEER" mtu 9000 || return 1
	ip link set "$DUT" mtu 1500 || return 1
	wait_carrier "$DUT" 10 || return 1
	peer_no_reply -c 3 -i 0.2 -s 4000 -M do "$DUT_IP"
	pexec ip link set "$PEER" mtu 1500
	peer_ping -c 5 -i 0.05 "$DUT_IP"
}
check "frame above the DUT MTU is dropped, traffic continues" too_big_dropped

while_down() {
	ip link set "$DUT" down || return 1
	ip link set "$DUT" mtu 9000 || return 1
	ip link set "$DUT" up || return 1
	pexec ip link set "$PEER" mtu 9000 || return 1
	wait_carrier "$DUT" 10 || return 1
	peer_ping -c 5 -i 0.05 -s 8972 -M do "$DUT_IP" || return 1
	set_mtu_both 1500
}
check "MTU 9000 set while down" while_down

under_traffic() {
	local i m
	bg_start ip netns exec "$PEER_NS" ping -q -i 0.01 -s 1000 -W 1 "$DUT_IP"
	local flood=$BG_PID
	for i in $(seq 5); do
		for m in 9000 1500 3000 576 1500; do
			ip link set "$DUT" mtu $m || { bg_stop $flood; echo "mtu $m failed"; return 1; }
			sleep 0.1
		done
	done
	bg_stop $flood
	wait_carrier "$DUT" 10 || return 1
	peer_ping -c 10 -i 0.05 "$DUT_IP" || return 1
	dut_ping -c 5 -i 0.05 -s 1472 -M do "$PEER_IP"
}
check "25 MTU changes under ping traffic" under_traffic

vmx_done
