#!/usr/bin/env bash
# load_unload.sh - load and unload the driver repeatedly: idle, with the
# interfaces up, while the peer floods pings at the DUT and the DUT is
# sending, and unbind/bind through sysfs under the same traffic.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"

N=${VMX_LOAD_LOOPS:-20}

vmx_setup --no-load

ndev=$(vmxnet3_pci_devs | wc -l)
log "$ndev vmxnet3 device(s): $(vmxnet3_pci_devs | xargs)"

unload_checked() {
	dut_unload || { echo "rmmod $(dut_module) failed"; return 1; }
	if [ -n "$(dut_ifaces)" ]; then
		echo "interfaces left after unload: $(dut_ifaces | xargs)"
		return 1
	fi
	if [ -d "/sys/bus/pci/drivers/$VMX_DRIVER_NAME" ]; then
		echo "driver $VMX_DRIVER_NAME still registered after unload"
		return 1
	fi
}

# Load, check every device got an interface, bring them up, unload.
idle_cycle() {
	local d
	dut_up_driver || return 1
	for d in $(dut_ifaces); do
		ip link set "$d" up || return 1
	done
	for d in $(dut_ifaces); do
		wait_carrier "$d" 10 || return 1
	done
	unload_checked
}

rx_grew() { [ "$(stat_of "$1" rx_packets)" -gt "$2" ]; }

# Load, address, wait until the peer's pings arrive, start DUT->peer pings,
# and unload while both directions are busy.
traffic_cycle() {
	local rx0 p
	dut_up_driver || return 1
	dut_addr_setup > /dev/null || { echo "address setup failed"; return 1; }
	rx0=$(stat_of "$DUT" rx_packets)
	wait_for 10 rx_grew "$DUT" "$rx0" || { echo "no packet received on $DUT"; return 1; }
	ping -q -c 50 -i 0.005 -W 1 "$PEER_IP" > /dev/null 2>&1 &
	p=$!
	sleep 0.1
	unload_checked || return 1
	wait $p 2>/dev/null
	return 0
}

loop() {
	local i f=$1
	for i in $(seq "$N"); do
		"$f" || { echo "cycle $i failed"; return 1; }
	done
	echo "$N cycles done"
}

check "load/unload x$N, interfaces up" loop idle_cycle

bg_start ip netns exec "$PEER_NS" ping -q -i 0.005 -W 1 "$DUT_IP"
flood=$BG_PID
check "load/unload x$N under ping traffic" loop traffic_cycle

# sysfs unbind/bind of every device, under the same flood.
bind_cycle() {
	local pci drv=/sys/bus/pci/drivers/$VMX_DRIVER_NAME
	# through the library: the interfaces' error counters are checked
	# before they go
	dut_unbind_all || return 1
	[ -z "$(dut_ifaces)" ] || { echo "interfaces left after unbind"; return 1; }
	for pci in $(vmxnet3_pci_devs); do
		echo "$pci" > "$drv/bind" || { echo "bind $pci failed"; return 1; }
	done
	wait_dut_ifaces 10 || return 1
	DUT=$(dut_ifaces | sed -n 1p)
	dut_addr_setup > /dev/null || { echo "address setup failed"; return 1; }
}
bind_loop() {
	local i
	dut_up_driver || return 1
	dut_addr_setup > /dev/null || return 1
	for i in $(seq 5); do
		bind_cycle || { echo "cycle $i failed"; return 1; }
	done
}
check "unbind/bind x5 under ping traffic" bind_loop
bg_stop "$flood"

final() {
	dut_up_driver || return 1
	dut_addr_setup || return 1
	dut_ping -c 10 -i 0.05 "$PEER_IP" && peer_ping -c 10 -i 0.05 "$DUT_IP"
}
check "ping works after the loops" final

vmx_done
