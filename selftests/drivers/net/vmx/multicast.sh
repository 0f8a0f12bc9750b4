#!/usr/bin/env bash
# multicast.sh - the DUT's multicast filter: group traffic from the peer is
# delivered only when the group is joined (ip maddr, socket membership,
# IPv6), or with allmulticast or promiscuous mode; a long list of groups;
# the filter survives down/up. Seen on the DUT with tcpdump -p (no promisc).
source "$(dirname "$0")/lib.sh"

vmx_setup

GRP=239.1.2.3
GMAC=01:00:5e:01:02:03
PORT=5000

# mc_count GROUP PORT: datagrams from the peer to GROUP seen on the DUT.
mc_count() {
	cap_start "$DUT" "udp and dst port $2" > /dev/null || return 1
	udp_send --ns "$PEER_NS" "$1" "$2" 5 "$PEER"
	cap_stop
}
delivered() {
	local n
	n=$(mc_count "${1:-$GRP}" "${2:-$PORT}")
	echo "captured $n of 5 datagrams to ${1:-$GRP}"
	[ "$n" -ge 5 ]
}
filtered() {
	local n
	n=$(mc_count "${1:-$GRP}" "${2:-$PORT}")
	echo "captured $n of 5 datagrams to ${1:-$GRP}"
	[ "$n" -eq 0 ]
}

check "group not joined: filtered" filtered
check "ip maddr add $GMAC" ip maddr add "$GMAC" dev "$DUT"
check "joined (ip maddr): delivered" delivered
check "ip maddr del" ip maddr del "$GMAC" dev "$DUT"
check "left: filtered again" filtered

check "allmulticast on" ip link set "$DUT" allmulticast on
check "allmulticast: delivered" delivered
check "allmulticast off" ip link set "$DUT" allmulticast off
check "allmulticast off: filtered" filtered

check "promisc on" ip link set "$DUT" promisc on
check "promisc: delivered" delivered
check "promisc off" ip link set "$DUT" promisc off
check "promisc off: filtered" filtered

# A socket that joins the group receives the datagrams.
mc_socket() {
	local grp=$1 port=$2 ready=$VMX_TMP/ready out=$VMX_TMP/recv rc
	rm -f "$ready"
	python3 - "$grp" "$port" "$DUT" "$ready" > "$out" 2>&1 <<'PY' &
import socket, struct, sys
grp, port, ifname, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
idx = socket.if_nametoindex(ifname)
if ":" in grp:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("::", port))
    mreq = socket.inet_pton(socket.AF_INET6, grp) + struct.pack("@I", idx)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP, mreq)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    # struct ip_mreqn: group, local address (any), ifindex
    mreq = socket.inet_aton(grp) + socket.inet_aton("0.0.0.0") + struct.pack("@i", idx)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
open(ready, "w").close()
s.settimeout(5)
n = 0
try:
    while n < 5:
        s.recv(2048)
        n += 1
except socket.timeout:
    pass
print(f"received {n} of 5 datagrams on {grp}")
sys.exit(0 if n >= 5 else 1)
PY
	local pid=$!
	wait_for 10 test -e "$ready" || { kill $pid; cat "$out"; return 1; }
	sleep 0.2
	udp_send --ns "$PEER_NS" "$grp" "$port" 5 "$PEER"
	wait $pid
	rc=$?
	cat "$out"
	return $rc
}
check "IPv4 socket membership 239.1.2.4: received" mc_socket 239.1.2.4 5001
check "socket closed, group left: filtered" filtered 239.1.2.4 5001
check "IPv6 socket membership ff05::4242: received" mc_socket ff05::4242 5001
check "IPv6 group left: filtered" filtered ff05::4242 5001

many_groups() {
	local i
	for i in $(seq 1 40); do
		ip maddr add "$(printf '01:00:5e:02:00:%02x' "$i")" dev "$DUT" || return 1
	done
}
check "join 40 groups" many_groups
check "40th group delivered" delivered 239.2.0.40 5003
check "1st group delivered" delivered 239.2.0.1 5003
check "not joined group among 40: filtered" filtered 239.2.0.41 5003

downup() { ip link set "$DUT" down && ip link set "$DUT" up && wait_carrier "$DUT" 10; }
check "down/up" downup
check "group still delivered after down/up" delivered 239.2.0.40 5003
check "not joined still filtered after down/up" filtered 239.2.0.41 5003
# Another filter update some time after the reset (IPv6/IGMP timers, a new
# group) must keep the list.
sleep 3
check "join one more group after down/up" ip maddr add 01:00:5e:03:00:01 dev "$DUT"
check "groups still delivered after the update" delivered 239.2.0.40 5003
check "new group delivered" delivered 239.3.0.1 5004

vmx_done
