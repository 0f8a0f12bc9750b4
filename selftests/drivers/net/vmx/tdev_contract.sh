#!/usr/bin/env bash
# tdev_contract.sh - what vmx tells the stack, held against what the test
# device did:
#  - rxhash: with "ethtool -K DUT rxhash off" no skb carries a hash; with
#    it on every TCP and UDP skb carries one, of an L4 type for TCP (for
#    UDP where "ethtool -n DUT rx-flow-hash udp4" says the device hashes
#    its ports, else of an L3 type). progs/tc_rxhash.c on the DUT's
#    ingress reads __sk_buff->hash (skb->hash as the driver left it, no
#    software hash computed for the read) and whether
#    bpf_get_hash_recalc() keeps it (it keeps an L4 hash, replaces an L3
#    one). Needs a device that hashes: the test device with RSS over 2+
#    queues;
#  - stack TX packets counted when the device completes them, not when
#    they are posted: on a NIC whose device completes TX long after the
#    doorbell (tx-delay-us of 1 s, far above vmx's bounded wait for
#    completions, VMX_TX_SETTLE_MS: 20 ms), pktgen fills TX queue 0 for
#    0.3 s, then ip link set down: the wait ends with nothing completed
#    and QUIESCE throws the frames away. tx_packets (rtnl) and the
#    txN_packets sum (ethtool -S, what qstats reports) must grow by what
#    the device sent (stat-tx-queueN), not by what was handed to it.
# (The channel-count checks, xsk-zerocopy in xdp-features and XDP on
# shared stack queues, need a device without TX room for XDP queues:
# tdev_queues.sh, group tdevrev.)
#
# Topology: group tdevx: the DUT a test-device NIC with rss=on and 2
# vCPUs (2 queues), and a test-device NIC with tx-delay-us=1000000 (the
# first vmx NIC whose tx-delay-us is above 200000; no address on it, IPv6
# off, so that nothing but the burst is sent). Each part SKIPs without its
# NIC; everything SKIPs on QEMU's stock vmxnet3.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
NIC=$(testdev_nic_of "$DUT") && testdev_nics | grep -qx "$NIC" ||
	{ skip "stack contract on the test device" "$DUT is QEMU's stock vmxnet3, not the test device (vm.sh --nic vmxnet3t)"; vmx_done; }
NQ=$(combined_channels "$DUT")
log "$DUT: test device $NIC ($(testdev_prop "$NIC" rss | sed 's/^/rss=/'), tx-delay-us=$(testdev_prop "$NIC" tx-delay-us | grep . || echo 0)), revision $(dut_revision), $NQ channels"

# ------------------------------------------------ rxhash
RXH_PORT=7803	# progs/tc_rxhash.c
RXH_MAP=
rxh_setup() {
	local id
	tc qdisc add dev "$DUT" clsact || return 1
	id=$(tc_ingress_load "$DUT" tc_rxhash) || return 1
	RXH_MAP=$(prog_map_id "$id" array) || { echo "tc_rxhash has no array map"; return 1; }
}
# rxh_counts: tc_rxhash's six counters (TCP skbs, with a hash, with an L4
# hash, the same for UDP)
rxh_counts() {
	bpftool map dump id "$RXH_MAP" -j | python3 -c '
import json, sys
v = [0] * 6
for e in json.load(sys.stdin):
    f = e.get("formatted")
    if f:
        k, x = int(f["key"]), int(f["value"])
    else:
        k = int.from_bytes(bytes(int(b, 16) for b in e["key"]), "little")
        x = int.from_bytes(bytes(int(b, 16) for b in e["value"]), "little")
    v[k] = x
print(*v)'
}
udp_l4() { ethtool -n "$DUT" rx-flow-hash udp4 2>/dev/null | grep -q 'L4 bytes'; }
# rxh_check on|off: 6 TCP connection attempts (one SYN each, a new source
# port each: the port is closed) and 6 UDP datagrams from the peer to
# RXH_PORT, with rxhash on or off.
rxh_check() {
	local a b dd=() i udpw=0
	ethtool -K "$DUT" rxhash "$1" || return 1
	ethtool -k "$DUT" | grep '^receive-hashing:'
	read -r -a a <<<"$(rxh_counts)"
	for i in 1 2 3 4 5 6; do
		pexec timeout 2 bash -c "exec 3<>/dev/tcp/$DUT_IP/$RXH_PORT" 2>/dev/null
	done
	udp_send --ns "$PEER_NS" "$DUT_IP" $RXH_PORT 6 || return 1
	sleep 0.3
	read -r -a b <<<"$(rxh_counts)"
	[ ${#a[@]} = 6 ] && [ ${#b[@]} = 6 ] || { echo "tc_rxhash counters unreadable: '${a[*]}' '${b[*]}'"; return 1; }
	for i in 0 1 2 3 4 5; do dd[i]=$((b[i] - a[i])); done
	echo "TCP skbs +${dd[0]}, with a hash +${dd[1]}, L4 hash +${dd[2]};" \
		"UDP skbs +${dd[3]}, with a hash +${dd[4]}, L4 hash +${dd[5]}"
	[ "${dd[0]}" -ge 6 ] && [ "${dd[3]}" -ge 6 ] || { echo "want 6 TCP and 6 UDP skbs at least"; return 1; }
	if [ "$1" = off ]; then
		[ "${dd[1]}" = 0 ] && [ "${dd[4]}" = 0 ] || { echo "skbs with a hash although rxhash is off"; return 1; }
		return 0
	fi
	udp_l4 && udpw=${dd[3]}
	echo "rx-flow-hash udp4: $(ethtool -n "$DUT" rx-flow-hash udp4 2>/dev/null | grep -c 'L4 bytes' | sed 's/^0$/IP addresses only: L3 hash/;s/^[1-9].*/ports too: L4 hash/')"
	[ "${dd[1]}" = "${dd[0]}" ] && [ "${dd[4]}" = "${dd[3]}" ] || { echo "want a hash on every skb"; return 1; }
	[ "${dd[2]}" = "${dd[0]}" ] || { echo "want an L4 hash on every TCP skb"; return 1; }
	[ "${dd[5]}" = "$udpw" ] || { echo "want an L4 hash on $udpw UDP skbs"; return 1; }
}
if [ "$(testdev_prop "$NIC" rss)" != on ] || [ "${NQ:-1}" -lt 2 ]; then
	skip "rxhash on and off" "$NIC hashes nothing (rss=$(testdev_prop "$NIC" rss), $NQ channels): needs rss=on and 2+ queues"
elif check "tc_rxhash on $DUT ingress (clsact, direct action)" rxh_setup; then
	check "rxhash on: every TCP and UDP skb has the device's hash (L4 for TCP)" rxh_check on
	check "rxhash off: no skb has a hash" rxh_check off
	ethtool -K "$DUT" rxhash on
	tc qdisc del dev "$DUT" clsact
fi

# ------------------------------------------------ TX counted at completion
# tx_counts IF: "tx_packets txN_packets-sum device-sent device-doorbells"
tx_counts() {
	local q n d=0 v
	n=$(combined_channels "$1")
	for ((q = 0; q < n; q++)); do
		v=$(testdev_stat "$1" "tx-queue$q") || return 1
		d=$((d + v))
	done
	echo "$(stat_of "$1" tx_packets) $(estat "$1" 'tx[0-9]+_packets') $d $(testdev_stat "$1" tx-doorbells)"
}
tx_thrown() {
	local s=$1 a b rc=0 sent drv sum dev db pid
	sysctl -qw "net.ipv6.conf.$s.disable_ipv6=1"
	ip link set "$s" up && wait_carrier "$s" 10 || return 1
	pg_setup "$s" 0 || { echo "pktgen setup failed"; return 1; }
	read -r -a a <<<"$(tx_counts "$s")"
	# (a counted run would wait for its last frame's completion, 1 s)
	_pgd pgctrl start &
	pid=$!
	_vmx_bg+=("$pid")
	sleep 0.3
	ip link set "$s" down
	_pgd pgctrl stop
	wait "$pid"
	sent=$(pg_sent "$s")
	# up again for the per-queue counters (nothing is sent: no address,
	# IPv6 off)
	ip link set "$s" up && wait_carrier "$s" 10 || rc=1
	read -r -a b <<<"$(tx_counts "$s")"
	ip link set "$s" down
	[ ${#a[@]} = 4 ] && [ ${#b[@]} = 4 ] || { echo "counters unreadable: '${a[*]}' '${b[*]}'"; return 1; }
	drv=$((b[0] - a[0])) sum=$((b[1] - a[1])) dev=$((b[2] - a[2])) db=$((b[3] - a[3]))
	echo "pktgen handed the driver $sent frames, then ip link set down;" \
		"device: TXPROD doorbells +$db, frames sent +$dev"
	echo "driver: tx_packets +$drv, txN_packets +$sum"
	[ "$db" -gt 0 ] || { echo "the frames never reached the device"; rc=1; }
	[ $((sent - dev)) -ge 32 ] || { echo "fewer than 32 frames thrown away (the device completed them in time): the check proves little"; rc=1; }
	[ "$drv" = "$dev" ] || { echo "tx_packets +$drv, but the device sent $dev"; rc=1; }
	[ "$sum" = "$dev" ] || { echo "txN_packets +$sum, but the device sent $dev"; rc=1; }
	return $rc
}
SLOW=$(testdev_iface_with tx-delay-us 200000)
if ! have_hmp; then
	skip "TX counted at completion" "no QEMU monitor in the guest (vm.sh --guest-monitor)"
elif [ -z "$SLOW" ]; then
	skip "TX counted at completion" "no test-device NIC with tx-delay-us above 200000 (vm.sh --nic vmxnet3t:tx-delay-us=1000000)"
else
	log "$SLOW: test device $(testdev_nic_of "$SLOW"), tx-delay-us=$(testdev_prop "$(testdev_nic_of "$SLOW")" tx-delay-us)"
	check "TX queue filled, ip link set down before the device sent it: tx_packets = what the device sent" tx_thrown "$SLOW"
fi
vmx_done
