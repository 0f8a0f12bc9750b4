#!/usr/bin/env bash
# suspend.sh - system suspend and hibernation with vmx up, an XDP program
# attached and traffic before and after: the kernel's PM test mode
# (/sys/power/pm_test = devices) runs every driver's suspend and resume
# callbacks without powering anything off, so the guest needs no wake-up
# source. With a swap disk (tools/vm.sh --swap: VMX_SWAP_DEV, the guest's
# root in RAM) two real hibernations follow: the image written to the disk
# and read back at once (/sys/power/disk test_resume: freeze, thaw,
# quiesce and restore callbacks), then written, the machine rebooted (QEMU
# resets every device) and the image restored by the next boot (reboot:
# the device comes back from reset). After each cycle: the interface is up
# with the same MTU, rings, channels and XDP program, counters did not go
# backwards, ping and TCP work, the kernel log is clean. Wake-on-LAN stays
# as set.
# Last, on the test device: a resume whose ACTIVATE the device refuses
# (fault activate-refused, armed through the monitor). vmx says so, closes
# the interface and holds nothing: an XDP detach and attach bring nothing
# up, ip link set down frees no IRQ twice, an AF_XDP zero-copy socket bound
# before the suspend stays bound (its busy-polling sendto gets ENETDOWN
# while closed, and reads no freed queue: KASAN in group pmdebug) and
# receives again after ip link set up, which carries ping and TCP.
# vmx-timeout: 600
# vmx-expects-log: device refused activation \(0x1\)
# vmx-expects-log: resume: the device could not be opened \(-5\), interface closed
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
# tools/vm.sh have their root there. Unless the 9p devices say in their PCI
# power management control register that D3hot keeps their state
# (No_Soft_Reset: vm.sh --pm-9p, QEMU 8.2+): then Linux's virtio_pci skips
# their freeze/restore on suspend (mem, freeze), though not on
# hibernation, whose freeze/thaw still resets them.
# pm_no_soft_reset: every virtio-9p device's PCI function has No_Soft_Reset.
pm_no_soft_reset() {
	local v pci ctl n=0
	for v in /sys/bus/virtio/drivers/9pnet_virtio/virtio*; do
		[ -e "$v" ] || continue
		pci=$(basename "$(readlink -f "$v/..")")
		ctl=$(setpci -s "$pci" CAP_PM+4.w 2>/dev/null) || return 1
		[ $((0x$ctl & 0x8)) != 0 ] || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}
ON9P=0
if [ "$(findmnt -n -o FSTYPE /)" = 9p ] || findmnt -n -t 9p "$VMX_PROJECT" > /dev/null ||
	findmnt -n -o OPTIONS / | grep -q 'lowerdir=/lower'; then
	ON9P=1
fi
if [ $ON9P = 1 ] && ! pm_no_soft_reset; then
	skip "suspend and resume" "the guest's root or project is on virtio-9p, which does not survive a system sleep (no freeze/restore in Linux's 9p transport; tools/vm.sh --pm-9p keeps it across suspend, with QEMU 8.2+)"
	vmx_done
fi
[ $ON9P = 0 ] || log "root and project on virtio-9p with No_Soft_Reset (vm.sh --pm-9p): suspend keeps them, hibernation does not"
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

# The wake-up configuration the device was sent: on the test device
# (patch 0029) the UPDATE_PMCFGs it took and the wakeUpEvents of the last
# good one (bit 0 magic packet), which must be what ethtool's Wake-on
# says (g: 1, d: 0) after every suspend in PM test mode (the suspend
# callbacks ran; a real hibernation's reboot resets the device after).
PM_NIC=
if [ "$VMX_DRIVER_NAME" = vmx ] && PM_NIC=$(testdev_nic_of "$DUT" 2>/dev/null) &&
	testdev_nics | grep -qx "$PM_NIC"; then
	log "$DUT: test device $PM_NIC: each suspend's UPDATE_PMCFG is compared with Wake-on"
else
	PM_NIC=
fi
pm_updates() { testdev_stat "$PM_NIC" pmcfg-good; }
# pm_sent WOL0: the device took a good UPDATE_PMCFG since WOL0 (its count
# before) saying what Wake-on says
pm_sent() {
	local u1 ev wol want
	u1=$(pm_updates) && ev=$(qom_get "$PM_NIC" pm-wake-events) || return 1
	wol=$(ethtool "$DUT" | awk '$1 == "Wake-on:" { print $2 }')
	case $wol in g) want=1 ;; d) want=0 ;; *) want="?" ;; esac
	echo "Wake-on $wol; the device took $((u1 - $1)) good UPDATE_PMCFG, the last with wakeUpEvents $ev (want $want)"
	[ $((u1 - $1)) -ge 1 ] && [ "$ev" = "$want" ]
}

# cycle STATE [DISKMODE]: one suspend/resume (mem, freeze) or hibernation
# (disk) in PM test mode, or with DISKMODE a real hibernation to the swap
# disk in that /sys/power/disk mode; compare the state, counters, then
# traffic.
cycle() {
	local pst=$1 mode=${2:-} c0 c1 boot0 img0 io0 io1 u0='' rc=0
	state_of > "$VMX_TMP/s0"
	c0=$(dut_counters)
	if [ -n "$PM_NIC" ] && [ -z "$mode" ]; then u0=$(pm_updates) || return 1; fi
	if [ -n "$mode" ]; then
		# baselines of what tells a real hibernation (QEMU's counters)
		boot0=$(guest_resets)
		img0=$(restored)
		io0=($(swap_io))
		echo none > "$PMT" && echo "$mode" > /sys/power/disk || return 1
	else
		echo devices > "$PMT" || return 1
	fi
	if ! echo "$pst" > /sys/power/state; then
		echo "echo $pst > /sys/power/state failed"; rc=1
	fi
	echo none > "$PMT"
	dmesg | grep -E 'PM: (suspend|hibernation|Image)|pm_test|resume|restor' | tail -n 6 | sed 's/^\[[^]]*\] //'
	if [ -n "$mode" ]; then
		if [ "$(restored)" -le "$img0" ]; then
			echo "no image was restored (no new 'Hibernation image restored successfully' in the kernel log)"; rc=1
		fi
		# the kernel log cannot tell a restored image from pm_test (the
		# log of the write and load went with the memory they restored):
		# QEMU's own I/O counters of the swap disk can
		io1=($(swap_io))
		echo "swap disk: $(( (io1[1] - io0[1]) >> 20 )) MiB written, $(( (io1[0] - io0[0]) >> 20 )) MiB read"
		if ! [ $(( io1[1] - io0[1] )) -ge $((16 << 20)) ] || ! [ $(( io1[0] - io0[0] )) -ge $((16 << 20)) ]; then
			echo "no image written to the swap disk and read back (QEMU: rd_bytes ${io0[0]} -> ${io1[0]}, wr_bytes ${io0[1]} -> ${io1[1]})"; rc=1
		fi
		# reboot: QEMU reset the machine, every device with it
		if [ "$mode" = reboot ] && ! [ "$(guest_resets)" -gt "$boot0" ]; then
			echo "no system reset across the reboot (QEMU reported $boot0 resets before, $(guest_resets) after)"; rc=1
		fi
	fi
	wait_carrier "$DUT" 20 || { echo "no carrier after resume"; rc=1; }
	state_of > "$VMX_TMP/s1"
	c1=$(dut_counters)
	diff "$VMX_TMP/s0" "$VMX_TMP/s1" || { echo "state changed across $pst"; rc=1; }
	cat "$VMX_TMP/s1"
	[ -z "$u0" ] || pm_sent "$u0" || { echo "the device was not sent the wake-up configuration Wake-on says"; rc=1; }
	echo "counters (rx/tx packets, bytes): $c0 -> $c1"
	not_backwards "$c0" "$c1" || { echo "counters went backwards"; rc=1; }
	dut_ping -c 5 -i 0.2 "$PEER_IP" || rc=1
	VMX_IPERF_TIME=2 iperf_check || rc=1
	return $rc
}

# guest_resets: the system resets QEMU reported so far (tools/hmp-relay.py)
guest_resets() { hmp vmx-resets | tr -dc 0-9; }
# swap_io: "RD WR" bytes QEMU counted on the swap disk (vm.sh --swap: the
# one virtio-blk disk)
swap_io() {
	hmp "info blockstats" | tr -d '\r' |
		awk '/rd_bytes=/ { for (i = 1; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "rd_bytes") r = kv[2]; if (kv[1] == "wr_bytes") w = kv[2] } }
			END { print r + 0, w + 0 }'
}
# restored: the hibernation images restored so far (pm_debug_messages on)
restored() { dmesg | grep -c 'PM: hibernation: Hibernation image restored successfully'; }

check "traffic before" dut_ping -c 3 -i 0.2 "$PEER_IP"
for st in mem freeze disk; do
	case " ${STATES[*]} " in
	*" $st "*)
		if [ $st = disk ] && [ $ON9P = 1 ]; then
			skip "$st cycle" "hibernation's freeze/thaw resets every virtio device whatever No_Soft_Reset says, and the guest's root is on virtio-9p (no freeze/restore in Linux's 9p transport)"
		else
			check "pm_test devices: $st cycle keeps state, counters, XDP and traffic" cycle "$st"
		fi ;;
	*) skip "$st cycle" "not in /sys/power/state (${STATES[*]})" ;;
	esac
done

# Wake-on-LAN off: the next suspend tells the device so (the cycles above
# ran with wol g).
if [ -n "$PM_NIC" ]; then
	for st in mem freeze; do
		[[ " ${STATES[*]} " == *" $st "* ]] || continue
		ethtool -s "$DUT" wol d
		check "pm_test devices: $st cycle with Wake-on-LAN off: the device told (wakeUpEvents 0)" cycle "$st"
		ethtool -s "$DUT" wol g
		break
	done
fi

# Real hibernation: the image written to the swap disk and restored.
hib_setup() {
	mkswap -q "$VMX_SWAP_DEV" && swapon "$VMX_SWAP_DEV" &&
		cat "/sys/block/${VMX_SWAP_DEV#/dev/}/dev" > /sys/power/resume &&
		echo 1 > /sys/power/pm_debug_messages
}
if [ -z "${VMX_SWAP_DEV:-}" ]; then
	skip "hibernation to disk and restore" "no swap disk (tools/vm.sh --swap; the tdevpm and pm groups have one; the debug kernel has no virtio_blk)"
elif [ $ON9P = 1 ]; then
	skip "hibernation to disk and restore" "the guest's root is on virtio-9p (tools/vm.sh --swap puts it in RAM)"
elif ! [[ " ${STATES[*]} " == *" disk "* ]]; then
	skip "hibernation to disk and restore" "disk not in /sys/power/state (${STATES[*]})"
elif check "swap on $VMX_SWAP_DEV for the image" hib_setup; then
	check "hibernation, image read back at once (test_resume): state, counters, XDP, traffic" cycle disk test_resume
	check "hibernation, reboot, image restored by the next boot: state, counters, XDP, traffic" cycle disk reboot
	swapoff "$VMX_SWAP_DEV"
	echo 0 > /sys/power/pm_debug_messages
fi

# ------------------------------------------------ a resume the device refuses
# The test device refuses the ACTIVATE of the resume (fault
# activate-refused: the next ACTIVATE reads back 1). The interface was up,
# so vmx's resume opens it, and that fails: it must log "resume: the device
# could not be opened (-5), interface closed", close the interface and hold
# nothing, so that ip link set up can try again. (Before, the interface
# stayed up with no queues and no IRQs: ip link set down freed every IRQ a
# second time, a WARNING each; an XDP attach activated the device with no
# handler; a zero-copy pool kept pointing at the freed queues, read by every
# busy-polling sendto on its socket.)
XSK=$XDP_PROGS/xsk_tool
RF_N=16
RF_PID=
RF_NIC=$(testdev_nic_of "$DUT" 2>/dev/null)
RF_ST=
for st in mem freeze; do
	[[ " ${STATES[*]} " == *" $st "* ]] && { RF_ST=$st; break; }
done
# rf_irqs: the IRQs requested under DUT's name (DUT, DUT-rxtx-N, ...)
rf_irqs() { awk -v d="$DUT" '$NF == d || index($NF, d "-") == 1 { printf "%s ", $NF }' /proc/interrupts; }
# rf_closed: DUT is closed: no UP flag, no IRQ requested
rf_closed() {
	local fl irqs
	fl=$(ip -o link show dev "$DUT" | sed -n 's/^[0-9]*: [^<]*<\([^>]*\)>.*/\1/p')
	irqs=$(rf_irqs)
	echo "$DUT: flags <$fl>, operstate $(cat "/sys/class/net/$DUT/operstate"), IRQs: ${irqs:-none}"
	[[ ",$fl," != *,UP,* ]] || { echo "$DUT is still UP"; return 1; }
	[ -z "$irqs" ] || { echo "IRQs still requested for $DUT"; return 1; }
}
# rf_setup: xdp_redirect_xsk in place of xdp_pass, every flow to queue 0
# (where the device steers), a zero-copy socket on queue 0 polled every
# 5 ms by recvfrom and sendto with busy polling (xsk_tool -b -s)
rf_setup() {
	xdp_replace "$DUT" xdp_redirect_xsk || return 1
	rss_all_to_queue0 "$DUT" || return 1
	"$XSK" -m zc -b 8 -s 5 -n $RF_N -t "$(scaled 400)" "$DUT" 0 rx >"$VMX_TMP/rf.out" 2>"$VMX_TMP/rf.err" &
	RF_PID=$!
	_vmx_bg+=("$RF_PID")
	xsk_ready_wait "$RF_PID" "$VMX_TMP/rf.err"
	cat "$VMX_TMP/rf.err"
	xsk_ready_mode "$VMX_TMP/rf.err" zc
}
# rf_cycle: a pm_test cycle whose resume the device refuses
rf_cycle() {
	local f0 f1 rc=0
	f0=$(testdev_stat "$DUT" fault-activate-refused) || return 1
	testdev_set "$RF_NIC" fault activate-refused || return 1
	echo devices > "$PMT" || return 1
	echo "$RF_ST" > /sys/power/state || { echo "echo $RF_ST > /sys/power/state failed"; rc=1; }
	echo none > "$PMT"
	f1=$(testdev_stat "$DUT" fault-activate-refused) || return 1
	echo "device: ACTIVATEs refused +$((f1 - f0))"
	[ $((f1 - f0)) = 1 ] || rc=1
	dmesg_since_start | grep -E 'refused activation|resume' | tail -n 3 | sed 's/^\[[^]]*\] //'
	dmesg_since_start | grep -qE "$DUT: resume: the device could not be opened \(-5\), interface closed$" ||
		{ echo "no 'resume: the device could not be opened (-5), interface closed' line"; rc=1; }
	rf_closed || rc=1
	return $rc
}
# rf_down: ip link set down now: no WARNING (IRQs freed twice), closed
# (the old driver, which left the interface up, freed every IRQ again)
rf_down() {
	local m="vmx-selftest: $VMX_TEST: ip link set down $$ $RANDOM" bad
	echo "$m" >/dev/kmsg
	ip link set "$DUT" down || return 1
	sleep 0.5
	bad=$(dmesg | awk -v m="$m" 'f { print } index($0, m) { f = 1 }' |
		grep -E 'WARNING|already-free|Call Trace|BUG|KASAN')
	[ -z "$bad" ] || { echo "$bad" | head -n 8; return 1; }
	echo "no warning"
	rf_closed
}
# rf_xdp: detach and attach an XDP program while closed: nothing comes up
# (the old driver, the interface left up, reconfigured and activated the
# device without an IRQ handler); the socket goes into the new program's
# XSKMAP (xsk_tool on SIGUSR1)
rf_xdp() {
	local rc=0
	xdp_detach "$DUT" || { echo "detach failed"; rc=1; }
	rf_closed || rc=1
	xdp_attach "$DUT" xdp_redirect_xsk || { echo "attach failed"; rc=1; }
	xdp_native "$DUT" xdp_redirect_xsk || rc=1
	rf_closed || rc=1
	kill -USR1 "$RF_PID" 2>/dev/null
	wait_for 10 grep -q "^xsk: remap" "$VMX_TMP/rf.err" || { echo "xsk_tool did not answer SIGUSR1"; rc=1; }
	grep "^xsk: remap" "$VMX_TMP/rf.err"
	grep -q "^xsk: remapped" "$VMX_TMP/rf.err" || rc=1
	return $rc
}
rf_alive() {
	kill -0 "$RF_PID" 2>/dev/null || { echo "xsk_tool exited:"; cat "$VMX_TMP/rf.err"; return 1; }
	echo "xsk_tool (zero-copy socket on $DUT queue 0) still bound and polling"
}
rf_up() {
	ip link set "$DUT" up || return 1
	wait_carrier "$DUT" 20 || return 1
	dut_ping -c 5 -i 0.2 "$PEER_IP" || return 1
	VMX_IPERF_TIME=2 iperf_check
}
# rf_xsk_rx: the socket gets RF_N frames from the peer, bytes exact; its
# sendto calls saw ENETDOWN while closed, and no other error
rf_xsk_rx() {
	local rc
	# (frames within the MTU of 1400 set above)
	pexec env PEER_IP="$PEER_IP" python3 "$XDP_PKT" send "$PEER" "$(mac_of "$DUT")" "$DUT_IP" \
		$XDP_PORT_XSK $RF_N --save "$VMX_TMP/rf.sent" --sizes 60,98,255,512,1000,1400 >/dev/null || return 1
	wait_for 20 grep -q "^xsk: received" "$VMX_TMP/rf.err" || kill -INT "$RF_PID" 2>/dev/null
	wait "$RF_PID"
	rc=$?
	grep -v '^xsk: ready' "$VMX_TMP/rf.err"
	python3 "$XDP_PKT" cmp "$VMX_TMP/rf.sent" "$VMX_TMP/rf.out" || rc=1
	grep -qE '^xsk: sendto: [0-9]+ calls, [1-9][0-9]* ENETDOWN, 0 other errors$' "$VMX_TMP/rf.err" ||
		{ echo "want sendto calls that got ENETDOWN while closed, and no other error"; rc=1; }
	return $rc
}
if [ "$VMX_DRIVER_NAME" != vmx ]; then
	skip "resume with ACTIVATE refused" "vmx's own behaviour and log line (driver $VMX_DRIVER_NAME)"
elif ! testdev_nics | grep -qx "${RF_NIC:-none}"; then
	skip "resume with ACTIVATE refused" "$DUT is QEMU's stock vmxnet3, which cannot refuse an ACTIVATE (the test device's fault activate-refused: groups tdevpm, pmdebug)"
elif ! have_hmp; then
	skip "resume with ACTIVATE refused" "no QEMU monitor in the guest (vm.sh --guest-monitor)"
elif [ -z "$RF_ST" ]; then
	skip "resume with ACTIVATE refused" "neither mem nor freeze in /sys/power/state (${STATES[*]})"
elif check "AF_XDP zero-copy socket on queue 0, busy polling with sendto (xsk_tool -b -s)" rf_setup; then
	check "pm_test $RF_ST, ACTIVATE refused at resume: logged, interface closed, no IRQ held" rf_cycle
	check "XDP detach and attach after it: nothing comes up" rf_xdp
	check "ip link set down after it: no WARNING (no IRQ freed twice)" rf_down
	check "the zero-copy socket bound before the suspend survives" rf_alive
	check "ip link set up: carrier, ping, TCP" rf_up
	check "the zero-copy socket receives $RF_N frames again, bytes exact; its sendto got ENETDOWN while closed" rf_xsk_rx
	rss_default "$DUT" 2>/dev/null
else
	kill "$RF_PID" 2>/dev/null
fi
ip link set dev "$DUT" xdp off 2>/dev/null
vmx_done
