#!/usr/bin/env bash
# multicast.sh - the DUT's multicast filter: group traffic from the peer is
# delivered only when the group is joined (ip maddr, socket membership,
# IPv6), or with allmulticast or promiscuous mode; a long list of groups;
# the filter survives down/up; more groups than the device table holds
# (all-multicast above 682). Seen on the DUT with tcpdump -p (no promisc)
# and rx_packets.
source "$(dirname "$0")/lib.sh"

vmx_setup

GRP=239.1.2.3
GMAC=01:00:5e:01:02:03
PORT=5000

# delivered/filtered [GROUP [PORT]]: 5 datagrams from the peer to GROUP
# reach the driver / are kept out by the device (rx_reaches/rx_filtered: a
# capture on the DUT without promiscuous mode and rx_packets).
delivered() { rx_reaches 5 "${1:-$GRP}" "${2:-$PORT}"; }
filtered() { rx_filtered 5 "${1:-$GRP}" "${2:-$PORT}"; }

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

# ------------------------------------------------ more groups than the table
# vmx programs up to PAGE_SIZE / 6 (682) addresses into the device's
# multicast table and switches the device to all-multicast above that
# (Documentation/vmx.rst): with the table full a joined group arrives and
# another does not; one group more and every group arrives; one less and
# the table is back. Groups 239.4.HI.LO, MAC 01:00:5e:04:HI:LO.
MC_MAX=$(($(getconf PAGESIZE) / 6))
mc_grp() { echo "239.4.$(($1 / 256)).$(($1 % 256))"; }
mc_mac() { printf '01:00:5e:04:%02x:%02x' $(($1 / 256)) $(($1 % 256)); }
mc_n() { awk -v d="$DUT" '$2 == d' /proc/net/dev_mcast | wc -l; }
# mc_batch add|del FIRST LAST: join/leave the groups FIRST..LAST at the
# link layer in one process: the SIOCADDMULTI/SIOCDELMULTI ioctl that
# "ip maddr add/del" makes ("ip -batch" applies only the first maddr line).
mc_batch() {
	python3 - "$1" "$DUT" "$2" "$3" <<'PY'
import fcntl, socket, struct, sys
op, ifname, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
req = 0x8931 if op == "add" else 0x8932
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(first, last + 1):
    mac = bytes([1, 0, 0x5e, 4, i >> 8, i & 255])
    fcntl.ioctl(s, req, struct.pack("16sH14s8x", ifname.encode(), socket.AF_UNSPEC, mac))
print("%s %d groups, 01:00:5e:04:%02x:%02x to 01:00:5e:04:%02x:%02x" %
      (op, last - first + 1, first >> 8, first & 255, last >> 8, last & 255))
PY
}
MC_BASE=$(mc_n)
MC_FILL=$((MC_MAX - MC_BASE))
mc_n_is() { echo "$DUT has $(mc_n) multicast addresses, want $1"; [ "$(mc_n)" = "$1" ]; }
fill() { mc_batch add 1 $MC_FILL && mc_n_is $MC_MAX; }
log "multicast table: $MC_MAX addresses (page size / 6); $MC_BASE in use, joining $MC_FILL more"
check "join groups up to $MC_MAX addresses (table full)" fill
check "table full: last joined group delivered" delivered "$(mc_grp $MC_FILL)" 5005
check "table full: first joined group delivered" delivered "$(mc_grp 1)" 5005
check "table full: group not joined filtered" filtered "$(mc_grp $((MC_FILL + 2)))" 5005
over() { mc_batch add $((MC_FILL + 1)) $((MC_FILL + 1)) && mc_n_is $((MC_MAX + 1)); }
check "join one more: $((MC_MAX + 1)) addresses" over
check "above $MC_MAX: joined group delivered" delivered "$(mc_grp 1)" 5005
check "above $MC_MAX: last joined group delivered" delivered "$(mc_grp $((MC_FILL + 1)))" 5005
check "above $MC_MAX: group not joined delivered (all-multicast, as documented)" \
	delivered "$(mc_grp $((MC_FILL + 2)))" 5005
back() { mc_batch del $((MC_FILL + 1)) $((MC_FILL + 1)) && mc_n_is $MC_MAX; }
check "leave one: $MC_MAX addresses again" back
check "back at $MC_MAX: group not joined filtered again" filtered "$(mc_grp $((MC_FILL + 2)))" 5005
check "back at $MC_MAX: joined group delivered" delivered "$(mc_grp $MC_FILL)" 5005
leave() { mc_batch del 1 $MC_FILL && mc_n_is "$MC_BASE"; }
check "leave the $MC_FILL groups" leave
check "left: former group filtered" filtered "$(mc_grp 1)" 5005
check "earlier group still delivered" delivered 239.2.0.40 5003

vmx_done
