#!/usr/bin/env bash
# lib.sh - helpers for the vmx selftests. Source it from a test script that
# runs as root inside a guest booted by tools/vm.sh (never on the host: the
# tests load and unload NIC drivers and move interfaces between netns).
#
# Environment:
#   VMX_DRIVER       vmx (default): insmod the vmx.ko built for the running
#                    kernel (see vmx_ko_path); vmxnet3: modprobe the in-tree
#                    driver, as a reference.
#   VMX_DRIVER_NAME  name the driver registers under /sys/bus/pci/drivers
#                    (default: the same as VMX_DRIVER).
#   VMX_PROJECT      project top dir (default: four levels above this file).
#
# Topology (tools/vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio, or --tap):
# DUT is the first interface bound to the driver under test (DUT2 the second,
# if any); PEER is the first virtio_net interface, moved into netns "peer".
#   DUT  10.99.0.1/24 fd99::1/64        PEER 10.99.0.2/24 fd99::2/64
#
# A test looks like:
#   source "$(dirname "$0")/lib.sh"
#   vmx_setup                  # load drivers, addresses, carrier
#   check "ping v4" dut_ping -c 5 "$PEER_IP"
#   vmx_done                   # dmesg check, plan, exit status
#
# Output is TAP 13 ("ok N name", "not ok N name", "ok N name # SKIP why"),
# diagnostics are "# ..." lines. vmx_done exits 0 when nothing failed, 1 when
# something failed, 4 (kselftest skip) when every subtest was skipped.

set -u

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

VMX_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VMX_PROJECT=${VMX_PROJECT:-$(cd "$VMX_LIB_DIR/../../../.." && pwd)}
VMX_DRIVER=${VMX_DRIVER:-vmx}
VMX_DRIVER_NAME=${VMX_DRIVER_NAME:-$VMX_DRIVER}
VMX_TEST=${VMX_TEST:-$(basename "$0" .sh)}

PEER_NS=peer
DUT_IP=10.99.0.1
PEER_IP=10.99.0.2
DUT_IP6=fd99::1
PEER_IP6=fd99::2
# A unicast MAC/IP nobody owns, for filter tests.
FOREIGN_IP=10.99.0.77
FOREIGN_MAC=02:00:00:00:00:77

DUT=
DUT2=
PEER=

# ------------------------------------------------------------ kernel log
# (before anything else: tools/guest-suite.sh sources only this part, with
# VMX_LIB_LOGCHECK_ONLY=1, to check the log outside the tests)

# Regex of kernel log lines that fail a test, whoever prints them.
VMX_DMESG_BAD='WARNING:|BUG:|Oops|Call Trace|general protection fault|kernel BUG|UBSAN|KASAN|refcount_t:|list_(add|del) corruption|NETDEV WATCHDOG|DMAR: .*[Ff]ault|DMAR: \[DMA|swiotlb buffer is full|page allocation failure|unreferenced object|blocked for more than|soft lockup|rcu.*detected stall|Bad page|skb_over_panic|skb_under_panic|dma_map.*fail|DMA-API'
# The driver's own trouble, matched on its lines ("vmx 0000:01:00.0 eth0:
# ..."): on top of every line it logs at KERN_ERR or worse (netdev_err:
# "txq 0 error", "device refused activation", "restart failed"...).
VMX_DMESG_DRV_BAD='bad completion|completion for index|resetting|timed out|transmit queue'
# Lines that match the above and are no trouble (CPU vulnerability advice).
VMX_DMESG_BENIGN='hw-vuln/'

# kernel_log_bad [ALLOW]: read `dmesg -r` lines (raw: "<level>[time] msg")
# on stdin and print, without the prefix, those that fail a test: any line
# matching VMX_DMESG_BAD; any line of the driver under test at KERN_ERR or
# worse or matching VMX_DMESG_DRV_BAD. Lines matching the regex ALLOW (what
# the test declared it expects) do not count.
kernel_log_bad() {
	local drv="(vmx|${VMX_DRIVER_NAME:-vmx}) [0-9a-f]{4}:[0-9a-f]{2}:"
	sed -E 's/^<([0-9]+)>\[[^]]*\] ?/\1 /' |
		grep -E -e "^[0-9]+ .*($VMX_DMESG_BAD)" \
			-e "^[0-3] $drv" -e "^[0-9]+ $drv.*($VMX_DMESG_DRV_BAD)" |
		grep -Ev -e "$VMX_DMESG_BENIGN" ${1:+-e "$1"} |
		sed -E 's/^[0-9]+ //'
	return 0
}
[ "${VMX_LIB_LOGCHECK_ONLY:-0}" = 1 ] && return 0

VMX_TMP=$(mktemp -d /tmp/vmx-"$VMX_TEST".XXXXXX)
_vmx_n=0
_vmx_pass=0
_vmx_fail=0
_vmx_skip=0
_vmx_bg=()
_vmx_marker="vmx-selftest: begin $VMX_TEST $$ $RANDOM"
# bookkeeping subtests vmx_done adds (kernel log, error counters)
_vmx_extra=0
_vmx_done=0

echo "TAP version 13"
# Only inside a tools/vm.sh guest (it mounts /run/vmx): on a host these
# tests would unload NIC drivers and move interfaces away. Nothing is
# touched before this check.
if [ "$(id -u)" != 0 ] || { [ ! -e /run/vmx/env ] && [ "${VMX_ALLOW_HOST:-0}" != 1 ]; }; then
	echo "ok 1 $VMX_TEST # SKIP must run as root inside a tools/vm.sh guest"
	echo "1..1"
	rm -rf "$VMX_TMP"
	exit $KSFT_SKIP
fi
echo "$_vmx_marker" >/dev/kmsg 2>/dev/null

# ------------------------------------------------------------ TAP output

log() { printf '# %s\n' "$*"; }

# Indent command output as TAP diagnostics.
diag() { sed -u 's/^/#   /'; }

ok() {
	_vmx_n=$((_vmx_n + 1)); _vmx_pass=$((_vmx_pass + 1))
	echo "ok $_vmx_n $1"
}

fail() {
	_vmx_n=$((_vmx_n + 1)); _vmx_fail=$((_vmx_fail + 1))
	echo "not ok $_vmx_n $1"
	[ $# -lt 2 ] || log "$2"
}

skip() {
	_vmx_n=$((_vmx_n + 1)); _vmx_skip=$((_vmx_skip + 1))
	echo "ok $_vmx_n $1 # SKIP ${2:-}"
}

# check NAME CMD...: one subtest, passing when CMD exits 0. CMD's output
# is shown as diagnostics.
check() {
	local name=$1 rc
	shift
	"$@" > "$VMX_TMP/check.out" 2>&1
	rc=$?
	diag <"$VMX_TMP/check.out"
	if [ $rc -eq 0 ]; then
		ok "$name"
	else
		fail "$name" "exit status $rc: $*"
	fi
	return $rc
}

# check_fails NAME CMD...: passes when CMD fails.
check_fails() {
	local name=$1 rc
	shift
	"$@" > "$VMX_TMP/check.out" 2>&1
	rc=$?
	diag <"$VMX_TMP/check.out"
	if [ $rc -ne 0 ]; then
		ok "$name"
		return 0
	fi
	fail "$name" "unexpectedly succeeded: $*"
	return 1
}

# Abort the whole test (e.g. setup failed): one failing subtest, then done.
bail() {
	fail "${2:-setup}" "$1"
	vmx_done
}

# ------------------------------------------------------------ driver

vmx_ko_path() {
	local k="$VMX_PROJECT/build/$(uname -r)/vmx.ko"
	if [ -f "$k" ]; then
		echo "$k"
	else
		echo "$VMX_PROJECT/vmx.ko"
	fi
}

# Module name of the driver under test.
dut_module() {
	case "$VMX_DRIVER" in
	vmx) echo vmx ;;
	*) echo "$VMX_DRIVER" ;;
	esac
}

dut_loaded() { [ -d "/sys/module/$(dut_module)" ]; }

# PCI addresses of all vmxnet3 devices (15ad:07b0). The sysfs helpers avoid
# forking: every process costs tens of milliseconds under TCG.
vmxnet3_pci_devs() {
	local d v id
	for d in /sys/bus/pci/devices/*; do
		read -r v < "$d/vendor"
		read -r id < "$d/device"
		[ "$v" = 0x15ad ] && [ "$id" = 0x07b0 ] && echo "${d##*/}"
	done
	return 0
}

dut_load() {
	local ko v dep
	dut_loaded && return 0
	case "$VMX_DRIVER" in
	vmx)
		ko=$(vmx_ko_path)
		if [ ! -f "$ko" ]; then
			echo "vmx.ko not found (looked for $VMX_PROJECT/build/$(uname -r)/vmx.ko and $VMX_PROJECT/vmx.ko)"
			return 1
		fi
		v=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{print $1}')
		if [ "$v" != "$(uname -r)" ]; then
			echo "$ko is built for '$v', running $(uname -r)"
			return 1
		fi
		for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
			modprobe "$dep" || return 1
		done
		insmod "$ko" ${VMX_MODULE_PARAMS:-}
		;;
	*)
		modprobe "$VMX_DRIVER"
		;;
	esac
}

dut_unload() {
	dut_loaded || return 0
	rmmod "$(dut_module)"
}

# Interfaces in this netns whose device is bound to driver $1.
ifaces_by_driver() {
	local n drv
	for drv in /sys/bus/*/drivers/"$1"; do
		[ -d "$drv" ] || continue
		for n in /sys/class/net/*; do
			[ "$n/device/driver" -ef "$drv" ] && echo "${n##*/}"
		done
	done
	return 0
}

dut_ifaces() { ifaces_by_driver "$VMX_DRIVER_NAME"; }

# wait_for TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	local end=$(( ${EPOCHREALTIME/./} / 1000 + $1 * 1000 ))
	shift
	while ! "$@"; do
		[ $(( ${EPOCHREALTIME/./} / 1000 )) -lt $end ] || return 1
		sleep 0.1
	done
}

# _count_is N CMD...: CMD prints at least N words.
_count_is() { local a; a=($("${@:2}")); [ ${#a[@]} -ge "$1" ]; }

# Wait until every vmxnet3 PCI device has an interface bound to the DUT driver.
wait_dut_ifaces() {
	local want
	want=$(vmxnet3_pci_devs | wc -l)
	[ "$want" -gt 0 ] || { echo "no vmxnet3 PCI device in this guest"; return 1; }
	wait_for "${1:-10}" _count_is "$want" dut_ifaces ||
		{ echo "expected $want $VMX_DRIVER_NAME interfaces, have: $(dut_ifaces | xargs)"; return 1; }
}

# Load the driver and set DUT/DUT2.
dut_up_driver() {
	dut_load || { echo "loading $VMX_DRIVER failed"; return 1; }
	wait_dut_ifaces 10 || return 1
	DUT=$(dut_ifaces | sed -n 1p)
	DUT2=$(dut_ifaces | sed -n 2p)
	[ -n "$DUT" ]
}

# ------------------------------------------------------------ links, netns

pexec() { ip netns exec "$PEER_NS" "$@"; }

carrier_of() { cat "/sys/class/net/$1/carrier" 2>/dev/null; }
has_carrier() { local c=; read -r c < "/sys/class/net/$1/carrier" 2>/dev/null; [ "$c" = 1 ]; }
peer_has_carrier() { [ "$(pexec cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }

# wait_carrier IF [TIMEOUT]: wait for carrier on IF (this netns).
wait_carrier() {
	wait_for "${2:-10}" has_carrier "$1" ||
		{ echo "no carrier on $1 after ${2:-10}s"; return 1; }
}

_peer_in_ns() { pexec ls /sys/class/net 2>/dev/null | grep -qx "$PEER"; }

# Find the virtio_net peer (moving back from a deleted netns takes a moment)
# and move it into netns $PEER_NS.
peer_setup() {
	modprobe virtio_net || return 1
	if ip netns list | grep -qw "$PEER_NS"; then
		ip netns del "$PEER_NS"
	fi
	wait_for 10 _count_is 1 ifaces_by_driver virtio_net ||
		{ echo "no virtio_net interface for the peer"; return 1; }
	PEER=$(ifaces_by_driver virtio_net | sed -n 1p)
	ip netns add "$PEER_NS" || return 1
	ip link set "$PEER" netns "$PEER_NS" || return 1
	wait_for 5 _peer_in_ns || return 1
	pexec ip link set lo up
	pexec sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1
	pexec ip link set "$PEER" mtu 1500
	pexec ip addr add "$PEER_IP/24" dev "$PEER"
	pexec ip addr add "$PEER_IP6/64" dev "$PEER" nodad
	pexec ip link set "$PEER" up
	# Multicast sent by the peer leaves through its NIC.
	pexec ip route add 224.0.0.0/4 dev "$PEER"
	wait_for 10 peer_has_carrier "$PEER" || { echo "peer has no carrier"; return 1; }
}

# Give DUT its addresses and bring it up.
dut_addr_setup() {
	local d=${1:-$DUT}
	sysctl -qw "net.ipv6.conf.$d.accept_dad=0" 2>/dev/null
	ip addr flush dev "$d"
	ip addr add "$DUT_IP/24" dev "$d" || return 1
	ip link set "$d" up || return 1
	ip addr add "$DUT_IP6/64" dev "$d" nodad || return 1
	wait_carrier "$d" 10
}

# vmx_setup [--no-load]: peer netns + driver + addresses. On failure the
# test bails out with one failed subtest.
vmx_setup() {
	sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.keep_addr_on_down=1 net.ipv6.conf.default.keep_addr_on_down=1
	peer_setup > "$VMX_TMP/setup.out" 2>&1 ||
		{ diag <"$VMX_TMP/setup.out"; bail "peer setup failed" setup; }
	if [ "${1:-}" != --no-load ]; then
		dut_up_driver > "$VMX_TMP/setup.out" 2>&1 ||
			{ diag <"$VMX_TMP/setup.out"; bail "driver $VMX_DRIVER did not come up" setup; }
		dut_addr_setup > "$VMX_TMP/setup.out" 2>&1 ||
			{ diag <"$VMX_TMP/setup.out"; bail "DUT $DUT setup failed" setup; }
		log "driver $VMX_DRIVER ($(dut_module)) kernel $(uname -r): DUT=$DUT DUT2=${DUT2:-none} PEER=$PEER (netns $PEER_NS)"
	fi
}

# set_mtu_both MTU: set the MTU on DUT and PEER. Below 1280 the kernel
# drops IPv6 from both; it is given back when the MTU allows.
set_mtu_both() {
	ip link set "$DUT" mtu "$1" || return 1
	pexec ip link set "$PEER" mtu "$1" || return 1
	if [ "$1" -ge 1280 ]; then
		ip addr replace "$DUT_IP6/64" dev "$DUT" nodad
		pexec ip addr replace "$PEER_IP6/64" dev "$PEER" nodad
	fi
	wait_carrier "$DUT" 10
}

# peer_has_tso: the virtio peer offers TSO, i.e. its QEMU backend takes a
# vnet header (the --tap topology); on a hub it sends MTU-sized frames only.
peer_has_tso() {
	pexec ethtool -k "$PEER" | grep -q '^tcp-segmentation-offload: on'
}

# qemu_tso_fragments: true when the DUT's TSO frames leave QEMU as IPv4
# fragments rather than TCP segments. QEMU segments in software when the
# backend takes no vnet header (a hub, where the virtio peer has no TSO
# either); before 8.0 it only knew IPv4 fragmentation there, which the peer
# reassembles for IPv4 and which corrupts IPv6 frames (fixed in QEMU 8.0 by
# "hw/net/net_tx_pkt: Implement TCP segmentation"). VMX_QEMU_VERSION is set
# by tools/vm.sh; unknown counts as fixed.
qemu_tso_fragments() {
	local v=${VMX_QEMU_VERSION:-}
	[[ "$v" == [0-9]* ]] || return 1
	peer_has_tso && return 1
	[ "${v%%.*}" -lt 8 ]
}

# ------------------------------------------------------------ traffic

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

# no_reply ARGS...: ping from the peer, succeed if no reply came back.
peer_no_reply() {
	local out
	out=$(ip netns exec "$PEER_NS" ping -W 1 "$@" 2>&1)
	printf '%s\n' "$out" | tail -n 2
	printf '%s\n' "$out" | grep -q ' 100% packet loss'
}

# ... | show_grep REGEX: print stdin, succeed if a line matches REGEX.
show_grep() {
	local o
	o=$(cat)
	printf '%s\n' "$o"
	printf '%s\n' "$o" | grep -q -E "$1"
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

# scaled SECS: SECS times the group's VMX_TIMEOUT_SCALE (3 on the debug
# kernel, where everything, a Python start included, takes about 4x as
# long): for the idle timeout of a receiver started before its sender.
scaled() { echo $(($1 * ${VMX_TIMEOUT_SCALE:-1})); }

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

# iperf_check ARGS...: one iperf3 client run against the peer (ARGS go to
# the client, e.g. -R, -u -b 50M). Passes when iperf3 reports no error, both
# ends moved data and, for TCP, the sender retransmitted at most
# VMX_TCP_MAX_RETRANS percent (default 5) of the segments it sent: frames
# that arrive broken show up there long before the byte counts stall.
# Prints the throughput.
iperf_check() {
	local port=5201 rc
	iperf_server_start $port || return 1
	timeout 60 iperf3 -c "${IPERF_DST:-$PEER_IP}" -p $port -t "${VMX_IPERF_TIME:-3}" --json \
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

# Interface counter from sysfs: stat IF NAME (this netns).
stat_of() { cat "/sys/class/net/$1/statistics/$2"; }

# Standard counters of the DUT: rx_packets tx_packets rx_bytes tx_bytes.
dut_counters() {
	local c
	for c in rx_packets tx_packets rx_bytes tx_bytes; do
		printf '%s ' "$(stat_of "$DUT" $c)"
	done
}

# not_backwards "BEFORE" "AFTER": no dut_counters value went down.
not_backwards() {
	local b=($1) a=($2) i
	for i in 0 1 2 3; do
		[ "${a[i]}" -ge "${b[i]}" ] || return 1
	done
}

# dut_revision: the negotiated device revision (ethtool -i), or nothing.
dut_revision() {
	ethtool -i "$DUT" | sed -n 's/^firmware-version: vmxnet3 rev \([0-9]*\)$/\1/p'
}

# caps_line IF: vmx's last "capabilities offered ... granted ..." log line
# for IF's device (revision 7+), without the timestamp; empty when none.
caps_line() {
	local bdf
	bdf=$(basename "$(readlink "/sys/class/net/$1/device")")
	dmesg | grep "vmx $bdf: capabilities offered" | tail -n 1 | sed 's/^\[[^]]*\] //'
}

# caps_granted LINE: the granted capability set of a caps_line (0x...).
caps_granted() { sed -n 's/.*granted \(0x[0-9a-f]*\|0\)$/\1/p' <<< "$1"; }

# dut_forced_reset: ethtool --reset DUT dedicated (vmx only), then wait
# until the driver's "resets" counter moved and the carrier is back.
dut_resets() { ethtool -S "$DUT" | awk '$1 == "resets:" { print $2 }'; }
_resets_above() { [ "$(dut_resets)" -gt "$1" ]; }
dut_forced_reset() {
	local r0
	r0=$(dut_resets)
	[ -n "$r0" ] || { echo "no resets counter in ethtool -S $DUT"; return 1; }
	# declared for the error counter and kernel log checks of vmx_done
	echo "$DUT" >> "$VMX_TMP/forced-resets"
	ethtool --reset "$DUT" dedicated || return 1
	wait_for 15 _resets_above "$r0" || { echo "resets still $r0 after 15 s"; return 1; }
	echo "resets $r0 -> $(dut_resets); $(dmesg | grep 'resetting the device' | tail -n 1)"
	wait_carrier "$DUT" 10
}

# ------------------------------------------------------------ QEMU monitor

# hmp_port: /dev node of the virtio-serial port "vmx.monitor" that
# tools/vm.sh --guest-monitor relays to QEMU's monitor (no udev here: the
# name is only in sysfs; devtmpfs made the node).
hmp_port() {
	local p n
	for p in /sys/class/virtio-ports/*; do
		[ -r "$p/name" ] || continue
		read -r n < "$p/name"
		[ "$n" = vmx.monitor ] && [ -c "/dev/${p##*/}" ] &&
			{ echo "/dev/${p##*/}"; return 0; }
	done
	return 1
}

# have_hmp: the guest can reach the QEMU monitor.
have_hmp() { hmp_port >/dev/null; }

# hmp CMD...: run one HMP command on the QEMU monitor (e.g. hmp "set_link
# nic1 off", hmp "device_del nic2"; NIC ids are nicN in PCI order) and print
# its output. Returns 2 when there is no monitor channel or no reply within
# VMX_HMP_TIMEOUT seconds (default 30), 1 when QEMU refused the command or
# printed an error ("Error: Device 'nic9' not found", "unknown command"),
# 0 otherwise.
hmp() {
	local port fd line tag="$$.$RANDOM" state=0 rc=2
	port=$(hmp_port) ||
		{ echo "hmp: no QEMU monitor channel (tools/vm.sh --guest-monitor)"; return 2; }
	exec {fd}<>"$port" || return 2
	printf '%s\t%s\n' "$tag" "$*" >&"$fd"
	while IFS= read -r -t "${VMX_HMP_TIMEOUT:-30}" line <&"$fd"; do
		case "$line" in
		"vmx-hmp-begin $tag") state=1 ;;
		"vmx-hmp-end $tag "*) rc=${line##* }; state=2; break ;;
		*) [ $state = 1 ] && printf '%s\n' "$line" ;;
		esac
	done
	exec {fd}>&-
	[ $state = 2 ] || { echo "hmp: no reply to '$*'"; return 2; }
	return "$rc"
}

# ------------------------------------------------------------ teardown

# Lines of the kernel log since this test started.
dmesg_since_start() {
	dmesg 2>/dev/null | awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 }'
}

# vmx_expects WORD: the test declares, in a "# vmx-expects: WORD..." header
# line, that WORD happens on purpose. Words: resets (the driver's reset
# work runs: "resetting the device" lines and any resets count). Resets
# forced with dut_forced_reset need no header: each one allows one.
# A "# vmx-expects-log: REGEX" line names other kernel log lines the test
# causes on purpose (e.g. an error the driver must print).
vmx_expects() {
	grep -qE "^# vmx-expects:(.*[[:space:]])?$1([[:space:]]|\$)" "$0" 2>/dev/null
}

# Regex of the log lines this test expects (empty: none).
_vmx_log_allowed() {
	local a
	a=$(sed -n 's/^# vmx-expects-log: *//p' "$0" 2>/dev/null | paste -sd'|')
	{ vmx_expects resets || [ -s "$VMX_TMP/forced-resets" ]; } &&
		a="${a:+$a|}resetting the device\$"
	echo "$a"
}

# kernel_log_check: this test's kernel log slice (from its start marker
# on) holds no line kernel_log_bad rejects. Fails when the marker itself is
# missing (the log wrapped or could not be written): an unread log is not
# a clean one.
kernel_log_check() {
	local bad
	if ! dmesg 2>/dev/null | grep -qF "$_vmx_marker"; then
		echo "start marker '$_vmx_marker' not in the kernel log: cannot check it"
		return 1
	fi
	bad=$(dmesg -r 2>/dev/null | awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 }' |
		kernel_log_bad "$(_vmx_log_allowed)")
	[ -z "$bad" ] && return 0
	printf '%s\n' "$bad" | head -n 20
	echo "-- context:"
	dmesg_since_start | grep -F -A 12 -f <(printf '%s\n' "$bad" | head -n 5) | head -n 80
	return 1
}

# dut_error_counters IF: print the error counters of IF that are not zero:
# every queue's TX timeouts (sysfs) and, for vmx, bad completions
# (rxN/txN/xdptxN_bad_desc) and resets beyond those dut_forced_reset did
# on IF (any number if the test's header expects resets).
dut_error_counters() {
	local f n r
	r=$(grep -cx "$1" "$VMX_TMP/forced-resets" 2>/dev/null)
	vmx_expects resets && r=999999
	for f in /sys/class/net/"$1"/queues/tx-*/tx_timeout; do
		[ -r "$f" ] || continue
		read -r n < "$f"
		[ "$n" = 0 ] || echo "$1 ${f#/sys/class/net/"$1"/queues/} timeouts: $n"
	done
	[ "$VMX_DRIVER" = vmx ] || return 0
	ethtool -S "$1" 2>/dev/null | awk -v ifc="$1" -v r="$r" '
		$1 ~ /_bad_desc:$/ && $2 != 0 { print ifc, $1, $2 }
		$1 == "resets:" && $2 > r + 0 { print ifc, $1, $2, "(forced: " r + 0 ")" }'
}

# Error counters of every interface of the driver under test in this netns.
_vmx_counters_check() {
	local i out=
	for i in $(dut_ifaces); do
		out+=$(dut_error_counters "$i")$'\n'
	done
	[ -z "${out//$'\n'/}" ] && return 0
	printf '%s' "$out"
	return 1
}

vmx_cleanup() {
	local p
	for p in "${_vmx_bg[@]}"; do
		_bg_kill "$p"
	done
	for p in "${_vmx_bg[@]}"; do
		wait "$p" 2>/dev/null
	done
	_vmx_bg=()
	ip netns del "$PEER_NS" 2>/dev/null
	dut_unload 2>/dev/null
}

# vmx_done: error counters of the driver's interfaces (while it is still
# loaded), clean up, the kernel log check, the plan, exit. Writes
# "vmx-selftest: end ..." to the kernel log: tools/guest-suite.sh checks
# what lies outside the tests' begin/end markers.
vmx_done() {
	[ $_vmx_done = 0 ] || exit $KSFT_FAIL
	_vmx_done=1
	if dut_loaded && [ -n "$(dut_ifaces)" ]; then
		_vmx_extra=$((_vmx_extra + 1))
		check "error counters zero (bad completions, resets, TX timeouts)" \
			_vmx_counters_check
	fi
	vmx_cleanup
	if dut_loaded; then
		fail "driver unload" "rmmod $(dut_module) failed"
	fi
	sleep 0.2
	_vmx_extra=$((_vmx_extra + 1))
	check "kernel log clean" kernel_log_check
	echo "${_vmx_marker/begin/end}" >/dev/kmsg 2>/dev/null
	echo "1..$_vmx_n"
	log "$VMX_TEST: $_vmx_pass passed, $_vmx_fail failed, $_vmx_skip skipped"
	rm -rf "$VMX_TMP"
	trap - EXIT
	if [ $_vmx_fail -gt 0 ]; then
		exit $KSFT_FAIL
	fi
	# The bookkeeping subtests pass whatever the test did, so compare
	# with the number of real subtests.
	if [ $_vmx_skip -gt 0 ] && [ $_vmx_skip -eq $((_vmx_n - _vmx_extra)) ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

_vmx_on_exit() {
	[ $_vmx_done = 1 ] && return
	fail "test script ended early" "exit before vmx_done"
	vmx_done
}
trap _vmx_on_exit EXIT
trap 'exit 1' INT TERM


# ---- H5 helpers ----
# Queue statistics over the netdev netlink family (qstats-get, kernel
# 6.10+), read with nlstats.py as user nobody: the request needs no
# privilege, so any local user can make the driver answer it.
VMX_NLSTATS=$VMX_LIB_DIR/nlstats.py

# nl_qstats dev|queue IF: nlstats.py's output for IF (see nlstats.py).
nl_qstats() {
	local idx
	idx=$(cat "/sys/class/net/$2/ifindex") || return 1
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env PYTHONDONTWRITEBYTECODE=1 python3 "$VMX_NLSTATS" "$1" "$idx"
}

# qstat_dev IF FIELD: one device-scope qstats counter of IF (e.g.
# rx-alloc-fail); empty when the kernel or the driver has none.
qstat_dev() {
	nl_qstats dev "$1" | awk -v f="$2" '$1 == f { print $2 }'
}

# have_qstats: this kernel answers qstats-get (6.1 has no netdev family).
have_qstats() {
	nl_qstats dev lo >/dev/null 2>&1
	[ $? != 2 ]
}

# qstats_totals IF: device-scope "rx-packets tx-packets rx-bytes tx-bytes"
# of IF (the order of dut_counters, for not_backwards); fails when one is
# missing or the dump failed.
qstats_totals() {
	local out
	out=$(nl_qstats dev "$1") || { printf '%s\n' "$out"; return 1; }
	printf '%s\n' "$out" | awk '{ v[$1] = $2 }
		END { n = split("rx-packets tx-packets rx-bytes tx-bytes", k, " ")
		      for (i = 1; i <= n; i++) {
			if (!(k[i] in v)) { print "no " k[i] " in qstats-get"; exit 1 }
			printf "%s%s", v[k[i]], (i < n ? " " : "\n") } }'
}

# kernel_oopsed: an Oops/BUG since the test started (printed).
kernel_oopsed() {
	dmesg_since_start | grep -E -A 20 'Oops|BUG:|general protection fault' | head -n 40 | grep .
}

# vmx_abort_wedged WHY: the kernel is wedged (e.g. an oops holding rtnl,
# after which every ip/ethtool/rmmod would hang): one failed subtest, the
# plan, and exit without vmx_done's cleanup.
vmx_abort_wedged() {
	fail "kernel still usable" "$1"
	_vmx_done=1
	trap - EXIT
	echo "1..$_vmx_n"
	log "$VMX_TEST: $_vmx_pass passed, $_vmx_fail failed, $_vmx_skip skipped (aborted)"
	exit $KSFT_FAIL
}

# ---- H2 helpers ----
# Counters and what the device lets in (moved here from xdp_lib.sh so that
# the non-XDP tests use the same ones).

mac_of() { cat "/sys/class/net/$1/address"; }
peer_mac() { pexec cat "/sys/class/net/$PEER/address"; }

# estat IF REGEX: sum of the ethtool -S counters whose whole name matches
# REGEX (e.g. 'rx[0-9]+_xdp_drop'); 0 when none matches.
estat() {
	ethtool -S "$1" | awk -v re="^($2)$" '
		{ n = $1; sub(":$", "", n) } n ~ re { s += $2 } END { printf "%d\n", s }'
}

# link_stat IF FIELD (this netns) / peer_link_stat FIELD: rtnl counters.
link_stat() { stat_of "$1" "$2"; }
peer_link_stat() { pexec cat "/sys/class/net/$PEER/statistics/$1"; }

# snap IF: "name value" per ethtool -S counter of IF (this netns), plus
# every rtnl counter (/sys/class/net/IF/statistics) as link_<name> and the
# interrupts per vector: irq_<dev>-rxtx-N, irq_<dev>-xdp-tx, irq_<dev>.
snap() {
	local f v
	ethtool -S "$1" | awk -F': *' 'NR > 1 { gsub(/^ +/, "", $1); print $1, $2 }'
	for f in /sys/class/net/"$1"/statistics/*; do
		read -r v < "$f" && echo "link_${f##*/} $v"
	done
	awk -v d="$1" '$1 ~ /^[0-9]+:$/ && ($NF == d || index($NF, d "-") == 1) {
		s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i
		print "irq_" $NF, s }' /proc/interrupts
}
peer_snap() {
	local f
	for f in rx_packets rx_dropped rx_missed_errors tx_packets; do
		echo "link_$f $(peer_link_stat $f)"
	done
}

# sdelta BEFORE AFTER REGEX: summed change of the counters named REGEX.
sdelta() {
	awk -v re="^($3)$" 'FNR == NR { b[$1] = $2; next }
		$1 ~ re { s += $2 - b[$1] } END { printf "%d\n", s }' "$1" "$2"
}

# smoved BEFORE AFTER: print "name before -> after" for every counter of
# two snaps that changed (names in both); fails when one did.
smoved() {
	awk 'FNR == NR { b[$1] = $2; next }
		($1 in b) && b[$1] != $2 { print $1, b[$1], "->", $2; m = 1 }
		END { exit m }' "$1" "$2"
}

# near A B PCT [SLACK]: |A - B| <= B * PCT / 100 + SLACK
near() {
	local d=$(($1 - $2))
	[ $d -lt 0 ] && d=$((-d))
	[ $((d * 100)) -le $(($2 * $3 + ${4:-0} * 100)) ]
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

# ---- H12 helpers ----
# snmp_field PROTO FIELD: the FIELD column of the PROTO row ("Tcp",
# "Icmp", "Udp", ...) of /proc/net/snmp text read on stdin. This netns:
# snmp_field Tcp OutSegs </proc/net/snmp; the peer's:
# pexec cat /proc/net/snmp | snmp_field Udp NoPorts.
snmp_field() {
	awk -v p="$1:" -v f="$2" '$1 == p { if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1 }
		else for (i = 2; i <= NF; i++) if (n[i] == f) print $i }'
}

# ---- H13 test device helpers ----
# The project's vmxnet3 test device (tools/testdev, tools/vm.sh --nic
# vmxnet3t[:PROPS]): vm.sh exports VMX_TESTDEV_NICS="nicN:PROP=VAL,... ..."
# (one word per test-device NIC, QOM id and the properties it was given,
# defaults first); its counters are QOM properties read with qom-get over
# the guest monitor (hmp, so the guest needs --guest-monitor). Property
# and counter names: tools/testdev/README.md.

# testdev_nics: the QOM ids (nic1, nic3, ...) of the test-device NICs.
testdev_nics() {
	local w
	for w in ${VMX_TESTDEV_NICS:-}; do
		echo "${w%%:*}"
	done
}

# have_testdev [PROP=VAL]: the guest has a test-device NIC (one whose
# properties, as vm.sh set them, end up with PROP=VAL).
have_testdev() {
	local n
	for n in $(testdev_nics); do
		[ $# = 0 ] && return 0
		[ "$(testdev_prop "$n" "${1%%=*}")" = "${1#*=}" ] && return 0
	done
	return 1
}

# testdev_prop NIC PROP: the value vm.sh gave property PROP of test-device
# NIC nicN (the last setting wins); empty when not set there.
testdev_prop() {
	local w a p v=
	for w in ${VMX_TESTDEV_NICS:-}; do
		[ "${w%%:*}" = "$1" ] || continue
		IFS=, read -r -a a <<<"${w#*:}"
		for p in "${a[@]}"; do
			[ "${p%%=*}" = "$2" ] && v=${p#*=}
		done
	done
	echo "$v"
}

# testdev_nic_of IF: the QOM id (nicN) of the NIC behind interface IF.
# vm.sh gives NIC N the permanent MAC 52:54:00:12:34:NN (hex).
testdev_nic_of() {
	local m
	m=$(ethtool -P "$1" 2>/dev/null | awk '{ print $NF }')
	[[ "$m" == 52:54:00:12:34:* ]] || { echo "testdev_nic_of: $1 has permanent MAC '$m', not one of vm.sh's" >&2; return 1; }
	echo "nic$((16#${m##*:}))"
}

# testdev_iface_with PROP [ABOVE]: the first vmx interface whose test
# device vm.sh gave property PROP (with a value above ABOVE, if given);
# fails when there is none.
testdev_iface_with() {
	local i nic v
	for i in $(dut_ifaces); do
		nic=$(testdev_nic_of "$i" 2>/dev/null) || continue
		v=$(testdev_prop "$nic" "$1")
		[ -n "$v" ] || continue
		[ -z "${2:-}" ] || [ "$v" -gt "$2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# testdev_stat NIC PROP: one counter of the test device (qom-get), NIC a
# QOM id (nicN) or an interface name, PROP with or without "stat-"
# (testdev_stat eth0 violations, testdev_stat nic1 stat-rx-data-ring).
# Prints the number; fails (message on stderr) when it cannot be read.
testdev_stat() {
	local nic=$1 prop=$2 out
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	[[ "$prop" == stat-* ]] || prop=stat-$prop
	out=$(hmp "qom-get $nic $prop") ||
		{ echo "testdev_stat: qom-get $nic $prop: $out" >&2; return 1; }
	out=${out//$'\r'/}
	[[ "$out" =~ ^[0-9]+$ ]] ||
		{ echo "testdev_stat: qom-get $nic $prop answered '$out'" >&2; return 1; }
	echo "$out"
}

# testdev_set NIC PROP VALUE: qom-set a property of a test-device NIC, e.g.
# testdev_set nic1 fault link-flap (NIC as for testdev_stat).
testdev_set() {
	local nic=$1
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	hmp "qom-set $nic $2 $3"
}

# testdev_violations: the sum of stat-violations (strict-mode violations,
# counted since the NIC was created) over every test-device NIC; 0 when
# there is none. Fails when one cannot be read.
testdev_violations() {
	local n v s=0
	for n in $(testdev_nics); do
		v=$(testdev_stat "$n" violations) || return 1
		s=$((s + v))
	done
	echo "$s"
}

# testdev_violation_kinds: "nicN stat-violation-KIND COUNT" for every
# violation kind with a non-zero count, on every test-device NIC.
testdev_violation_kinds() {
	local n k v
	for n in $(testdev_nics); do
		for k in ring-config rx-desc tx-desc tx-chain dma tx-gen rx-gen \
		    tx-reuse rx-owned intr-block tx-oversize rx-buf-size tso-hlen \
		    tso-seed csum-offset csum-seed; do
			v=$(testdev_stat "$n" "violation-$k") || return 1
			[ "$v" = 0 ] || echo "$n stat-violation-$k $v"
		done
	done
}

# ---- H16T helpers ----
# kernel_at_least MAJOR MINOR: the running kernel is MAJOR.MINOR or newer.
kernel_at_least() {
	local v
	v=$(uname -r)
	IFS=. read -r -a v <<<"${v%%-*}"
	[ "${v[0]}" -gt "$1" ] || { [ "${v[0]}" = "$1" ] && [ "${v[1]}" -ge "$2" ]; }
}

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

# ---- H17 helpers: kmemleak (the debug kernel of tools/kernels) ----
# kmemleak keeps backtraces as addresses and names them when read: a frame
# in a module that has since been unloaded (vmx, after a test) shows as a
# bare address, "[<ffffffffc0a01234>] 0xffffffffc0a01234". (The functions
# need nothing else of lib.sh: guest-suite.sh takes them alone.)

# have_kmemleak: this kernel has kmemleak and it is still on.
have_kmemleak() { [ -w /sys/kernel/debug/kmemleak ] && cat /sys/kernel/debug/kmemleak >/dev/null 2>&1; }

# kmemleak_scan: one scan (objects younger than 5 s are not reported yet),
# then print every suspected leak record not printed by an earlier call
# and forget them (echo clear: the next call prints only new ones).
kmemleak_scan() {
	echo scan > /sys/kernel/debug/kmemleak || return 1
	cat /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
}

# kmemleak_vmx: the records of kmemleak_scan's output (stdin) whose
# backtrace has a vmx frame ("[vmx]") or a frame of an unloaded module (a
# bare address: vmx is the module the tests unload).
kmemleak_vmx() {
	awk '/^unreferenced object/ { if (r != "" && m) printf "%s", r; r = ""; m = 0 }
		{ r = r $0 "\n" }
		/\[vmx\]/ || /^ +\[<[0-9a-f]+>\] 0x[0-9a-f]+$/ { m = 1 }
		END { if (r != "" && m) printf "%s", r }'
}
