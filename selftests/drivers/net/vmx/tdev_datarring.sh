#!/usr/bin/env bash
# tdev_datarring.sh - XDP on frames that arrive through the RX data ring
# (device revision 3+; vmx's headline path): XDP_DROP, XDP_PASS, XDP_TX,
# XDP_REDIRECT to a devmap (the second vmx NIC) and to a cpumap, each on
# frames of at most one data ring entry (128 bytes) with the byte-exact
# checks of the XDP tests, and the driver's rxN_data_ring and the device's
# own stat-rx-data-ring both showing that these frames came through the
# data ring; frames just above the entry size (129 bytes) go through ring
# 0; attach/replace/detach under a stream mixing both kinds of frames.
#
# Needs the project's test device (tools/testdev) as the DUT:
#   tools/vm.sh --nic vmxnet3t --nic vmxnet3t --nic virtio --guest-monitor
# On QEMU's stock vmxnet3 (revision 1: no RX data ring) every check SKIPs.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
DUT_MAC=$(mac_of "$DUT")
PP=$VMX_LIB_DIR/xdp_pass_pkt.py
# a port no test program acts on (xdp_pass_pkt.py's datagrams)
PASS_PORT=7790
# frame sizes: at most one data ring entry / just above it
SMALL=60,64,100,127,128
ABOVE=129,130,200

NIC=$(testdev_nic_of "$DUT") && testdev_nics | grep -qx "$NIC" ||
	{ skip "XDP on RX data ring frames" "$DUT is QEMU's stock vmxnet3, not the test device (vm.sh --nic vmxnet3t)"; vmx_done; }
rev=$(dut_revision)
[ "${rev:-0}" -ge 3 ] ||
	{ skip "XDP on RX data ring frames" "$DUT negotiated revision ${rev:-?} < 3: no RX data ring"; vmx_done; }
log "$DUT: test device $NIC, revision $rev; combined $(combined_channels "$DUT")"
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# dr_mark: remember both data ring counters of the DUT (driver: every
# rxN_data_ring; device: stat-rx-data-ring); dr_moved MIN [MAX]: both
# moved by MIN..MAX (default unbounded) and by the same amount, give or
# take 2 frames (an IPv6 control frame between the two reads).
DR0=() DR1=()
dr_mark() { DR0=("$(estat "$DUT" 'rx[0-9]+_data_ring')" "$(testdev_stat "$DUT" stat-rx-data-ring)"); }
dr_moved() {
	local d v
	DR1=("$(estat "$DUT" 'rx[0-9]+_data_ring')" "$(testdev_stat "$DUT" stat-rx-data-ring)")
	d=$((DR1[0] - DR0[0])) v=$((DR1[1] - DR0[1]))
	echo "data ring: driver rxN_data_ring +$d, device stat-rx-data-ring +$v (want ${1}..${2:-})"
	near "$d" "$v" 0 2 || { echo "driver and device disagree"; return 1; }
	[ "$d" -ge "$1" ] && [ "$v" -ge "$1" ] || { echo "fewer than $1 through the data ring"; return 1; }
	[ -z "${2:-}" ] || { [ "$d" -le "$2" ] && [ "$v" -le "$2" ]; } ||
		{ echo "more than $2 through the data ring"; return 1; }
}

# ------------------------------------------------ no program
plain() {
	dr_mark
	peer_ping -c 20 -i 0.05 -s 32 "$DUT_IP" || return 1
	dr_moved 20 || return 1
	dr_mark
	peer_ping -c 10 -i 0.05 -s 87 "$DUT_IP" || return 1
	echo "(129-byte echo requests)"
	dr_moved 0 2
}
check "no program: 74-byte frames through the data ring, 129-byte ones not" plain

# ------------------------------------------------ XDP_DROP
drop_small() {
	local d0 d1
	d0=$(estat "$DUT" 'rx[0-9]+_xdp_drop')
	dr_mark
	XDP_SIZES=$SMALL peer_bounce $XDP_PORT_TX 20 none || return 1
	d1=$(estat "$DUT" 'rx[0-9]+_xdp_drop')
	echo "rxN_xdp_drop +$((d1 - d0))"
	dr_moved 20 || return 1
	[ $((d1 - d0)) -ge 20 ]
}
if check "xdp_drop attached natively" xdp_attach "$DUT" xdp_drop; then
	check "XDP_DROP: 20 frames of 60..128 B from the data ring dropped, counted" drop_small
	xdp_detach "$DUT"
fi
check "ping works after detaching xdp_drop" ping_ok

# ------------------------------------------------ XDP_PASS
# pass_exact N: the peer sends N datagrams to DUT_IP:PASS_PORT in frames of
# 80, 300, 1000 and 1400 bytes (every fourth one fits a data ring entry);
# a UDP socket on the DUT must get each payload once, byte for byte.
pass_exact() {
	local rpid rc=0
	listen_start "$VMX_TMP/precv" listening \
		python3 "$PP" recv "$DUT_IP" $PASS_PORT "$1" exact --timeout "$(scaled 5)" || return 1
	rpid=$LISTEN_PID
	pexec python3 "$PP" send "$PEER" "$DUT_MAC" "$DUT_IP" $PASS_PORT "$1" || rc=1
	wait "$rpid" || rc=1
	grep -v '^listening' "$VMX_TMP/precv"
	return $rc
}
# counted REGEX MIN CMD...: CMD passes and the DUT's ethtool -S counters
# named REGEX grew by at least MIN.
counted() {
	local re=$1 min=$2 c0 c1
	shift 2
	c0=$(estat "$DUT" "$re")
	"$@" || return 1
	c1=$(estat "$DUT" "$re")
	echo "$re +$((c1 - c0))"
	[ $((c1 - c0)) -ge "$min" ]
}
pass_small() {
	dr_mark
	counted 'rx[0-9]+_xdp_pass' 40 pass_exact 40 || return 1
	dr_moved 10
}
if check "xdp_pass attached natively" xdp_attach "$DUT" xdp_pass; then
	check "XDP_PASS: 40 datagrams exact at a socket, the 80-byte ones via the data ring" pass_small
	check "XDP_PASS: ping of 74-byte frames" counted 'rx[0-9]+_data_ring' 20 \
		peer_ping -c 20 -i 0.05 -s 32 "$DUT_IP"
	xdp_detach "$DUT"
fi

# ------------------------------------------------ XDP_TX
# bounced N SIZES: the peer's N frames (SIZES) come back with swapped MACs,
# byte for byte, and rxN_xdp_tx counts exactly N, without errors.
bounced() {
	local t0 e0 t1 e1 rc=0
	t0=$(estat "$DUT" 'rx[0-9]+_xdp_tx'); e0=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	XDP_SIZES=$2 peer_bounce $XDP_PORT_TX "$1" swap || rc=1
	t1=$(estat "$DUT" 'rx[0-9]+_xdp_tx'); e1=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	echo "rxN_xdp_tx +$((t1 - t0)), rxN_xdp_tx_errors +$((e1 - e0))"
	[ $rc = 0 ] && [ $((t1 - t0)) = "$1" ] && [ $((e1 - e0)) = 0 ]
}
tx_small() { dr_mark; bounced 20 $SMALL || return 1; dr_moved 20; }
tx_above() { dr_mark; bounced 12 $ABOVE || return 1; dr_moved 0 2; }
if check "xdp_tx attached natively" xdp_attach "$DUT" xdp_tx; then
	check "XDP_TX: 20 frames of 60..128 B via the data ring bounced exact" tx_small
	check "XDP_TX: 12 frames of 129..200 B bounced exact, none via the data ring" tx_above
	check "XDP_TX: ping still works" ping_ok
	xdp_detach "$DUT"
fi

# ------------------------------------------------ XDP_REDIRECT: devmap
# The program swaps the MACs and redirects to DUT2 (both on the hub), so
# every frame comes back to the peer, sent by DUT2 (its xdptxN_xdp_xmit).
devmap() {
	local map idx n=16 r0 r1 x0 x1 rc=0
	ip link set "$DUT2" up && wait_carrier "$DUT2" 10 || return 1
	idx=$(cat "/sys/class/net/$DUT2/ifindex")
	xdp_attach "$DUT" xdp_redirect_devmap || return 1
	xdp_native "$DUT" xdp_redirect_devmap || return 1
	map=$(prog_map_id "$(xdp_prog_id "$DUT")" devmap) || { echo "no devmap"; return 1; }
	# shellcheck disable=SC2046  # u32_le prints four words
	bpftool map update id "$map" key $(u32_le 0) value $(u32_le "$idx") || return 1
	r0=$(estat "$DUT" 'rx[0-9]+_xdp_redirect'); x0=$(estat "$DUT2" 'xdptx[0-9]+_xdp_xmit')
	dr_mark
	XDP_SIZES=60,128,129,1514 peer_bounce $XDP_PORT_REDIRECT $n swap || rc=1
	sleep 0.2
	r1=$(estat "$DUT" 'rx[0-9]+_xdp_redirect'); x1=$(estat "$DUT2" 'xdptx[0-9]+_xdp_xmit')
	echo "$DUT rxN_xdp_redirect +$((r1 - r0)); $DUT2 xdptxN_xdp_xmit +$((x1 - x0))"
	dr_moved 8 || rc=1
	[ $((r1 - r0)) = $n ] && [ $((x1 - x0)) = $n ] || { echo "want $n each"; rc=1; }
	xdp_detach "$DUT"
	return $rc
}
if [ -n "$DUT2" ]; then
	check "devmap redirect $DUT -> $DUT2: 60/128 B (data ring) and 129/1514 B frames back exact" devmap
else
	skip "devmap redirect to a second vmx NIC" "needs a second vmxnet3 NIC (--nic vmxnet3t --nic vmxnet3t --nic virtio)"
fi

# ------------------------------------------------ XDP_REDIRECT: cpumap
# xdp-bench redirect-cpu -r pass: every frame goes through a cpumap to
# CPU 0, where the kernel builds the skb; the datagrams must still be exact.
cpumap_pass() {
	local pid rc=0
	timeout -s INT 120 stdbuf -oL xdp-bench redirect-cpu -c 0 -r pass "$DUT" >"$VMX_TMP/cpumap.out" 2>&1 &
	pid=$!
	_vmx_bg+=("$pid")
	if bench_ready "$VMX_TMP/cpumap.out" drv; then
		dr_mark
		counted 'rx[0-9]+_xdp_redirect' 40 pass_exact 40 || rc=1
		dr_moved 10 || rc=1
	else
		echo "xdp-bench did not attach natively"; rc=1
	fi
	kill -INT "$pid"; wait "$pid"
	grep -v '^ *$' "$VMX_TMP/cpumap.out" | tail -n 3
	xdp_none "$DUT" || rc=1
	return $rc
}
check "cpumap (xdp-bench redirect-cpu -r pass): 40 datagrams exact, 80-byte ones via the data ring" cpumap_pass
check "ping works after the redirects" ping_ok

# ------------------------------------------------ churn under mixed traffic
# Two ping streams from the peer, 74-byte frames (data ring) and 1042-byte
# ones (ring 0), while xdp_pass is attached, replaced by xdp_tx (both pass
# ICMP) and detached, CYCLES times. Attach and detach switch the buffer
# layout (xdp_robust.sh: a frame on the wire then may be lost): at most 2
# lost frames per stream and layout switch.
CYCLES=${VMX_TDEV_CYCLES:-15}
churn_mixed() {
	local i p s rc=0 tx rx p0 p1 pids=()
	pin_irqs_cpu0
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	dr_mark
	for s in 32 1000; do
		ip netns exec "$PEER_NS" taskset -c 0 ping -q -i 0.02 -w 300 -s $s "$DUT_IP" \
			>"$VMX_TMP/churn.$s" 2>&1 &
		pids+=($!)
		_vmx_bg+=($!)
	done
	sleep 1
	for ((i = 0; i < CYCLES; i++)); do
		xdp_attach "$DUT" xdp_pass && sleep 0.2 &&
			xdp_replace "$DUT" xdp_tx && sleep 0.2 &&
			xdp_detach "$DUT" || { echo "cycle $i failed"; rc=1; break; }
		sleep 0.2
	done
	sleep 1
	for p in "${pids[@]}"; do kill -INT "$p"; wait "$p"; done
	irqs_restore
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	echo "$i cycles; rxN_xdp_pass +$((p1 - p0))"
	for s in 32 1000; do
		tail -n 2 "$VMX_TMP/churn.$s" | head -n 1
		tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$VMX_TMP/churn.$s")
		rx=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$VMX_TMP/churn.$s")
		echo "-s $s: lost $((${tx:-0} - ${rx:-0})) of ${tx:-0}, allowed $((4 * i))"
		[ "${rx:-0}" -gt 50 ] && [ $((${tx:-0} - ${rx:-0})) -le $((4 * i)) ] || rc=1
	done
	dr_moved 50 || rc=1
	[ $((p1 - p0)) -gt 0 ] || { echo "the programs never ran"; rc=1; }
	xdp_none "$DUT" || rc=1
	return $rc
}
check "$CYCLES attach/replace/detach cycles under 74 B (data ring) and 1042 B ping streams" churn_mixed
check "ping works after the churn" ping_ok
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean
log "runtime ${SECONDS}s"
vmx_done
