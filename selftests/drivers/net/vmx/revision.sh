#!/usr/bin/env bash
# revision.sh - the negotiated device revision and the revision-gated
# paths. ethtool -i reports the revision vmx negotiated; it must be the one
# this device offers: VMX_EXPECT_REV (default 1, stock QEMU's vmxnet3,
# whatever its version: VMX_QEMU_VERSION is logged). Paths the device
# cannot offer are SKIPped with the reason.
# vmx-timeout: 120
source "$(dirname "$0")/lib.sh"

vmx_setup

EXPECT=${VMX_EXPECT_REV:-1}
rev=$(dut_revision)
log "negotiated revision: ${rev:-unknown}; expected $EXPECT (VMX_EXPECT_REV); QEMU ${VMX_QEMU_VERSION:-unknown}"
rev_is() {
	ethtool -i "$DUT" | grep firmware-version
	[ "$rev" = "$EXPECT" ]
}
if [ "$VMX_DRIVER" = vmx ]; then
	check "ethtool -i reports revision $EXPECT" rev_is
else
	skip "ethtool -i reports revision $EXPECT" "$VMX_DRIVER does not report the revision"
fi

small_frames_use_data_ring() {
	local b a
	b=$(estat "$DUT" 'rx[0-9]+_data_ring')
	peer_ping -c 20 -i 0.02 -s 32 "$DUT_IP" || return 1
	a=$(estat "$DUT" 'rx[0-9]+_data_ring')
	echo "rxN_data_ring: $b -> $a"
	[ $((a - b)) -ge 20 ]
}

# From the device's side (the test device): stat-rx-data-ring counts the
# frames it delivered through an RX data ring (patch 0002), so the same
# pings must move it, by as many frames as the driver counted.
TD=
if have_testdev; then TD=$(testdev_nic_of "$DUT" 2>/dev/null) && testdev_nics | grep -qx "$TD" || TD=; fi
device_data_ring() {
	local b a db da
	db=$(testdev_stat "$TD" rx-data-ring) || return 1
	b=$(estat "$DUT" 'rx[0-9]+_data_ring')
	peer_ping -c 20 -i 0.02 -s 32 "$DUT_IP" || return 1
	sleep 0.2
	da=$(testdev_stat "$TD" rx-data-ring) || return 1
	a=$(estat "$DUT" 'rx[0-9]+_data_ring')
	echo "device ($TD) stat-rx-data-ring: +$((da - db)); driver rxN_data_ring: +$((a - b))"
	[ $((da - db)) -ge 20 ] || { echo "the device delivered fewer than 20 frames through a data ring"; return 1; }
	[ $((a - b - da + db)) -ge -2 ] && [ $((a - b - da + db)) -le 2 ] ||
		{ echo "the driver's count is not the device's"; return 1; }
}

if [ "${rev:-0}" -ge 3 ]; then
	check "small frames arrive through the RX data ring" small_frames_use_data_ring
	if [ -n "$TD" ]; then
		check "small frames arrive through the RX data ring: the device's count (stat-rx-data-ring) = the driver's" device_data_ring
	fi
else
	skip "small frames arrive through the RX data ring" \
		"device revision ${rev:-?} < 3 has no RX data ring (QEMU offers only revision 1)"
fi

# Revision 2+ devices aggregate TCP themselves and complete the aggregate
# with a type-4 descriptor carrying segment count and MSS: with LRO on and
# GRO off, TCP from the peer makes the device count LRO aggregates
# (dev_rx_lro_pkts) and the driver deliver them as GSO frames
# (rxN_lro_pkts), each with at least two segments.
type4_lro() {
	local d0 d1 r0 r1 rc=0
	ethtool -K "$DUT" lro on gro off || return 1
	wait_carrier "$DUT" 10 || return 1
	d0=$(estat "$DUT" dev_rx_lro_pkts); r0=$(estat "$DUT" 'rx[0-9]+_lro_pkts')
	VMX_IPERF_TIME=3 iperf_check -R || rc=1
	d1=$(estat "$DUT" dev_rx_lro_pkts); r1=$(estat "$DUT" 'rx[0-9]+_lro_pkts')
	echo "dev_rx_lro_pkts +$((d1 - d0)), rxN_lro_pkts +$((r1 - r0))"
	ethtool -K "$DUT" gro on
	[ $((d1 - d0)) -gt 0 ] || { echo "the device aggregated nothing"; rc=1; }
	[ $((r1 - r0)) -gt 0 ] || { echo "the driver delivered no LRO frame"; rc=1; }
	return $rc
}
if [ "${rev:-0}" -ge 2 ] && ! peer_has_tso; then
	skip "LRO completions (type 4) delivered as GSO frames" \
		"the peer reaches the DUT through a QEMU hub, which never hands the device GSO frames to aggregate (group tdevtap runs it over taps)"
elif [ "${rev:-0}" -ge 2 ]; then
	check "LRO completions (type 4) delivered as GSO frames" type4_lro
else
	skip "LRO completions (type 4) delivered as GSO frames" \
		"device revision ${rev:-?} < 2 has no type-4 LRO completions (QEMU offers only revision 1)"
fi

vmx_done
