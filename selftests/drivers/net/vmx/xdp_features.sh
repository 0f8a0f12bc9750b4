#!/usr/bin/env bash
# xdp_features.sh - what the driver tells the kernel about XDP and its
# queues, and the XDP verdict paths xdp_basic.sh does not cover:
#  - xdp_features (nldev.py: netdev dev-get) and queue statistics (lib.sh
#    nl_qstats: netdev qstats-get) through the netdev generic netlink
#    family, checked against what the driver does, the channel count, the
#    rtnl counters, a known amount of traffic and a channel change;
#  - LRO forced off while a program is attached, back after detach (and
#    left off if the user had it off); LRO not changeable fails unless
#    the device disabled it (revision 9, testdev_disabled_offload);
#  - XDP_PASS after bpf_xdp_adjust_head (strip an 8-byte encapsulation,
#    push an 802.1Q tag) and bpf_xdp_adjust_tail (grow, shrink): a UDP
#    socket on the DUT gets exactly the modified frame (progs/
#    xdp_pass_adjust.c, xdp_pass_pkt.py);
#  - an undefined XDP action (progs/xdp_unknown_act.c returns 42): frame
#    dropped, counted in rxN_xdp_aborted and by the xdp:xdp_exception
#    tracepoint, nothing reaches the stack, traffic goes on.
#
# Topology: tools/vm.sh --nic vmxnet3 --nic virtio (the xdp group).
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

NLDEV=$VMX_LIB_DIR/nldev.py
PP=$VMX_LIB_DIR/xdp_pass_pkt.py
PORT_PASS_VLAN=$XDP_PORT_PASS_VLAN
PORT_PASS_TAIL_GROW=$XDP_PORT_PASS_TAIL_GROW
PORT_PASS_TAIL_SHRINK=$XDP_PORT_PASS_TAIL_SHRINK
PORT_UNKNOWN_ACT=$XDP_PORT_UNKNOWN_ACT
PASS_VID=99
VLAN_IP=10.99.99.1
N=24

xdp_setup
IFX=$(cat "/sys/class/net/$DUT/ifindex")
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

# ------------------------------------------------ xdp_features (netlink)
# What the driver implements: XDP_PASS/DROP/TX/ABORTED (basic), XDP_REDIRECT
# out of its RX path (redirect), ndo_xdp_xmit (ndo-xmit), multi-buffer
# frames for xdp.frags programs (rx-sg) and through ndo_xdp_xmit
# (ndo-xmit-sg; xdp_frags.sh runs them), AF_XDP zero copy (xsk-zerocopy,
# single-buffer: xdp-zc-max-segs 1; xdp_xsk.sh runs it).
WANT_FEATURES=basic,redirect,ndo-xmit,xsk-zerocopy,rx-sg,ndo-xmit-sg
WANT_ZC_SEGS=1
xdp_features_are() {
	local out
	out=$(python3 "$NLDEV" "$IFX") || { echo "$out"; return 1; }
	echo "$out"
	echo "want: xdp-features $WANT_FEATURES, xdp-zc-max-segs $WANT_ZC_SEGS"
	grep -qx "xdp-features $WANT_FEATURES" <<<"$out" &&
		grep -qx "xdp-zc-max-segs $WANT_ZC_SEGS" <<<"$out"
}
if python3 "$NLDEV" "$IFX" >/dev/null 2>&1; then
	check "netdev dev-get: xdp-features $WANT_FEATURES" xdp_features_are
	xdp_attach "$DUT" xdp_pass
	check "xdp-features unchanged with a program attached" xdp_features_are
	xdp_detach "$DUT"
else
	skip "netdev dev-get: xdp-features" "no netdev netlink dev-get in kernel $(uname -r) (6.3+)"
fi

# ------------------------------------------------ qstats (netlink)
# (qstats_down.sh: while down; qstats_xdp.sh: XDP frames counted.)
combined() { combined_channels "$DUT"; }

# One qstats entry per RX and per TX queue, as many as combined channels
# (the dedicated XDP TX queues are no stack queues: not listed).
qstats_queues() {
	local ch rx tx
	ch=$(combined)
	nl_qstats queue "$DUT" | awk '$3 == "rx-packets" || $3 == "tx-packets"' | tee "$VMX_TMP/qq"
	rx=$(grep -c '^rx ' "$VMX_TMP/qq"); tx=$(grep -c '^tx ' "$VMX_TMP/qq")
	echo "combined channels $ch: $rx RX and $tx TX queues in qstats-get"
	[ "$rx" = "$ch" ] && [ "$tx" = "$ch" ]
}

# The device totals agree with the rtnl counters: qstats, rtnl, qstats
# again; each rtnl value must lie between the two qstats ones.
qstats_match_rtnl() {
	local a=() s=() b=() i rc=0 names=(rx-packets tx-packets rx-bytes tx-bytes)
	read -r -a a <<<"$(qstats_totals "$DUT")"
	read -r -a s <<<"$(dut_counters)"
	read -r -a b <<<"$(qstats_totals "$DUT")"
	[ ${#a[@]} = 4 ] && [ ${#b[@]} = 4 ] || { echo "qstats-get gave no totals"; return 1; }
	for i in 0 1 2 3; do
		echo "${names[i]}: qstats ${a[i]} .. ${b[i]}, rtnl ${s[i]}"
		[ "${a[i]}" -le "${s[i]}" ] && [ "${s[i]}" -le "${b[i]}" ] || rc=1
	done
	return $rc
}

# 200 pings: qstats rx-packets and tx-packets grow by at least 200 each.
qstats_count_traffic() {
	local a=() b=()
	read -r -a a <<<"$(qstats_totals "$DUT")"
	peer_ping -c 200 -i 0.005 -q "$DUT_IP" || return 1
	read -r -a b <<<"$(qstats_totals "$DUT")"
	[ ${#a[@]} = 4 ] && [ ${#b[@]} = 4 ] || { echo "qstats-get gave no totals"; return 1; }
	echo "qstats rx-packets +$((b[0] - a[0])), tx-packets +$((b[1] - a[1])) for 200 pings"
	[ $((b[0] - a[0])) -ge 200 ] && [ $((b[1] - a[1])) -ge 200 ]
}

# Totals survive a channel change (the per-queue counters carry over).
qstats_keep_totals() {
	local a b ch
	ch=$(combined)
	a=$(qstats_totals "$DUT") || return 1
	ethtool -L "$DUT" combined 1 && wait_carrier "$DUT" 10 || return 1
	qstats_queues || return 1
	ethtool -L "$DUT" combined "$ch" && wait_carrier "$DUT" 10 || return 1
	b=$(qstats_totals "$DUT") || return 1
	echo "rx/tx packets, rx/tx bytes: $a before combined 1 -> $ch, $b after"
	not_backwards "$a" "$b"
}

if have_qstats; then
	check "qstats-get: one RX and one TX queue per channel" qstats_queues
	check "qstats-get device totals agree with the rtnl counters" qstats_match_rtnl
	check "qstats-get counts 200 pings both ways" qstats_count_traffic
	check "qstats-get totals do not go back across combined 1 and back" qstats_keep_totals
else
	skip "qstats-get" "no netdev qstats-get in kernel $(uname -r) (6.10+)"
fi

# ------------------------------------------------ LRO and XDP
lro_state() { ethtool -k "$DUT" | sed -n 's/^large-receive-offload: //p'; }
lro_is() {
	local s
	s=$(lro_state)
	echo "large-receive-offload: $s"
	[ "${s%% *}" = "$1" ]
}
lro_forced_off() {
	ethtool -K "$DUT" lro on || return 1
	lro_is on || return 1
	xdp_attach "$DUT" xdp_pass || return 1
	echo "attached:"
	lro_is off || return 1
	ethtool -K "$DUT" lro on 2>&1
	echo "after ethtool -K lro on while attached:"
	lro_is off
}
lro_restored() {
	xdp_detach "$DUT" || return 1
	wait_carrier "$DUT" 10 || return 1
	lro_is on
}
lro_user_off_kept() {
	ethtool -K "$DUT" lro off || return 1
	xdp_attach "$DUT" xdp_pass || return 1
	xdp_detach "$DUT" || return 1
	wait_carrier "$DUT" 10 || return 1
	echo "LRO off before attach, after detach:"
	lro_is off
}
# every vmxnet3 revision offers LRO and both drivers let it change: only
# the device may take it away
if lro_offered "$(lro_state)" "LRO forced off while XDP is attached"; then
	check "LRO on, then attach: ethtool -k shows LRO off, -K lro on keeps it off" lro_forced_off
	check "detach: LRO on again" lro_restored
	check "LRO off by the user before attach stays off after detach" lro_user_off_kept
	ethtool -K "$DUT" lro on
	wait_carrier "$DUT" 10 >/dev/null
fi
check "ping after the LRO changes" ping_ok

# ------------------------------------------------ XDP_PASS after adjust
# pass_run ADDR PORT MODE [--encap] [--dev IF]: the peer sends N frames
# to ADDR:PORT (on the DUT's MAC); a UDP socket on the DUT must get each
# payload as MODE says (xdp_pass_pkt.py recv).
pass_run() {
	local addr=$1 port=$2 mode=$3 enc="" dev=() rpid rc=0 p0 p1
	shift 3
	[ "${1:-}" = --encap ] && { enc=--encap; shift; }
	[ "${1:-}" = --dev ] && dev=(--dev "$2")
	# the receiver gives up after 4 s without a datagram: the sender's
	# Python start alone took longer than that on the debug kernel
	listen_start "$VMX_TMP/precv" listening python3 "$PP" recv "$addr" "$port" $N "$mode" \
		--timeout "$(scaled 4)" "${dev[@]}" || return 1
	rpid=$LISTEN_PID
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	pexec python3 "$PP" send "$PEER" "$(mac_of "$DUT")" "$addr" "$port" $N $enc || rc=1
	wait "$rpid" || rc=1
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	grep -v '^listening' "$VMX_TMP/precv"
	echo "rxN_xdp_pass +$((p1 - p0))"
	return $rc
}
# passed_all CMD...: CMD passes and rxN_xdp_pass grew by at least N.
pass_counted() {
	"$@" | tee "$VMX_TMP/pout"
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	[ "$(sed -n 's/^rxN_xdp_pass +//p' "$VMX_TMP/pout")" -ge $N ]
}

check "no program: encapsulated frames reach no socket" \
	pass_run "$DUT_IP" 7790 none --encap
ip link add link "$DUT" name "$DUT.$PASS_VID" type vlan id $PASS_VID &&
	ip addr add "$VLAN_IP/24" dev "$DUT.$PASS_VID" && ip link set "$DUT.$PASS_VID" up
sysctl -qw net.ipv4.conf.all.rp_filter=0 "net.ipv4.conf.$DUT.rp_filter=0" \
	"net.ipv4.conf.$DUT/$PASS_VID.rp_filter=0" 2>/dev/null
check "no program: untagged frames to $VLAN_IP do not arrive on $DUT.$PASS_VID" \
	pass_run "$VLAN_IP" $PORT_PASS_VLAN none --dev "$DUT.$PASS_VID"
if check "xdp_pass_adjust attached natively" xdp_attach "$DUT" xdp_pass_adjust; then
	check "adjust_head +8 (strip encapsulation), XDP_PASS: $N datagrams exact at a socket" \
		pass_counted pass_run "$DUT_IP" 7790 exact --encap
	vlan_rx() {
		local v0 v1
		v0=$(stat_of "$DUT.$PASS_VID" rx_packets)
		pass_counted pass_run "$VLAN_IP" $PORT_PASS_VLAN exact --dev "$DUT.$PASS_VID" || return 1
		v1=$(stat_of "$DUT.$PASS_VID" rx_packets)
		echo "$DUT.$PASS_VID rx_packets +$((v1 - v0))"
		[ $((v1 - v0)) -ge $N ]
	}
	check "adjust_head -4 (push VLAN $PASS_VID tag), XDP_PASS: $N datagrams exact on $DUT.$PASS_VID" \
		vlan_rx
	check "adjust_tail +24, XDP_PASS: $N datagrams with the 24 bytes appended" \
		pass_counted pass_run "$DUT_IP" $PORT_PASS_TAIL_GROW tail-grow
	check "adjust_tail -10, XDP_PASS: $N datagrams with 10 bytes cut" \
		pass_counted pass_run "$DUT_IP" $PORT_PASS_TAIL_SHRINK tail-shrink
	check "ping with xdp_pass_adjust attached" ping_ok
	xdp_detach "$DUT"
fi
ip link del "$DUT.$PASS_VID" 2>/dev/null

# ------------------------------------------------ unknown XDP action
TR=/sys/kernel/tracing
[ -d "$TR/events" ] || mount -t tracefs nodev "$TR" 2>/dev/null
unknown_action() {
	local a x ev rc=0
	echo 0 >"$TR/tracing_on"; echo >"$TR/trace"
	echo 1 >"$TR/events/xdp/xdp_exception/enable" || return 1
	echo 1 >"$TR/tracing_on"
	# frames the program saw and did not pass (ARP etc. pass meanwhile):
	# both counters from one ethtool -S read on each side, so a frame
	# passed between two reads cannot skew the difference
	snap "$DUT" >"$VMX_TMP/u0"
	pass_run "$DUT_IP" $PORT_UNKNOWN_ACT none || rc=1
	snap "$DUT" >"$VMX_TMP/u1"
	a=$(sdelta "$VMX_TMP/u0" "$VMX_TMP/u1" 'rx[0-9]+_xdp_aborted')
	x=$(( $(sdelta "$VMX_TMP/u0" "$VMX_TMP/u1" 'rx[0-9]+_xdp_packets') -
	      $(sdelta "$VMX_TMP/u0" "$VMX_TMP/u1" 'rx[0-9]+_xdp_pass') ))
	echo 0 >"$TR/events/xdp/xdp_exception/enable"
	ev=$(grep -c "xdp_exception: prog_id=[0-9]* action=0x2a ifindex=$IFX" "$TR/trace")
	grep -m 1 xdp_exception "$TR/trace"
	echo "rxN_xdp_aborted +$a, rxN_xdp_packets not passed +$x," \
	     "xdp_exception events with action 42: $ev (want $N each)"
	dmesg | grep -m 1 'XDP return value 42'
	[ "$a" = $N ] && [ "$x" = $N ] && [ "$ev" = $N ] || rc=1
	return $rc
}
if check "xdp_unknown_act attached natively" xdp_attach "$DUT" xdp_unknown_act; then
	check "action 42: dropped, counted as aborted and by xdp:xdp_exception" unknown_action
	check "ping with xdp_unknown_act attached (other frames pass)" ping_ok
	xdp_detach "$DUT"
fi
check "ping after detach" ping_ok
check_pp_settled "no page_pool left with pages in flight"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

vmx_done
