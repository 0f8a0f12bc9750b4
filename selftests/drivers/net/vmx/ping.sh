#!/usr/bin/env bash
# ping.sh - IPv4 and IPv6 ping between the DUT and the virtio peer, both
# directions, small and full-size frames, fragments, broadcast.
source "$(dirname "$0")/lib.sh"

vmx_setup

check "ping v4 DUT->peer" dut_ping -c 10 -i 0.05 "$PEER_IP"
check "ping v4 peer->DUT" peer_ping -c 10 -i 0.05 "$DUT_IP"
check "ping v6 DUT->peer" dut_ping -c 10 -i 0.05 "$PEER_IP6"
check "ping v6 peer->DUT" peer_ping -c 10 -i 0.05 "$DUT_IP6"
check "ping v6 link-local" dut_ping -c 5 -i 0.05 -I "$DUT" \
	"$(pexec ip -6 -o addr show dev "$PEER" scope link | awk '{print $4}' | cut -d/ -f1)"
check "ping v4 full frame (1472, DF)" dut_ping -c 5 -i 0.05 -s 1472 -M do "$PEER_IP"
check "ping v4 full frame from peer" peer_ping -c 5 -i 0.05 -s 1472 -M do "$DUT_IP"
check "ping v6 full frame (1452, DF)" dut_ping -c 5 -i 0.05 -s 1452 -M do "$PEER_IP6"
check "ping v4 fragmented 8000" dut_ping -c 5 -i 0.05 -s 8000 "$PEER_IP"
check "ping v4 fragmented 8000 from peer" peer_ping -c 5 -i 0.05 -s 8000 "$DUT_IP"
check "ping v6 fragmented 8000" dut_ping -c 5 -i 0.05 -s 8000 "$PEER_IP6"
check "ping v4 minimum size" dut_ping -c 5 -i 0.05 -s 0 "$PEER_IP"
# 300 back-to-back requests: exercises ring wrap on both sides.
check "ping v4 burst 300" peer_ping -c 300 -i 0.002 -q "$DUT_IP"

# Broadcast ping: the DUT must receive and answer a broadcast.
ip netns exec "$PEER_NS" sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
bcast_reply() {
	local out
	out=$(ip netns exec "$PEER_NS" ping -b -c 3 -i 0.2 -W 2 10.99.0.255 2>&1)
	printf '%s\n' "$out" | grep "bytes from"
	printf '%s\n' "$out" | grep -q "from $DUT_IP"
}
check "broadcast ping answered by DUT" bcast_reply

vmx_done
