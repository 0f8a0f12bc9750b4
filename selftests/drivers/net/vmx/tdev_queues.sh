#!/usr/bin/env bash
# tdev_queues.sh - a device that reports fewer TX queues than two per
# channel (issue 11 item 7): the test device's max-tx-queues /
# max-rx-queues (GET_MAX_QUEUES_CONF) on a NIC of group tdevrev
# (max-tx-queues=4,max-rx-queues=4 with --smp 4: 4 channels). vmx keeps the
# TX and RX limits apart: the channels follow both, no dedicated XDP TX
# queue is set up when there is no room for one, and with an XDP program
# attached the link comes up (the device refuses an ACTIVATE with more TX
# queues than it reported), XDP_TX and ndo_xdp_xmit (a devmap redirect back
# out of the same NIC) share the stack's TX queues under their lock,
# and every frame comes back exact.
# SKIPs without such a NIC (stock QEMU reports no queue limits).
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup --no-load
dut_up_driver > "$VMX_TMP/up.out" 2>&1 || { diag < "$VMX_TMP/up.out"; bail "driver did not come up"; }

# the vmx NIC whose test device was given a TX queue limit
LIM=$(testdev_iface_with max-tx-queues)
if [ -z "$LIM" ]; then
	skip "XDP with fewer TX queues than 2 x channels" \
		"no test-device NIC with max-tx-queues (group tdevrev; stock QEMU reports no queue limits)"
	vmx_done
fi
NIC=$(testdev_nic_of "$LIM")
MAXTX=$(testdev_prop "$NIC" max-tx-queues)
MAXRX=$(testdev_prop "$NIC" max-rx-queues); MAXRX=${MAXRX:-8}
DUT=$LIM
dut_addr_setup "$DUT" > "$VMX_TMP/addr.out" 2>&1 || { diag < "$VMX_TMP/addr.out"; bail "$DUT setup failed"; }
log "DUT=$DUT ($NIC: max-tx-queues=$MAXTX max-rx-queues=$MAXRX), $(nproc) CPUs"
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# channels: min(TX limit, RX limit, CPUs, vmx's default of 8)
channels() {
	local want=$MAXTX max cur
	[ "$MAXRX" -lt "$want" ] && want=$MAXRX
	[ "$(nproc)" -lt "$want" ] && want=$(nproc)
	[ 8 -lt "$want" ] && want=8
	max=$(ethtool -l "$DUT" | awk '/^Combined:/ { print $2 }' | sed -n 1p)
	cur=$(ethtool -l "$DUT" | awk '/^Combined:/ { print $2 }' | sed -n 2p)
	echo "combined channels: max $max, current $cur (want $want)"
	[ "$max" = "$want" ] && [ "$cur" = "$want" ]
}
check "channels follow the device's TX and RX limits" channels

# An XDP program makes vmx ask for TX queues of its own where the device
# has room (2 x channels <= max-tx-queues); here it has none: no xdptxN
# queue, the link comes back up (ACTIVATE accepted) and carries traffic.
XDP_OWN=0
attach_tx() {
	local nq
	xdp_attach "$DUT" xdp_tx || return 1
	xdp_native "$DUT" xdp_tx || return 1
	wait_carrier "$DUT" 10 || return 1
	nq=$(ethtool -l "$DUT" | awk '/^Combined:/ { print $2 }' | sed -n 2p)
	XDP_OWN=$(ethtool -S "$DUT" | grep -c '^ *xdptx[0-9]*_packets:')
	echo "with xdp_tx: carrier up, $nq channels, $XDP_OWN dedicated XDP TX queues"
	if [ $((2 * nq)) -gt "$MAXTX" ]; then
		[ "$XDP_OWN" = 0 ] || { echo "device reported $MAXTX TX queues: no room for $XDP_OWN more"; return 1; }
	fi
	dmesg | grep -i "vmx.*$DUT.*\(activat\|refus\)" | tail -n 3
	return 0
}
check "xdp_tx attached: the link comes up within the device's $MAXTX TX queues" attach_tx
check "ping with xdp_tx attached" ping_ok

# bounce PORT COUNT KIND: COUNT frames come back exact (MACs swapped);
# KIND's counter (rxN_xdp_tx or the txN_xdp_xmit of ndo_xdp_xmit) moved by
# COUNT, the stack TX queues (txN_packets) sent them, no xdptxN queue did,
# and the device's TX queues beyond max-tx-queues never carried a frame.
bounce() {
	local port=$1 n=$2 kind=$3 rc=0 s0 s1 devq=0 q v
	snap "$DUT" > "$VMX_TMP/b0"
	peer_bounce "$port" "$n" swap || rc=1
	sleep 0.3
	snap "$DUT" > "$VMX_TMP/b1"
	s0=$VMX_TMP/b0 s1=$VMX_TMP/b1
	echo "$kind +$(sdelta "$s0" "$s1" "$kind"), txN_packets +$(sdelta "$s0" "$s1" 'tx[0-9]+_packets')," \
	     "xdptxN_packets +$(sdelta "$s0" "$s1" 'xdptx[0-9]+_packets')," \
	     "errors +$(sdelta "$s0" "$s1" 'rx[0-9]+_xdp_tx_errors|tx[0-9]+_xdp_xmit_errors')"
	[ "$(sdelta "$s0" "$s1" "$kind")" = "$n" ] || { echo "$kind: want +$n"; rc=1; }
	[ "$(sdelta "$s0" "$s1" 'tx[0-9]+_packets')" -ge "$n" ] || { echo "stack TX queues sent fewer than $n"; rc=1; }
	[ "$(sdelta "$s0" "$s1" 'rx[0-9]+_xdp_tx_errors|tx[0-9]+_xdp_xmit_errors')" = 0 ] || rc=1
	for ((q = MAXTX; q < 32; q++)); do
		v=$(testdev_stat "$NIC" "tx-queue$q") || return 1
		devq=$((devq + v))
	done
	echo "device: frames from TX queues $MAXTX..31: $devq"
	[ "$devq" = 0 ] || rc=1
	return "$rc"
}
if [ "$XDP_OWN" = 0 ]; then
	check "XDP_TX on the shared stack queues: 32 frames back exact" \
		bounce $XDP_PORT_TX 32 'rx[0-9]+_xdp_tx'
else
	fail "XDP_TX on the shared stack queues" "vmx set up $XDP_OWN XDP TX queues of its own"
fi

# ndo_xdp_xmit: a devmap redirect to the same NIC
devmap_self() {
	local id map key val
	xdp_replace "$DUT" xdp_redirect_devmap || return 1
	wait_carrier "$DUT" 10 || return 1
	id=$(xdp_prog_id "$DUT")
	map=$(prog_map_id "$id" devmap) || { echo "no devmap"; return 1; }
	read -r -a key <<< "$(u32_le 0)"
	read -r -a val <<< "$(u32_le "$(cat "/sys/class/net/$DUT/ifindex")")"
	bpftool map update id "$map" key "${key[@]}" value "${val[@]}" || return 1
	bounce "$XDP_PORT_REDIRECT" 33 'tx[0-9]+_xdp_xmit'
}
check "ndo_xdp_xmit (devmap redirect back out of $DUT) on the shared stack queues" devmap_self
check "ping with the devmap program attached" ping_ok

xdp_detach "$DUT"
check "ping after detach" ping_ok
vmx_done
