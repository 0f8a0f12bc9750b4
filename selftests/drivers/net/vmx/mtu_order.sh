#!/usr/bin/env bash
# mtu_order.sh - an MTU increase reaches the device before any frame sized
# for it: the stack must not see the new MTU while the
# device still runs with the old one.
#
# The device learns the MTU from the shared area when vmx_up() activates
# it (ACTIVATE_DEV); from vmx_down() to the end of vmx_up() the TX queues
# are stopped. A sender on the DUT offers a frame sized for MTU 9000 to the
# stack over and over (an AF_PACKET socket: the kernel refuses it with
# EMSGSIZE while the device MTU is below it, and reads the MTU afresh for
# every send), so it reaches the qdisc the moment the stack sees the new
# MTU: a driver that sets nd->mtu before it quiesces the device lets such
# a frame reach its ndo_start_xmit while the device still has the old MTU.
# (A TCP stream, which this test used before, is no such sender: each
# lower leaves a path-MTU exception and retransmit backoff behind, and on
# a loaded host whole rounds went by without one large frame.)
# Observed with ftrace, in one trace buffer on the global clock (the
# per-CPU clocks of two vCPUs may disagree by more than the microseconds
# between vmx_up() on one CPU and the frames it releases on the other):
#   - a kprobe on vmx_up() (every caller calls it out of line; vmx_cmd()
#     itself is inlined into vmx_up, so no probe there sees ACTIVATE_DEV),
#   - the net:net_dev_start_xmit tracepoint for the DUT, filtered to frames
#     sized beyond the old MTU (gso_size > 1460, or a non-GSO frame longer
#     than 1514 bytes),
#   - net:net_dev_queue for the same frames, which tells when the stack
#     accepted each one (matched to its start_xmit by skb address),
#   - a trace_marker line just before each "ip link set mtu 9000".
# No frame queued after a marker may reach the driver before the next
# vmx_up(), and every round must send one after it. A frame queued before
# the marker was accepted at the previous round's MTU 9000 and waited in
# the qdisc through the decrease: that one may leave whenever the qdisc
# runs, before or after any driver's MTU change (the stack's, not the
# driver's); it is counted, not failed. (The decrease itself is not
# checked, for the same reason.)
# The check needs only kprobes and the tracepoint: it runs on Debian's
# kernels too.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
ROUNDS=${VMX_MTU_ORDER_ROUNDS:-8}
OLD=1500
NEW=9000

vmx_setup
[ "$VMX_DRIVER" = vmx ] || { skip "MTU order" "the probe is on vmx_up (vmx only)"; vmx_done; }
[ -w "$T/kprobe_events" ] || { skip "MTU order" "no tracefs kprobe_events at $T"; vmx_done; }

trace_setup() {
	echo 0 > "$T/tracing_on"
	echo > "$T/trace"
	# reading the trace while the stream runs must not pause recording
	echo 0 > "$T/options/pause-on-trace" 2>/dev/null
	echo 4096 > "$T/buffer_size_kb"
	echo global > "$T/trace_clock" || return 1
	echo 'p:vmx_mtu_order/up vmx:vmx_up' >> "$T/kprobe_events" ||
		{ echo "cannot put a kprobe on vmx:vmx_up (inlined?)"; return 1; }
	echo 1 > "$T/events/vmx_mtu_order/up/enable" || return 1
	echo "name == \"$DUT\" && (gso_size > $((OLD - 40)) || (gso_size == 0 && len > $((OLD + 14))))" \
		> "$T/events/net/net_dev_start_xmit/filter" || return 1
	echo 1 > "$T/events/net/net_dev_start_xmit/enable" || return 1
	echo "name == \"$DUT\" && len > $((OLD + 14))" \
		> "$T/events/net/net_dev_queue/filter" || return 1
	echo 1 > "$T/events/net/net_dev_queue/enable" || return 1
	echo 1 > "$T/tracing_on"
	echo "kprobe vmx_mtu_order/up (vmx_up), net_dev_queue and net_dev_start_xmit beyond MTU $OLD traced"
}

trace_teardown() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/net/net_dev_start_xmit/enable" 2>/dev/null
	echo 0 > "$T/events/net/net_dev_start_xmit/filter" 2>/dev/null
	echo 0 > "$T/events/net/net_dev_queue/enable" 2>/dev/null
	echo 0 > "$T/events/net/net_dev_queue/filter" 2>/dev/null
	echo 0 > "$T/events/vmx_mtu_order/up/enable" 2>/dev/null
	echo '-:vmx_mtu_order/up' >> "$T/kprobe_events" 2>/dev/null
	echo 1 > "$T/options/pause-on-trace" 2>/dev/null
	echo local > "$T/trace_clock" 2>/dev/null
	return 0
}

# _large_since N: a frame beyond MTU OLD was traced after the vmx_up()
# that followed the "raise N" marker (the sender used the new MTU in this
# round).
_large_since() {
	awk -v m="vmx-mtu-order: raise $1\$" '$0 ~ m { f = 1; next }
		f && / up: \(vmx_up/ { f = 2; next }
		f == 2 && /net_dev_start_xmit:/ { found = 1; exit } END { exit !found }' "$T/trace"
}

# flips: ROUNDS times MTU OLD -> NEW -> OLD on the DUT while the sender
# offers NEW-sized frames to the peer (at NEW from the start). Each raise
# lasts until a frame beyond MTU OLD was traced, or 3.5 s.
flips() {
	local i before after spid rc=0
	pexec ip link set "$PEER" mtu $NEW || return 1
	before=$(dut_counters)
	PEER_IP=$DUT_IP python3 "$VMX_LIB_DIR/xdp_pkt.py" spin "$DUT" "$(peer_mac)" \
		"$PEER_IP" 9 $((NEW + 14)) $((ROUNDS * 2 + 2)) > "$VMX_TMP/spin.out" 2>&1 &
	spid=$!
	sleep 1
	for ((i = 1; i <= ROUNDS; i++)); do
		echo "vmx-mtu-order: raise $i" > "$T/trace_marker"
		ip link set "$DUT" mtu $NEW || { echo "mtu $NEW failed"; rc=1; break; }
		wait_for 3 _large_since "$i" ||
			echo "round $i: no frame beyond MTU $OLD within 3.5 s"
		echo "vmx-mtu-order: lower $i" > "$T/trace_marker"
		ip link set "$DUT" mtu $OLD || { echo "mtu $OLD failed"; rc=1; break; }
		sleep 0.5
	done
	wait "$spid" || { echo "the sender failed"; rc=1; }
	cat "$VMX_TMP/spin.out"
	after=$(dut_counters)
	echo "counters $before -> $after"
	pexec ip link set "$PEER" mtu $OLD
	return $rc
}

# order_ok: no large frame the stack queued after a "raise" marker
# reaches the driver before the next vmx_up(); large frames after it in
# every round (a round without one tested nothing). A frame is matched to
# its enqueue (net_dev_queue) by skb address, the latest one before it: a
# frame queued before the marker was accepted at the old, larger MTU of
# the round before and sat in the qdisc through the decrease (the stack's,
# see above); it is counted apart, and the lines of the first bad round
# are printed.
order_ok() {
	cp "$T/trace" "$VMX_TMP/trace.txt"
	awk -v new=$NEW '
		function skb(line) { return match(line, /skbaddr=[0-9a-fx]+/) ? substr(line, RSTART, RLENGTH) : "" }
		/vmx-mtu-order: raise/ { pend = 1; r = $NF; raises++; n = 0 }
		pend && n < 20 { buf[++n] = $0 }
		/vmx-mtu-order: lower/ { pend = 0; next }
		/vmx-mtu-order: raise/ { next }
		/ up: \(vmx_up/ { if (pend) acts++; pend = 0; next }
		/net_dev_queue:/ { qr[skb($0)] = pend ? r : 0; next }
		/net_dev_start_xmit:/ {
			if (!pend) { big++; if (!(r in used)) { used[r] = 1; rounds++ } }
			else if (qr[skb($0)] != r) stale++
			else if (++bad == 1) {
				print "round " r ": a frame queued after the raise reached the driver before vmx_up; the trace from the raise:"
				for (i = 1; i <= n; i++) print "  | " buf[i]
			}
		}
		END {
			printf "%d raises, %d vmx_up after them, %d large frames after one, %d before (%d of them queued at the round before\x27s MTU); %d rounds used MTU %d\n", raises, acts, big, bad + stale, stale, rounds, new
			if (raises == 0 || acts < raises) { print "a raise without a vmx_up traced"; exit 1 }
			if (rounds < raises) { print "a round never used the new MTU: it tested nothing"; exit 1 }
			exit bad > 0
		}' "$VMX_TMP/trace.txt"
}

check "trace set up (kprobe on vmx_up, net_dev_queue, net_dev_start_xmit)" trace_setup ||
	{ trace_teardown; vmx_done; }
check "MTU $OLD -> $NEW -> $OLD x$ROUNDS, $((NEW + 14))-byte frames offered throughout" flips
echo 0 > "$T/tracing_on"
check "no frame sized beyond MTU $OLD before vmx_up() gave the device MTU $NEW" order_ok
trace_teardown
check "traffic afterwards" dut_ping -c 3 -i 0.2 "$PEER_IP"
vmx_done
