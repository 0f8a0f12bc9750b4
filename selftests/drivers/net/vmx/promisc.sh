#!/usr/bin/env bash
# promisc.sh - the DUT's unicast filter: frames from the peer to a foreign
# unicast MAC are seen on the DUT (tcpdump -p, no promisc of its own) only in
# promiscuous mode, via a packet socket that asks for promisc, or after the
# MAC is added as a secondary unicast address; promisc survives down/up.
source "$(dirname "$0")/lib.sh"

vmx_setup

PORT=5002
pexec ip neigh replace "$FOREIGN_IP" lladdr "$FOREIGN_MAC" dev "$PEER" nud permanent

# seen [DST] / not_seen: 5 datagrams from the peer to DST (default the
# foreign address) reach the driver / are kept out by the device
# (rx_reaches/rx_filtered: a capture without promiscuous mode, rx_packets).
seen() { rx_reaches 5 "${1:-$FOREIGN_IP}" $PORT; }
not_seen() { rx_filtered 5 "$FOREIGN_IP" $PORT; }
promisc_flag() { ip -d link show "$DUT" | grep -q 'promiscuity [1-9]'; }

check "unicast to the DUT's own MAC seen" seen "$DUT_IP"
check "foreign unicast filtered" not_seen
check "promisc on" ip link set "$DUT" promisc on
check "foreign unicast seen in promisc" seen
check "DUT traffic fine in promisc" dut_ping -c 5 -i 0.05 "$PEER_IP"
check "promisc off" ip link set "$DUT" promisc off
check "foreign unicast filtered again" not_seen

# tcpdump without -p puts the interface in promisc through its packet socket.
packet_socket_promisc() {
	local n
	cap_start -P "$DUT" "udp and dst port $PORT" > /dev/null || return 1
	udp_send --ns "$PEER_NS" "$FOREIGN_IP" "$PORT" 5
	n=$(cap_stop)
	echo "captured $n of 5 (tcpdump in promisc mode)"
	[ "$n" -ge 5 ]
}
check "packet socket promisc (tcpdump without -p) sees foreign unicast" packet_socket_promisc
check "filtered after the packet socket closed" not_seen

check "add $FOREIGN_MAC as secondary unicast address" \
	bridge fdb add "$FOREIGN_MAC" dev "$DUT" self permanent
check "secondary unicast address delivered" seen
check "remove secondary unicast address" bridge fdb del "$FOREIGN_MAC" dev "$DUT" self
check "filtered after removal" not_seen

downup() { ip link set "$DUT" down && ip link set "$DUT" up && wait_carrier "$DUT" 10; }
check "promisc on, then down/up" bash -c "ip link set $DUT promisc on"
check "down/up" downup
check "still promisc after down/up" seen
check "promisc off after down/up" ip link set "$DUT" promisc off
check "filtered after down/up and promisc off" not_seen
check "ping after all" peer_ping -c 5 -i 0.05 "$DUT_IP"

vmx_done
