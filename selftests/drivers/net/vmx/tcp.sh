#!/usr/bin/env bash
# tcp.sh - iperf3 TCP both directions at MTU 1500, 3000 and 9000 (set on
# both ends), IPv4 and (at 1500) IPv6; few retransmits (iperf_check), no
# interface errors counted.
# On the test device (tx-offload-from-desc, its default: it cuts TSO
# segments exactly as the descriptor's hlen and MSS say, and the hub, the
# virtio peer and TCP all take a frame longer than the MTU) each DUT->peer
# transfer is also counted frame by frame at the peer: none longer than
# the MTU after its Ethernet header, some of exactly the MTU (segments cut
# at the MSS, seen one by one), and the device's stat-tx-tso moved (the
# transfer was TSO). Topology: DUT (vmx) and the virtio peer on a hub.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

# the test device's NIC behind DUT, when it segments from the descriptor
# (testdev_nic_of names any NIC of vm.sh's, stock ones too) and does not
# take TSO away itself
td=$(testdev_nic_of "$DUT" 2>/dev/null) && testdev_props "$td" > /dev/null &&
	[ "$(testdev_prop "$td" tx-offload-from-desc)" != off ] &&
	! testdev_disabled_offload "$DUT" tso > /dev/null || td=

# wire_start MTU: before a DUT->peer transfer: the peer counts its frames
# by length against MTU (peer_len_watch), the device's TSO counters read.
wire_start() {
	w_err='' w_tso='' w_seg=''
	peer_len_watch "$1" > "$VMX_TMP/wire.out" 2>&1 &&
		w_tso=$(testdev_stat "$td" tx-tso) &&
		w_seg=$(testdev_stat "$td" tx-tso-segments) ||
		w_err="counting not set up: $(tr '\n' ' ' < "$VMX_TMP/wire.out")"
}

# wire_check MTU: after it: the device sent TSO packets, no frame longer
# than MTU after the Ethernet header reached the peer and some of exactly
# MTU did (without them a count of 0 would prove nothing: a filter that
# sees no frame, or one that sees GRO's aggregates, counts none either).
wire_check() {
	local tso seg long full n b
	[ -z "$w_err" ] || { echo "$w_err"; return 1; }
	tso=$(testdev_stat "$td" tx-tso) && seg=$(testdev_stat "$td" tx-tso-segments) ||
		return 1
	read -r long full n b < <(peer_len_counts)
	echo "test device $td: stat-tx-tso +$((tso - w_tso)), stat-tx-tso-segments +$((seg - w_seg))"
	echo "peer, after the Ethernet header: $n frames, $b bytes (average $((n ? b / n : 0))), $full of exactly $1, $long longer"
	[ "$tso" -gt "$w_tso" ] ||
		{ echo "no TSO packet reached the device: vmx did not offload segmentation"; return 1; }
	[ "$long" = 0 ] ||
		{ echo "$long frames longer than the MTU: TSO segments cut beyond the MSS"; return 1; }
	[ "$full" -gt 0 ] ||
		{ echo "no frame of exactly the MTU counted: the counting saw no full segment"; return 1; }
}

err0=$(( $(stat_of "$DUT" rx_errors) + $(stat_of "$DUT" tx_errors) ))
for mtu in ${VMX_TCP_MTUS:-1500 3000 9000}; do
	if ! set_mtu_both "$mtu" > "$VMX_TMP/mtu.out" 2>&1; then
		diag < "$VMX_TMP/mtu.out"
		fail "set MTU $mtu on both ends"
		continue
	fi
	[ -z "$td" ] || wire_start "$mtu"
	check "TCP DUT->peer MTU $mtu" iperf_check
	[ -z "$td" ] ||
		check "TSO DUT->peer MTU $mtu: every frame at the peer within the MTU" wire_check "$mtu"
	check "TCP peer->DUT MTU $mtu" iperf_check -R
done
set_mtu_both 1500 > /dev/null
IPERF_DST=$PEER_IP6
if qemu_tso_fragments; then
	skip "TCP v6 DUT->peer with TSO6" "QEMU $VMX_QEMU_VERSION turns TSO into IPv4 fragments on a hub, which corrupts IPv6 (fixed in QEMU 8.0); sent with TSO6 off instead"
	ethtool -K "$DUT" tx-tcp6-segmentation off
	check "TCP v6 DUT->peer, TSO6 off" iperf_check
	ethtool -K "$DUT" tx-tcp6-segmentation on
else
	[ -z "$td" ] || wire_start 1500
	check "TCP v6 DUT->peer" iperf_check
	[ -z "$td" ] ||
		check "TSO6 DUT->peer MTU 1500: every frame at the peer within the MTU" wire_check 1500
fi
[ -z "$td" ] || peer_len_unwatch > /dev/null 2>&1
check "TCP v6 peer->DUT" iperf_check -R
IPERF_DST=$PEER_IP
errors_unchanged() {
	local e
	e=$(( $(stat_of "$DUT" rx_errors) + $(stat_of "$DUT" tx_errors) ))
	echo "rx_errors+tx_errors: before $err0, after $e"
	[ "$e" -eq "$err0" ]
}
check "no rx/tx errors counted" errors_unchanged

vmx_done
