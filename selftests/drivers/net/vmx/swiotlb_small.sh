#!/usr/bin/env bash
# swiotlb_small.sh - vmx in a guest whose every DMA mapping is bounced
# through a small swiotlb pool (swiotlb=N,force: N slabs of 2 KiB, shared
# with every device), as on confidential-computing guests.
#   - With N >= 4096 (8 MB, where the in-tree vmxnet3 still brings the link
#     up) the DUT must open: RX buffers sized so that the rings fit.
#     Smaller pools: opening may fail, but with a kernel message naming the
#     cause; the data path is then not checked.
#   - ping and TCP both ways (iperf3).
#   - TSO/scatter-gather bulk transfers of random files, several at once,
#     both ways: each arrives byte-identical (sha256), none stalls, and the
#     peer saw no frame that was not sent (no IP/TCP checksum, header or
#     reassembly errors: a TX descriptor left owned by the device after a
#     mapping failure glues stale buffers into a frame). Every bounce-pool
#     mapping failure of the DUT ("swiotlb buffer is full" from vmx) must
#     show in its counters (ethtool -S txN_drop or a mapping-error counter,
#     qstats rx-alloc-fail).
#   - That check needs a failure, and the pool does not run out on its own
#     (swiotlb4k: none in its CI runs): so the test exhausts the pool on
#     purpose (DUT2 under XDP, its pages held by a socket that does not
#     read) and then the DUT's lost frames must all be counted.
# Run: tools/vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio --append "swiotlb=4096,force"
# (also worth a try: swiotlb=1024,force). SKIP without a forced swiotlb.
# vmx-timeout: 420
# The bounce pool running out, from the swiotlb code under vmx's name (a
# warning) and from vmx: its RX rings made smaller to fit, or (pools under
# 4096 slabs) the open refused with the cause named.
# vmx-expects-log: swiotlb buffer is full \(sz: [0-9]+ bytes\), total [0-9]+ \(slots\), used [0-9]+ \(slots\)
# vmx-expects-log: RX rings reduced from [0-9]+/[0-9]+ to [0-9]+/[0-9]+: not enough memory or DMA mapping space \(bounce buffers\?\) for the configured sizes
# vmx-expects-log: cannot allocate or DMA-map the rings even at [0-9]+/[0-9]+ RX buffers \(-[0-9]+\): out of memory or of DMA mapping space \(bounce buffers\?\)
source "$(dirname "$0")/lib.sh"

# Mapping failures are expected here and checked against the driver's
# counters below; the rest of the kernel log check stays.
VMX_DMESG_BAD=${VMX_DMESG_BAD//'|swiotlb buffer is full'/}
VMX_DMESG_BAD=${VMX_DMESG_BAD//'|dma_map.*fail'/}

SLABS=$(sed -n 's/.*swiotlb=\([0-9][0-9]*\)[^ ]*force.*/\1/p' /proc/cmdline)
STREAMS=${VMX_SWIOTLB_STREAMS:-4}
BLOB_MB=${VMX_SWIOTLB_BLOB_MB:-16}

vmx_setup --no-load
if [ -z "$SLABS" ]; then
	skip "open and data path under a small forced swiotlb pool" \
		"guest not booted with swiotlb=N,force (tools/vm.sh --append swiotlb=4096,force)"
	vmx_done
fi
log "swiotlb pool: $SLABS slabs ($((SLABS * 2 / 1024)) MB), forced; $(dmesg | grep -m1 'software IO TLB: mapped' | sed 's/^\[[^]]*\] //')"
check "driver $VMX_DRIVER bound" dut_up_driver || vmx_done

# vmx_lines: the driver's kernel log lines since the test started.
vmx_lines() { dmesg_since_start | grep -E "(vmx|$VMX_DRIVER_NAME) [0-9a-f]{4}:|$DUT"; }

opened() {
	local rc=0
	dut_addr_setup 2>&1 || rc=1
	vmx_lines | tail -n 5
	return $rc
}
if [ "$SLABS" -ge 4096 ]; then
	check "$DUT opens with a ${SLABS}-slab forced swiotlb pool" opened ||
		bail "the DUT did not open; data path not checked" "data path under the small pool"
else
	if ! opened > "$VMX_TMP/open.out" 2>&1; then
		diag <"$VMX_TMP/open.out"
		named() { vmx_lines | grep -i -E 'swiotlb|bounce|dma|ring'; }
		check "open refused with a message naming the cause (pool of $SLABS slabs)" named
		skip "data path under a $SLABS-slab pool" "the DUT did not open with this pool"
		vmx_done
	fi
	diag <"$VMX_TMP/open.out"
	ok "$DUT opens with a ${SLABS}-slab forced swiotlb pool"
fi
ethtool -g "$DUT" | diag
ethtool -K "$DUT" tso on gso on sg on tx on >/dev/null 2>&1
ethtool -k "$DUT" | grep -E '^(tcp-segmentation-offload|scatter-gather|tx-checksumming):' | diag

check "ping v4" dut_ping -c 5 -i 0.2 "$PEER_IP"
check "ping v4, 1400-byte payload" dut_ping -c 5 -i 0.2 -s 1400 "$PEER_IP"
check "TCP DUT -> peer (iperf3)" iperf_check
check "TCP peer -> DUT (iperf3 -R)" iperf_check -R

# ------------------------------------------------ bulk transfers
# peer_snmp: the peer's IP/TCP/UDP error counters that a wrong frame moves,
# and its SYN challenges, "Name value" per line (nstat's names).
SNMP_ERRS='IpInHdrErrors|IpInAddrErrors|IpReasmFails|IpInDiscards|TcpInCsumErrors|TcpInErrs|UdpInCsumErrors|UdpInErrors'
peer_snmp() {
	pexec nstat -saz 2>/dev/null |
		awk -v re="^($SNMP_ERRS|TcpExtTCPSynChallenge)$" '$1 ~ re { print $1, $2 }'
	for f in rx_errors rx_length_errors rx_crc_errors rx_frame_errors; do
		echo "link_$f $(peer_link_stat $f)"
	done
}
# syn_retrans: the DUT's SYN and SYN-ACK retransmissions (TcpExtTCPSynRetrans).
syn_retrans() { nstat -saz 2>/dev/null | awk '$1 == "TcpExtTCPSynRetrans" { print $2 }'; }

# _port_listening peer|dut PORT: a TCP listener on PORT in that netns.
_port_listening() {
	if [ "$1" = peer ]; then
		_iperf_listening "$2"
	else
		ss -Hltn "sport = :$2" | grep -q LISTEN
	fi
}

# transfer DIR PORT: send $BLOB over one TCP connection (DIR out: DUT ->
# peer, in: peer -> DUT) into $VMX_TMP/got.PORT; bounded in time (times
# VMX_TIMEOUT_SCALE: on the debug kernel with a forced swiotlb the five
# streams share about 3.5 Mbit/s, 80 MB take more than 120 s).
transfer() {
	local dir=$1 port=$2 out=$VMX_TMP/got.$2 srv=() cli=() dst=$PEER_IP ns=peer
	if [ "$dir" = in ]; then srv=(); cli=(ip netns exec "$PEER_NS"); dst=$DUT_IP; ns=dut
	else srv=(ip netns exec "$PEER_NS"); fi
	"${srv[@]}" timeout "$(scaled 150)" socat -u "TCP-LISTEN:$port,reuseaddr" "OPEN:$out,creat,trunc" &
	local sp=$!
	wait_for 10 _port_listening "$ns" "$port" || { echo "no listener on $port"; kill $sp; return 1; }
	"${cli[@]}" timeout "$(scaled 120)" socat -u "OPEN:$BLOB" "TCP:$dst:$port" || { echo "sender $dir:$port failed or stalled"; kill $sp 2>/dev/null; return 1; }
	wait $sp || { echo "receiver $dir:$port failed"; return 1; }
}

BLOB=$VMX_TMP/blob
head -c "${BLOB_MB}M" /dev/urandom > "$BLOB"
SUM=$(sha256sum < "$BLOB")

# bulk DIR...: one transfer per DIR at once; every copy byte-identical.
bulk() {
	local d i=0 pids=() rc=0 p dirs=("$@")
	for d in "${dirs[@]}"; do
		transfer "$d" $((5300 + i)) > "$VMX_TMP/xfer.$i" 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { rc=1; cat "$VMX_TMP/xfer.$i"; }
		p=$((5300 + i))
		if [ "$(sha256sum < "$VMX_TMP/got.$p" 2>/dev/null)" != "$SUM" ]; then
			echo "stream $i (${dirs[$i]}): copy differs ($(stat -c %s "$VMX_TMP/got.$p" 2>/dev/null || echo 0) of $((BLOB_MB << 20)) bytes)"
			rc=1
		fi
		rm -f "$VMX_TMP/got.$p"
	done
	[ $rc = 0 ] && echo "$# transfers of $BLOB_MB MB, all byte-identical"
	return $rc
}

full_msgs() { dmesg_since_start | grep -c -E "(vmx|$VMX_DRIVER_NAME) .*swiotlb buffer is full"; }
MAPERR='tx[0-9]+_(drop|map_err|map_errors|dma_map_err|dma_map_errors|map_fail)'
# map_fails: TX mapping failures (ethtool -S) plus RX buffer allocation
# failures (qstats rx-alloc-fail: a page_pool page that could not be mapped).
map_fails() {
	local e q=
	e=$(estat "$DUT" "$MAPERR")
	have_qstats && q=$(qstat_dev "$DUT" rx-alloc-fail)
	echo $((e + ${q:-0}))
}

bulk_check() {
	local dirs=() i s0 s1 m0 m1 f0 f1 rc=0
	for i in $(seq "$STREAMS"); do dirs+=(out); done
	dirs+=(in)
	peer_snmp > "$VMX_TMP/snmp0"
	m0=$(map_fails); f0=$(full_msgs); r0=$(syn_retrans)
	bulk "${dirs[@]}" || rc=1
	peer_snmp > "$VMX_TMP/snmp1"
	m1=$(map_fails); f1=$(full_msgs); r1=$(syn_retrans)
	echo "DUT mapping failures counted (txN_drop/map errors, qstats rx-alloc-fail): +$((m1 - m0)); 'swiotlb buffer is full' from $VMX_DRIVER_NAME: +$((f1 - f0)) (rate-limited)"
	awk 'FNR == NR { b[$1] = $2; next } $2 != b[$1] { print "peer " $1 " +" $2 - b[$1] }' \
		"$VMX_TMP/snmp0" "$VMX_TMP/snmp1"
	# A SYN or SYN-ACK the DUT sent again (its answer late: the debug
	# kernel under TCG takes over a second) reaches a connection the peer
	# has established: a SYN challenge, counted in TcpInErrs too although
	# nothing was wrong with the frame. Those are taken off TcpInErrs, as
	# many as the DUT retransmitted SYNs; everything else is a bad frame.
	s0=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" "$SNMP_ERRS|link_.*")
	s1=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" 'IpInDiscards')
	e=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" 'TcpInErrs')
	c=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" 'TcpExtTCPSynChallenge')
	[ "$c" -le "$e" ] || c=$e
	if [ "$c" -gt 0 ]; then
		echo "SYN challenges at the peer +$c (taken off TcpInErrs); the DUT's SYN retransmissions +$((r1 - r0))"
		[ "$c" -le $((r1 - r0)) ] || { echo "more SYN challenges than SYNs the DUT sent again"; rc=1; }
	fi
	[ $((s0 - s1 - c)) = 0 ] || { echo "the peer received frames that were not sent (errors above)"; rc=1; }
	if [ $((f1 - f0)) -gt 0 ] && [ $((m1 - m0)) = 0 ]; then
		echo "mapping failures happened but no ethtool -S counter moved"
		rc=1
	fi
	return $rc
}
c0=$(estat "$DUT" 'rx[0-9]+_copied')
check "$STREAMS TSO/SG transfers out + 1 in at once: byte-identical, no stall, no bad frame at the peer" bulk_check
# Every mapping bounced: received frames are copied out and the mapped pages
# stay on the rings (a page lent to a socket would hold its bounce slots).
copied() {
	local c1
	c1=$(estat "$DUT" 'rx[0-9]+_copied')
	echo "rxN_copied +$((c1 - c0)) during the transfers (16 MB in)"
	[ $((c1 - c0)) -ge $(((BLOB_MB << 20) / 1500)) ]
}
if [ "$VMX_DRIVER_NAME" = vmx ]; then
	check "received frames copied out of the bounced pages" copied
fi

SWT=/sys/kernel/debug/swiotlb
swt_used() { local u; read -r u < "$SWT/io_tlb_used" && echo "$u"; }
# sink_start OUT PORT [NETNS]: a TCP listener with a 64 MB receive buffer
# that accepts one connection and never reads it (what it was sent stays
# queued, holding whatever the skbs hold); SINK_PID is python itself.
SINK_PID=
sink_start() {
	local -a pre=()
	[ -z "${3:-}" ] || pre=(ip netns exec "$3")
	listen_start "$1" listening "${pre[@]}" python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
time.sleep(600)' "$2" || { echo "no listener on port $2"; return 1; }
	SINK_PID=$LISTEN_PID
}
# The copy seen from outside the driver: the kernel's bounce pool
# (debugfs io_tlb_used, in slots of 2 KiB). A socket that does not read
# keeps what it received; copied out, that holds no ring page and no
# mapping, so the pool's use stays where it was while the whole file
# arrives and stays queued. Pages lent to the socket would each keep their
# bounce slots (16 MB queued: 8192 slots, twice the pool) until the pool
# ran dry and the transfer stalled. Allowed: 64 slots (TX mappings of ACKs
# in flight); measured +0 (16 MB queued in 22 MB of socket memory). A
# driver that lends its pages (sabotage rx-swiotlb-lend): the pool full
# (+384, all that was left) and the file stuck.
# _queued: the bytes the listener's connection holds unread (Recv-Q, the
# FIN included once the sender closed: CLOSE-WAIT)
_queued() { ss -Htn "( sport = :5410 )" | awk '{ q = $2 } END { print q + 0 }'; }
_queue_full() { [ "$(_queued)" -ge $(((BLOB_MB << 20) * 9 / 10)) ]; }
held_no_slots() {
	local u0 u1 spid rc=0
	[ -r "$SWT/io_tlb_used" ] || { echo "no $SWT (debugfs)"; return 1; }
	sink_start "$VMX_TMP/sink.rx" 5410 || return 1
	u0=$(swt_used)
	pexec timeout "$(scaled 60)" socat -u "OPEN:$BLOB" "TCP:$DUT_IP:5410" &
	spid=$!
	wait_for "$(scaled 60)" _queue_full || { echo "the file did not arrive in 60 s"; rc=1; }
	u1=$(swt_used)
	echo "queued unread on the DUT: $(_queued) bytes; bounce pool $u0 -> $u1 slots in use (+$((u1 - u0)))"
	ss -Htnm "( sport = :5410 )"
	[ $((u1 - u0)) -le 64 ] || { echo "the socket's data holds bounce slots: ring pages went up the stack"; rc=1; }
	kill "$SINK_PID" "$spid" 2>/dev/null; wait "$SINK_PID" "$spid" 2>/dev/null
	return $rc
}
if [ "$VMX_DRIVER_NAME" = vmx ]; then
	check "$BLOB_MB MB queued unread in a socket hold no bounce slot (io_tlb_used)" held_no_slots
fi

# ------------------------------------------------ the pool exhausted on purpose
# bulk_check's mapping-failure check runs only when a failure happened,
# and with 4096 slabs none did in CI. So make one happen: DUT2, in a netns
# of its own (10.99.0.3), gets xdp_pass (XDP turns vmx's copy-out off: the
# page_pool pages, each bounced, go up the stack) and a TCP listener that
# never reads, with a 64 MB receive buffer. The peer fills it: every page
# held in that socket holds its bounce slots (a page: two slots, page
# aligned), and DUT2 refills its ring with new ones until no such pair is
# left. Then the DUT sends TCP with TSO for 5 s: its GSO frames carry
# frags of up to 32 KB (TCP's page frags), each one mapping of 16
# contiguous slots, and the pool has fewer than 16 free (io_tlb_used,
# read before and after): those mappings must fail, and the DUT must
# count them (txN_map_errors, txN_drop), at least one, and at least as
# many as the swiotlb code's "swiotlb buffer is full" lines under the
# DUT's name (rate-limited, 10 per 5 s shared with DUT2's refill timer,
# which retries every 10 ms: not a count to rely on). The check fails
# when 16 slots or more were free: the situation it is about did not
# happen. swiotlb4k: the hog held 4094 and 4096 of the 4096 slots; the
# DUT counted 865 and 32 failures, with no line under its name in the
# second run; a driver that did not count them showed +0.
HOG_NS=vmxhog
HOG_IP=10.99.0.3
hx() { ip netns exec "$HOG_NS" "$@"; }
# _hog_full: the pool's use stopped growing (2 s) or it is full.
_hog_full() {
	local u
	u=$(swt_used) || return 1
	[ "$u" -ge "$SWT_SLABS" ] && return 0
	[ "$u" = "${_hog_last:-}" ] && return 0
	_hog_last=$u
	sleep 2
	return 1
}
hog_start() {
	[ -r "$SWT/io_tlb_used" ] || { echo "no $SWT (debugfs)"; return 1; }
	read -r SWT_SLABS < "$SWT/io_tlb_nslabs"
	ip netns add "$HOG_NS" || return 1
	ip link set "$DUT2" netns "$HOG_NS" || return 1
	hx ip link set lo up
	hx ip addr add "$HOG_IP/24" dev "$DUT2" || return 1
	# the program first: attached to an open DUT2 it would want a new
	# set of rings, which the pool DUT2's open leaves cannot hold; the
	# open fits the rings of the XDP layout to the pool
	hx ip link set dev "$DUT2" xdpdrv obj "$VMX_LIB_DIR/progs/xdp_pass.o" sec xdp || return 1
	hx ip link set "$DUT2" up || return 1
	sink_start "$VMX_TMP/hog.rx" 5400 "$HOG_NS" || return 1
	HOG_RX=$SINK_PID
	ip netns exec "$PEER_NS" timeout 300 socat -u /dev/zero "TCP:$HOG_IP:5400" > "$VMX_TMP/hog.tx" 2>&1 &
	HOG_TX=$!
	_vmx_bg+=("$HOG_TX")
	_hog_last=
	wait_for "$(scaled 60)" _hog_full
	echo "bounce pool: $(swt_used) of $SWT_SLABS slots in use; DUT2 $(hx ethtool -S "$DUT2" | grep -E ' (rx[0-9]+_xdp_pass|resets):' | tr -s ' ' | tr '\n' ' ')"
}
HOG_RX=
HOG_TX=
hog_stop() {
	[ -z "$HOG_TX$HOG_RX" ] || { kill $HOG_TX $HOG_RX; wait $HOG_TX $HOG_RX; } 2>/dev/null
	# down, not a detach: the stack's buffer layout would want mappings
	# before the XDP one's are freed; closing frees them all. DUT2 goes
	# back to this netns with the netns, the program still attached.
	hx ip link set "$DUT2" down
	ip netns del "$HOG_NS"
	wait_for 20 test -e "/sys/class/net/$DUT2"
	echo "hog stopped: bounce pool $(swt_used) of $SWT_SLABS slots in use"
}
# dut_full_msgs: "swiotlb buffer is full" lines under the DUT's PCI name.
dut_full_msgs() {
	local bdf
	bdf=$(basename "$(readlink "/sys/class/net/$DUT/device")")
	dmesg_since_start | grep -c -F "$bdf: swiotlb buffer is full"
}
forced_fails() {
	local m0 m1 n0 n1 u0 u1 free rc=0 lpid
	hog_start || rc=1
	if [ $rc = 0 ]; then
		# past the rate limit's 5 s window of DUT2's first burst
		sleep 6
		# TX alone: the DUT's RX refills fail too with the pool full
		# (rx-alloc-fail), which would hide TX failures left uncounted
		m0=$(estat "$DUT" "$MAPERR"); n0=$(dut_full_msgs); u0=$(swt_used)
		ip netns exec "$PEER_NS" timeout 20 socat -u TCP-LISTEN:5390,reuseaddr /dev/null &
		lpid=$!
		wait_for 10 _port_listening peer 5390
		timeout 5 socat -u "OPEN:$BLOB" "TCP:$PEER_IP:5390" 2>/dev/null
		kill "$lpid" 2>/dev/null; wait "$lpid" 2>/dev/null
		m1=$(estat "$DUT" "$MAPERR"); n1=$(dut_full_msgs); u1=$(swt_used)
		free=$((SWT_SLABS - (u0 < u1 ? u0 : u1)))
		echo "DUT's transfer: pool $u0 -> $u1 of $SWT_SLABS slots in use; 'swiotlb buffer is full' under its name +$((n1 - n0)) (rate-limited); TX mapping failures counted +$((m1 - m0))"
		if [ "$free" -ge 16 ]; then
			echo "$free slots free: a 32 KB frag fits, the pool was not exhausted: the check did not run"
			rc=1
		elif [ $((m1 - m0)) = 0 ] || [ $((m1 - m0)) -lt $((n1 - n0)) ]; then
			echo "mapping failures happened but the DUT counted fewer"
			rc=1
		fi
	fi
	hog_stop
	return $rc
}
if [ -n "$DUT2" ] && [ "$VMX_DRIVER_NAME" = vmx ]; then
	check "bounce pool exhausted on purpose: every frame the DUT lost counted as a mapping failure" forced_fails
fi
check "ping after the transfers (no stall)" dut_ping -c 5 -i 0.2 "$PEER_IP"
ethtool -S "$DUT" | grep -E '_drop:|map|resets:|nobuf|alloc_fail' | diag

vmx_done
