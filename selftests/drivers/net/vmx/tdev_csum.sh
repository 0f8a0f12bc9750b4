#!/usr/bin/env bash
# tdev_csum.sh - vmx never tells the stack a checksum is right that the
# device did not verify, and gives each skb the hash type the device
# reported:
#  - checksums: the test device (rx-csum-verify, on by default: tools/testdev
#    patch 0024) verifies the IPv4 header and TCP/UDP checksums of every
#    frame it delivers and reports them truthfully (ipc/tuc clear when
#    wrong, counted in stat-rx-csum-bad); for a VXLAN or Geneve frame it
#    reports the inner ones (patch 0020, RXINNEROFLD). From the peer, on an
#    AF_PACKET socket (tdev_csum.py), N frames per kind with one checksum
#    wrong: the IPv4 header; UDP and TCP over IPv4; UDP and TCP over IPv6;
#    the inner UDP and TCP of a VXLAN frame (port 4789, outer UDP
#    checksum 0). Each must be counted by the DUT's kernel exactly N times
#    (IpInHdrErrors and IpInCsumErrors, UdpInCsumErrors, Udp6InCsumErrors,
#    TcpInCsumErrors; the other ones of these unmoved), by the device
#    (stat-rx-csum-bad +N), and never reach a socket: a UDP socket on
#    CSUM_PORT logs no datagram of them, a TCP listener answers none of the
#    SYNs with a SYN-ACK. The same frames with every checksum right (the
#    control, sent after them) must all arrive, so dropping everything
#    does not pass. For the VXLAN kinds the stack verifies the inner
#    checksum whatever vmx says: CHECKSUM_UNNECESSARY at csum_level 0,
#    what vmx_rx_csum_inner() gives a frame with a zero outer UDP
#    checksum, covers that zero checksum only (skbuff.h), so vmx's own
#    decision is read from its counters: each wrong frame must be counted
#    in rx*_inner_unused (the device's inner result not claimed);
#  - the outer checksum of a tunnelled frame: the device verifies none (its
#    results are the inner headers'), so vmx may claim csum_level 1 (outer
#    and inner checksums verified) only when the outer UDP checksum is 0.
#    N VXLAN (vxouter) and N Geneve (gnouter, port 6081) frames whose outer
#    UDP checksum is not 0 and wrong, their inner ones right, must be
#    counted exactly N times in UdpInCsumErrors (the stack checked the
#    outer checksum itself), not by the device (stat-rx-csum-bad +0), and
#    never reach the inner UDP socket; vmx must leave the inner result of
#    every one of them, wrong and right, unclaimed (rx*_inner_unused +2N).
#    The same frames with a right non-zero outer checksum must arrive;
#  - hash types: with rxhash on, progs/tc_hashtype.c on the DUT's ingress
#    sees the hash the driver set and whether skb_get_hash() keeps it (an
#    L4 hash, skb->l4_hash) or replaces it (L3). TCP over IPv4 and IPv6
#    must carry an L4 hash, ICMP and ICMPv6 echo requests an L3 one, UDP
#    an L4 hash where "ethtool -n DUT rx-flow-hash udp4/udp6" says the
#    device hashes its ports (SET_RSS_FIELDS, which needs the UDP RSS
#    capability: not offered in group tdev) and an L3 hash otherwise. The
#    device hashes by rssType (patch 0005: TCP4/TCP6 by default, IPv4/IPv6
#    for the rest); vmx_rx_hash() maps IPV4/IPV6 to PKT_HASH_TYPE_L3 and
#    the rest to L4.
#
# Topology: group tdev: a test-device vmx NIC at revision 9 with rss=on
# and 2 vCPUs (2 queues), DCR0 offering the tunnel offloads (inner
# results need vmx's RXINNEROFLD, which it asks for with tunnel offloads),
# the virtio peer on the hub; a VXLAN, then a Geneve tunnel between them
# (lib/net.sh tunnel_up) for the inner sockets. SKIPs on QEMU's stock
# vmxnet3 (it verifies nothing on a hub) and without the QEMU monitor.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

CSUM_PY=$VMX_LIB_DIR/tdev_csum.py
CSUM_PORT=7805	# tdev_csum.py PORT
HTY_PORT=7804	# progs/tc_hashtype.c
N=4		# frames of each kind, wrong and right

xdp_setup
modprobe vxlan
NIC=$(testdev_nic_of "$DUT" 2>/dev/null) && testdev_nics | grep -qx "$NIC" ||
	{ skip "checksums and hash types on the test device" "$DUT is QEMU's stock vmxnet3, not the test device (vm.sh --nic vmxnet3t)"; vmx_done; }
have_hmp ||
	{ skip "checksums and hash types on the test device" "no QEMU monitor in the guest (vm.sh --guest-monitor)"; vmx_done; }
NQ=$(combined_channels "$DUT")
log "$DUT: test device $NIC (rx-csum-verify=$(testdev_prop "$NIC" rx-csum-verify | grep . || echo on), rss=$(testdev_prop "$NIC" rss)), revision $(dut_revision), $NQ channels"
log "$(ethtool -k "$DUT" | grep -E '^(rx-checksumming|receive-hashing):' | tr '\n' ' ')"

# ------------------------------------------------ checksums
# kernel_counts: the DUT's checksum error counters, in KC_NAMES order
# (IpInCsumErrors is IpExt's, in /proc/net/netstat)
KC_NAMES=(IpInHdrErrors IpInCsumErrors UdpInCsumErrors Udp6InCsumErrors TcpInCsumErrors)
kernel_counts() {
	local s
	s=$(cat /proc/net/snmp)
	echo "$(snmp_field Ip InHdrErrors <<<"$s") $(snmp_field IpExt InCsumErrors </proc/net/netstat)" \
		"$(snmp_field Udp InCsumErrors <<<"$s")" \
		"$(awk '$1 == "Udp6InCsumErrors" { print $2 }' /proc/net/snmp6)" \
		"$(snmp_field Tcp InCsumErrors <<<"$s")"
}
# kind_counters KIND: the KC_NAMES the wrong frames of KIND must move
kind_counters() {
	case "$1" in
	ip4hdr) echo "IpInHdrErrors IpInCsumErrors" ;;
	udp4|vxudp|vxouter|gnouter) echo UdpInCsumErrors ;;
	udp6) echo Udp6InCsumErrors ;;
	tcp4|tcp6|vxtcp) echo TcpInCsumErrors ;;
	esac
}
# kind_device_bad KIND: what the device must count in stat-rx-csum-bad for
# the N wrong frames of KIND: N, but none for a wrong outer UDP checksum
# (its results of a tunnelled frame are the inner headers', all right)
kind_device_bad() { case "$1" in *outer) echo 0 ;; *) echo "$N" ;; esac; }
# kind_unclaimed KIND: the frames of KIND whose inner result vmx must not
# claim (rx*_inner_unused), wrong and right ones: only a zero outer UDP
# checksum lets vmx claim one, and only a right one
kind_unclaimed() { case "$1" in *outer) echo $((2 * N)) ;; *) echo "$N" ;; esac; }
# _kind_counted KIND "COUNTS BEFORE": the counters of KIND moved by N
_kind_counted() {
	local -a a b
	local i
	read -r -a a <<<"$2"
	read -r -a b <<<"$(kernel_counts)"
	for i in "${!KC_NAMES[@]}"; do
		[[ " $(kind_counters "$1") " == *" ${KC_NAMES[i]} "* ]] || continue
		[ $((${b[i]:-0} - ${a[i]:-0})) -ge "$N" ] || return 1
	done
}
RECV_LOG=$VMX_TMP/recv.log
# logged KIND bad|good: datagrams of KIND the DUT's UDP socket received
logged() { grep -c "^VMXC $1 $2 " "$RECV_LOG" 2>/dev/null; }
good_all_logged() { [ "$(logged "$1" good)" -ge "$N" ]; }

# csum_kind KIND [SEND OPTIONS]: send N wrong and N right frames of KIND
# from the peer; sets BAD_OUT and GOOD_OUT (what the checks print) and
# BAD_RC and GOOD_RC
csum_kind() {
	local kind=$1 a b ka kb dev0 dev1 dw out i want d rc_b=0 rc_g=0 sa sb iu0='' iu1 uw
	shift
	[[ "$kind" == vx* || "$kind" == gn* ]] && [ "$VMX_DRIVER" = vmx ] &&
		iu0=$(estat "$DUT" 'rx[0-9]+_inner_unused')
	read -r -a ka <<<"$(kernel_counts)"
	dev0=$(testdev_stat "$NIC" rx-csum-bad)
	out=$(pexec env PEER_IP="$PEER_IP" DUT_IP="$DUT_IP" PEER_IP6="$PEER_IP6" \
		DUT_IP6="$DUT_IP6" python3 "$CSUM_PY" send "$PEER" "$(mac_of "$DUT")" \
		"$kind" "$N" "$@" 2>&1)
	case "$kind" in
	*tcp*) ;;
	*) wait_for 5 good_all_logged "$kind" ;;
	esac
	# the wrong frames may hash to another queue than the right ones,
	# polled on the other vCPU: wait for their count (5 s at most)
	wait_for "$(scaled 5)" _kind_counted "$kind" "${ka[*]}"
	sleep 0.2
	read -r -a kb <<<"$(kernel_counts)"
	dev1=$(testdev_stat "$NIC" rx-csum-bad)
	BAD_OUT=() GOOD_OUT=()
	# kernel counters: exactly N on the kind's, nothing on the others
	want=" $(kind_counters "$kind") "
	d=
	for i in "${!KC_NAMES[@]}"; do
		a=${ka[i]:-x} b=${kb[i]:-y}
		[[ "$a$b" =~ ^[0-9]+$ ]] ||
			{ BAD_OUT+=("${KC_NAMES[i]} unreadable: '$a' '$b'"); rc_b=1; continue; }
		d+=" ${KC_NAMES[i]} +$((b - a))"
		if [[ "$want" == *" ${KC_NAMES[i]} "* ]]; then
			[ $((b - a)) = "$N" ] || { BAD_OUT+=("${KC_NAMES[i]} +$((b - a)), want +$N"); rc_b=1; }
		else
			[ $((b - a)) = 0 ] || { BAD_OUT+=("${KC_NAMES[i]} +$((b - a)), want +0"); rc_b=1; }
		fi
	done
	BAD_OUT=("peer: $(echo "$out" | tr '\n' ';')" "kernel:$d" "device $NIC: stat-rx-csum-bad +$((dev1 - dev0))" "${BAD_OUT[@]}")
	dw=$(kind_device_bad "$kind")
	[ $((dev1 - dev0)) = "$dw" ] || { BAD_OUT+=("the device counted $((dev1 - dev0)) bad checksums, want $dw"); rc_b=1; }
	# vmx itself: no wrong inner result claimed (the stack would catch
	# it here anyway: see the header)
	if [ -n "$iu0" ]; then
		iu1=$(estat "$DUT" 'rx[0-9]+_inner_unused')
		uw=$(kind_unclaimed "$kind")
		BAD_OUT+=("vmx: rx*_inner_unused +$((iu1 - iu0)) (inner results not claimed)")
		[ $((iu1 - iu0)) -ge "$uw" ] ||
			{ BAD_OUT+=("vmx claimed an inner result it must not: want rx*_inner_unused +$uw at least"); rc_b=1; }
	fi
	# what reached a socket
	case "$kind" in
	*tcp*)
		sb=$(sed -n 's/^synack bad=\([0-9]*\) good=\([0-9]*\)$/\1/p' <<<"$out")
		sa=$(sed -n 's/^synack bad=\([0-9]*\) good=\([0-9]*\)$/\2/p' <<<"$out")
		BAD_OUT+=("SYN-ACKs to wrong SYNs: ${sb:-?}")
		GOOD_OUT+=("SYN-ACKs to right SYNs: ${sa:-?} of $N")
		[ "${sb:-x}" = 0 ] || { BAD_OUT+=("a SYN with a wrong checksum reached the listener"); rc_b=1; }
		[ "${sa:-x}" = "$N" ] || { GOOD_OUT+=("want $N"); rc_g=1; }
		;;
	*)
		sb=$(logged "$kind" bad) sa=$(logged "$kind" good)
		BAD_OUT+=("datagrams with a wrong checksum received: $sb")
		GOOD_OUT+=("datagrams with right checksums received: $sa of $N")
		[ "$sb" = 0 ] || { BAD_OUT+=("a datagram with a wrong checksum reached the socket"); rc_b=1; }
		[ "$sa" = "$N" ] || { GOOD_OUT+=("want $N"); rc_g=1; }
		;;
	esac
	BAD_RC=$rc_b GOOD_RC=$rc_g
}
bad_result() { printf '%s\n' "${BAD_OUT[@]}"; return "$BAD_RC"; }
good_result() { printf '%s\n' "${GOOD_OUT[@]}"; return "$GOOD_RC"; }

csum_check() {
	local kind=$1 what=$2
	shift 2
	local by="the kernel and the device"
	[[ "$kind" == *outer ]] && by="the kernel (the device verifies inner checksums only)"
	csum_kind "$kind" "$@"
	check "$kind: $N frames, $what wrong: counted by $by, none reaches a socket" bad_result
	check "$kind: the same $N frames with right checksums reach the socket (control)" good_result
}

bg_start timeout "$(scaled 120)" python3 "$CSUM_PY" recv "$RECV_LOG" "$(scaled 120)"
RECV_PID=$BG_PID
if ! wait_for "$(scaled 15)" grep -qsx ready "$RECV_LOG"; then
	fail "DUT receiver (UDP sockets and TCP listeners on port $CSUM_PORT)" "tdev_csum.py recv not ready"
else
	# the peer's neighbour entries, so that nothing waits for ARP/ND
	peer_ping -c 1 -w 5 "$DUT_IP" >/dev/null
	peer_ping -c 1 -w 5 "$DUT_IP6" >/dev/null
	csum_check ip4hdr "the IPv4 header checksum"
	csum_check udp4 "the UDP checksum (IPv4)"
	csum_check tcp4 "the TCP checksum of a SYN (IPv4)"
	csum_check udp6 "the UDP checksum (IPv6)"
	csum_check tcp6 "the TCP checksum of a SYN (IPv6)"
	if ! tunnel_up vxlan 4789 noudpcsum 0 > "$VMX_TMP/tun.out" 2>&1; then
		fail "VXLAN tunnel to the peer (port 4789)" "$(tail -n 3 "$VMX_TMP/tun.out")"
	else
		log "VXLAN 4789 up; $DUT rx_inner counters: $(ethtool -S "$DUT" | awk '/inner/ { printf "%s%s ", $1, $2 }')"
		csum_check vxudp "the inner UDP checksum of a VXLAN frame" \
			--inner-dmac "$(mac_of vmxtun0)"
		csum_check vxtcp "the inner TCP checksum of a SYN in a VXLAN frame" \
			--inner-dmac "$(mac_of vmxtun0)" --sniff vmxtun0
		T0=${EPOCHREALTIME/./}
		csum_check vxouter "the outer UDP checksum (not 0) of a VXLAN frame" \
			--inner-dmac "$(mac_of vmxtun0)"
		OUTER_US=$((${EPOCHREALTIME/./} - T0))
		log "$DUT rx_inner counters after: $(ethtool -S "$DUT" | awk '/inner/ { printf "%s%s ", $1, $2 }')"
		tunnel_down
	fi
	T0=${EPOCHREALTIME/./}
	if ! tunnel_up geneve 6081 noudpcsum 0 > "$VMX_TMP/tun.out" 2>&1; then
		fail "Geneve tunnel to the peer (port 6081)" "$(tail -n 3 "$VMX_TMP/tun.out")"
	else
		csum_check gnouter "the outer UDP checksum (not 0) of a Geneve frame" \
			--inner-dmac "$(mac_of vmxtun0)"
		tunnel_down
	fi
	# what the outer checksum cases cost (make test's budget)
	log "outer checksum cases: $(((${OUTER_US:-0} + ${EPOCHREALTIME/./} - T0) / 1000)) ms (vxouter, the Geneve tunnel, gnouter)"
fi
bg_stop "$RECV_PID"

# ------------------------------------------------ hash types
HTY_MAP=
hty_setup() {
	local id
	ethtool -K "$DUT" rxhash on || return 1
	tc qdisc add dev "$DUT" clsact || return 1
	id=$(tc_ingress_load "$DUT" tc_hashtype) || return 1
	HTY_MAP=$(bpftool prog show id "$id" -j | jq -r '.map_ids[0] // empty')
	[ -n "$HTY_MAP" ] || { echo "tc_hashtype has no map"; return 1; }
}
# hty_counts: tc_hashtype's 18 counters (6 classes x skbs, hashed, L4)
hty_counts() {
	bpftool map dump id "$HTY_MAP" -j |
		jq -r '[.[] | .formatted // empty | {(.key | tostring): .value}] | add |
			[range(18) as $i | .[$i | tostring] // "x"] | join(" ")'
}
HTY_CLASS=(TCP4 UDP4 ICMP4 TCP6 UDP6 ICMPv6)
# hty_check CLASS L4|L3...: every skb of the CLASSes (from the counts in
# HTY) carries a hash, of the type given
HTY=()
hty_check() {
	local rc=0 c i n h l w
	while [ $# -ge 2 ]; do
		c=$1 w=$2
		shift 2
		for i in "${!HTY_CLASS[@]}"; do [ "${HTY_CLASS[i]}" = "$c" ] && break; done
		n=${HTY[3 * i]} h=${HTY[3 * i + 1]} l=${HTY[3 * i + 2]}
		echo "$c: $n skbs, $h with a hash, $l of them kept by skb_get_hash() (L4); want every one $w"
		[[ "$n$h$l" =~ ^[0-9]+$ ]] || { echo "counters unreadable"; rc=1; continue; }
		[ "$n" -ge "$N" ] || { echo "want $N skbs at least"; rc=1; }
		[ "$h" = "$n" ] || { echo "skbs without a hash"; rc=1; }
		if [ "$w" = L4 ]; then
			[ "$l" = "$n" ] || { echo "$((n - l)) with an L3 hash"; rc=1; }
		else
			[ "$l" = 0 ] || { echo "$l with an L4 hash"; rc=1; }
		fi
	done
	return $rc
}
udp_type() { ethtool -n "$DUT" rx-flow-hash "$1" 2>/dev/null | grep -q 'L4 bytes' && echo L4 || echo L3; }

if [ "$(testdev_prop "$NIC" rss)" != on ] || [ "${NQ:-1}" -lt 2 ]; then
	skip "rxhash types" "$NIC hashes nothing (rss=$(testdev_prop "$NIC" rss), $NQ channels): needs rss=on and 2+ queues"
elif check "tc_hashtype on $DUT ingress (clsact, direct action)" hty_setup; then
	U4=$(udp_type udp4) U6=$(udp_type udp6)
	log "TCP and UDP to port $HTY_PORT, pings; rx-flow-hash udp4: $U4 hash, udp6: $U6 hash (ports hashed: L4)"
	pexec env PEER_IP="$PEER_IP" DUT_IP="$DUT_IP" PEER_IP6="$PEER_IP6" DUT_IP6="$DUT_IP6" \
		python3 "$CSUM_PY" hashgen "$PEER" "$(mac_of "$DUT")" "$N" | diag
	peer_ping -c "$N" -i 0.2 -w 10 "$DUT_IP" >/dev/null
	peer_ping -c "$N" -i 0.2 -w 10 "$DUT_IP6" >/dev/null
	sleep 0.2
	read -r -a HTY <<<"$(hty_counts)"
	check "rxhash: TCP over IPv4 and IPv6 carries an L4 hash" hty_check TCP4 L4 TCP6 L4
	check "rxhash: UDP over IPv4 and IPv6 carries the type rx-flow-hash says ($U4, $U6)" \
		hty_check UDP4 "$U4" UDP6 "$U6"
	check "rxhash: ICMP and ICMPv6 echo requests carry an L3 hash" hty_check ICMP4 L3 ICMPv6 L3
	tc qdisc del dev "$DUT" clsact
fi
vmx_done
