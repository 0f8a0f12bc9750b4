#!/usr/bin/env bash
# tdev_queues.sh - a device that reports fewer TX queues than two per
# channel: the test device's max-tx-queues / max-rx-queues
# (GET_MAX_QUEUES_CONF) on a NIC of group tdevrev
# (max-tx-queues=4,max-rx-queues=4 with --smp 4: 4 channels). vmx keeps the
# TX and RX limits apart: the channels follow both, no dedicated XDP TX
# queue is set up when there is no room for one, and with an XDP program
# attached the link comes up (the device refuses an ACTIVATE with more TX
# queues than it reported), XDP_TX and ndo_xdp_xmit (a devmap redirect back
# out of the same NIC) share the stack's TX queues under their lock,
# and every frame comes back exact. xsk-zerocopy is in xdp-features only
# while the channels leave room for an XDP TX queue each (ethtool -L to
# half the TX limit and back). A redirect flood bounced out on the shared
# queues while TCP goes out on them too: XDP stops a queue it fills as the
# stack's own sends do, so the stack never meets a full ring (vmx never
# answers NETDEV_TX_BUSY: tracepoint net:net_dev_xmit).
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
	max=$(combined_max "$DUT")
	cur=$(combined_channels "$DUT")
	echo "combined channels: max $max, current $cur (want $want)"
	[ "$max" = "$want" ] && [ "$cur" = "$want" ]
}
check "channels follow the device's TX and RX limits" channels

# xsk-zerocopy in xdp-features (netdev dev-get) only while every channel
# has an XDP TX queue of its own, that is 2 x channels <= max-tx-queues:
# every zero-copy bind is refused otherwise. ethtool -L changes it.
NLDEV=$VMX_LIB_DIR/nldev.py
combined() { combined_channels "$DUT"; }
# zc_is yes|no: xsk-zerocopy in xdp-features or not
zc_is() {
	local out
	out=$(python3 "$NLDEV" "$(cat "/sys/class/net/$DUT/ifindex")" | grep '^xdp-features ') ||
		{ echo "no xdp-features from netdev dev-get"; return 1; }
	echo "$(combined) channels (XDP TX room for $((MAXTX - $(combined)))): $out"
	if [ "$1" = yes ]; then [[ "$out" == *xsk-zerocopy* ]]; else [[ "$out" != *xsk-zerocopy* ]]; fi ||
		{ echo "want xsk-zerocopy: $1"; return 1; }
}
zc_follows() {
	local cur rc=0
	cur=$(combined)
	zc_is "$([ $((2 * cur)) -le "$MAXTX" ] && echo yes || echo no)" || rc=1
	ethtool -L "$DUT" combined $((MAXTX / 2)) && wait_carrier "$DUT" 10 || return 1
	zc_is yes || rc=1
	ethtool -L "$DUT" combined "$cur" && wait_carrier "$DUT" 10 || return 1
	zc_is "$([ $((2 * cur)) -le "$MAXTX" ] && echo yes || echo no)" || rc=1
	return $rc
}
if ! python3 "$NLDEV" "$(cat "/sys/class/net/$DUT/ifindex")" >/dev/null 2>&1; then
	skip "xsk-zerocopy follows the channels" "no netdev netlink dev-get in kernel $(uname -r) (6.3+)"
elif [ $((2 * $(combined))) -le "$MAXTX" ] || [ $((MAXTX / 2)) -lt 1 ]; then
	skip "xsk-zerocopy follows the channels" "$(combined) channels leave XDP TX room within $MAXTX TX queues"
else
	check "xsk-zerocopy advertised only with an XDP TX queue per channel ($(combined) channels, $((MAXTX / 2)), back)" zc_follows
fi

# An XDP program makes vmx ask for TX queues of its own where the device
# has room (2 x channels <= max-tx-queues); here it has none: no xdptxN
# queue, the link comes back up (ACTIVATE accepted) and carries traffic.
XDP_OWN=0
attach_tx() {
	local nq
	xdp_attach "$DUT" xdp_tx || return 1
	xdp_native "$DUT" xdp_tx || return 1
	wait_carrier "$DUT" 10 || return 1
	nq=$(combined_channels "$DUT")
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

# A redirect flood bounced back out of DUT on the shared stack queues
# (pktgen from the peer to XDP_PORT_REDIRECT, the devmap program above)
# while 4 TCP flows go out of DUT, both on TX queue 0: every NIC interrupt
# on CPU 0, so NAPI, XDP and ndo_xdp_xmit run there and send on queue 0
# (vmx_xdp_txq: CPU number modulo the channels), XPS maps every CPU to
# queue 0, TX rings of 64 so that a poll's XDP frames fill one. The
# driver before the fix answered BUSY in 1 of 2 such runs (5 times in
# 5 s), a narrow interleaving under single-threaded TCG: a weak check
# for it (spread over 4 queues with rings of 512, in none; with BQL's
# minimum raised and every flow on RX queue 0 too, in none of 2), and 0
# in every run with the fix. ndo_xdp_xmit stops a queue it leaves
# without room for a full packet, as the stack's own sends do, so the
# stack never meets a full ring: vmx_start_xmit never answers
# NETDEV_TX_BUSY (counted with the tracepoint net:net_dev_xmit, rc 16).
# The qdisc's requeue count is shown, not checked: it also counts a packet
# the qdisc took out while the queue was awake and found stopped once it
# had the queue's lock, which XDP on another CPU may have taken and
# stopped the queue under (12 in 5 s with the fix, none of them BUSY).
# requeues: the qdisc requeues of DUT's TX queues (the mq children, else
# the root)
requeues() {
	tc -s qdisc show dev "$DUT" | awk '/^qdisc/ { ch = / parent /; rt = / root / }
		/^ Sent .*requeues/ { v = $NF; sub(/\)$/, "", v); if (ch) c += v; else if (rt) r += v; n += ch }
		END { print (n ? c : r) + 0 }'
}
TR=/sys/kernel/tracing
XMIT_EV=$TR/events/net/net_dev_xmit
# xps_all0 / xps_restore: every CPU to TX queue 0 (XPS), and back
_xps_saved=()
xps_all0() {
	local f all
	all=$(printf '%x' $(((1 << $(nproc)) - 1)))
	for f in /sys/class/net/"$DUT"/queues/tx-*/xps_cpus; do
		_xps_saved+=("$f=$(cat "$f")")
		if [ "$f" = "/sys/class/net/$DUT/queues/tx-0/xps_cpus" ]; then
			echo "$all" >"$f" || return 1
		else
			echo 0 >"$f" || return 1
		fi
	done
}
xps_restore() {
	local e
	for e in "${_xps_saved[@]}"; do echo "${e#*=}" >"${e%%=*}"; done
	_xps_saved=()
}
shared_flood() {
	local secs=5 rq0 rq1 x xe busy rc=0 txr
	[ -d "$XMIT_EV" ] || { echo "no tracepoint net:net_dev_xmit in $TR"; return 1; }
	txr=$(ring_size "$DUT" TX)
	ethtool -G "$DUT" tx 64 && wait_carrier "$DUT" 10 || return 1
	pin_irqs_cpu0
	xps_all0 || rc=1
	pktgen_setup "$(mac_of "$DUT")" 100000000 60 $XDP_PORT_REDIRECT >/dev/null || return 1
	echo 0 >"$TR/tracing_on"; echo >"$TR/trace"
	echo "rc == 16 && name == \"$DUT\"" >"$XMIT_EV/filter" || return 1
	echo 1 >"$XMIT_EV/enable" || return 1
	echo 1 >"$TR/tracing_on"
	snap "$DUT" > "$VMX_TMP/f0"
	rq0=$(requeues)
	pktgen_start
	VMX_IPERF_TIME=$secs VMX_TCP_MAX_RETRANS=100 iperf_check -P 4 || rc=1
	pktgen_stop
	sleep 0.5
	echo 0 >"$XMIT_EV/enable"
	busy=$(grep -c 'net_dev_xmit:' "$TR/trace")
	grep -m 2 'net_dev_xmit:' "$TR/trace"
	echo 0 >"$XMIT_EV/filter"; echo >"$TR/trace"
	rq1=$(requeues)
	snap "$DUT" > "$VMX_TMP/f1"
	xps_restore
	irqs_restore
	ethtool -G "$DUT" tx "$txr" && wait_carrier "$DUT" 10 || rc=1
	x=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'tx0_xdp_xmit')
	xe=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'tx[0-9]+_xdp_xmit_errors')
	echo "pktgen sent $(pktgen_sent) to port $XDP_PORT_REDIRECT; tx0_xdp_xmit +$x (all queues' errors +$xe)," \
		"tx0_packets +$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'tx0_packets'); qdisc requeues $rq0 -> $rq1;" \
		"NETDEV_TX_BUSY answers: $busy"
	[ "$x" -ge 1000 ] || { echo "fewer than 1000 frames redirected onto the shared queue 0"; rc=1; }
	[ "$busy" = 0 ] || { echo "the stack met a full ring $busy times (vmx answered NETDEV_TX_BUSY)"; rc=1; }
	return $rc
}
if [ "$XDP_OWN" = 0 ]; then
	check "redirect flood + 4 TCP flows out on shared TX queue 0: vmx never answers NETDEV_TX_BUSY" shared_flood
else
	skip "redirect flood on the shared queues" "vmx set up $XDP_OWN XDP TX queues of its own"
fi

xdp_detach "$DUT"
check "ping after detach" ping_ok
vmx_done
