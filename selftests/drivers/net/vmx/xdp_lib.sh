#!/usr/bin/env bash
# xdp_lib.sh - XDP helpers for the vmx selftests. Source it after lib.sh.
#
# Programs live in progs/ (built by "make -C progs" when missing or stale).
# The programs that bounce frames act only on IPv4/UDP to these ports
# (progs/xdp_common.h); everything else goes to the stack:
#   XDP_PORT_TX 7777 xdp_tx, XDP_PORT_GROW 7778 / XDP_PORT_SHRINK 7779
#   xdp_adjust_head and xdp_adjust_tail, XDP_PORT_REDIRECT 7780
#   xdp_redirect_devmap, XDP_PORT_XSK 7781 xdp_redirect_xsk.
# xdp_pkt.py (run in the peer netns) sends known frames and checks what
# comes back byte for byte; pp_check.py looks for leaked page_pool pages.
# The counter helpers (estat, snap, sdelta, near...) are lib.sh's, in
# lib/counters.sh; mac_of and peer_mac in lib/net.sh.

XDP_PROGS=$VMX_LIB_DIR/progs
XDP_PKT=$VMX_LIB_DIR/xdp_pkt.py
XDP_PP_CHECK=$VMX_LIB_DIR/pp_check.py
XDP_PORT_TX=7777
XDP_PORT_GROW=7778
XDP_PORT_SHRINK=7779
XDP_PORT_REDIRECT=7780
XDP_PORT_XSK=7781
XDP_PORT_META=7782
XDP_PORT_PASS_VLAN=7783
XDP_PORT_PASS_TAIL_GROW=7784
XDP_PORT_PASS_TAIL_SHRINK=7785
XDP_PORT_UNKNOWN_ACT=7786
# Kernel log lines that fail a test besides lib.sh's VMX_DMESG_BAD.
XDP_DMESG_BAD='page_pool.*(stalled|inflight|leak)|pool shutdown|xdp.*(warn|fail)'

# xdp_build: build the programs and xsk_tool if missing or stale.
xdp_build() {
	# built already (run-tests.sh builds them on the host; a RAM root
	# guest, vm.sh --ramroot, has no clang)
	make -q -s -C "$XDP_PROGS" 2>/dev/null && return 0
	command -v clang >/dev/null || { echo "clang not installed"; return 1; }
	make -s -C "$XDP_PROGS" 2>&1
}

xdp_obj() { echo "$XDP_PROGS/$1.o"; }

# xdp_attach IF PROG [SEC]: attach progs/PROG.o in driver mode (fails if a
# program is already attached); xdp_replace: the same with -force.
xdp_attach() { ip link set dev "$1" xdpdrv obj "$(xdp_obj "$2")" sec "${3:-xdp}"; }
xdp_replace() { ip -force link set dev "$1" xdpdrv obj "$(xdp_obj "$2")" sec "${3:-xdp}"; }
xdp_detach() { ip link set dev "$1" xdpdrv off; }

# xdp_state IF: "MODE ID NAME" of the attached program, "none 0 -" if none.
# MODE: drv (native), skb (generic), hw, multi (from "ip -d link show").
xdp_state() {
	ip -d link show dev "$1" | awk '
		NR == 1 { m = "none"
			  if ($0 ~ / xdp /) m = "drv"
			  else if ($0 ~ / xdpgeneric /) m = "skb"
			  else if ($0 ~ / xdpoffload /) m = "hw"
			  else if ($0 ~ / xdpmulti /) m = "multi" }
		$1 ~ /^prog\/xdp/ && !id { for (i = 2; i < NF; i++) {
			if ($i == "id") id = $(i + 1)
			if ($i == "name") nm = $(i + 1) } }
		END { print m, (id ? id : 0), (nm ? nm : "-") }'
}

# xdp_prog_id IF: id of the attached program, 0 if none.
xdp_prog_id() { xdp_state "$1" | awk '{print $2}'; }

# xdp_native IF [NAME]: a program (named NAME) is attached in driver mode;
# shows the lines of "ip -d link" that say so.
xdp_native() {
	local st
	ip -d link show dev "$1" | grep -E "^[0-9]+:|prog/xdp" | sed 's/ *link\/ether.*//'
	read -r -a st <<<"$(xdp_state "$1")"
	[ "${st[0]}" = drv ] || { echo "XDP mode is '${st[0]}', want drv (native)"; return 1; }
	ip link show dev "$1" | head -n1 | grep -q " xdp " ||
		{ echo "ip link does not show 'xdp' (native) on $1"; return 1; }
	# the kernel keeps 15 characters of a program name
	[ -z "${2:-}" ] || [ "${st[2]}" = "${2:0:15}" ] ||
		{ echo "attached program is ${st[2]}, want $2"; return 1; }
}

# xdp_attached IF: a program is attached, in any mode.
xdp_attached() { [ "$(xdp_state "$1" | cut -d' ' -f1)" != none ]; }

# xdp_none IF: no program attached.
xdp_none() {
	local st
	read -r -a st <<<"$(xdp_state "$1")"
	echo "XDP on $1: ${st[*]}"
	[ "${st[0]}" = none ]
}

# Program statistics (kernel.bpf_stats_enabled=1, set by xdp_setup).
prog_run_cnt() {
	bpftool prog show id "$1" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "run_cnt") { print $(i + 1); f = 1 } }
		     END { if (!f) print 0 }'
}

# prog_map_id PROG_ID [TYPE]: id of the program's first map (of TYPE).
prog_map_id() {
	local m
	for m in $(bpftool prog show id "$1" -j | python3 -c '
import json,sys; print(" ".join(str(i) for i in json.load(sys.stdin).get("map_ids", [])))'); do
		if [ -z "${2:-}" ] || bpftool map show id "$m" -j |
			python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["type"] != sys.argv[1])' "$2"; then
			echo "$m"
			return 0
		fi
	done
	return 1
}

# tc_ingress_load IF PROG: progs/PROG.o (section tc) as a direct-action
# filter on IF's ingress (its clsact qdisc already there); prints the
# program's id, fails with a message when it cannot be attached or found.
tc_ingress_load() {
	local id
	tc filter add dev "$1" ingress bpf da obj "$(xdp_obj "$2")" sec tc || return 1
	id=$(tc filter show dev "$1" ingress | sed -n 's/.* id \([0-9]*\).*/\1/p' | head -n1)
	[ -n "$id" ] || { echo "no tc program id on $1" >&2; return 1; }
	echo "$id"
}

# u32_le N: the four bytes of N for bpftool's key/value arguments.
u32_le() { printf '%d %d %d %d' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }

# peer_bounce PORT COUNT MODE [DSTMAC]: the peer sends COUNT frames to
# DUT_IP:PORT (to DSTMAC, default the DUT's MAC) and checks what comes
# back for MODE (see xdp_pkt.py). XDP_SIZES=N,N,... sets the frame sizes.
peer_bounce() {
	pexec env PEER_IP="$PEER_IP" python3 "$XDP_PKT" bounce "$PEER" \
		"${4:-$(mac_of "$DUT")}" "$DUT_IP" "$1" "$2" "$3" --timeout "${XDP_BOUNCE_TIMEOUT:-5}" \
		${XDP_SIZES:+--sizes "$XDP_SIZES"}
}

# peer_send PORT COUNT [SAVEFILE]: send only.
peer_send() {
	pexec env PEER_IP="$PEER_IP" python3 "$XDP_PKT" send "$PEER" \
		"$(mac_of "$DUT")" "$DUT_IP" "$1" "$2" ${3:+--save "$3"}
}

# ------------------------------------------------------------ AF_XDP
# progs/xsk_tool says "xsk: ready (zero-copy|copy, need_wakeup on|off...)"
# on stderr once its socket is bound, its fill ring filled and the socket
# in the XDP program's XSKMAP: frames sent before that miss the socket. A
# setup error (a bind the driver refuses: "xsk: bind (zc): ...") ends the
# tool instead.

# xsk_ready_wait PID ERRFILE: wait (20 s at most) until xsk_tool PID, its
# stderr in ERRFILE, said it is ready or ended; true when it said ready.
xsk_ready_wait() {
	wait_for 20 _xsk_ready_or_gone "$1" "$2"
	grep -q '^xsk: ready' "$2"
}
_xsk_ready_or_gone() { grep -q '^xsk: ready' "$2" || ! kill -0 "$1" 2>/dev/null; }

# xsk_ready_mode ERRFILE zc|copy: the ready line in ERRFILE says the socket
# is bound in that mode (zero-copy or copy); says so when it is not.
xsk_ready_mode() {
	local m=copy
	[ "$2" = zc ] && m=zero-copy
	grep -q "^xsk: ready ($m," "$1" || { echo "socket not in $m mode"; return 1; }
}

# ------------------------------------------------------------ pktgen
# pktgen runs in the peer netns and sends 60-byte UDP frames to the DUT.

_pg() { pexec sh -c "echo '$2' > /proc/net/pktgen/$1"; }

# pktgen_setup DSTMAC [COUNT] [SIZE] [UDP_DST_PORT]
pktgen_setup() {
	local t
	modprobe pktgen || return 1
	for t in $(pexec sh -c 'ls /proc/net/pktgen' | grep kpktgend_); do
		_pg "$t" rem_device_all || return 1
	done
	_pg kpktgend_0 "add_device $PEER" || return 1
	_pg "$PEER" "count ${2:-2000000}" &&
	_pg "$PEER" "pkt_size ${3:-60}" &&
	_pg "$PEER" "delay 0" &&
	_pg "$PEER" "clone_skb 0" &&
	_pg "$PEER" "burst 8" &&
	_pg "$PEER" "dst $DUT_IP" &&
	_pg "$PEER" "udp_dst_min ${4:-9}" &&
	_pg "$PEER" "udp_dst_max ${4:-9}" &&
	_pg "$PEER" "dst_mac $1"
}

# pktgen_start: start in the background; pktgen_stop: stop and wait.
pktgen_start() {
	pexec sh -c 'echo start > /proc/net/pktgen/pgctrl' &
	_pg_pid=$!
	_vmx_bg+=($_pg_pid)
}

pktgen_stop() {
	_pg pgctrl stop
	wait "$_pg_pid" 2>/dev/null
}

# pktgen_sent: frames sent by the last run.
pktgen_sent() { pg_sent "$PEER" pexec; }

# ------------------------------------------------------------ xdp-bench

_bench_mode() { [ "$(xdp_state "$DUT" | cut -d' ' -f1)" = "$1" ]; }

# bench_ready OUT MODE: xdp-bench (run under "stdbuf -oL": its output to a
# file is otherwise block-buffered; in file OUT) has its program on
# $DUT in MODE (drv|skb) and has finished setting up: its first statistics
# line ("rx/s") is out (each wait 20 s times VMX_TIMEOUT_SCALE: the
# debug kernel loads the program slowly). redirect-cpu attaches its
# program before it fills its cpumap (xdp-tools 1.3), so a frame it
# redirects in between is dropped.
bench_ready() {
	wait_for "$(scaled 20)" _bench_mode "$2" &&
		wait_for "$(scaled 20)" grep -q 'rx/s' "$1"
}

# bench_run SECS MODE ARGS...: "xdp-bench ARGS -i 1" on $DUT; once its
# program shows up in MODE (drv|skb), pktgen (see pktgen_setup) sends for
# SECS seconds; then xdp-bench gets SIGINT and must detach. Leaves counter
# snapshots in $BENCH.{dut,dut2,peer}{0,1}, the frames sent in BENCH_SENT,
# how long pktgen sent in BENCH_USECS (microseconds, from its start to its
# stop) and xdp-bench's output in $BENCH.out.
BENCH=
BENCH_SENT=0
BENCH_USECS=0
# ip_in: IPv4 packets the stack of this netns took in (Ip InReceives) as a
# snap line. rx_packets counts every frame received, XDP or not; this
# tells which reached the stack.
ip_in() { awk '$1 == "Ip:" && $2 ~ /^[0-9]+$/ { print "ip_InReceives", $4 }' /proc/net/snmp; }
bench_run() {
	local secs=$1 mode=$2 pid rc
	shift 2
	BENCH=$VMX_TMP/bench
	rm -f "$BENCH".*
	timeout -s INT 120 xdp-bench "$@" -i 1 >"$BENCH.out" 2>&1 &
	pid=$!
	if ! wait_for 20 _bench_mode "$mode"; then
		kill -INT "$pid" 2>/dev/null; wait "$pid"
		cat "$BENCH.out"
		echo "xdp-bench $* did not attach in $mode mode ($(xdp_state "$DUT"))"
		return 1
	fi
	{ snap "$DUT"; ip_in; } >"$BENCH.dut0"; [ -z "$DUT2" ] || snap "$DUT2" >"$BENCH.dut20"
	peer_snap >"$BENCH.peer0"
	BENCH_USECS=${EPOCHREALTIME/./}
	pktgen_start
	sleep "$secs"
	pktgen_stop
	BENCH_USECS=$((${EPOCHREALTIME/./} - BENCH_USECS))
	sleep 1
	{ snap "$DUT"; ip_in; } >"$BENCH.dut1"; [ -z "$DUT2" ] || snap "$DUT2" >"$BENCH.dut21"
	peer_snap >"$BENCH.peer1"
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	BENCH_SENT=$(pktgen_sent)
	grep -v '^ *$' "$BENCH.out"
	echo "xdp-bench exit status $rc; pktgen sent $BENCH_SENT frames in ${secs}s"
	if ! xdp_none "$DUT" >/dev/null; then
		echo "xdp-bench left a program attached: $(xdp_state "$DUT")"
		xdp_detach "$DUT"
		return 1
	fi
	[ "$BENCH_SENT" -gt 0 ] || { echo "pktgen sent nothing"; return 1; }
}

# bench_rate UNIT: highest "N UNIT" rate xdp-bench printed (e.g. rx/s).
bench_rate() {
	grep -oE "[0-9][0-9,.]* $1" "$BENCH.out" | tr -d , | awk '{print int($1)}' |
		sort -n | tail -n1 | grep . || echo 0
}

# bd REGEX / bd2 REGEX / bp REGEX: counter change on DUT, DUT2, peer
# during the last bench_run.
bd() { sdelta "$BENCH.dut0" "$BENCH.dut1" "$1"; }
bd2() { sdelta "$BENCH.dut20" "$BENCH.dut21" "$1"; }
bp() { sdelta "$BENCH.peer0" "$BENCH.peer1" "$1"; }

# acct SEEN: frames the driver saw (SEEN) plus the device's no-buffer
# drops account for what pktgen sent in the last bench_run (1% + 50).
acct() {
	local nobuf
	nobuf=$(bd dev_rx_nobuf)
	echo "pktgen sent $BENCH_SENT = $1 seen + $nobuf no-buffer drops ($(($1 + nobuf)))?"
	near $(($1 + nobuf)) "$BENCH_SENT" 1 50
}

# rate_ok UNIT: xdp-bench reported a nonzero UNIT rate (rx/s, drop/s...).
rate_ok() {
	local r
	r=$(bench_rate "$1")
	echo "xdp-bench peak rate: $r $1"
	[ "$r" -gt 0 ]
}

# cpumap_drop SECS: xdp-bench redirect-cpu -c 0 -r drop for SECS seconds
# under traffic; nonzero rx and drop rates, every frame the program saw
# was redirected or counted as a redirect error, some were redirected.
cpumap_drop() {
	local pk rd re
	bench_run "$1" drv redirect-cpu -c 0 -r drop "$DUT" || return 1
	rate_ok rx/s || return 1
	rate_ok drop/s || return 1
	pk=$(bd 'rx[0-9]+_xdp_packets'); rd=$(bd 'rx[0-9]+_xdp_redirect')
	re=$(bd 'rx[0-9]+_xdp_redirect_errors')
	echo "rxN_xdp_packets +$pk redirect +$rd redirect_errors +$re"
	acct "$pk" || return 1
	[ $((rd + re)) = "$pk" ] || { echo "redirect + errors != xdp_packets"; return 1; }
	[ "$rd" -gt 0 ]
}

# ------------------------------------------------------------ CPU 0 only
# Under QEMU TCG (multi-threaded) with 2 vCPUs, switching XDP programs at
# a high rate while another vCPU runs XDP ends in "Oops: int3" at
# bpf_dispatcher_xdp_func: the kernel retargets the XDP dispatcher's
# static call with int3-based text patching (text_poke_bp), and a vCPU
# still executes the transient int3 after the patch completed. It is not
# the driver: the in-tree vmxnet3 driver with generic XDP oopses the same
# way. Tests that churn programs under traffic therefore keep the NIC
# interrupts (so NAPI and XDP) and the churning process on CPU 0.

# pin_irqs_cpu0: every NIC interrupt (vmx and virtio) to CPU 0.
_irq_saved=()
pin_irqs_cpu0() {
	local i
	for i in $(awk -F: '/eth|virtio/ { gsub(/ /, "", $1); print $1 }' /proc/interrupts); do
		_irq_saved+=("$i:$(cat "/proc/irq/$i/smp_affinity" 2>/dev/null)")
		{ echo 1 >"/proc/irq/$i/smp_affinity"; } 2>/dev/null
	done
}
irqs_restore() {
	local e
	for e in "${_irq_saved[@]}"; do
		{ echo "${e#*:}" >"/proc/irq/${e%%:*}/smp_affinity"; } 2>/dev/null
	done
	_irq_saved=()
}

# ------------------------------------------------------------ page_pool

# pp_settled [S]: no destroyed page_pool still holds pages after S seconds.
pp_settled() { python3 "$XDP_PP_CHECK" settled "${1:-10}"; }

# check_pp_settled NAME [S]: subtest NAME = pp_settled S, skipped when the
# kernel has no page-pool netlink (before 6.8: then only the kernel log's
# "stalled pool shutdown" warning, 60 s later, would tell).
check_pp_settled() {
	if python3 "$XDP_PP_CHECK" list >/dev/null 2>&1; then
		check "$1" pp_settled "${2:-10}"
	else
		skip "$1" "no page-pool netlink in kernel $(uname -r)"
	fi
}

# dmesg_xdp_clean: nothing XDP/page_pool related went wrong in the log.
dmesg_xdp_clean() {
	local bad
	bad=$(dmesg_since_start | grep -E -i "$XDP_DMESG_BAD")
	[ -z "$bad" ] && { echo "no page_pool/XDP warnings in the kernel log"; return 0; }
	echo "$bad" | head -n 20
	return 1
}

# VMX_XDP_TIMING=1: every check reports how long it took.
if [ "${VMX_XDP_TIMING:-0}" = 1 ]; then
	eval "_lib_$(declare -f check)"
	check() {
		local t rc
		t=$(date +%s%N)
		_lib_check "$@"
		rc=$?
		log "took $(( ($(date +%s%N) - t) / 1000000 )) ms"
		return $rc
	}
fi

# xdp_setup: build the programs, then the usual vmx_setup; bails out when
# the programs cannot be built.
xdp_setup() {
	xdp_build > "$VMX_TMP/build.out" 2>&1 ||
		{ diag <"$VMX_TMP/build.out"; bail "cannot build the XDP programs in $XDP_PROGS" build; }
	sysctl -qw kernel.bpf_stats_enabled=1
	vmx_setup "$@"
}
