#!/usr/bin/env bash
# ethtool_ctl.sh - the device controls ethtool reaches, each with its
# effect checked where a device we have can show it, and each refusal
# with a message and traffic still flowing:
#   -c/-C  interrupt coalescing (revision 3+; adaptive, rate-based through
#          rx-usecs, static through frame counts): read back; on the test
#          device a rate limit holds interrupts back (stat-intr-held) and
#          costs fewer interrupts per frame, and so do static frame counts
#          (rx-frames 32; stat-coal-depth/-flush), and after a down/up
#          (RESET_DEV makes the device forget it) still holds them back;
#          below revision 3 refused.
#   -x/-X  RSS key and indirection table (128 entries, Toeplitz only): read
#          back; on the test device with RSS the table moves the flows,
#          and with two keys of the test's own every TCP flow lands on the
#          queue the Toeplitz hash computed here predicts.
#   -n/-N  rx-flow-hash (ports of TCP/UDP/ESP from revision 4): on the
#          test device UDP flows spread over the queues only once the
#          ports are hashed; below revision 4 refused.
#   -d     register dump (layout 2: revision first); its VRRS, UVRS and
#          MAC words are what QEMU holds (read through the monitor).
#   -s wol magic packet only; other modes refused; the PCI device's
#          wakeup setting (power/wakeup) follows it.
# vmx-timeout: 400
source "$(dirname "$0")/lib.sh"

vmx_setup
[ "$VMX_DRIVER_NAME" = vmx ] || { skip "vmx's ethtool controls" "driver is $VMX_DRIVER_NAME"; vmx_done; }

REV=$(dut_revision)
NQ=$(combined_channels "$DUT")
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
		# ... and not only in the driver: RESET_DEV (every down) makes
		# the device forget its scheme (patch 0024: adaptive again,
		# which moderates nothing with coal-adaptive off), so holding
		# interrupts back after the up proves the device was told again
		kept_in_device() {
			local h0 h1 n
			h0=$(testdev_stat "$TD" intr-held) || return 1
			n=$(intr_per_100)
			h1=$(testdev_stat "$TD" intr-held) || return 1
			echo "after down/up, ethtool -c rx-usecs $(coal rx-usecs): interrupts per 100 frames $n; device held back $((h1 - h0))"
			[ $((h1 - h0)) -gt 0 ] || { echo "the device no longer moderates: it was not given the scheme again"; return 1; }
		}
		check "coalescing kept across down/up in the device (it still holds interrupts back)" kept_in_device
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
		# (the default table spreads by a random key: with 8 flows all
		# on one queue 1 run in 128; 16 flows for that step: 1 in 32768)
		tcp_flows() { VMX_IPERF_TIME=2 iperf_check -R -P "${1:-8}"; }
		table_moves() {
			local d
			ethtool -X "$DUT" weight 0 1 || return 1
			d=$(qdelta tcp_flows); echo "weight 0 1: frames per RX queue: $d"
			[ "${d%% *}" -lt 20 ] || return 1
			ethtool -X "$DUT" weight 1 0 || return 1
			d=$(qdelta tcp_flows); echo "weight 1 0: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ print $2 }')" -lt 20 ] || return 1
			ethtool -X "$DUT" default || return 1
			d=$(qdelta tcp_flows 16); echo "default: frames per RX queue: $d"
			[ "$(echo "$d" | awk '{ print ($1 > 100 && $2 > 100) }')" = 1 ]
		}
		check "the indirection table moves TCP flows between queues" table_moves
		# The key, seen from the device: with the table "equal NQ"
		# (entry i names queue i % NQ) a TCP flow lands on queue
		# (toeplitz(key, saddr daddr sport dport) % 128) % NQ, the hash
		# computed here (lib/testdev.sh). The peer sends one SYN per
		# flow from a source port of its choice to a closed port (the
		# DUT answers with a RST: one frame each); the flows predicted
		# for one queue go together, and the device's per-queue
		# counters must put them all there. A device still hashing with
		# another key puts each flow on either queue at random.
		SYN_PORT=9
		syns() {
			pexec python3 -c 'import socket, sys
for sp in sys.argv[3:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], int(sp)))
    s.settimeout(2)
    try:
        s.connect((sys.argv[2], '"$SYN_PORT"'))
    except OSError:
        pass
    s.close()' "$PEER_IP" "$DUT_IP" "$@"
		}
		ip_hex() { local IFS=.; printf '%02x' $1; }
		key_predicts() {
			local key=$1 per=8 q sp h d rc=0 n=() flows=() full=0
			ethtool -X "$DUT" equal "$NQ" || return 1
			ethtool -X "$DUT" hkey "$key" || return 1
			for ((q = 0; q < NQ; q++)); do n[q]=0; flows[q]=; done
			for ((sp = 40000; sp < 40400 && full < NQ; sp++)); do
				h=$(toeplitz "$key" "$(ip_hex "$PEER_IP")$(ip_hex "$DUT_IP")$(printf '%04x%04x' "$sp" "$SYN_PORT")") || return 1
				q=$(((h % 128) % NQ))
				[ "${n[q]}" -lt $per ] || continue
				n[q]=$((n[q] + 1)); flows[q]+=" $sp"
				[ "${n[q]}" -lt $per ] || full=$((full + 1))
			done
			[ $full = "$NQ" ] || { echo "no $per flows for every queue in 400 source ports"; return 1; }
			# Permanent neighbour entries on both ends: no ARP probe
			# (not IP: queue 0) lands in a window whatever the time
			# the windows take.
			ip neigh replace "$PEER_IP" lladdr "$(peer_mac)" dev "$DUT" nud permanent
			pexec ip neigh replace "$DUT_IP" lladdr "$(mac_of "$DUT")" dev "$PEER" nud permanent
			for ((q = 0; q < NQ; q++)); do
				# shellcheck disable=SC2086 # the ports are words
				d=$(qdelta syns ${flows[q]})
				echo "key ${key:0:11}..: source ports${flows[q]} predicted on queue $q; device frames per RX queue: $d"
				echo "$d" | awk -v q=$q -v n=$per '{ for (i = 1; i <= NF; i++) if ((i - 1 == q && $i < n) || (i - 1 != q && $i > 1)) bad = 1 } END { exit bad }' ||
					{ echo "the device did not put them where key ${key:0:11}.. puts them"; rc=1; }
			done
			ip neigh del "$PEER_IP" dev "$DUT"
			pexec ip neigh del "$DUT_IP" dev "$PEER"
			return $rc
		}
		MSKEY=6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa
		OWNKEY=$(seq 101 140 | awk '{ printf "%s%02x", (NR > 1 ? ":" : ""), ($1 * 37) % 256 }')
		check "ethtool -X hkey reaches the device: flows on the queues Toeplitz predicts (key 1)" key_predicts "$MSKEY"
		check "ethtool -X hkey reaches the device: flows on the queues Toeplitz predicts (key 2)" key_predicts "$OWNKEY"
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
# regword N: 32-bit word N of the dump (little-endian hex bytes).
regword() {
	local h
	h=$(ethtool -d "$DUT" | awk -v n="$1" '/^0x[0-9a-fA-F]+:/ { for (i = 2; i <= NF; i++) b[k++] = $i }
		END { print b[4 * n + 3] b[4 * n + 2] b[4 * n + 1] b[4 * n] }')
	echo $((16#${h:-0}))
}
# Words 1-4 are the device's VRRS, UVRS, MACL and MACH as read: compared
# with what QEMU holds, through the monitor - VRRS the revisions offered
# (stock QEMU: revision 1; the test device: every one up to max-revision,
# as vm.sh set it), UVRS 1, the MAC the NIC's QOM "mac" property holds
# (what MACL/MACH are read from) and the interface's address.
NIC=$(testdev_nic_of "$DUT" 2>/dev/null) || NIC=
regs_device() {
	local vrrs uvrs macl mach mr want dev dump
	[ -n "$NIC" ] || { echo "no QOM id for $DUT"; return 1; }
	vrrs=$(regword 1); uvrs=$(regword 2); macl=$(regword 3); mach=$(regword 4)
	mr=1
	[ -z "$TD" ] || mr=$(testdev_prop "$TD" max-revision)
	want=$(((1 << ${mr:-1}) - 1))
	dev=$(qom_get "$NIC" mac) || return 1
	dump=$(printf '%02x:%02x:%02x:%02x:%02x:%02x' $((macl & 255)) $(((macl >> 8) & 255)) \
		$(((macl >> 16) & 255)) $(((macl >> 24) & 255)) $((mach & 255)) $(((mach >> 8) & 255)))
	echo "dump: VRRS $(printf %#x "$vrrs") UVRS $uvrs MAC $dump; device ($NIC): VRRS $(printf %#x "$want") (max-revision ${mr:-1}), MAC $dev; $DUT: $(mac_of "$DUT")"
	[ "$vrrs" = "$want" ] || { echo "VRRS is not what the device offers"; return 1; }
	[ "$uvrs" = 1 ] || { echo "UVRS is not 1"; return 1; }
	[ "$dump" = "$dev" ] && [ "$dev" = "$(mac_of "$DUT")" ] || { echo "MAC words, device and interface disagree"; return 1; }
}
check "ethtool -d: VRRS, UVRS and MAC words are what the device holds (QEMU monitor)" regs_device

# ---------------------------------------------------------------- Wake-on-LAN
wol() { ethtool "$DUT" | awk '$1 == "Wake-on:" { print $2 }'; }
check "ethtool -s wol g, read back" eval 'ethtool -s "$DUT" wol g && [ "$(wol)" = g ] && ethtool "$DUT" | grep "Supports Wake-on"'
check "ethtool -s wol u refused (magic packet only), with a message" refused ethtool -s "$DUT" wol u
check "ethtool -s wol d, read back" eval 'ethtool -s "$DUT" wol d && [ "$(wol)" = d ]'
# Neither device keeps Wake-on-LAN state (UPDATE_PMCFG is read by neither
# stock QEMU nor the test device), so what can be seen outside the driver
# is the PCI device's wakeup setting in the PM core, which the PCI core
# turns into PME enable at suspend.
wakeup_of() { cat "/sys/class/net/$DUT/device/power/wakeup" 2>/dev/null; }
if [ -n "$(wakeup_of)" ]; then
	check "ethtool -s wol g/d: the PCI device's wakeup follows (power/wakeup)" eval 'ethtool -s "$DUT" wol g && w1=$(wakeup_of) && ethtool -s "$DUT" wol d && w2=$(wakeup_of) && echo "wol g: $w1, wol d: $w2" && [ "$w1" = enabled ] && [ "$w2" = disabled ]'
else
	check "ethtool -s wol: the PCI device is wakeup-capable (power/wakeup)" eval 'ls "/sys/class/net/$DUT/device/power/"; false'
fi

check "traffic at the end" traffic_ok
vmx_done
