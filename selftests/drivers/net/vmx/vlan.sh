#!/usr/bin/env bash
# vlan.sh - 802.1Q sub-interfaces on the DUT: ping v4/v6 over VLANs 10 and
# 20, full-size tagged frames, VLAN add/remove while traffic flows on
# another, VLAN offload toggles, untagged traffic unaffected.
source "$(dirname "$0")/lib.sh"

vmx_setup
modprobe 8021q

# vlan_pair ID: VLAN ID on both ends, 10.99.ID.1/2, fd99:ID::1/2.
vlan_pair() {
	ip link add link "$DUT" name "vl$1" type vlan id "$1" || return 1
	ip addr add "10.99.$1.1/24" dev "vl$1"
	ip addr add "fd99:$1::1/64" dev "vl$1" nodad
	ip link set "vl$1" up
	pexec ip link add link "$PEER" name "vl$1" type vlan id "$1" || return 1
	pexec ip addr add "10.99.$1.2/24" dev "vl$1"
	pexec ip addr add "fd99:$1::2/64" dev "vl$1" nodad
	pexec ip link set "vl$1" up
}

check "create VLAN 10 on both ends" vlan_pair 10
check "VLAN 10 ping v4" dut_ping -c 10 -i 0.05 10.99.10.2
check "VLAN 10 ping v4 from peer" peer_ping -c 10 -i 0.05 10.99.10.1
check "VLAN 10 ping v6" dut_ping -c 10 -i 0.05 fd99:10::2
check "VLAN 10 full-size frame DUT->peer (1472, DF)" dut_ping -c 5 -i 0.05 -s 1472 -M do 10.99.10.2
check "VLAN 10 full-size frame peer->DUT (1472, DF)" peer_ping -c 5 -i 0.05 -s 1472 -M do 10.99.10.1
check "VLAN 10 fragmented 6000" peer_ping -c 5 -i 0.05 -s 6000 10.99.10.1
check "untagged ping still works" dut_ping -c 5 -i 0.05 "$PEER_IP"

check "create VLAN 20 on both ends" vlan_pair 20
check "VLAN 20 ping v4" dut_ping -c 5 -i 0.05 10.99.20.2
bg_start ip netns exec "$PEER_NS" ping -q -i 0.01 -W 1 10.99.10.1
flood=$BG_PID
check "delete VLAN 20 on the DUT" ip link del vl20
check "VLAN 20 gone: no reply" peer_no_reply -c 3 -i 0.2 10.99.20.1
check "VLAN 10 still answers" peer_ping -c 5 -i 0.05 10.99.10.1
check "re-create VLAN 20 on the DUT" bash -c "ip link add link $DUT name vl20 type vlan id 20 &&
	ip addr add 10.99.20.1/24 dev vl20 && ip link set vl20 up"
check "VLAN 20 ping after re-create" dut_ping -c 5 -i 0.05 10.99.20.2
bg_stop "$flood"

# Offload toggles, where the driver lets them change.
for feat in rx-vlan-offload tx-vlan-offload; do
	state=$(ethtool -k "$DUT" | awk -v f="$feat:" '$1 == f { print $2, $3 }')
	case "$state" in
	"") skip "$feat off/on" "feature not listed" ;;
	*fixed*) skip "$feat off/on" "fixed: $state" ;;
	*)
		toggled() {
			ethtool -K "$DUT" "$1" off || return 1
			dut_ping -c 5 -i 0.05 -s 1472 10.99.10.2 || return 1
			peer_ping -c 5 -i 0.05 10.99.10.1 || return 1
			ethtool -K "$DUT" "$1" on || return 1
			dut_ping -c 5 -i 0.05 10.99.10.2
		}
		check "$feat off/on: VLAN traffic both ways" toggled "$feat"
		;;
	esac
done

IPERF_DST=10.99.10.2
VMX_IPERF_TIME=2 check "VLAN 10 TCP DUT->peer" iperf_check
VMX_IPERF_TIME=2 check "VLAN 10 TCP peer->DUT" iperf_check -R
IPERF_DST=$PEER_IP

vmx_done
