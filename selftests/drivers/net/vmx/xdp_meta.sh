#!/usr/bin/env bash
# xdp_meta.sh - XDP metadata reaches the stack on XDP_PASS: progs/xdp_meta
# (native XDP) writes a 4-byte magic with bpf_xdp_adjust_meta in front of
# UDP frames to port XDP_PORT_META and passes them; progs/tc_meta (tc clsact
# ingress, direct action) counts those frames with the magic in
# skb->data_meta and those without. The driver must hand the metadata the
# program left to the skb (skb_metadata_set). Control: without the XDP
# program the same frames are counted as without metadata, so the tc side
# tells the two apart.
# vmx-timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

PORT_META=$XDP_PORT_META	# progs/xdp_common.h
N=20

xdp_setup
TCMAP=

tc_setup() {
	local id
	tc qdisc add dev "$DUT" clsact || return 1
	id=$(tc_ingress_load "$DUT" tc_meta) || return 1
	tc filter show dev "$DUT" ingress
	TCMAP=$(prog_map_id "$id" array) || { echo "tc_meta has no array map"; return 1; }
	bpftool map show id "$TCMAP"
}
check "tc_meta on $DUT ingress (clsact, direct action)" tc_setup || vmx_done

# meta_cnt KEY: counter KEY (0 with metadata, 1 without) of tc_meta.
meta_cnt() {
	# shellcheck disable=SC2046 # u32_le prints four words
	bpftool map lookup id "$TCMAP" key $(u32_le "$1") -j |
		python3 -c 'import json,sys; d=json.load(sys.stdin); v=d.get("value", d.get("formatted", {}).get("value"))
print(v if isinstance(v, int) else int.from_bytes(bytes(int(x, 0) for x in v), "little"))'
}

# sent_with EXPECT: N UDP datagrams from the peer to port PORT_META; tc_meta
# must count all N as EXPECT (ok: with the magic, bad: without) and none
# the other way.
sent_with() {
	local ok0 bad0 ok1 bad1
	ok0=$(meta_cnt 0); bad0=$(meta_cnt 1)
	udp_send --ns "$PEER_NS" "$DUT_IP" $PORT_META $N || return 1
	sleep 0.5
	ok1=$(meta_cnt 0); bad1=$(meta_cnt 1)
	echo "tc_meta: with metadata +$((ok1 - ok0)), without +$((bad1 - bad0)) of $N sent"
	if [ "$1" = ok ]; then
		[ $((ok1 - ok0)) = $N ] && [ $((bad1 - bad0)) = 0 ]
	else
		[ $((bad1 - bad0)) = $N ] && [ $((ok1 - ok0)) = 0 ]
	fi
}

check "without XDP: tc_meta sees no metadata (control)" sent_with bad

meta_attach() {
	xdp_attach "$DUT" xdp_meta || return 1
	xdp_native "$DUT" xdp_meta
}
check "xdp_meta attached natively" meta_attach
runs() {
	local r0=$1 r1
	r1=$(prog_run_cnt "$(xdp_prog_id "$DUT")")
	echo "xdp_meta run_cnt $r0 -> $r1"
	[ $((r1 - r0)) -ge $N ]
}
r0=$(prog_run_cnt "$(xdp_prog_id "$DUT")")
check "XDP_PASS keeps the metadata xdp_meta wrote (skb->data_meta)" sent_with ok
check "xdp_meta ran on the frames" runs "$r0"
check "ping with xdp_meta attached" peer_ping -c 3 -i 0.2 "$DUT_IP"
check "xdp_meta detached" xdp_detach "$DUT"
check "after detach: no metadata again" sent_with bad
tc qdisc del dev "$DUT" clsact 2>/dev/null

vmx_done
