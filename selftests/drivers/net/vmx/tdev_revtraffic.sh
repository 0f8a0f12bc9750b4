#!/usr/bin/env bash
# tdev_revtraffic.sh - traffic through what revisions 4 and 6 of the device
# encode or allow differently from revision 7+, on the test device (group
# tdevrev: one test-device NIC per revision and the virtio peer in netns
# peer; each NIC used takes the DUT's addresses in turn).
# Tunnel offloads in offload mode 1: revisions 4..6 ask for Geneve/VXLAN
# inner TSO and inner checksums with om 1 (msscof the MSS, or 0 for the
# checksum; oco for the outer UDP checksum), 7+ with om 3/2 and ext1. On
# the first revision 4 and the first revision 6 NIC vmx must offer tunnel
# TSO with and without the outer checksum (the device offers both there
# whatever DCR0 says: not offered fails), and 4 MB of TCP DUT->peer through
# a VXLAN 4789 tunnel without outer checksum and through a Geneve 6081
# tunnel with it (oco), inner IPv4, must arrive byte-identical, the
# device's stat-tunnel-tso (it segmented: no software GSO) and
# stat-tunnel-csum (the inner checksums of the segments sent without TSO)
# moving, no tunnel request refused (stat-tunnel-bad), no strict-mode
# violation on the NIC, no checksum error at the peer; 4 MB peer->DUT
# through the VXLAN tunnel byte-identical, with the device's inner
# checksum results (RXINNEROFLD, revision 4+) used by vmx. Geneve over
# IPv6: its headers (136 bytes with TCP timestamps) do not fit the TX
# data ring entry (128 at these NICs), so vmx must segment in software
# and ask the device for nothing (stat-tunnel-tso unchanged), 4 MB
# byte-identical (lib/traffic.sh's tunnel_case; tunnel_tso.sh runs it at
# revision 9).
# MTU 9190, the largest from revision 6 (9000 before): on the revision 6
# NIC with MTU 9190 on vmx and on the peer, 5 pings with 9162-byte payloads
# and DF (9190-byte IP packets, 9204-byte frames) are all answered and the
# device's per-queue counters of the NIC grew by at least 5 frames and
# 5 x 9204 bytes each way; 4 MB of TCP each way arrive byte-identical; no
# strict-mode violation. Every NIC below revision 6 refuses MTU 9190 with
# the kernel's extack message (vmx's max_mtu) and keeps its MTU.
# SKIPs without test-device NICs.
# vmx-timeout: 400
source "$(dirname "$0")/lib.sh"

vmx_setup
if ! have_testdev; then
	skip "traffic at revisions 4 and 6" "no test-device NICs (group tdevrev)"
	vmx_done
fi

TUN_MB=4
PING_N=5
# an ICMP echo of 9162 bytes: IPv4 20 + ICMP 8 + 9162 = 9190, + Ethernet 14
PING_FRAME=9204

# iface_of_rev REV: the first vmx interface whose test device offers up
# to revision REV with its tunnel offloads on.
iface_of_rev() {
	local i nic
	for i in $(dut_ifaces); do
		nic=$(testdev_nic_of "$i" 2>/dev/null) || continue
		[ "$(testdev_prop "$nic" max-revision)" = "$1" ] &&
			[ "$(testdev_prop "$nic" tunnel-offloads)" != off ] &&
			{ echo "$i"; return 0; }
	done
	return 1
}

# use_rev REV: the DUT's addresses move to iface_of_rev REV; sets NIC.
NIC=
use_rev() {
	local ifc
	ifc=$(iface_of_rev "$1") ||
		{ fail "revision $1: a test-device NIC" "none in this guest (group tdevrev has one)"; return 1; }
	NIC=$(testdev_nic_of "$ifc")
	dut_move_to "$ifc" > "$VMX_TMP/move.out" 2>&1 ||
		{ diag < "$VMX_TMP/move.out"; fail "revision $1 ($ifc, $NIC): up with the DUT's addresses"; return 1; }
	log "revision $1: DUT=$DUT ($NIC, ethtool -i: rev $(dut_revision))"
}

# tunnel_features_on: vmx offers tunnel TSO with and without the outer
# UDP checksum, and both are on with TSO and TX checksums.
tunnel_features_on() {
	local k f
	k=$(ethtool -k "$DUT")
	grep -E '^(tx-checksumming|tcp-segmentation-offload|tx-udp_tnl-segmentation|tx-udp_tnl-csum-segmentation):' <<< "$k"
	for f in tx-checksumming tcp-segmentation-offload tx-udp_tnl-segmentation tx-udp_tnl-csum-segmentation; do
		grep -q "^$f: on" <<< "$k" || return 1
	done
}

tunnel_rev() {
	local rev=$1 why
	use_rev "$rev" || return
	ethtool -K "$DUT" tx on tso on tx-udp_tnl-segmentation on >/dev/null 2>&1
	ethtool -K "$DUT" tx-udp_tnl-csum-segmentation on >/dev/null 2>&1
	why=$(tunnel_offered) || why="the test device's properties say it does not"
	check "revision $rev ($NIC): vmx offers tunnel TSO with and without outer UDP checksum (the device does: $why)" \
		tunnel_features_on || return
	check "revision $rev ($NIC): VXLAN 4789, no outer checksum (om 1): $TUN_MB MB DUT->peer byte-exact, segmented and inner checksums filled by the device, nothing refused, no strict violation, no checksum error at the peer; $TUN_MB MB peer->DUT byte-exact with the device's inner checksum results used" \
		tunnel_case vxlan4789 vxlan 4789 noudpcsum 0 0 "out in" "$TUN_MB"
	check "revision $rev ($NIC): Geneve 6081 with outer UDP checksum (om 1 + oco): $TUN_MB MB DUT->peer byte-exact, segmented and inner checksums filled by the device, nothing refused, no strict violation, no checksum error at the peer" \
		tunnel_case geneve4-csum geneve 6081 udpcsum 0 0 out "$TUN_MB"
	check "revision $rev ($NIC): Geneve 6081 over IPv6 with outer UDP checksum: its 136 bytes of headers exceed the TX data ring entry (128), so vmx segments in software and asks the device for nothing; $TUN_MB MB DUT->peer byte-exact, no strict violation" \
		tunnel_case geneve6 geneve 6081 udpcsum 1 0 out "$TUN_MB"
	tunnel_down
}

# dev_counts: "TX frames, TX bytes, RX frames, RX bytes" of the DUT's
# device over its stack queues (the channels), as the device counts them.
dev_counts() {
	local q a v
	q=$(combined_channels "$DUT")
	for a in tx-queue tx-bytes-queue rx-queue rx-bytes-queue; do
		v=$(testdev_queue_sum "$NIC" "$a" "${q:-1}") || return 1
		printf '%s ' "$v"
	done
}

# jumbo_ping: MTU 9190 on both ends, the pings all answered, the device
# counted them each way as 9204-byte frames.
jumbo_ping() {
	local c0 c1 a b i d rc=0
	set_mtu_both 9190 || return 1
	echo "MTU: $DUT $(cat "/sys/class/net/$DUT/mtu"), peer $(pexec cat "/sys/class/net/$PEER/mtu")"
	c0=$(dev_counts) || return 1
	dut_ping -c "$PING_N" -i 0.2 -s $((PING_FRAME - 42)) -M 'do' "$PEER_IP" || rc=1
	c1=$(dev_counts) || return 1
	read -r -a a <<< "$c0"
	read -r -a b <<< "$c1"
	for i in 0 1 2 3; do d[i]=$((b[i] - a[i])); done
	echo "device $NIC: TX +${d[0]} frames, +${d[1]} bytes; RX +${d[2]} frames, +${d[3]} bytes (the pings: $PING_N frames of $PING_FRAME bytes each way)"
	[ "${d[0]}" -ge "$PING_N" ] && [ "${d[1]}" -ge $((PING_N * PING_FRAME)) ] &&
		[ "${d[2]}" -ge "$PING_N" ] && [ "${d[3]}" -ge $((PING_N * PING_FRAME)) ] || rc=1
	return $rc
}

# jumbo_tcp: at MTU 9190 (jumbo_ping set it), TCP each way byte-exact and
# no strict violation on the NIC.
jumbo_tcp() {
	local v0 v1
	[ "$(cat "/sys/class/net/$DUT/mtu")" = 9190 ] || { echo "MTU of $DUT is not 9190"; return 1; }
	v0=$(testdev_stat "$NIC" violations) || return 1
	tcp_exact out "$TUN_MB" 5320 || return 1
	tcp_exact in "$TUN_MB" 5321 || return 1
	v1=$(testdev_stat "$NIC" violations) || return 1
	echo "device $NIC: stat-violations +$((v1 - v0))"
	[ "$v1" = "$v0" ] || { echo "strict violations: $(testdev_nic_violations "$NIC")"; return 1; }
}

# mtu_refused IF: MTU 9190 refused on IF with the kernel's extack message
# for a device maximum, the MTU unchanged.
mtu_refused() {
	local ifc=$1 m0 m1 out rc
	m0=$(cat "/sys/class/net/$ifc/mtu")
	out=$(ip link set dev "$ifc" mtu 9190 2>&1)
	rc=$?
	m1=$(cat "/sys/class/net/$ifc/mtu")
	echo "$ifc: ip link set mtu 9190: exit $rc, '${out:-no message}'; MTU $m0 -> $m1"
	[ "$rc" != 0 ] && [[ "$out" == *"Error: mtu greater than device maximum"* ]] && [ "$m1" = "$m0" ]
}

tunnel_rev 4
tunnel_rev 6

if use_rev 6; then
	check "revision 6 ($NIC): MTU 9190 on vmx and the peer: $PING_N pings of $((PING_FRAME - 42)) bytes with DF answered, the device counted them as $PING_FRAME-byte frames each way" \
		jumbo_ping
	check "revision 6 ($NIC): MTU 9190: $TUN_MB MB of TCP each way byte-exact, no strict violation" \
		jumbo_tcp
	set_mtu_both 1500 > /dev/null || log "MTU 1500 not restored on $DUT or the peer"
fi

for i in $(dut_ifaces); do
	nic=$(testdev_nic_of "$i" 2>/dev/null) || continue
	rev=$(ethtool -i "$i" | sed -n 's/^firmware-version: vmxnet3 rev \([0-9]*\)$/\1/p')
	[ -n "$rev" ] && [ "$rev" -lt 6 ] || continue
	check "revision $rev ($nic): MTU 9190 refused with an extack message (above the device maximum of 9000), MTU kept" \
		mtu_refused "$i"
done

vmx_done
