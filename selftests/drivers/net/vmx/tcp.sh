#!/usr/bin/env bash
# tcp.sh - iperf3 TCP both directions at MTU 1500, 3000 and 9000 (set on
# both ends), IPv4 and (at 1500) IPv6; few retransmits (iperf_check), no
# interface errors counted.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

err0=$(( $(stat_of "$DUT" rx_errors) + $(stat_of "$DUT" tx_errors) ))
for mtu in ${VMX_TCP_MTUS:-1500 3000 9000}; do
	if ! set_mtu_both "$mtu" > "$VMX_TMP/mtu.out" 2>&1; then
		diag < "$VMX_TMP/mtu.out"
		fail "set MTU $mtu on both ends"
		continue
	fi
	check "TCP DUT->peer MTU $mtu" iperf_check
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
	check "TCP v6 DUT->peer" iperf_check
fi
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
