#!/usr/bin/env bash
# tdev_queues32.sh - more than 8 queues (revision 6): a test
# device NIC offering 32 TX and 32 RX queues (max-revision=6,
# max-tx-queues=32,max-rx-queues=32: GET_MAX_QUEUES_CONF 32/32, 65 MSI-X
# vectors) in a guest with more CPUs than 8 channels need (group
# tdevq32). vmx offers one channel per CPU up to 32; with more than 8 TX
# (stack + XDP) or 16 RX queues it describes its vectors in the extended
# interrupt block (the device counts those activations: stat-intr-ext),
# events on vector 0, XDP TX completions on 1, the channels from 2, so a
# configuration that fits the legacy block (at most 8 TX queues) keeps its
# vectors below 25 and one that does not may use vectors up to 64. Checked
# at 8 channels + 8 XDP TX queues (16 TX: extended), at one channel per CPU
# (vectors above 24 when there are 23 or more CPUs), back at 4 channels
# (8 TX: legacy again): each time the device accepted the activation, TCP
# flows spread over the channels land on many RX queues (device counters),
# every channel's vector fired, and an XDP program's XDP_TX works. SKIPs
# without such a NIC (stock QEMU: revision 1, 8 queues).
# vmx-timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

xdp_setup --no-load
dut_up_driver > "$VMX_TMP/up.out" 2>&1 || { diag < "$VMX_TMP/up.out"; bail "driver did not come up"; }

BIG=$(testdev_iface_with max-tx-queues 8)
if [ -z "$BIG" ]; then
	skip "more than 8 queues" \
		"no test-device NIC with max-tx-queues above 8 (group tdevq32; stock QEMU offers 8 queues at revision 1)"
	vmx_done
fi
NIC=$(testdev_nic_of "$BIG")
DUT=$BIG
dut_addr_setup "$DUT" > "$VMX_TMP/addr.out" 2>&1 || { diag < "$VMX_TMP/addr.out"; bail "$DUT setup failed"; }
NCPU=$(nproc)
WANT_MAX=$((NCPU < 32 ? NCPU : 32))
log "DUT=$DUT ($NIC: 32 TX / 32 RX queues offered), $NCPU CPUs"

ch_max() { combined_max "$DUT"; }
ch_cur() { combined_channels "$DUT"; }

check_max() {
	echo "combined channels: max $(ch_max), current $(ch_cur); $NCPU CPUs"
	[ "$(ch_max)" = "$WANT_MAX" ] || { echo "want max $WANT_MAX (one per CPU, up to 32)"; return 1; }
	[ "$(ch_cur)" = "$((WANT_MAX < 8 ? WANT_MAX : 8))" ] || { echo "default is one per CPU, at most 8"; return 1; }
}
check "ethtool -l: up to one channel per CPU (max 32), 8 by default" check_max

# irqs: "name count" of the DUT's vectors, summed over CPUs
irqs() {
	awk -v d="$DUT" '$NF ~ "^"d"(-|$)" { s = 0; for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i; else break; print $NF, s }' /proc/interrupts
}

# rx_spread N: 16 TCP flows from the peer into the DUT; the device delivered frames to
# at least min(N, 4) RX queues and none beyond N; every channel vector the
# flows' queues use fired; ping works. Toeplitz is linear in the input
# bits and 16 ephemeral ports in a row differ in a few low bits only, so
# one round can span fewer queues whatever the driver does: up to three
# rounds (new ports each time) are counted together.
rx_spread() {
	local n=$1 q v a b used=0 beyond=0 rc=0 round
	declare -a r0
	for ((q = 0; q < 32; q++)); do r0[q]=$(testdev_stat "$NIC" "rx-queue$q") || return 1; done
	irqs > "$VMX_TMP/i0"
	for round in 1 2 3; do
		iperf_server_start 5201 || return 1
		# the server is the peer's; -R: the peer sends, the DUT receives
		timeout 40 iperf3 -c "$PEER_IP" -p 5201 -P 16 -t 4 -R --connect-timeout 5000 > "$VMX_TMP/ip.out" 2>&1 ||
			{ tail -n 3 "$VMX_TMP/ip.out"; echo "iperf3 failed"; rc=1; }
		wait "$_iperf_srv" 2>/dev/null
		used=0; beyond=0
		for ((q = 0; q < 32; q++)); do
			v=$(testdev_stat "$NIC" "rx-queue$q") || return 1
			v=$((v - r0[q]))
			[ "$v" -gt 0 ] || continue
			if [ "$q" -lt "$n" ]; then used=$((used + 1)); else beyond=$((beyond + v)); fi
		done
		[ "$used" -lt "$((n < 4 ? n : 4))" ] || break
		echo "round $round: frames on $used RX queues so far"
	done
	irqs > "$VMX_TMP/i1"
	echo "$n channels: frames on $used RX queues, $beyond beyond queue $((n - 1)) (rounds of 16 flows: $round)"
	[ "$used" -ge "$((n < 4 ? n : 4))" ] || { echo "want at least $((n < 4 ? n : 4)) RX queues used"; rc=1; }
	[ "$beyond" = 0 ] || rc=1
	# each RX queue that got frames raised its channel's vector
	for ((q = 0; q < n; q++)); do
		a=$(awk -v k="$DUT-rxtx-$q" '$1 == k { print $2 }' "$VMX_TMP/i0")
		b=$(awk -v k="$DUT-rxtx-$q" '$1 == k { print $2 }' "$VMX_TMP/i1")
		[ -n "$b" ] || { echo "no vector $DUT-rxtx-$q"; rc=1; continue; }
		v=$(testdev_stat "$NIC" "rx-queue$q")
		[ "$v" -gt "${r0[q]}" ] && [ "$b" = "${a:-0}" ] &&
			{ echo "queue $q got frames but $DUT-rxtx-$q never fired"; rc=1; }
	done
	peer_ping -c 3 -i 0.2 "$DUT_IP" > /dev/null || { echo "ping failed"; rc=1; }
	return "$rc"
}

# set_ch N EXT: ethtool -L combined N; the activation was accepted (carrier,
# ping) and stat-intr-ext moved by EXT (1: the extended block was read,
# 0: the legacy one)
set_ch() {
	local n=$1 ext=$2 e0 e1
	e0=$(testdev_stat "$NIC" intr-ext) || return 1
	ethtool -L "$DUT" combined "$n" || { echo "ethtool -L combined $n refused"; return 1; }
	wait_carrier "$DUT" 10 || { echo "no carrier after ethtool -L combined $n"; dmesg | tail -n 5; return 1; }
	e1=$(testdev_stat "$NIC" intr-ext) || return 1
	echo "combined $n: stat-intr-ext +$((e1 - e0)), $(ethtool -S "$DUT" | grep -c '^ *xdptx[0-9]*_packets:') XDP TX queues, $(grep -c "$DUT-" /proc/interrupts) vectors"
	[ "$((e1 - e0))" = "$ext" ] || { echo "want stat-intr-ext +$ext"; return 1; }
}

# 8 channels + 8 XDP TX queues with a program = 16 TX queues: extended
xdp_on() {
	local e0 e1
	e0=$(testdev_stat "$NIC" intr-ext) || return 1
	xdp_attach "$DUT" xdp_tx || return 1
	wait_carrier "$DUT" 10 || return 1
	e1=$(testdev_stat "$NIC" intr-ext) || return 1
	echo "xdp_tx on $(ch_cur) channels: $(ethtool -S "$DUT" | grep -c '^ *xdptx[0-9]*_packets:') XDP TX queues, stat-intr-ext +$((e1 - e0))"
	[ "$((e1 - e0))" -ge 1 ] || { echo "16 TX queues need the extended block"; return 1; }
}
if [ "$(ch_cur)" = 8 ]; then
	check "8 channels + xdp_tx (16 TX queues): activated from the extended interrupt block" xdp_on
	check "XDP_TX on 8 channels with their own XDP TX queues: 32 frames back exact" \
		peer_bounce $XDP_PORT_TX 32 swap
	check "TCP over 8 channels with XDP_PASS for other traffic" rx_spread 8
	xdp_detach "$DUT"
	wait_carrier "$DUT" 10
fi
check "combined $WANT_MAX (one per CPU): extended block" set_ch "$WANT_MAX" 1
check "TCP over $WANT_MAX channels: spread, every used vector fired" rx_spread "$WANT_MAX"

# all_queues N: 512 short TCP connections from the peer (each its own
# 4-tuple: RSS spreads them over the indirection table) carry frames into
# every one of the N RX queues (the device's per-queue counters), and the
# DUT's answers, sent from the CPUs those queues interrupt, leave through
# every one of its N TX queues (vmx's txN_packets).
all_queues() {
	local n=$1 q v rc=0 idle_rx="" idle_tx="" lpid
	declare -a r0 t0
	for ((q = 0; q < n; q++)); do
		r0[q]=$(testdev_stat "$NIC" "rx-queue$q") || return 1
		t0[q]=$(estat "$DUT" "tx${q}_packets")
	done
	# emptied before the job starts (see listen_start)
	: >"$VMX_TMP/aq.out"
	python3 - "$DUT_IP" > "$VMX_TMP/aq.out" 2>&1 <<'PYEOF' &
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5311))
s.listen(512)
s.settimeout(60)
print("listening", flush=True)
for _ in range(512):
    c, _a = s.accept()
    c.recv(4096)
    c.sendall(b"a" * 200)
    c.close()
PYEOF
	lpid=$!
	_vmx_bg+=("$lpid")
	wait_for 20 grep -q listening "$VMX_TMP/aq.out" || { cat "$VMX_TMP/aq.out"; return 1; }
	pexec python3 - "$DUT_IP" <<'PYEOF' || { echo "peer connections failed"; rc=1; }
import socket, sys
for i in range(512):
    c = socket.create_connection((sys.argv[1], 5311), timeout=20)
    c.sendall(b"q" * 1000)
    c.recv(4096)
    c.close()
PYEOF
	wait "$lpid" || { cat "$VMX_TMP/aq.out"; echo "DUT listener failed"; rc=1; }
	for ((q = 0; q < n; q++)); do
		v=$(testdev_stat "$NIC" "rx-queue$q") || return 1
		[ "$v" -gt "${r0[q]}" ] || idle_rx+=" $q"
		v=$(estat "$DUT" "tx${q}_packets")
		[ "$v" -gt "${t0[q]}" ] || idle_tx+=" $q"
	done
	echo "$n channels: RX queues without frames:${idle_rx:- none}; TX queues without frames:${idle_tx:- none}"
	[ -z "$idle_rx" ] && [ -z "$idle_tx" ] && [ "$rc" = 0 ]
}
check "512 TCP connections over $WANT_MAX channels: every RX and TX queue carries traffic" \
	all_queues "$WANT_MAX"
# the device's notification counters: vectors 25..64 exist only in the
# extended block, and with 23 or more channels the last channels' vectors
# live there. RSS steers every flow to the last queue (16 flows alone may
# miss it), then the table goes back to the default.
high_vectors() {
	local v s=0 i w=()
	for ((i = 1; i < WANT_MAX; i++)); do w+=(0); done
	ethtool -X "$DUT" weight "${w[@]}" 1 || { echo "ethtool -X weight ... 1 refused"; return 1; }
	iperf_server_start 5201 || return 1
	timeout 40 iperf3 -c "$PEER_IP" -p 5201 -P 4 -t 2 -R --connect-timeout 5000 > "$VMX_TMP/ip.out" 2>&1 ||
		{ tail -n 3 "$VMX_TMP/ip.out"; echo "iperf3 failed"; }
	wait "$_iperf_srv" 2>/dev/null
	ethtool -X "$DUT" default
	for ((i = 25; i < 65; i++)); do
		v=$(testdev_stat "$NIC" "intr$i") || return 1
		s=$((s + v))
	done
	echo "device notifications on vectors 25..64: $s"
	[ "$s" -gt 0 ]
}
if [ "$WANT_MAX" -ge 23 ]; then
	check "vectors above 24 carried interrupts" high_vectors
fi
check "combined 4 (4 TX queues): back to the legacy block" set_ch 4 0
check "TCP over 4 channels" rx_spread 4
vmx_done
