#!/usr/bin/env bash
# tdev_malformed.sh - completions a device should never write, and a frame
# whose completions straddle two polls, from the test device's one-shot
# faults (tools/testdev patch 0023, armed with qom-set nicN fault KIND):
#  - rx-short-sop: a frame's ring-0 head holds only short-sop-len bytes
#    (0..13: no Ethernet header; the rest in ring 1): dropped and counted
#    in rx_length_errors on the stack path, under a multi-buffer XDP_PASS
#    program, and (head of 0 bytes) under an XDP_TX program, which must
#    never post a 0-length buffer (the device reads 16 KiB: kernel memory
#    on the wire; the test device counts it as a tx-oversize violation);
#  - rx-zero-data-ring: an RX data ring completion of length 0 under an
#    XDP_TX program: the same;
#  - rx-split: a multi-buffer frame's first completions, an interrupt, and
#    the rest split-delay-ms later (or at QUIESCE: a device finishes the
#    frame it is writing before it stops). An XDP program swapped for one
#    without frags support (a pointer swap, no restart) or detached (its
#    restart's drain pass polls the queue) in that gap: the frame must
#    never reach the new program or a NULL one; it is dropped (rxN_drop).
#    With LRO on and type-4 completions forced (lro-force-mss), an
#    aggregate completed across two polls keeps its MSS (rxN_lro_pkts).
#    On the debug kernel, also a detach whose allocations fail (failslab
#    aimed at vmx): no restart, the rest comes later, still dropped.
# After each: the device saw the fault (stat-fault-KIND), traffic flows,
# no oops. A wrong driver crashes the guest (BUG in __skb_pull, a NULL
# program run) or leaves a strict violation, which the suite counts.
#
# Topology: test-device vmx NICs and the virtio peer on the hub (group
# tdevx; revision 3+ for the data ring). SKIPs on QEMU's stock vmxnet3.
# vmx-timeout: 300
# vmx-expects-log: keeping the XDP buffer layout
# vmx-expects-log: cannot allocate or DMA-map the rings even at [0-9]+/[0-9]+ RX buffers \(-[0-9]+\): out of memory or of DMA mapping space \(bounce buffers\?\)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
NIC=$(testdev_nic_of "$DUT" 2>/dev/null)
if [ -z "$NIC" ] || ! testdev_stat "$NIC" fault-rx-short-sop >/dev/null 2>&1; then
	skip "malformed completions" "$DUT is not the test device with patch 0023 (vm.sh --nic vmxnet3t, group tdevx)"
	vmx_done
fi
REV=$(dut_revision)
log "$DUT: test device $NIC, revision $REV"

runts() { stat_of "$DUT" rx_length_errors; }
drops() { estat "$DUT" 'rx[0-9]+_drop'; }
frags() { estat "$DUT" 'rx[0-9]+_xdp_frags'; }
faults() { testdev_stat "$NIC" "stat-fault-$1"; }
traffic_ok() { peer_ping -c 1 -W 1 "$DUT_IP" >/dev/null && dut_ping -c 1 -W 1 "$PEER_IP" >/dev/null; }
no_oops() {
	local o
	o=$(kernel_oopsed) || return 0
	printf '%s\n' "$o"
	return 1
}
setp() { testdev_set "$NIC" "$1" "$2" >/dev/null; }

# malformed KIND SIZE [PROG SEC]: with PROG attached (none: the stack
# path), arm KIND and send one ping of SIZE bytes from the peer; the
# device must inject it, vmx count one runt more and drop it (no echo
# reply to that ping), then traffic flows as before.
malformed() {
	local k=$1 size=$2 f0 f1 r0 r1 rc=0
	if [ -n "${3:-}" ]; then
		xdp_attach "$DUT" "$3" "$4" || return 1
	fi
	f0=$(faults "$k") && r0=$(runts) || return 1
	setp fault "$k" || return 1
	peer_ping -c 1 -W 1 -s "$size" "$DUT_IP" >/dev/null 2>&1 &&
		{ echo "the ping whose frame was malformed got its reply"; rc=1; }
	sleep 0.2
	f1=$(faults "$k") && r1=$(runts) || return 1
	echo "$k (${3:-no program}): device stat-fault-$k +$((f1 - f0)), rx_length_errors +$((r1 - r0))"
	[ $((f1 - f0)) = 1 ] || { echo "the device did not inject it"; rc=1; }
	[ $((r1 - r0)) = 1 ] || { echo "expected one runt counted"; rc=1; }
	if [ -n "${3:-}" ]; then
		xdp_detach "$DUT" || rc=1
	fi
	no_oops || rc=1
	wait_for 10 traffic_ok || { echo "no traffic after it"; rc=1; }
	return $rc
}

# The ring-0 path needs frames larger than an RX data ring entry.
setp short-sop-len 6
check "short head (6 bytes), stack path: a runt, dropped" malformed rx-short-sop 1000
check "short head (6 bytes), multi-buffer XDP_PASS: a runt, dropped" \
	malformed rx-short-sop 1000 xdp_frags xdp.frags
setp short-sop-len 0
check "zero-length head, multi-buffer XDP_TX: a runt, nothing posted" \
	malformed rx-short-sop 1000 xdp_tx_any_mb xdp.frags
if [ "${REV:-1}" -ge 3 ]; then
	check "zero-length RX data ring completion, XDP_TX: a runt, nothing posted" \
		malformed rx-zero-data-ring 20 xdp_tx_any xdp
else
	skip "zero-length RX data ring completion" "revision $REV has no RX data ring"
fi
setp short-sop-len 6
check "zero-length data ring and short heads: no tx-oversize violation" \
	eval '[ "$(testdev_stat "$NIC" violation-tx-oversize)" = 0 ]'

# split_swap: a frags program gets a frame whose head (64 bytes, a valid
# one) ends one poll and whose rest comes 10 s later; in between the
# program is replaced by one without frags support. The frame must be
# dropped, never run through the new program as a multi-buffer frame. The
# replace must end inside the gap (timed from the device's split, not
# assumed: a debug kernel takes seconds to load a program), else nothing
# was tested and the check fails saying so.
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
_frame_ended() { [ $(( $(drops) - $1 + $(frags) - $2 )) -ge 1 ]; }
split_swap() {
	local f0 f1 d0 d1 x0 x1 ts tr gap=10000 rc=0
	xdp_attach "$DUT" xdp_frags xdp.frags || return 1
	setp short-sop-len 64 && setp split-delay-ms $gap || return 1
	f0=$(faults rx-split) && d0=$(drops) && x0=$(frags) || return 1
	setp fault rx-short-sop && setp fault rx-split || return 1
	peer_ping -c 1 -W 1 -s 1000 "$DUT_IP" >/dev/null 2>&1 &
	wait_for 10 above "$f0" faults rx-split || { echo "the device did not split a frame"; return 1; }
	ts=$(now_ms)
	xdp_replace "$DUT" xdp_pass xdp || rc=1
	tr=$(( $(now_ms) - ts ))
	echo "program replaced $tr ms after the split (the rest comes after $gap ms)"
	[ $tr -lt $((gap - 1000)) ] || { echo "the replace did not end inside the gap: nothing tested"; rc=1; }
	wait_for 20 _frame_ended "$d0" "$x0" || echo "the split frame never ended"
	f1=$(faults rx-split) && d1=$(drops) && x1=$(frags) || return 1
	echo "rx-split +$((f1 - f0)); rxN_drop +$((d1 - d0)); rxN_xdp_frags +$((x1 - x0))"
	[ $((f1 - f0)) = 1 ] || { echo "the device did not split one frame"; rc=1; }
	[ $((x1 - x0)) = 0 ] || { echo "a multi-buffer frame ran through a program without frags support"; rc=1; }
	[ $((d1 - d0)) -ge 1 ] || { echo "the open frame was not dropped"; rc=1; }
	xdp_detach "$DUT" || rc=1
	setp short-sop-len 6
	no_oops || rc=1
	wait_for 10 traffic_ok || { echo "no traffic after it"; rc=1; }
	return $rc
}
check "frame split across polls, frags program swapped for one without: dropped" split_swap

# xsk_small_buffers: a zero-copy AF_XDP socket on channel 1 with 2048-byte
# chunks (1792-byte buffers, smaller than the other channels' ring-0
# buffers) behind xdp_redirect_xsk, and every flow steered to channel 1:
# the ring buffer sizes vmx announces (SET_RING_BUFFER_SIZE, rev 7+) must
# hold for every buffer the device takes (strict rx-buf-size stays 0).
# The pings reach the program (rx1_xdp_packets) and pass to the stack.
XSK=$XDP_PROGS/xsk_tool
xsk_small_buffers() {
	local v0 v1 x0 x1 pid rc=0
	xdp_attach "$DUT" xdp_redirect_xsk || return 1
	v0=$(testdev_stat "$NIC" violation-rx-buf-size) || return 1
	"$XSK" -m zc -f 2048 -t 30 "$DUT" 1 rx >"$VMX_TMP/xsk.out" 2>"$VMX_TMP/xsk.err" &
	pid=$!
	_vmx_bg+=("$pid")
	xsk_ready_wait "$pid" "$VMX_TMP/xsk.err" ||
		{ cat "$VMX_TMP/xsk.err"; kill "$pid" 2>/dev/null; xdp_detach "$DUT"; return 1; }
	grep "^xsk: ready" "$VMX_TMP/xsk.err"
	xsk_ready_mode "$VMX_TMP/xsk.err" zc || rc=1
	x0=$(estat "$DUT" rx1_xdp_packets)
	ethtool -X "$DUT" weight 0 1 || rc=1
	peer_ping -c 5 -i 0.2 -s 1000 "$DUT_IP" >/dev/null 2>&1
	x1=$(estat "$DUT" rx1_xdp_packets)
	v1=$(testdev_stat "$NIC" violation-rx-buf-size) || rc=1
	ethtool -X "$DUT" default || rc=1
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	xdp_detach "$DUT" || rc=1
	echo "strict rx-buf-size +$((v1 - v0)); rx1_xdp_packets +$((x1 - x0))"
	[ $((x1 - x0)) -ge 5 ] || { echo "the pings did not reach queue 1"; rc=1; }
	[ $((v1 - v0)) = 0 ] || { echo "a buffer smaller than the size vmx announced"; rc=1; }
	return $rc
}
if [ "${REV:-1}" -ge 7 ] && [ "$(combined_channels "$DUT")" -ge 2 ] &&
   [ "$(testdev_prop "$NIC" rss)" = on ]; then
	check "zero-copy AF_XDP on channel 1 with small buffers: announced sizes hold" xsk_small_buffers
else
	skip "zero-copy AF_XDP on channel 1 with small buffers" "needs revision 7+, 2 channels and RSS (group tdevx)"
fi

# split_detach: as above at MTU 9000 with a frame that spans ring 0 and 1
# by itself; the program is detached in the gap. The detach's restart
# quiesces the device, which writes the rest then, and its drain pass
# polls the queue with no program. The frame is dropped, no oops.
split_detach() {
	local f0 f1 d0 d1 rc=0
	set_mtu_both 9000 || return 1
	xdp_attach "$DUT" xdp_frags xdp.frags || return 1
	setp split-delay-ms 20000 || return 1
	f0=$(faults rx-split) && d0=$(drops) || return 1
	setp fault rx-split || return 1
	peer_ping -c 1 -W 1 -s 8000 "$DUT_IP" >/dev/null 2>&1 &
	sleep 0.5
	xdp_detach "$DUT" || rc=1
	sleep 0.5
	f1=$(faults rx-split) && d1=$(drops) || return 1
	echo "rx-split +$((f1 - f0)); rxN_drop +$((d1 - d0))"
	[ $((f1 - f0)) = 1 ] || { echo "the device did not split a frame"; rc=1; }
	[ $((d1 - d0)) -ge 1 ] || { echo "the open frame was not dropped"; rc=1; }
	no_oops || rc=1
	wait_for 10 traffic_ok || { echo "no traffic after it"; rc=1; }
	return $rc
}
check "frame split across polls, program detached in between: dropped, no NULL program run" split_detach

# split_detach_nomem (a kernel with fault injection, the debug kernel:
# group tdevdebug): the same with every slab allocation made from vmx's
# code refused while the program is detached. The stack's buffer layout
# cannot be built, so the XDP one stays ("keeping the XDP buffer layout")
# and nothing restarts: the device writes the rest of the frame after the
# split delay, and the next poll, with no program at all, must drop it.
split_detach_nomem() {
	local f0 f1 d0 d1 t0 t1 r rc=0
	set_mtu_both 9000 || return 1
	xdp_attach "$DUT" xdp_frags xdp.frags || return 1
	VMX_FAULT_VERBOSE=0 fi_arm "" || return 1
	setp split-delay-ms 5000 || return 1
	f0=$(faults rx-split) && d0=$(drops) || return 1
	setp fault rx-split || return 1
	peer_ping -c 1 -W 1 -s 8000 "$DUT_IP" >/dev/null 2>&1 &
	wait_for 2 eval '[ "$(faults rx-split)" -gt "$f0" ]' ||
		{ echo "the device did not split a frame"; return 1; }
	t0=$(date +%s%N)
	fi_on failslab
	xdp_detach "$DUT"
	r=$?
	fi_off
	t1=$(date +%s%N)
	echo "detach with vmx's slab allocations refused: exit $r, $(((t1 - t0) / 1000000)) ms;" \
		"$(dmesg_since_start | grep -c 'keeping the XDP buffer layout') 'keeping the XDP buffer layout'"
	[ "$r" = 0 ] || { echo "the detach failed: it cannot"; rc=1; }
	[ $(((t1 - t0) / 1000000)) -lt 4000 ] ||
		{ echo "the detach outlasted the 5 s gap: nothing was tested"; rc=1; }
	dmesg_since_start | grep -q 'keeping the XDP buffer layout' ||
		{ echo "no allocation was refused: nothing was tested"; rc=1; }
	wait_for 10 eval '[ "$(drops)" -gt "$d0" ]'
	f1=$(faults rx-split) && d1=$(drops) || return 1
	echo "rx-split +$((f1 - f0)); rxN_drop +$((d1 - d0))"
	[ $((d1 - d0)) -ge 1 ] || { echo "the open frame was not dropped"; rc=1; }
	no_oops || rc=1
	wait_for 10 traffic_ok || { echo "no traffic after it"; rc=1; }
	return $rc
}
if have_fi >/dev/null 2>&1; then
	trap 'fi_off 2>/dev/null; _vmx_on_exit' EXIT
	check "frame split across polls, detach with allocations refused: dropped, no program run" split_detach_nomem
else
	log "no fault injection on kernel $(uname -r): the detach with allocations refused runs on the debug kernel (group tdevdebug)"
fi

# split_lro: LRO on, every frame of 128 bytes or more a type-4 completion
# with MSS 1000; one 8000-byte TCP segment (raw socket in the peer) is
# split across two polls: it must still be an aggregate with that MSS
# (rxN_lro_pkts +1; without the MSS vmx would take the MTU's and see none).
split_lro() {
	local f0 f1 l0 l1 rc=0
	ethtool -K "$DUT" lro on >/dev/null 2>&1
	ethtool -k "$DUT" | grep -q '^large-receive-offload: on' ||
		{ echo "LRO cannot be turned on"; return 1; }
	setp lro-force-mss 1000 && setp split-delay-ms 500 || return 1
	f0=$(faults rx-split) && l0=$(estat "$DUT" 'rx[0-9]+_lro_pkts') || return 1
	setp fault rx-split || return 1
	pexec python3 - "$PEER_IP" "$DUT_IP" <<'EOF' || rc=1
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
src, dst = socket.inet_aton(sys.argv[1]), socket.inet_aton(sys.argv[2])
pay = bytes(j & 0xFF for j in range(8000))
tcp = struct.pack("!HHIIBBHHH", 40001, 5414, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(pay), 0,
                 0x4000, 64, socket.IPPROTO_TCP, 0, src, dst)
s.sendto(ip + tcp + pay, (sys.argv[2], 0))
EOF
	sleep 1.5
	f1=$(faults rx-split) && l1=$(estat "$DUT" 'rx[0-9]+_lro_pkts') || return 1
	setp lro-force-mss 0
	echo "rx-split +$((f1 - f0)); rxN_lro_pkts +$((l1 - l0))"
	[ $((f1 - f0)) = 1 ] || { echo "the device did not split a frame"; rc=1; }
	[ $((l1 - l0)) = 1 ] || { echo "the split aggregate lost its MSS"; rc=1; }
	no_oops || rc=1
	return $rc
}
check "LRO aggregate split across polls keeps its MSS" split_lro
set_mtu_both 1500 >/dev/null
check "traffic after everything" wait_for 10 traffic_ok
vmx_done
