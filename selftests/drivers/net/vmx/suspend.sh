#!/usr/bin/env bash
# suspend.sh - system suspend and hibernation with vmx up, an XDP program
# attached and traffic before and after: the kernel's PM test mode
# (/sys/power/pm_test = devices) runs every driver's suspend and resume
# callbacks without powering anything off, so the guest needs no wake-up
# source. After each cycle: the interface is up with the same MTU, rings,
# channels and XDP program, counters did not go backwards, ping and TCP
# work, the kernel log is clean. Wake-on-LAN stays as set.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"
source "$VMX_LIB_DIR/xdp_lib.sh"

xdp_setup
PMT=/sys/power/pm_test
if [ ! -w "$PMT" ]; then
	skip "suspend and resume" "kernel without CONFIG_PM_DEBUG ($PMT missing)"
	vmx_done
fi
# Linux's virtio-9p transport has no freeze/restore: across a system
# sleep its device is reset and every later file access hangs. Guests of
# tools/vm.sh have their root there; a guest with a block-device root can
# run this test.
if [ "$(findmnt -n -o FSTYPE /)" = 9p ] || findmnt -n -t 9p "$VMX_PROJECT" > /dev/null; then
	skip "suspend and resume" "the guest's root or project is on virtio-9p, which does not survive a system sleep (no freeze/restore in Linux's 9p transport)"
	vmx_done
fi
read -r -a STATES < /sys/power/state
log "power states: ${STATES[*]}; pm_test modes: $(cat $PMT)"

xdp_id() { ip -j link show dev "$DUT" | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d.get("xdp", {}).get("prog", {}).get("id", ""))'; }

check "attach xdp_pass (native)" xdp_attach "$DUT" xdp_pass
ip link set "$DUT" mtu 1400
pexec ip link set "$PEER" mtu 1400
if [ "$VMX_DRIVER_NAME" = vmx ]; then ethtool -s "$DUT" wol g; fi

# state_of: what must survive a cycle.
state_of() {
	echo "mtu $(cat "/sys/class/net/$DUT/mtu") operstate $(cat "/sys/class/net/$DUT/operstate") xdp $(xdp_id)"
	ethtool -g "$DUT" | sed -n '/Current/,$p' | grep -E '^(RX|RX Jumbo|TX):' | tr -s '\t ' ' ' | tr '\n' ' '
	ethtool -l "$DUT" | sed -n '/Current/,$p' | grep '^Combined' | tr -s '\t ' ' '
	ethtool "$DUT" | grep 'Wake-on:' | tr -d '\t'
}

# cycle STATE: one suspend/resume (mem, freeze) or hibernation (disk)
# in PM test mode; compare the state, counters, then traffic.
cycle() {
	local pst=$1 c0 c1 rc=0
	state_of > "$VMX_TMP/s0"
	c0=$(dut_counters)
	echo devices > "$PMT" || return 1
	if ! echo "$pst" > /sys/power/state; then
		echo "echo $pst > /sys/power/state failed"; rc=1
	fi
	echo none > "$PMT"
	dmesg | grep -E 'PM: (suspend|hibernation)|pm_test|resume' | tail -n 4 | sed 's/^\[[^]]*\] //'
	wait_carrier "$DUT" 20 || { echo "no carrier after resume"; rc=1; }
	state_of > "$VMX_TMP/s1"
	c1=$(dut_counters)
	diff "$VMX_TMP/s0" "$VMX_TMP/s1" || { echo "state changed across $pst"; rc=1; }
	cat "$VMX_TMP/s1"
	echo "counters (rx/tx packets, bytes): $c0 -> $c1"
	not_backwards "$c0" "$c1" || { echo "counters went backwards"; rc=1; }
	dut_ping -c 5 -i 0.2 "$PEER_IP" || rc=1
	VMX_IPERF_TIME=2 iperf_check || rc=1
	return $rc
}

check "traffic before" dut_ping -c 3 -i 0.2 "$PEER_IP"
for st in mem freeze disk; do
	case " ${STATES[*]} " in
	*" $st "*) check "pm_test devices: $st cycle keeps state, counters, XDP and traffic" cycle "$st" ;;
	*) skip "$st cycle" "not in /sys/power/state (${STATES[*]})" ;;
	esac
done
ip link set dev "$DUT" xdp off 2>/dev/null
vmx_done
