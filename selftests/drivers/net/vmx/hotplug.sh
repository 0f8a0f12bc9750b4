#!/usr/bin/env bash
# hotplug.sh - surprise-free hot unplug (QEMU monitor "device_del nicN",
# PCIe native hotplug through a pcie-root-port) of a vmx NIC while it
# carries traffic: the driver's remove runs under load, the netdev and the
# PCI function go away, no oops or warning; a NIC with an XDP program and
# XDP_TX traffic is unplugged the same way; the unplugged NIC plugged back
# ("device_add") works again; the module unloads cleanly at the end.
#
# Topology: tools/vm.sh --hotplug --guest-monitor --nic vmxnet3 --nic
# vmxnet3 --nic virtio (the hotplug group). NIC N is QEMU device nicN
# behind root port rpN with netdev nN and MAC 52:54:00:12:34:0N.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
if ! have_hmp; then
	skip "hot unplug" "no QEMU monitor in the guest (tools/vm.sh --guest-monitor)"
	vmx_done
fi
nic_no() { local m; m=$(cat "/sys/class/net/$1/address"); echo $((16#${m##*:})); }
N1=$(nic_no "$DUT")
if ! hmp "info qtree" | grep -q "id \"rp$N1\""; then
	skip "hot unplug" "nic$N1 is not behind a hotplug root port (tools/vm.sh --hotplug)"
	vmx_done
fi
BDF1=$(basename "$(readlink -f "/sys/class/net/$DUT/device")")
log "$DUT is nic$N1 at $BDF1 behind rp$N1"

gone() { [ ! -e "/sys/class/net/$1" ] && [ ! -e "/sys/bus/pci/devices/$2" ]; }
# unplug IF: device_del its QEMU device, wait until netdev and PCI
# function are gone (pciehp waits ~5 s for a button press to settle).
# IF's error counters go with it: checked first, as an unload's.
unplug() {
	local ifc=$1 n bdf
	n=$(nic_no "$ifc"); bdf=$(basename "$(readlink -f "/sys/class/net/$ifc/device")")
	dut_retire_ifaces unplug "$ifc"
	hmp "device_del nic$n" || return 1
	wait_for 60 gone "$ifc" "$bdf" || { echo "$ifc / $bdf still there 60 s after device_del nic$n"; return 1; }
	echo "device_del nic$n: $ifc and $bdf gone"
	dmesg_since_start | grep -E "pciehp" | tail -n 2
}

# ------------------------------------------------ under TCP and ping flood
# dut_snmp PROTO FIELD: a counter of the DUT's netns /proc/net/snmp.
dut_snmp() { snmp_field "$1" "$2" </proc/net/snmp; }
# flowing ECHOS0 SEGS0: the peer's ping flood reached the DUT's stack (100
# more echo requests) and the DUT's iperf3 sends (1000 more TCP segments).
flowing() {
	[ $(($(dut_snmp Icmp InEchos) - $1)) -ge 100 ] && [ $(($(dut_snmp Tcp OutSegs) - $2)) -ge 1000 ]
}
under_traffic() {
	local ip ifl rc=0 e0 s0
	e0=$(dut_snmp Icmp InEchos); s0=$(dut_snmp Tcp OutSegs)
	iperf_server_start 5201 || return 1
	timeout 25 iperf3 -c "$PEER_IP" -t 12 >"$VMX_TMP/iperf.out" 2>&1 &
	ip=$!
	_vmx_bg+=("$ip")
	bg_start pexec ping -f -W 1 "$DUT_IP"
	ifl=$BG_PID
	# both kinds of traffic are flowing when the NIC goes
	wait_for 30 flowing "$e0" "$s0" || rc=1
	echo "before the unplug: Icmp InEchos +$(($(dut_snmp Icmp InEchos) - e0)) (ping flood)," \
	     "Tcp OutSegs +$(($(dut_snmp Tcp OutSegs) - s0)) (iperf3); want at least 100 and 1000"
	unplug "$DUT" || rc=1
	wait "$ip"
	echo "iperf3 exit status $? (an error is expected: its NIC went away)"
	tail -n 2 "$VMX_TMP/iperf.out"
	bg_stop "$ifl"
	return $rc
}
check "device_del nic$N1 under TCP and a ping flood: $DUT and $BDF1 gone" under_traffic
other_up() { ip link set "$DUT2" up && wait_carrier "$DUT2" 10 && echo "$DUT2 carrier $(carrier_of "$DUT2")"; }
if [ -n "$DUT2" ]; then
	check "$DUT2 (the other vmx NIC) comes up after the unplug" other_up
fi

# ------------------------------------------------ plugged back
replug() {
	local mac
	mac=52:54:00:12:34:$(printf %02x "$N1")
	hmp "device_add vmxnet3,netdev=n$N1,mac=$mac,id=nic$N1,romfile=,bus=rp$N1" || return 1
	wait_for 30 _iface_with_mac "$mac" || { echo "no $VMX_DRIVER_NAME interface with MAC $mac"; return 1; }
	DUT=$(_iface_with_mac "$mac")
	echo "device_add nic$N1: interface $DUT at $(basename "$(readlink -f "/sys/class/net/$DUT/device")")"
	dut_addr_setup "$DUT" && dut_ping -c 5 -i 0.1 "$PEER_IP"
}
_iface_with_mac() {
	local i
	for i in $(dut_ifaces); do
		[ "$(mac_of "$i")" = "$1" ] && { echo "$i"; return 0; }
	done
	return 1
}
check "device_add nic$N1 back: a new interface, addresses, ping" replug

# ------------------------------------------------ with XDP_TX running
# The second NIC bounces the peer's pktgen flood with XDP_TX when it goes.
under_xdp() {
	local t0 t1 rc=0
	ip link set "$DUT2" up && wait_carrier "$DUT2" 10 || return 1
	xdp_attach "$DUT2" xdp_tx || return 1
	pktgen_setup "$(mac_of "$DUT2")" 10000000 60 $XDP_PORT_TX || return 1
	t0=$(estat "$DUT2" 'rx[0-9]+_xdp_tx')
	pktgen_start
	sleep 3
	t1=$(estat "$DUT2" 'rx[0-9]+_xdp_tx')
	echo "$DUT2 rxN_xdp_tx +$((t1 - t0)) in 3 s before the unplug"
	[ $((t1 - t0)) -gt 0 ] || rc=1
	unplug "$DUT2" || rc=1
	pktgen_stop
	return $rc
}
if [ -n "$DUT2" ]; then
	check "device_del of $DUT2 with XDP_TX bouncing a pktgen flood: gone" under_xdp
else
	skip "unplug under XDP" "needs a second vmxnet3 NIC"
fi
check_pp_settled "no page_pool left with pages in flight"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

unload() {
	local rest
	rest=$(dut_ifaces | xargs)
	dut_unload || return 1
	echo "rmmod $(dut_module) with ${rest:-no} interfaces left: done"
	! dut_loaded
}
check "rmmod $(dut_module) after the unplugs" unload

vmx_done
