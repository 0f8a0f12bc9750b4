#!/usr/bin/env bash
# qstats_xdp.sh - the netdev qstats rx-packets/rx-bytes (netlink,
# device scope) count every frame the device received, also those a native
# XDP program consumed: XDP_DROP, XDP_TX and XDP_REDIRECT (the netdev
# qstats documentation; the kernel's drivers/net/xdp.py checks the same).
# Each action: the peer sends N frames the program acts on, the driver's
# own rxN_xdp_<action> counter must count them, and the qstats rx-packets
# must have grown by at least as much (rx-bytes by at least the bytes) -
# and by what the peer's interface sent (tx_packets, give or take 2), and
# on the test device by what the device delivered (stat-rx-queueN).
# Kernel 6.10+ (qstats netlink); SKIP on older kernels.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
if ! have_qstats; then
	skip "qstats count XDP frames" "no qstats netlink (netdev family qstats-get) in kernel $(uname -r)"
	vmx_done
fi
IDX=$(cat "/sys/class/net/$DUT/ifindex")
N=50
# Oracles outside the driver: the frames the peer's interface sent
# (its tx_packets; nothing else sends to the DUT meanwhile) and, on the
# test device, the frames the device delivered (stat-rx-queueN summed
# over the RX queues in use).
TD=
if have_testdev; then TD=$(testdev_nic_of "$DUT" 2>/dev/null) && testdev_nics | grep -qx "$TD" || TD=; fi
NQ=$(combined_channels "$DUT")
peer_tx() { pexec cat "/sys/class/net/$PEER/statistics/tx_packets"; }
dev_rx() {
	local q s=0 v
	for ((q = 0; q < ${NQ:-1}; q++)); do
		v=$(testdev_stat "$TD" "rx-queue$q") || return 1
		s=$((s + v))
	done
	echo "$s"
}

# frames ACTION PORT: the peer sends N frames to PORT; for drop they only
# go out (their lengths saved), for tx/redirect they must come back
# byte-identical with the MACs swapped. Sets SENT_BYTES (at least).
SENT_BYTES=0
frames() {
	if [ "$1" = drop ]; then
		peer_send "$2" $N "$VMX_TMP/sent" || return 1
		SENT_BYTES=$(awk '{ s += $1 } END { print s + 0 }' "$VMX_TMP/sent")
	else
		peer_bounce "$2" $N swap || return 1
		SENT_BYTES=$((N * 60))
	fi
}

# xdp_in_qstats ACTION PROG PORT: PROG attached; N frames to PORT; the
# driver's rxN_xdp_ACTION grew by N or more; qstats rx-packets grew by at
# least that much and rx-bytes by at least the bytes sent.
xdp_in_qstats() {
	local act=$1 prog=$2 port=$3 q0 q1 e0 e1 l0 l1 p0 p1 d0='' d1='' qd map rc=0
	xdp_attach "$DUT" "$prog" || return 1
	if [ "$act" = redirect ]; then
		# the devmap sends the frames back out of the DUT itself
		map=$(prog_map_id "$(xdp_prog_id "$DUT")" devmap) || { echo "no devmap"; return 1; }
		# shellcheck disable=SC2046 # u32_le prints four words
		bpftool map update id "$map" key $(u32_le 0) value $(u32_le "$IDX") || return 1
	fi
	sleep 0.5
	read -r -a q0 <<<"$(qstats_totals "$DUT")"
	e0=$(estat "$DUT" "rx[0-9]+_xdp_$act")
	l0=$(link_stat "$DUT" rx_packets)
	p0=$(peer_tx)
	[ -z "$TD" ] || d0=$(dev_rx) || return 1
	frames "$act" "$port" || rc=1
	sleep 0.5
	read -r -a q1 <<<"$(qstats_totals "$DUT")"
	e1=$(estat "$DUT" "rx[0-9]+_xdp_$act")
	l1=$(link_stat "$DUT" rx_packets)
	p1=$(peer_tx)
	[ -z "$TD" ] || d1=$(dev_rx) || return 1
	xdp_detach "$DUT"
	[ ${#q0[@]} = 4 ] && [ ${#q1[@]} = 4 ] || { echo "no qstats totals"; return 1; }
	echo "XDP_${act^^}: rxN_xdp_$act +$((e1 - e0)); qstats rx-packets +$((q1[0] - q0[0])) rx-bytes +$((q1[2] - q0[2])) (sent $N frames, $SENT_BYTES+ bytes); rtnl rx_packets +$((l1 - l0))"
	[ $rc = 0 ] || return 1
	[ $((e1 - e0)) -ge $N ] || { echo "the program did not handle the $N frames"; return 1; }
	[ $((q1[0] - q0[0])) -ge $((e1 - e0)) ] ||
		{ echo "qstats rx-packets left out frames XDP_${act^^} consumed"; rc=1; }
	[ $((q1[2] - q0[2])) -ge "$SENT_BYTES" ] ||
		{ echo "qstats rx-bytes left out bytes of frames XDP_${act^^} consumed"; rc=1; }
	# every frame the peer sent counted once: not fewer, not more
	qd=$((q1[0] - q0[0]))
	echo "the peer sent $((p1 - p0)) frames${TD:+; the device ($TD) delivered $((d1 - d0))}"
	[ $((p1 - p0)) -ge $N ] || { echo "the peer sent fewer than $N frames"; rc=1; }
	[ $qd -ge $((p1 - p0 - 2)) ] && [ $qd -le $((p1 - p0 + 2)) ] ||
		{ echo "qstats rx-packets +$qd is not what the peer sent (+$((p1 - p0)))"; rc=1; }
	if [ -n "$TD" ] && { [ $qd -lt $((d1 - d0 - 2)) ] || [ $qd -gt $((d1 - d0 + 2)) ]; }; then
		echo "qstats rx-packets +$qd is not what the device delivered (+$((d1 - d0)))"; rc=1
	fi
	return $rc
}

check "qstats rx-packets/rx-bytes count XDP_DROP frames (= the peer sent, = the device delivered)" xdp_in_qstats drop xdp_drop 9
check "qstats rx-packets/rx-bytes count XDP_TX frames (= the peer sent, = the device delivered)" xdp_in_qstats tx xdp_tx $XDP_PORT_TX
check "qstats rx-packets/rx-bytes count XDP_REDIRECT frames (= the peer sent, = the device delivered)" \
	xdp_in_qstats redirect xdp_redirect_devmap $XDP_PORT_REDIRECT
check "ping after the XDP programs are gone" peer_ping -c 3 -i 0.2 "$DUT_IP"

vmx_done
