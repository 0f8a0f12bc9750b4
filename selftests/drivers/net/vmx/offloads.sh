#!/usr/bin/env bash
# offloads.sh - turn each changeable offload off and on again (TSO, TX and
# RX checksum, scatter-gather, GSO, GRO, LRO): TCP both ways and fragmented
# pings with it off, pings after it is back on.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

export VMX_IPERF_TIME=1
traffic() {
	iperf_check || return 1
	iperf_check -R || return 1
	peer_ping -c 3 -i 0.05 -s 4000 "$DUT_IP" || return 1
	dut_ping -c 3 -i 0.05 -s 4000 "$PEER_IP"
}
pings() {
	peer_ping -c 3 -i 0.05 -s 4000 "$DUT_IP" || return 1
	dut_ping -c 3 -i 0.05 -s 4000 "$PEER_IP"
}
# feature NAME: "on"/"off", with " [fixed]" when it cannot change.
feature() { ethtool -k "$DUT" | awk -v f="$1:" '$1 == f { $1 = ""; print substr($0, 2) }'; }

for f in tcp-segmentation-offload tx-checksumming rx-checksumming \
	 scatter-gather generic-segmentation-offload generic-receive-offload \
	 large-receive-offload; do
	st=$(feature "$f")
	case "$st" in
	"") skip "$f off/on" "not listed"; continue ;;
	*fixed*) skip "$f off/on" "fixed ($st)"; continue ;;
	esac
	off_on() {
		local orig
		orig=$(feature "$1" | cut -d' ' -f1)
		ethtool -K "$DUT" "$1" off || return 1
		wait_carrier "$DUT" 10 || return 1
		echo "$1: $(feature "$1")"
		traffic || return 1
		ethtool -K "$DUT" "$1" on || return 1
		wait_carrier "$DUT" 10 || return 1
		echo "$1: $(feature "$1")"
		pings || return 1
		[ "$orig" = on ] || ethtool -K "$DUT" "$1" off
	}
	check "$f off/on with traffic" off_on "$f"
done

vmx_done
