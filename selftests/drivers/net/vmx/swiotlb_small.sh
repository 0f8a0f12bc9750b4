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
# "Name value" per line.
peer_snmp() {
	pexec cat /proc/net/snmp | awk '
		/^(Ip|Tcp|Udp):/ { if (!($1 in h)) { h[$1] = $0; next }
			n = split(h[$1], k); split($0, v)
			for (i = 2; i <= n; i++) print substr($1, 1, length($1) - 1) k[i], v[i] }' |
		grep -E '^(IpInHdrErrors|IpInAddrErrors|IpReasmFails|IpInDiscards|TcpInCsumErrors|TcpInErrs|UdpInCsumErrors|UdpInErrors) '
	for f in rx_errors rx_length_errors rx_crc_errors rx_frame_errors; do
		echo "link_$f $(peer_link_stat $f)"
	done
}

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
	m0=$(map_fails); f0=$(full_msgs)
	bulk "${dirs[@]}" || rc=1
	peer_snmp > "$VMX_TMP/snmp1"
	m1=$(map_fails); f1=$(full_msgs)
	s0=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" '.*')
	echo "DUT mapping failures counted (txN_drop/map errors, qstats rx-alloc-fail): +$((m1 - m0)); 'swiotlb buffer is full' from $VMX_DRIVER_NAME: +$((f1 - f0)) (rate-limited)"
	awk 'FNR == NR { b[$1] = $2; next } $2 != b[$1] { print "peer " $1 " +" $2 - b[$1] }' \
		"$VMX_TMP/snmp0" "$VMX_TMP/snmp1"
	s1=$(sdelta "$VMX_TMP/snmp0" "$VMX_TMP/snmp1" 'IpInDiscards')
	[ $((s0 - s1)) = 0 ] || { echo "the peer received frames that were not sent (errors above)"; rc=1; }
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
check "ping after the transfers (no stall)" dut_ping -c 5 -i 0.2 "$PEER_IP"
ethtool -S "$DUT" | grep -E '_drop:|map|resets:|nobuf|alloc_fail' | diag

vmx_done
