#!/usr/bin/env bash
# tunnel_tso.sh - Geneve/VXLAN offloads (revision 4+): tunnels
# between the DUT (over the vmx NIC) and the virtio peer, TSO on; 16 MB of
# random data through each tunnel DUT->peer (and one peer->DUT) must arrive
# byte-identical (sha256; inner IPv6: iperf3, few retransmits), the DUT's
# tx*_tso_tunnel counter must move (the device segmented it: on the test
# device stat-tunnel-tso too, and stat-tunnel-csum for the DUT's segments
# sent without TSO, its SYN and FIN; nothing refused, no strict
# violation), the peer must count no TCP or UDP checksum error
# (lib/traffic.sh's tunnel_case, which tdev_revtraffic.sh runs at
# revisions 4 and 6). Tunnels:
# VXLAN 4789 without outer UDP checksum (SKB_GSO_UDP_TUNNEL, om 1 / om 3 +
# ext1), VXLAN 8472 with it (oco), Geneve 6081 over IPv4, Geneve over IPv6
# (outer checksum), inner IPv4 and IPv6. A tunnel whose headers (up to the
# end of the inner TCP header, timestamps included) do not fit one TX data
# ring entry (128 bytes unless the device says more; the test device's
# txdata-size) must fall back to software GSO instead: tx*_tso_tunnel
# still, the copy as exact. SKIP where the device offers no revision 4
# (QEMU's stock device is revision 1) and when it offers no tunnel
# offload (rev 7+ without DCR0 bits 3/5; the outer checksum cases without
# bits 6/7). What the device offers decides, not the driver: a revision
# below 4 negotiated with a test device offering 4+, and tunnel TSO (or
# its outer checksum) not offered by the driver where the test device
# offers it (lib/traffic.sh tunnel_offered), fail.
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

if [ -z "$REV" ] || [ "$REV" -lt 4 ]; then
	# what the device offers decides, not what the driver negotiated: a
	# test device offering revision 4+ (vm.sh's default 9) must get it
	TD=$(testdev_nic_of "$DUT" 2>/dev/null) && MAXREV=$(testdev_prop "$TD" max-revision)
	if [ "${MAXREV:-0}" -ge 4 ]; then
		fail "Geneve/VXLAN TSO: revision 4+ negotiated" \
			"$VMX_DRIVER negotiated revision ${REV:-unknown}; the test device ($TD) offers up to $MAXREV"
	else
		skip "Geneve/VXLAN TSO" "device revision ${REV:-unknown} < 4: no tunnel offloads (QEMU's stock vmxnet3 is revision 1)"
	fi
	vmx_done
fi
feat=$(ethtool -k "$DUT" | sed -n 's/^tx-udp_tnl-segmentation: //p')
log "revision $REV; tx-udp_tnl-segmentation: $feat; tx-udp_tnl-csum-segmentation: $(ethtool -k "$DUT" | sed -n 's/^tx-udp_tnl-csum-segmentation: //p')"
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
	tunnel_case vxlan4789 vxlan 4789 noudpcsum 0 0 "out in"
check "VXLAN 4789, inner IPv6: exact, tunnel TSO (or software GSO when its headers exceed the data ring entry), no checksum error" \
	tunnel_case vxlan4789-6 vxlan 4789 noudpcsum 0 1 out
if [ "$csum_seg" = on ]; then
	check "VXLAN 8472 with outer UDP checksum (oco): byte-exact, tunnel TSO, no checksum error" \
		tunnel_case vxlan8472-csum vxlan 8472 udpcsum 0 0 out
	check "Geneve over IPv6 (outer checksum), inner IPv4: byte-exact, tunnel TSO (or software GSO when its headers exceed the data ring entry), no checksum error" \
		tunnel_case geneve6 geneve 6081 udpcsum 1 0 out
elif why=$(tunnel_offered csum); then
	# as above: only the device may leave the outer checksum out
	fail "tunnel TSO with outer UDP checksum offered by $VMX_DRIVER: the test device offers it ($why)" \
		"ethtool -k $DUT: tx-udp_tnl-csum-segmentation: ${csum_seg:-not listed} after -K on"
else
	skip "VXLAN/Geneve with outer UDP checksum" "tx-udp_tnl-csum-segmentation not offered (rev $REV: no outer checksum capability granted)"
fi
check "Geneve 6081 over IPv4, inner IPv4: byte-exact, tunnel TSO, no checksum error" \
	tunnel_case geneve4 geneve 6081 noudpcsum 0 0 out
tunnel_down

vmx_done
