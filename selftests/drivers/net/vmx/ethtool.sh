#!/usr/bin/env bash
# ethtool.sh - driver info, statistics and the get-side ethtool operations;
# standard counters count traffic and never go backwards across down/up or
# an MTU change (reset).
source "$(dirname "$0")/lib.sh"

vmx_setup

info_field() { ethtool -i "$DUT" | awk -v f="$1:" '$1 == f { print $2 }'; }
driver_name() {
	ethtool -i "$DUT"
	[ "$(info_field driver)" = "$VMX_DRIVER_NAME" ]
}
check "ethtool -i: driver is $VMX_DRIVER_NAME" driver_name
bus_info() {
	local want
	want=$(basename "$(readlink "/sys/class/net/$DUT/device")")
	echo "bus-info $(info_field bus-info), device $want"
	[ "$(info_field bus-info)" = "$want" ]
}
check "ethtool -i: bus-info is the PCI address" bus_info

stats_listed() {
	local n
	ethtool -S "$DUT" > "$VMX_TMP/S" || return 1
	n=$(grep -c ':' "$VMX_TMP/S")
	head -n 12 "$VMX_TMP/S"
	echo "($((n - 1)) counters)"
	[ "$n" -gt 1 ]
}
check "ethtool -S lists counters" stats_listed
check "ethtool -g" ethtool -g "$DUT"
check "ethtool -k" bash -c "ethtool -k $DUT | head -n 8"
check "ethtool -l" ethtool -l "$DUT"
check "ethtool (link settings)" bash -c "ethtool $DUT | grep -E 'Speed|Duplex|Link detected'"
down_ok() {
	ip link set "$DUT" down || return 1
	ethtool -S "$DUT" > /dev/null || return 1
	ethtool -g "$DUT" > /dev/null || return 1
	ethtool "$DUT" > /dev/null || return 1
	ip link set "$DUT" up && wait_carrier "$DUT" 10
}
check "ethtool -S/-g/link settings while down" down_ok

# Standard counters: rx/tx packets and bytes.
grew_by() {
	local b=($1) a=($2) min=$3 i
	for i in 0 1; do
		[ $((a[i] - b[i])) -ge "$min" ] || return 1
	done
	[ "${a[2]}" -gt "${b[2]}" ] && [ "${a[3]}" -gt "${b[3]}" ]
}
count_traffic() {
	local before after
	before=$(dut_counters)
	peer_ping -c 20 -i 0.02 -q "$DUT_IP" > /dev/null || return 1
	after=$(dut_counters)
	echo "rx_packets tx_packets rx_bytes tx_bytes: $before -> $after"
	grew_by "$before" "$after" 20
}
check "standard counters count 20 pings" count_traffic

ethtool_sum() { ethtool -S "$DUT" | awk -F: 'NR > 1 && $2 ~ /^ *[0-9]+ *$/ { s += $2 } END { print s + 0 }'; }
ethtool_moves() {
	local b a
	b=$(ethtool_sum)
	peer_ping -c 20 -i 0.02 -q "$DUT_IP" > /dev/null || return 1
	a=$(ethtool_sum)
	echo "sum of ethtool -S counters: $b -> $a"
	[ "$a" -gt "$b" ]
}
check "ethtool -S counters move with traffic" ethtool_moves

survive() {
	local before after
	before=$(dut_counters)
	"$@" || return 1
	wait_carrier "$DUT" 10 || return 1
	after=$(dut_counters)
	echo "rx_packets tx_packets rx_bytes tx_bytes: $before -> $after"
	not_backwards "$before" "$after"
}
downup() { ip link set "$DUT" down && ip link set "$DUT" up; }
mtu_bounce() { ip link set "$DUT" mtu 3000 && ip link set "$DUT" mtu 1500; }
check "counters do not go backwards across down/up" survive downup
check "counters do not go backwards across MTU change" survive mtu_bounce
check "traffic after all" peer_ping -c 5 -i 0.05 "$DUT_IP"

vmx_done
