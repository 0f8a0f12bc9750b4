#!/usr/bin/env bash
# tx_linearize.sh - the TX linearize path: a frame needing more descriptors
# than the device takes per packet (16 without TSO) is linearized by the
# driver and still reaches the peer intact.
#
# Producers of many-fragment skbs:
#  - tx_frags.py: UDP with MSG_ZEROCOPY, the payload in F pieces from F
#    different pages: the skb has F page fragments and only the headers in
#    its linear part, which go to the TX data ring entry. So the packet takes
#    1 + F descriptors: F = 15 is the largest that fits (16), F = 16 and 17
#    (MAX_SKB_FRAGS) must be linearized, each datagram counted once in
#    txN_linearize. The peer checks every datagram byte for byte.
#  - pktgen "frags N" on the DUT: the same boundary with the kernel's own
#    generator (no checksum offload), counted at the peer. "flag !SHARED":
#    pktgen's default shared skb (users > 1) must not be linearized
#    (pskb_expand_head BUG()s on a shared skb), so every frame is its own.
# The TSO limit (24) cannot be reached: see tso_reachable below.
#
# Topology: tools/vm.sh --nic vmxnet3 --nic virtio (any core group).
# vmx-timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

TXF=$VMX_LIB_DIR/tx_frags.py
PORT=9123
N=${VMX_LIN_COUNT:-40}

vmx_setup

lin() { estat "$DUT" 'tx[0-9]+_linearize'; }
txdrop() { estat "$DUT" 'tx[0-9]+_(drop|bad_desc)'; }
_udp_bound() { pexec ss -Hlun "sport = :$1" | grep -q .; }

# frags_run FRAGS WANT_LINEARIZED: N datagrams of FRAGS fragments, all
# arrive exact; txN_linearize grows by WANT_LINEARIZED.
frags_run() {
	local f=$1 want=$2 l0 l1 d0 d1 rc=0 rpid
	pexec timeout 90 python3 "$TXF" recv "$PEER_IP" $PORT "$N" --frags "$f" \
		--timeout 20 >"$VMX_TMP/recv.out" 2>&1 &
	rpid=$!
	_vmx_bg+=("$rpid")
	wait_for 20 _udp_bound $PORT || { echo "receiver did not start"; cat "$VMX_TMP/recv.out"; return 1; }
	l0=$(lin); d0=$(txdrop)
	python3 "$TXF" send "$PEER_IP" $PORT "$N" "$f" || rc=1
	wait "$rpid" || rc=1
	cat "$VMX_TMP/recv.out"
	l1=$(lin); d1=$(txdrop)
	echo "txN_linearize +$((l1 - l0)) (want $want), txN_drop/bad_desc +$((d1 - d0))"
	[ $((l1 - l0)) = "$want" ] || rc=1
	[ $((d1 - d0)) = 0 ] || rc=1
	return $rc
}

ethtool -S "$DUT" | grep -q 'tx0_linearize:' ||
	bail "no tx0_linearize counter in ethtool -S $DUT" counters
check "15 fragments (16 descriptors): sent as is, $N datagrams exact at the peer" \
	frags_run 15 0
check "16 fragments (17 descriptors): each of $N datagrams linearized, exact at the peer" \
	frags_run 16 "$N"
check "17 fragments (MAX_SKB_FRAGS): each of $N datagrams linearized, exact at the peer" \
	frags_run 17 "$N"

# ---------------------------------------------------------------- pktgen
PG=/proc/net/pktgen
pg() { echo "$2" >"$PG/$1"; }
# peer_snmp PROTO FIELD: a counter of the peer netns' /proc/net/snmp.
peer_snmp() { pexec cat /proc/net/snmp | snmp_field "$1" "$2"; }
# pg_frags FRAGS WANT_LINEARIZED: pktgen sends N 1000-byte UDP frames of
# FRAGS fragments from the DUT to a port nobody listens on at the peer:
# each must pass the peer's IPv4 checks and reach UDP (Udp NoPorts +N,
# Ip InHdrErrors +0).
pg_frags() {
	local f=$1 want=$2 l0 l1 u0 u1 h0 h1 t rc=0
	modprobe pktgen || return 1
	for t in "$PG"/kpktgend_*; do pg "${t##*/}" rem_device_all; done
	pg kpktgend_0 "add_device $DUT" &&
	pg "$DUT" "count $N" && pg "$DUT" "pkt_size 1000" && pg "$DUT" "frags $f" &&
	pg "$DUT" "flag !SHARED" &&
	pg "$DUT" "delay 1000000" && pg "$DUT" "dst $PEER_IP" && pg "$DUT" "udp_dst_min $PORT" &&
	pg "$DUT" "udp_dst_max $PORT" && pg "$DUT" "dst_mac $(pexec cat "/sys/class/net/$PEER/address")" ||
		return 1
	l0=$(lin); u0=$(peer_snmp Udp NoPorts); h0=$(peer_snmp Ip InHdrErrors)
	timeout 60 bash -c "echo start >$PG/pgctrl" || { echo "pktgen did not finish in 60 s"; rc=1; }
	pg pgctrl stop
	sleep 0.5
	l1=$(lin); u1=$(peer_snmp Udp NoPorts); h1=$(peer_snmp Ip InHdrErrors)
	echo "pktgen: $(grep -o 'OK: .*' "$PG/$DUT" | head -n 1)"
	echo "txN_linearize +$((l1 - l0)) (want $want); peer Udp NoPorts +$((u1 - u0))," \
	     "Ip InHdrErrors +$((h1 - h0)) (want $N, 0)"
	[ $((l1 - l0)) = "$want" ] || rc=1
	[ $((u1 - u0)) = "$N" ] && [ $((h1 - h0)) = 0 ] || rc=1
	return $rc
}
check "pktgen frags 15 from $DUT: no linearize, peer gets all $N frames" pg_frags 15 0
check "pktgen frags 16 from $DUT: $N linearized, peer gets all $N frames" pg_frags 16 "$N"

# ---------------------------------------------------------------- TSO
# A TSO skb takes 1 descriptor for the headers (data ring) plus one per
# 16 KB chunk of its linear rest and of each fragment. The stack's TSO skbs
# carry at most MAX_SKB_FRAGS fragments and 64 KB (the driver sets no
# larger GSO size): at most 1 + (MAX_SKB_FRAGS + 1) + 64K/16K descriptors.
tso_reachable() {
	local f
	f=$(sed -n 's/^CONFIG_MAX_SKB_FRAGS=//p' "/boot/config-$(uname -r)" 2>/dev/null)
	f=${f:-17}
	TSO_MAXD=$((1 + f + 1 + 4))
	[ "$TSO_MAXD" -gt 24 ]
}
if tso_reachable; then
	skip "TSO skb over 24 descriptors linearized" \
		"kernel allows $TSO_MAXD descriptors per TSO skb but this test has no producer for it yet"
else
	skip "TSO skb over 24 descriptors linearized" \
		"unreachable: MAX_SKB_FRAGS and 64 KB GSO give at most $TSO_MAXD descriptors per TSO skb"
fi

vmx_done
