#!/usr/bin/env bash
# xdp_robust.sh - native XDP under churn: VMX_XDP_CYCLES (500)
# attach/replace/detach cycles under a ping flood, every one of them done
# without an error; replacing one program by another loses not one frame
# of a ping stream; the program survives ifdown/ifup, ring resize
# (ethtool -G), channel changes (ethtool -L), an MTU change within the XDP
# limit and a forced reset (ethtool --reset), still listed by "ip link" and
# still run by the traffic; rmmod with a program attached while pktgen
# traffic is bounced by XDP_TX; no page_pool left holding pages, no kernel
# warning. Under TCG 500 cycles take 70-100 s.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
CYCLES=${VMX_XDP_CYCLES:-500}
CHURN_DONE=0
PIN=/sys/fs/bpf/vmx_robust
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# ------------------------------------------------ attach/replace/detach churn
pin_progs() {
	local p
	mkdir -p "$PIN"
	for p in xdp_pass xdp_tx xdp_adjust_tail; do
		bpftool prog load "$(xdp_obj $p)" "$PIN/$p" type xdp || return 1
	done
	ls "$PIN"
}
check "programs pinned for the churn loop" pin_progs

churn() {
	local i n=0 t0 t1 flood tx rx lost allowed p0 p1 rc=0
	# 50 cycles per ip process: ip keeps every pinned program's fd open
	for ((i = 0; i < 50; i++)); do
		echo "link set dev $DUT xdpdrv pinned $PIN/xdp_pass"
		echo "link set dev $DUT xdpdrv pinned $PIN/xdp_tx"
		echo "link set dev $DUT xdpdrv pinned $PIN/xdp_adjust_tail"
		echo "link set dev $DUT xdpdrv off"
	done >"$VMX_TMP/churn.batch"
	pin_irqs_cpu0
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	# not through pexec: $! must be ping itself (ip netns exec and taskset
	# exec it), a backgrounded function would be a subshell ignoring SIGINT
	ip netns exec "$PEER_NS" taskset -c 0 ping -f -q -w 600 "$DUT_IP" >"$VMX_TMP/flood.out" 2>&1 &
	flood=$!
	_vmx_bg+=("$flood")
	sleep 1
	t0=$(date +%s%N)
	while [ $n -lt "$CYCLES" ]; do
		taskset -c 0 ip -force -batch "$VMX_TMP/churn.batch" >>"$VMX_TMP/churn.err" 2>&1 || rc=1
		n=$((n + 50))
	done
	t1=$(date +%s%N)
	sleep 1
	kill -INT "$flood"; wait "$flood"
	irqs_restore
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	CHURN_DONE=$n
	echo "$n cycles ($((n * 4)) attach/replace/replace/detach operations) in $(( (t1 - t0) / 1000000 )) ms"
	# extack warnings ("LRO disabled ...") are not errors
	grep -v "^Warning: " "$VMX_TMP/churn.err" >"$VMX_TMP/churn.errors"
	head -n 5 "$VMX_TMP/churn.errors"
	tail -n 2 "$VMX_TMP/flood.out"
	echo "rxN_xdp_pass +$((p1 - p0)) during the churn"
	rx=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$VMX_TMP/flood.out")
	tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$VMX_TMP/flood.out")
	[ $rc = 0 ] && [ ! -s "$VMX_TMP/churn.errors" ] || { echo "ip reported errors"; return 1; }
	[ "${rx:-0}" -gt 100 ] || { echo "the flood got (almost) no replies"; return 1; }
	# Every program passes ICMP and a replace is an atomic pointer swap
	# (replace_only below holds that to zero loss). The first attach and
	# the last detach of a cycle switch the buffer layout (new queue set,
	# device quiesced for the swap): the flood's frame on the wire then may
	# be lost. ping -f keeps one request in flight and sends the next on
	# the reply or 10 ms later, so a switch shorter than 10 ms loses at
	# most that one frame; measured under TCG: 0.67 to 0.94 lost per
	# switch (335, 393, 424 of 500 switches in CI, 939 of 1000). A switch
	# can outlast the 10 ms: the swap waits for an RCU grace period, and
	# ping, on the same CPU, may then send once more into the quiesced
	# device; on a loaded host that happens more often. Allowed: 1.5 per
	# switch (2 before: a frame lost per cycle beyond the switches' passed
	# unseen; now it fails once it adds up to half a frame per switch).
	lost=$((${tx:-0} - ${rx:-0}))
	allowed=$((2 * n * 3 / 2))
	echo "lost $lost of ${tx:-0}; allowed $allowed ($((2 * n)) layout switches)"
	[ "$lost" -le "$allowed" ] || { echo "more loss than the layout switches explain"; return 1; }
	[ $((p1 - p0)) -gt 0 ] || { echo "the programs never ran"; return 1; }
	xdp_none "$DUT"
}
log "churn: $CYCLES cycles (VMX_XDP_CYCLES); NIC interrupts, the flood and ip run on CPU 0"
log "  (see xdp_lib.sh: QEMU TCG int3 text-patching oops)"
check "$CYCLES attach/replace/detach cycles under a ping flood, every one without an error" churn
log "churn: $CHURN_DONE cycles done"

# ------------------------------------------------ replace alone is lossless
# With xdp_pass attached, the peer sends REPL_PINGS pings 10 ms apart
# (ping waits for the last reply) while ip replaces xdp_pass by xdp_tx and
# back, batch after batch, as long as the stream runs. Both pass ICMP and
# keep the buffer layout, so a replace is a pointer swap: ping's own count
# must show no reply missing, and both programs must have run (the
# replaces overlapped the stream).
REPL_PINGS=${VMX_XDP_REPLACE_PINGS:-1000}
replace_only() {
	local i n=0 rc=0 pid tx rx ida idb ra0 rb0 ra1 rb1
	for ((i = 0; i < 50; i++)); do
		echo "link set dev $DUT xdpdrv pinned $PIN/xdp_tx"
		echo "link set dev $DUT xdpdrv pinned $PIN/xdp_pass"
	done >"$VMX_TMP/replace.batch"
	ip link set dev "$DUT" xdpdrv pinned "$PIN/xdp_pass" || return 1
	wait_carrier "$DUT" 10 || return 1
	ida=$(bpftool prog show pinned "$PIN/xdp_pass" | sed -n 's/^\([0-9]*\):.*/\1/p')
	idb=$(bpftool prog show pinned "$PIN/xdp_tx" | sed -n 's/^\([0-9]*\):.*/\1/p')
	ra0=$(prog_run_cnt "$ida"); rb0=$(prog_run_cnt "$idb")
	pin_irqs_cpu0
	ip netns exec "$PEER_NS" taskset -c 0 ping -q -c "$REPL_PINGS" -i 0.01 -W 2 "$DUT_IP" \
		>"$VMX_TMP/replace.ping" 2>&1 &
	pid=$!
	_vmx_bg+=("$pid")
	: >"$VMX_TMP/replace.err"
	while kill -0 "$pid" 2>/dev/null; do
		taskset -c 0 ip -force -batch "$VMX_TMP/replace.batch" >>"$VMX_TMP/replace.err" 2>&1 || rc=1
		n=$((n + 100))
	done
	wait "$pid"
	irqs_restore
	ra1=$(prog_run_cnt "$ida"); rb1=$(prog_run_cnt "$idb")
	tail -n 2 "$VMX_TMP/replace.ping"
	tx=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' "$VMX_TMP/replace.ping")
	rx=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$VMX_TMP/replace.ping")
	echo "$n replaces during $tx pings; xdp_pass (id $ida) run_cnt +$((ra1 - ra0)), xdp_tx (id $idb) run_cnt +$((rb1 - rb0))"
	grep -v "^Warning: " "$VMX_TMP/replace.err" | head -n 5 | grep . && rc=1
	[ $rc = 0 ] || echo "ip reported errors"
	[ "${tx:-0}" = "$REPL_PINGS" ] || { echo "ping sent ${tx:-none} of $REPL_PINGS"; rc=1; }
	[ "${rx:-0}" = "${tx:-0}" ] || { echo "lost $((${tx:-0} - ${rx:-0})) of ${tx:-0} replies across the replaces"; rc=1; }
	[ $((ra1 - ra0)) -gt 0 ] && [ $((rb1 - rb0)) -gt 0 ] ||
		{ echo "one of the programs never ran: the replaces did not overlap the stream"; rc=1; }
	xdp_detach "$DUT"
	return $rc
}
check "replacing a program by another under a ping stream loses no frame" replace_only
check "ping works after the churn" ping_ok

# ------------------------------------------------ the program survives
# survives WHAT CMD...: run CMD with xdp_pass attached; afterwards the same
# program id is attached natively, ping works and the program saw it.
PROG_ID=
survives() {
	local what=$1 id c0 c1 r0 r1
	shift
	id=$(xdp_prog_id "$DUT")
	"$@" || { echo "$what failed"; return 1; }
	wait_carrier "$DUT" 10 || return 1
	xdp_native "$DUT" xdp_pass || return 1
	[ "$(xdp_prog_id "$DUT")" = "$id" ] || { echo "program id $id -> $(xdp_prog_id "$DUT")"; return 1; }
	c0=$(estat "$DUT" 'rx[0-9]+_xdp_pass'); r0=$(prog_run_cnt "$id")
	peer_ping -c 10 -i 0.05 ${PING_ARGS:-} "$DUT_IP" || return 1
	c1=$(estat "$DUT" 'rx[0-9]+_xdp_pass'); r1=$(prog_run_cnt "$id")
	echo "after $what: program $id still attached; rxN_xdp_pass +$((c1 - c0)), run_cnt +$((r1 - r0))"
	[ $((c1 - c0)) -ge 10 ] && [ $((r1 - r0)) -ge 10 ]
}
updown() { ip link set "$DUT" down && ip link set "$DUT" up; }
rings() {
	ethtool -G "$DUT" rx 512 rx-jumbo 128 tx 256 || return 1
	ethtool -g "$DUT" | sed -n '/Current/,$p' | head -n 5
	ethtool -g "$DUT" | sed -n '/Current/,$p' | grep -q -E "^RX:[[:space:]]+512$"
}
rings_back() { ethtool -G "$DUT" rx 1024 rx-jumbo 256 tx 512; }
chan() {
	ethtool -L "$DUT" combined "$1" || return 1
	ethtool -l "$DUT" | sed -n '/Current/,$p' | grep Combined
	[ "$(combined_channels "$DUT")" = "$1" ]
}
mtu3000() { set_mtu_both 3000; }

if xdp_attach "$DUT" xdp_pass; then
	check "program survives ifdown/ifup" survives "ifdown/ifup" updown
	check "program survives ethtool -G rx 512 rx-jumbo 128 tx 256" survives "ring resize" rings
	check_pp_settled "old rings' page_pools freed after the resize" 10
	check "program survives ethtool -G back to the defaults" survives "ring resize back" rings_back
	MAXQ=$(combined_max "$DUT")
	check "program survives ethtool -L combined 1" survives "channels 1" chan 1
	if [ "${MAXQ:-1}" -gt 1 ]; then
		check "program survives ethtool -L combined $MAXQ" survives "channels $MAXQ" chan "$MAXQ"
	else
		skip "program survives ethtool -L back up" "only one channel available"
	fi
	check_pp_settled "page_pools of removed queues freed" 10
	check "program survives a forced reset (ethtool --reset dedicated, the reset work item)" \
		survives "forced reset" dut_forced_reset
	PING_ARGS="-s 2900 -M do" check "program survives MTU 3000 (within the XDP limit), 2928-byte pings run through it" \
		survives "MTU 3000" mtu3000
	set_mtu_both 1500 >/dev/null
	xdp_detach "$DUT"
else
	fail "attach xdp_pass for the survival tests"
fi
check "ping works after the reconfigurations" ping_ok

# ------------------------------------------------ rmmod under traffic
rmmod_under_traffic() {
	local t0 t1 x0 x1 rc
	pktgen_setup "$(mac_of "$DUT")" 20000000 200 $XDP_PORT_TX || return 1
	xdp_attach "$DUT" xdp_tx || return 1
	xdp_native "$DUT" xdp_tx || return 1
	# detaching (unregister) retargets the XDP dispatcher: CPU 0 only
	pin_irqs_cpu0
	x0=$(estat "$DUT" 'rx[0-9]+_xdp_tx')
	pktgen_start
	sleep 2
	x1=$(estat "$DUT" 'rx[0-9]+_xdp_tx')
	echo "XDP_TX bounced $((x1 - x0)) pktgen frames before rmmod"
	t0=$(date +%s%N)
	dut_unload taskset -c 0
	rc=$?
	t1=$(date +%s%N)
	pktgen_stop
	irqs_restore
	echo "rmmod exit status $rc after $(( (t1 - t0) / 1000000 )) ms; pktgen sent $(pktgen_sent)"
	[ $rc = 0 ] && [ $((x1 - x0)) -gt 0 ] && ! dut_loaded
}
check "rmmod vmx with xdp_tx attached while bouncing pktgen traffic" rmmod_under_traffic
check_pp_settled "no page_pool left holding pages after rmmod" 15
reload() {
	dut_up_driver && dut_addr_setup && ping_ok && xdp_none "$DUT"
}
check "vmx loads again, no program attached, ping works" reload
rm -rf "$PIN"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

log "runtime ${SECONDS}s"
vmx_done
