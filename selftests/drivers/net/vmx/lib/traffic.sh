# shellcheck shell=bash
# lib/traffic.sh - traffic between DUT and the peer, for the vmx selftests
# (sourced by lib.sh): ping, background jobs, iperf3, UDP datagrams,
# packet capture, probes of what the device lets in (RX filters),
# byte-exact TCP copies, and byte-exact TCP through a VXLAN/Geneve tunnel
# with the tunnel offload counters (tunnel_case).

# _ping_loss ARGS...: run ping, print its summary, return 0 on 0% loss.
_ping_loss() {
	local out loss
	out=$("$@" 2>&1)
	printf '%s\n' "$out" | tail -n 2
	loss=$(printf '%s\n' "$out" | sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p')
	[ "$loss" = 0 ]
}

# dut_ping ARGS...: ping from DUT side (root netns); 0 on no loss at all.
dut_ping() { _ping_loss ping -W 2 "$@"; }
# peer_ping ARGS...: ping from the peer netns; 0 on no loss at all.
peer_ping() { _ping_loss ip netns exec "$PEER_NS" ping -W 2 "$@"; }

# peer_no_reply ARGS...: ping from the peer, succeed if no reply came back.
peer_no_reply() {
	local out
	out=$(ip netns exec "$PEER_NS" ping -W 1 "$@" 2>&1)
	printf '%s\n' "$out" | tail -n 2
	printf '%s\n' "$out" | grep -q ' 100% packet loss'
}

# bg_start CMD...: run CMD in the background (output to a file in
# $VMX_TMP), set BG_PID; vmx_cleanup kills what is left.
# Use as: bg_start ping ...; flood=$BG_PID  (not in $(...): it would wait).
BG_PID=
bg_start() {
	"$@" > "$VMX_TMP/bg.$#.$RANDOM.log" 2>&1 &
	BG_PID=$!
	_vmx_bg+=($BG_PID)
}

# listen_start OUT WORD CMD...: run CMD (a receiver) in the background,
# its output in OUT, and wait up to 30 s (times VMX_TIMEOUT_SCALE) until
# it prints WORD (it is ready: bound, listening); sets LISTEN_PID. OUT is
# emptied first, before the job starts: the job's own redirection
# truncates it only once it runs, and until then a WORD left in OUT by an
# earlier receiver of the test would pass for this one's, and the sender
# would start before the socket exists (its datagrams counted in Udp
# NoPorts, or a check that nothing arrives passing for nothing).
LISTEN_PID=
listen_start() {
	local out=$1 word=$2
	shift 2
	: >"$out"
	"$@" >"$out" 2>&1 &
	LISTEN_PID=$!
	_vmx_bg+=("$LISTEN_PID")
	wait_for "$(scaled 30)" grep -q "$word" "$out" || { cat "$out"; return 1; }
}

# _bg_kill PID: end a background job and the commands it is running: a job
# that runs a shell function is a subshell whose children outlive it
# (`bg_start pexec python3 ...` left the flood running after bg_stop).
_bg_kill() {
	local kids
	kids=$(pgrep -P "$1" 2>/dev/null)
	# shellcheck disable=SC2086 # one PID per word
	kill "$1" $kids 2>/dev/null
}

bg_stop() {
	_bg_kill "$1"
	wait "$1" 2>/dev/null
}

# iperf3 server in the peer netns, serving one client, bounded in time.
iperf_server_start() {
	local port=${1:-5201} t=${VMX_IPERF_SERVER_TIME:-60}
	ip netns exec "$PEER_NS" timeout "$t" iperf3 -s -1 -p "$port" \
		> "$VMX_TMP/iperf-server.log" 2>&1 &
	_vmx_bg+=($!)
	_iperf_srv=$!
	wait_for 5 _iperf_listening "$port" || { echo "iperf3 server did not start"; return 1; }
}

_iperf_listening() {
	ip netns exec "$PEER_NS" ss -Hltn "sport = :$1" | grep -q LISTEN
}

# iperf_check ARGS...: one iperf3 client run of VMX_IPERF_TIME seconds
# (default 2: some 50-100 MB under TCG, tens of thousands of segments),
# or of VMX_IPERF_BYTES bytes instead when that is set (iperf3 -n: 16M,
# 1G...; a fixed amount of data whatever part of the time the connection
# takes, still bounded by the 60 s timeout) against the peer (ARGS go to
# the client, e.g. -R, -u -b 50M). Passes when iperf3 reports no error, both
# ends moved data and, for TCP, the sender retransmitted at most
# VMX_TCP_MAX_RETRANS percent (default 5) of the segments it sent: frames
# that arrive broken show up there long before the byte counts stall.
# Prints the throughput.
iperf_check() {
	local port=5201 rc len=(-t "${VMX_IPERF_TIME:-2}")
	[ -n "${VMX_IPERF_BYTES:-}" ] && len=(-n "$VMX_IPERF_BYTES")
	iperf_server_start $port || return 1
	timeout 60 iperf3 -c "${IPERF_DST:-$PEER_IP}" -p $port "${len[@]}" --json \
		--connect-timeout 5000 "$@" > "$VMX_TMP/iperf.json" 2>"$VMX_TMP/iperf.err"
	rc=$?
	wait "$_iperf_srv" 2>/dev/null
	cat "$VMX_TMP/iperf.err"
	python3 - "$VMX_TMP/iperf.json" "$rc" "${VMX_UDP_MAX_LOSS:-5}" \
		"${VMX_TCP_MAX_RETRANS:-5}" <<'EOF'
import json, sys
path, rc, maxloss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
maxretr = float(sys.argv[4])
try:
    d = json.load(open(path))
except Exception as e:
    print(f"iperf3 gave no JSON (exit {rc}): {e}")
    sys.exit(1)
if "error" in d:
    print("iperf3 error:", d["error"])
    sys.exit(1)
end = d.get("end", {})
udp = d.get("start", {}).get("test_start", {}).get("protocol") == "UDP"
rev = d.get("start", {}).get("test_start", {}).get("reverse", 0)
ok = True
if udp:
    s = end.get("sum", {})
    rx = end.get("sum_received", s)
    bps = rx.get("bits_per_second", 0)
    pk = s.get("packets", 0)
    lost = s.get("lost_packets", 0)
    pct = s.get("lost_percent", 100.0)
    print(f"UDP{' reverse' if rev else ''}: {bps/1e6:.1f} Mbit/s received, "
          f"{pk} packets, {lost} lost ({pct:.2f}%)")
    if bps <= 0 or pk <= 0:
        ok = False
    if pct > maxloss:
        print(f"loss {pct:.2f}% above {maxloss}%")
        ok = False
else:
    tx = end.get("sum_sent", {})
    rx = end.get("sum_received", {})
    print(f"TCP{' reverse' if rev else ''}: sent {tx.get('bits_per_second', 0)/1e6:.1f} Mbit/s, "
          f"received {rx.get('bits_per_second', 0)/1e6:.1f} Mbit/s, "
          f"retransmits {tx.get('retransmits', 'n/a')}")
    if tx.get("bytes", 0) <= 0 or rx.get("bytes", 0) <= 0 or \
       rx.get("bits_per_second", 0) <= 0:
        ok = False
    # segments sent, from the bytes and the connection's MSS
    mss = d.get("start", {}).get("tcp_mss_default") or 1448
    segs = tx.get("bytes", 0) / mss
    retr = tx.get("retransmits")
    if retr is not None and segs > 0 and retr > segs * maxretr / 100:
        print(f"retransmits {retr} of about {segs:.0f} segments "
              f"(MSS {mss}): above {maxretr}%")
        ok = False
if rc != 0:
    print(f"iperf3 exit status {rc}")
    ok = False
sys.exit(0 if ok else 1)
EOF
}

# udp_send [--ns NS] DST PORT COUNT: send COUNT small datagrams to DST
# (unicast or multicast, v4 or v6; routes decide the interface), 20 ms
# apart. Plain bash /dev/udp: a Python start costs over a second under TCG.
udp_send() {
	local pre=()
	if [ "$1" = --ns ]; then pre=(ip netns exec "$2"); shift 2; fi
	"${pre[@]}" bash -c '
		for i in $(seq "$3"); do
			echo "vmx-selftest $i" > "/dev/udp/$1/$2" || exit 1
			sleep 0.02
		done' udp_send "$1" "$2" "$3"
}

# Packet capture on an interface of this netns, without promiscuous mode
# unless asked: cap_start [-P] IF FILTER... ; cap_stop prints the count.
# $CAP_OPTS adds tcpdump options. --immediate-mode matters: with the default
# TPACKET_V3 block timeout, packets of the last second are lost on SIGINT.
cap_start() {
	local p=-p
	if [ "$1" = -P ]; then p=; shift; fi
	local ifc=$1
	shift
	rm -f "$VMX_TMP/cap.pcap" "$VMX_TMP/cap.err"
	# shellcheck disable=SC2086
	tcpdump $p ${CAP_OPTS:-} --immediate-mode -n -U -Z root -i "$ifc" -w "$VMX_TMP/cap.pcap" "$@" \
		2>"$VMX_TMP/cap.err" &
	_cap_pid=$!
	_vmx_bg+=($_cap_pid)
	wait_for 10 grep -q "listening on" "$VMX_TMP/cap.err" ||
		{ cat "$VMX_TMP/cap.err"; return 1; }
}

cap_stop() {
	sleep 0.3
	kill -INT "$_cap_pid" 2>/dev/null
	wait "$_cap_pid" 2>/dev/null
	tcpdump -n -r "$VMX_TMP/cap.pcap" 2>/dev/null | wc -l
}

# rx_probe N DST PORT [FILTER]: the peer sends N datagrams to DST:PORT
# (the peer's routes and neighbour entries choose the frame: a static
# entry sends to any MAC, a VLAN interface tags). Sets RX_CAP to what a
# capture on DUT without promiscuous mode saw (FILTER, default "udp dst
# port PORT"): the frames the device let in, since the capture sees them
# before the stack drops frames for another host or VLAN; and RX_DRV to
# the change of DUT's rx_packets, the driver's count of the same.
RX_CAP=0
RX_DRV=0
rx_probe() {
	local n=$1 dst=$2 port=$3 f=${4:-"udp dst port $3"} r0
	r0=$(stat_of "$DUT" rx_packets)
	cap_start "$DUT" "$f" > /dev/null || return 1
	udp_send --ns "$PEER_NS" "$dst" "$port" "$n" || return 1
	RX_CAP=$(cap_stop)
	RX_DRV=$(($(stat_of "$DUT" rx_packets) - r0))
	echo "$n datagrams to $dst:$port: tcpdump -p '$f' on $DUT saw $RX_CAP, rx_packets +$RX_DRV"
}

# rx_reaches N DST PORT [FILTER]: all N datagrams reached the driver.
rx_reaches() { rx_probe "$@" || return 1; [ "$RX_CAP" -ge "$1" ] && [ "$RX_DRV" -ge "$1" ]; }

# rx_filtered N DST PORT [FILTER]: the device let none of them in (fewer
# than N other frames may arrive meanwhile).
rx_filtered() { rx_probe "$@" || return 1; [ "$RX_CAP" = 0 ] && [ "$RX_DRV" -lt "$1" ]; }

# _tcp_listening peer|dut PORT: a TCP listener on PORT in that netns.
_tcp_listening() {
	if [ "$1" = peer ]; then _iperf_listening "$2"
	else ss -Hltn "sport = :$2" | grep -q LISTEN; fi
}

# tcp_exact in|out MB PORT: MB megabytes of random data over one TCP
# connection (in: peer -> DUT, out: DUT -> peer) with socat; the copy must
# be byte-identical (sha256). Bounded in time; prints what went wrong.
tcp_exact() {
	local dir=$1 blob=$VMX_TMP/tcp_exact.src out=$VMX_TMP/tcp_exact.dst
	local srv=() cli=() dst=$PEER_IP ns=peer sp
	head -c "$2M" /dev/urandom > "$blob"
	rm -f "$out"
	if [ "$dir" = in ]; then cli=(ip netns exec "$PEER_NS"); dst=$DUT_IP; ns=dut
	else srv=(ip netns exec "$PEER_NS"); fi
	"${srv[@]}" timeout 150 socat -u "TCP-LISTEN:$3,reuseaddr" "OPEN:$out,creat,trunc" &
	sp=$!
	_vmx_bg+=("$sp")
	wait_for 10 _tcp_listening "$ns" "$3" || { echo "no TCP listener on $3"; return 1; }
	"${cli[@]}" timeout 120 socat -u "OPEN:$blob" "TCP:$dst:$3" ||
		{ echo "socat sender ($dir, port $3) failed or stalled"; return 1; }
	wait "$sp" || { echo "socat receiver ($dir, port $3) failed"; return 1; }
	if [ "$(sha256sum < "$blob")" != "$(sha256sum < "$out")" ]; then
		echo "TCP $dir: the copy differs ($(stat -c %s "$out") of $(stat -c %s "$blob") bytes)"
		return 1
	fi
	echo "TCP $dir: $2 MB byte-identical"
}

# pg_setup IF COUNT: pktgen on IF (this netns), COUNT 60-byte frames (0:
# until stopped or IF goes down), all on TX queue 0, UDP to the peer's
# discard port at its MAC. pg_sent IF [CMD...]: frames pktgen on IF sent
# so far (pkts-sofar). pktgen's /proc/net/pktgen is per netns: with CMD
# (pexec, ip netns exec NS) the file is read in IF's netns instead of this
# one.
_pgd() { echo "$2" >"/proc/net/pktgen/$1"; }
pg_setup() {
	local t ifc=$1
	modprobe pktgen || return 1
	for t in /proc/net/pktgen/kpktgend_*; do
		_pgd "${t##*/}" rem_device_all || return 1
	done
	_pgd kpktgend_0 "add_device $ifc" &&
	_pgd "$ifc" "count $2" && _pgd "$ifc" "pkt_size 60" && _pgd "$ifc" "delay 0" &&
	_pgd "$ifc" "clone_skb 0" && _pgd "$ifc" "burst 1" &&
	_pgd "$ifc" "queue_map_min 0" && _pgd "$ifc" "queue_map_max 0" &&
	_pgd "$ifc" "dst $PEER_IP" && _pgd "$ifc" "dst_mac $(peer_mac)" &&
	_pgd "$ifc" "udp_dst_min 9" && _pgd "$ifc" "udp_dst_max 9"
}
pg_sent() {
	local ifc=$1
	shift
	"$@" awk '/pkts-sofar:/ { print $2 }' "/proc/net/pktgen/$ifc"
}

# ------------------------------------------------------------ tunnel traffic
# Byte-exact TCP through a VXLAN/Geneve tunnel (lib/net.sh's tunnel_up)
# over the vmx NIC that is $DUT now, with vmx's tunnel offload counters and,
# on the test device, the device's (tunnel_tso.sh at revision 9,
# tdev_revtraffic.sh at revisions 4 and 6).

# peer_csum_errors: the peer's TCP and UDP InCsumErrors, added up.
peer_csum_errors() {
	local snmp
	snmp=$(pexec cat /proc/net/snmp)
	echo $(( $(snmp_field Tcp InCsumErrors <<< "$snmp") +
		 $(snmp_field Udp InCsumErrors <<< "$snmp") ))
}

# tunnel_offered [csum]: why the device behind $DUT offers tunnel TSO
# (csum: with the outer UDP checksum too), read from the test device's
# properties, not from the driver: revisions 4-6 always, both (unless
# tunnel-offloads=off), 7+ when DCR0 offers VXLAN or Geneve TSO (bits 5,
# 3; csum: and an outer checksum, bits 7, 6) and PTCR0 allows every
# capability (bit 31); never when revision 9's disabled offloads take TSO
# away. Fails when the NIC is not the test device or does not offer it.
tunnel_offered() {
	local td rev d p
	td=$(testdev_nic_of "$DUT" 2>/dev/null) || return 1
	rev=$(dut_revision)
	[ "$(testdev_prop "$td" tunnel-offloads)" != off ] && [ "${rev:-0}" -ge 4 ] || return 1
	! testdev_disabled_offload "$DUT" tso > /dev/null || return 1
	if [ "$rev" -lt 7 ]; then
		echo "revision $rev"
		return 0
	fi
	d=$(testdev_prop "$td" dcr0); p=$(testdev_prop "$td" ptcr0)
	[ $((${d:-0} & 0x28)) != 0 ] && [ $((${p:-0} & 0x80000000)) != 0 ] || return 1
	[ "${1:-}" != csum ] || [ $((${d:-0} & 0xc0)) != 0 ] || return 1
	echo "revision $rev, dcr0=$d, ptcr0=$p"
}

# _rx_csum_unnecessary: $DUT's qstats rx-csum-unnecessary (vmx's
# checksum-verified frames, every queue); empty without qstats (kernels
# before 6.10).
_rx_csum_unnecessary() {
	qstat_dev "$DUT" rx-csum-unnecessary 2>/dev/null
}

# _rx_inner_case TD NAME DIR: is this the transfer whose inner RX results
# are checked? The noudpcsum VXLAN tunnel, peer->DUT, on a test device
# (TD, nicN) that reports them (patch 0020: stat-rx-inner readable).
_rx_inner_case() {
	[ -n "$1" ] && [ "$2" = vxlan4789 ] && [ "$3" = in ] &&
		testdev_stat "$1" rx-inner > /dev/null 2>&1
}

# _rx_inner_snap TD: "stat-rx-inner stat-rx-inner-bad rx-csum-unnecessary
# inner_unused" now (rx-csum-unnecessary "-" without qstats)
_rx_inner_snap() {
	local ok
	ok=$(_rx_csum_unnecessary)
	echo "$(testdev_stat "$1" rx-inner) $(testdev_stat "$1" rx-inner-bad) ${ok:--} $(estat "$DUT" 'rx[0-9]+_inner_unused')"
}

# _rx_inner_check NAME BEFORE AFTER (_rx_inner_snap's words): the device
# completed frames of the transfer with inner results and vmx used them:
# the qstats rx-csum-unnecessary grew by at least 90% of stat-rx-inner
# (6.10+ kernels) and no rx*_inner_unused (an outer checksum of 0: the
# inner result is the frame's first checksum, vmx_rx_csum_inner takes it).
_rx_inner_check() {
	local name=$1 i0 b0 o0 u0 i1 b1 o1 u1 di
	read -r i0 b0 o0 u0 <<< "$2"
	read -r i1 b1 o1 u1 <<< "$3"
	di=$((i1 - i0))
	echo "$name in: test device stat-rx-inner +$di, stat-rx-inner-bad +$((b1 - b0)); vmx rx-csum-unnecessary $([ "$o0" = - ] || [ "$o1" = - ] && echo "(no qstats)" || echo "+$((o1 - o0))"), rx*_inner_unused +$((u1 - u0))"
	[ "$di" -gt 0 ] ||
		{ echo "no frame completed with inner results (does vmx set RXINNEROFLD?)"; return 1; }
	if [ "$o0" != - ] && [ "$o1" != - ] &&
	   [ $(((o1 - o0) * 10)) -lt $((di * 9)) ]; then
		echo "rx-csum-unnecessary grew by less than 90% of stat-rx-inner's +$di: vmx did not use the inner results"
		return 1
	fi
	[ "$u1" = "$u0" ] ||
		{ echo "inner results passed up unused on a tunnel whose outer UDP checksum is 0"; return 1; }
}

# tunnel_case NAME KIND PORT CSUM OUTER6 INNER6 DIRS [MB]: a tunnel_up
# tunnel (KIND PORT CSUM OUTER6) between $DUT and the peer, then for each
# direction in DIRS (out: DUT->peer, in: peer->DUT) MB megabytes (default
# 16) of TCP over it, inner IPv4 (INNER6 0: tcp_exact, byte-identical) or
# IPv6 (1: iperf3, few retransmits; socat's TCP addresses are IPv4 ones).
# Offload is expected when the headers up to the end of the inner TCP
# header (timestamps included) fit one TX data ring entry (128 bytes
# unless the device says more: the test device's txdata-size); otherwise
# vmx must fall back to software GSO. Passes when every copy is exact, the
# peer counted no TCP or UDP checksum error and, with offload expected,
# vmx's tx*_tso_tunnel moved; on the test device also: none of the
# device's stat-tunnel-bad (tunnel requests refused) and stat-violations
# (strict mode) on this NIC, with offload expected its stat-tunnel-tso
# moved (the device segmented) and, when DIRS has out, stat-tunnel-csum
# (the DUT's handshake and FIN segments: inner checksum offload), without
# offload expected stat-tunnel-tso unchanged; the inner RX results of the
# VXLAN 4789 tunnel's (NAME vxlan4789) transfer in: _rx_inner_check.
tunnel_case() {
	local name=$1 kind=$2 port=$3 csum=$4 o6=$5 i6=$6 dirs=$7 mb=${8:-16}
	local t0 c0 e0 s0 b0 k0 v0 t1 c1 e1 s1 b1 k1 v1 d dst=10.42.0.2 src=10.42.0.1
	local IPERF_DST rev hl offload=1 ri0 td dsz=128
	td=$(testdev_nic_of "$DUT" 2>/dev/null) || td=
	[ -n "$td" ] && dsz=$(testdev_prop "$td" txdata-size) && dsz=${dsz:-128}
	[ "$i6" = 1 ] && dst=fd42::2 src=fd42::1
	# Ethernet, outer IP, UDP, VXLAN/Geneve, Ethernet, inner IP, TCP + TS
	hl=$((14 + (o6 ? 40 : 20) + 8 + 8 + 14 + (i6 ? 40 : 20) + 32))
	[ "$hl" -gt "$dsz" ] && offload=0
	tunnel_up "$kind" "$port" "$csum" "$o6" || return 1
	t0=$(estat "$DUT" 'tx[0-9]+_tso_tunnel') c0=$(estat "$DUT" 'tx[0-9]+_csum_tunnel') e0=$(peer_csum_errors)
	if [ -n "$td" ]; then
		s0=$(testdev_stat "$td" tunnel-tso) && b0=$(testdev_stat "$td" tunnel-bad) &&
			k0=$(testdev_stat "$td" tunnel-csum) && v0=$(testdev_stat "$td" violations) || return 1
	fi
	for d in $dirs; do
		ri0=
		_rx_inner_case "$td" "$name" "$d" && { ri0=$(_rx_inner_snap "$td") || return 1; }
		if [ "$i6" = 1 ]; then
			# the peer's stack checks every TCP checksum
			rev=()
			[ "$d" = in ] && rev=(-R)
			IPERF_DST=$dst iperf_check "${rev[@]}" || return 1
		else
			PEER_IP=$dst DUT_IP=$src tcp_exact "$d" "$mb" 5310 || return 1
		fi
		if [ -n "$ri0" ]; then
			_rx_inner_check "$name" "$ri0" "$(_rx_inner_snap "$td")" || return 1
		fi
	done
	t1=$(estat "$DUT" 'tx[0-9]+_tso_tunnel') c1=$(estat "$DUT" 'tx[0-9]+_csum_tunnel') e1=$(peer_csum_errors)
	echo "$name: headers $hl bytes, data ring entry $dsz: offload expected: $offload"
	echo "$name: tx_tso_tunnel +$((t1 - t0)), tx_csum_tunnel +$((c1 - c0)), peer TCP/UDP checksum errors +$((e1 - e0))"
	[ "$e1" = "$e0" ] || return 1
	if [ -n "$td" ]; then
		s1=$(testdev_stat "$td" tunnel-tso) && b1=$(testdev_stat "$td" tunnel-bad) &&
			k1=$(testdev_stat "$td" tunnel-csum) && v1=$(testdev_stat "$td" violations) || return 1
		echo "test device $td: stat-tunnel-tso +$((s1 - s0)), stat-tunnel-csum +$((k1 - k0)), stat-tunnel-bad +$((b1 - b0)), stat-violations +$((v1 - v0)), segments $(testdev_stat "$td" tunnel-segments)"
		[ "$v1" = "$v0" ] ||
			{ echo "strict violations: $(testdev_nic_violations "$td")"; return 1; }
		[ "$b1" = "$b0" ] || return 1
		if [ "$offload" = 1 ]; then
			[ "$s1" != "$s0" ] || { echo "the device segmented nothing"; return 1; }
			[[ " $dirs " != *" out "* ]] || [ "$k1" != "$k0" ] ||
				{ echo "no inner checksum request reached the device"; return 1; }
		else
			[ "$s1" = "$s0" ] || return 1
		fi
	fi
	if [ "$offload" = 1 ]; then
		[ "$((t1 - t0))" -gt 0 ]
	elif [ -n "$td" ]; then
		# the driver's software fallback: nothing posted as tunnel TSO
		[ "$t1" = "$t0" ]
	fi
}
