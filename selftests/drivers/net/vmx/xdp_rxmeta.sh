#!/usr/bin/env bash
# xdp_rxmeta.sh - XDP RX metadata kfuncs (xmo_rx_hash, xmo_rx_vlan_tag):
# progs/xdp_rxmeta.c, loaded device-bound (bpftool prog load ...
# xdpmeta_dev), records per flow what bpf_xdp_metadata_rx_hash and
# bpf_xdp_metadata_rx_vlan_tag return for TCP and UDP frames from the peer
# to port 7800; progs/tc_rxmeta.c records the hash and VLAN tag the stack
# got on the skb for the same frames; xdp_rxmeta.py compares:
#  - on the test device with RSS over 2+ queues: every frame's hash is the
#    Toeplitz hash of its flow under the key ethtool -x shows, over the
#    4-tuple for TCP (type XDP_RSS_TYPE_L4_IPV4_TCP) and over what
#    ethtool -n rx-flow-hash udp4 says for UDP, and the skb has the same;
#  - where the device computes no hash (QEMU's stock vmxnet3: no RSS):
#    -ENODATA;
#  - VLAN tag with rx-vlan-offload on: 0, 802.1Q and the peer's VID, the
#    same tag on the skb; untagged frames -ENODATA; with rx-vlan-offload
#    off: -ENODATA and the tag left in the frame (every vmxnet3 device
#    strips tags on request: rx-vlan-offload fixed fails, as in vlan.sh).
# Kernel 6.1 has no XDP metadata kfuncs (6.3+; the VLAN one 6.8+): SKIP.
#
# Topology: tools/vm.sh --nic vmxnet3[t] ... --nic virtio (groups xdp,
# core61, tdev).
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

RXM=$VMX_LIB_DIR/xdp_rxmeta.py
PORT=7800	# progs/rxmeta_common.h RXM_PORT
VID=42

if ! kernel_at_least 6 8; then
	if kernel_at_least 6 3; then
		skip "XDP RX metadata kfuncs" "no bpf_xdp_metadata_rx_vlan_tag before 6.8 (kernel $(uname -r))"
	else
		skip "XDP RX metadata kfuncs" "no XDP metadata kfuncs before 6.3 (kernel $(uname -r))"
	fi
	vmx_done
fi

xdp_setup

# What the device gives: a hash on the test device with RSS over 2+ RX
# queues, none on QEMU's stock vmxnet3 (no RSS at all).
NQ=$(combined_channels "$DUT")
NIC=$(testdev_nic_of "$DUT" 2>/dev/null)
if testdev_nics | grep -qx "${NIC:-none}"; then
	if [ "$(testdev_prop "$NIC" rss)" = on ] && [ "${NQ:-1}" -ge 2 ]; then
		HASH="hash"
	elif [ "$(testdev_prop "$NIC" rss)" = on ]; then
		HASH=
	else
		HASH=nodata
	fi
	DEVDESC="test device $NIC, rss=$(testdev_prop "$NIC" rss), $NQ queues"
else
	HASH=nodata
	DEVDESC="QEMU's stock vmxnet3 (no RSS)"
fi
log "$DUT: $DEVDESC, revision $(dut_revision): rx_hash expected: ${HASH:-not checked}"

# ------------------------------------------------ programs
TCMAP=""
XMAP=""
tc_setup() {
	local id
	tc qdisc add dev "$DUT" clsact || return 1
	id=$(tc_ingress_load "$DUT" tc_rxmeta) || return 1
	TCMAP=$(prog_map_id "$id" hash) || { echo "tc_rxmeta has no hash map"; return 1; }
}
check "tc_rxmeta on $DUT ingress (clsact, direct action)" tc_setup || vmx_done

# bpftool pins what it loads: on a bpffs of this test's own, unmounted
# once the program is attached.
xdp_load() {
	local id rc=0 fs=$VMX_TMP/bpffs
	mkdir -p "$fs" && mount -t bpf bpf "$fs" || return 1
	if bpftool prog load "$(xdp_obj xdp_rxmeta)" "$fs/rxmeta" type xdp xdpmeta_dev "$DUT"; then
		ip link set dev "$DUT" xdpdrv pinned "$fs/rxmeta" || rc=1
	else
		echo "bpftool prog load ... xdpmeta_dev $DUT failed"; rc=1
	fi
	umount "$fs"
	[ $rc = 0 ] && xdp_native "$DUT" xdp_rxmeta || return 1
	id=$(xdp_prog_id "$DUT")
	bpftool prog show id "$id"
	XMAP=$(prog_map_id "$id" hash) || { echo "xdp_rxmeta has no hash map"; return 1; }
}
check "xdp_rxmeta loaded device-bound (xdpmeta_dev $DUT) and attached natively" xdp_load || vmx_done

# ------------------------------------------------ traffic and checks
modprobe 8021q
ip link add link "$DUT" name "$DUT.$VID" type vlan id $VID
ip addr add "10.99.$VID.1/24" dev "$DUT.$VID"
ip link set "$DUT.$VID" up
pexec ip link add link "$PEER" name "vl$VID" type vlan id $VID
pexec ip addr add "10.99.$VID.2/24" dev "vl$VID"
pexec ip link set "vl$VID" up

# flows: 6 TCP connection attempts (one SYN each: the port is closed) and
# 6 UDP datagrams (a new source port each) to the DUT, the same over the
# VLAN when $1 is "vlan".
flows() {
	local dst i
	for dst in "$DUT_IP" ${1:+"10.99.$VID.1"}; do
		for i in 1 2 3 4 5 6; do
			pexec timeout 2 bash -c "exec 3<>/dev/tcp/$dst/$PORT" 2>/dev/null
		done
		udp_send --ns "$PEER_NS" "$dst" $PORT 6 || return 1
	done
	sleep 0.3
}
map_clear() {
	local m k
	for m in "$XMAP" "$TCMAP"; do
		for k in $(bpftool map dump id "$m" -j | python3 -c '
import json, sys
for e in json.load(sys.stdin): print("".join(x[2:] for x in e["key"]))'); do
			# shellcheck disable=SC2046 # the key's four bytes
			bpftool map delete id "$m" key hex $(echo "$k" | sed 's/../& /g')
		done
	done
}
rss_key() { ethtool -x "$DUT" | awk '/^RSS hash key:/ { getline; print; exit }'; }
udp_l4() { ethtool -n "$DUT" rx-flow-hash udp4 2>/dev/null | grep -q 'L4 bytes'; }

# verify HASH VLAN: flows, then xdp_rxmeta.py over both maps.
verify() {
	local opts=()
	[ "$1" = hash ] && opts+=(--key "$(rss_key)")
	[ "$1" = hash ] && udp_l4 && opts+=(--udp-l4)
	map_clear
	flows "$([ "$2" = none ] || echo vlan)" || return 1
	bpftool map dump id "$XMAP" -j >"$VMX_TMP/xmap" || return 1
	bpftool map dump id "$TCMAP" -j >"$VMX_TMP/tcmap" || return 1
	python3 "$RXM" "$VMX_TMP/xmap" "$VMX_TMP/tcmap" "$1" "$2" "${opts[@]}"
}

vlan_offload() { ethtool -k "$DUT" | sed -n 's/^rx-vlan-offload: //p'; }
ethtool -K "$DUT" rx-vlan-offload on 2>/dev/null
case "$HASH" in
hash)
	check "rx_hash: Toeplitz hash of each flow (RSS key of ethtool -x), TCP type L4_IPV4_TCP, = skb hash" \
		verify hash none ;;
nodata)
	check "rx_hash: -ENODATA ($DEVDESC)" verify nodata none ;;
*)
	skip "rx_hash" "$DEVDESC: whether the device hashes with one queue is not fixed" ;;
esac
if [ "$(vlan_offload)" = on ]; then
	check "rx_vlan_tag with rx-vlan-offload on: VID $VID for tagged flows, = skb tag; -ENODATA untagged" \
		verify "${HASH:-nodata}" "$VID"
else
	fail "rx_vlan_tag with rx-vlan-offload on" "rx-vlan-offload is '$(vlan_offload)'"
fi
case "$(vlan_offload)" in
""|*fixed*)
	# every vmxnet3 device strips tags and vmx and the in-tree driver
	# both let that change (vlan.sh): fixed or not listed fails
	fail "rx_vlan_tag with rx-vlan-offload off" \
		"rx-vlan-offload not changeable: '$(vlan_offload)' (the driver offers what every vmxnet3 device offers)" ;;
*)
	if ethtool -K "$DUT" rx-vlan-offload off; then
		check "rx_vlan_tag with rx-vlan-offload off: -ENODATA, the tag stays in the frame" \
			verify "${HASH:-nodata}" "$VID:inline"
		ethtool -K "$DUT" rx-vlan-offload on
	else
		fail "rx_vlan_tag with rx-vlan-offload off" "ethtool -K rx-vlan-offload off failed"
	fi ;;
esac

check "ping with xdp_rxmeta attached" peer_ping -c 3 -i 0.2 "$DUT_IP"
check "xdp_rxmeta detached" xdp_detach "$DUT"
tc qdisc del dev "$DUT" clsact 2>/dev/null
ip link del "$DUT.$VID" 2>/dev/null
check "ping after detach" peer_ping -c 3 -i 0.2 "$DUT_IP"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

vmx_done
