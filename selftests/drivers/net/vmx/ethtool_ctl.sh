#!/usr/bin/env bash
# ethtool_ctl.sh - the device controls ethtool reaches, each with its
# effect checked where a device we have can show it, and each refusal
# with a message and traffic still flowing:
#   -c/-C  interrupt coalescing (revision 3+; adaptive, rate-based through
#          rx-usecs, static through frame counts): read back; on the test
#          device a rate limit holds interrupts back (stat-intr-held) and
#          costs fewer interrupts per frame, and so do static frame counts
#          (rx-frames 32; stat-coal-depth/-flush); below revision 3 refused.
#   -x/-X  RSS key and indirection table (128 entries, Toeplitz only): read
#          back; on the test device with RSS the table moves the flows.
#   -n/-N  rx-flow-hash (ports of TCP/UDP/ESP from revision 4): on the
#          test device UDP flows spread over the queues only once the
#          ports are hashed; below revision 4 refused.
#   -d     register dump (layout 2: revision first).
#   -s wol magic packet only; other modes refused.
# vmx-timeout: 400
source "$(dirname "$0")/lib.sh"

vmx_setup
[ "$VMX_DRIVER_NAME" = vmx ] || { skip "vmx's ethtool controls" "driver is $VMX_DRIVER_NAME"; vmx_done; }

REV=$(dut_revision)
NQ=$(ethtool -l "$DUT" | awk '/^Combined:/ { n = $2 } END { print n }')
TD=
if have_testdev; then TD=$(testdev_nic_of "$DUT") || TD=; fi
log "revision $REV, $NQ queue pairs, test device: ${TD:-no}"

traffic_ok() { dut_ping -c 3 -i 0.1 "$PEER_IP"; }

# refused CMD...: fails (non-zero) with a message on stderr or in the
# kernel log, and the link keeps working.
refused() {
	local out rc m0 m1
	m0=$(dmesg | wc -l)
	out=$("$@" 2>&1); rc=$?
	m1=$(dmesg | wc -l)
	echo "$* -> rc $rc: $out"
	dmesg | tail -n $((m1 - m0)) | grep -E "vmx|$DUT" | sed 's/^\[[^]]*\] //'
	# ethtool 6.1 exits 0 after some refusals ("Cannot change ...")
	[ $rc != 0 ] || printf '%s\n' "$out" | grep -qE 'Cannot|not supported' ||
		{ echo "accepted"; return 1; }
	[ -n "$out" ] || [ "$m1" -gt "$m0" ] || { echo "no message"; return 1; }
	traffic_ok
}

# ---------------------------------------------------------------- coalescing
coal() { ethtool -c "$DUT" | awk -v k="$1:" '$1 == k { print $2 }'; }

# intr_per_100: DUT queue interrupts per 100 frames received while the
# peer sends 5000 UDP datagrams of 100 bytes at 2500/s: one at a time, so
# NAPI alone does not batch them and the device's moderation shows.
irq_sum() { awk -v d="$DUT" '$NF ~ "^" d "-rxtx" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts; }
intr_per_100() {
	local i0 i1 r0 r1
	i0=$(irq_sum); r0=$(stat_of "$DUT" rx_packets)
	VMX_IPERF_TIME=2 VMX_UDP_MAX_LOSS=20 iperf_check -R -u -b 2M -l 100 > /dev/null 2>&1
	i1=$(irq_sum); r1=$(stat_of "$DUT" rx_packets)
	echo $(((i1 - i0) * 100 / (r1 - r0 + 1)))
}

if [ "$REV" -lt 3 ]; then
	check "ethtool -c refused below revision 3, with a message" refused ethtool -c "$DUT"
	check "ethtool -C refused below revision 3, with a message" refused ethtool -C "$DUT" rx-usecs 100
else
	set_read() {
		ethtool -C "$DUT" "$@" || return 1
		ethtool -c "$DUT" | grep -E '^(Adaptive|rx-usecs|rx-frames|tx-frames|tx-frames-irq):' | tr '\n' ' '; echo
	}
	check "ethtool -C adaptive-rx on, read back" eval 'set_read adaptive-rx on rx-usecs 0 rx-frames 0 tx-frames 0 tx-frames-irq 0 && ethtool -c "$DUT" | grep -q "^Adaptive RX: on"'
	check "ethtool -C rx-usecs 1000 (rate 1000/s), read back" eval 'set_read adaptive-rx off rx-usecs 1000 && [ "$(coal rx-usecs)" = 1000 ]'
	check "ethtool -C static frame counts, read back" eval 'set_read rx-usecs 0 rx-frames 32 tx-frames 16 tx-frames-irq 8 && [ "$(coal rx-frames)" = 32 ] && [ "$(coal tx-frames-irq)" = 8 ]'
	check "ethtool -C two schemes at once refused, with a message" refused ethtool -C "$DUT" rx-usecs 100 rx-frames 8
	check "ethtool -C rx-usecs 5 (200000/s) refused, with a message" refused ethtool -C "$DUT" rx-frames 0 tx-frames 0 tx-frames-irq 0 rx-usecs 5
	check "ethtool -C rx-frames 129 refused, with a message" refused ethtool -C "$DUT" rx-frames 129
	if [ -n "$TD" ]; then
		# the test device enforces the rate-based scheme (patch 0006)
		rate_effect() {
			local h0 h1 h2 off on
			ethtool -C "$DUT" rx-frames 0 tx-frames 0 tx-frames-irq 0 rx-usecs 0 || return 1
			h0=$(testdev_stat "$TD" intr-held) || return 1
			off=$(intr_per_100)
			h1=$(testdev_stat "$TD" intr-held) || return 1
			ethtool -C "$DUT" rx-usecs 2000 || return 1
			on=$(intr_per_100)
			h2=$(testdev_stat "$TD" intr-held) || return 1
			echo "interrupts per 100 frames: no coalescing $off, rate 500/s $on; device held back $((h1 - h0)), then $((h2 - h1))"
			[ $((h1 - h0)) = 0 ] && [ $((h2 - h1)) -gt 0 ] && [ "$on" -lt "$off" ]
		}
		check "rate-based coalescing holds interrupts back (fewer per frame)" rate_effect
		check "coalescing kept across down/up" eval 'ip link set "$DUT" down && ip link set "$DUT" up && wait_carrier "$DUT" 10 && [ "$(coal rx-usecs)" = 2000 ]'
		# ... and the static scheme (patch 0015): an RX queue's interrupt
		# waits for rx-frames completions, a lone frame at most
		# coal-flush-us (1 ms by default)
		static_effect() {
			local d0 d1 f0 f1 off on
			ethtool -C "$DUT" rx-frames 0 tx-frames 0 tx-frames-irq 0 rx-usecs 0 || return 1
			off=$(intr_per_100)
			d0=$(testdev_stat "$TD" coal-depth) || return 1
			f0=$(testdev_stat "$TD" coal-flush) || return 1
			ethtool -C "$DUT" rx-frames 32 || return 1
			on=$(intr_per_100)
			d1=$(testdev_stat "$TD" coal-depth) || return 1
			f1=$(testdev_stat "$TD" coal-flush) || return 1
			echo "interrupts per 100 frames: no coalescing $off, rx-frames 32 $on; device: sent at depth $((d1 - d0)), by the bound $((f1 - f0))"
			[ $((d1 - d0 + f1 - f0)) -gt 0 ] && [ "$on" -lt "$off" ]
		}
		check "static coalescing (rx-frames 32) holds interrupts back (fewer per frame)" static_effect
		ethtool -C "$DUT" rx-frames 0 tx-frames 0 tx-frames-irq 0 > /dev/null 2>&1
		ethtool -C "$DUT" rx-usecs 0 adaptive-rx on > /dev/null 2>&1
	else
		skip "coalescing changes the interrupt rate" "stock QEMU stores nothing of SET_COALESCE; needs the test device (vmxnet3t)"
	fi
	check "traffic after the coalescing changes" traffic_ok
fi

# ---------------------------------------------------------------- RSS
indir() { ethtool -x "$DUT" | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) printf "%s ", $i }'; }
rss_read() {
	local t
	ethtool -x "$DUT" | sed -n '/key/,$p' | head -n 5
	t=$(indir)
	echo "indirection table: $(echo "$t" | wc -w) entries"
	[ "$(echo "$t" | wc -w)" = 128 ] && ethtool -x "$DUT" | grep -q 'toeplitz: on'
}
check "ethtool -x: 128-entry table, 40-byte key, Toeplitz" rss_read
if [ "$NQ" -ge 2 ]; then
	check "ethtool -X weight 0 1: every entry names queue 1" eval 'ethtool -X "$DUT" weight 0 1 && [ "$(indir | tr " " "\n" | sort -u | xargs)" = 1 ]'
	check "ethtool -X hfunc xor refused (Toeplitz only)" refused ethtool -X "$DUT" hfunc xor
	hkey_readback() {
		local key
		key=$(seq 1 40 | awk '{ printf "%s%02x", (NR > 1 ? ":" : ""), $1 }')
		ethtool -X "$DUT" hkey "$key" || return 1
		ethtool -x "$DUT" | tr -d ' \n' | grep -qi "$key"
	}
	check "ethtool -X hkey: read back" hkey_readback
	# rxq_share Q: frames the test device delivered to queue Q while the
	# peer sends 8 TCP streams (iperf3 -P 8 picks 8 source ports).
	qdelta() {
		local q a=() b=()
		for q in $(seq 0 $((NQ - 1))); do a+=("$(testdev_stat "$TD" "rx-queue$q")"); done
		"$@" > /dev/null 2>&1
		for q in $(seq 0 $((NQ - 1))); do b+=("$(testdev_stat "$TD" "rx-queue$q")"); done
		for q in $(seq 0 $((NQ - 1))); do printf '%s ' $((b[q] - a[q])); done
	}
	if [ -n "$TD" ] && [ "$(testdev_prop "$TD" rss)" = on ]; then
		tcp_flows() { VMX_IPERF_TIME=2 iperf_check -R -P 8; }
		table_moves() {
			local d
			ethtool -X "$DUT" weight 0 1 || return 1
			d=$(qdelta tcp_flows); echo "weight 0 1: frames per RX queue: $d"
			[ "${d%% *}" -lt 20 ] || return 1
			ethtool -X "$DUT" weight 1 0 || return 1
			d=$(qdelta tcp_flows); echo "weight 1 0: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ print $2 }')" -lt 20 ] || return 1
			ethtool -X "$DUT" default || return 1
			d=$(qdelta tcp_flows); echo "default: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ print ($1 > 100 && $2 > 100) }')" = 1 ]
		}
		check "the indirection table moves TCP flows between queues" table_moves
	else
		skip "the indirection table moves flows" "stock QEMU delivers every frame to queue 0; needs the test device with rss=on"
	fi
	ethtool -X "$DUT" default > /dev/null 2>&1
else
	skip "ethtool -X" "one queue pair (RSS off)"
fi

# ---------------------------------------------------------------- rx-flow-hash
fh() { ethtool -n "$DUT" rx-flow-hash "$1" | tr '\n' ' '; echo; }
check "rx-flow-hash tcp4: addresses and ports" eval 'fh tcp4; fh tcp4 | grep -q "L4 bytes 0 & 1"'
UDP_OK=0
if [ "$REV" -lt 4 ]; then
	check "rx-flow-hash udp4 sdfn refused below revision 4, with a message" refused ethtool -N "$DUT" rx-flow-hash udp4 sdfn
	check "rx-flow-hash udp4: addresses only" eval 'fh udp4; ! fh udp4 | grep -q "L4 bytes"'
else
	# from revision 7 UDP hashing needs the capability (DCR0 bit 0) granted
	CAPS=$(caps_granted "$(caps_line "$DUT")")
	UDP_OK=1
	if [ "$REV" -ge 7 ] && [ $((${CAPS:-0} & 1)) = 0 ]; then UDP_OK=0; fi
	log "capabilities granted: ${CAPS:-none (rev $REV)}; UDP hashing available: $UDP_OK"
fi
if [ "$REV" -ge 4 ] && [ "$UDP_OK" = 0 ]; then
	check "rx-flow-hash udp4 sdfn refused without the UDP RSS capability, with a message" refused ethtool -N "$DUT" rx-flow-hash udp4 sdfn
	check "rx-flow-hash udp4: addresses only" eval 'fh udp4; ! fh udp4 | grep -q "L4 bytes"'
elif [ "$REV" -ge 4 ]; then
	check "rx-flow-hash udp4 sdfn, read back" eval 'ethtool -N "$DUT" rx-flow-hash udp4 sdfn && fh udp4 | grep -q "L4 bytes 0 & 1"'
	check "rx-flow-hash udp4 sd (addresses only), read back" eval 'ethtool -N "$DUT" rx-flow-hash udp4 sd && ! fh udp4 | grep -q "L4 bytes"'
	check "rx-flow-hash udp4 sdfnv (VLAN) refused, with a message" refused ethtool -N "$DUT" rx-flow-hash udp4 sdfnv
	if [ -n "$TD" ] && [ "$(testdev_prop "$TD" rss)" = on ] && [ "$NQ" -ge 2 ]; then
		# 32 UDP flows (one port each), 3 datagrams per flow
		udp_flows() {
			pexec bash -c 'for r in 1 2 3; do for p in $(seq 9100 9131); do echo x > /dev/udp/'"$DUT_IP"'/$p; done; done'
		}
		spread() {
			local d
			ethtool -N "$DUT" rx-flow-hash udp4 sd || return 1
			d=$(qdelta udp_flows); echo "udp4 sd: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ m = 0; s = 0; for (i = 1; i <= NF; i++) { s += $i; if ($i > m) m = $i } print (m * 100 >= s * 95) }')" = 1 ] || return 1
			ethtool -N "$DUT" rx-flow-hash udp4 sdfn || return 1
			d=$(qdelta udp_flows); echo "udp4 sdfn: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ print ($1 >= 10 && $2 >= 10) }')" = 1 ]
		}
		check "UDP flows spread over the queues only with the ports hashed" spread
	else
		skip "rx-flow-hash moves UDP flows" "needs the test device with rss=on and 2 queues"
	fi
	ethtool -N "$DUT" rx-flow-hash udp4 sd > /dev/null 2>&1
fi

# ---------------------------------------------------------------- register dump
regs() {
	local w
	ethtool -d "$DUT" | head -n 4
	w=$(ethtool -d "$DUT" | awk '/^0x0000:/ { print $2; exit }')
	echo "first byte (revision): $w"
	[ "$((16#$w))" = "$REV" ]
}
check "ethtool -d: a register dump whose first word is the revision ($REV)" regs

# ---------------------------------------------------------------- Wake-on-LAN
wol() { ethtool "$DUT" | awk '$1 == "Wake-on:" { print $2 }'; }
check "ethtool -s wol g, read back" eval 'ethtool -s "$DUT" wol g && [ "$(wol)" = g ] && ethtool "$DUT" | grep "Supports Wake-on"'
check "ethtool -s wol u refused (magic packet only), with a message" refused ethtool -s "$DUT" wol u
check "ethtool -s wol d, read back" eval 'ethtool -s "$DUT" wol d && [ "$(wol)" = d ]'

check "traffic at the end" traffic_ok
vmx_done
