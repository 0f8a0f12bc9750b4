#!/usr/bin/env bash
# xdp_xsk.sh - AF_XDP sockets on vmx with progs/xsk_tool (libxdp's xsk API)
# behind progs/xdp_redirect_xsk.o (UDP to XDP_PORT_XSK goes to the socket
# of the receiving queue, everything else to the stack):
#  - copy mode (XDP_COPY): RX, TX and l2fwd, the baseline any driver with
#    XDP_REDIRECT has;
#  - zero-copy (XDP_ZEROCOPY): xsk-zerocopy in xdp-features; RX on queue 0
#    with need_wakeup on and off (frames byte-identical, rxN_xdp_redirect
#    counts them, the socket gets as many as the peer's tx_packets sent,
#    rxN_xsk_copied counts exactly the frames that came through the RX
#    data ring, on the test device the ones it says it put there,
#    stat-rx-data-ring); XDP_PASS frames of that queue still reach
#    the stack (ping); TX from the socket (the peer gets the frames
#    byte-identical, xdptxN_xsk_xmit counts them); l2fwd (the peer gets
#    every frame back with the MACs swapped) with need_wakeup on and off;
#  - busy polling (xsk_tool -b: SO_PREFER_BUSY_POLL, SO_BUSY_POLL,
#    SO_BUSY_POLL_BUDGET, the device's napi_defer_hard_irqs and
#    gro_flush_timeout): zero-copy RX on queue 0 driven by the socket's
#    recvfrom calls, bytes exact, the queue's interrupt (nearly) silent
#    while interrupts paced the same RX without busy polling;
#  - the queue<->NAPI links of netdev netlink (queue-get, napi-get; 6.8+):
#    every RX and TX queue has a NAPI, RX and TX queue i share channel i's,
#    each NAPI of the device is listed with the IRQ of its MSI-X vector,
#    and the zero-copy socket's SO_INCOMING_NAPI_ID is queue 0's NAPI;
#  - pool add/remove under traffic: a ping flood that is not redirected
#    while a zero-copy socket on queue 0 is bound and closed 5 times. Where
#    the device steers (the test device with RSS: ethtool -X sends every
#    flow to queue 1) the flood must lose nothing; QEMU's stock vmxnet3
#    delivers everything to queue 0, the queue being reconfigured, so
#    there the flood only has to resume and nothing may be left broken;
#  - refusals: a zero-copy bind with 2048-byte chunks at MTU 3000 (EINVAL
#    and the driver's "AF_XDP zero-copy ... too small" line), raising the
#    MTU to 3000 while such a pool is bound, a bind to a queue beyond the
#    channel count (EINVAL from the kernel core);
#  - rmmod with a zero-copy socket open: the socket sees ENETDOWN, no
#    warning, the driver loads again and carries traffic.
# Before the driver has zero-copy every zero-copy bind fails with
# EOPNOTSUPP, and so do the checks that need one.
#
# Topology: tools/vm.sh --nic vmxnet3 --nic virtio (the xdp group), or the
# test device (tdev group).
# vmx-timeout: 600
# vmx-expects-log: AF_XDP zero-copy on queue [0-9]+: buffers of [0-9]+ bytes too small for MTU [0-9]+ \(needs [0-9]+\)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

XSK=$XDP_PROGS/xsk_tool
N=24
# The driver's counters this test reads (ethtool -S), in one place:
C_REDIRECT='rx[0-9]+_xdp_redirect'     # frames redirected (to the socket)
C_COPIED='rx[0-9]+_xsk_copied'         # frames copied into UMEM chunks
C_DATA_RING='rx[0-9]+_data_ring'       # frames from the RX data ring
C_XSK_XMIT='xdptx[0-9]+_xsk_xmit'      # frames sent from an AF_XDP TX ring

xdp_setup
PEER_MAC=$(peer_mac)
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# dut_queues: the number of queues the kernel knows for DUT (the larger
# of RX and TX: what the kernel's AF_XDP bind accepts below).
dut_queues() {
	local r t
	r=$(find "/sys/class/net/$DUT/queues" -maxdepth 1 -name 'rx-*' | wc -l)
	t=$(find "/sys/class/net/$DUT/queues" -maxdepth 1 -name 'tx-*' | wc -l)
	echo $((r > t ? r : t))
}

# The test device with RSS steers flows between queues; QEMU's stock
# vmxnet3 puts everything on queue 0.
STEER=0
NIC=$(testdev_nic_of "$DUT" 2>/dev/null) && [ "$(testdev_prop "$NIC" rss)" = on ] &&
	[ "$(dut_queues)" -gt 1 ] && STEER=1
log "$DUT: revision $(dut_revision), $(dut_queues) queues, steering ${STEER/0/no (every frame on queue 0)}"
# Oracles outside the driver: the frames the peer's interface sent
# (tx_packets) and, on the test device, the frames the device delivered
# through an RX data ring (stat-rx-data-ring, patch 0002).
TD=
NIC=$(testdev_nic_of "$DUT" 2>/dev/null) && testdev_nics | grep -qx "$NIC" && TD=$NIC
peer_tx() { pexec cat "/sys/class/net/$PEER/statistics/tx_packets"; }

# rss_to 0|1: every flow to queue 0 or 1 (only where the device steers).
rss_to() {
	[ $STEER = 1 ] || return 0
	if [ "$1" = 0 ]; then ethtool -X "$DUT" equal 1
	else ethtool -X "$DUT" weight 0 1; fi
}

# xsk_start ARGS...: xsk_tool ARGS in the background (XSK_PID), output in
# $VMX_TMP/xsk.{out,err}; returns once it is ready, fails (showing its
# stderr) when it exits first. xsk_end: wait for it, show its stderr,
# return its exit status.
XSK_PID=
xsk_alive() { kill -0 "$XSK_PID" 2>/dev/null; }
_xsk_started() { grep -q "^xsk: ready" "$VMX_TMP/xsk.err" || ! xsk_alive; }
xsk_start() {
	"$XSK" "$@" >"$VMX_TMP/xsk.out" 2>"$VMX_TMP/xsk.err" &
	XSK_PID=$!
	_vmx_bg+=("$XSK_PID")
	wait_for 20 _xsk_started
	if ! grep -q "^xsk: ready" "$VMX_TMP/xsk.err"; then
		kill "$XSK_PID" 2>/dev/null
		wait "$XSK_PID"
		echo "xsk_tool $* exit status $?:"
		cat "$VMX_TMP/xsk.err"
		return 1
	fi
	grep "^xsk: ready" "$VMX_TMP/xsk.err"
}
xsk_end() {
	local rc
	wait "$XSK_PID"
	rc=$?
	grep -v "^xsk: ready" "$VMX_TMP/xsk.err"
	return $rc
}

# want_mode copy|zc: the socket xsk_start reported is bound in that mode.
want_mode() {
	local m=copy
	[ "$1" = zc ] && m=zero-copy
	grep -q "^xsk: ready ($m," "$VMX_TMP/xsk.err" || { echo "socket not in $m mode"; return 1; }
}

# ------------------------------------------------ peer capture
# peer_cap_start N: the peer's own AF_PACKET socket collects the test
# frames (xdp_pkt.py's magic at the start of the UDP payload) that reach
# it, until N came or 20 s passed, as "<len> <hex>" lines in
# $VMX_TMP/peer.got; peer_cap_end waits for it.
PEER_CAP_PID=
peer_cap_start() {
	rm -f "$VMX_TMP/peer.got" "$VMX_TMP/peer.err"
	ip netns exec "$PEER_NS" python3 - "$VMX_LIB_DIR" "$PEER" "$1" "$VMX_TMP/peer.got" 2>"$VMX_TMP/peer.err" <<'EOF' &
import sys, time
sys.path.insert(0, sys.argv[1])
import xdp_pkt
s = xdp_pkt.open_sock(sys.argv[2])
s.settimeout(0.1)
want, out, got = int(sys.argv[3]), open(sys.argv[4], "w"), 0
print("listening", file=sys.stderr, flush=True)
end = time.time() + 20
while got < want and time.time() < end:
    try:
        data, addr = s.recvfrom(65536)
    except OSError:
        continue
    if addr[2] != xdp_pkt.PACKET_OUTGOING and data[42:46] == xdp_pkt.MAGIC:
        out.write("%d %s\n" % (len(data), data.hex()))
        got += 1
out.close()
print("peer got %d test frames" % got, file=sys.stderr)
EOF
	PEER_CAP_PID=$!
	_vmx_bg+=("$PEER_CAP_PID")
	wait_for 20 grep -q listening "$VMX_TMP/peer.err" || { cat "$VMX_TMP/peer.err"; return 1; }
}
peer_cap_end() { wait "$PEER_CAP_PID"; grep -v listening "$VMX_TMP/peer.err"; }

# tx_frames N FILE: N test frames from DUT to the peer (UDP to port 9, the
# sizes of xdp_pkt.py) as "<len> <hex>" lines.
tx_frames() {
	env PEER_IP="$DUT_IP" python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import xdp_pkt as x
x.save(sys.argv[6], x.make_frames(sys.argv[2], sys.argv[3], sys.argv[4], 9, int(sys.argv[5]), "swap")[1])' \
		"$VMX_LIB_DIR" "$DUT" "$PEER_MAC" "$PEER_IP" "$1" "$2"
}

# q0_vector: the /proc/interrupts name of the vector queue 0 interrupts
# on (DUT-rxtx-0 with MSI-X, else the device's single vector DUT).
q0_vector() {
	if grep -q " $DUT-rxtx-0\$" /proc/interrupts; then echo "$DUT-rxtx-0"
	else echo "$DUT"; fi
}

# ------------------------------------------------ the three actions
# xsk_rx_check MODE WAKEUP [BUDGET]: N frames from the peer to the socket
# on queue 0; with BUDGET busy polling (xsk_tool -b BUDGET). Sets
# XSK_IRQS (interrupts of queue 0's vector meanwhile) and, from the
# socket, XSK_NAPI_ID (SO_INCOMING_NAPI_ID).
XSK_IRQS=
XSK_NAPI_ID=
xsk_rx_check() {
	local rc s0=$VMX_TMP/s0 s1=$VMX_TMP/s1 red cop dr vec p0 p1 d0='' d1='' got
	XSK_IRQS=
	XSK_NAPI_ID=
	vec=$(q0_vector)
	rss_to 0 || return 1
	xsk_start -m "$1" -w "$2" ${3:+-b "$3"} -n $N "$DUT" 0 rx || return 1
	want_mode "$1" || { kill "$XSK_PID"; xsk_end; return 1; }
	snap "$DUT" >"$s0"
	p0=$(peer_tx)
	[ -z "$TD" ] || d0=$(testdev_stat "$TD" rx-data-ring) || return 1
	peer_send $XDP_PORT_XSK $N "$VMX_TMP/xsk.sent" || return 1
	xsk_end
	rc=$?
	snap "$DUT" >"$s1"
	p1=$(peer_tx)
	[ -z "$TD" ] || d1=$(testdev_stat "$TD" rx-data-ring) || return 1
	red=$(sdelta "$s0" "$s1" "$C_REDIRECT")
	cop=$(sdelta "$s0" "$s1" "$C_COPIED")
	dr=$(sdelta "$s0" "$s1" "$C_DATA_RING")
	XSK_IRQS=$(sdelta "$s0" "$s1" "irq_$vec")
	XSK_NAPI_ID=$(sed -n 's/^xsk: napi id \([0-9]*\)$/\1/p' "$VMX_TMP/xsk.err")
	echo "rxN_xdp_redirect +$red, rxN_xsk_copied +$cop, rxN_data_ring +$dr, interrupts on $vec +$XSK_IRQS"
	got=$(grep -c . "$VMX_TMP/xsk.out")
	echo "the peer sent +$((p1 - p0)) frames, the socket received $got${TD:+, the device ($TD) delivered +$((d1 - d0)) through the RX data ring}"
	python3 "$XDP_PKT" cmp "$VMX_TMP/xsk.sent" "$VMX_TMP/xsk.out" || return 1
	[ $rc = 0 ] || return 1
	[ "$red" = $N ] || { echo "want rxN_xdp_redirect +$N"; return 1; }
	# what the peer and the socket saw: the peer sent our N frames (give
	# or take 2 control frames), the socket got all N
	[ $((p1 - p0)) -ge $N ] && [ $((p1 - p0)) -le $((N + 2)) ] ||
		{ echo "the peer's tx_packets +$((p1 - p0)), want $N (+2)"; return 1; }
	[ "$got" = $N ] || { echo "the socket received $got of $N"; return 1; }
	# zero-copy: the driver copies into the UMEM what the device put in
	# the data ring (ours, give or take 2 IPv6 control frames); copy mode:
	# the driver copies nothing
	if [ "$1" = zc ]; then
		[ "$cop" -le "$dr" ] && [ "$cop" -ge $((dr - 2)) ] ||
			{ echo "rxN_xsk_copied +$cop, want the data ring's +$dr"; return 1; }
		# the device's side: the frames copied are the ones the device
		# put in the data ring (ours, give or take 2 control frames)
		if [ -n "$TD" ]; then
			[ "$cop" -le $((d1 - d0)) ] && [ "$cop" -ge $((d1 - d0 - 2)) ] ||
				{ echo "rxN_xsk_copied +$cop, want the device's stat-rx-data-ring +$((d1 - d0))"; return 1; }
		fi
	else
		[ "$cop" = 0 ] || { echo "copy mode: want rxN_xsk_copied +0"; return 1; }
	fi
}

# xsk_tx_check MODE WAKEUP: N frames from the socket (queue 0) to the peer.
xsk_tx_check() {
	local rc s0=$VMX_TMP/s0 s1=$VMX_TMP/s1 x
	tx_frames $N "$VMX_TMP/tx.frames" || return 1
	peer_cap_start $N || return 1
	snap "$DUT" >"$s0"
	"$XSK" -m "$1" -w "$2" "$DUT" 0 tx <"$VMX_TMP/tx.frames" 2>&1
	rc=$?
	[ $rc != 2 ] || kill "$PEER_CAP_PID"
	peer_cap_end
	snap "$DUT" >"$s1"
	x=$(sdelta "$s0" "$s1" "$C_XSK_XMIT")
	echo "xdptxN_xsk_xmit +$x"
	[ $rc = 0 ] || return 1
	python3 "$XDP_PKT" cmp "$VMX_TMP/tx.frames" "$VMX_TMP/peer.got" || return 1
	if [ "$1" = zc ]; then
		[ "$x" = $N ] || { echo "want xdptxN_xsk_xmit +$N"; return 1; }
	else
		[ "$x" = 0 ] || { echo "copy mode sends through the stack's queue, want xdptxN_xsk_xmit +0"; return 1; }
	fi
}

# xsk_fwd_check MODE WAKEUP: the peer sends N frames, gets each back with
# the MACs swapped (xdp_pkt.py bounce ... swap).
xsk_fwd_check() {
	local rc s0=$VMX_TMP/s0 s1=$VMX_TMP/s1 red x
	rss_to 0 || return 1
	xsk_start -m "$1" -w "$2" -n $N "$DUT" 0 fwd || return 1
	want_mode "$1" || { kill "$XSK_PID"; xsk_end; return 1; }
	snap "$DUT" >"$s0"
	peer_bounce $XDP_PORT_XSK $N swap
	rc=$?
	xsk_end || rc=1
	snap "$DUT" >"$s1"
	red=$(sdelta "$s0" "$s1" "$C_REDIRECT")
	x=$(sdelta "$s0" "$s1" "$C_XSK_XMIT")
	echo "rxN_xdp_redirect +$red, xdptxN_xsk_xmit +$x"
	[ $rc = 0 ] || return 1
	[ "$red" = $N ] || { echo "want rxN_xdp_redirect +$N"; return 1; }
	[ "$1" = copy ] || [ "$x" = $N ] || { echo "want xdptxN_xsk_xmit +$N"; return 1; }
}

# ping_while_bound: a zero-copy socket on queue 0, a ping to the DUT (not
# redirected: XDP_PASS out of a zero-copy queue) gets its replies.
ping_while_bound() {
	local rc
	rss_to 0 || return 1
	xsk_start -m zc "$DUT" 0 rx || return 1
	peer_ping -c 10 -i 0.1 "$DUT_IP"
	rc=$?
	xsk_alive || { echo "the socket went away"; rc=1; }
	kill "$XSK_PID"
	xsk_end || rc=1
	return $rc
}

xdp_attach "$DUT" xdp_redirect_xsk || bail "cannot attach xdp_redirect_xsk" attach
check "xdp_redirect_xsk attached natively" xdp_native "$DUT" xdp_redirect_xsk

# ------------------------------------------------ copy mode (baseline)
check "copy mode RX: $N frames on queue 0, bytes exact" xsk_rx_check copy on
check "copy mode TX: $N frames reach the peer, bytes exact" xsk_tx_check copy on
check "copy mode l2fwd: $N frames back at the peer, MACs swapped" xsk_fwd_check copy off

# ------------------------------------------------ zero-copy
zc_advertised() {
	local out
	out=$(python3 "$VMX_LIB_DIR/nldev.py" "$(cat "/sys/class/net/$DUT/ifindex")") ||
		{ echo "$out"; return 1; }
	echo "$out"
	grep -q "^xdp-features .*xsk-zerocopy" <<<"$out"
}
if python3 "$VMX_LIB_DIR/nldev.py" "$(cat "/sys/class/net/$DUT/ifindex")" >/dev/null 2>&1; then
	check "xdp-features include xsk-zerocopy" zc_advertised
else
	skip "xdp-features include xsk-zerocopy" "no netdev netlink dev-get in kernel $(uname -r) (6.3+)"
fi
check "zero-copy RX, need_wakeup on: $N frames on queue 0, bytes exact" xsk_rx_check zc on
check "zero-copy RX, need_wakeup off: $N frames on queue 0, bytes exact" xsk_rx_check zc off
ZC_RX_IRQS=$XSK_IRQS
check "ping (XDP_PASS on the zero-copy queue) while the socket is bound" ping_while_bound
check "zero-copy TX: $N frames reach the peer, bytes exact, xdptxN_xsk_xmit" xsk_tx_check zc on
check "zero-copy l2fwd, need_wakeup on: $N frames back, MACs swapped" xsk_fwd_check zc on
check "zero-copy l2fwd, need_wakeup off: $N frames back, MACs swapped" xsk_fwd_check zc off

# ------------------------------------------------ busy polling
# Evidence that busy polling drove the RX, with need_wakeup off (so
# recvfrom never kicks the driver through ndo_xsk_wakeup: only busy
# polling can run the NAPI from the socket):
#  - the interrupts of queue 0's vector. Without busy polling
#    (napi_defer_hard_irqs 0) every frame the peer sends (xdp_pkt.py: 2 ms
#    apart) raises its own interrupt, so that run (the need_wakeup off
#    check above) counts about N; checked too (at least N/2), else the
#    comparison would prove nothing. With busy polling the interrupt stays
#    masked while the socket's recvfrom calls come more often than
#    xsk_tool's flush timeout (2 ms, twice: a TCG guest's vCPUs take
#    turns). A frame before the first busy poll, or a gap in the polls,
#    may still interrupt: at most N/4 is allowed, far below N and above
#    that noise. Without SO_PREFER_BUSY_POLL this counts about N again;
#  - BusyPollRxPackets (/proc/net/netstat: frames the NAPI handled inside
#    a busy poll; no other socket busy-polls here) grows by at least N/8.
#    The deferral settings alone (no busy-poll socket options, the timer's
#    polls picking up the frames) also keep the interrupt count low, but
#    leave this at 0. How many frames the timer's polls take instead of
#    the busy polls varies (TCG: 5 to 7 of 24 on 6.12, 14 or 15 on 6.1).
busy_pkts() { snmp_field TcpExt BusyPollRxPackets </proc/net/netstat; }
BUSY_BUDGET=64
busy_rx_check() {
	local base rc=0 d g f bp0 bp
	base=$ZC_RX_IRQS
	if [ -z "$base" ]; then
		echo "(no count from the zero-copy RX check: that run once more)"
		xsk_rx_check zc off || return 1
		base=$XSK_IRQS
	fi
	echo "without busy poll: interrupts on $(q0_vector) +$base for $N frames"
	bp0=$(busy_pkts)
	xsk_rx_check zc off $BUSY_BUDGET
	rc=$?
	bp=$(($(busy_pkts) - bp0))
	grep -q "^xsk: ready (zero-copy, need_wakeup off, busy poll on (budget $BUSY_BUDGET))" \
		"$VMX_TMP/xsk.err" || { echo "the ready line does not say busy poll"; rc=1; }
	# back to the defaults whatever the tool did (it puts back what it found)
	for f in napi_defer_hard_irqs gro_flush_timeout; do
		echo 0 >"/sys/class/net/$DUT/$f"
	done
	d=$(cat "/sys/class/net/$DUT/napi_defer_hard_irqs")
	g=$(cat "/sys/class/net/$DUT/gro_flush_timeout")
	echo "after: napi_defer_hard_irqs $d, gro_flush_timeout $g"
	[ $rc = 0 ] || return 1
	[ -n "$XSK_IRQS" ] || return 1
	echo "busy poll: interrupts on $(q0_vector) +$XSK_IRQS for $N frames (without: +$base), BusyPollRxPackets +$bp"
	[ "$base" -ge $((N / 2)) ] ||
		{ echo "without busy poll only +$base interrupts for $N frames: no baseline to compare with"; return 1; }
	[ "$XSK_IRQS" -le $((N / 4)) ] ||
		{ echo "want at most $((N / 4)) interrupts with busy poll: interrupts drove the RX"; return 1; }
	[ "$bp" -ge $((N / 8)) ] ||
		{ echo "want BusyPollRxPackets +$((N / 8)) or more: the frames did not come through busy polls"; return 1; }
	[ "$d" = 0 ] && [ "$g" = 0 ]
}
check "zero-copy RX with busy polling (budget $BUSY_BUDGET, need_wakeup off): $N frames on queue 0, bytes exact, queue 0's interrupt at most N/4 (about N without), BusyPollRxPackets at least N/8" busy_rx_check

# ------------------------------------------------ queue <-> NAPI (netlink)
IFINDEX=$(cat "/sys/class/net/$DUT/ifindex")
# irq_of NAME: the IRQ number of the vector NAME in /proc/interrupts.
irq_of() { awk -v n="$1" '$NF == n { sub(":", "", $1); print $1 }' /proc/interrupts; }
napi_map() {
	local out napis rc=0 t q id i nrx ntx irq want msix f
	out=$(python3 "$VMX_LIB_DIR/nldev.py" queues "$IFINDEX") || { echo "$out"; return 1; }
	napis=$(python3 "$VMX_LIB_DIR/nldev.py" napis "$IFINDEX") || { echo "$napis"; return 1; }
	echo "$out"
	echo "$napis"
	declare -A nid
	while read -r _ t q _ id; do nid[$t$q]=$id; done <<<"$out"
	nrx=$(find "/sys/class/net/$DUT/queues" -maxdepth 1 -name 'rx-*' | wc -l)
	ntx=$(find "/sys/class/net/$DUT/queues" -maxdepth 1 -name 'tx-*' | wc -l)
	msix=" "
	for f in "/sys/class/net/$DUT/device/msi_irqs"/*; do
		[ -e "$f" ] && msix+="${f##*/} "
	done
	for t in rx tx; do
		i=$nrx
		[ $t = rx ] || i=$ntx
		for ((q = 0; q < i; q++)); do
			id=${nid[$t$q]:-}
			[ -n "$id" ] || { echo "$t queue $q missing in queue-get"; rc=1; continue; }
			[ "$id" != 0 ] || { echo "$t queue $q has no napi-id"; rc=1; continue; }
			grep -q "^napi $id " <<<"$napis" || { echo "$t queue $q: napi $id not in napi-get"; rc=1; }
		done
	done
	for ((q = 0; q < nrx && q < ntx; q++)); do
		[ "${nid[rx$q]:-}" = "${nid[tx$q]:-}" ] ||
			{ echo "rx $q napi ${nid[rx$q]:-} != tx $q napi ${nid[tx$q]:-}"; rc=1; }
		# channel q's NAPI has the IRQ of vector DUT-rxtx-q (or DUT's one)
		read -r _ id _ irq _ < <(grep "^napi ${nid[rx$q]:-x} " <<<"$napis")
		[ -n "${irq:-}" ] || continue
		if [ "$irq" = - ]; then
			echo "napi $id: no irq reported"
			rc=1
			continue
		fi
		want=$(irq_of "$DUT-rxtx-$q")
		[ -n "$want" ] || want=$(irq_of "$DUT")
		[ "$irq" = "$want" ] || { echo "napi $id irq $irq, vector of channel $q is irq ${want:-none}"; rc=1; }
		[[ "$msix" == *" $irq "* ]] || { echo "napi $id irq $irq not one of the device's MSI-X vectors:$msix"; rc=1; }
		echo "channel $q: rx/tx napi $id, irq $irq (vector $(awk -v i="$irq:" '$1 == i { print $NF }' /proc/interrupts)), MSI-X irqs:$msix"
	done
	[ "$(grep -c '^napi ' <<<"$napis")" -ge "$nrx" ] || { echo "fewer NAPIs than RX queues"; rc=1; }
	Q0_NAPI=${nid[rx0]:-}
	return $rc
}
xsk_napi_id() {
	[ -n "$Q0_NAPI" ] || { echo "no napi-id of rx queue 0"; return 1; }
	if [ -z "$XSK_NAPI_ID" ]; then
		xsk_rx_check zc on >/dev/null || { echo "zero-copy RX failed"; return 1; }
	fi
	echo "socket SO_INCOMING_NAPI_ID $XSK_NAPI_ID, rx queue 0 napi-id $Q0_NAPI"
	[ "$XSK_NAPI_ID" = "$Q0_NAPI" ]
}
Q0_NAPI=
if python3 "$VMX_LIB_DIR/nldev.py" queues "$IFINDEX" >/dev/null 2>&1 &&
   python3 "$VMX_LIB_DIR/nldev.py" napis "$IFINDEX" >/dev/null 2>&1; then
	check "netdev queue-get/napi-get: every RX/TX queue has a NAPI, RX i and TX i share channel i's, each with its MSI-X vector's IRQ" napi_map
	check "zero-copy socket's SO_INCOMING_NAPI_ID is rx queue 0's napi-id" xsk_napi_id
else
	why="no netdev netlink queue-get/napi-get in kernel $(uname -r) (6.8+)"
	skip "netdev queue-get/napi-get: every RX/TX queue has a NAPI, RX i and TX i share channel i's, each with its MSI-X vector's IRQ" "$why"
	skip "zero-copy socket's SO_INCOMING_NAPI_ID is rx queue 0's napi-id" "$why"
fi

rss_to 1
check "ping works after the zero-copy sockets closed" ping_ok

# ------------------------------------------------ pool add/remove under traffic
# A ping flood (not redirected) while a zero-copy socket on queue 0 is
# bound and closed 5 times. vmxnet3 has no per-queue restart: each bind and
# each close quiesces the whole device for a few ms (QUIESCE .. ACTIVATE),
# and a frame arriving then is dropped by the device, which the test device
# counts (stat-rx-inactive, patch 0014). With steering (the test device
# with RSS: the flood on queue 1) the driver must lose nothing of its own:
# every frame the device delivered on queue 1 ran through XDP there
# (rx1_xdp_packets = the device's stat-rx-queue1), and every unanswered
# request is one the device dropped while inactive (or the last one, in
# flight at the end). Interrupts are moderated meanwhile (rx-usecs 10000:
# the device holds a queue's interrupt up to 10 ms), so that frames the
# device completed are often still waiting for their interrupt when a
# restart quiesces it: a driver that frees its rings without taking them
# in loses them. Without steering (stock QEMU: every frame on queue 0, the
# queue being reconfigured) the flood must go on after each close.
peer_icmp() { pexec cat /proc/net/snmp | snmp_field Icmp "$1"; }
churn() {
	local i flood=$VMX_TMP/flood.out rc=0 nic='' q0 q1 in0 in1 r1 dq di
	local e0 a0 re0 sent ans rep
	rss_to 1 || return 1
	# the peer's ICMP counters count a late reply too (ping's own summary
	# does not: it exits at SIGINT with requests in flight)
	e0=$(peer_icmp OutEchos); a0=$(peer_icmp InEchoReps)
	re0=$(snmp_field Icmp OutEchoReps </proc/net/snmp)
	if [ $STEER = 1 ]; then
		nic=$(testdev_nic_of "$DUT") || return 1
		ethtool -C "$DUT" adaptive-rx off rx-usecs 10000 || return 1
		q0=$(testdev_stat "$nic" rx-queue1) || return 1
		in0=$(testdev_stat "$nic" rx-inactive) || return 1
	fi
	snap "$DUT" >"$VMX_TMP/c0"
	# not pexec: SIGINT must reach ping itself, not a subshell
	ip netns exec "$PEER_NS" ping -i 0.005 -W 2 -w 600 "$DUT_IP" >"$flood" 2>&1 &
	local fpid=$!
	_vmx_bg+=("$fpid")
	sleep 1
	for i in 1 2 3 4 5; do
		xsk_start -m zc "$DUT" 0 rx || { rc=1; break; }
		want_mode zc || rc=1
		sleep 0.5
		kill "$XSK_PID"
		xsk_end >/dev/null
		echo "bind/close $i done"
		# the flood goes on after each close
		local r0
		# shellcheck disable=SC2034 # read by the eval'd condition
		r0=$(grep -c 'bytes from' "$flood")
		wait_for 10 eval '[ "$(grep -c "bytes from" "$flood")" -gt "$r0" ]' ||
			{ echo "no echo reply for 10 s after close $i"; rc=1; }
	done
	sleep 1
	kill -INT "$fpid"
	wait "$fpid"
	tail -n 2 "$flood"
	snap "$DUT" >"$VMX_TMP/c1"
	# where the requests came in: the echo requests (98 bytes) fit one
	# RX data ring entry where the device has the ring
	echo "RX data ring frames meanwhile: queue 0 +$(sdelta "$VMX_TMP/c0" "$VMX_TMP/c1" rx0_data_ring)," \
		"queue 1 +$(sdelta "$VMX_TMP/c0" "$VMX_TMP/c1" rx1_data_ring)"
	[ $STEER = 0 ] || ethtool -x "$DUT" | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) q[$i]++ }
		END { for (k in q) printf "RSS table: %d entries to queue %s\n", q[k], k }'
	sleep 1
	sent=$(($(peer_icmp OutEchos) - e0))
	ans=$(($(peer_icmp InEchoReps) - a0))
	rep=$(($(snmp_field Icmp OutEchoReps </proc/net/snmp) - re0))
	echo "flood: the peer sent $sent echo requests, got $ans replies; the DUT sent $rep replies"
	[ "$sent" -gt 100 ] || { echo "want a flood of more than 100 requests"; rc=1; }
	if [ $STEER = 1 ]; then
		ethtool -C "$DUT" rx-usecs 0 adaptive-rx on >/dev/null
		q1=$(testdev_stat "$nic" rx-queue1) || return 1
		in1=$(testdev_stat "$nic" rx-inactive) || return 1
		dq=$((q1 - q0))
		di=$((in1 - in0))
		r1=$(sdelta "$VMX_TMP/c0" "$VMX_TMP/c1" rx1_xdp_packets)
		echo "queue 1: the device delivered $dq frames, the driver ran XDP on $r1;" \
			"the device dropped $di while quiesced for the 10 restarts"
		[ "$r1" = "$dq" ] || { echo "the driver lost $((dq - r1)) frames the device had delivered on queue 1"; rc=1; }
		[ $((sent - ans)) -le "$di" ] ||
			{ echo "$((sent - ans)) requests unanswered, more than the $di the device dropped"; rc=1; }
	fi
	ping_ok || rc=1
	return $rc
}
if [ $STEER = 1 ]; then
	check "zero-copy pool on queue 0 added/removed 5 times under a ping flood on queue 1: the driver loses nothing there (only what the device drops while quiesced)" churn
else
	check "zero-copy pool on queue 0 added/removed 5 times: the ping flood resumes each time (stock QEMU: one queue, losses not counted)" churn
fi

# ------------------------------------------------ refusals
# kmsg_mark: a mark in the kernel log; kmsg_since: the lines after it.
KMARK=
kmsg_mark() { KMARK="xdp_xsk: mark $$ $RANDOM"; echo "$KMARK" >/dev/kmsg; }
kmsg_since() { dmesg | awk -v m="$KMARK" 'f { print } index($0, m) { f = 1 }'; }
# zc_msg: the driver's line that a chunk is too small came since the mark.
zc_msg() {
	local l
	l=$(kmsg_since | grep "AF_XDP zero-copy" | grep "too small")
	[ -n "$l" ] || { echo "no 'AF_XDP zero-copy ... too small' line in the kernel log"; return 1; }
	echo "kernel: $l"
}

# 2048-byte chunks (1792 bytes for the frame after XDP_PACKET_HEADROOM)
# cannot hold a frame of MTU 3000. Newer kernels (Debian's 6.12.95 among
# them) refuse that in the core before asking the driver (xp_assign_dev:
# MTU + 26 above the frame size rounded down to 128 bytes), silently; the
# driver refuses (and says so) what is smaller than MTU + 18. MTU 1770
# tells them apart: the core refuses it (1796 > 1792), the driver takes it.
# zc_bind_at MTU: a zero-copy bind of 2048-byte chunks at MTU, stderr of
# xsk_tool in $VMX_TMP/xsk.err (the socket is closed at once).
zc_bind_at() {
	ip link set "$DUT" mtu "$1" || return 1
	kmsg_mark
	"$XSK" -m zc -f 2048 -t 0 "$DUT" 0 rx >/dev/null 2>"$VMX_TMP/xsk.err"
	echo "MTU $1, 2048-byte chunks: xsk_tool exit status $?: $(grep -v '^xsk: received' "$VMX_TMP/xsk.err")"
}
small_chunk_bind() {
	local rc=0 core=0
	zc_bind_at 1770 || return 1
	grep -q "bind (zc): Invalid argument" "$VMX_TMP/xsk.err" && core=1
	zc_bind_at 3000 || return 1
	grep -q "bind (zc): Invalid argument" "$VMX_TMP/xsk.err" || { echo "want EINVAL"; rc=1; }
	if [ $core = 1 ]; then
		echo "(the kernel core refuses both before the driver sees them: no driver message)"
	else
		zc_msg || rc=1
	fi
	ip link set "$DUT" mtu 1500
	wait_carrier "$DUT" 10 >/dev/null
	return $rc
}
check "zero-copy bind with 2048-byte chunks at MTU 3000 refused (EINVAL; the driver's message where the kernel core leaves it to the driver)" small_chunk_bind

mtu_raise_bound() {
	local rc=0 mtu
	ip link set "$DUT" mtu 1500 || return 1
	xsk_start -m zc -f 2048 -t 120 "$DUT" 0 rx || return 1
	kmsg_mark
	if ip link set "$DUT" mtu 3000; then
		echo "ip link set mtu 3000 succeeded"
		rc=1
	fi
	mtu=$(cat "/sys/class/net/$DUT/mtu")
	echo "MTU now $mtu"
	[ "$mtu" = 1500 ] || rc=1
	zc_msg || rc=1
	xsk_alive || { echo "the socket went away"; rc=1; }
	kill "$XSK_PID"
	xsk_end >/dev/null
	ip link set "$DUT" mtu 1500
	wait_carrier "$DUT" 10 >/dev/null
	return $rc
}
check "MTU 3000 refused while a zero-copy pool of 2048-byte chunks is bound (kernel message)" mtu_raise_bound

# The kernel core refuses a queue id at or above the queue count.
beyond_queues() {
	local q rc=0 m
	q=$(dut_queues)
	for m in copy zc; do
		"$XSK" -m "$m" -t 1 "$DUT" "$q" rx >/dev/null 2>"$VMX_TMP/xsk.err"
		echo "queue $q, $m: xsk_tool exit status $?: $(cat "$VMX_TMP/xsk.err")"
		grep -q "bind ($m): Invalid argument" "$VMX_TMP/xsk.err" || { echo "want EINVAL"; rc=1; }
	done
	return $rc
}
check "bind to queue $(dut_queues) (beyond the $(dut_queues) queues) refused (EINVAL), copy and zero-copy" beyond_queues
check "ping works after the refusals" ping_ok
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

# ------------------------------------------------ rmmod with a socket open
rmmod_open() {
	local rc=0
	rss_to 0 || return 1
	xsk_start -m zc -t 300 "$DUT" 0 rx || return 1
	kmsg_mark
	dut_unload timeout 120 || { echo "rmmod $(dut_module) failed"; return 1; }
	echo "rmmod $(dut_module) done with the socket open"
	wait_for 20 eval '! xsk_alive' || { echo "the socket did not notice the device going"; kill "$XSK_PID"; rc=1; }
	xsk_end
	grep -q "socket error: Network is down" "$VMX_TMP/xsk.err" ||
		{ echo "want ENETDOWN on the socket"; rc=1; }
	if kmsg_since | grep -E "$VMX_DMESG_BAD"; then
		echo "kernel warning on rmmod"
		rc=1
	fi
	return $rc
}
reload() {
	dut_up_driver || return 1
	dut_addr_setup || return 1
	echo "vmx loaded again: DUT=$DUT"
	ping_ok
}
check "rmmod vmx with a zero-copy socket open: ENETDOWN on the socket, no kernel warning" rmmod_open
check "vmx loads again and carries traffic" reload

check_pp_settled "no page_pool left holding pages"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean
log "runtime ${SECONDS}s"
vmx_done
