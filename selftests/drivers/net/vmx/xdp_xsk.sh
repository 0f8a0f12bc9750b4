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
#  - TX descriptors the device cannot send (length 0, where the kernel
#    lets them through: 6.1): completed in the order sent, counted
#    (xdptxN_xsk_invalid), never sent, the frames around them sent
#    byte-exact; SKIPs where the kernel refuses them (6.12);
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
#  - where the device steers (the test device with RSS over 2 queues):
#    zero-copy on queue 1 (l2fwd with every flow there: in and out
#    counted on queue 1 by the driver and the device, nothing on queue 0
#    or its socket); two zero-copy sockets at once, on queues 0 and 1,
#    each receiving its own Toeplitz-predicted flow byte-exact with
#    per-queue counts equal to the peer's and the device's (l2fwd on
#    both at once only with VMX_XSK_TWO_FWD=1, see there); a socket on
#    queue 0 bound and closed twice while queue 1's takes a stream: the
#    driver loses nothing on queue 1. QEMU's stock vmxnet3 puts every
#    frame on queue 0: there these SKIP;
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
# The channels: the device's XDP TX queue Q is its TX queue NCH + Q.
NCH=$(combined_channels "$DUT")

# rss_to 0|1: every flow to queue 0 or 1 (only where the device steers).
rss_to() {
	[ $STEER = 1 ] || return 0
	if [ "$1" = 0 ]; then rss_all_to_queue0 "$DUT"
	else ethtool -X "$DUT" weight 0 1; fi
}

# xsk_start ARGS...: xsk_tool ARGS in the background (XSK_PID), output in
# $XSK_F.{out,err} (default $VMX_TMP/xsk); returns once it is ready, fails
# (showing its stderr) when it exits first. xsk_end: wait for it, show its
# stderr, return its exit status.
XSK_PID=
XSK_F=$VMX_TMP/xsk
xsk_alive() { kill -0 "$XSK_PID" 2>/dev/null; }
xsk_start() {
	"$XSK" "$@" >"$XSK_F.out" 2>"$XSK_F.err" &
	XSK_PID=$!
	_vmx_bg+=("$XSK_PID")
	if ! xsk_ready_wait "$XSK_PID" "$XSK_F.err"; then
		kill "$XSK_PID" 2>/dev/null
		wait "$XSK_PID"
		echo "xsk_tool $* exit status $?:"
		cat "$XSK_F.err"
		return 1
	fi
	grep "^xsk: ready" "$XSK_F.err"
}
xsk_end() {
	local rc
	wait "$XSK_PID"
	rc=$?
	grep -v "^xsk: ready" "$XSK_F.err"
	return $rc
}

# want_mode copy|zc: the socket xsk_start reported is bound in that mode.
want_mode() { xsk_ready_mode "$XSK_F.err" "$1"; }

# Sockets on several queues at once: xskq_start Q ARGS... is xsk_start
# ARGS for the socket of queue Q (files $VMX_TMP/xsk.qQ.{out,err}, pid
# XSKQ[Q]) and wants it in zero-copy mode; xskq_end Q waits for it as
# xsk_end; xskq_stop Q ends it (SIGTERM) first; xskq_stop_all ends every
# one left; xskq_got Q: the frames it received (after its end).
declare -A XSKQ=()
xskq_start() {
	local qn=$1 rc
	shift
	XSK_F=$VMX_TMP/xsk.q$qn
	xsk_start "$@" && want_mode zc
	rc=$?
	XSKQ[$qn]=$XSK_PID
	XSK_F=$VMX_TMP/xsk
	[ $rc = 0 ] || xskq_stop "$qn" >/dev/null
	return $rc
}
xskq_end() {
	local rc
	[ -n "${XSKQ[$1]:-}" ] || return 1
	XSK_F=$VMX_TMP/xsk.q$1 XSK_PID=${XSKQ[$1]}
	echo "queue $1's socket:"
	xsk_end
	rc=$?
	unset "XSKQ[$1]"
	XSK_F=$VMX_TMP/xsk
	return $rc
}
xskq_stop() { kill "${XSKQ[$1]:-}" 2>/dev/null; xskq_end "$1"; }
xskq_stop_all() {
	local q
	for q in "${!XSKQ[@]}"; do
		xskq_stop "$q" >/dev/null
	done
}
xskq_got() { grep -c . "$VMX_TMP/xsk.q$1.out"; }

# ------------------------------------------------ peer capture
# peer_cap_start N [SECS]: the peer's own AF_PACKET socket collects the
# test frames (xdp_pkt.py's magic at the start of the UDP payload) that
# reach it, until N came or SECS (default 20) passed, as "<len> <hex>"
# lines in $VMX_TMP/peer.got; peer_cap_end waits for it.
PEER_CAP_PID=
peer_cap_start() {
	rm -f "$VMX_TMP/peer.got" "$VMX_TMP/peer.err"
	ip netns exec "$PEER_NS" python3 - "$VMX_LIB_DIR" "$PEER" "$1" "$VMX_TMP/peer.got" "${2:-20}" 2>"$VMX_TMP/peer.err" <<'EOF' &
import sys, time
sys.path.insert(0, sys.argv[1])
import xdp_pkt
s = xdp_pkt.open_sock(sys.argv[2])
s.settimeout(0.1)
want, out, got = int(sys.argv[3]), open(sys.argv[4], "w"), 0
print("listening", file=sys.stderr, flush=True)
end = time.time() + float(sys.argv[5])
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
# big_ring_rx: with 4096 slots ring 0 takes every chunk the socket posts
# (xsk_tool's fill ring holds 2048), so the pool has none to spare when a
# frame comes through the RX data ring: it goes into the buffer of the
# ring 0 slot the device passed over. A driver that copies it into a
# second buffer from the pool drops it before XDP, as it did for a moment
# after every restart (the new rings take the pool before the old ones
# give theirs back).
big_ring_rx() {
	local rx0 rc=0
	rx0=$(ring_size "$DUT" RX)
	ethtool -G "$DUT" rx 4096 && wait_carrier "$DUT" 10 || return 1
	xsk_rx_check zc on || rc=1
	ethtool -G "$DUT" rx "$rx0" && wait_carrier "$DUT" 10 || rc=1
	return $rc
}
check "zero-copy RX with ring 0 (4096) larger than the socket's fill ring (2048): $N frames on queue 0, the data ring's too, bytes exact" big_ring_rx
check "ping (XDP_PASS on the zero-copy queue) while the socket is bound" ping_while_bound
check "zero-copy TX: $N frames reach the peer, bytes exact, xdptxN_xsk_xmit" xsk_tx_check zc on
check "zero-copy l2fwd, need_wakeup on: $N frames back, MACs swapped" xsk_fwd_check zc on
check "zero-copy l2fwd, need_wakeup off: $N frames back, MACs swapped" xsk_fwd_check zc off

# ------------------------------------------------ descriptors the device cannot send
# A TX descriptor of length 0 (16 KiB to the device: its length field
# has 14 bits) or of 16 KiB and more must be completed in its place in
# the order, counted (xdptxN_xsk_invalid) and never sent. Only the kernel
# lets one through: 6.1 takes a length of 0; 6.12 refuses it, and any
# length beyond the chunk, which is at most PAGE_SIZE (no UMEM of larger
# chunks, huge pages or not). The socket sends a zero-length descriptor
# first (nothing in flight: the driver completes it at once), then the N
# test frames with one more after the first of them and one after the
# last (each completed with the frame before it). Wanted: every
# descriptor completed, in the order sent (the completion ring's
# addresses, xsk_tool -o), the zero-length ones counted exactly, the
# peer given the N frames byte-exact and nothing else (its capture waits
# for N + 3), xdptxN_xsk_xmit +N and, on the test device, its XDP TX
# queue 0 sending N frames. Where the kernel refused them (xsk_tool:
# "refused by the kernel N") the check SKIPs: nothing can reach the
# driver's path.
C_XSK_BAD='xdptx[0-9]+_xsk_invalid'    # AF_XDP descriptors completed unsent
SKIP_NB=3
SKIP_WHY=

# td_q0_snap: the test device's counters of queue 0 as snap lines
# (td_rx0, td_xdptx0: testdev_queue_snap); nothing without the test device.
td_q0_snap() { [ -z "$TD" ] || testdev_queue_snap "$TD" 1 "$NCH" 1; }

# xsk_skip_check: the above; sets SKIP_WHY (and passes) when the kernel
# refused the zero-length descriptors.
xsk_skip_check() {
	local rc s0=$VMX_TMP/s0 s1=$VMX_TMP/s1 f=$VMX_TMP/skip hex bad x inv td='' order ref
	tx_frames $N "$VMX_TMP/tx.frames" || return 1
	# the zero-length descriptor's chunk holds the first test frame (sent
	# as 16 KiB, it would reach the peer's capture)
	read -r _ hex <"$VMX_TMP/tx.frames"
	bad="0 $hex"
	{ echo "$bad"; sed -n 1p "$VMX_TMP/tx.frames"; echo "$bad"
	  sed 1d "$VMX_TMP/tx.frames"; echo "$bad"; } >"$f.frames"
	peer_cap_start $((N + SKIP_NB)) 15 || return 1
	{ snap "$DUT" && td_q0_snap; } >"$s0" || return 1
	"$XSK" -m zc -o "$DUT" 0 tx <"$f.frames" >"$f.err" 2>&1
	rc=$?
	cat "$f.err"
	[ $rc != 2 ] || kill "$PEER_CAP_PID"
	peer_cap_end
	{ snap "$DUT" && td_q0_snap; } >"$s1" || return 1
	x=$(sdelta "$s0" "$s1" "$C_XSK_XMIT")
	inv=$(sdelta "$s0" "$s1" "$C_XSK_BAD")
	[ -z "$TD" ] || td=$(sdelta "$s0" "$s1" td_xdptx0)
	echo "xdptxN_xsk_xmit +$x, xdptxN_xsk_invalid +$inv${TD:+, the device sent from XDP TX queue 0 +$td}"
	xsk_ready_mode "$f.err" zc || return 1
	ref=$(sed -n 's/^xsk: sent .*, refused by the kernel \([0-9]*\)$/\1/p' "$f.err")
	if [ "$ref" = $SKIP_NB ] && [ "$inv" = 0 ]; then
		SKIP_WHY="kernel $(kernel_release) refuses zero-length AF_XDP TX descriptors (tx_invalid_descs +$ref) and any beyond the chunk (PAGE_SIZE at most): none reaches the driver"
		return 0
	fi
	[ $rc = 0 ] || { echo "want every descriptor completed (xsk_tool exit status $rc)"; return 1; }
	order=$(sed -n 's/^xsk: completion order: //p' "$f.err")
	[ "$order" = "$(seq -s ' ' 0 $((N + SKIP_NB - 1)))" ] ||
		{ echo "want the completions in the order sent: 0 to $((N + SKIP_NB - 1))"; return 1; }
	python3 "$XDP_PKT" cmp "$VMX_TMP/tx.frames" "$VMX_TMP/peer.got" || return 1
	[ "$inv" = $SKIP_NB ] || { echo "want xdptxN_xsk_invalid +$SKIP_NB"; return 1; }
	[ "$x" = $N ] || { echo "want xdptxN_xsk_xmit +$N"; return 1; }
	[ -z "$TD" ] || [ "$td" = $N ] || { echo "want the device's XDP TX queue 0 to send $N"; return 1; }
}

SKIP_CHECK="zero-copy TX: $SKIP_NB zero-length descriptors among $N frames completed in order, counted in xdptxN_xsk_invalid, never sent; the peer gets the $N byte-exact"
# Whether the kernel lets the descriptors through is known only once
# they are sent: the check's verdict (ok, not ok or SKIP) after its run.
xsk_skip_check >"$VMX_TMP/skip.out" 2>&1
rc=$?
diag <"$VMX_TMP/skip.out"
if [ -n "$SKIP_WHY" ]; then skip "$SKIP_CHECK" "$SKIP_WHY"
elif [ $rc = 0 ]; then ok "$SKIP_CHECK"
else fail "$SKIP_CHECK" "exit status $rc: xsk_skip_check"; fi

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

# ------------------------------------------------ queue 1, two sockets at once
# Where the device steers (the test device with RSS over 2 queues):
# zero-copy on queue 1, and on queues 0 and 1 at once. The oracles are
# the frames the peer sent (xdp_pkt.py's, saved), what came back to it
# byte for byte, and the device's own counters: stat-rx-queueQ (frames
# delivered on RX queue Q), stat-tx-queue(NCH+Q) (frames sent from XDP TX
# queue Q: the device's TX queues after the NCH stack queues) and
# stat-rx-inactive (frames dropped while the device was quiesced). Each
# socket must get its queue's frames and no other's, zero-copy, and send
# from its own channel's XDP TX queue: what a socket on queue 0 alone
# cannot tell (a driver that wires a pool to queue 0's rings only, or
# sends every socket's TX ring from XDP TX queue 0, passes the checks
# above). QEMU's stock vmxnet3 delivers every frame to queue 0, so there
# nothing reaches queue 1 and these checks SKIP.

# td_snap: the device's counters these checks read, as snap lines
# (td_rxQ, td_xdptxQ for queues 0 and 1, td_rx_inactive); qsnap FILE:
# the driver's counters (snap) and the device's, into FILE.
td_snap() {
	local v
	testdev_queue_snap "$TD" 2 "$NCH" 2 || return 1
	v=$(testdev_stat "$TD" rx-inactive) || return 1
	echo "td_rx_inactive $v"
}
qsnap() { { snap "$DUT"; td_snap; } >"$1"; }

# qshow S0 S1: per queue, what the driver and the device counted between
# two qsnaps.
qshow() {
	local q
	for q in 0 1; do
		echo "queue $q: the device delivered +$(sdelta "$1" "$2" "td_rx$q")," \
			"rx${q}_xdp_packets +$(sdelta "$1" "$2" "rx${q}_xdp_packets")," \
			"rx${q}_xdp_redirect +$(sdelta "$1" "$2" "rx${q}_xdp_redirect")," \
			"rx${q}_data_ring +$(sdelta "$1" "$2" "rx${q}_data_ring")," \
			"rx${q}_xsk_copied +$(sdelta "$1" "$2" "rx${q}_xsk_copied")," \
			"rx${q}_drop +$(sdelta "$1" "$2" "rx${q}_drop");" \
			"xdptx${q}_xsk_xmit +$(sdelta "$1" "$2" "xdptx${q}_xsk_xmit")," \
			"the device sent from XDP TX queue $q +$(sdelta "$1" "$2" "td_xdptx$q")"
	done
	echo "the device's drops: no RX buffer +$(sdelta "$1" "$2" dev_rx_nobuf)," \
		"while quiesced +$(sdelta "$1" "$2" td_rx_inactive)"
}

# q_zc_ok S0 S1 Q: queue Q was zero-copy between the qsnaps: the driver
# copied into UMEM buffers (rxQ_xsk_copied) the frames of the queue's RX
# data ring (rxQ_data_ring) and no others, as xsk_rx_check wants on queue
# 0. A queue left on page_pool pages copies nothing itself: the kernel
# then copies each frame into the socket, which still receives it.
q_zc_ok() {
	local c dr
	c=$(sdelta "$1" "$2" "rx$3_xsk_copied")
	dr=$(sdelta "$1" "$2" "rx$3_data_ring")
	[ "$c" -le "$dr" ] && [ "$c" -ge $((dr - 2)) ] ||
		{ echo "queue $3: rx$3_xsk_copied +$c, want its RX data ring's +$dr (-2): not zero-copy"; return 1; }
}
# q_rx_ok S0 S1 Q WANT: queue Q took WANT test frames between the qsnaps,
# zero-copy: the driver redirected exactly WANT from queue Q (only the
# test frames are redirected), the device delivered WANT there, give or
# take 2 control frames (ARP, IPv6 neighbour discovery: the stack's, not
# redirected), and q_zc_ok.
q_rx_ok() {
	local r d
	r=$(sdelta "$1" "$2" "rx$3_xdp_redirect")
	d=$(sdelta "$1" "$2" "td_rx$3")
	[ "$r" = "$4" ] || { echo "queue $3: rx$3_xdp_redirect +$r, want +$4"; return 1; }
	[ "$d" -ge "$4" ] && [ "$d" -le $(($4 + 2)) ] ||
		{ echo "queue $3: the device delivered +$d, want +$4 (+2)"; return 1; }
	q_zc_ok "$@"
}
# q_tx_ok S0 S1 Q WANT: XDP TX queue Q sent exactly WANT frames between
# the qsnaps, counted by the driver and by the device (only the sockets
# use the XDP TX queues here: the program has no XDP_TX, no redirect to a
# device).
q_tx_ok() {
	local x d
	x=$(sdelta "$1" "$2" "xdptx$3_xsk_xmit")
	d=$(sdelta "$1" "$2" "td_xdptx$3")
	[ "$x" = "$4" ] && [ "$d" = "$4" ] ||
		{ echo "XDP TX queue $3: xdptx$3_xsk_xmit +$x, the device sent +$d; want +$4"; return 1; }
}

# frames_in SENT GOT [all]: every frame of GOT ("<len> <hex>" lines, as
# xsk_tool prints and xdp_pkt.py saves them) is one of SENT, byte for
# byte, and came once; with "all" also every frame of SENT is in GOT.
# (xdp_pkt.py cmp wants all of them; this also takes a part, and needs
# no Python start.)
frames_in() {
	local s g extra dup miss
	LC_ALL=C sort "$1" >"$1.sorted"
	LC_ALL=C sort "$2" >"$2.sorted"
	s=$(grep -c . "$1.sorted")
	g=$(grep -c . "$2.sorted")
	extra=$(LC_ALL=C comm -13 "$1.sorted" "$2.sorted" | grep -c .)
	dup=$(uniq -d "$2.sorted" | grep -c .)
	miss=$(LC_ALL=C comm -23 "$1.sorted" "$2.sorted" | grep -c .)
	echo "sent $s frames, received $g: $extra not among those sent byte for byte, $dup more than once, $miss not received"
	[ "$g" -gt 0 ] && [ "$extra" = 0 ] && [ "$dup" = 0 ] &&
		{ [ "${3:-}" != all ] || [ "$miss" = 0 ]; }
}

# rss_flows: a source address of the peer for each of queues 0 and 1
# (FLOW_SRC[Q]): the device's RSS puts the peer's UDP frames from there to
# DUT_IP on queue Q, as predicted here from the indirection table spread
# over the NCH queues (ethtool -X equal), UDP over IPv4 hashed on the
# addresses alone (rx-flow-hash udp4 without L4 bytes, the default),
# Toeplitz (lib/testdev.sh) with the key ethtool -x reports, and the
# table entry at hash % table size (ethtool_ctl.sh proves the device uses
# that key and table). The frames never reach a stack: any address does.
FLOW_SRC=()
rss_flows() {
	local out key h q a b ip o1 o2 o3 o4
	local -a tbl cand
	ethtool -X "$DUT" equal "$NCH" || return 1
	! ethtool -n "$DUT" rx-flow-hash udp4 | grep -q "L4 bytes" ||
		{ echo "UDP over IPv4 hashed with its ports: one flow per frame"; return 1; }
	out=$(ethtool -x "$DUT") || return 1
	key=$(awk 'k { print; exit } /^RSS hash key:/ { k = 1 }' <<<"$out")
	read -r -a tbl <<<"$(awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) printf "%s ", $i }' <<<"$out")"
	[ ${#tbl[@]} -gt 0 ] && [ -n "$key" ] || { echo "no key or table in ethtool -x:"; echo "$out"; return 1; }
	# The queue is the hash's lowest bit (table entry h % size, entries
	# alternating): over the last octet's .2-.60 that bit follows 6 key
	# bits, all zero for one random key in 64 (one boot's key did that).
	# Then the peer's address with each bit of its second and third
	# octets flipped: 16 more key bits.
	cand=()
	for a in {2..60}; do cand+=("${PEER_IP%.*}.$a"); done
	IFS=. read -r o1 o2 o3 o4 <<<"$PEER_IP"
	for b in {0..7}; do cand+=("$o1.$o2.$((o3 ^ (1 << b))).$o4" "$o1.$((o2 ^ (1 << b))).$o3.$o4"); done
	FLOW_SRC=()
	for ip in "${cand[@]}"; do
		# shellcheck disable=SC2086 # the address bytes are words
		h=$(toeplitz "$key" "$(printf '%02x' ${ip//./ } ${DUT_IP//./ })") || return 1
		q=${tbl[h % ${#tbl[@]}]}
		[ -n "${FLOW_SRC[q]:-}" ] || FLOW_SRC[q]=$ip
		[ -n "${FLOW_SRC[0]:-}" ] && [ -n "${FLOW_SRC[1]:-}" ] && break
	done
	[ -n "${FLOW_SRC[0]:-}" ] && [ -n "${FLOW_SRC[1]:-}" ] ||
		{ echo "no source address for each queue among ${#cand[@]} (${PEER_IP%.*}.2-60, $PEER_IP's second and third octets a bit flipped each)"; return 1; }
	echo "predicted: the flow from ${FLOW_SRC[0]} on queue 0, from ${FLOW_SRC[1]} on queue 1 (key ${key:0:11}.., ${#tbl[@]} table entries)"
}

# with_sockets FN: FN, then every socket of xskq_start it left is ended.
with_sockets() {
	local rc
	"$@"
	rc=$?
	xskq_stop_all
	return $rc
}

# q1_fwd: every flow to queue 1, a zero-copy socket on queue 0 (rx) and
# one on queue 1 (l2fwd); the peer sends N frames and gets each back once,
# exact but for the swapped MACs (so queue 1's socket got them byte for
# byte and sent them so). Queue 1 counts them in and out (driver and
# device), queue 0 nothing, its socket receives nothing.
q1_fwd() {
	local rc=0 s0=$VMX_TMP/qs0 s1=$VMX_TMP/qs1 p0 p1 g0
	rss_to 1 || return 1
	xskq_start 0 -m zc -t 60 "$DUT" 0 rx || return 1
	xskq_start 1 -m zc -n $N "$DUT" 1 fwd || return 1
	qsnap "$s0" || return 1
	p0=$(peer_tx)
	peer_bounce $XDP_PORT_XSK $N swap || rc=1
	xskq_end 1 || rc=1
	xskq_stop 0 || rc=1
	qsnap "$s1" || return 1
	p1=$(peer_tx)
	g0=$(xskq_got 0)
	qshow "$s0" "$s1"
	echo "the peer sent +$((p1 - p0)) frames; queue 0's socket received $g0"
	[ $((p1 - p0)) -ge $N ] && [ $((p1 - p0)) -le $((N + 2)) ] ||
		{ echo "want the peer's tx_packets +$N (+2)"; rc=1; }
	[ "$g0" = 0 ] || { echo "queue 0's socket received frames"; rc=1; }
	q_rx_ok "$s0" "$s1" 1 $N || rc=1
	q_rx_ok "$s0" "$s1" 0 0 || rc=1
	q_tx_ok "$s0" "$s1" 1 $N || rc=1
	q_tx_ok "$s0" "$s1" 0 0 || rc=1
	return $rc
}

# both_flows FN: FN Q run for queues 0 and 1 at the same time, each from
# its flow's source address (PEER_IP=FLOW_SRC[Q]); then each one's output,
# and both queues' sockets ended (xskq_end). Fails if either failed.
both_flows() {
	local q rc=0
	local -a pids=()
	for q in 0 1; do
		PEER_IP=${FLOW_SRC[q]} "$1" $q >"$VMX_TMP/flow$q.log" 2>&1 &
		pids+=($!)
	done
	for q in 0 1; do
		echo "the flow from ${FLOW_SRC[q]} (queue $q):"
		wait "${pids[q]}" || { echo "  its peer side failed"; rc=1; }
		cat "$VMX_TMP/flow$q.log"
	done
	for q in 0 1; do
		xskq_end $q || rc=1
	done
	return $rc
}

# two_rx: zero-copy sockets on queues 0 and 1 at once, the peer sending
# N frames on each one's flow (rss_flows) at the same time: each socket
# gets exactly its flow's frames, byte for byte; per queue the driver
# redirected N and the device delivered N; the peer sent 2N.
two_rx() {
	local rc=0 s0=$VMX_TMP/qs0 s1=$VMX_TMP/qs1 p0 p1 q
	rss_flows || return 1
	xskq_start 0 -m zc -n $N "$DUT" 0 rx || return 1
	xskq_start 1 -m zc -n $N "$DUT" 1 rx || return 1
	qsnap "$s0" || return 1
	p0=$(peer_tx)
	_send_q() { peer_send $XDP_PORT_XSK $N "$VMX_TMP/flow$1.sent"; }
	both_flows _send_q || rc=1
	qsnap "$s1" || return 1
	p1=$(peer_tx)
	qshow "$s0" "$s1"
	echo "the peer sent +$((p1 - p0)) frames"
	[ $((p1 - p0)) -ge $((2 * N)) ] && [ $((p1 - p0)) -le $((2 * N + 2)) ] ||
		{ echo "want the peer's tx_packets +$((2 * N)) (+2)"; rc=1; }
	for q in 0 1; do
		echo "queue $q's socket, the flow from ${FLOW_SRC[q]}:"
		frames_in "$VMX_TMP/flow$q.sent" "$VMX_TMP/xsk.q$q.out" all || rc=1
		q_rx_ok "$s0" "$s1" $q $N || rc=1
	done
	return $rc
}

# two_fwd: l2fwd on zero-copy sockets on queues 0 and 1 at once, the
# peer bouncing N frames on each one's flow at the same time: every frame
# back once, exact but for the swapped MACs; per queue the driver and the
# device count N in and N out through that queue's XDP TX queue.
two_fwd() {
	local rc=0 s0=$VMX_TMP/qs0 s1=$VMX_TMP/qs1 q
	rss_flows || return 1
	for q in 0 1; do
		xskq_start $q -m zc -n $N "$DUT" $q fwd || return 1
	done
	qsnap "$s0" || return 1
	_bounce_q() { peer_bounce $XDP_PORT_XSK $N swap; }
	both_flows _bounce_q || rc=1
	qsnap "$s1" || return 1
	qshow "$s0" "$s1"
	for q in 0 1; do
		q_rx_ok "$s0" "$s1" $q $N || rc=1
		q_tx_ok "$s0" "$s1" $q $N || rc=1
	done
	return $rc
}

# peer_stream OUT STOP: the peer sends xdp_pkt.py's frames (sizes cycling,
# to XDP_PORT_XSK) 2 ms apart until file STOP exists (at most 30000),
# each written to OUT ("<len> <hex>") as it is sent; "streamed N frames"
# on stderr at the end.
peer_stream() {
	pexec env PEER_IP="$PEER_IP" python3 - "$VMX_LIB_DIR" "$PEER" "$(mac_of "$DUT")" \
		"$DUT_IP" $XDP_PORT_XSK "$1" "$2" <<'EOF'
import os, sys, time
sys.path.insert(0, sys.argv[1])
import xdp_pkt as x
ifname, dstip, port, out, stop = sys.argv[2], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7]
dst = x.mac_bytes(sys.argv[3])
src = x.mac_bytes(open("/sys/class/net/%s/address" % ifname).read().strip())
run = os.urandom(4)
s = x.open_sock(ifname)
n = 0
with open(out, "w") as f:
    while n < 30000 and not os.path.exists(stop):
        fr = x.build(dst, src, dstip, port, x.SIZES[n % len(x.SIZES)], run, n)
        s.send(fr)
        f.write("%d %s\n" % (len(fr), fr.hex()))
        n += 1
        time.sleep(0.002)
print("streamed %d frames" % n, file=sys.stderr)
EOF
}

# keep_receiving: every flow to queue 1, a zero-copy socket there takes
# a stream of the peer's frames while a zero-copy socket on queue 0 is
# bound and closed twice. Each bind and close rebuilds the whole queue
# set (vmxnet3 has no per-queue restart), queue 1's rings and its pool's
# buffers included, and the device drops what arrives while it is
# quiesced (stat-rx-inactive). Interrupts are moderated (rx-usecs 10000)
# so that frames the device completed are often still waiting when a
# restart quiesces it. The stream must reach queue 1's socket after each
# bind and each close; at the end every frame the device delivered on
# queue 1 went through XDP there, every frame the driver redirected
# reached the socket, byte for byte and once, every frame of the stream
# the socket did not get is one the device dropped while quiesced, and
# queue 1 stayed zero-copy (q_zc_ok) through the restarts.
_q1_redirected_above() { [ "$(estat "$DUT" rx1_xdp_redirect)" -gt "$1" ]; }
# _q1_caught_up S0: since qsnap S0 the driver ran XDP on queue 1 at least
# as often as the device delivered there (its NAPI may run on the other
# vCPU a moment after the device's interrupt)
_q1_caught_up() {
	local d x
	d=$(testdev_stat "$TD" rx-queue1) || return 1
	x=$(estat "$DUT" rx1_xdp_packets)
	[ $((x - $(awk '$1 == "rx1_xdp_packets" { print $2 }' "$1"))) -ge \
	  $((d - $(awk '$1 == "td_rx1" { print $2 }' "$1"))) ]
}
_q1_socket_has() { [ "$(wc -l <"$VMX_TMP/xsk.q1.out")" -ge "$1" ]; }
keep_receiving() {
	local rc=0 s0=$VMX_TMP/ks0 s1=$VMX_TMP/ks1 i r spid
	local stop=$VMX_TMP/stream.stop sent=$VMX_TMP/stream.sent sn gn rn dq dx di
	rss_to 1 || return 1
	ethtool -C "$DUT" adaptive-rx off rx-usecs 10000 || return 1
	xskq_start 1 -m zc -t 120 "$DUT" 1 rx || return 1
	qsnap "$s0" || return 1
	rm -f "$stop"
	peer_stream "$sent" "$stop" 2>"$VMX_TMP/stream.err" &
	spid=$!
	_vmx_bg+=("$spid")
	r=$(estat "$DUT" rx1_xdp_redirect)
	wait_for 20 _q1_redirected_above "$r" || { echo "the stream did not reach queue 1's socket"; rc=1; }
	for i in 1 2; do
		[ $rc = 0 ] || break
		xskq_start 0 -m zc -t 60 "$DUT" 0 rx || { rc=1; break; }
		r=$(estat "$DUT" rx1_xdp_redirect)
		wait_for 10 _q1_redirected_above "$r" ||
			{ echo "queue 1's socket got nothing for 10 s after bind $i on queue 0"; rc=1; }
		xskq_stop 0 >/dev/null
		r=$(estat "$DUT" rx1_xdp_redirect)
		wait_for 10 _q1_redirected_above "$r" ||
			{ echo "queue 1's socket got nothing for 10 s after close $i on queue 0"; rc=1; }
		echo "bind/close $i on queue 0 done, the stream goes on on queue 1"
	done
	touch "$stop"
	wait "$spid" || { echo "the peer's stream failed"; rc=1; }
	cat "$VMX_TMP/stream.err"
	# (the comparison polls the live counters: a control frame between
	# two reads of one snapshot cannot fail it)
	if ! wait_for 10 _q1_caught_up "$s0"; then
		echo "after 10 s the driver has run XDP on fewer frames of queue 1 than the device delivered there: it lost some"
		rc=1
		# stuck or lost? One more frame on queue 1 (every flow goes
		# there; the socket takes the ping): a completion still in the
		# ring is taken with it (its interrupt never came), one that went
		# with a restart's old rings is not
		ip netns exec "$PEER_NS" ping -c 1 -W 1 "$DUT_IP" >/dev/null 2>&1
		if wait_for 5 _q1_caught_up "$s0"; then
			echo "  one frame later the driver caught up: a completion waited in the ring for an interrupt that never came"
		else
			echo "  still short one frame later: a completion the device wrote was lost (a restart's old rings?)"
		fi
	fi
	# the socket has taken what the driver redirected to it (its lines
	# are written per batch) before it is stopped
	rn=$(($(estat "$DUT" rx1_xdp_redirect) - $(awk '$1 == "rx1_xdp_redirect" { print $2 }' "$s0")))
	wait_for 10 _q1_socket_has "$rn" ||
		{ echo "after 10 s queue 1's socket has $(wc -l <"$VMX_TMP/xsk.q1.out") of the $rn frames the driver redirected to it"; rc=1; }
	xskq_stop 1 || rc=1
	ethtool -C "$DUT" rx-usecs 0 adaptive-rx on >/dev/null
	qsnap "$s1" || return 1
	qshow "$s0" "$s1"
	sn=$(grep -c . "$sent")
	gn=$(xskq_got 1)
	rn=$(sdelta "$s0" "$s1" rx1_xdp_redirect)
	dq=$(sdelta "$s0" "$s1" td_rx1)
	dx=$(sdelta "$s0" "$s1" rx1_xdp_packets)
	di=$(sdelta "$s0" "$s1" td_rx_inactive)
	echo "stream: the peer sent $sn, queue 1's socket received $gn; the device dropped $di while quiesced for the 4 restarts;" \
		"on queue 1 the device delivered +$dq, the driver ran XDP on +$dx"
	frames_in "$sent" "$VMX_TMP/xsk.q1.out" || rc=1
	[ "$gn" = "$rn" ] ||
		{ echo "the driver redirected $rn frames to queue 1's socket, the socket received $gn"; rc=1; }
	[ $((sn - gn)) -le "$di" ] ||
		{ echo "$((sn - gn)) frames of the stream lost, more than the $di the device dropped while quiesced"; rc=1; }
	q_zc_ok "$s0" "$s1" 1 || rc=1
	return $rc
}

TWO_FWD_CHECK="two zero-copy sockets at once, l2fwd on both: every frame back at the peer once, MACs swapped, each sent from its own queue's XDP TX queue"
Q1_CHECKS=(
	"zero-copy on queue 1 (every flow there): l2fwd frames back at the peer byte-exact, counted in and out on queue 1 by the driver and the device, none on queue 0 or its socket"
	"two zero-copy sockets at once, on queues 0 and 1 (Toeplitz-predicted flows): each gets its own flow byte-exact, per-queue counts equal the peer's and the device's"
	"zero-copy socket on queue 0 bound and closed twice while queue 1's socket takes a stream: the driver loses nothing on queue 1 (only what the device drops while quiesced)"
)
if [ $STEER = 1 ] && [ -n "$TD" ]; then
	t0=$SECONDS
	check "${Q1_CHECKS[0]}" with_sockets q1_fwd
	check "${Q1_CHECKS[1]}" with_sockets two_rx
	# l2fwd on both at once lost the first frame of one flow in one of
	# two runs (the device never delivered it on its queue; not
	# understood yet): only on request until it is
	if [ "${VMX_XSK_TWO_FWD:-0}" = 1 ]; then
		check "$TWO_FWD_CHECK" with_sockets two_fwd
	else
		log "not run: $TWO_FWD_CHECK (VMX_XSK_TWO_FWD=1 runs it)"
	fi
	check "${Q1_CHECKS[2]}" with_sockets keep_receiving
	rss_to 1
	log "queue 1 and two sockets: $((SECONDS - t0))s"
else
	if [ -z "$TD" ]; then
		why="QEMU's stock vmxnet3 has no RSS: every frame arrives on RX queue 0, nothing can reach a socket on queue 1"
	else
		why="$TD: rss=$(testdev_prop "$TD" rss), $(dut_queues) queues: no flow can be steered to queue 1"
	fi
	for c in "${Q1_CHECKS[@]}"; do
		skip "$c" "$why"
	done
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
