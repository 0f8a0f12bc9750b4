# shellcheck shell=bash
# lib/traffic.sh - traffic between DUT and the peer, for the vmx selftests
# (sourced by lib.sh): ping, background jobs, iperf3, UDP datagrams,
# packet capture, probes of what the device lets in (RX filters), and
# byte-exact TCP copies.

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
# (default 2: some 50-100 MB under TCG, tens of thousands of segments)
# against the peer (ARGS go to the client, e.g. -R, -u -b 50M). Passes when iperf3 reports no error, both
# ends moved data and, for TCP, the sender retransmitted at most
# VMX_TCP_MAX_RETRANS percent (default 5) of the segments it sent: frames
# that arrive broken show up there long before the byte counts stall.
# Prints the throughput.
iperf_check() {
	local port=5201 rc
	iperf_server_start $port || return 1
	timeout 60 iperf3 -c "${IPERF_DST:-$PEER_IP}" -p $port -t "${VMX_IPERF_TIME:-2}" --json \
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
# discard port at its MAC. pg_sent IF: frames pktgen sent so far.
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
pg_sent() { awk '/pkts-sofar:/ { print $2 }' "/proc/net/pktgen/$1"; }
