#!/usr/bin/env bash
# tdev_txstall.sh - a device that stops serving a TX queue without saying
# so (a stalled host, no error event): the stack's TX watchdog fires once
# the queue has been stopped for its 5 s (watchdog_timeo), vmx resets the
# device (ndo_tx_timeout), throws away what was posted, and the queue runs
# again: what the qdisc still held goes out after the reset.
#
# The stall is a test-device NIC that processes a TX ring only 20 s after
# its first doorbell (tx-delay-us=20000000). The burst is one TX ring's
# worth of minimum frames from an AF_PACKET socket (through the qdisc):
# one descriptor each, so the queue stops with the ring full but for
# VMX_TX_MAX_DESC_TSO (24) descriptors and about 25 frames wait in the
# qdisc. The watchdog looks every 5 s, so it fires between 5 and 10 s
# after the queue stopped, well before the device would have served it;
# after the reset those 25 frames fit in the ring with room to spare and
# the queue never stops again (one timeout, not one per 5 s), and the
# device sends them 20 s later. Checked: exactly one timeout (sysfs
# tx_timeout) and one reset (ethtool -S resets), the frames after the
# reset sent by the device, tx_packets grown by exactly what the device
# sent and tx_dropped by what the reset threw away: every frame offered
# is one or the other.
#
# Topology: group tdevx, the first vmx NIC whose tx-delay-us is above
# 10 s (no address, IPv6 off: nothing but the burst is sent on it). SKIPs
# without one, and on QEMU's stock vmxnet3.
# vmx-expects: resets<=1 tx_timeouts<=1
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

# timeouts IF: the stack's TX timeouts of IF, every queue
timeouts() { cat /sys/class/net/"$1"/queues/tx-*/tx_timeout | awk '{ s += $1 } END { print s + 0 }'; }
w_resets() { estat "$W" resets; }
_grown() { [ "$("$1")" -gt "$2" ]; }
_timeouts_w() { timeouts "$W"; }
_dev_sent() { testdev_stat "$W" tx-queue0; }

stall_setup() {
	sysctl -qw "net.ipv6.conf.$W.disable_ipv6=1"
	ethtool -L "$W" combined 1 || return 1
	ip link set "$W" up && wait_carrier "$W" 10 || return 1
	RING=$(ethtool -g "$W" | awk '/Current/ { c = 1 } c && /^TX:/ { print $2; exit }')
	[ -n "$RING" ] || { echo "no TX ring size in ethtool -g $W"; return 1; }
	echo "$W: 1 channel, TX ring $RING, up, no address"
}

stall() {
	local t0 r0 s0 p0 d0 t1 r1 s1 p1 d1 start
	t0=$(_timeouts_w) r0=$(w_resets) s0=$(_dev_sent) p0=$(stat_of "$W" tx_packets) || return 1
	d0=$(stat_of "$W" tx_dropped)
	start=$EPOCHSECONDS
	python3 "$VMX_LIB_DIR/xdp_pkt.py" send "$W" 02:00:00:00:00:01 192.0.2.2 9 \
		"$RING" --sizes 64 || return 1
	# the watchdog: 5 to 10 s after the queue stopped
	wait_for 20 _grown _timeouts_w "$t0" || { echo "no TX timeout within 20 s"; return 1; }
	echo "TX timeout after $((EPOCHSECONDS - start)) s"
	wait_for 10 _grown w_resets "$r0" || { echo "no reset within 10 s of the timeout"; return 1; }
	# what the qdisc held, sent by the device 20 s after the reset
	wait_for 40 _grown _dev_sent "$s0" || { echo "the device sent nothing within 40 s of the reset"; return 1; }
	sleep 1
	t1=$(_timeouts_w) r1=$(w_resets) s1=$(_dev_sent) p1=$(stat_of "$W" tx_packets)
	d1=$(stat_of "$W" tx_dropped)
	echo "offered $RING frames: TX timeouts +$((t1 - t0)), resets +$((r1 - r0)), the device sent +$((s1 - s0)) (after the reset), tx_packets +$((p1 - p0)), tx_dropped +$((d1 - d0))"
	[ $((t1 - t0)) = 1 ] || { echo "want exactly one TX timeout"; return 1; }
	[ $((r1 - r0)) = 1 ] || { echo "want exactly one reset"; return 1; }
	[ $((s1 - s0)) -lt "$RING" ] || { echo "the device sent every frame: the reset threw nothing away, the stall tested nothing"; return 1; }
	[ $((p1 - p0)) = $((s1 - s0)) ] || { echo "tx_packets +$((p1 - p0)), but the device sent $((s1 - s0))"; return 1; }
	[ $((p1 - p0 + d1 - d0)) = "$RING" ] || { echo "sent + dropped = $((p1 - p0 + d1 - d0)), not the $RING frames offered"; return 1; }
}

stall_cleanup() {
	ip link set "$W" down
	ethtool -L "$W" combined "$NQ0" >/dev/null 2>&1
	sysctl -qw "net.ipv6.conf.$W.disable_ipv6=0"
	return 0
}

NQ0=$(combined_channels "$W")
if check "stalled NIC set up" stall_setup; then
	check "TX queue stalled by the device: one watchdog timeout, one reset, the queue runs again" stall
fi
stall_cleanup
vmx_done
