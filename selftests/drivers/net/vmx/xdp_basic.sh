#!/usr/bin/env bash
# xdp_basic.sh - native XDP on the DUT: attach, replace and detach every
# test program; XDP_PASS, XDP_DROP and XDP_TX (plain, after
# bpf_xdp_adjust_head and after bpf_xdp_adjust_tail) checked frame by
# frame from the virtio peer and against the driver's ethtool -S counters;
# the refusals (multi-buffer program, MTU above the single-buffer limit,
# at attach time and while attached), each leaving ping working.
# vmx-timeout: 420
# The refused MTU raises (a warning from the driver):
# vmx-expects-log: MTU [0-9]+ is too large for the attached XDP program without frags support \(max [0-9]+\)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
DUT_MAC=$(mac_of "$DUT")
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# ------------------------------------------------ attach / replace / detach
# cycle PROG NEXT: PROG attached natively on a bare DUT, replaced by NEXT
# (ip -force: a new program id, still native), then detached.
cycle() {
	local p=$1 n=$2 id1 id2
	xdp_none "$DUT" >/dev/null || { echo "a program is still attached"; return 1; }
	xdp_attach "$DUT" "$p" || { echo "attach $p failed"; return 1; }
	xdp_native "$DUT" "$p" || return 1
	id1=$(xdp_prog_id "$DUT")
	xdp_replace "$DUT" "$n" || { echo "replace by $n failed"; return 1; }
	xdp_native "$DUT" "$n" || return 1
	id2=$(xdp_prog_id "$DUT")
	echo "ids: $p $id1 -> $n $id2"
	[ "$id1" != "$id2" ] || { echo "program id did not change"; return 1; }
	xdp_detach "$DUT" || { echo "detach failed"; return 1; }
	xdp_none "$DUT"
}
PROGS=(xdp_pass xdp_drop xdp_tx xdp_adjust_head xdp_adjust_tail
       xdp_redirect_devmap xdp_redirect_xsk)
for i in "${!PROGS[@]}"; do
	p=${PROGS[$i]}
	n=${PROGS[$(((i + 1) % ${#PROGS[@]}))]}
	check "attach $p, replace by $n, detach (native)" cycle "$p" "$n"
	xdp_detach "$DUT" 2>/dev/null
done

# A plain second attach (no -force) must not replace the program.
second_attach_refused() {
	local id
	xdp_attach "$DUT" xdp_tx || return 1
	id=$(xdp_prog_id "$DUT")
	if xdp_attach "$DUT" xdp_drop 2>&1; then
		echo "second attach accepted"; return 1
	fi
	echo "program id $id -> $(xdp_prog_id "$DUT")"
	[ "$(xdp_prog_id "$DUT")" = "$id" ] && xdp_native "$DUT" xdp_tx
}
check "second attach without -force refused, program kept" second_attach_refused
xdp_detach "$DUT" 2>/dev/null

# ------------------------------------------------ XDP_PASS
pass_ping() {
	local c0 p0 r0 c1 p1 r1 id
	id=$(xdp_prog_id "$DUT")
	c0=$(estat "$DUT" 'rx[0-9]+_xdp_packets'); p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	r0=$(prog_run_cnt "$id")
	peer_ping -c 20 -i 0.05 "$DUT_IP" || return 1
	dut_ping -c 5 -i 0.05 "$PEER_IP" || return 1
	c1=$(estat "$DUT" 'rx[0-9]+_xdp_packets'); p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	r1=$(prog_run_cnt "$id")
	echo "xdp_packets +$((c1 - c0)), xdp_pass +$((p1 - p0)), program run_cnt +$((r1 - r0))"
	[ $((p1 - p0)) -ge 25 ] && [ $((c1 - c0)) -ge 25 ] && [ $((r1 - r0)) -ge 25 ]
}
if xdp_attach "$DUT" xdp_pass; then
	check "XDP_PASS: ping both ways, rxN_xdp_pass and run_cnt count it" pass_ping
else
	fail "XDP_PASS: ping both ways, rxN_xdp_pass and run_cnt count it" "attach failed"
fi

# ------------------------------------------------ XDP_DROP
drop_ping() {
	local d0 d1
	d0=$(estat "$DUT" 'rx[0-9]+_xdp_drop')
	peer_no_reply -c 10 -i 0.1 "$DUT_IP" || { echo "ping got replies through XDP_DROP"; return 1; }
	d1=$(estat "$DUT" 'rx[0-9]+_xdp_drop')
	echo "rxN_xdp_drop +$((d1 - d0))"
	[ $((d1 - d0)) -ge 10 ]
}
if xdp_replace "$DUT" xdp_drop; then
	check "XDP_DROP: ping fails, rxN_xdp_drop grows" drop_ping
else
	fail "XDP_DROP: ping fails, rxN_xdp_drop grows" "replace failed"
fi
xdp_detach "$DUT"
check "ping works after detaching xdp_drop" ping_ok

# ------------------------------------------------ XDP_TX
# bounce_check PORT COUNT MODE: every frame comes back exactly as MODE
# says, rxN_xdp_tx and the XDP TX queues count exactly COUNT, no errors.
bounce_check() {
	local t0 e0 q0 t1 e1 q1 rc
	t0=$(estat "$DUT" 'rx[0-9]+_xdp_tx'); e0=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	q0=$(estat "$DUT" '(xdp)?tx[0-9]+_packets')
	peer_bounce "$1" "$2" "$3"
	rc=$?
	sleep 0.2
	t1=$(estat "$DUT" 'rx[0-9]+_xdp_tx'); e1=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	q1=$(estat "$DUT" '(xdp)?tx[0-9]+_packets')
	echo "rxN_xdp_tx +$((t1 - t0)), rxN_xdp_tx_errors +$((e1 - e0)), TX queue packets +$((q1 - q0))"
	[ $rc = 0 ] || return 1
	[ $((t1 - t0)) = "$2" ] || { echo "rxN_xdp_tx: want +$2"; return 1; }
	[ $((e1 - e0)) = 0 ] || return 1
	[ $((q1 - q0)) -ge "$2" ] || { echo "TX queues sent fewer than $2 frames"; return 1; }
}

# Frames of up to one data ring entry (128 B) arrive through the RX data
# ring (revision 3+) and are copied into a page_pool page for XDP.
data_ring_bounce() {
	local d0 d1
	d0=$(estat "$DUT" 'rx[0-9]+_data_ring')
	XDP_SIZES=60,64,100,128 bounce_check $XDP_PORT_TX 16 swap || return 1
	d1=$(estat "$DUT" 'rx[0-9]+_data_ring')
	echo "rxN_data_ring +$((d1 - d0))"
	[ $((d1 - d0)) -ge 16 ]
}
rev=$(dut_revision)

if xdp_attach "$DUT" xdp_tx; then
	check "XDP_TX: 44 frames 60..1514 B come back with swapped MACs, exact bytes" \
		bounce_check $XDP_PORT_TX 44 swap
	if [ "${rev:-0}" -ge 3 ]; then
		check "XDP_TX on RX data ring frames (60..128 B): bounced exact, via the data ring" \
			data_ring_bounce
	else
		skip "XDP on RX data ring frames" \
			"device revision ${rev:-?} < 3 has no RX data ring (QEMU offers only revision 1); every frame above went through ring 0"
	fi
	check "XDP_TX: frames to other ports are not bounced" \
		peer_bounce 7790 8 none
	check "XDP_TX: ping still works (other traffic passes)" ping_ok
else
	fail "XDP_TX: attach xdp_tx"
fi

if xdp_replace "$DUT" xdp_adjust_head; then
	check "adjust_head grow +16: bounced frames exact" \
		bounce_check $XDP_PORT_GROW 22 head-grow
	check "adjust_head shrink -8: bounced frames exact" \
		bounce_check $XDP_PORT_SHRINK 22 head-shrink
	check "adjust_head: ping still works" ping_ok
else
	fail "adjust_head: attach xdp_adjust_head"
fi

if xdp_replace "$DUT" xdp_adjust_tail; then
	check "adjust_tail grow +24: bounced frames exact" \
		bounce_check $XDP_PORT_GROW 22 tail-grow
	check "adjust_tail shrink -10: bounced frames exact" \
		bounce_check $XDP_PORT_SHRINK 22 tail-shrink
	check "adjust_tail: ping still works" ping_ok
else
	fail "adjust_tail: attach xdp_adjust_tail"
fi
xdp_detach "$DUT"
check "after detach nothing is bounced" peer_bounce $XDP_PORT_TX 8 none

# ------------------------------------------------ refusals
XDP_LIMIT=
# a program with frags support attaches (xdp_frags.sh runs it on
# multi-buffer frames); one without keeps the single-buffer MTU limit below
frags_accepted() {
	local out
	out=$(xdp_attach "$DUT" xdp_frags xdp.frags 2>&1) || {
		echo "$out"; echo "multi-buffer program refused"; return 1; }
	xdp_detach "$DUT"
}
check "multi-buffer (xdp.frags) program accepted" frags_accepted
check "ping works after the frags program" ping_ok

mtu_attach_refused() {
	local out rc
	ip link set dev "$DUT" mtu 9000 || { echo "cannot set MTU 9000"; return 1; }
	out=$(xdp_attach "$DUT" xdp_pass 2>&1)
	rc=$?
	echo "$out"
	ip link set dev "$DUT" mtu 1500
	[ $rc != 0 ] || { echo "attach at MTU 9000 accepted"; xdp_detach "$DUT"; return 1; }
	echo "$out" | grep -q -i "mtu" || { echo "no MTU message"; return 1; }
	XDP_LIMIT=$(echo "$out" | sed -n 's/.*at most \([0-9][0-9]*\).*/\1/p')
	xdp_none "$DUT" || return 1
	# a printf format left in the message (extack without formatting)
	if echo "$out" | grep -q -E '%[0-9]*l?[udsx]'; then
		echo "the message is an unformatted printf format"; return 1
	fi
}
check "attach refused at MTU 9000 with a message" mtu_attach_refused
check "ping works after the MTU refusal" ping_ok

mtu_raise_refused() {
	local id mtu
	xdp_attach "$DUT" xdp_pass || return 1
	id=$(xdp_prog_id "$DUT")
	if ip link set dev "$DUT" mtu 9000; then
		echo "MTU 9000 accepted with a program attached"; return 1
	fi
	mtu=$(cat "/sys/class/net/$DUT/mtu")
	echo "MTU after the refusal: $mtu; program $id -> $(xdp_prog_id "$DUT")"
	# the limit, if the attach refusal did not say it: from the kernel log
	[ -n "$XDP_LIMIT" ] || XDP_LIMIT=$(dmesg_since_start |
		sed -n 's/.*attached XDP program.*(max \([0-9][0-9]*\)).*/\1/p' | tail -n1)
	[ "$mtu" = 1500 ] && [ "$(xdp_prog_id "$DUT")" = "$id" ] && xdp_native "$DUT" xdp_pass
}
check "raising MTU to 9000 refused while attached" mtu_raise_refused
check "ping works after the MTU raise refusal" ping_ok

# The limit the driver reported: accepted exactly up to it.
mtu_limit() {
	local lim=$XDP_LIMIT rc=0
	[ -n "$lim" ] || { echo "driver did not report its limit"; return 1; }
	ip link set dev "$DUT" mtu "$lim" || { echo "MTU $lim (the limit) refused"; rc=1; }
	if ip link set dev "$DUT" mtu $((lim + 1)) 2>&1; then
		echo "MTU $((lim + 1)) accepted"; rc=1
	fi
	echo "MTU now $(cat "/sys/class/net/$DUT/mtu") (limit $lim)"
	[ "$(cat "/sys/class/net/$DUT/mtu")" = "$lim" ] || rc=1
	ip link set dev "$DUT" mtu 1500
	xdp_native "$DUT" xdp_pass || rc=1
	return $rc
}
check "MTU up to the reported XDP limit accepted, limit+1 refused" mtu_limit
wait_carrier "$DUT" 10 >/dev/null
check "ping works with xdp_pass after the MTU changes" ping_ok

# Frames of the largest MTU XDP allows fill a ring-0 buffer: they must run
# through the program (XDP_PASS and XDP_TX) whole.
at_limit_pass() {
	local p0 p1
	set_mtu_both "$XDP_LIMIT" || return 1
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	peer_ping -c 5 -i 0.1 -s $((XDP_LIMIT - 28)) -M do "$DUT_IP" || return 1
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	echo "MTU $XDP_LIMIT: rxN_xdp_pass +$((p1 - p0))"
	[ $((p1 - p0)) -ge 5 ]
}
at_limit_tx() {
	xdp_replace "$DUT" xdp_tx || return 1
	XDP_SIZES="$((XDP_LIMIT + 14)),$((XDP_LIMIT + 13)),1514,60" bounce_check $XDP_PORT_TX 8 swap
}
if [ -n "$XDP_LIMIT" ]; then
	check "MTU $XDP_LIMIT (the limit): full-size pings pass through XDP" at_limit_pass
	check "MTU $XDP_LIMIT: $((XDP_LIMIT + 14))-byte frames bounced by XDP_TX exact" at_limit_tx
	set_mtu_both 1500 >/dev/null
else
	skip "MTU at the XDP limit: full-size frames through XDP" "limit unknown"
	skip "MTU at the XDP limit: XDP_TX of full-size frames" "limit unknown"
fi
xdp_detach "$DUT"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

log "runtime ${SECONDS}s"
vmx_done
