#!/usr/bin/env bash
# ethtool.sh - driver info, statistics and the get-side ethtool operations;
# named counters (rtnl, ethtool -S per queue, qstats, the device's
# multicast count) match the traffic sent, error counters stay still, and
# counters never go backwards across down/up or an MTU change (reset).
source "$(dirname "$0")/lib.sh"

vmx_setup

info_field() { ethtool -i "$DUT" | awk -v f="$1:" '$1 == f { print $2 }'; }
driver_name() {
	ethtool -i "$DUT"
	[ "$(info_field driver)" = "$VMX_DRIVER_NAME" ]
}
check "ethtool -i: driver is $VMX_DRIVER_NAME" driver_name
bus_info() {
	local want
	want=$(basename "$(readlink "/sys/class/net/$DUT/device")")
	echo "bus-info $(info_field bus-info), device $want"
	[ "$(info_field bus-info)" = "$want" ]
}
check "ethtool -i: bus-info is the PCI address" bus_info

# The counters Documentation/vmx.rst lists (vmx; the in-tree driver names
# its own differently).
VMX_NAMED="dev_tx_tso_pkts dev_tx_tso_bytes dev_rx_lro_pkts dev_rx_lro_bytes
	dev_rx_nobuf resets bad_desc rx0_lro_pkts rx0_dev_err rx0_drop rx0_bad_desc
	rx0_xdp_packets tx0_packets tx0_bytes tx0_drop tx0_linearize
	tx0_doorbells tx0_bad_desc"
stats_listed() {
	local c rc=0
	ethtool -S "$DUT" > "$VMX_TMP/S" || return 1
	echo "$(($(grep -c ':' "$VMX_TMP/S") - 1)) counters"
	for c in $VMX_NAMED; do
		grep -q "^ *$c: [0-9]*$" "$VMX_TMP/S" || { echo "no $c"; rc=1; }
	done
	return $rc
}
if [ "$VMX_DRIVER" = vmx ]; then
	check "ethtool -S lists the documented counters" stats_listed
else
	check "ethtool -S" ethtool -S "$DUT"
fi
check "ethtool -g" ethtool -g "$DUT"
check "ethtool -k" bash -c "ethtool -k $DUT | head -n 8"
check "ethtool -l" ethtool -l "$DUT"
check "ethtool (link settings)" bash -c "ethtool $DUT | grep -E 'Speed|Duplex|Link detected'"
down_ok() {
	ip link set "$DUT" down || return 1
	ethtool -S "$DUT" > /dev/null || return 1
	ethtool -g "$DUT" > /dev/null || return 1
	ethtool "$DUT" > /dev/null || return 1
	ip link set "$DUT" up && wait_carrier "$DUT" 10
}
check "ethtool -S/-g/link settings while down" down_ok

# Named counters against known traffic: PING_N pings of PING_S payload
# bytes from the peer, each request and reply 14 + 20 + 8 + PING_S bytes on
# the wire (no VLAN tag, no FCS). Static neighbour entries on both ends
# keep ARP out; another frame that slips in (ND, MLD) is 42 to 1514 bytes.
PING_N=20
PING_S=100
PING_FRAME=$((14 + 20 + 8 + PING_S))
S0=$VMX_TMP/snap0
S1=$VMX_TMP/snap1
sd() { sdelta "$S0" "$S1" "$1"; }
# fits WHAT PKTS BYTES: PING_N frames of PING_FRAME bytes plus the others.
fits() {
	local o=$(($2 - PING_N)) extra=$(($3 - PING_N * PING_FRAME))
	echo "$1: packets +$2 bytes +$3 (want $PING_N x $PING_FRAME bytes, plus 42 to 1514 bytes for each of $o other frames)"
	[ $o -ge 0 ] && [ $extra -ge $((o * 42)) ] && [ $extra -le $((o * 1514)) ]
}
ip neigh replace "$PEER_IP" lladdr "$(peer_mac)" dev "$DUT" nud permanent
pexec ip neigh replace "$DUT_IP" lladdr "$(mac_of "$DUT")" dev "$PEER" nud permanent
ping_snaps() {
	snap "$DUT" > "$S0"
	[ -z "${1:-}" ] || "$1" > "$VMX_TMP/q0"
	peer_ping -c $PING_N -i 0.02 -s $PING_S "$DUT_IP" || return 1
	snap "$DUT" > "$S1"
	[ -z "${1:-}" ] || "$1" > "$VMX_TMP/q1"
}
# Errors and drops that this traffic must not move.
ERRS='link_.*(errors|dropped)|dev_rx_nobuf|rx[0-9]+_(drop|dev_err|bad_desc)|tx[0-9]+_(drop|bad_desc)'
count_pings() {
	local rc=0
	ping_snaps || return 1
	fits "rtnl rx" "$(sd link_rx_packets)" "$(sd link_rx_bytes)" || rc=1
	fits "rtnl tx" "$(sd link_tx_packets)" "$(sd link_tx_bytes)" || rc=1
	[ "$(sd "$ERRS")" = 0 ] ||
		{ echo "error/drop counters moved:"; smoved "$S0" "$S1" | grep -E "^($ERRS) "; rc=1; }
	return $rc
}
check "rx/tx packets and bytes count $PING_N pings of $PING_FRAME bytes, no error counter moves" count_pings

# ethtool -S txN_packets/bytes: the stack queues carry the replies; their
# sum moves with the rtnl tx counters.
tx_queues() {
	local p b
	ping_snaps || return 1
	p=$(sd 'tx[0-9]+_packets'); b=$(sd 'tx[0-9]+_bytes')
	smoved "$S0" "$S1" | grep -E '^tx[0-9]+_(packets|bytes) '
	fits "txN (ethtool -S)" "$p" "$b" || return 1
	echo "rtnl tx_packets +$(sd link_tx_packets)"
	near "$p" "$(sd link_tx_packets)" 0 2
}
if [ "$VMX_DRIVER" = vmx ]; then
	check "ethtool -S txN_packets/txN_bytes count the $PING_N replies" tx_queues
else
	skip "ethtool -S txN_packets/txN_bytes count the $PING_N replies" "vmx counter names"
fi

# Per-queue RX counters (netdev qstats; QEMU puts every frame on queue 0).
qsnap() {
	nl_qstats queue "$DUT" | awk '$1 == "rx" { print "rxq" $2 "_" $3, $4 }'
}
rx_queues() {
	local p b
	ping_snaps qsnap || return 1
	p=$(sdelta "$VMX_TMP/q0" "$VMX_TMP/q1" 'rxq[0-9]+_rx-packets')
	b=$(sdelta "$VMX_TMP/q0" "$VMX_TMP/q1" 'rxq[0-9]+_rx-bytes')
	smoved "$VMX_TMP/q0" "$VMX_TMP/q1" | grep -E '_rx-(packets|bytes) '
	fits "per-queue rx (qstats)" "$p" "$b"
}
if [ "$VMX_DRIVER" != vmx ]; then
	skip "qstats per-queue rx-packets/rx-bytes count the $PING_N pings" "$VMX_DRIVER has no qstats"
elif declare -F have_qstats > /dev/null && have_qstats; then
	check "qstats per-queue rx-packets/rx-bytes count the $PING_N pings" rx_queues
else
	skip "qstats per-queue rx-packets/rx-bytes count the $PING_N pings" \
		"no qstats-get in kernel $(uname -r) (before 6.10)"
fi

# The device's own counter (rtnl multicast, from the device's statistics):
# PING_N datagrams to 224.0.0.1, which every IPv4 host has joined.
dev_multicast() {
	local m
	snap "$DUT" > "$S0"
	udp_send --ns "$PEER_NS" 224.0.0.1 5011 $PING_N || return 1
	sleep 0.3
	snap "$DUT" > "$S1"
	m=$(sd link_multicast)
	echo "$PING_N datagrams to 224.0.0.1: multicast +$m, rx_packets +$(sd link_rx_packets)"
	[ "$m" -ge $PING_N ] && [ "$m" -le $((PING_N + 10)) ] &&
		[ "$(sd link_rx_packets)" -ge $PING_N ]
}
check "device multicast counter counts $PING_N datagrams to 224.0.0.1" dev_multicast

survive() {
	local before after
	before=$(dut_counters)
	"$@" || return 1
	wait_carrier "$DUT" 10 || return 1
	after=$(dut_counters)
	echo "rx_packets tx_packets rx_bytes tx_bytes: $before -> $after"
	not_backwards "$before" "$after"
}
downup() { ip link set "$DUT" down && ip link set "$DUT" up; }
mtu_bounce() { ip link set "$DUT" mtu 3000 && ip link set "$DUT" mtu 1500; }
check "counters do not go backwards across down/up" survive downup
check "counters do not go backwards across MTU change" survive mtu_bounce
check "traffic after all" peer_ping -c 5 -i 0.05 "$DUT_IP"

vmx_done
