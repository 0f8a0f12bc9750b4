#!/usr/bin/env bash
# xdp_redirect.sh - XDP_REDIRECT out of the DUT: a DEVMAP program sending
# frames from vmx NIC 1 to vmx NIC 2, "xdp-bench redirect IN OUT" under
# pktgen load, cpumap (xdp-bench redirect-cpu) with ping and TCP through
# it and with remote drop, and an AF_XDP copy-mode socket behind an XSKMAP.
#
# Topology: tools/vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio. All
# three NICs share one QEMU hub, so the peer sees whatever either vmx NIC
# sends. The redirect programs swap the MACs (the frame goes back to its
# sender, never to NIC 1 again), and which NIC sent a frame is told by
# NIC 2's own counters (xdptxN_xdp_xmit) and by a promiscuous capture on
# NIC 2: a hub port never gets its own frames back, so NIC 2 must see the
# peer's frames but none of the bounced ones.
# vmx-timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup
DUT_MAC=$(mac_of "$DUT")
PEER_MAC=$(peer_mac)
ping_ok() { peer_ping -c 5 -i 0.1 "$DUT_IP"; }

if [ -z "$DUT2" ]; then
	skip "devmap redirect NIC 1 -> NIC 2" "needs a second vmxnet3 NIC (vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio)"
	skip "xdp-bench redirect NIC 1 -> NIC 2" "needs a second vmxnet3 NIC"
else
	ip link set "$DUT2" up
	wait_carrier "$DUT2" 10 >/dev/null
	IDX2=$(cat "/sys/class/net/$DUT2/ifindex")

	# ------------------------------------------------ own DEVMAP program
	MAP=
	devmap_setup() {
		local id
		xdp_attach "$DUT" xdp_redirect_devmap || return 1
		xdp_native "$DUT" xdp_redirect_devmap || return 1
		id=$(xdp_prog_id "$DUT")
		MAP=$(prog_map_id "$id" devmap) || { echo "no devmap"; return 1; }
		bpftool map show id "$MAP"
	}
	check "xdp_redirect_devmap attached natively on $DUT" devmap_setup

	empty_map_aborts() {
		local a0 a1
		a0=$(estat "$DUT" 'rx[0-9]+_xdp_aborted')
		peer_bounce $XDP_PORT_REDIRECT 10 none || return 1
		a1=$(estat "$DUT" 'rx[0-9]+_xdp_aborted')
		echo "rxN_xdp_aborted +$((a1 - a0))"
		[ $((a1 - a0)) = 10 ]
	}
	check "empty devmap: bpf_redirect_map aborts, rxN_xdp_aborted counts it" empty_map_aborts

	devmap_redirect() {
		local s10 s11 s20 s21 n=33 rc=0 orig bounced
		bpftool map update id "$MAP" key $(u32_le 0) value $(u32_le "$IDX2") || return 1
		bpftool map dump id "$MAP"
		snap "$DUT" >"$VMX_TMP/s10"; snap "$DUT2" >"$VMX_TMP/s20"
		CAP_OPTS="-Q in" cap_start -P "$DUT2" udp dst port $XDP_PORT_REDIRECT || return 1
		peer_bounce $XDP_PORT_REDIRECT $n swap || rc=1
		sleep 0.3
		cap_stop >/dev/null
		snap "$DUT" >"$VMX_TMP/s11"; snap "$DUT2" >"$VMX_TMP/s21"
		s10=$VMX_TMP/s10 s11=$VMX_TMP/s11 s20=$VMX_TMP/s20 s21=$VMX_TMP/s21
		echo "$DUT: rxN_xdp_redirect +$(sdelta $s10 $s11 'rx[0-9]+_xdp_redirect')," \
		     "xdp_tx +$(sdelta $s10 $s11 'rx[0-9]+_xdp_tx'), own xdp_xmit +$(sdelta $s10 $s11 'xdptx[0-9]+_xdp_xmit')"
		echo "$DUT2: xdptxN_xdp_xmit +$(sdelta $s20 $s21 'xdptx[0-9]+_xdp_xmit')," \
		     "xdp_xmit_errors +$(sdelta $s20 $s21 'xdptx[0-9]+_xdp_xmit_errors')," \
		     "xdptxN_packets +$(sdelta $s20 $s21 'xdptx[0-9]+_packets')"
		[ "$(sdelta $s10 $s11 'rx[0-9]+_xdp_redirect')" = $n ] || { echo "want $n redirects"; rc=1; }
		[ "$(sdelta $s20 $s21 'xdptx[0-9]+_xdp_xmit')" = $n ] || { echo "want $n xdp_xmit on $DUT2"; rc=1; }
		[ "$(sdelta $s20 $s21 'xdptx[0-9]+_packets')" -ge $n ] || { echo "$DUT2 XDP queues sent fewer"; rc=1; }
		[ "$(sdelta $s10 $s11 'xdptx[0-9]+_xdp_xmit|rx[0-9]+_xdp_tx')" = 0 ] ||
			{ echo "$DUT sent frames itself"; rc=1; }
		orig=$(tcpdump -n -e -r "$VMX_TMP/cap.pcap" "ether dst $DUT_MAC" 2>/dev/null | wc -l)
		bounced=$(tcpdump -n -e -r "$VMX_TMP/cap.pcap" "ether dst $PEER_MAC" 2>/dev/null | wc -l)
		echo "promiscuous $DUT2 heard $orig frames from the peer and $bounced bounced ones"
		[ "$orig" = $n ] || { echo "capture on $DUT2 missed the peer's frames"; rc=1; }
		[ "$bounced" = 0 ] || { echo "the bounced frames did not leave through $DUT2"; rc=1; }
		return $rc
	}
	check "devmap redirect $DUT -> $DUT2: every frame back at the peer, exact, sent by $DUT2" \
		devmap_redirect
	check "ping works with the devmap program attached" ping_ok

	to_down_nic() {
		local r0 r1
		ip link set "$DUT2" down
		r0=$(estat "$DUT" 'rx[0-9]+_xdp_redirect(_errors)?')
		peer_bounce $XDP_PORT_REDIRECT 10 none
		local rc=$?
		r1=$(estat "$DUT" 'rx[0-9]+_xdp_redirect(_errors)?')
		ip link set "$DUT2" up
		wait_carrier "$DUT2" 10
		echo "redirect attempts +$((r1 - r0))"
		[ $rc = 0 ] && [ $((r1 - r0)) -ge 10 ]
	}
	check "redirect to a NIC that is down: frames dropped, nothing sent" to_down_nic
	check "redirect works again once $DUT2 is up" peer_bounce $XDP_PORT_REDIRECT 11 swap
	xdp_detach "$DUT"

	# ------------------------------------------------ xdp-bench redirect
	bench_redirect() {
		local rd re xm xe prx
		bench_run 3 drv redirect "$DUT" "$DUT2" || return 1
		rate_ok rx/s || return 1
		rd=$(bd 'rx[0-9]+_xdp_redirect'); re=$(bd 'rx[0-9]+_xdp_redirect_errors')
		xm=$(bd2 'xdptx[0-9]+_xdp_xmit'); xe=$(bd2 'xdptx[0-9]+_xdp_xmit_errors')
		prx=$(bp link_rx_packets)
		echo "$DUT rxN_xdp_redirect +$rd (errors +$re); $DUT2 xdp_xmit +$xm (errors +$xe); peer rx +$prx"
		acct $((rd + re)) || return 1
		[ "$rd" -gt 0 ] || return 1
		# the two NICs are read one after the other: a frame the peer
		# sends on its own (ARP, ND) between the reads is counted on one
		# side only, hence 2 frames of slack; a lost frame per batch or
		# doorbell would be thousands
		near $((xm + xe)) "$rd" 0 2 || { echo "$DUT2 xdp_xmit + errors != redirects (+-2)"; return 1; }
		near "$prx" "$xm" 1 50 || { echo "peer did not get what $DUT2 sent"; return 1; }
	}
	check "pktgen set up in the peer netns" pktgen_setup "$DUT_MAC" 5000000 60
	check "xdp-bench redirect $DUT $DUT2: nonzero rate, $DUT2 sends what $DUT redirects" bench_redirect
fi


# ------------------------------------------------ cpumap
BPID=
cpumap_start() {
	timeout -s INT 120 stdbuf -oL xdp-bench redirect-cpu -c 0 -r pass "$DUT" >"$VMX_TMP/cpumap.out" 2>&1 &
	BPID=$!
	_vmx_bg+=($BPID)
	bench_ready "$VMX_TMP/cpumap.out" drv || { cat "$VMX_TMP/cpumap.out"; return 1; }
	xdp_native "$DUT"
}
cpumap_ping() {
	local r0 r1
	r0=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	peer_ping -c 20 -i 0.05 "$DUT_IP" || return 1
	r1=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	echo "rxN_xdp_redirect +$((r1 - r0))"
	[ $((r1 - r0)) -ge 20 ]
}
cpumap_tcp() {
	local r0 r1
	r0=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	iperf_check "$@" || return 1
	r1=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	echo "rxN_xdp_redirect +$((r1 - r0))"
	[ $((r1 - r0)) -ge 100 ]
}
if check "xdp-bench redirect-cpu -c 0 -r pass attached natively" cpumap_start; then
	check "cpumap pass: ping through the cpumap" cpumap_ping
	VMX_IPERF_TIME=3 check "cpumap pass: TCP DUT -> peer (ACKs through the cpumap)" cpumap_tcp
	VMX_IPERF_TIME=3 check "cpumap pass: TCP peer -> DUT (data through the cpumap)" cpumap_tcp -R
	kill -INT "$BPID"; wait "$BPID"
	grep -v '^ *$' "$VMX_TMP/cpumap.out" | tail -n 4 | diag
	check "xdp-bench redirect-cpu detached on SIGINT" xdp_none "$DUT"
else
	kill -INT "$BPID" 2>/dev/null; wait "$BPID"
fi

[ -n "$DUT2" ] || check "pktgen set up in the peer netns" pktgen_setup "$DUT_MAC" 5000000 60
check "xdp-bench redirect-cpu -c 0 -r drop: nonzero drop rate" cpumap_drop 3
check "ping works after the cpumap runs" ping_ok

# ------------------------------------------------ AF_XDP (XSKMAP, copy mode)
# The socket is bound to RX queue 0: where the device spreads flows (RSS on
# the test device) the indirection table sends everything there first.
xsk_rx() {
	local n=24 pid
	rss_all_to_queue0 "$DUT" || return 1
	xdp_attach "$DUT" xdp_redirect_xsk || return 1
	xdp_native "$DUT" xdp_redirect_xsk || return 1
	"$XDP_PROGS/xsk_tool" -n $n "$DUT" 0 rx >"$VMX_TMP/xsk.out" 2>"$VMX_TMP/xsk.err" &
	pid=$!
	if ! xsk_ready_wait "$pid" "$VMX_TMP/xsk.err"; then
		kill "$pid" 2>/dev/null; wait "$pid"; cat "$VMX_TMP/xsk.err"; return 1
	fi
	snap "$DUT" >"$VMX_TMP/x0"
	peer_send $XDP_PORT_XSK $n "$VMX_TMP/xsk.sent" || return 1
	wait "$pid"
	local rc=$?
	snap "$DUT" >"$VMX_TMP/x1"
	cat "$VMX_TMP/xsk.err"
	echo "rxN_xdp_redirect +$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'rx[0-9]+_xdp_redirect')"
	python3 "$XDP_PKT" cmp "$VMX_TMP/xsk.sent" "$VMX_TMP/xsk.out" || return 1
	[ $rc = 0 ] && [ "$(sdelta "$VMX_TMP/x0" "$VMX_TMP/x1" 'rx[0-9]+_xdp_redirect')" = $n ]
}
check "AF_XDP copy mode: 24 frames via XSKMAP, bytes exact" xsk_rx
rss_default "$DUT" 2>/dev/null
check "ping works with the XSK program attached" ping_ok
xdp_detach "$DUT"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

log "runtime ${SECONDS}s"
vmx_done
