#!/usr/bin/env bash
# refuse.sh - requests the driver must refuse (or round to a valid value),
# with the configuration left unchanged and traffic still flowing after each.
source "$(dirname "$0")/lib.sh"

vmx_setup

traffic() {
	dut_ping -c 5 -i 0.05 "$PEER_IP" && peer_ping -c 5 -i 0.05 -s 1472 "$DUT_IP"
}
# refused CMD...: CMD must fail and say why.
refused() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	echo "$*: exit $rc: $out"
	[ $rc -ne 0 ] || { echo "accepted"; return 1; }
	[ -n "$out" ] || { echo "refused without a message"; return 1; }
}
# MTU must still be $1; if not, put MTU and addresses back (an MTU below 68
# removes IPv4 from the device) so that later subtests stay meaningful.
mtu_is() {
	local m
	m=$(cat "/sys/class/net/$DUT/mtu")
	echo "mtu $m"
	[ "$m" = "$1" ] && return 0
	ip link set "$DUT" mtu "$1"
	dut_addr_setup > /dev/null
	return 1
}

check "mtu 10000 refused with a message" refused ip link set "$DUT" mtu 10000
check "MTU unchanged" mtu_is 1500
check "traffic after mtu 10000" traffic
check "mtu 59 refused with a message" refused ip link set "$DUT" mtu 59
check "MTU unchanged" mtu_is 1500
check "traffic after mtu 59" traffic

ring() { ring_size "$DUT" "$1"; }
ring_request() {
	local field=$1 opt=$2 val=$3 before after out rc
	before=$(ring "$field")
	out=$(ethtool -G "$DUT" "$opt" "$val" 2>&1)
	rc=$?
	after=$(ring "$field")
	echo "ethtool -G $opt $val: exit $rc ${out:+($out)}; $field ring $before -> $after"
	if [ $rc -ne 0 ]; then
		[ "$after" = "$before" ] || { echo "refused but changed"; return 1; }
		return 0
	fi
	# Accepted: must have been rounded to a size the device takes
	# (vmxnet3 rings are multiples of 32).
	[ -n "$after" ] && [ "$after" != "$val" ] && [ $((after % 32)) -eq 0 ] ||
		{ echo "accepted $val as $after"; return 1; }
}
rx0=$(ring RX)
tx0=$(ring TX)
log "rings: RX $rx0 TX $tx0"
# A ring change resets the device: wait for the carrier first.
traffic_after_reset() { wait_carrier "$DUT" 10 && traffic; }
restored() { [ "$(ring RX)" = "$rx0" ] && [ "$(ring TX)" = "$tx0" ]; }
if [ -z "$rx0" ] || [ -z "$tx0" ]; then
	fail "ethtool -g reports ring sizes"
else
	check "ethtool -G rx 3 refused or rounded" ring_request RX rx 3
	check "traffic after rx 3" traffic_after_reset
	check "ethtool -G tx 3 refused or rounded" ring_request TX tx 3
	check "traffic after tx 3" traffic_after_reset
	check "ethtool -G rx 1000000 refused" refused ethtool -G "$DUT" rx 1000000
	check "traffic after rx 1000000" traffic_after_reset
	check "restore rings" ethtool -G "$DUT" rx "$rx0" tx "$tx0"
	check "rings restored" restored
	check "traffic after ring restore" traffic_after_reset
fi

channels() { ethtool -l "$DUT" | awk '/^Current/ { c = 1 } c && /^(Combined|RX|TX):/ { printf "%s%s ", $1, $2 }'; }
ch0=$(channels)
log "channels: $ch0"
check "ethtool -L combined 99 refused" refused ethtool -L "$DUT" combined 99
same_channels() { local c; c=$(channels); echo "channels: $c"; [ "$c" = "$ch0" ]; }
check "channels unchanged" same_channels
check "traffic after channel request" traffic

vmx_done
