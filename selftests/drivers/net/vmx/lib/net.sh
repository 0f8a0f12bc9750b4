# shellcheck shell=bash
# lib/net.sh - the peer netns and the links, for the vmx selftests
# (sourced by lib.sh): running commands in the peer's netns (pexec),
# carrier, setting up the peer and DUT's addresses (vmx_setup calls both),
# MTU on both ends, MAC addresses, whether QEMU's backend takes TSO
# frames, every RX flow to queue 0 (RSS), and a VXLAN/Geneve tunnel
# between the DUT and the peer.

# pexec CMD...: CMD in the peer's netns (ip netns exec: a process, a mount
# namespace and a sysfs mount before CMD's own). The setup below runs one
# `ip -n ... -batch` for many commands, and the peer's link checks `ip -n`
# alone: one process each instead of two (some 0.1 s under TCG).
pexec() { ip netns exec "$PEER_NS" "$@"; }

carrier_of() { cat "/sys/class/net/$1/carrier" 2>/dev/null; }
has_carrier() { local c=; read -r c < "/sys/class/net/$1/carrier" 2>/dev/null; [ "$c" = 1 ]; }
# LOWER_UP: running with carrier (what /sys/.../carrier reads as 1).
peer_has_carrier() { [[ "$(ip -n "$PEER_NS" -o link show dev "$1" 2>/dev/null)" == *[\<,]LOWER_UP[,\>]* ]]; }

# wait_carrier IF [TIMEOUT]: wait for carrier on IF (this netns).
wait_carrier() {
	wait_for "${2:-10}" has_carrier "$1" ||
		{ echo "no carrier on $1 after ${2:-10}s"; return 1; }
}

_peer_in_ns() { ip -n "$PEER_NS" link show dev "$PEER" >/dev/null 2>&1; }

# peer_setup [IF]: find the virtio_net peer (moving back from a deleted
# netns takes a moment), or take interface IF (tools/bench-guest.sh: the
# generator, by PCI slot), move it into netns $PEER_NS as PEER and give it
# PEER_IP/PEER_IP6.
peer_setup() {
	[ -d /sys/module/virtio_net ] || modprobe virtio_net || return 1
	if [ -e "/run/netns/$PEER_NS" ]; then
		ip netns del "$PEER_NS"
	fi
	if [ -n "${1:-}" ]; then
		PEER=$1
	else
		wait_for 10 _count_is 1 ifaces_by_driver virtio_net ||
			{ echo "no virtio_net interface for the peer"; return 1; }
		PEER=$(ifaces_by_driver virtio_net)
		PEER=${PEER%%$'\n'*}
	fi
	ip netns add "$PEER_NS" || return 1
	ip link set "$PEER" netns "$PEER_NS" || return 1
	wait_for 5 _peer_in_ns || return 1
	pexec sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1
	# One ip process for the rest (each command is a fork and exec, about
	# 0.1 s under TCG, and every test sets the peer up). Multicast sent by
	# the peer leaves through its NIC.
	ip -n "$PEER_NS" -batch - <<-EOF || return 1
		link set lo up
		link set $PEER mtu 1500
		addr add $PEER_IP/24 dev $PEER
		addr add $PEER_IP6/64 dev $PEER nodad
		link set $PEER up
		route add 224.0.0.0/4 dev $PEER
	EOF
	wait_for 10 peer_has_carrier "$PEER" || { echo "peer has no carrier"; return 1; }
}

# Give DUT its addresses and bring it up.
dut_addr_setup() {
	local d=${1:-$DUT}
	echo 0 2>/dev/null > "/proc/sys/net/ipv6/conf/$d/accept_dad"
	ip -batch - <<-EOF || return 1
		addr flush dev $d
		addr add $DUT_IP/24 dev $d
		link set $d up
		addr add $DUT_IP6/64 dev $d nodad
	EOF
	wait_carrier "$d" 10
}

# dut_move_to IF: interface IF takes over the DUT's addresses (the old DUT
# flushed and down, the peer's neighbour entry forgotten) and becomes DUT.
dut_move_to() {
	ip addr flush dev "$DUT"
	ip link set "$DUT" down
	pexec ip neigh flush dev "$PEER"
	DUT=$1
	dut_addr_setup "$DUT"
}

# set_mtu_both MTU: set the MTU on DUT and PEER. Below 1280 the kernel
# drops IPv6 from both; it is given back when the MTU allows.
set_mtu_both() {
	ip link set "$DUT" mtu "$1" || return 1
	pexec ip link set "$PEER" mtu "$1" || return 1
	if [ "$1" -ge 1280 ]; then
		ip addr replace "$DUT_IP6/64" dev "$DUT" nodad
		pexec ip addr replace "$PEER_IP6/64" dev "$PEER" nodad
	fi
	wait_carrier "$DUT" 10
}

mac_of() { cat "/sys/class/net/$1/address"; }
peer_mac() { pexec cat "/sys/class/net/$PEER/address"; }

# peer_has_tso: the virtio peer offers TSO, i.e. its QEMU backend takes a
# vnet header (the --tap topology); on a hub it sends MTU-sized frames only.
peer_has_tso() {
	pexec ethtool -k "$PEER" | grep -q '^tcp-segmentation-offload: on'
}

# qemu_tso_fragments: true when the DUT's TSO frames leave QEMU as IPv4
# fragments rather than TCP segments. QEMU segments in software when the
# backend takes no vnet header (a hub, where the virtio peer has no TSO
# either); before 8.0 it only knew IPv4 fragmentation there, which the peer
# reassembles for IPv4 and which corrupts IPv6 frames (fixed in QEMU 8.0 by
# "hw/net/net_tx_pkt: Implement TCP segmentation"). VMX_QEMU_VERSION is set
# by tools/vm.sh; unknown counts as fixed.
qemu_tso_fragments() {
	local v=${VMX_QEMU_VERSION:-}
	[[ "$v" == [0-9]* ]] || return 1
	peer_has_tso && return 1
	[ "${v%%.*}" -lt 8 ]
}

# ------------------------------------------------------------ RSS

# combined_channels IF: IF's current number of combined channels (the
# Combined line under "Current hardware settings" of ethtool -l); empty
# when ethtool cannot tell.
combined_channels() {
	ethtool -l "$1" 2>/dev/null | awk '/^Current/ { c = 1 } c && /^Combined:/ { print $2; exit }'
}
# combined_max IF: the most combined channels IF takes (under "Pre-set
# maximums"); empty when ethtool cannot tell.
combined_max() {
	ethtool -l "$1" 2>/dev/null | awk '/^Combined:/ { print $2; exit }'
}

# ring_size IF FIELD: IF's current ring size FIELD (RX, TX, "RX Jumbo", as
# ethtool -g names them under "Current hardware settings").
ring_size() {
	ethtool -g "$1" | awk -v f="$2:" '/^Current/ { c = 1 } c && index($0, f) == 1 { print $NF; exit }'
}

# rss_all_to_queue0 IF: every RX flow of IF to queue 0, each entry of its
# RSS indirection table naming queue 0 (ethtool -X IF equal 1). An AF_XDP
# socket bound to queue 0 sees only that queue's frames, and a device that
# steers (the test device with RSS) may hash a flow to another queue. With
# one combined channel (or none ethtool shows) there is nothing to steer
# and nothing is set: a driver may then have no table and refuse one.
# Fails, with ethtool's error on stderr, when the driver refuses the table.
# rss_default IF: the default table back (ethtool -X IF default); likewise
# nothing with one channel.
rss_all_to_queue0() {
	[ "$(combined_channels "$1")" -gt 1 ] 2>/dev/null || return 0
	ethtool -X "$1" equal 1
}
rss_default() {
	[ "$(combined_channels "$1")" -gt 1 ] 2>/dev/null || return 0
	ethtool -X "$1" default
}

# ------------------------------------------------------------ tunnels

# tunnel_down: remove tunnel_up's tunnel from both ends.
tunnel_down() {
	ip link del vmxtun0 2>/dev/null
	pexec ip link del vmxtun0 2>/dev/null
	true
}

# tunnel_up KIND PORT CSUM OUTER6: the same tunnel on both ends (KIND vxlan
# or geneve, CSUM udpcsum/noudpcsum, OUTER6 1: over the IPv6 addresses),
# inner 10.42.0.1/24 + fd42::1/64 on the DUT, .2 / ::2 on the peer.
tunnel_up() {
	local kind=$1 port=$2 csum=$3 l r
	local dut=$DUT_IP peer=$PEER_IP extra=()
	if [ "$4" = 1 ]; then
		dut=$DUT_IP6 peer=$PEER_IP6
		# IPv6 outer: checksummed unless zero checksums are asked for
		[ "$csum" = noudpcsum ] && extra=(udp6zerocsumtx udp6zerocsumrx)
	else
		extra=("$csum")
	fi
	tunnel_down
	for end in dut peer; do
		if [ $end = dut ]; then l=$dut r=$peer; else l=$peer r=$dut; fi
		local run=()
		[ $end = peer ] && run=(ip netns exec "$PEER_NS")
		if [ "$kind" = vxlan ]; then
			"${run[@]}" ip link add vmxtun0 type vxlan id 42 local "$l" \
				remote "$r" dstport "$port" "${extra[@]}" || return 1
		else
			"${run[@]}" ip link add vmxtun0 type geneve id 43 \
				remote "$r" dstport "$port" "${extra[@]}" || return 1
		fi
		"${run[@]}" sysctl -qw net.ipv6.conf.vmxtun0.accept_dad=0
		"${run[@]}" ip link set vmxtun0 up || return 1
	done
	ip addr add 10.42.0.1/24 dev vmxtun0
	ip addr add fd42::1/64 dev vmxtun0 nodad
	pexec ip addr add 10.42.0.2/24 dev vmxtun0
	pexec ip addr add fd42::2/64 dev vmxtun0 nodad
	dut_ping -c 2 -w 10 10.42.0.2 > /dev/null ||
		{ echo "no ping through the $kind tunnel"; return 1; }
	if ! dut_ping -c 2 -w 10 fd42::2 > /dev/null; then
		echo "no IPv6 ping through the $kind tunnel"
		return 1
	fi
}
