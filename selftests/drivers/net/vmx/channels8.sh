#!/usr/bin/env bash
# channels8.sh - 8 combined channels (the device's TX queue maximum) with 8
# vCPUs: traffic over all 8 TX queues, and XDP without room for dedicated
# XDP TX queues: XDP_TX and ndo_xdp_xmit share the stack's TX queues under
# their lock. ethtool -S then has no xdptxN_ counters: XDP_TX frames are
# counted in rxN_xdp_tx and sent by txN, redirected frames in txN_xdp_xmit.
# With 4 channels the dedicated XDP queues (xdptxN) come back, as contrast.
#
# QEMU's vmxnet3 delivers every frame to RX queue 0 (no RSS), so only the
# TX side spreads over the queues.
#
# Topology: tools/vm.sh --smp 8 --nic vmxnet3 --nic vmxnet3 --nic virtio
# (the second vmx NIC redirects into the first for ndo_xdp_xmit).
# vmx-timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }
chan() { ethtool -l "$DUT" | awk -v w="$1" 'index($0, w) == 1 { s = 1 } s && $1 == "Combined:" { print $2; exit }'; }
# nstats PREFIX [COUNTER]: queues PREFIXN that have PREFIXN_COUNTER (packets)
# in ethtool -S (RX queues have no rxN_packets: use drop).
nstats() { ethtool -S "$DUT" | grep -c -E "^ +$1[0-9]+_${2:-packets}:"; }

if [ "$(nproc)" -lt 8 ]; then
	skip "8 channels" "needs 8 vCPUs (tools/vm.sh --smp 8), have $(nproc)"
	vmx_done
fi

eight() {
	ethtool -l "$DUT"
	[ "$(chan Pre-set)" = 8 ] || { echo "maximum combined is not 8"; return 1; }
	if [ "$(chan Current)" != 8 ]; then
		ethtool -L "$DUT" combined 8 && wait_carrier "$DUT" 10 || return 1
	fi
	echo "current combined $(chan Current); ethtool -S: $(nstats tx) txN, $(nstats rx drop) rxN," \
	     "$(nstats xdptx) xdptxN queues; $(grep -c "$DUT-rxtx-" /proc/interrupts) rxtx vectors"
	[ "$(chan Current)" = 8 ] && [ "$(nstats tx)" = 8 ] && [ "$(nstats rx drop)" = 8 ] &&
		[ "$(nstats xdptx)" = 0 ]
}
check "combined 8 (maximum 8): 8 TX and RX queues, no dedicated XDP TX queue" eight

# 400 UDP flows (each datagram from a new socket, so a new source port):
# the flow hash spreads them over all 8 TX queues.
spread() {
	local q d rc=0
	snap "$DUT" >"$VMX_TMP/s0"
	udp_flows() { local _; for _ in $(seq 400); do echo x >"/dev/udp/$PEER_IP/9"; done; }
	udp_flows
	snap "$DUT" >"$VMX_TMP/s1"
	for q in 0 1 2 3 4 5 6 7; do
		d=$(sdelta "$VMX_TMP/s0" "$VMX_TMP/s1" "tx${q}_packets")
		printf 'tx%d_packets +%d  ' "$q" "$d"
		[ "$d" -gt 0 ] || rc=1
	done
	echo
	return $rc
}
check "400 UDP flows: every one of the 8 TX queues sent some" spread
IPERF_PAR=8
check "TCP with $IPERF_PAR streams to the peer over 8 channels" iperf_check -P $IPERF_PAR
check "TCP with $IPERF_PAR streams from the peer over 8 channels" iperf_check -P $IPERF_PAR -R

# ------------------------------------------------ XDP_TX on shared queues
# XDP_TX of RX queue 0 goes out on stack queue tx0 under its lock, while
# the stack sends UDP flows on all queues from other CPUs.
xdp_tx_shared() {
	local n=64 rc=0 a b c fl
	snap "$DUT" >"$VMX_TMP/x0"
	bash -c 'for i in $(seq 2000); do echo x >"/dev/udp/$1/9"; done' - "$PEER_IP" &
	fl=$!
	XDP_SIZES=60,128,512,1514 peer_bounce $XDP_PORT_TX $n swap || rc=1
	wait $fl
	snap "$DUT" >"$VMX_TMP/x1"
	a=$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'rx[0-9]+_xdp_tx')
	b=$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'rx[0-9]+_xdp_tx_errors')
	c=$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'tx[0-9]+_packets')
	echo "rxN_xdp_tx +$a, xdp_tx_errors +$b, txN_packets +$c (want 2000 stack flows + $n XDP_TX);" \
	     "$(nstats xdptx) xdptxN queues in ethtool -S"
	[ "$a" = $n ] && [ "$b" = 0 ] && [ "$c" -ge $((2000 + n)) ] && [ "$(nstats xdptx)" = 0 ] || rc=1
	return $rc
}
if check "xdp_tx attached natively with 8 channels" xdp_attach "$DUT" xdp_tx; then
	check "XDP_TX through the shared stack queue, stack traffic alongside: exact, counted" \
		xdp_tx_shared
	check "ping with xdp_tx attached" ping_ok
	xdp_detach "$DUT"
fi

# ------------------------------------------------ ndo_xdp_xmit on shared queues
# DUT2 redirects the peer's frames into DUT through a devmap: DUT sends them
# with ndo_xdp_xmit on txN (queue = CPU % 8), counted in txN_xdp_xmit.
xmit_shared() {
	local n=40 rc=0 x e map id
	ip link set "$DUT2" up
	wait_carrier "$DUT2" 10 || return 1
	xdp_attach "$DUT2" xdp_redirect_devmap || return 1
	id=$(xdp_prog_id "$DUT2")
	map=$(prog_map_id "$id" devmap) || { echo "no devmap"; return 1; }
	# shellcheck disable=SC2046 # u32_le prints four words
	bpftool map update id "$map" key $(u32_le 0) value $(u32_le "$(cat "/sys/class/net/$DUT/ifindex")") ||
		return 1
	snap "$DUT" >"$VMX_TMP/r0"
	peer_bounce $XDP_PORT_REDIRECT $n swap "$(mac_of "$DUT2")" || rc=1
	snap "$DUT" >"$VMX_TMP/r1"
	xdp_detach "$DUT2"
	x=$(sdelta "$VMX_TMP/r0" "$VMX_TMP/r1" 'tx[0-9]+_xdp_xmit')
	e=$(sdelta "$VMX_TMP/r0" "$VMX_TMP/r1" 'tx[0-9]+_xdp_xmit_errors')
	ethtool -S "$DUT" | grep -E '^ +tx[0-9]+_xdp_xmit:' | grep -v ': 0$'
	echo "$DUT txN_xdp_xmit +$x (want $n), errors +$e; $(nstats xdptx) xdptxN queues"
	[ "$x" = $n ] && [ "$e" = 0 ] && [ "$(nstats xdptx)" = 0 ] || rc=1
	return $rc
}
if [ -n "$DUT2" ]; then
	check "ndo_xdp_xmit into $DUT (8 channels): shared stack queues, exact, counted" xmit_shared
else
	skip "ndo_xdp_xmit on shared queues" "needs a second vmxnet3 NIC (--nic vmxnet3 --nic vmxnet3 --nic virtio)"
fi

# ------------------------------------------------ contrast: 4 channels
four() {
	local n=32 a
	ethtool -L "$DUT" combined 4 || return 1
	wait_carrier "$DUT" 10 || return 1
	echo "combined $(chan Current): $(nstats tx) txN, $(nstats xdptx) xdptxN queues"
	[ "$(nstats xdptx)" = 4 ] || return 1
	xdp_attach "$DUT" xdp_tx || return 1
	snap "$DUT" >"$VMX_TMP/f0"
	peer_bounce $XDP_PORT_TX $n swap
	local rc=$?
	snap "$DUT" >"$VMX_TMP/f1"
	xdp_detach "$DUT"
	a=$(sdelta "$VMX_TMP/f0" "$VMX_TMP/f1" 'xdptx[0-9]+_packets')
	echo "xdptxN_packets +$a (want $n)"
	[ $rc = 0 ] && [ "$a" = $n ]
}
check "combined 4: 4 dedicated XDP TX queues carry XDP_TX" four
back8() {
	ethtool -L "$DUT" combined 8 || return 1
	wait_carrier "$DUT" 10 || return 1
	echo "combined $(chan Current): $(nstats xdptx) xdptxN queues"
	[ "$(nstats xdptx)" = 0 ] && ping_ok
}
check "back to combined 8: dedicated XDP queues gone, ping" back8
check_pp_settled "no page_pool left with pages in flight"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

vmx_done
