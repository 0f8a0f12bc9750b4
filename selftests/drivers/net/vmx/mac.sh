#!/usr/bin/env bash
# mac.sh - MAC address changes while up and while down: the new address is
# used and answered, frames to the old one do not reach the driver (device
# filter: a capture without promiscuous mode, rx_packets), the address
# survives down/up, invalid addresses are refused, restore works.
source "$(dirname "$0")/lib.sh"

vmx_setup

orig=$(cat "/sys/class/net/$DUT/address")
new1=52:54:00:ab:cd:01
new2=52:54:00:ab:cd:02
log "original MAC $orig"

addr_is() {
	local a
	a=$(cat "/sys/class/net/$DUT/address")
	echo "address: $a"
	[ "$a" = "$1" ]
}
peer_sees() {
	pexec ip neigh flush dev "$PEER"
	peer_ping -c 5 -i 0.05 "$DUT_IP" || return 1
	pexec ip neigh show "$DUT_IP" dev "$PEER" | show_grep "lladdr $1"
}
# mac_rx reaches|filtered MAC: the peer sends 10 datagrams to DUT_IP at MAC
# (a static neighbour entry); they reach the driver, or the device filter
# keeps them out (rx_reaches/rx_filtered: a capture on DUT without
# promiscuous mode and DUT's rx_packets).
PORT=5020
mac_rx() {
	local rc
	pexec ip neigh replace "$DUT_IP" lladdr "$2" dev "$PEER" nud permanent
	echo "peer -> $DUT_IP at $2"
	"rx_$1" 10 "$DUT_IP" $PORT
	rc=$?
	pexec ip neigh del "$DUT_IP" dev "$PEER"
	return $rc
}
# In promiscuous mode the device lets frames to the old MAC in: the
# capture above sees them when they come.
promisc_rx() {
	ip link set "$DUT" promisc on || return 1
	mac_rx reaches "$1"
	local rc=$?
	ip link set "$DUT" promisc off
	return $rc
}

check "set MAC while up" ip link set "$DUT" address "$new1"
check "address reads back" addr_is "$new1"
check "peer reaches the new MAC" peer_sees "$new1"
check "DUT->peer ping with new MAC" dut_ping -c 5 -i 0.05 "$PEER_IP"
check "frames to the new MAC reach the driver" mac_rx reaches "$new1"
check "frames to the old MAC do not reach the driver (device filter)" mac_rx filtered "$orig"
check "promisc: frames to the old MAC reach the driver" promisc_rx "$orig"

set_while_down() {
	ip link set "$DUT" down || return 1
	ip link set "$DUT" address "$new2" || return 1
	ip link set "$DUT" up || return 1
	wait_carrier "$DUT" 10
}
check "set MAC while down, then up" set_while_down
check "peer reaches MAC set while down" peer_sees "$new2"
check "frames to the MAC set while down reach the driver" mac_rx reaches "$new2"
check "frames to the previous MAC do not reach the driver" mac_rx filtered "$new1"
check "frames to the original MAC do not reach the driver" mac_rx filtered "$orig"
downup() { ip link set "$DUT" down && ip link set "$DUT" up && wait_carrier "$DUT" 10; }
check "down/up" downup
check "MAC survives down/up" addr_is "$new2"
check "traffic after down/up" peer_sees "$new2"

check_fails "multicast MAC refused" ip link set "$DUT" address 01:00:5e:00:00:01
check_fails "all-zero MAC refused" ip link set "$DUT" address 00:00:00:00:00:00
check "address unchanged after refusals" addr_is "$new2"

# Restore through down/up so that a failed live change above does not
# cascade into the last checks.
restore() {
	ip link set "$DUT" down && ip link set "$DUT" address "$orig" &&
		ip link set "$DUT" up && wait_carrier "$DUT" 10
}
check "restore original MAC (down, set, up)" restore
check "peer reaches the original MAC" peer_sees "$orig"
check "frames to the last MAC do not reach the driver after the restore" mac_rx filtered "$new2"

vmx_done
