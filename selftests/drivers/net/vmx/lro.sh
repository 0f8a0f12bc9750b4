#!/usr/bin/env bash
# lro.sh - large frames over taps (tools/vm.sh --tap): with LRO on, the
# peer's TSO segments reach the DUT aggregated into frames larger than the
# MTU; with LRO off, none are; MTU 9000 works with LRO on and off, and
# across LRO toggles. Needs the --tap topology (skips on a hub).
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

# On a hub the peer never sends more than its MTU: nothing to aggregate.
if ! peer_has_tso; then
	skip "LRO tests" "peer has no TSO (not a --tap topology)"
	vmx_done
fi

export VMX_IPERF_TIME=3
feature() { ethtool -k "$DUT" | awk -v f="$1:" '$1 == f { $1 = ""; print substr($0, 2) }'; }
ethtool -K "$DUT" gro off 2>/dev/null

# big_frames: TCP peer->DUT; prints and returns the number of received
# frames larger than a 1500-byte MTU frame in $VMX_TMP/big.
rx_big() {
	CAP_OPTS="-Q in -s 128" cap_start "$DUT" "tcp and greater 1600" > /dev/null || return 1
	iperf_check -R
	local rc=$?
	cap_stop > "$VMX_TMP/big"
	echo "frames > 1600 bytes received: $(cat "$VMX_TMP/big")"
	return $rc
}
lro_aggregates() { rx_big || return 1; [ "$(cat "$VMX_TMP/big")" -gt 0 ]; }
no_aggregation() { rx_big || return 1; [ "$(cat "$VMX_TMP/big")" -eq 0 ]; }
both_ways() { iperf_check && iperf_check -R; }
jumbo_ping() {
	dut_ping -c 5 -i 0.05 -s 8972 -M do "$PEER_IP" &&
	peer_ping -c 5 -i 0.05 -s 8972 -M do "$DUT_IP"
}

lro=$(feature large-receive-offload)
log "large-receive-offload: $lro"
check "MTU 1500 TCP both ways" both_ways
case "$lro" in
""|*fixed*)
	skip "LRO on: aggregated frames" "LRO not changeable ($lro)"
	skip "LRO off: no aggregated frames" "LRO not changeable ($lro)"
	;;
*)
	check "LRO on" ethtool -K "$DUT" lro on
	wait_carrier "$DUT" 10
	check "LRO on: peer's TSO arrives as frames > MTU" lro_aggregates
	check "LRO off" ethtool -K "$DUT" lro off
	wait_carrier "$DUT" 10
	check "LRO off: no frame > MTU" no_aggregation
	;;
esac

check "MTU 9000 on both ends" set_mtu_both 9000
for state in on off; do
	case "$lro" in
	""|*fixed*) ;;
	*) ethtool -K "$DUT" lro "$state"; wait_carrier "$DUT" 10 ;;
	esac
	check "MTU 9000, LRO $state: jumbo ping both ways" jumbo_ping
	check "MTU 9000, LRO $state: TCP both ways" both_ways
done
toggle() {
	local s
	for s in on off on off; do
		ethtool -K "$DUT" lro $s || return 1
		wait_carrier "$DUT" 10 || return 1
		jumbo_ping || { echo "after lro $s"; return 1; }
	done
}
case "$lro" in
""|*fixed*) skip "MTU 9000 across LRO toggles" "LRO not changeable" ;;
*) check "MTU 9000 across LRO toggles" toggle ;;
esac
set_mtu_both 1500 > /dev/null
ethtool -K "$DUT" gro on 2>/dev/null
check "MTU 1500 TCP both ways at the end" both_ways

vmx_done
