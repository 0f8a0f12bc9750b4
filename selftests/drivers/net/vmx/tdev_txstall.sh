#!/usr/bin/env bash
# tdev_txstall.sh - a device that stops serving a TX queue without saying
# so (a stalled host, no error event): the stack's TX watchdog fires once
# the queue has been stopped for its 5 s (watchdog_timeo), vmx resets the
# device (ndo_tx_timeout), counts what was posted as dropped, and the
# queue takes frames again.
#
# The stall is a test-device NIC that serves a TX ring only 20 s after
# its first doorbell (tx-delay-us=20000000). One frame is enough: byte
# queue limits stop the queue behind the first frame in flight (a reset
# limit of 0), and the watchdog, which looks every 5 s, fires 5 to 10 s
# later, long before the device would have served it. So one frame, one
# timeout, one reset; with the qdisc empty nothing more happens. A second
# frame shows the queue running again after the reset (the device sees
# its doorbell) and stalls the same way: two timeouts, two resets in all.
# Checked: the timeouts (sysfs tx_timeout) and resets (ethtool -S resets)
# one per frame and no more (none in the 12 s after the last), both
# frames counted as dropped (tx_dropped) and neither as sent, and the
# device, which forgot them at the reset, never sending them (read 20 s
# after the first one went in).
# (A burst instead of one frame gives one timeout and one reset per frame
# the qdisc holds: the queue stops again behind each frame the reset let
# through, as it should with a host that stays stalled.)
#
# Topology: group tdevx, the first vmx NIC whose tx-delay-us is above
# 10 s (no address, IPv6 off: nothing but the burst is sent on it). SKIPs
# without one, and on QEMU's stock vmxnet3.
# vmx-expects: resets<=2 tx_timeouts<=2
# vmx-expects-log: NETDEV WATCHDOG: .*transmit queue 0 timed out.*
# vmx-expects-log: transmit queue 0 timed out
# vmx-timeout: 180
source "$(dirname "$0")/lib.sh"

vmx_setup
have_hmp || { skip "TX stall" "no QEMU monitor in the guest (vm.sh --guest-monitor)"; vmx_done; }
W=$(testdev_iface_with tx-delay-us 10000000) ||
	{ skip "TX stall" "no test-device NIC with tx-delay-us above 10000000 (vm.sh --nic vmxnet3t:tx-delay-us=20000000)"; vmx_done; }
WNIC=$(testdev_nic_of "$W")
log "$W: test device $WNIC, tx-delay-us=$(testdev_prop "$WNIC" tx-delay-us)"

_dev_sent() { testdev_stat "$W" tx-queue0; }

stall_setup() {
	sysctl -qw "net.ipv6.conf.$W.disable_ipv6=1"
	ethtool -L "$W" combined 1 || return 1
	ip link set "$W" up && wait_carrier "$W" 10 || return 1
	echo "$W: 1 channel, up, no address"
}

# one_frame N: offer one frame, wait for the timeout and the reset it
# causes (the Nth of the test); prints how long the timeout took
one_frame() {
	local t0 r0 db0 start
	t0=$(tx_timeouts "$W") r0=$(resets_of "$W") db0=$(testdev_stat "$W" tx-doorbells) || return 1
	start=$EPOCHSECONDS
	python3 "$VMX_LIB_DIR/xdp_pkt.py" send "$W" 02:00:00:00:00:01 192.0.2.2 9 1 \
		--sizes 64 > /dev/null || return 1
	wait_for 20 above "$t0" tx_timeouts "$W" || { echo "frame $1: no TX timeout within 20 s"; return 1; }
	wait_for 10 above "$r0" resets_of "$W" || { echo "frame $1: no reset within 10 s of the timeout"; return 1; }
	echo "frame $1: TXPROD doorbells +$(($(testdev_stat "$W" tx-doorbells) - db0)), TX timeout and reset after $((EPOCHSECONDS - start)) s"
}

stall() {
	local t0 r0 s0 p0 d0 t1 r1 s1 p1 d1 first rc=0
	t0=$(tx_timeouts "$W") r0=$(resets_of "$W") s0=$(_dev_sent) p0=$(stat_of "$W" tx_packets) || return 1
	d0=$(stat_of "$W" tx_dropped)
	first=$EPOCHSECONDS
	one_frame 1 || return 1
	one_frame 2 || return 1
	# no more timeouts with the qdisc empty, and the device's 20 s from
	# the first frame passed: it would have sent it by now, had the reset
	# not made it forget
	sleep 12
	while [ $((EPOCHSECONDS - first)) -lt 22 ]; do sleep 1; done
	t1=$(tx_timeouts "$W") r1=$(resets_of "$W") s1=$(_dev_sent) p1=$(stat_of "$W" tx_packets)
	d1=$(stat_of "$W" tx_dropped)
	echo "2 frames offered: TX timeouts +$((t1 - t0)), resets +$((r1 - r0)), the device sent +$((s1 - s0)), tx_packets +$((p1 - p0)), tx_dropped +$((d1 - d0))"
	[ $((t1 - t0)) = 2 ] || { echo "want one TX timeout per frame"; rc=1; }
	[ $((r1 - r0)) = 2 ] || { echo "want one reset per frame"; rc=1; }
	[ $((s1 - s0)) = 0 ] || { echo "the device sent frames it was told to forget"; rc=1; }
	[ $((p1 - p0)) = 0 ] || { echo "tx_packets counted frames the device never sent"; rc=1; }
	[ $((d1 - d0)) = 2 ] || { echo "want both frames counted in tx_dropped"; rc=1; }
	return $rc
}

stall_cleanup() {
	ip link set "$W" down
	ethtool -L "$W" combined "$NQ0" >/dev/null 2>&1
	sysctl -qw "net.ipv6.conf.$W.disable_ipv6=0"
	return 0
}

NQ0=$(combined_channels "$W")
if check "stalled NIC set up" stall_setup; then
	check "TX queue stalled by the device: a watchdog timeout and a reset per stalled frame, the queue running again, both frames dropped" stall
fi
stall_cleanup
vmx_done
