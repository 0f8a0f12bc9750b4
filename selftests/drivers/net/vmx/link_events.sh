#!/usr/bin/env bash
# link_events.sh - link changes made by the device (QEMU monitor "set_link
# nicN off|on"), not by "ip link": the driver's event interrupt must take
# the carrier down and up with its "link down" / "link up" log lines,
# ethtool must report it, the device must deliver nothing while the link is
# down and traffic must resume after; also with the interface closed at the
# time of the event, in a quick series under traffic, and without touching
# the second NIC.
#
# Topology: tools/vm.sh --guest-monitor --nic vmxnet3 --nic vmxnet3 --nic
# virtio (the hotplug group; every run-tests group has --guest-monitor).
# NIC ids: vm.sh gives NIC number N the id nicN and the MAC ...:34:0N.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup
if ! have_hmp; then
	skip "device link events" "no QEMU monitor in the guest (tools/vm.sh --guest-monitor)"
	vmx_done
fi

# nic_id IF: QEMU device id of IF, from the MAC vm.sh gave it.
nic_id() { local m; m=$(cat "/sys/class/net/$1/address"); echo "nic$((16#${m##*:}))"; }
NIC=$(nic_id "$DUT")
log "$DUT is QEMU device $NIC"
no_carrier() { ! has_carrier "$1"; }
# log_count WORDS: kernel log lines since the test started that say
# "<DUT>: WORDS" (the driver's netdev_info lines).
log_count() { dmesg_since_start | grep -c -E "$DUT: $1"; }

link_off() {
	local d0
	d0=$(log_count 'link down$')
	hmp "set_link $NIC off" || return 1
	wait_for 10 no_carrier "$DUT" || { echo "carrier still $(carrier_of "$DUT") 10 s after set_link off"; return 1; }
	wait_for 5 above "$d0" log_count 'link down$' || { echo "no new '$DUT: link down' in the kernel log"; return 1; }
	dmesg_since_start | grep -E "$DUT: link down$" | tail -n 1
	echo "carrier $(carrier_of "$DUT"), operstate $(cat "/sys/class/net/$DUT/operstate")"
}
link_on() {
	local u0
	u0=$(log_count 'link up')
	hmp "set_link $NIC on" || return 1
	wait_carrier "$DUT" 10 || return 1
	wait_for 5 above "$u0" log_count 'link up' || { echo "no new '$DUT: link up' in the kernel log"; return 1; }
	dmesg_since_start | grep -E "$DUT: link up" | tail -n 1
	echo "carrier $(carrier_of "$DUT"), operstate $(cat "/sys/class/net/$DUT/operstate")"
}

ethtool_link() {
	local out
	out=$(ethtool "$DUT") || return 1
	grep -E 'Speed:|Duplex:|Link detected:' <<<"$out"
	grep -q "Link detected: $1" <<<"$out" || return 1
	if [ "$1" = yes ]; then
		grep -qE 'Speed: [0-9]+Mb/s' <<<"$out"
	else
		grep -q 'Speed: Unknown' <<<"$out"
	fi
}

# Link down: the peer's pings get no answer and the device hands the
# driver nothing (rx_packets stays); the DUT sends nothing either.
silent_while_down() {
	local r0 r1 t0 t1 rc=0
	r0=$(stat_of "$DUT" rx_packets); t0=$(stat_of "$DUT" tx_packets)
	peer_no_reply -c 5 -i 0.2 "$DUT_IP" || rc=1
	ping -c 3 -i 0.2 -W 1 "$PEER_IP" >/dev/null 2>&1 && { echo "DUT's ping got a reply"; rc=1; }
	r1=$(stat_of "$DUT" rx_packets); t1=$(stat_of "$DUT" tx_packets)
	echo "while down: $DUT rx_packets +$((r1 - r0)), tx_packets +$((t1 - t0))"
	[ $((r1 - r0)) = 0 ] && [ $((t1 - t0)) = 0 ] || rc=1
	return $rc
}

info_network() { hmp "info network" | show_grep "$NIC: .*model=vmxnet3"; }
ping_both() { dut_ping -c 5 -i 0.1 "$PEER_IP" && peer_ping -c 5 -i 0.1 "$DUT_IP"; }
check "info network shows $NIC" info_network
check "set_link $NIC off: carrier lost, 'link down' logged" link_off
check "ethtool while down: no link, speed unknown" ethtool_link no
check "link down: nothing received or sent" silent_while_down
check "set_link $NIC on: carrier back, 'link up' logged" link_on
check "ethtool after up: link detected, speed" ethtool_link yes
check "ping both ways after the link came back" ping_both

# Device link down while the interface is closed: open must not report a
# carrier the device does not have; the later link-up event brings it.
closed_event() {
	ip link set "$DUT" down || return 1
	hmp "set_link $NIC off" || return 1
	sleep 1
	ip link set "$DUT" up || return 1
	sleep 2
	echo "opened with the device link down: carrier $(carrier_of "$DUT")"
	has_carrier "$DUT" && return 1
	link_on
}
check "link down while closed: open keeps the carrier off, link up brings it" closed_event
check "ping after the closed-interface event" dut_ping -c 5 -i 0.1 "$PEER_IP"

# A quick series under traffic: each off/on pair gives one down and one
# up line, no more, and the carrier follows every event.
flaps() {
	local i d0 u0 d1 u1 fl
	d0=$(log_count 'link down$'); u0=$(log_count 'link up')
	bg_start ping -f -W 1 "$PEER_IP"
	fl=$BG_PID
	for i in 1 2 3 4 5; do
		link_off >/dev/null || { echo "round $i: down"; bg_stop $fl; return 1; }
		link_on >/dev/null || { echo "round $i: up"; bg_stop $fl; return 1; }
	done
	bg_stop $fl
	d1=$(log_count 'link down$'); u1=$(log_count 'link up')
	echo "5 off/on rounds under a ping flood: 'link down' +$((d1 - d0)), 'link up' +$((u1 - u0))"
	[ $((d1 - d0)) = 5 ] && [ $((u1 - u0)) = 5 ]
}
check "5 off/on rounds under a ping flood: carrier follows, 5 down and 5 up lines" flaps
check "TCP after the link flaps" iperf_check

other_nic() {
	ip link set "$DUT2" up && wait_carrier "$DUT2" 10 || return 1
	link_off || return 1
	sleep 1
	echo "$DUT2 carrier $(carrier_of "$DUT2") while $NIC is down"
	has_carrier "$DUT2" || return 1
	link_on
}
if [ -n "$DUT2" ]; then
	check "set_link $NIC off leaves $DUT2 ($(nic_id "$DUT2")) up" other_nic
else
	skip "second NIC unaffected" "needs a second vmxnet3 NIC"
fi

vmx_done
