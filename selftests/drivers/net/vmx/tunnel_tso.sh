#!/usr/bin/env bash
# tunnel_tso.sh - Geneve/VXLAN offloads (revision 4+): tunnels
# between the DUT (over the vmx NIC) and the virtio peer, TSO on; 16 MB of
# random data through each tunnel DUT->peer (and one peer->DUT) must arrive
# byte-identical (sha256; inner IPv6: iperf3, few retransmits), the DUT's tx*_tso_tunnel counter must move (the
# device segmented it: on the test device stat-tunnel-tso too, nothing
# refused), the peer must count no TCP or UDP checksum error. Tunnels:
# VXLAN 4789 without outer UDP checksum (SKB_GSO_UDP_TUNNEL, om 1 / om 3 +
# ext1), VXLAN 8472 with it (oco), Geneve 6081 over IPv4, Geneve over IPv6
# (outer checksum), inner IPv4 and IPv6. A tunnel whose headers (up to the
# end of the inner TCP header, timestamps included) do not fit one TX data
# ring entry (128 bytes unless the device says more; the test device's
# txdata-size) must fall back to software GSO instead: tx*_tso_tunnel
# still, the copy as exact. SKIP below revision 4 (QEMU's stock device is
# revision 1) and when the device granted no tunnel offload (rev 7+
# without DCR0 bits 3/5).
# RX inner results: on the test device with patch 0020 (stat-rx-inner
# readable), the VXLAN 4789 noudpcsum peer->DUT transfer must be completed
# with inner checksum results (stat-rx-inner moves) that vmx uses: the
# qstats rx-csum-unnecessary grows by at least 90% of that (6.10+ kernels)
# and no rx*_inner_unused (an outer checksum of 0: the inner result is the
# frame's first checksum, vmx_rx_csum_inner takes it).
# vmx-timeout: 400
source "$(dirname "$0")/lib.sh"

vmx_setup

REV=$(dut_revision)
TD=$(testdev_nic_of "$DUT" 2>/dev/null)
DSZ=128
[ -n "$TD" ] && DSZ=$(testdev_prop "$TD" txdata-size) && DSZ=${DSZ:-128}

# the DUT's qstats rx-csum-unnecessary (vmx's checksum-verified frames,
# every queue); empty without qstats (kernels before 6.10)
rx_csum_unnecessary() {
	qstat_dev "$DUT" rx-csum-unnecessary 2>/dev/null
}

# rx_inner_case NAME DIR: is this the transfer whose inner RX results are
# checked? The noudpcsum VXLAN tunnel, peer->DUT, on a test device that
# reports them (patch 0020: stat-rx-inner readable).
rx_inner_case() {
	[ -n "$TD" ] && [ "$1" = vxlan4789 ] && [ "$2" = in ] &&
		testdev_stat "$TD" rx-inner > /dev/null 2>&1
}

# rx_inner_snap: "stat-rx-inner stat-rx-inner-bad rx-csum-unnecessary
# inner_unused" now (rx-csum-unnecessary "-" without qstats)
rx_inner_snap() {
	local ok
	ok=$(rx_csum_unnecessary)
	echo "$(testdev_stat "$TD" rx-inner) $(testdev_stat "$TD" rx-inner-bad) ${ok:--} $(estat "$DUT" 'rx[0-9]+_inner_unused')"
}

# rx_inner_check NAME BEFORE AFTER (rx_inner_snap's words): the device
# completed frames of the transfer with inner results and vmx used them.
rx_inner_check() {
	local name=$1 i0 b0 o0 u0 i1 b1 o1 u1 di
	read -r i0 b0 o0 u0 <<< "$2"
	read -r i1 b1 o1 u1 <<< "$3"
	di=$((i1 - i0))
	echo "$name in: test device stat-rx-inner +$di, stat-rx-inner-bad +$((b1 - b0)); vmx rx-csum-unnecessary $([ "$o0" = - ] || [ "$o1" = - ] && echo "(no qstats)" || echo "+$((o1 - o0))"), rx*_inner_unused +$((u1 - u0))"
	[ "$di" -gt 0 ] ||
		{ echo "no frame completed with inner results (does vmx set RXINNEROFLD?)"; return 1; }
	if [ "$o0" != - ] && [ "$o1" != - ] &&
	   [ $(((o1 - o0) * 10)) -lt $((di * 9)) ]; then
		echo "rx-csum-unnecessary grew by less than 90% of stat-rx-inner's +$di: vmx did not use the inner results"
		return 1
	fi
	[ "$u1" = "$u0" ] ||
		{ echo "inner results passed up unused on a tunnel whose outer UDP checksum is 0"; return 1; }
}

peer_csum_errors() {
	local snmp
	snmp=$(pexec cat /proc/net/snmp)
	echo $(( $(snmp_field Tcp InCsumErrors <<< "$snmp") +
		 $(snmp_field Udp InCsumErrors <<< "$snmp") ))
}

# one_case NAME KIND PORT CSUM OUTER6 INNER6 DIRS
one_case() {
	local name=$1 kind=$2 port=$3 csum=$4 o6=$5 i6=$6 dirs=$7
	local t0 c0 e0 s0 b0 t1 c1 e1 s1 b1 d dst=10.42.0.2 src=10.42.0.1
	local IPERF_DST rev hl offload=1 ri0
	[ "$i6" = 1 ] && dst=fd42::2 src=fd42::1
	# Ethernet, outer IP, UDP, VXLAN/Geneve, Ethernet, inner IP, TCP + TS
	hl=$((14 + (o6 ? 40 : 20) + 8 + 8 + 14 + (i6 ? 40 : 20) + 32))
	[ "$hl" -gt "$DSZ" ] && offload=0
	tunnel_up "$kind" "$port" "$csum" "$o6" || return 1
	t0=$(estat "$DUT" 'tx[0-9]+_tso_tunnel') c0=$(estat "$DUT" 'tx[0-9]+_csum_tunnel') e0=$(peer_csum_errors)
	if [ -n "$TD" ]; then
		s0=$(testdev_stat "$TD" tunnel-tso) b0=$(testdev_stat "$TD" tunnel-bad)
	fi
	for d in $dirs; do
		ri0=
		rx_inner_case "$name" "$d" && { ri0=$(rx_inner_snap) || return 1; }
		if [ "$i6" = 1 ]; then
			# socat's TCP addresses are IPv4 ones: iperf3 over IPv6
			# (the peer's stack checks every TCP checksum)
			rev=()
			[ "$d" = in ] && rev=(-R)
			IPERF_DST=$dst iperf_check "${rev[@]}" || return 1
		else
			PEER_IP=$dst DUT_IP=$src tcp_exact "$d" 16 5310 || return 1
		fi
		if [ -n "$ri0" ]; then
			rx_inner_check "$name" "$ri0" "$(rx_inner_snap)" || return 1
		fi
	done
	t1=$(estat "$DUT" 'tx[0-9]+_tso_tunnel') c1=$(estat "$DUT" 'tx[0-9]+_csum_tunnel') e1=$(peer_csum_errors)
	echo "$name: headers $hl bytes, data ring entry $DSZ: offload expected: $offload"
	echo "$name: tx_tso_tunnel +$((t1 - t0)), tx_csum_tunnel +$((c1 - c0)), peer TCP/UDP checksum errors +$((e1 - e0))"
	[ "$e1" = "$e0" ] || return 1
	if [ -n "$TD" ]; then
		s1=$(testdev_stat "$TD" tunnel-tso) b1=$(testdev_stat "$TD" tunnel-bad)
		echo "test device: stat-tunnel-tso +$((s1 - s0)), stat-tunnel-bad +$((b1 - b0)), segments $(testdev_stat "$TD" tunnel-segments)"
		[ "$b1" = "$b0" ] || return 1
		[ "$offload" = 1 ] && [ "$s1" = "$s0" ] && return 1
	fi
	if [ "$offload" = 1 ]; then
		[ "$((t1 - t0))" -gt 0 ]
	elif [ -n "$TD" ]; then
		# the driver's software fallback: nothing posted as tunnel TSO
		[ "$t1" = "$t0" ]
	fi
}

if [ -z "$REV" ] || [ "$REV" -lt 4 ]; then
	skip "Geneve/VXLAN TSO" "device revision ${REV:-unknown} < 4: no tunnel offloads (QEMU's stock vmxnet3 is revision 1)"
	vmx_done
fi
feat=$(ethtool -k "$DUT" | sed -n 's/^tx-udp_tnl-segmentation: //p')
log "revision $REV; tx-udp_tnl-segmentation: $feat; tx-udp_tnl-csum-segmentation: $(ethtool -k "$DUT" | sed -n 's/^tx-udp_tnl-csum-segmentation: //p')"
# tunnel_offered: why the device offers tunnel TSO at revision $REV, read
# from the test device's properties, not from the driver: revisions 4-6
# always (unless tunnel-offloads=off), 7+ when DCR0 offers VXLAN or Geneve
# TSO (bits 5, 3) and PTCR0 allows every capability (bit 31). Fails when
# the NIC is not the test device or does not offer it.
tunnel_offered() {
	local d p
	[ -n "$TD" ] || return 1
	[ "$(testdev_prop "$TD" tunnel-offloads)" != off ] || return 1
	if [ "$REV" -lt 7 ]; then
		echo "revision $REV"
		return 0
	fi
	d=$(testdev_prop "$TD" dcr0); p=$(testdev_prop "$TD" ptcr0)
	[ $((${d:-0} & 0x28)) != 0 ] && [ $((${p:-0} & 0x80000000)) != 0 ] || return 1
	echo "revision $REV, dcr0=$d, ptcr0=$p"
}
if [ "${feat%% *}" != on ]; then
	# a driver that stops offering what the device offers fails here
	if why=$(tunnel_offered); then
		check "tunnel TSO offered by vmx: the test device offers it ($why)" false
	else
		skip "Geneve/VXLAN TSO" "revision $REV but tunnel TSO not offered (from revision 7 it needs DCR0 bits 3/5 granted; dmesg: $(caps_line "$DUT"))"
	fi
	vmx_done
fi
ethtool -K "$DUT" tso on tx-udp_tnl-segmentation on >/dev/null 2>&1
ethtool -K "$DUT" tx-udp_tnl-csum-segmentation on >/dev/null 2>&1
csum_seg=$(ethtool -k "$DUT" | sed -n 's/^tx-udp_tnl-csum-segmentation: \([a-z]*\).*/\1/p')

check "VXLAN 4789, no outer checksum, inner IPv4: DUT->peer and peer->DUT byte-exact, TSO tunnel packets posted, no checksum error at the peer; peer->DUT completed with inner RX results vmx used (test device 0020)" \
	one_case vxlan4789 vxlan 4789 noudpcsum 0 0 "out in"
check "VXLAN 4789, inner IPv6: exact, tunnel TSO (or software GSO when its headers exceed the data ring entry), no checksum error" \
	one_case vxlan4789-6 vxlan 4789 noudpcsum 0 1 out
if [ "$csum_seg" = on ]; then
	check "VXLAN 8472 with outer UDP checksum (oco): byte-exact, tunnel TSO, no checksum error" \
		one_case vxlan8472-csum vxlan 8472 udpcsum 0 0 out
	check "Geneve over IPv6 (outer checksum), inner IPv4: byte-exact, tunnel TSO (or software GSO when its headers exceed the data ring entry), no checksum error" \
		one_case geneve6 geneve 6081 udpcsum 1 0 out
else
	skip "VXLAN/Geneve with outer UDP checksum" "tx-udp_tnl-csum-segmentation not offered (rev $REV: no outer checksum capability granted)"
fi
check "Geneve 6081 over IPv4, inner IPv4: byte-exact, tunnel TSO, no checksum error" \
	one_case geneve4 geneve 6081 noudpcsum 0 0 out
tunnel_down

vmx_done
