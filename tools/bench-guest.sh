#!/usr/bin/env bash
# bench-guest.sh - the benchmark's guest half; run by tools/bench.sh inside
# one guest booted with:  tap vmxnet3 + tap virtio (LRO/TSO path), then on
# the hub: vmxnet3 (DUT), vmxnet3 (second NIC, redirect source), virtio
# (generator and TCP peer).
#
# Usage (in the guest): tools/bench-guest.sh OUT.jsonl
# Env: BENCH_ROUNDS (3), BENCH_SECS (5 per cell), BENCH_SIZES ("64 512"),
#      BENCH_DRIVERS ("vmx vmxnet3"), BENCH_TCP (1), BENCH_MTUS ("1500 3000 9000")
#      BENCH_XDP ("drop pass tx redirect-cpu"), BENCH_MODES ("native skb"),
#      BENCH_EXTRA ("xdp_xmit skb_tx"): subsets, for looking at one cell.
#      BENCH_LOAD (40000): the fixed-load cells' rate in packets/s, below
#      what either driver handles: native XDP and ndo_xdp_xmit at that one
#      offered rate, where the drivers differ only in what a packet costs
#      (mode "@RATE" in the output); BENCH_LOAD=0 leaves them out.
#      BENCH_KEEP=FILE: append every cell's xdp-bench output, interrupt
#      counts and the receiving NIC's moved ethtool -S counters to FILE;
#      BENCH_RING=N: RX ring 0 size of the DUT and the second NIC
#      (ethtool -G rx N; default: each driver's own, 1024 for both).
#      BENCH_PERF=1 adds a perf profile of CPU 0 (the DUT's NAPI) per cell.
#      BENCH_PERF_LIMIT (1.5): smallest share (%) of a symbol in that profile.
#
# Each measurement is one JSON line: round, driver, test, mode, size,
# handled_pps, offered_pps, irqs (the DUT's interrupts in the cell), or
# mbit for TCP; host_dut/host_gen/host_main/host_all: host CPU (cores) used
# by QEMU's DUT vCPU thread, generator vCPU thread, main loop and the whole
# process in the cell (tools/bench.sh shares the host's /proc into the
# guest read-only for this; 0 when it is not there).
set -u
OUT=${1:?usage: bench-guest.sh OUT.jsonl}
TOP=$(cd "$(dirname "$0")/.." && pwd)
# The selftests' library (lib/tool.sh: the tests' helpers without a TAP
# test): loading a driver, interfaces by PCI slot, the generator's netns,
# pktgen's start and stop, XDP state, interrupt counts, log ("bench: ...").
# VMX_KO: this tree's vmx.ko, which tools/bench.sh just built
# shellcheck disable=SC2034 # VMX_TOOL, VMX_KO: read by the library
VMX_TOOL=bench VMX_KO=$TOP/vmx.ko
# shellcheck source=../selftests/drivers/net/vmx/lib/tool.sh
source "$TOP/selftests/drivers/net/vmx/lib/tool.sh" || exit 2
# the generator (PEER of the library) in its netns, PEER_IP 10.99.0.2; the
# DUT DUT_IP 10.99.0.1
PEER_NS=hpeer

# ======================================================================
# Counting mode (BENCH_MODE=count, the default): exact per-packet costs.
# Booted by tools/bench.sh with the vmxcount TCG plugin (tools/count/) and
# five NICs on the hub, in PCI order: vmxnet3 (DUT), vmxnet3 (DUT2, the
# ndo_xdp_xmit source), virtio (generator, netns hpeer), virtio (the
# virtio_net DUT) and virtio (its DUT2). vmx, the in-tree vmxnet3 and the
# in-tree virtio_net are loaded in turn in the order BENCH_ORDER (ABCCBA);
# virtio_net stays loaded for the generator, so its "load" binds the two
# virtio DUT devices to it and its "unload" unbinds them (unbound outside
# their loads, as the vmxnet3 NICs are while no vmxnet3 driver is loaded).
# Every cell sends a fixed number of packets between two markers
# (vmx-mark, which the plugin sees), so the plugin's per-vCPU instruction
# counts and MMIO counts between the markers are the cell's. All three DUTs
# get frames from the same generator. CPU 0 does the DUT's work only: every
# interrupt but the DUT's and DUT2's is moved to CPU 1, and this script,
# pktgen (for the RX cells), xdp-bench and the markers run on CPU 1.
#
# Env: BENCH_COUNT_DIR (set by tools/bench.sh: where vmx-mark is),
#   BENCH_CELLS ("drop:native:64 pass:native:64 tx:native:64 skb_tx:-:64"):
#     TEST:MODE:SIZE with TEST drop|pass|tx|redirect-cpu (MODE native|skb),
#     xdp_xmit (MODE native: pktgen into DUT2, xdp-bench redirect DUT2 ->
#     DUT), skb_tx (MODE -: pktgen on the DUT itself, on CPU 0), tcp
#     (MODE rx|tx, SIZE = the MTU of the DUT and the generator: one iperf3
#     stream of BENCH_TCP_MB (20) MiB, DUT receiving or sending; the cell's
#     "packets" are KiB, so its figures are per KiB), rxdrop and l2fwd
#     (MODE xsk-zc|xsk-copy: an AF_XDP socket, zero-copy or copy mode;
#     see count_xsk)
#   BENCH_PACKETS (20000) per cell, BENCH_PPS (10000): the generator's pace
#     (bursts of 32; the drivers keep up, so all see the same pattern;
#     0 = as fast as pktgen goes), BENCH_ORDER ("vmx vmxnet3 virtio_net
#     virtio_net vmxnet3 vmx"; virtio_net needs the fourth and fifth NIC),
#   BENCH_IDLE_SECS (2): an idle window per driver load (CPU 0's
#     instructions per second with no traffic: timer ticks and the like).
# Output: one JSON line per cell (and per idle window) with the two marker
# IDs; tools/bench_report.py joins them with the plugin's counts.
count_main() {
	local mark=${BENCH_COUNT_DIR:?}/vmx-mark n slots load drv cell
	[ -x "$mark" ] || { log "no $mark"; exit 2; }
	MARK_BIN=$mark MARK_SEQ=0
	# this script and everything it starts on CPU 1
	taskset -pc 1 $$ >/dev/null
	# Quiet CPU 0. With timer migration an idle CPU's timers sit on the
	# other CPU's timer base: CPU 0 then spun on CPU 1's base lock whenever
	# the host preempted CPU 1 holding it (2-3.5 M instructions/s in
	# native_queued_spin_lock_slowpath/lock_timer_base with no traffic, so
	# the count depended on the host's load). Also no soft-lockup watchdog,
	# per-CPU vmstat work once a minute.
	sysctl -qw kernel.timer_migration=0 kernel.watchdog=0 vm.stat_interval=60 ||
		log "sysctl for a quiet CPU 0 failed"
	echo 2 > /proc/irq/default_smp_affinity
	pin_irqs . 2
	mapfile -t slots < <(nic_pci_devs)
	[ ${#slots[@]} -ge 3 ] || { log "need 3 NICs, found ${#slots[@]}"; exit 2; }
	XSLOT_DUT=${slots[0]} XSLOT_DUT2=${slots[1]}
	VSLOT_DUT=${slots[3]:-} VSLOT_DUT2=${slots[4]:-}
	modprobe virtio_net
	modprobe pktgen
	sleep 1
	# the virtio DUTs wait unbound for their load
	for s in $VSLOT_DUT $VSLOT_DUT2; do
		virtio_bind unbind "$s"
	done
	peer_setup "$(pci_ifname "${slots[2]}")" >&2 || { log "no generator netns"; exit 2; }
	GEN_MAC=$(peer_mac)
	pin_irqs . 2
	load=0
	for drv in ${BENCH_ORDER:-vmx vmxnet3 virtio_net virtio_net vmxnet3 vmx}; do
		load=$((load + 1))
		log "load $load: $drv"
		count_load "$drv" || { log "$drv: no interfaces"; exit 1; }
		count_warmup
		count_idle "$drv" "$load"
		for cell in ${BENCH_CELLS:-drop:native:64 pass:native:64 tx:native:64 skb_tx:-:64}; do
			IFS=: read -r CT CM CS <<<"$cell"
			# the guest's uptime: what each cell costs (the smoke's budget)
			log "$drv: cell $cell at $(cut -d' ' -f1 /proc/uptime) s"
			count_cell "$drv" "$load" "$CT" "$CM" "$CS"
		done
		log "$drv: cells done at $(cut -d' ' -f1 /proc/uptime) s"
		count_unload "$drv"
		sleep 0.5
	done
	bench_end
}

# vmx_mark: a marker with the next ID (in MARK_SEQ afterwards).
vmx_mark() {
	MARK_SEQ=$((MARK_SEQ + 1))
	"$MARK_BIN" "$MARK_SEQ" || log "vmx-mark $MARK_SEQ failed"
}

# virtio_bind bind|unbind PCI-SLOT: the slot's virtio device to or from
# virtio_net (the module stays loaded: the generator is a virtio NIC too).
virtio_bind() {
	local v=
	for v in "/sys/bus/pci/devices/$2/"virtio*; do v=${v##*/}; break; done
	[ -n "$v" ] && [ "$v" != "virtio*" ] || { log "no virtio device at $2"; return 1; }
	echo "$v" > "/sys/bus/virtio/drivers/virtio_net/$1" || log "virtio_net $1 $v failed"
}

# virtio_dev PCI-SLOT: its virtio device's name (virtioN, the prefix of its
# interrupts' names in /proc/interrupts).
virtio_dev() {
	local v
	for v in "/sys/bus/pci/devices/$1/"virtio*; do echo "${v##*/}"; return; done
}

count_load() {
	if [ "$1" = virtio_net ]; then
		[ -n "$VSLOT_DUT2" ] || { log "virtio_net: no fourth and fifth NIC"; return 1; }
		SLOT_DUT=$VSLOT_DUT SLOT_DUT2=$VSLOT_DUT2
		virtio_bind bind "$SLOT_DUT"
		virtio_bind bind "$SLOT_DUT2"
		sleep 1
	else
		SLOT_DUT=$XSLOT_DUT SLOT_DUT2=$XSLOT_DUT2
		driver_insert "$1"
	fi
	DUT=$(pci_ifname "$SLOT_DUT")
	DUT2=$(pci_ifname "$SLOT_DUT2")
	[ -n "$DUT" ] && [ -n "$DUT2" ] || return 1
	# the names of the DUT's and DUT2's interrupts start with these
	IRQ_NAMES="$DUT $DUT2"
	[ "$1" = virtio_net ] && IRQ_NAMES="$(virtio_dev "$SLOT_DUT") $(virtio_dev "$SLOT_DUT2")"
	ip addr add "$DUT_IP/24" dev "$DUT"
	ip link set "$DUT" up
	ip link set "$DUT2" up
	pin_irqs "$(irq_re)" 1
	dut_carrier_macs
	# static neighbour: no ARP in the counted windows
	ip neigh replace "$PEER_IP" lladdr "$GEN_MAC" dev "$DUT" nud permanent
	ip -n "$PEER_NS" neigh replace "$DUT_IP" lladdr "$DUT_MAC" dev "$PEER" nud permanent
	# every memory BAR of both NICs as NIC:BAR:START-END (the plugin sees
	# physical addresses): vmxnet3 BAR0, BAR1 and BAR2 (MSI-X), virtio
	# BAR1 (MSI-X) and BAR4 (common, ISR, device and notify regions);
	# flags 0x200 = IORESOURCE_MEM (virtio's legacy I/O BAR0 is unused
	# by a modern driver, and port I/O is no memory access to the plugin)
	BARS=$(for s in "$SLOT_DUT" "$SLOT_DUT2"; do
		tag=dut; [ "$s" = "$SLOT_DUT2" ] && tag=dut2
		bar=0
		while read -r a b f && [ $bar -le 5 ]; do
			(( a && (f & 0x200) )) && printf '%s:%d:%s-%s ' $tag $bar "$a" "$b"
			bar=$((bar + 1))
		done < "/sys/bus/pci/devices/$s/resource"
	done)
	log "$1: DUT $DUT, DUT2 $DUT2, interrupts $IRQ_NAMES, BARs $BARS"
	# for the per-function breakdown (tools/bench_report.py)
	[ -z "${BENCH_HIST:-}" ] || cp /proc/kallsyms "${OUT%.jsonl}.kallsyms.$1"
}

# count_unload DRIVER: rmmod, or the virtio DUTs unbound from virtio_net.
count_unload() {
	if [ "$1" = virtio_net ]; then
		virtio_bind unbind "$SLOT_DUT"
		virtio_bind unbind "$SLOT_DUT2"
	else
		rmmod "$1"
	fi
}

# irq_re: a regex (for pin_irqs) matching the interrupts of IRQ_NAMES: the
# name itself or NAME-suffix (eth0-rxtx-0, virtio3-input.0).
irq_re() {
	local n re=
	for n in $IRQ_NAMES; do re="$re${re:+|}^$n\$|^$n-"; done
	echo "$re"
}

# Interrupts per vector of the DUT and DUT2 as "name count" lines.
# shellcheck disable=SC2086 # IRQ_NAMES: one name a word
count_irqs() { irq_counts "" $IRQ_NAMES; }

# Device-side receive drops (no buffer) of interface $1: vmx dev_rx_nobuf,
# in-tree vmxnet3 "pkts rx OOB" (per queue).
count_oob() {
	ethtool -S "$1" | awk '/^ *(dev_rx_nobuf|pkts rx OOB):/ { s += $NF } END { print s + 0 }'
}

# ethtool -S counters of the DUT and DUT2 as "dut:name value" lines (spaces
# in names, as in the in-tree driver's, become _).
count_stats() {
	local i tag
	for i in "$DUT" "$DUT2"; do
		tag=dut; [ "$i" = "$DUT2" ] && tag=dut2
		# the in-tree driver repeats its counter names per queue: #N
		ethtool -S "$i" | awk -v t="$tag" -F: 'NR > 1 { n = $1; gsub(/^ +/, "", n)
			gsub(/ /, "_", n); k = seen[n]++; print t ":" n (k ? "#" k : ""), $2 + 0 }'
	done
}

# JSON object of the changed counters between two "name value" snapshots.
irq_json() {
	awk 'BEGIN { printf "{" } FNR == NR { b[$1] = $2; next } $2 != b[$1] {
		printf "%s\"%s\":%d", n++ ? "," : "", $1, $2 - b[$1] } END { print "}" }' "$1" "$2"
}

# count_warmup: a few frames into the DUT and DUT2 (and the DUT's ICMP
# replies out) before the first counted window. x86 moves an MSI-X
# interrupt to the CPU it was pinned to at its next interrupt, rewriting
# the vector's MSI-X table entry (4 writes, twice): the virtio DUT's first
# cell counted those until this. Not counted.
count_warmup() {
	local mac
	for mac in "$DUT_MAC" "$DUT2_MAC"; do
		bench_pktgen "$PEER" kpktgend_1 "$DUT_IP" "$mac" 64 64 0 ip netns exec "$PEER_NS"
		ip netns exec "$PEER_NS" bash -c 'echo start > /proc/net/pktgen/pgctrl'
		bench_pktgen_sent "$PEER" kpktgend_1 ip netns exec "$PEER_NS" >/dev/null
	done
	ping -q -c 3 -i 0.2 "$PEER_IP" >/dev/null 2>&1
	sleep 0.5
}

count_idle() {
	local a b t0 t1
	vmx_mark; a=$MARK_SEQ; t0=$(date +%s.%N)
	sleep "${BENCH_IDLE_SECS:-2}"
	vmx_mark; b=$MARK_SEQ; t1=$(date +%s.%N)
	emit "{\"driver\":\"$1\",\"load\":$2,\"test\":\"idle\",\"mode\":\"-\",\"size\":0,\"packets\":0,\"mark0\":$a,\"mark1\":$b,\"secs\":$(secs_between "$t0" "$t1")}"
}

# bench_pktgen IFACE THREAD DST DST_MAC SIZE COUNT PPS NETNS-CMD...: set
# up pktgen thread THREAD to send COUNT packets (0: until stopped) of SIZE
# bytes from IFACE to DST at DST_MAC (UDP port PG_PORT, default 9), in
# bursts of 32 paced to PPS packets/s
# (0: as fast as it goes); one process (NETNS-CMD: env, or ip netns exec
# NS), outside the counted window: each command here forks, and CPU 0
# idles meanwhile. The library's pg_setup and pktgen_setup send single
# frames or bursts of 8 from thread 0; the benchmark keeps its generator
# on CPU 1 and its pattern.
bench_pktgen() {
	local ifn=$1 thr=$2 dst=$3 mac=$4 size=$5 count=$6 pps=$7 delay=0
	shift 7
	[ "$pps" -gt 0 ] && delay=$((32 * 1000000000 / pps))
	"$@" bash -c "
		p=/proc/net/pktgen/$ifn
		echo rem_device_all > /proc/net/pktgen/$thr
		echo add_device $ifn > /proc/net/pktgen/$thr
		echo 'count $count' > \$p; echo 'delay $delay' > \$p
		echo 'clone_skb 1000' > \$p; echo 'burst 32' > \$p
		echo 'pkt_size $((size - 4))' > \$p
		echo 'dst $dst' > \$p; echo 'dst_mac $mac' > \$p
		echo 'udp_dst_min ${PG_PORT:-9}' > \$p; echo 'udp_dst_max ${PG_PORT:-9}' > \$p"
}

# bench_pktgen_sent IFACE THREAD NETNS-CMD...: packets sent (the library's
# pg_sent, read in that netns); frees the thread.
bench_pktgen_sent() {
	local ifn=$1 thr=$2
	shift 2
	pg_sent "$ifn" "$@"
	"$@" sh -c "echo rem_device_all > /proc/net/pktgen/$thr"
}

# count_emit DRIVER LOAD TEST MODE SIZE PACKETS PPS NOBUF BACK MARK0 MARK1
# T0 T1 [MEMBERS]: a counted cell's JSON line, with the interrupt and
# ethtool counter changes between /tmp/irq0 and /tmp/irq1, /tmp/est0 and
# /tmp/est1; MEMBERS: more JSON members, each followed by a comma.
count_emit() {
	emit "{\"driver\":\"$1\",\"load\":$2,\"test\":\"$3\",\"mode\":\"$4\",\"size\":$5,\"packets\":$6,\"pps\":$7,\"dev_nobuf\":$8,\"back\":$9,${14:-}\"irqs\":$(irq_json /tmp/irq0 /tmp/irq1),\"stats\":$(irq_json /tmp/est0 /tmp/est1),\"bars\":\"$BARS\",\"mark0\":${10},\"mark1\":${11},\"secs\":$(secs_between "${12}" "${13}")}"
}

# count_tcp DRIVER LOAD tcp rx|tx MTU: one TCP stream of BENCH_TCP_MB MiB
# between the DUT and the generator at MTU, counted per KiB (iperf3 on
# CPU 1 with this script; the DUT's interrupts and softirqs on CPU 0).
count_tcp() {
	local drv=$1 load=$2 dir=$4 mtu=$5 mb=${BENCH_TCP_MB:-20} a b t0 t1 rc rev=()
	[ "$dir" = rx ] && rev=(-R)
	ip link set "$DUT" mtu "$mtu"
	ip -n "$PEER_NS" link set "$PEER" mtu "$mtu"
	ip netns exec "$PEER_NS" iperf3 -s -D -1 -p 5311
	sleep 0.5
	count_irqs > /tmp/irq0
	count_stats > /tmp/est0
	vmx_mark; a=$MARK_SEQ; t0=$(date +%s.%N)
	# -n: the client sends (tx) or, with -R, the server sends (rx) that much
	timeout 60 iperf3 -c "$PEER_IP" -p 5311 -n "${mb}M" "${rev[@]}" >/tmp/iperf3.out 2>&1
	rc=$?
	vmx_mark; b=$MARK_SEQ; t1=$(date +%s.%N)
	count_irqs > /tmp/irq1
	count_stats > /tmp/est1
	[ $rc = 0 ] || { log "iperf3 ($dir, MTU $mtu) failed:"; sed 's/^/  /' /tmp/iperf3.out >&2; }
	ip link set "$DUT" mtu 1500
	ip -n "$PEER_NS" link set "$PEER" mtu 1500
	[ $rc = 0 ] || return 0
	count_emit "$drv" "$load" tcp "$dir" "$mtu" $((mb * 1024)) 0 0 0 "$a" "$b" "$t0" "$t1"
}

# count_na DRIVER LOAD TEST MODE SIZE REASON: the line of a cell the
# driver cannot run (no numbers; tools/bench_report.py lists it).
count_na() {
	local why=${6//[\"\\]/}
	log "$1: $3 $4 $5: not available: $why"
	emit "{\"driver\":\"$1\",\"load\":$2,\"test\":\"$3\",\"mode\":\"$4\",\"size\":$5,\"na\":\"$why\"}"
}

# count_xsk DRIVER LOAD rxdrop|l2fwd xsk-zc|xsk-copy SIZE: an AF_XDP cell,
# counted like the XDP cells (same markers, pktgen pattern and counters).
# progs/xdp_redirect_xsk.o in driver mode on the DUT sends the generator's
# frames (UDP to XDP_PORT_XSK) to the AF_XDP socket of progs/xsk_tool on
# queue 0, bound zero-copy (xsk-zc) or copy (xsk-copy). Every frame must
# arrive on queue 0: QEMU's vmxnet3 model does not steer, and virtio's
# hub port has one queue pair, but the test device (BENCH_TESTDEV=1: RSS
# on, 2 queues, a random key) may hash pktgen's one flow to queue 1, so
# for the cell the DUT's indirection table sends everything to queue 0
# (count_xsk_queue0). rxdrop: the socket takes each frame and
# gives its chunk straight back to the fill ring (xsk_tool -q rx, as
# xdpsock's rxdrop); l2fwd: it swaps the MACs and sends each frame back
# out of the same socket (xsk_tool fwd). tools/bench_report.py wants
# every frame the DUT did not drop for want of buffers at the socket and,
# l2fwd, back at the generator. The tool runs on CPU 0, with the DUT's
# interrupts: an AF_XDP driver also works in the socket's process (its
# wakeups, ndo_xsk_wakeup, run the queue's NAPI on the caller's CPU), so
# CPU 0 counts all of the driver's work and the application's, alike for
# every driver and both modes. A bind the driver refuses (the in-tree
# vmxnet3 has no zero-copy) gives a line with "na" and the tool's error;
# tools/bench_report.py accepts that for the in-tree drivers, not for vmx.
count_xsk() {
	local steered=0
	count_xsk_queue0 && steered=1
	count_xsk_run "$@"
	[ $steered = 0 ] || rss_default "$DUT" ||
		log "ethtool -X $DUT default failed: the indirection table still sends every flow to queue 0"
}

# count_xsk_queue0: every entry of the DUT's RSS indirection table to
# queue 0 (the library's rss_all_to_queue0, as the selftests' AF_XDP
# sockets on queue 0; nothing to set with one channel, the virtio DUT's
# one queue pair); false when the driver refuses it (virtio_net without
# VIRTIO_NET_F_RSS: no table to set). That is fine where nothing steers
# (stock QEMU's vmxnet3 model ignores the table a driver writes; ethtool
# -x then shows none or one on queue 0); a refusal with a table ethtool
# -x shows with another queue in it is logged (the socket may miss the
# flow, which tools/bench_report.py then reports).
count_xsk_queue0() {
	local other
	rss_all_to_queue0 "$DUT" 2>/tmp/rss.err && return 0
	other=$(ethtool -x "$DUT" 2>/dev/null | awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) if ($i != 0) n++ }
		END { print n + 0 }')
	[ "$other" = 0 ] ||
		log "$DUT: ethtool -X equal 1 refused ($(head -n1 /tmp/rss.err)) with $other indirection entries off queue 0"
	return 1
}

# count_xsk_run: count_xsk's cell, the DUT steering to queue 0.
count_xsk_run() {
	local drv=$1 load=$2 t=$3 mode=$4 size=$5 n=${BENCH_PACKETS:-20000}
	local pps=${BENCH_PPS:-10000} xm act=(rx) q=(-q) pid a b t0 t1
	local sent oob0 oob1 back0 back1 got why
	case $mode in
	xsk-zc) xm=zc ;;
	xsk-copy) xm=copy ;;
	*) log "unknown AF_XDP mode $mode"; return ;;
	esac
	[ "$t" = l2fwd ] && act=(fwd) q=()
	if ! xdp_attach "$DUT" xdp_redirect_xsk 2>/tmp/xsk.err; then
		count_na "$@" "native XDP refused: $(head -n1 /tmp/xsk.err)"
		return
	fi
	taskset -c 0 "$XDP_PROGS/xsk_tool" -m "$xm" -t 3600 "${q[@]}" "$DUT" 0 "${act[@]}" \
		>/dev/null 2>/tmp/xsk.err &
	pid=$!
	if ! xsk_ready_wait "$pid" /tmp/xsk.err || ! xsk_ready_mode /tmp/xsk.err "$xm" >/dev/null; then
		why=$(grep -m1 -E '^xsk: (bind|ready)' /tmp/xsk.err)
		xdp_stop "$pid"
		count_na "$@" "${why:-the socket did not start}"
		return
	fi
	sleep 0.5
	count_irqs > /tmp/irq0
	count_stats > /tmp/est0
	oob0=$(count_oob "$DUT")
	back0=$(peer_link_stat rx_packets)
	PG_PORT=$XDP_PORT_XSK bench_pktgen "$PEER" kpktgend_1 "$DUT_IP" "$DUT_MAC" "$size" "$n" \
		"$pps" ip netns exec "$PEER_NS"
	vmx_mark; a=$MARK_SEQ; t0=$(date +%s.%N)
	ip netns exec "$PEER_NS" bash -c 'echo start > /proc/net/pktgen/pgctrl'
	sleep 0.2
	vmx_mark; b=$MARK_SEQ; t1=$(date +%s.%N)
	sent=$(bench_pktgen_sent "$PEER" kpktgend_1 ip netns exec "$PEER_NS")
	count_irqs > /tmp/irq1
	count_stats > /tmp/est1
	oob1=$(count_oob "$DUT")
	back1=$(peer_link_stat rx_packets)
	xdp_stop "$pid"
	got=$(sed -n 's/^xsk: received \([0-9]*\).*/\1/p' /tmp/xsk.err)
	# what the device dropped for want of buffers never reached the socket
	if [ "${got:-0}" -lt $((${sent:-0} - (oob1 - oob0))) ]; then
		log "$drv $t $mode: the socket got ${got:-0} of ${sent:-0} frames ($((oob1 - oob0)) dropped by the device):"
		sed 's/^/  /' /tmp/xsk.err >&2
	fi
	if [ "$t" = l2fwd ] && [ $((back1 - back0)) -lt $((${sent:-0} - (oob1 - oob0))) ]; then
		log "$drv $t $mode: $((back1 - back0)) of ${sent:-0} frames came back ($((oob1 - oob0)) dropped by the device)"
	fi
	count_emit "$drv" "$load" "$t" "$mode" "$size" "${sent:-0}" "$pps" \
		$((oob1 - oob0)) $((back1 - back0)) "$a" "$b" "$t0" "$t1" "\"xsk_received\":${got:-0},"
}

count_cell() { # driver load test mode size
	local drv=$1 load=$2 t=$3 mode=$4 size=$5 n=${BENCH_PACKETS:-20000}
	local pps=${BENCH_PPS:-10000} rxif=$DUT rxmac=$DUT_MAC xb=() pid="" i
	local a b t0 t1 sent oob0 oob1 back0 back1 pg pgns frags=""
	case $t:$mode in
	drop:frags|tx:frags) frags=xdp_${t}_mb ;;
	*:frags) log "no multi-buffer $t cell"; return ;;
	drop:*|pass:*|tx:*) xb=("$t" -m "$mode" "$DUT") ;;
	esac
	case $t in
	drop|pass|tx) ;;
	redirect-cpu) xb=(redirect-cpu -c 0 -r drop -m "$mode" "$DUT") ;;
	xdp_xmit) xb=(redirect "$DUT2" "$DUT"); rxif=$DUT2; rxmac=$DUT2_MAC ;;
	skb_tx) ;;
	tcp) count_tcp "$@"; return ;;
	rxdrop|l2fwd) count_xsk "$@"; return ;;
	*) log "unknown cell $t"; return ;;
	esac
	: >/tmp/xdp-bench.out
	if [ ${#xb[@]} -gt 0 ]; then
		xdp-bench "${xb[@]}" -i 3600 >/tmp/xdp-bench.out 2>&1 &
		pid=$!
		xdp_wait "$rxif"
	elif [ -n "$frags" ]; then
		count_frags_attach "$frags" "$size" ||
			{ count_na "$@" "native XDP refused: $(head -n1 /tmp/frags.err)"; count_frags_detach; return; }
	fi
	count_irqs > /tmp/irq0
	count_stats > /tmp/est0
	oob0=$(count_oob "$rxif")
	back0=$(peer_link_stat rx_packets)
	if [ "$t" = skb_tx ]; then
		# the generator is the DUT's own pktgen thread on CPU 0
		pg=("$DUT" kpktgend_0) pgns=(env)
		bench_pktgen "${pg[@]}" "$PEER_IP" "$GEN_MAC" "$size" "$n" "$pps" "${pgns[@]}"
	else
		pg=("$PEER" kpktgend_1) pgns=(ip netns exec "$PEER_NS")
		bench_pktgen "${pg[@]}" "$DUT_IP" "$rxmac" "$size" "$n" "$pps" "${pgns[@]}"
	fi
	vmx_mark; a=$MARK_SEQ; t0=$(date +%s.%N)
	"${pgns[@]}" bash -c 'echo start > /proc/net/pktgen/pgctrl'
	# let the last frames through the DUT (and back to the generator)
	sleep 0.2
	vmx_mark; b=$MARK_SEQ; t1=$(date +%s.%N)
	sent=$(bench_pktgen_sent "${pg[@]}" "${pgns[@]}")
	count_irqs > /tmp/irq1
	count_stats > /tmp/est1
	oob1=$(count_oob "$rxif")
	back1=$(peer_link_stat rx_packets)
	[ -z "$frags" ] || count_frags_detach
	if [ -n "$pid" ] || [ -n "$frags" ]; then
		[ -z "$pid" ] || xdp_stop "$pid"
		case $t in tx|xdp_xmit) [ $(((back1 - back0) * 2)) -ge "${sent:-0}" ] ||
			echo "fail: $((back1 - back0)) of ${sent:-0} frames came back" >> /tmp/xdp-bench.out ;;
		esac
		if grep -qiE 'error|fail|usage' /tmp/xdp-bench.out; then
			log "xdp-bench ${xb[*]}:"; sed 's/^/  /' /tmp/xdp-bench.out >&2
		fi
	fi
	count_emit "$drv" "$load" "$t" "$mode" "$size" "${sent:-0}" "$pps" \
		$((oob1 - oob0)) $((back1 - back0)) "$a" "$b" "$t0" "$t1"
}

# count_frags_attach PROG SIZE: a multi-buffer cell's setup (mode frags,
# frames of SIZE bytes, more than a page): the DUT and the generator at
# MTU SIZE, then PROG (progs/PROG.o, section xdp.frags; xdp-bench has no
# multi-buffer program) in driver mode on the DUT, as a user would do it.
# False, the driver's refusal in /tmp/frags.err, when it will not take
# the MTU or the program (the in-tree vmxnet3: no XDP above 3 KiB).
count_frags_attach() {
	ip link set dev "$DUT" mtu "$2" 2>/tmp/frags.err &&
		ip -n "$PEER_NS" link set dev "$PEER" mtu "$2" 2>/tmp/frags.err &&
		xdp_attach "$DUT" "$1" xdp.frags 2>/tmp/frags.err || return 1
	sleep 0.5
}

# count_frags_detach: no program and MTU 1500 again, for the next cell.
count_frags_detach() {
	xdp_detach "$DUT"
	ip link set dev "$DUT" mtu 1500
	ip -n "$PEER_NS" link set dev "$PEER" mtu 1500
}

ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECS:-5}
SIZES=${BENCH_SIZES:-64 512}
DRIVERS=${BENCH_DRIVERS:-vmx vmxnet3}
TCP=${BENCH_TCP:-1}
MTUS=${BENCH_MTUS:-1500 3000 9000}
XDP_TESTS=${BENCH_XDP:-drop pass tx redirect-cpu}
MODES=${BENCH_MODES:-native skb}
EXTRA=${BENCH_EXTRA:-xdp_xmit skb_tx}
LOAD=${BENCH_LOAD:-40000}
# appended to: tools/bench.sh boots one guest per round
touch "$OUT"
FIRST=${BENCH_FIRST_ROUND:-1}
# no udev in the test guest: bash process substitution needs /dev/fd
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

# Host CPU time of QEMU's threads, read from the host's /proc (exported by
# tools/bench.sh as the 9p tag "hostproc"): what a packet costs the host,
# unlike guest CPU time, does not grow when the host deschedules a vCPU.
HP=/run/hostproc
HTASK_DUT="" HTASK_GEN="" HTASK_MAIN=""
mkdir -p "$HP"
if mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,ro hostproc "$HP" 2>/dev/null; then
	QPID=$(readlink "$HP/self")
	for t in "$HP/$QPID"/task/*; do
		case $(cat "$t/comm") in
		"CPU 0/"*) HTASK_DUT=$t ;;
		"CPU 1/"*) HTASK_GEN=$t ;;
		esac
	done
	HTASK_MAIN=$HP/$QPID/task/$QPID
fi
[ -n "$HTASK_DUT" ] || log "no host /proc (or unnamed QEMU threads): host CPU columns will be 0"

# host_snap: "dut gen main all" nanoseconds of host CPU so far.
host_snap() {
	[ -n "$HTASK_DUT" ] || { echo 0 0 0 0; return; }
	local all=0 t v
	for t in "$HP/$QPID"/task/*; do
		read -r v _ < "$t/schedstat" 2>/dev/null && all=$((all + v))
	done
	echo "$(cut -d' ' -f1 "$HTASK_DUT/schedstat") $(cut -d' ' -f1 "$HTASK_GEN/schedstat")" \
		"$(cut -d' ' -f1 "$HTASK_MAIN/schedstat") $all"
}
# secs_between T0 T1: T1 - T0 in seconds as a JSON number (bc prints
# ".88" for a window under a second, which JSON does not take)
secs_between() { printf '%.6f' "$(echo "$2 - $1" | bc)"; }

emit() { echo "$1" >> "$OUT"; }

# bench_end: the kernel log lines that would fail a test (kernel_log_bad:
# warnings, oopses, vmx's own trouble), each with the lines after it, then
# "done". Not a verdict: the benchmark's result is its numbers.
bench_end() {
	local bad
	bad=$(dmesg -r | kernel_log_bad)
	if [ -n "$bad" ]; then
		log "kernel warnings during the benchmark:"
		dmesg | grep -F -A 12 -f <(printf '%s\n' "$bad" | head -n 5) | head -n 80 >&2
	fi
	log "done"
}

# PCI order: 0 tap vmxnet3, 1 tap virtio, 2 hub vmxnet3 (DUT), 3 hub vmxnet3
# (second), 4 hub virtio (generator). Interfaces are found by PCI slot
# (nic_pci_devs, pci_ifname).
# pin_irqs REGEX MASK: every interrupt whose name matches REGEX to CPUs MASK.
pin_irqs() {
	local irq
	while read -r irq; do
		echo "$2" > "/proc/irq/$irq/smp_affinity" 2>/dev/null
	done < <(awk -v d="$1" '$1 ~ /^[0-9]+:$/ && $NF ~ d { sub(":", "", $1); print $1 }' /proc/interrupts)
}

# driver_insert DRIVER: load vmx (VMX_KO) or an in-tree module (dut_load),
# then a second for its interfaces.
driver_insert() {
	VMX_DRIVER=$1 dut_load >&2 || log "loading $1 failed"
	sleep 1
}

# dut_carrier_macs: wait for the DUT's carrier; DUT_MAC, DUT2_MAC.
dut_carrier_macs() {
	wait_carrier "$DUT" 10 >&2
	DUT_MAC=$(mac_of "$DUT")
	DUT2_MAC=$(mac_of "$DUT2")
}

# xdp_wait IF: until xdp-bench's program is on IF, and half a second more.
xdp_wait() {
	wait_for 10 xdp_attached "$1"
	sleep 0.5
}

# xdp_stop PID: stop xdp-bench PID; never leave a program behind for the
# next cell.
xdp_stop() {
	local i
	kill -INT "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for i in "$DUT" "$DUT2"; do
		ip link set dev "$i" xdp off 2>/dev/null
		ip link set dev "$i" xdpgeneric off 2>/dev/null
	done
}

if [ "${BENCH_MODE:-count}" = count ]; then
	count_main
	exit 0
fi
mapfile -t SLOTS < <(nic_pci_devs)
[ ${#SLOTS[@]} -ge 5 ] || { log "need 5 NICs, found ${#SLOTS[@]}"; exit 2; }

modprobe virtio_net
modprobe pktgen
sleep 1
GEN_VIRTIO=$(virtio_dev "${SLOTS[4]}")
# the TCP peer on the tap backend in netns peer, 10.98.0.2
TPEER=$(pci_ifname "${SLOTS[1]}")
PEER_NS=peer PEER_IP=10.98.0.2 PEER_IP6=fd98::2 peer_setup "$TPEER" >&2 ||
	{ log "no tap peer netns"; exit 2; }
ip -n peer link set "$TPEER" mtu 9000
# The generator also serves as the hub TCP peer, in its own netns.
peer_setup "$(pci_ifname "${SLOTS[4]}")" >&2 || { log "no generator netns"; exit 2; }


load_driver() {
	local i
	driver_insert "$1"
	TDUT=$(pci_ifname "${SLOTS[0]}")
	DUT=$(pci_ifname "${SLOTS[2]}")
	DUT2=$(pci_ifname "${SLOTS[3]}")
	ip link set "$TDUT" mtu 9000 up
	ip addr add 10.98.0.1/24 dev "$TDUT"
	ip addr add "$DUT_IP/24" dev "$DUT"
	for i in ${BENCH_RING:+"$DUT" "$DUT2"}; do
		ethtool -G "$i" rx "$BENCH_RING" || log "ethtool -G $i rx $BENCH_RING refused"
	done
	ip link set "$DUT" up
	ip link set "$DUT2" up
	# The DUT side (DUT and the second NIC, the redirect source) on CPU 0;
	# the generator side (pktgen, and the generator NIC's interrupts, which
	# take the XDP_TX and redirected frames back) on CPU 1.
	pin_irqs "$DUT|$DUT2" 1
	pin_irqs "^$GEN_VIRTIO-" 2
	dut_carrier_macs
}

unload_driver() {
	rmmod "$1"
	sleep 0.5
}

# Interrupts of interface $1 so far (its vectors: $1, $1-rxtx-N...).
irqs_of() { irq_counts "" "$1" | awk '{ n += $2 } END { print n + 0 }'; }

# One XDP cell (the program runs on interface ifname). The program is attached before the traffic starts and
# detached after it stopped: under multi-threaded TCG, re-targeting the XDP
# dispatcher while another vCPU runs it ends in "Oops: int3" (see
# selftests/drivers/net/vmx/xdp_lib.sh), whatever the driver.
# Prints "handled offered irqs": handled = mean of xdp-bench's per-second
# rate (rx/s, or $XB_UNIT) over the SECS seconds after a 1 s warm-up, offered = pktgen's rate,
# irqs = the DUT's interrupts in those seconds, back = frames/s the
# generator received in them.
XB_OUT=/tmp/xdp-bench.out
# cell_snap: "ns pktgen-sent gen-rx dut-irqs cpu0-busy cpu0-total host-dut
# host-gen host-main host-all" now.
cell_snap() {
	local sent
	sent=$(pktgen_sent)
	echo "$(date +%s%N) ${sent:-0} $(peer_link_stat rx_packets) $(irqs_of "$DUT") $(awk '$1 == "cpu0" {
		print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat) $(host_snap)"
}

host_json() { # dut gen main all -> JSON members, each followed by a comma
	printf '"host_dut":%s,"host_gen":%s,"host_main":%s,"host_all":%s,' "$@"
}

xdp_cell() { # size dst_mac ifname command args...
	local size=$1 mac=$2 ifn=$3 pid i l0 l1 a b handled
	shift 3
	# line-buffered: the per-second lines are counted while it runs
	stdbuf -oL xdp-bench "$@" -i 1 > "$XB_OUT" 2>&1 &
	pid=$!
	xdp_wait "$ifn"
	# from the generator, at full speed or paced to CELL_RATE packets/s
	bench_pktgen "$PEER" kpktgend_1 "$DUT_IP" "$mac" "$size" 0 "${CELL_RATE:-0}" ip netns exec "$PEER_NS"
	pktgen_start
	sleep 1
	l0=$(wc -l < "$XB_OUT"); a=$(cell_snap)
	if [ -n "${BENCH_KEEP:-}" ]; then
		grep -E 'eth|virtio' /proc/interrupts > /tmp/irq0
		ethtool -S "$ifn" > /tmp/est0 2>/dev/null
	fi
	if [ -n "${BENCH_PERF:-}" ]; then
		# where CPU 0 (the DUT's interrupts and NAPI) spends the cell
		perf record -q -e cpu-clock -C 0 -g -o /tmp/perf.data -- sleep "$SECS" 2>/dev/null
	else
		sleep "$SECS"
	fi
	l1=$(wc -l < "$XB_OUT"); b=$(cell_snap)
	if [ -n "${BENCH_KEEP:-}" ]; then
		grep -E 'eth|virtio' /proc/interrupts > /tmp/irq1
		ethtool -S "$ifn" > /tmp/est1 2>/dev/null
	fi
	pktgen_stop
	sleep 0.5
	xdp_stop "$pid"
	handled=$(sed -n "$((l0 + 1)),${l1}p" "$XB_OUT" | grep -E '^[^ ]' |
		grep -oE "[0-9][0-9,]* ${XB_UNIT:-rx/s}" | tr -d , |
		awk '{ s += $1; n++ } END { if (n) print int(s / n) }')
	if [ -n "${BENCH_KEEP:-}" ]; then
		{
			echo "== $size $* (rates from lines $((l0 + 1))..$l1; $a -> $b)"
			cat "$XB_OUT"
			paste /tmp/irq0 /tmp/irq1 | awk '{ print "irq", $1, $NF, $2 + 0, $3 + 0, "->", $(NF/2+2) + 0, $(NF/2+3) + 0 }'
			# the counters of the receiving NIC that moved in the window
			# (names may hold spaces: the in-tree driver's "pkts rx out of buf")
			paste /tmp/est0 /tmp/est1 2>/dev/null | tr '\t' '\n' |
				sed -E 's/^ +//; s/ /_/g; s/:_*/ /' | paste - - |
				awk -v i="$ifn" 'NF == 4 && $4 != $2 { print "stat", i, $1, $4 - $2 }'
			[ -z "${BENCH_PERF:-}" ] ||
				perf report -i /tmp/perf.data --no-children --percent-limit "${BENCH_PERF_LIMIT:-1.5}" \
					--stdio -g none 2>/dev/null | grep -v '^#' | grep .
		} >> "$BENCH_KEEP"
	fi
	if [ -z "$handled" ]; then
		log "no rate from xdp-bench $*:"
		sed 's/^/  /' "$XB_OUT" >&2
	fi
	# handled offered irqs back cpu0 host-dut host-gen host-main host-all
	# over the window between a and b
	echo "${handled:-0} $a $b" | awk '{
		t = ($12 - $2) / 1e9; if (t <= 0) t = 1
		cpu = ($17 - $7) > 0 ? ($16 - $6) / ($17 - $7) : 0
		printf "%d %d %d %d %.3f %.3f %.3f %.3f %.3f\n", $1, ($13 - $3) / t,
			$15 - $5, ($14 - $4) / t, cpu, ($18 - $8) / 1e9 / t,
			($19 - $9) / 1e9 / t, ($20 - $10) / 1e9 / t, ($21 - $11) / 1e9 / t }'
}

tcp_cell() { # ns dst dut-if peer-if mtu dir(-R or "")
	local ns=$1 dst=$2 dif=$3 pif=$4 mtu=$5 dir=$6 r
	ip link set "$dif" mtu "$mtu"
	ip -n "$ns" link set "$pif" mtu "$mtu"
	sleep 0.5
	ip netns exec "$ns" iperf3 -s -D -1 -p 5301
	sleep 0.5
	r=$(timeout 30 iperf3 -c "$dst" -p 5301 -t "$SECS" ${dir:+"$dir"} -J 2>/dev/null |
	    python3 -c 'import json,sys
try: print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e6, 1))
except Exception: print(0)')
	echo "${r:-0}"
}

for round in $(seq "$FIRST" $((FIRST + ROUNDS - 1))); do
	for drv in $DRIVERS; do
		log "round $round: $drv"
		load_driver "$drv"
		for size in $SIZES; do
			for t in $XDP_TESTS; do
				for mode in $MODES; do
					case $t in
					redirect-cpu) args=(redirect-cpu -c 0 -r drop -m "$mode" "$DUT") ;;
					*) args=("$t" -m "$mode" "$DUT") ;;
					esac
					read -r h o n b c hd hg hm ha < <(xdp_cell "$size" "$DUT_MAC" "$DUT" "${args[@]}")
					emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"$t\",\"mode\":\"$mode\",\"size\":$size,\"handled_pps\":$h,\"offered_pps\":$o,\"irqs\":$n,\"back_pps\":$b,\"cpu0\":$c,$(host_json "$hd" "$hg" "$hm" "$ha")\"secs\":$SECS}"
				done
			done
		done
		# the same offered load for both drivers: what a packet costs
		if [ "$LOAD" -gt 0 ]; then
			for t in $XDP_TESTS xdp_xmit; do
				case $t in
				redirect-cpu) args=(-c 0 -r drop "$DUT") ;;
				xdp_xmit) args=("$DUT2" "$DUT") ;;
				*) args=("$DUT") ;;
				esac
				if [ "$t" = xdp_xmit ]; then
					read -r h o n b c hd hg hm ha < <(CELL_RATE=$LOAD XB_UNIT=xmit/s \
						xdp_cell 64 "$DUT2_MAC" "$DUT2" redirect "${args[@]}")
				else
					read -r h o n b c hd hg hm ha < <(CELL_RATE=$LOAD \
						xdp_cell 64 "$DUT_MAC" "$DUT" "$t" -m native "${args[@]}")
				fi
				emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"$t\",\"mode\":\"@$LOAD\",\"size\":64,\"handled_pps\":${h:-0},\"offered_pps\":${o:-0},\"irqs\":$n,\"back_pps\":$b,\"cpu0\":$c,$(host_json "$hd" "$hg" "$hm" "$ha")\"secs\":$SECS}"
			done
		fi
		# ndo_xdp_xmit: traffic into the second NIC, redirected out of DUT
		case " $EXTRA " in *" xdp_xmit "*)
		read -r h o n b c hd hg hm ha < <(XB_UNIT=xmit/s xdp_cell 64 "$DUT2_MAC" "$DUT2" redirect "$DUT2" "$DUT")
		emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"xdp_xmit\",\"mode\":\"native\",\"size\":64,\"handled_pps\":${h:-0},\"offered_pps\":${o:-0},\"irqs\":$n,\"back_pps\":$b,\"cpu0\":$c,$(host_json "$hd" "$hg" "$hm" "$ha")\"secs\":$SECS}"
		;; esac
		# skb TX: pktgen on the DUT itself
		case " $EXTRA " in *" skb_tx "*)
		bench_pktgen "$DUT" kpktgend_1 "$PEER_IP" "$(peer_mac)" 64 0 0 env
		echo start > /proc/net/pktgen/pgctrl &
		sleep "$SECS"
		echo stop > /proc/net/pktgen/pgctrl
		wait
		h=$(sed -n 's/^ *\([0-9]*\)pps.*/\1/p' "/proc/net/pktgen/$DUT" | head -n1)
		echo rem_device_all > /proc/net/pktgen/kpktgend_1
		emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"skb_tx\",\"mode\":\"-\",\"size\":64,\"handled_pps\":${h:-0},\"offered_pps\":0}"
		;; esac
		if [ "$TCP" = 1 ]; then
			for mtu in $MTUS; do
				for dir in tx rx; do
					d=""; [ $dir = rx ] && d=-R
					m=$(tcp_cell "$PEER_NS" "$PEER_IP" "$DUT" "$PEER" "$mtu" "$d")
					emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"tcp_$dir\",\"mode\":\"hub\",\"size\":$mtu,\"mbit\":$m}"
					m=$(tcp_cell peer 10.98.0.2 "$TDUT" "$TPEER" "$mtu" "$d")
					emit "{\"round\":$round,\"driver\":\"$drv\",\"test\":\"tcp_$dir\",\"mode\":\"tap\",\"size\":$mtu,\"mbit\":$m}"
				done
			done
			ip link set "$DUT" mtu 1500
			ip -n "$PEER_NS" link set "$PEER" mtu 1500
		fi
		unload_driver "$drv"
	done
done
bench_end
