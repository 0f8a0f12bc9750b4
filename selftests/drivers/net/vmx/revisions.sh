#!/usr/bin/env bash
# revisions.sh - one guest, one test-device NIC per offered revision (group
# tdevrev: max-revision 1, 3, 4, 6, 7, 9, and 9 with capabilities and
# disabled offloads): each NIC negotiates the highest revision offered
# (ethtool -i, the probe log line), never issues a command above it (the
# device's stat-bad-rev-commands), gets the revision's limits (MTU 9190
# from 6), its revision-gated controls work or are refused by revision
# (coalescing from 3, rx-flow-hash from 4: UDP ports hashed where the
# device grants them, kept across down/up), from 7 logs the capabilities
# offered and granted (only what was asked for), at 9 leaves out the
# offloads the device disabled; each comes up and carries traffic to the
# peer with its TXPROD doorbells where the device decodes them (the
# large-BAR offsets when LARGE_BAR is offered: device counters
# stat-bar0-txprod and stat-bar0-unknown), RX producer writes only where
# the device asks for them (update-rx-prod: stat-bar0-rxprod), and the RX
# data ring entry size the device gives at revision 9 (rxdata-size:
# stat-rx-data-ring at the entry size and one byte above). SKIPs without
# test-device NICs.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup --no-load
if ! have_testdev; then
	skip "revision negotiation 1..9" "no test-device NICs (stock QEMU offers revision 1 only; group tdevrev)"
	vmx_done
fi
dut_up_driver > "$VMX_TMP/up.out" 2>&1 || { diag < "$VMX_TMP/up.out"; bail "driver did not come up"; }

# Each vmx NIC in turn gets DUT_IP (the others none), so the peer's setup
# stays as lib.sh made it; the neighbour caches are flushed in between.
one_nic() {
	local ifc=$1 nic want rev bdf line mtu rc=0 bad0 bad1 caps lb=0 db0 db1 unk0 unk1 rp0 rp1 upd
	nic=$(testdev_nic_of "$ifc") || return 1
	want=$(testdev_prop "$nic" max-revision)
	rev=$(ethtool -i "$ifc" | sed -n 's/^firmware-version: vmxnet3 rev \([0-9]*\)$/\1/p')
	bdf=$(basename "$(readlink "/sys/class/net/$ifc/device")")
	line=$(dmesg | grep "vmx $bdf $ifc: vmxnet3 revision" | tail -n 1 | sed 's/^\[[^]]*\] //')
	[ -n "$line" ] || line=$(dmesg | grep "vmx $bdf" | grep "vmxnet3 revision" | tail -n 1 | sed 's/^\[[^]]*\] //')
	echo "$ifc ($nic, max-revision $want): ethtool -i rev $rev; log: $line"
	[ "$rev" = "$want" ] || { echo "negotiated $rev, offered up to $want"; rc=1; }
	[[ "$line" == *"revision $want,"* ]] || { echo "no probe line naming revision $want"; rc=1; }
	mtu=$(ip -d -j link show "$ifc" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["max_mtu"])')
	echo "max MTU $mtu"
	if [ "$want" -ge 6 ]; then [ "$mtu" = 9190 ] || rc=1; else [ "$mtu" = 9000 ] || rc=1; fi
	if [ "$want" -ge 7 ]; then
		caps=$(caps_line "$ifc")
		echo "capabilities: ${caps:-none logged}"
		[ -n "$caps" ] || rc=1
		local offered granted
		offered=$(testdev_prop "$nic" dcr0); offered=${offered:-0}
		granted=$(caps_granted "$caps")
		# vmx asks for UDP/ESP RSS (bits 0, 1, 9), the tunnel offloads
		# (2..7), LARGE_BAR (16) and out-of-order RX completions (17) only
		[ $((granted & ~offered)) = 0 ] && [ $((granted & ~0x302ff)) = 0 ] ||
			{ echo "granted $granted is not within offered $offered and asked 0x302ff"; rc=1; }
		# LARGE_BAR offered: vmx asks for it and rings the large-BAR doorbells
		if [ $((offered & 0x10000)) != 0 ]; then
			[ $((granted & 0x10000)) != 0 ] || { echo "LARGE_BAR offered but not asked for"; rc=1; }
			lb=1
		fi
	fi
	if [ "$want" -ge 9 ] && [ "$(testdev_prop "$nic" disabled-offloads)" = 3 ]; then
		ethtool -k "$ifc" | grep -E '^(tcp-segmentation-offload|large-receive-offload):'
		ethtool -k "$ifc" | grep -q '^large-receive-offload: off \[fixed\]' || rc=1
		ethtool -k "$ifc" | grep -q '^tcp-segmentation-offload: off' || rc=1
		dmesg | grep -q "vmx $bdf: the device disabled TSO" || { echo "no log line for the disabled TSO"; rc=1; }
	fi
	# the link speed the device reports (GET_LINK, Mbit/s; the test
	# device's link-speed, QEMU's 1000 by default), above 10G as well
	local speed want_speed
	want_speed=$(testdev_prop "$nic" link-speed); want_speed=${want_speed:-1000}
	speed=$(ethtool "$ifc" | sed -n 's/^[[:space:]]*Speed: \([0-9]*\)Mb\/s$/\1/p')
	echo "link speed: ethtool ${speed:-none}Mb/s, the device reports ${want_speed}Mb/s"
	[ "$speed" = "$want_speed" ] || rc=1
	if [ "$want" -ge 3 ]; then
		ethtool -c "$ifc" > /dev/null || { echo "ethtool -c refused at revision $want"; rc=1; }
	else
		ethtool -c "$ifc" > /dev/null 2>&1 && { echo "ethtool -c accepted at revision $want"; rc=1; }
	fi
	# the driver issues no command above the revision it negotiated
	bad0=$(testdev_stat "$nic" bad-rev-commands) || return 1
	# UDP ports in the RSS hash: asked with SET_RSS_FIELDS and taken only
	# as GET_RSS_FIELDS grants (from revision 4; from 7 only with the UDP
	# capability, DCR0 bit 0, granted), asked again at the activation of
	# the down/up below; refused below
	local udp=0 l4 out
	if [ "$want" -ge 7 ]; then
		l4=$(caps_granted "$(caps_line "$ifc")")
		[ $((${l4:-0} & 1)) = 1 ] && udp=1
	elif [ "$want" -ge 4 ]; then
		udp=1
	fi
	# (ethtool 6.1 exits 0 after this refusal, saying "Cannot change")
	out=$(ethtool -N "$ifc" rx-flow-hash udp4 sdfn 2>&1) && ! grep -qE 'Cannot|not supported' <<<"$out"
	case $?$udp in
	00) echo "udp4 sdfn accepted at revision $want without UDP RSS"; rc=1 ;;
	11) echo "udp4 sdfn refused at revision $want: $out"; rc=1 ;;
	esac
	ethtool -N "$ifc" rx-flow-hash tcp4 sdfn > /dev/null 2>&1
	ethtool -C "$ifc" adaptive-rx on > /dev/null 2>&1
	ip link set "$ifc" down; ip link set "$ifc" up
	wait_carrier "$ifc" 10 || { echo "no carrier"; rc=1; }
	l4=$(ethtool -n "$ifc" rx-flow-hash udp4 | grep -c "L4 bytes 0 & 1")
	echo "udp4 hash after down/up: $([ "$l4" -gt 0 ] && echo addresses and ports || echo addresses only) (UDP RSS $([ "$udp" = 1 ] && echo granted || echo not offered))"
	[ "$l4" -gt 0 ] && [ "$udp" = 0 ] && rc=1
	[ "$l4" = 0 ] && [ "$udp" = 1 ] && rc=1
	[ "$udp" = 1 ] && { ethtool -N "$ifc" rx-flow-hash udp4 sd || rc=1; }
	bad1=$(testdev_stat "$nic" bad-rev-commands) || return 1
	echo "commands above the revision: $bad1 (+$((bad1 - bad0)) in this check)"
	[ "$bad1" = 0 ] || rc=1
	# traffic: this NIC alone has the DUT address. The device counts the
	# TXPROD writes at the offsets it decodes (0x600 + 8q; 0x1000 + 8q once
	# LARGE_BAR is granted) and every BAR0 write that decodes to nothing
	# (the small-BAR doorbell of a large BAR) in stat-bar0-unknown.
	db0=$(testdev_stat "$nic" bar0-txprod) || return 1
	unk0=$(testdev_stat "$nic" bar0-unknown) || return 1
	ip addr flush dev "$ifc"
	ip addr add "$DUT_IP/24" dev "$ifc"
	pexec ip neigh flush dev "$PEER"
	ip neigh flush dev "$ifc"
	rp0=$(testdev_stat "$nic" bar0-rxprod) || return 1
	dut_ping -c 3 -i 0.2 "$PEER_IP" || rc=1
	rp1=$(testdev_stat "$nic" bar0-rxprod) || return 1
	db1=$(testdev_stat "$nic" bar0-txprod) || return 1
	unk1=$(testdev_stat "$nic" bar0-unknown) || return 1
	echo "TXPROD doorbells at the $([ $lb = 1 ] && echo large || echo small)-BAR offsets: +$((db1 - db0)); BAR0 writes decoding to nothing: +$((unk1 - unk0))"
	[ $((db1 - db0)) -gt 0 ] || { echo "no TXPROD doorbell reached the device"; rc=1; }
	[ "$unk1" = "$unk0" ] || rc=1
	# RX producer writes only where the device asks for them (the queue's
	# updateRxProd, set by the test device's update-rx-prod): the refills
	# of the replies then ring RXPROD, otherwise nothing does
	upd=$(testdev_prop "$nic" update-rx-prod)
	echo "update-rx-prod ${upd:-off}: RXPROD writes during the pings +$((rp1 - rp0))"
	if [ "$upd" = on ]; then
		[ $((rp1 - rp0)) -gt 0 ] || { echo "the device asked for RX producer writes and got none"; rc=1; }
	else
		[ "$rp1" = "$rp0" ] || { echo "RX producer writes the device did not ask for"; rc=1; }
	fi
	# the RX data ring (rev 3+; its entry size from the device at rev 9,
	# 128 bytes before): replies of exactly the entry size come through
	# it, one byte longer through ring 0
	if [ "$want" -ge 3 ]; then
		local ds=128 d0 d1 d2
		[ "$want" -ge 9 ] && ds=$(testdev_prop "$nic" rxdata-size) && ds=${ds:-128}
		d0=$(testdev_stat "$nic" rx-data-ring) || return 1
		dut_ping -c 3 -i 0.2 -s $((ds - 42)) "$PEER_IP" >/dev/null || rc=1
		d1=$(testdev_stat "$nic" rx-data-ring) || return 1
		dut_ping -c 3 -i 0.2 -s $((ds - 41)) "$PEER_IP" >/dev/null || rc=1
		d2=$(testdev_stat "$nic" rx-data-ring) || return 1
		echo "RX data ring of $ds-byte entries: +$((d1 - d0)) frames for 3 $ds-byte replies, +$((d2 - d1)) for 3 of $((ds + 1)) bytes"
		# (small frames of other traffic may come through it too)
		[ $((d1 - d0)) -ge 3 ] && [ $((d2 - d1)) -lt 3 ] || rc=1
	fi
	ip addr flush dev "$ifc"
	return $rc
}

read -r -a IFS_VMX <<< "$(dut_ifaces | xargs)"
NT=$(testdev_nics | wc -l)
check "vmx took every test-device NIC (${#IFS_VMX[@]} of $NT: ${IFS_VMX[*]})" [ "${#IFS_VMX[@]}" = "$NT" ]
for i in "${IFS_VMX[@]}"; do ip addr flush dev "$i"; ip link set "$i" up; done
for i in "${IFS_VMX[@]}"; do
	nic=$(testdev_nic_of "$i") || { fail "$i: which NIC" ; continue; }
	check "$i: revision $(testdev_prop "$nic" max-revision) offered: negotiated, limits, controls, traffic" one_nic "$i"
done
vmx_done
