#!/usr/bin/env bash
# xdp_bench.sh - xdp-bench drop, pass and tx in native and skb mode, and
# redirect-cpu -c 0 -r drop, each for a few seconds against pktgen traffic
# (60-byte UDP) from the virtio peer. Each run passes when xdp-bench
# reports a nonzero rate, detaches cleanly, and the driver's counters
# account for what pktgen sent: frames seen by XDP (or the stack in skb
# mode) plus the device's no-buffer drops (dev_rx_nobuf) = frames sent,
# within 1% + 50; and what XDP did with them adds up (drop/pass/tx/
# redirect counters, frames the peer got back).
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
SECS=${VMX_BENCH_SECS:-3}
check "pktgen set up in the peer netns (dst_mac = DUT)" \
	pktgen_setup "$(mac_of "$DUT")" 5000000 60



native() {
	local act=$1 pk dr pa tx te st prx
	bench_run "$SECS" drv "$act" -m native "$DUT" || return 1
	rate_ok rx/s || return 1
	pk=$(bd 'rx[0-9]+_xdp_packets'); dr=$(bd 'rx[0-9]+_xdp_drop')
	pa=$(bd 'rx[0-9]+_xdp_pass'); tx=$(bd 'rx[0-9]+_xdp_tx')
	te=$(bd 'rx[0-9]+_xdp_tx_errors'); st=$(bd ip_InReceives)
	prx=$(bp link_rx_packets)
	echo "rxN_xdp_packets +$pk drop +$dr pass +$pa tx +$tx tx_errors +$te;" \
	     "stack (Ip InReceives) +$st; rx_packets +$(bd link_rx_packets); peer rx_packets +$prx"
	acct "$pk" || return 1
	case $act in
	drop)
		[ "$dr" = "$pk" ] || { echo "not every frame counted as dropped"; return 1; }
		[ "$st" -le 20 ] || { echo "frames reached the stack"; return 1; } ;;
	pass)
		[ "$pa" = "$pk" ] || { echo "not every frame counted as passed"; return 1; }
		near "$st" "$pa" 1 20 || { echo "stack did not get the passed frames"; return 1; } ;;
	tx)
		[ $((tx + te)) = "$pk" ] || { echo "xdp_tx + xdp_tx_errors != xdp_packets"; return 1; }
		near "$prx" "$tx" 1 50 || { echo "peer did not get the XDP_TX frames"; return 1; }
		xdp_tx_irqs "$tx" || return 1 ;;
	esac
}

# The driver's probe line: "vmxnet3 revision R, UPT 1, MSI-X with V
# vectors, Q queue pairs max". The XDP TX queues get a vector of their own
# when MSI-X has room for it: V = Q + 2 (queues, XDP TX, events).
PROBE=$(dmesg_since_start | grep -F "$(basename "$(readlink "/sys/class/net/$DUT/device")") " |
	grep 'vmxnet3 revision' | tail -n 1)
log "probe: ${PROBE:-no probe line for $DUT}"
XDP_VEC_ROOM=
if [[ "$PROBE" =~ MSI-X\ with\ ([0-9]+)\ vectors,\ ([0-9]+)\ queue\ pair ]]; then
	XDP_VEC_ROOM=no
	[ "${BASH_REMATCH[1]}" != $((BASH_REMATCH[2] + 2)) ] || XDP_VEC_ROOM=yes
elif [ -n "$PROBE" ]; then
	XDP_VEC_ROOM=no		# MSI or INTx: one vector for everything
fi

# xdp_tx_irqs SENT: the XDP TX queues' own vector exists when MSI-X had
# room for it, and raised no interrupt. Their senders reclaim completions
# right after the doorbell, and QEMU's device completes synchronously on
# the doorbell, so the vector is never unmasked. (A device completing
# later would raise it; that path is not reachable under QEMU.)
xdp_tx_irqs() {
	local x q
	if ! grep -q "^irq_$DUT-xdp-tx " "$BENCH.dut1"; then
		if [ "$VMX_DRIVER" != vmx ]; then
			echo "$VMX_DRIVER: no $DUT-xdp-tx vector (a vmx vector)"
			return 0
		fi
		case "$XDP_VEC_ROOM" in
		no) echo "no $DUT-xdp-tx vector: MSI-X had no room for it ($PROBE)"; return 0 ;;
		yes) echo "no $DUT-xdp-tx vector in /proc/interrupts although MSI-X had room ($PROBE)" ;;
		*) echo "no $DUT-xdp-tx vector, and no probe line says why" ;;
		esac
		grep "$DUT" /proc/interrupts
		return 1
	fi
	x=$(bd "irq_$DUT-xdp-tx"); q=$(bd "irq_$DUT-rxtx-[0-9]+")
	echo "interrupts: $DUT-xdp-tx +$x, queue vectors +$q for $1 XDP_TX frames"
	[ "$x" = 0 ] || { echo "XDP TX completions raised interrupts"; return 1; }
}

generic() {
	local act=$1 pk st stx prx
	bench_run "$SECS" skb "$act" -m skb "$DUT" || return 1
	rate_ok rx/s || return 1
	pk=$(bd 'rx[0-9]+_xdp_packets'); st=$(bd link_rx_packets)
	stx=$(bd link_tx_packets); prx=$(bp link_rx_packets)
	echo "native rxN_xdp_packets +$pk; rx_packets +$st; tx_packets +$stx; peer rx_packets +$prx"
	[ "$pk" = 0 ] || { echo "the native hook ran in skb mode"; return 1; }
	acct "$st" || return 1
	if [ "$act" = tx ]; then
		# generic XDP_TX goes through the stack's TX queue; it drops
		# when that queue is stopped, so only most frames come back
		near "$prx" "$stx" 1 50 || { echo "peer rx != DUT tx"; return 1; }
		[ $((prx * 2)) -ge "$st" ] || { echo "fewer than half the frames came back"; return 1; }
	fi
}


for a in drop pass tx; do
	check "xdp-bench $a -m native: nonzero rate, counters match pktgen" native $a
	check "xdp-bench $a -m skb: nonzero rate, counters match pktgen" generic $a
done
check "xdp-bench redirect-cpu -c 0 -r drop: nonzero rate, counters match" cpumap_drop "$SECS"
check "ping works after the benchmarks" peer_ping -c 5 -i 0.1 "$DUT_IP"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

log "runtime ${SECONDS}s"
vmx_done
