#!/usr/bin/env bash
# tdev_lro_hostile.sh - type-4 (LRO) completions for frames that are not
# plain TCP aggregates. The test device's lro-force-mss (patch 0022, set
# with qom-set while running) makes every frame of 128 bytes or more that
# goes to ring 0/1 a type-4 completion with that MSS, its flags claiming
# TCP whatever the frame holds. vmx must parse the headers itself
# (vmx_rx_lro) and never trust the completion: TCP, also with an 802.1Q
# tag left in the frame (rx-vlan-offload off), gets GSO fields and is
# counted in rx*_lro_pkts; a VXLAN frame (port 4789: the device's inner
# results, port 4790: vmx's own parse), UDP, ICMP/ICMPv6 and IPv4
# fragments of a TCP segment go up without GSO fields, counted in
# rx*_lro_unparsed; an MSS of 0 or one larger than the payload makes no
# aggregate. Every TCP transfer must be byte-identical (sha256), every
# ping answered, the kernel log without WARNING/BUG/"bad offload"/gso
# lines, the device's stat-lro-forced must move while forcing and stop at
# lro-force-mss 0.
#
# Topology: a test-device vmx NIC (group tdev) and the virtio peer on the
# hub. SKIPs without the test device or without lro-force-mss.
# vmx-timeout: 600
source "$(dirname "$0")/lib.sh"

vmx_setup
modprobe 8021q
modprobe vxlan

NIC=$(testdev_nic_of "$DUT" 2>/dev/null)
if [ -z "$NIC" ] || ! testdev_stat "$NIC" lro-forced > /dev/null 2>&1; then
	skip "forced LRO completions" "no test device with lro-force-mss (tools/testdev patch 0022, group tdev)"
	vmx_done
fi
REV=$(dut_revision)
if [ "${REV:-1}" -lt 2 ]; then
	skip "forced LRO completions" "revision ${REV:-?}: type-4 completions need 2+"
	vmx_done
fi

# force_mss VALUE: qom-set lro-force-mss and read it back.
force_mss() {
	local v
	testdev_set "$NIC" lro-force-mss "$1" > /dev/null || return 1
	v=$(hmp "qom-get $NIC lro-force-mss") || return 1
	v=${v//$'\r'/}
	echo "$NIC lro-force-mss = $v"
	[ "$v" = "$1" ]
}

# lro_now: "FORCED LRO UNPARSED": the device's forced frames, vmx's
# rx*_lro_pkts and rx*_lro_unparsed sums.
lro_now() {
	echo "$(testdev_stat "$NIC" lro-forced) $(estat "$DUT" 'rx[0-9]+_lro_pkts')" \
		"$(estat "$DUT" 'rx[0-9]+_lro_unparsed')"
}

# lro_moved BEFORE FMIN LMIN LMAX UMIN UMAX [FMAX]: the growth since
# BEFORE of forced frames (FMIN..FMAX), rx*_lro_pkts (LMIN..LMAX) and
# rx*_lro_unparsed (UMIN..UMAX); "-" for no upper bound. Prints it.
lro_moved() {
	local b a f l u
	read -r -a b <<< "$1"
	read -r -a a <<< "$(lro_now)"
	f=$((a[0] - b[0])) l=$((a[1] - b[1])) u=$((a[2] - b[2]))
	echo "stat-lro-forced +$f, rx*_lro_pkts +$l, rx*_lro_unparsed +$u"
	[ "$f" -ge "$2" ] || { echo "forced: +$f, expected at least $2"; return 1; }
	[ -z "${7:-}" ] || [ "$f" -le "$7" ] || { echo "forced: +$f, expected at most $7"; return 1; }
	[ "$l" -ge "$3" ] || { echo "lro_pkts: +$l, expected at least $3"; return 1; }
	[ "$4" = - ] || [ "$l" -le "$4" ] || { echo "lro_pkts: +$l, expected at most $4"; return 1; }
	[ "$u" -ge "$5" ] || { echo "lro_unparsed: +$u, expected at least $5"; return 1; }
	[ "$6" = - ] || [ "$u" -le "$6" ] || { echo "lro_unparsed: +$u, expected at most $6"; return 1; }
}

# udp_big N SIZE PORT: N datagrams of SIZE bytes, peer -> DUT (nobody
# listens: the DUT answers port unreachable), 5 ms apart.
udp_big() {
	pexec bash -c '
		p=$(head -c "$2" /dev/zero | tr "\0" u)
		for i in $(seq "$1"); do
			printf "%s" "$p" > "/dev/udp/$4/$3" || exit 1
			sleep 0.005
		done' udp_big "$1" "$2" "$3" "$DUT_IP"
}

# tcp_frags N: N IPv4 datagrams carrying one TCP segment each (to a closed
# port), each sent as two fragments of 1244 and 1220 bytes (the second's
# first bytes look like a TCP header with a data offset of 5). No TCP
# aggregate: neither fragment may get GSO fields.
tcp_frags() {
	pexec python3 - "$PEER_IP" "$DUT_IP" "$1" <<'EOF'
import socket, struct, sys
src, dst, n = socket.inet_aton(sys.argv[1]), socket.inet_aton(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
# TCP header (checksum left 0: the datagram is never accepted) + payload
tcp = struct.pack("!HHIIBBHHH", 40000, 9, 1, 0, 5 << 4, 0x18, 65535, 0, 0)
data = tcp + bytes([0x50]) * (1224 - len(tcp)) + bytes([0x50]) * 1200
first, rest = data[:1224], data[1224:]
def ip(ident, frag, payload):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                       frag, 64, socket.IPPROTO_TCP, 0, src, dst) + payload
for i in range(n):
    ident = 0x4000 + i
    s.sendto(ip(ident, 0x2000, first), (sys.argv[2], 0))        # MF, offset 0
    s.sendto(ip(ident, 1224 // 8, rest), (sys.argv[2], 0))      # last fragment
print(f"{n} TCP datagrams sent as {2 * n} IPv4 fragments")
EOF
}

tunnel_down() {
	ip link del vmxlro0 2>/dev/null
	pexec ip link del vmxlro0 2>/dev/null
	true
}

# vxlan_up PORT: VXLAN id 43 to PORT on both ends, 10.44.0.1/2.
vxlan_up() {
	tunnel_down
	ip link add vmxlro0 type vxlan id 43 local "$DUT_IP" remote "$PEER_IP" \
		dstport "$1" noudpcsum || return 1
	pexec ip link add vmxlro0 type vxlan id 43 local "$PEER_IP" remote "$DUT_IP" \
		dstport "$1" noudpcsum || return 1
	ip addr add 10.44.0.1/24 dev vmxlro0 && ip link set vmxlro0 up &&
		pexec ip addr add 10.44.0.2/24 dev vmxlro0 && pexec ip link set vmxlro0 up
}

# vlan_up: VLAN 43 on both ends, 10.43.0.1/2.
vlan_up() {
	ip link add link "$DUT" name vlro43 type vlan id 43 || return 1
	pexec ip link add link "$PEER" name vlro43 type vlan id 43 || return 1
	ip addr add 10.43.0.1/24 dev vlro43 && ip link set vlro43 up &&
		pexec ip addr add 10.43.0.2/24 dev vlro43 && pexec ip link set vlro43 up
}

# vlan_peer: VLAN 43 on the peer only, 10.43.0.2, the DUT's MAC for
# 10.43.0.1.
vlan_peer() {
	pexec ip link add link "$PEER" name vlro43 type vlan id 43 || return 1
	pexec ip addr add 10.43.0.2/24 dev vlro43 && pexec ip link set vlro43 up &&
		pexec ip neigh replace 10.43.0.1 lladdr "$(mac_of "$DUT")" dev vlro43
}

# vlan_segments N: the peer sends N TCP segments (1400 bytes of payload,
# port 5413) tagged 43 to 10.43.0.1; a packet socket on the DUT must see
# all N with their payload intact (after the driver parsed and aggregated
# them; the stack drops them then: nobody has VID 43).
vlan_segments() {
	# emptied before the job starts (see listen_start)
	: >"$VMX_TMP/vseg.out"
	python3 - "$DUT" "$1" > "$VMX_TMP/vseg.out" 2>&1 <<'EOF' &
import hashlib, socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.settimeout(15)
n, got, h = int(sys.argv[2]), 0, hashlib.sha256()
print("bound", flush=True)
try:
    while got < n:
        f = s.recv(65536)
        off, et = 14, struct.unpack("!H", f[12:14])[0]
        if et == 0x8100:
            off, et = 18, struct.unpack("!H", f[16:18])[0]
        if et != 0x0800 or f[off + 9] != 6:
            continue
        ip = off + (f[off] & 15) * 4
        if struct.unpack("!H", f[ip + 2:ip + 4])[0] != 5413:
            continue
        tot = struct.unpack("!H", f[off + 2:off + 4])[0]
        h.update(f[ip + (f[ip + 12] >> 4) * 4:off + tot])
        got += 1
except socket.timeout:
    pass
print(f"received {got} of {n} segments, payload sha256 {h.hexdigest()}")
EOF
	local rpid=$! want
	_vmx_bg+=("$rpid")
	wait_for 20 grep -q bound "$VMX_TMP/vseg.out" || { cat "$VMX_TMP/vseg.out"; return 1; }
	want=$(pexec python3 - "$1" <<'EOF'
import hashlib, socket, struct, sys, time
n = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
src, dst = socket.inet_aton("10.43.0.2"), socket.inet_aton("10.43.0.1")
h = hashlib.sha256()
for i in range(n):
    pay = bytes((i * 7 + j) & 0xFF for j in range(1400))
    tcp = struct.pack("!HHIIBBHHH", 40001, 5413, 1 + 1400 * i, 1, 5 << 4,
                      0x18, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(pay), 0,
                     0x4000, 64, socket.IPPROTO_TCP, 0, src, dst)
    s.sendto(ip + tcp + pay, ("10.43.0.1", 0))
    h.update(pay)
    if i % 16 == 15:
        time.sleep(0.002)
print(h.hexdigest())
EOF
)
	wait "$rpid"
	cat "$VMX_TMP/vseg.out"
	echo "sent $1 segments, payload sha256 $want"
	grep -q "received $1 of $1 segments, payload sha256 $want" "$VMX_TMP/vseg.out"
}

# tcp_in MB PORT [DUT ADDRESS]: tcp_exact peer -> DUT to that address.
tcp_in() {
	local DUT_IP=${3:-$DUT_IP}
	tcp_exact in "$1" "$2"
}

# log_clean: no line of this test's kernel log so far speaks of a warning,
# a bug, a bad offload or GSO.
log_clean() {
	local bad
	bad=$(dmesg_since_start | grep -E -e 'WARNING|BUG|Call Trace|skb_warn' \
		-e '[Bb]ad offload|[^a-z]gso|GSO')
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" | head -n 20
	return 1
}

# lro_feature on|off: LRO in that state in ethtool -k.
lro_feature() { ethtool -k "$DUT" | grep -E "^large-receive-offload: $1( |\$)"; }

check "LRO on" ethtool -K "$DUT" lro on
check "LRO reported on" lro_feature on
check "rx-vlan-offload off (tags stay in the frame)" ethtool -K "$DUT" rx-vlan-offload off
wait_carrier "$DUT" 10
check "lro-force-mss 1000" force_mss 1000

# TCP: aggregates, plain and with the tag left in the frame
B=$(lro_now)
check "TCP peer -> DUT, forced MSS 1000: 8 MB byte-identical" tcp_in 8 5411
check "TCP: forced completions counted as LRO packets" lro_moved "$B" 1000 1000 - 0 20
# the tag left in the frame: a VLAN device on the DUT would turn LRO off
# (NETIF_F_UPPER_DISABLES: a VLAN device never offers LRO), so the DUT
# has none and lets every VID in (rx-vlan-filter off); the peer sends TCP
# segments tagged 43, whose headers vmx must parse past the tag
if check "rx-vlan-filter off" ethtool -K "$DUT" rx-vlan-filter off &&
	check "VLAN 43 on the peer only" vlan_peer; then
	B=$(lro_now)
	check "tagged TCP segments (tag in the frame), forced MSS 1000: 200 arrive byte-identical" \
		vlan_segments 200
	check "tagged TCP: counted as LRO packets, not unparsed" lro_moved "$B" 200 200 - 0 20
	pexec ip link del vlro43
	ethtool -K "$DUT" rx-vlan-filter on
fi
# a VLAN device on both ends: LRO goes off (the kernel's choice), the
# device stops forcing, TCP over it still byte-identical; LRO back on after
if check "VLAN 43 on both ends" vlan_up; then
	check "VLAN device on the DUT: LRO off" lro_feature off
	B=$(lro_now)
	check "TCP over VLAN 43: 4 MB byte-identical" tcp_in 4 5412 10.43.0.1
	check "LRO off: nothing forced" lro_moved "$B" 0 0 0 0 20 0
	ip link del vlro43
	pexec ip link del vlro43
	check "LRO on again" ethtool -K "$DUT" lro on
	check "LRO reported on again" lro_feature on
fi

# tunnels: the device's inner results (4789) and vmx's own parse (4790)
for port in 4789 4790; do
	if check "VXLAN $port on both ends" vxlan_up "$port"; then
		B=$(lro_now)
		check "TCP in VXLAN $port, forced MSS 1000: 4 MB byte-identical" \
			tcp_in 4 $((5420 + port - 4789)) 10.44.0.1
		check "VXLAN $port: unparsed, no LRO packet" lro_moved "$B" 1000 0 0 1000 -
	fi
	tunnel_down
done

# not TCP
B=$(lro_now)
check "UDP: 300 datagrams of 1000 bytes sent" udp_big 300 1000 9
check "UDP: unparsed, no LRO packet" lro_moved "$B" 300 0 0 290 -
B=$(lro_now)
check "ICMP: 30 pings of 1200 bytes answered" peer_ping -c 30 -i 0.05 -s 1200 "$DUT_IP"
check "ICMP: 10 pings of 3000 bytes (fragments) answered" peer_ping -c 10 -i 0.05 -s 3000 "$DUT_IP"
check "ICMPv6: 20 pings of 1200 bytes answered" peer_ping -c 20 -i 0.05 -s 1200 "$DUT_IP6"
check "ICMP/ICMPv6: unparsed, no LRO packet" lro_moved "$B" 70 0 0 70 -
B=$(lro_now)
check "IPv4 fragments of TCP segments: 50 sent" tcp_frags 50
check "IPv4 TCP fragments: unparsed, no LRO packet" lro_moved "$B" 90 0 0 90 -

# an MSS of 0, larger than the payload, of 1
check "lro-force-mss 65536 (MSS 0)" force_mss 65536
B=$(lro_now)
check "TCP, forced MSS 0: 4 MB byte-identical" tcp_in 4 5431
check "UDP, forced MSS 0: 100 datagrams of 1000 bytes sent" udp_big 100 1000 9
check "MSS 0: no LRO packet, nothing unparsed" lro_moved "$B" 1000 0 0 0 20
check "lro-force-mss 9000 (above the payload)" force_mss 9000
B=$(lro_now)
check "TCP, forced MSS 9000: 4 MB byte-identical" tcp_in 4 5432
check "MSS 9000: no LRO packet, nothing unparsed" lro_moved "$B" 1000 0 0 0 20
check "lro-force-mss 1" force_mss 1
B=$(lro_now)
check "TCP, forced MSS 1: 2 MB byte-identical" tcp_in 2 5433
check "MSS 1: counted as LRO packets" lro_moved "$B" 500 500 - 0 20

# off again: nothing forced
check "lro-force-mss 0" force_mss 0
B=$(lro_now)
check "TCP, not forced: 2 MB byte-identical" tcp_in 2 5434
check "lro-force-mss 0: no forced frame, no LRO packet" lro_moved "$B" 0 0 0 0 0 0
check "ping after everything" peer_ping -c 10 -i 0.05 "$DUT_IP"
check "kernel log: no warning, bug, bad offload or gso line" log_clean
ethtool -K "$DUT" rx-vlan-offload on
vmx_done
