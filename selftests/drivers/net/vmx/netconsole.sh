#!/usr/bin/env bash
# netconsole.sh - netconsole (netpoll) through the DUT, with a native XDP
# program attached and traffic running. netpoll transmits with interrupts
# off and, when the TX queue is busy or locked, polls every NAPI instance
# of the device with budget 0; in that mode a driver may only complete skb
# TX (Documentation/networking/napi.rst): no RX, no XDP completions, no
# page_pool returns. Checks: kernel messages written while idle and under
# load (iperf3 TCP out of the DUT, XDP_TX bounces of pktgen frames from the
# peer) arrive at a UDP listener in the peer netns, the kernel log has no
# WARNING/BUG/page_pool complaint, and a function_graph trace of
# netpoll_poll_dev (netpoll's budget-0 NAPI polls) shows no XDP frame
# return, page_pool put or RX work below it. A non-debug kernel does not
# warn about those by itself, hence the trace.
# With a test-device NIC given tx-comp-batch (group tdevx) that NIC is the
# DUT: one TX queue (max-tx-queues=1), so XDP_TX shares the stack's queue,
# and the device completes each pass over the ring with one completion
# naming its last packet: a completion netpoll reaps may cover XDP frames
# before the skb it names, which netpoll must leave to NAPI (a driver that
# returned them there hung the guest in the middle of the messages).
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

NC_PORT=6666
M=${VMX_NC_MESSAGES:-200}

xdp_setup
BATCH=$(testdev_iface_with tx-comp-batch)
if [ -n "$BATCH" ] && [ "$BATCH" != "$DUT" ]; then
	check "$BATCH (one TX queue, a completion per ring pass) takes over the DUT's addresses" dut_move_to "$BATCH"
fi
DUT_MAC=$(mac_of "$DUT")
PEER_MAC=$(peer_mac)
NCLOG=$VMX_TMP/netconsole.log
DEVKMSG=$(sysctl -n kernel.printk_devkmsg)
nc_restore() {
	sysctl -qw kernel.printk_devkmsg="$DEVKMSG"
	rmmod netconsole 2>/dev/null
}

_nc_listening() { pexec ss -Hlun "sport = :$NC_PORT" | grep -q .; }
nc_setup() {
	bg_start pexec socat -u "UDP-RECV:$NC_PORT" "OPEN:$NCLOG,creat,append"
	wait_for 10 _nc_listening || { echo "no UDP listener on $NC_PORT in the peer"; return 1; }
	# user space writes to /dev/kmsg are rate-limited (10 per 5 s) by default
	sysctl -qw kernel.printk_devkmsg=on || return 1
	modprobe netconsole "netconsole=6665@$DUT_IP/$DUT,$NC_PORT@$PEER_IP/$PEER_MAC" || return 1
	dmesg | grep -E 'netconsole' | tail -n 3
	[ -d /sys/module/netconsole ]
}
if ! modinfo netconsole >/dev/null 2>&1; then
	skip "netconsole through $DUT" "no netconsole module for kernel $(uname -r)"
	vmx_done
fi
check "netconsole on $DUT -> $PEER_IP:$NC_PORT ($PEER_MAC)" nc_setup || { nc_restore; vmx_done; }

# burst TAG [PAUSE]: M KERN_WARNING messages (they reach every console at
# the suite's loglevel=5 too), PAUSE seconds apart (default none), then
# wait until the peer has them all (at most 20 s) and print how many
# arrived; fails when one is missing. A message that finds the TX queue
# stopped or locked makes netpoll poll for up to a jiffy; the ones after
# it, while it waits in netpoll's backlog, do not poll: a pause lets each
# message find the queue for itself. With NC_BQL set (the batching NIC
# under load, below) BQL holds one skb in flight while the messages are
# written, and has its usual limit again while they drain.
NC_BQL='' NC_BQL_MAX=''
got() { grep -c "vmx-nc $1 " "$NCLOG" 2>/dev/null; }
_got_all() { [ "$(got "$1")" -ge "$M" ]; }
burst() {
	local i
	[ -z "$NC_BQL" ] || echo 0 > "$NC_BQL" || return 1
	for i in $(seq "$M"); do
		echo "<4>vmx-nc $1 $i of $M" > /dev/kmsg
		[ -z "${2:-}" ] || sleep "$2"
	done
	[ -z "$NC_BQL" ] || echo "$NC_BQL_MAX" > "$NC_BQL" || return 1
	wait_for 20 _got_all "$1"
	echo "$(got "$1") of $M messages tagged $1 arrived at the peer"
	_got_all "$1"
}
check "$M messages through netconsole, idle" burst idle

# ------------------------------------------------ XDP attached, traffic
check "xdp_tx attached natively" xdp_attach "$DUT" xdp_tx
check "$M messages through netconsole, XDP attached, idle" burst xdpidle

# function_graph of everything netpoll_poll_dev calls, while the load runs.
TR=/sys/kernel/tracing
trace_start() {
	[ -e "$TR/current_tracer" ] || mount -t tracefs nodev "$TR" || return 1
	grep -qw function_graph "$TR/available_tracers" || { echo "no function_graph tracer"; return 1; }
	echo 0 > "$TR/tracing_on"
	echo 4096 > "$TR/buffer_size_kb"
	echo netpoll_poll_dev > "$TR/set_graph_function" || return 1
	echo function_graph > "$TR/current_tracer" || return 1
	echo > "$TR/trace"
	echo 1 > "$TR/tracing_on"
}
trace_stop() {
	echo 0 > "$TR/tracing_on"
	cat "$TR/trace" > "$VMX_TMP/netpoll.trace"
	echo nop > "$TR/current_tracer"
	echo > "$TR/set_graph_function"
}
# Calls that budget 0 forbids: XDP frame returns and page_pool puts (XDP
# completions), RX processing.
NP_BAD='xdp_return_frame|xdp_flush_frame_bulk|page_pool_(put|recycle|return)|napi_gro_receive|netif_receive_skb|vmx_rx_poll|vmx_xdp_reclaim|bpf_prog_run_xdp'
NP_POLLS=0
budget0_clean() {
	local bad reaps
	NP_POLLS=$(grep -c 'netpoll_poll_dev()' "$VMX_TMP/netpoll.trace")
	reaps=$(grep -c '__vmx_tx_clean' "$VMX_TMP/netpoll.trace")
	echo "netpoll_poll_dev ran $NP_POLLS times under the load; $reaps TX reclaims below it"
	# the paced messages on a batching NIC must make netpoll poll
	[ -z "$BATCH" ] || [ "$reaps" -gt 0 ] ||
		{ echo "netpoll never found a completion to reap: nothing was tested"; return 1; }
	bad=$(grep -E "$NP_BAD" "$VMX_TMP/netpoll.trace")
	[ -z "$bad" ] && return 0
	echo "called below netpoll_poll_dev (budget 0): $(printf '%s\n' "$bad" | grep -oE "$NP_BAD" | sort | uniq -c | xargs)"
	printf '%s\n' "$bad" | head -n 10
	grep -m1 -B 30 -E "$NP_BAD" "$VMX_TMP/netpoll.trace" | tail -n 30
	return 1
}

under_load() {
	local x0 x1 c0 c1 rc=0 ipf ipargs irq
	# one small TX queue shared by iperf3 (CPU 1) and printk (CPU 0): netpoll
	# finds it locked or stopped and polls with budget 0
	ethtool -L "$DUT" combined 1 || echo "ethtool -L $DUT combined 1 failed"
	# the shared queue: a ring the stack never fills (BQL stops it first),
	# so XDP frames do not fill its tail either
	ethtool -G "$DUT" tx "$([ -n "$BATCH" ] && echo 1024 || echo 64)" || echo "ethtool -G $DUT tx failed"
	wait_carrier "$DUT" 10 || return 1
	pktgen_setup "$DUT_MAC" 0 60 "$XDP_PORT_TX" || return 1
	if [ -n "$BATCH" ]; then
		# many small skbs (UDP) and a trickle of XDP_TX frames, so that
		# a ring pass's last packet, the one its one completion names,
		# is mostly an skb, with an XDP frame before it in some passes
		_pg "$PEER" "burst 1"
		_pg "$PEER" "delay 50000000"	# 20 frames a second
		ipargs=(-u -b 0 -l 64)
		# the DUT's interrupts on CPU 0, where the messages are written:
		# while netpoll spins there with interrupts off, a completion
		# that arrives is reaped by netpoll's poll, not by NAPI
		for irq in $(awk -v d="$DUT" '$NF ~ "^"d"(-|$)" { sub(":", "", $1); print $1 }' /proc/interrupts); do
			echo 0 > "/proc/irq/$irq/smp_affinity_list" || echo "cannot move IRQ $irq to CPU 0"
		done
	else
		_pg "$PEER" "delay 20000"	# about 50 kpps at most
		ipargs=()
	fi
	iperf_server_start 5201 || return 1
	timeout 60 taskset -c 1 iperf3 -c "$PEER_IP" -p 5201 -t 15 -P 2 "${ipargs[@]}" > "$VMX_TMP/iperf-nc.log" 2>&1 &
	ipf=$!
	x0=$(estat "$DUT" 'rx[0-9]+_xdp_tx')
	[ -z "$BATCH" ] || c0=$(testdev_stat "$DUT" tx-comp-batched) || return 1
	# netpoll polls only when it finds the queue stopped or locked, and
	# reaps only completions that arrive while it spins (a jiffy, 4 ms at
	# HZ 250). On the batching NIC BQL holds one skb in flight while the
	# messages are written (limit_max 0, burst): the queue is stopped
	# from each skb until the device's pass 2 ms after its doorbell, so a
	# message that finds no backlog polls and reaps that pass, on any
	# machine. (Left to iperf3, a slow machine's 2000 frames a second
	# never stopped the queue: netpoll_poll_dev ran 0 times.) The usual
	# limit is back while they drain: netpoll's backlog sends one skb per
	# try, 100 ms apart while the queue is stopped.
	if [ -n "$BATCH" ]; then
		NC_BQL=/sys/class/net/$DUT/queues/tx-0/byte_queue_limits/limit_max
		NC_BQL_MAX=$(cat "$NC_BQL") || { NC_BQL=''; return 1; }
	fi
	pktgen_start
	sleep 2
	trace_start || { echo "cannot trace netpoll_poll_dev"; rc=1; }
	taskset -pc 0 $$ >/dev/null
	burst load || rc=1
	burst load2 || rc=1
	[ -z "$BATCH" ] || burst paced 0.03 || rc=1
	taskset -pc 0-1 $$ >/dev/null
	trace_stop
	[ -z "$NC_BQL" ] || echo "$NC_BQL_MAX" > "$NC_BQL"
	NC_BQL=''
	pktgen_stop
	wait "$ipf" || { echo "iperf3 failed:"; tail -n 5 "$VMX_TMP/iperf-nc.log"; rc=1; }
	grep -E 'sender|receiver' "$VMX_TMP/iperf-nc.log"
	x1=$(estat "$DUT" 'rx[0-9]+_xdp_tx')
	echo "rxN_xdp_tx +$((x1 - x0)) during the bursts; pktgen sent $(pktgen_sent)"
	[ $((x1 - x0)) -gt 0 ] || { echo "no XDP_TX traffic ran"; rc=1; }
	if [ -n "$BATCH" ]; then
		c1=$(testdev_stat "$DUT" tx-comp-batched) || return 1
		echo "the device merged $((c1 - c0)) TX completions into the next one"
		[ $((c1 - c0)) -gt 0 ] || { echo "no completion covered several packets"; rc=1; }
	fi
	return $rc
}
check "messages through netconsole under iperf3 + XDP_TX load" under_load
if [ -z "$BATCH" ] && [ -s "$VMX_TMP/netpoll.trace" ] && ! grep -q 'netpoll_poll_dev()' "$VMX_TMP/netpoll.trace"; then
	skip "netpoll's budget-0 polls did only skb TX completions" \
		"netpoll never had to poll $DUT during the load (its TX queue was never busy)"
else
	check "netpoll's budget-0 polls did only skb TX completions (function_graph)" budget0_clean
fi
check "ping after the load" peer_ping -c 3 -i 0.2 "$DUT_IP"
check "no page_pool/XDP complaints in the kernel log" dmesg_xdp_clean
check "xdp_tx detached" xdp_detach "$DUT"
nc_restore

vmx_done
