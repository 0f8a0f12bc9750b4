#!/usr/bin/env bash
# reconfig.sh - ring resize, channel changes and a forced device reset
# (ethtool --reset) while TCP traffic runs: each change must succeed, take
# effect, keep the TCP stream alive and never make the standard counters go
# backwards; a reset narrower than the whole device is refused.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

rings_are() { # rx tx
	local g
	g=$(ethtool -g "$DUT" | sed -n '/Current/,$p')
	echo "$g" | grep -q "^RX:[[:space:]]*$1$" &&
		echo "$g" | grep -q "^TX:[[:space:]]*$2$"
}

channels_are() {
	ethtool -l "$DUT" | sed -n '/Current/,$p' | grep -q "^Combined:[[:space:]]*$1$"
}

# Run $@ (a list of reconfigurations) while a 12-second TCP stream from
# the peer runs; the stream must finish with data and no iperf error.
under_tcp() {
	local before after
	before=$(dut_counters)
	VMX_IPERF_TIME=12 bg_start iperf_check -R
	local ipid=$BG_PID
	sleep 2
	"$@" || { bg_stop "$ipid"; return 1; }
	wait "$ipid" || { echo "TCP stream failed during reconfiguration"; return 1; }
	after=$(dut_counters)
	echo "counters $before -> $after"
	not_backwards "$before" "$after" || { echo "counters went backwards"; return 1; }
	peer_ping -c 5 -i 0.05 "$DUT_IP"
}

resize_loop() {
	local r
	for r in "256 128" "2048 1024" "512 512"; do
		set -- $r
		ethtool -G "$DUT" rx "$1" tx "$2" || return 1
		rings_are "$1" "$2" || { echo "rings not $1/$2"; return 1; }
		sleep 1
	done
}

maxch=$(ethtool -l "$DUT" | sed -n '/maximums/,/Current/p' | sed -n 's/^Combined:[[:space:]]*//p')
channel_loop() {
	local n
	for n in 1 "$maxch" 1 "$maxch"; do
		ethtool -L "$DUT" combined "$n" || return 1
		channels_are "$n" || { echo "channels not $n"; return 1; }
		sleep 1
	done
}

check "ring resize x3 under TCP" under_tcp resize_loop
if [ "${maxch:-1}" -gt 1 ]; then
	check "channel change x4 under TCP" under_tcp channel_loop
else
	skip "channel change x4 under TCP" "only one channel available"
fi
# ethtool --reset: the driver's recovery path (reset work item) on demand.
reset_narrow_refused() {
	local r0
	r0=$(dut_resets)
	if ethtool --reset "$DUT" mac; then
		echo "ethtool --reset $DUT mac was accepted"
		return 1
	fi
	sleep 1
	dmesg | grep "whole-device reset" | tail -n 1
	[ "$(dut_resets)" = "$r0" ] || { echo "resets $r0 -> $(dut_resets)"; return 1; }
}
if [ "$VMX_DRIVER" = vmx ]; then
	check "ethtool --reset dedicated under TCP: device reset, stream survives" \
		under_tcp dut_forced_reset
	check "ethtool --reset mac alone refused, no reset done" reset_narrow_refused
else
	skip "ethtool --reset dedicated under TCP" "$VMX_DRIVER has no ethtool reset"
	skip "ethtool --reset mac alone refused" "$VMX_DRIVER has no ethtool reset"
fi
check "traffic after reconfiguration" dut_ping -c 5 -i 0.05 "$PEER_IP"

vmx_done
