#!/usr/bin/env bash
# tdev_async.sh - TX completed later than the doorbell, as ESXi does, and
# interrupt moderation: the test device's tx-delay-us (TX rings processed
# that long after the doorbell, in a batch), tx-poll-us (processed without
# a doorbell) and intr-min-gap-us (interrupts of one vector held apart).
# The XDP TX queues' own completion vector fires and every bounced frame
# is reclaimed (their senders find nothing completed on the doorbell any
# more); under an XDP_TX flood spread over the RX queues by RSS each RX
# queue's frames leave through its own XDP TX queue (the device's
# per-queue counts agree with the driver's); under iperf3 load BQL's
# in-flight bytes drain to 0 and every queue stop was followed by a wake
# (no lost wake-up: traffic goes on);
# the driver's and the device's counters agree; ping right after
# detaching xdp_drop (a buffer layout switch) loses nothing, again and
# again.
#
# Topology: tools/vm.sh --nic vmxnet3t:tx-delay-us=200,intr-min-gap-us=100
# --nic virtio --guest-monitor. SKIPs on QEMU's stock vmxnet3 and on a test
# device created with none of the three properties.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
NIC=$(testdev_nic_of "$DUT") && testdev_nics | grep -qx "$NIC" ||
	{ skip "asynchronous TX and moderation" "$DUT is QEMU's stock vmxnet3, not the test device (vm.sh --nic vmxnet3t)"; vmx_done; }
DELAY=$(testdev_prop "$NIC" tx-delay-us)
POLL=$(testdev_prop "$NIC" tx-poll-us)
GAP=$(testdev_prop "$NIC" intr-min-gap-us)
DELAY=${DELAY:-0} POLL=${POLL:-0} GAP=${GAP:-0}
[ $((DELAY + POLL + GAP)) -gt 0 ] || {
	skip "asynchronous TX and moderation" "$NIC has tx-delay-us, tx-poll-us and intr-min-gap-us 0 (vm.sh --nic vmxnet3t:tx-delay-us=200,intr-min-gap-us=100)"
	vmx_done
}
log "$DUT: $NIC tx-delay-us=$DELAY tx-poll-us=$POLL intr-min-gap-us=$GAP" \
	"tx-threshold=$(testdev_prop "$NIC" tx-threshold | grep . || echo 1), revision $(dut_revision)"
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# dev_moved STAT CMD...: CMD passes and the device's STAT moved.
dev_moved() {
	local s=$1 a b
	shift
	a=$(testdev_stat "$DUT" "$s")
	"$@" || return 1
	b=$(testdev_stat "$DUT" "$s")
	echo "device $s +$((b - a))"
	[ $((b - a)) -gt 0 ]
}
if [ $((DELAY + POLL)) -gt 0 ]; then
	check "TX processed by the device's timer, not on the doorbell (stat-tx-timer-runs)" \
		dev_moved stat-tx-timer-runs ping_ok
else
	skip "TX processed by the device's timer" "tx-delay-us and tx-poll-us are 0"
fi

# ------------------------------------------------ XDP TX queues
# xdp_reclaimed N: bounce N frames with XDP_TX; they come back exact and,
# without any more traffic, the XDP TX queues complete all of them
# (xdptxN_packets counts completions) through their own vector.
XVEC="irq_$DUT-xdp-tx"
_xdp_done() { snap "$DUT" >"$VMX_TMP/x1"; [ "$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'xdptx[0-9]+_packets')" -ge "$1" ]; }
xdp_reclaimed() {
	local n=$1 tx rc=0
	snap "$DUT" >"$VMX_TMP/x0"
	peer_bounce $XDP_PORT_TX "$n" swap || rc=1
	wait_for 10 _xdp_done "$n" || { echo "XDP TX queues did not complete $n frames within 10 s"; rc=1; }
	tx=$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'rx[0-9]+_xdp_tx')
	echo "rxN_xdp_tx +$tx; xdptxN_packets (completed) +$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'xdptx[0-9]+_packets');" \
		"$XVEC +$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" "$XVEC")," \
		"queue vectors +$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" "irq_$DUT-rxtx-[0-9]+")"
	[ "$tx" = "$n" ] || { echo "want rxN_xdp_tx +$n"; rc=1; }
	[ "$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" "$XVEC")" -gt 0 ] ||
		{ echo "the XDP TX completion vector never fired"; rc=1; }
	return $rc
}
# xdp_per_queue F0 F1: per queue, between two snaps (driver's and
# device's counters): every RX queue bounced frames (rxQ_xdp_tx), no more
# than the device delivered to it (td_rxQ); and XDP TX queue X sent
# exactly the frames of the RX queues vmx maps to it (vmx_xdp_txq(): RX
# queue Q to XDP TX queue Q % NX, its own when NX = NQ), counted by the
# driver (xdptxX_packets) and by the device (td_xdptxX of
# testdev_queue_snap), the oracle. A
# driver sending every RX queue's frames through one XDP TX queue passes
# the totals and fails here.
xdp_per_queue() {
	local q x t e d want c s rc=0
	local -a w=()
	for ((q = 0; q < NQ; q++)); do
		t=$(sdelta "$1" "$2" "rx${q}_xdp_tx")
		e=$(sdelta "$1" "$2" "rx${q}_xdp_tx_errors")
		d=$(sdelta "$1" "$2" "td_rx$q")
		echo "RX queue $q: the device delivered +$d; rx${q}_xdp_tx +$t, errors +$e (to XDP TX queue $((q % NX)))"
		[ "$t" -gt 0 ] || { echo "RX queue $q bounced nothing: the flood did not reach every queue"; rc=1; }
		[ $((t + e)) -le "$d" ] || { echo "RX queue $q: bounced $((t + e)), the device delivered only $d"; rc=1; }
		w[q % NX]=$((${w[q % NX]:-0} + t))
	done
	for ((x = 0; x < NX; x++)); do
		want=${w[x]:-0}
		c=$(sdelta "$1" "$2" "xdptx${x}_packets")
		s=$(sdelta "$1" "$2" "td_xdptx$x")
		echo "XDP TX queue $x: want +$want; xdptx${x}_packets +$c, the device sent +$s"
		[ "$c" = "$want" ] && [ "$s" = "$want" ] ||
			{ echo "XDP TX queue $x did not carry exactly its RX queues' frames"; rc=1; }
	done
	return $rc
}
# xdp_flood SECS: pktgen frames bounced by XDP_TX for SECS s; afterwards
# every frame the driver queued (rxN_xdp_tx; a full ring counts in
# rxN_xdp_tx_errors) was completed (xdptxN_packets), and the device sent
# exactly those, each RX queue's from its own XDP TX queue
# (xdp_per_queue). (The peer's count is shown only: under a flood the
# hub drops what the virtio peer cannot take in time.) Random source
# addresses spread the frames over the RX queues (RSS), so every XDP TX
# queue is busy; with tx-delay-step-us each completes at its own time,
# after the XDP TX interrupt masked the vector for all of them: a queue
# whose completions no interrupt or poll reaps keeps them.
xdp_flood() {
	local t e c p rc=0
	NQ=$(combined_channels "$DUT")
	NX=$(ethtool -S "$DUT" | grep -cE '^ *xdptx[0-9]+_packets:')
	[ "${NQ:-0}" -gt 0 ] && [ "$NX" -gt 0 ] || { echo "channels '$NQ', XDP TX queues $NX"; return 1; }
	pktgen_setup "$(mac_of "$DUT")" 200000 60 $XDP_PORT_TX >/dev/null || return 1
	_pg "$PEER" "src_min 10.99.0.100" && _pg "$PEER" "src_max 10.99.0.250" &&
		_pg "$PEER" "flag IPSRC_RND" || return 1
	{ snap "$DUT" && testdev_queue_snap "$DUT" "$NQ" "$NQ" "$NX"; } >"$VMX_TMP/f0" || return 1
	peer_snap >"$VMX_TMP/p0"
	pktgen_start; sleep "$1"; pktgen_stop
	sleep 1
	{ snap "$DUT" && testdev_queue_snap "$DUT" "$NQ" "$NQ" "$NX"; } >"$VMX_TMP/f1" || return 1
	peer_snap >"$VMX_TMP/p1"
	t=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'rx[0-9]+_xdp_tx')
	e=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'rx[0-9]+_xdp_tx_errors')
	c=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'xdptx[0-9]+_packets')
	p=$(sdelta "$VMX_TMP/p0" "$VMX_TMP/p1" link_rx_packets)
	echo "pktgen sent $(pktgen_sent); rxN_xdp_tx +$t, errors +$e; xdptxN_packets +$c;" \
		"device XDP TX queues sent +$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'td_xdptx[0-9]+'); peer rx_packets +$p;" \
		"$XVEC +$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" "$XVEC")"
	[ "$t" -gt 1000 ] || { echo "(almost) nothing bounced"; return 1; }
	[ "$t" = "$c" ] || { echo "sent $t but completed $c"; rc=1; }
	xdp_per_queue "$VMX_TMP/f0" "$VMX_TMP/f1" || rc=1
	return $rc
}
if ! grep -q " $DUT-xdp-tx\$" /proc/interrupts; then
	skip "XDP TX completion vector" "no $DUT-xdp-tx vector (XDP shares the stack queues here)"
elif check "xdp_tx attached natively" xdp_attach "$DUT" xdp_tx; then
	check "XDP_TX: 44 frames back exact, all completed through the $DUT-xdp-tx vector" xdp_reclaimed 44
	check "XDP_TX under a 3 s pktgen flood: every frame queued was completed and sent by the device, each RX queue's from its own XDP TX queue" xdp_flood 3
	check "ping with xdp_tx attached" ping_ok
	xdp_detach "$DUT"
fi

# ------------------------------------------------ BQL, stop/wake
# Completions come in batches tx-delay-us after the doorbell, so the stack
# queues are stopped (by BQL, or by the driver when the ring is full) and
# must be woken by those completions; a lost wake-up stalls the flows and
# ends in a TX timeout (lib.sh's error counter check).
# stop_wake: "tx-stop tx-wake" summed over the DUT's TX queues (qstats).
stop_wake() {
	nl_qstats queue "$DUT" | awk '$1 == "tx" && $3 == "tx-stop" { s += $4 }
		$1 == "tx" && $3 == "tx-wake" { w += $4 } END { print s + 0, w + 0 }'
}
# load_drains [MINSTOPS]: 4 TCP flows out for 5 s pass (iperf_check), the
# in-flight bytes drain to 0 afterwards, the driver woke every queue it
# stopped, and stopped at least MINSTOPS times.
load_drains() {
	local rc=0 sw0 sw1 s0 w0 s1 w1 f
	sw0=$(stop_wake)
	VMX_IPERF_TIME=5 iperf_check -P 4 || rc=1
	wait_for 10 bql_drained || { echo "bytes still in flight 10 s after the load"; rc=1; }
	for f in /sys/class/net/"$DUT"/queues/tx-*/byte_queue_limits; do
		echo "${f#/sys/class/net/"$DUT"/queues/}: limit $(cat "$f/limit") (max $(cat "$f/limit_max")), inflight $(cat "$f/inflight")"
	done
	sw1=$(stop_wake)
	[[ "$sw0 $sw1" =~ ^([0-9]+)\ ([0-9]+)\ ([0-9]+)\ ([0-9]+)$ ]] ||
		{ echo "qstats tx-stop/tx-wake unreadable: '$sw0' '$sw1'"; return 1; }
	s0=${BASH_REMATCH[1]} w0=${BASH_REMATCH[2]} s1=${BASH_REMATCH[3]} w1=${BASH_REMATCH[4]}
	echo "driver queue stops +$((s1 - s0)), wakes +$((w1 - w0)) (qstats tx-stop/tx-wake; $s1/$w1 since load)"
	[ "$s1" -le "$w1" ] || { echo "a stopped queue was never woken"; rc=1; }
	[ $((s1 - s0)) -ge "${1:-0}" ] || { echo "want at least ${1:-0} stops"; rc=1; }
	return $rc
}
# bql_tiny: the same with BQL's limit held at 3000 bytes per queue (each
# queue stopped by BQL after about two frames until the batch completes).
bql_tiny() {
	local f rc=0 saved=()
	for f in /sys/class/net/"$DUT"/queues/tx-*/byte_queue_limits/limit_max; do
		saved+=("$f=$(cat "$f")")
		echo 3000 >"$f" || return 1
	done
	load_drains || rc=1
	for f in "${saved[@]}"; do echo "${f#*=}" >"${f%%=*}"; done
	return $rc
}
# ring_stops: TX rings of 32 descriptors: the driver stops the queues when
# they are full, the completions wake them.
ring_stops() {
	local tx rc=0
	tx=$(ring_size "$DUT" TX)
	ethtool -G "$DUT" tx 32 || return 1
	wait_carrier "$DUT" 10 || rc=1
	load_drains 1 || rc=1
	ethtool -G "$DUT" tx "$tx" || rc=1
	wait_carrier "$DUT" 10 || rc=1
	return $rc
}
if have_qstats; then
	check "4 flows out for 5 s: in-flight bytes drain, every stop woken" load_drains
	check "BQL limit 3000 B: 4 flows out, every BQL stop woken (no stall, no TX timeout)" bql_tiny
	check "TX rings of 32: the driver stops and wakes its queues under load" ring_stops
else
	skip "BQL and stop/wake under load" "no qstats in kernel $(uname -r)"
fi
if [ "$GAP" -gt 0 ]; then
	check "TCP peer -> DUT: interrupts held back by moderation (stat-intr-held)" \
		dev_moved stat-intr-held iperf_check -R
else
	check "TCP peer -> DUT afterwards" iperf_check -R
fi
# tx_agree: over 20 pings from the DUT, the frames the device sent from
# the stack queues (stat-tx-queueN) = the driver's txN_packets, give or
# take 2 (an ARP/ND frame between the reads).
tx_sum() {
	local q n d=0 v=0
	n=$(combined_channels "$DUT")
	for ((q = 0; q < n; q++)); do
		d=$((d + $(estat "$DUT" "tx${q}_packets")))
		v=$((v + $(testdev_stat "$DUT" "stat-tx-queue$q")))
	done
	echo "$d $v"
}
tx_agree() {
	local a b
	a=$(tx_sum)
	dut_ping -c 20 -i 0.05 "$PEER_IP" || return 1
	sleep 0.5
	b=$(tx_sum)
	[[ "$a $b" =~ ^([0-9]+)\ ([0-9]+)\ ([0-9]+)\ ([0-9]+)$ ]] || { echo "counters unreadable: '$a' '$b'"; return 1; }
	set -- "${BASH_REMATCH[@]:1}"
	echo "stack TX queues: driver txN_packets +$(($3 - $1)), device stat-tx-queueN +$(($4 - $2))"
	[ $(($3 - $1)) -ge 20 ] && near $(($3 - $1)) $(($4 - $2)) 0 2
}
check "20 pings out: the device sent what the driver counted (txN_packets)" tx_agree

# ------------------------------------------------ detach xdp_drop, then ping
# (last session: 1 of 5 pings lost right after the detach, with
# tx-delay-us=200,intr-min-gap-us=100)
ROUNDS=${VMX_TDEV_ROUNDS:-10}
drop_detach_ping() {
	local i lost=0 out
	for ((i = 1; i <= ROUNDS; i++)); do
		xdp_attach "$DUT" xdp_drop || return 1
		peer_no_reply -c 3 -i 0.1 "$DUT_IP" >/dev/null || { echo "round $i: replies through xdp_drop"; return 1; }
		xdp_detach "$DUT" || return 1
		if ! out=$(ping_ok); then
			lost=$((lost + 1))
			echo "round $i: $(echo "$out" | grep 'packet loss')"
			dmesg_since_start | tail -n 3
		fi
	done
	echo "$lost of $ROUNDS rounds lost replies"
	[ $lost = 0 ]
}
check "$ROUNDS x (xdp_drop, detach, 5 pings): every ping answered" drop_detach_ping
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean
vmx_done
