#!/usr/bin/env bash
# tdev_rss.sh - RSS on the test device (property rss=on): 16 TCP flows from
# the peer spread over every RX queue; the driver's per-queue counters
# agree with the device's own (stat-rx-queueN, stat-rx-bytes-queueN):
# qstats rx-packets/rx-bytes per queue without a program, ethtool -S
# rxN_xdp_packets per queue with xdp_pass attached, so XDP runs on every
# queue. Needs 2+ RX queues (vm.sh --smp 2, the default, gives 2).
#
# Topology: tools/vm.sh --nic vmxnet3t --nic virtio --guest-monitor (any
# number of vmx NICs; the first is used). On QEMU's stock vmxnet3 (no RSS:
# everything lands on queue 0) every check SKIPs.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
NIC=$(testdev_nic_of "$DUT") && testdev_nics | grep -qx "$NIC" ||
	{ skip "RSS over every RX queue" "$DUT is QEMU's stock vmxnet3, not the test device (vm.sh --nic vmxnet3t): no RSS"; vmx_done; }
rss=$(testdev_prop "$NIC" rss)
[ "$rss" = on ] || { skip "RSS over every RX queue" "$NIC has rss=${rss:-off} (vm.sh --nic vmxnet3t:rss=on)"; vmx_done; }
NQ=$(combined_channels "$DUT")
[ "${NQ:-1}" -ge 2 ] ||
	{ skip "RSS over every RX queue" "$DUT has ${NQ:-?} RX queue (vm.sh --smp 2 or more)"; vmx_done; }
log "$DUT: $NIC, revision $(dut_revision), $NQ RX queues, rss=$rss"
FLOWS=16

# qsnap FILE: per queue Q "q Q dev_pkts dev_bytes drv_pkts drv_bytes xdp_pkts"
# (device stat-rx-queueN / stat-rx-bytes-queueN, driver qstats rx-packets
# / rx-bytes, ethtool -S rxQ_xdp_packets).
qsnap() {
	local q qs
	qs=$(nl_qstats queue "$DUT" 2>/dev/null)
	for ((q = 0; q < NQ; q++)); do
		printf 'q %d %s %s %s %s %s\n' "$q" \
			"$(testdev_stat "$DUT" "stat-rx-queue$q")" \
			"$(testdev_stat "$DUT" "stat-rx-bytes-queue$q")" \
			"$(awk -v q=$q '$1 == "rx" && $2 == q && $3 == "rx-packets" { print $4; f = 1 } END { if (!f) print 0 }' <<<"$qs")" \
			"$(awk -v q=$q '$1 == "rx" && $2 == q && $3 == "rx-bytes" { print $4; f = 1 } END { if (!f) print 0 }' <<<"$qs")" \
			"$(estat "$DUT" "rx${q}_xdp_packets")"
	done >"$1"
}
# spread MODE: FLOWS TCP flows peer -> DUT for 3 s; every queue got at
# least 100 frames; per queue the driver's count (MODE qstats: rx-packets
# and rx-bytes; MODE xdp: rxN_xdp_packets) equals the device's, give or
# take 2 frames (a control frame between the reads).
spread() {
	local rc=0 nb0 nb1 retr why=
	qsnap "$VMX_TMP/q0"
	nb0=$(estat "$DUT" dev_rx_nobuf)
	# Under TCG 16 flows overrun the RX rings (the device counts the
	# frames it had no buffer for, dev_rx_nobuf): with an XDP program
	# (LRO off) 2.5-5.1 % of the segments were retransmitted in four
	# runs; without one (LRO on) 3.1 % in one. Each frame dropped for
	# want of a buffer costs one retransmit: in CI runs retransmits
	# against dev_rx_nobuf were 1407/1399, 2596/2566, 17/15, 1461/1600,
	# and 2 to 15 with no frame dropped. The rest are timer retransmits
	# (tail loss probes, RTOs) when TCG stalls a flow: at most 30 in
	# those ten runs of 16 flows, about 2 a flow. So two bounds: 10 % of
	# the segments in all (iperf_check: the device's drops are a TCG
	# artefact this test does not judge), and retransmits beyond
	# dev_rx_nobuf at most 8 a flow (128): a frame the driver drops or
	# breaks after the device delivered it costs a retransmit dev_rx_nobuf
	# does not explain (it allowed 10 % of the segments before, about
	# 5000 such frames).
	VMX_TCP_MAX_RETRANS=10 VMX_IPERF_TIME=3 iperf_check -R -P $FLOWS \
		>"$VMX_TMP/iperf.out" || { rc=1; why="iperf3: $(tail -n 1 "$VMX_TMP/iperf.out")"; }
	cat "$VMX_TMP/iperf.out"
	nb1=$(estat "$DUT" dev_rx_nobuf)
	echo "device: $((nb1 - nb0)) frames without an RX buffer (dev_rx_nobuf)"
	retr=$(sed -n 's/.*, retransmits \([0-9]*\)$/\1/p' "$VMX_TMP/iperf.out" | tail -n 1)
	if [ -z "$retr" ]; then
		rc=1; why="no retransmit count from iperf3"
	elif [ $((retr - (nb1 - nb0))) -gt $((8 * FLOWS)) ]; then
		rc=1; why="$retr retransmits, $((retr - (nb1 - nb0))) more than the device's drops: above $((8 * FLOWS)) (8 a flow)"
	else
		echo "retransmits beyond the device's drops: $((retr - (nb1 - nb0))) (allowed $((8 * FLOWS)))"
	fi
	sleep 1
	qsnap "$VMX_TMP/q1"
	awk -v mode="$1" -v nq="$NQ" '
		function abs(x) { return x < 0 ? -x : x }
		FNR == NR { for (i = 3; i <= 7; i++) b[$2, i] = $i; next }
		{ q = $2; n++
		  dp = $3 - b[q, 3]; db = $4 - b[q, 4]; rp = $5 - b[q, 5]; rb = $6 - b[q, 6]; xp = $7 - b[q, 7]
		  printf "queue %d: device +%d frames +%d bytes; qstats rx-packets +%d rx-bytes +%d; rx%d_xdp_packets +%d\n", q, dp, db, rp, rb, q, xp
		  if (dp < 100) { print "queue " q " got (almost) nothing"; bad = 1 }
		  if (mode == "qstats" && (abs(rp - dp) > 2 || abs(rb - db) > 3028)) { print "queue " q ": qstats and device disagree"; bad = 1 }
		  if (mode == "qstats" && xp != 0) { print "XDP ran without a program"; bad = 1 }
		  if (mode == "xdp" && abs(xp - dp) > 2) { print "queue " q ": rx" q "_xdp_packets and device disagree"; bad = 1 } }
		END { if (n != nq) { print "read " n " queues of " nq; bad = 1 }; exit bad }' "$VMX_TMP/q0" "$VMX_TMP/q1" || rc=1
	[ $rc = 0 ] || { echo "before/after:"; cat "$VMX_TMP/q0" "$VMX_TMP/q1"; }
	# last, so the summary's lines before "not ok" say what failed
	[ -z "$why" ] || echo "$why"
	return $rc
}
if have_qstats; then
	check "$FLOWS TCP flows reach all $NQ RX queues; qstats per queue = device per queue" spread qstats
else
	skip "RSS spread checked with qstats" "no netdev qstats in kernel $(uname -r)"
fi
if check "xdp_pass attached natively" xdp_attach "$DUT" xdp_pass; then
	check "XDP on every RX queue: rxN_xdp_packets per queue = device per queue" spread xdp
	xdp_detach "$DUT"
fi
check "ping after detaching" peer_ping -c 5 -i 0.1 "$DUT_IP"
vmx_done
