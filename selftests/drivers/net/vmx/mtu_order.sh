#!/usr/bin/env bash
# mtu_order.sh - an MTU increase reaches the device before any frame sized
# for it: the stack must not see the new MTU while the
# device still runs with the old one.
#
# The device learns the MTU from the shared area when vmx_up() activates
# it (ACTIVATE_DEV); from vmx_down() to the end of vmx_up() the TX queues
# are stopped. With a TCP stream from the DUT to a peer at MTU 9000, the
# DUT's MSS follows its own MTU at once (tcp_current_mss reads the device
# MTU): a driver that sets nd->mtu before it quiesces the device lets TSO
# frames with gso_size above the old MSS reach its ndo_start_xmit while the
# device still has the old MTU. Observed with ftrace, in one trace buffer:
#   - a kprobe on vmx_up() (every caller calls it out of line; vmx_cmd()
#     itself is inlined into vmx_up, so no probe there sees ACTIVATE_DEV),
#   - the net:net_dev_start_xmit tracepoint for the DUT, filtered to frames
#     sized beyond the old MTU (gso_size > 1460, or a non-GSO frame longer
#     than 1514 bytes),
#   - a trace_marker line just before each "ip link set mtu 9000".
# No such frame may come between a marker and the next vmx_up(). (The
# decrease is not checked: TSO frames the stack queued at the old, larger
# MTU may leave after any driver's MTU decrease; that is the stack's.)
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
	echo 'p:vmx_mtu_order/up vmx:vmx_up' >> "$T/kprobe_events" ||
		{ echo "cannot put a kprobe on vmx:vmx_up (inlined?)"; return 1; }
	echo 1 > "$T/events/vmx_mtu_order/up/enable" || return 1
	echo "name == \"$DUT\" && (gso_size > $((OLD - 40)) || (gso_size == 0 && len > $((OLD + 14))))" \
		> "$T/events/net/net_dev_start_xmit/filter" || return 1
	echo 1 > "$T/events/net/net_dev_start_xmit/enable" || return 1
	echo 1 > "$T/tracing_on"
	echo "kprobe vmx_mtu_order/up (vmx_up) and net_dev_start_xmit beyond MTU $OLD traced"
}

trace_teardown() {
	echo 0 > "$T/tracing_on"
	echo 0 > "$T/events/net/net_dev_start_xmit/enable" 2>/dev/null
	echo 0 > "$T/events/net/net_dev_start_xmit/filter" 2>/dev/null
	echo 0 > "$T/events/vmx_mtu_order/up/enable" 2>/dev/null
	echo '-:vmx_mtu_order/up' >> "$T/kprobe_events" 2>/dev/null
	echo 1 > "$T/options/pause-on-trace" 2>/dev/null
	return 0
}

# _large_since N: a frame beyond MTU OLD was traced after the "raise N"
# marker (the stream used the new MTU in this round).
_large_since() {
	awk -v m="vmx-mtu-order: raise $1\$" '$0 ~ m { f = 1; next }
		f && /net_dev_start_xmit:/ { found = 1; exit } END { exit !found }' "$T/trace"
}

# flips: ROUNDS times MTU OLD -> NEW -> OLD on the DUT under a TCP stream
# to the peer (at NEW from the start: its MSS lets the DUT send large).
# Each raise lasts until the stream sent a frame beyond MTU OLD, or 3.5 s:
# a stream slowed down by a loaded host (each flip costs it retransmits
# and their backoff) may need more than a fixed window to use it, and a
# round where it never did tests nothing.
flips() {
	local i before after ipid rc=0
	pexec ip link set "$PEER" mtu $NEW || return 1
	before=$(dut_counters)
	# (the flips cost retransmits: not what is checked here)
	VMX_TCP_MAX_RETRANS=100 VMX_IPERF_TIME=$((ROUNDS * 6 + 4)) bg_start iperf_check
	ipid=$BG_PID
	sleep 2
	for ((i = 1; i <= ROUNDS; i++)); do
		echo "vmx-mtu-order: raise $i" > "$T/trace_marker"
		ip link set "$DUT" mtu $NEW || { echo "mtu $NEW failed"; rc=1; break; }
		sleep 0.5
		wait_for 3 _large_since "$i" || echo "round $i: no frame beyond MTU $OLD within 3.5 s"
		echo "vmx-mtu-order: lower $i" > "$T/trace_marker"
		ip link set "$DUT" mtu $OLD || { echo "mtu $OLD failed"; rc=1; break; }
		sleep 2
	done
	wait "$ipid" || { echo "the TCP stream failed"; rc=1; }
	after=$(dut_counters)
	echo "counters $before -> $after"
	pexec ip link set "$PEER" mtu $OLD
	return $rc
}

# order_ok: no large frame between a "raise" marker and the next
# vmx_up(); at least one large frame after one (else the
# stream never used the new MTU and nothing was tested).
order_ok() {
	cp "$T/trace" "$VMX_TMP/trace.txt"
	awk '
		/vmx-mtu-order: raise/ { pend = 1; r = $NF; raises++; next }
		/vmx-mtu-order: lower/ { pend = 0; next }
		/ up: \(vmx_up/ { if (pend) acts++; pend = 0; next }
		/net_dev_start_xmit:/ {
			if (pend) { bad++; if (bad <= 5) print "round " r ": before vmx_up: " $0 }
			else big++
		}
		END {
			printf "%d raises, %d vmx_up after them, %d large frames after one, %d before\n", raises, acts, big, bad
			if (raises == 0 || acts < raises) { print "a raise without a vmx_up traced"; exit 1 }
			if (big == 0) { print "no frame ever used the new MTU: nothing was tested"; exit 1 }
			exit bad > 0
		}' "$VMX_TMP/trace.txt"
}

check "trace set up (kprobe on vmx_up, net_dev_start_xmit)" trace_setup ||
	{ trace_teardown; vmx_done; }
check "MTU $OLD -> $NEW -> $OLD x$ROUNDS under a TCP stream" flips
echo 0 > "$T/tracing_on"
check "no frame sized beyond MTU $OLD before vmx_up() gave the device MTU $NEW" order_ok
trace_teardown
check "traffic afterwards" dut_ping -c 3 -i 0.2 "$PEER_IP"
vmx_done
