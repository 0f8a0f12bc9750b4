#!/usr/bin/env bash
# xdp_frags.sh - multi-buffer XDP at MTU 9000 (DUT and peer): frames that
# span ring 0 and ring 1 reach a program loaded with frags support
# (progs/xdp_mb.c, SEC("xdp.frags")) whole, as multi-buffer xdp_buffs:
#  - xdp_features (netdev dev-get) has rx-sg and ndo-xmit-sg;
#  - a program without frags support is still refused above the
#    single-buffer MTU (attach at 9000, replacing a frags program at 9000),
#    with a message, and traffic goes on;
#  - XDP_PASS: 8000-byte pings, UDP datagrams up to 9014-byte frames
#    byte-exact at a socket, TCP both ways byte-exact (socat, sha256);
#  - XDP_DROP and XDP_TX (frames of 60..9014 bytes back at the peer
#    exact), counted exactly in rxN_xdp_drop / rxN_xdp_tx;
#  - bpf_xdp_get_buff_len = the frame length (a map per length), the
#    linear part shorter than the frame above 4 KB;
#  - bpf_xdp_load_bytes/store_bytes across the head/fragment boundaries;
#  - bpf_xdp_adjust_tail shrinking (within the last fragment, past it and
#    past every fragment) and growing (into the last fragment's page; a
#    grow beyond the page aborts), then XDP_TX or XDP_PASS;
#  - REDIRECT to a devmap (vmx NIC 2 sends the big frames) and a cpumap;
#  - LRO stays off while the frags program is attached.
# The frames come from xdp_mb.py (raw socket in the peer netns) and are
# checked there or by a UDP socket on the DUT.
#
# Topology: tools/vm.sh --nic vmxnet3 --nic vmxnet3 --nic virtio (groups
# xdp, core61).
# vmx-timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

MB=$VMX_LIB_DIR/xdp_mb.py
NLDEV=$VMX_LIB_DIR/nldev.py
MTU=9000
# progs/mb_common.h
PORT_MB_DROP=7791 PORT_MB_TX=7792 PORT_MB_LEN=7793 PORT_MB_BYTES=7794
PORT_MB_TAIL=7795 PORT_MB_REDIRECT=7796 PORT_MB_CPUMAP=7797
PORT_MB_TAIL_PASS=7798 PORT_PASS=7799
# frame sizes: one buffer, around the end of a ring-0 buffer, two and
# three buffers, the largest at MTU 9000
SIZES=60,1514,3000,3500,3600,4000,5000,7000,8000,9014
BIG=3600,5000,8000,9014
# load/store_bytes: frames that hold the 100 bytes around L (1514 and 3500
# are one buffer: only L is written)
BYTES=1514,3500,3600,4000,5000,7000,8000,9014

xdp_setup
DUT_MAC=$(mac_of "$DUT")
ping_ok() { peer_ping -c 3 -i 0.1 "$DUT_IP"; }
ping_big() { peer_ping -c 5 -i 0.1 -s 8000 "$DUT_IP"; }

# nbig SIZES COUNT [LEN]: how many of COUNT frames cycling over SIZES are
# longer than LEN bytes (default 4096: such a frame cannot be one buffer).
nbig() {
	local s=() i n=0
	IFS=, read -r -a s <<<"$1"
	for ((i = 0; i < $2; i++)); do
		[ "${s[i % ${#s[@]}]}" -le "${3:-4096}" ] || n=$((n + 1))
	done
	echo "$n"
}
# The longest frame one ring-0 buffer holds: the single-buffer MTU limit
# the driver names when it refuses a non-frags program (below) plus the
# Ethernet header and a VLAN tag. Longer frames are multi-buffer.
HEAD=
# frags_counted BEFORE AFTER SIZES COUNT: rxN_xdp_frags (where the driver
# has it) grew by the number of frames longer than HEAD, or, HEAD unknown,
# by at least those above 4 KB and at most COUNT.
frags_counted() {
	local f
	has_frags_stat || return 0
	f=$(sdelta "$1" "$2" 'rx[0-9]+_xdp_frags')
	if [ -n "$HEAD" ]; then
		echo "rxN_xdp_frags +$f: $(nbig "$3" "$4" "$HEAD") of the frames are longer than $HEAD bytes"
		[ "$f" = "$(nbig "$3" "$4" "$HEAD")" ]
	else
		echo "rxN_xdp_frags +$f: $(nbig "$3" "$4") of $4 frames are longer than 4096 bytes"
		[ "$f" -ge "$(nbig "$3" "$4")" ] && [ "$f" -le "$4" ]
	fi
}
has_frags_stat() { ethtool -S "$DUT" | grep -qE '^ *rx[0-9]+_xdp_frags:'; }

check "MTU $MTU on $DUT and the peer" set_mtu_both $MTU
check "no program: 8000-byte pings" ping_big

# ------------------------------------------------ xdp_features
xdp_features_sg() {
	local out
	out=$(python3 "$NLDEV" "$(cat "/sys/class/net/$DUT/ifindex")") || { echo "$out"; return 1; }
	echo "$out"
	grep -q '^xdp-features .*rx-sg' <<<"$out" || { echo "no rx-sg"; return 1; }
	grep -q '^xdp-features .*ndo-xmit-sg' <<<"$out" || { echo "no ndo-xmit-sg"; return 1; }
}
if python3 "$NLDEV" 1 >/dev/null 2>&1; then
	check "netdev dev-get: xdp-features has rx-sg and ndo-xmit-sg" xdp_features_sg
else
	skip "netdev dev-get: xdp-features rx-sg, ndo-xmit-sg" \
		"no netdev netlink dev-get in kernel $(uname -r) (6.3+)"
fi

# ------------------------------------------------ refusals
# nonfrags_refused: xdp_pass (no frags support) at MTU 9000 is refused
# with a message naming the MTU; nothing attached afterwards.
nonfrags_refused() {
	local out
	if out=$(xdp_attach "$DUT" xdp_pass 2>&1); then
		echo "$out"; echo "xdp_pass attached at MTU $MTU"; xdp_detach "$DUT"; return 1
	fi
	echo "$out"
	grep -qi mtu <<<"$out" || { echo "no MTU message"; return 1; }
	HEAD=$(sed -n 's/.*at most \([0-9][0-9]*\).*/\1/p' <<<"$out")
	[ -z "$HEAD" ] || HEAD=$((HEAD + 18))
	xdp_none "$DUT"
}
check "non-frags program refused at MTU $MTU with a message" nonfrags_refused
check "8000-byte pings after the refusal" ping_big

mb_attach() {
	local out
	out=$(xdp_attach "$DUT" xdp_mb xdp.frags 2>&1) || { echo "$out"; return 1; }
	xdp_native "$DUT" xdp_mb
}
if ! check "frags program xdp_mb attached natively at MTU $MTU" mb_attach; then
	log "without the frags program nothing below can work"
fi
MBID=$(xdp_prog_id "$DUT")

replace_refused() {
	local out
	[ "$MBID" != 0 ] || { echo "xdp_mb is not attached"; return 1; }
	if out=$(xdp_replace "$DUT" xdp_pass 2>&1); then
		echo "$out"; echo "xdp_pass replaced xdp_mb at MTU $MTU"; return 1
	fi
	echo "$out"
	grep -qi mtu <<<"$out" || { echo "no MTU message"; return 1; }
	echo "program id $MBID -> $(xdp_prog_id "$DUT")"
	[ "$(xdp_prog_id "$DUT")" = "$MBID" ]
}
check "replacing it by a non-frags program at MTU $MTU refused, xdp_mb kept" replace_refused

# ------------------------------------------------ LRO
lro_off() {
	local s
	ethtool -K "$DUT" lro on 2>&1
	s=$(ethtool -k "$DUT" | sed -n 's/^large-receive-offload: //p')
	echo "large-receive-offload: $s (ethtool -K lro on while attached)"
	[ "${s%% *}" = off ]
}
# the driver keeps LRO off while the program is attached, still listed as
# changeable; fixed or not listed only where the device took LRO away
lro_offered "$(ethtool -k "$DUT" | sed -n 's/^large-receive-offload: //p')" \
	"LRO off while the frags program is attached" &&
	check "LRO stays off while the frags program is attached" lro_off

# ------------------------------------------------ XDP_PASS
pass_ping() {
	local p0 p1 f0 f1 r0 r1
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass'); f0=$(estat "$DUT" 'rx[0-9]+_xdp_frags')
	r0=$(prog_run_cnt "$MBID")
	peer_ping -c 10 -i 0.1 -s 8000 "$DUT_IP" || return 1
	dut_ping -c 10 -i 0.1 -s 8000 "$PEER_IP" || return 1
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass'); f1=$(estat "$DUT" 'rx[0-9]+_xdp_frags')
	r1=$(prog_run_cnt "$MBID")
	echo "rxN_xdp_pass +$((p1 - p0)), rxN_xdp_frags +$((f1 - f0)), xdp_mb run_cnt +$((r1 - r0))"
	[ $((p1 - p0)) -ge 20 ] && [ $((r1 - r0)) -ge 20 ] || return 1
	if has_frags_stat && [ $((f1 - f0)) -lt 20 ]; then
		echo "rxN_xdp_frags: want at least 20 (the 8000-byte echo requests and replies)"; return 1
	fi
}
check "XDP_PASS: 8000-byte pings both ways, counted" pass_ping

# udp_recv PORT COUNT SIZES [DELTA]: the peer sends COUNT frames to PORT
# (xdp_mb.py send), a socket on the DUT gets them all exact (recv).
udp_recv() {
	local port=$1 n=$2 sizes=$3 d=${4:-0} rpid rc=0
	listen_start "$VMX_TMP/mbrecv" listening python3 "$MB" recv "$DUT_IP" "$port" --sizes "$sizes" \
		--count "$n" --delta "$d" --timeout "$(scaled 5)" || return 1
	rpid=$LISTEN_PID
	pexec python3 "$MB" send "$PEER" "$DUT_MAC" "$DUT_IP" "$port" --sizes "$sizes" \
		--count "$n" --delta "$d" || rc=1
	wait "$rpid" || rc=1
	grep -v '^listening' "$VMX_TMP/mbrecv"
	return $rc
}
# passed N CMD...: CMD passes and rxN_xdp_pass grew by N or more (the
# frames went through the program).
passed() {
	local p0 p1
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	"${@:2}" || return 1
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	echo "rxN_xdp_pass +$((p1 - p0))"
	[ $((p1 - p0)) -ge "$1" ]
}
check "XDP_PASS: UDP datagrams in frames of $SIZES bytes exact at a socket" \
	passed 20 udp_recv $PORT_PASS 20 $SIZES
# 8 MB in frames of 9000 bytes: over 900 frames in; the ACKs back: fewer
# (stretch ACKs after the peer's GRO: 178 seen), 50 is plenty
check "XDP_PASS: TCP peer -> DUT at MTU $MTU, 8 MB byte-identical" passed 900 tcp_exact in 8 5301
check "XDP_PASS: TCP DUT -> peer at MTU $MTU (ACKs through XDP), byte-identical" \
	passed 50 tcp_exact out 8 5302

# ------------------------------------------------ XDP_DROP
drop_count() {
	local n=20 s0=$VMX_TMP/d0 s1=$VMX_TMP/d1 d
	snap "$DUT" >"$s0"
	pexec python3 "$MB" send "$PEER" "$DUT_MAC" "$DUT_IP" $PORT_MB_DROP --sizes $SIZES --count $n || return 1
	sleep 0.5
	snap "$DUT" >"$s1"
	d=$(sdelta "$s0" "$s1" 'rx[0-9]+_xdp_drop')
	echo "rxN_xdp_drop +$d, rxN_xdp_packets +$(sdelta "$s0" "$s1" 'rx[0-9]+_xdp_packets')"
	[ "$d" = $n ] || { echo "rxN_xdp_drop: want +$n"; return 1; }
	[ "$(sdelta "$s0" "$s1" 'rx[0-9]+_xdp_packets')" -ge $n ] || return 1
	frags_counted "$s0" "$s1" $SIZES $n
}
check "XDP_DROP: 20 frames of 60..9014 bytes, rxN_xdp_drop +20" drop_count

# ------------------------------------------------ XDP_TX
# mb_bounce PORT MODE SIZES COUNT [DELTA]: xdp_mb.py bounce from the peer.
mb_bounce() {
	pexec python3 "$MB" bounce "$PEER" "$DUT_MAC" "$DUT_IP" "$1" "$2" --sizes "$3" \
		--count "$4" --delta "${5:-0}"
}
# tx_count PORT MODE SIZES COUNT [DELTA]: mb_bounce passes; rxN_xdp_tx
# counts exactly COUNT, no TX errors, the TX queues sent them.
tx_count() {
	local t e q rc=0
	snap "$DUT" >"$VMX_TMP/t0"
	mb_bounce "$@" || rc=1
	sleep 0.3
	snap "$DUT" >"$VMX_TMP/t1"
	t=$(sdelta "$VMX_TMP/t0" "$VMX_TMP/t1" 'rx[0-9]+_xdp_tx')
	e=$(sdelta "$VMX_TMP/t0" "$VMX_TMP/t1" 'rx[0-9]+_xdp_tx_errors')
	q=$(sdelta "$VMX_TMP/t0" "$VMX_TMP/t1" '(xdp)?tx[0-9]+_packets')
	echo "rxN_xdp_tx +$t, rxN_xdp_tx_errors +$e, TX queue packets +$q," \
	     "rxN_xdp_aborted +$(sdelta "$VMX_TMP/t0" "$VMX_TMP/t1" 'rx[0-9]+_xdp_aborted')"
	[ "$t" = "$4" ] || { echo "rxN_xdp_tx: want +$4"; rc=1; }
	[ "$e" = 0 ] && [ "$q" -ge "$4" ] || rc=1
	frags_counted "$VMX_TMP/t0" "$VMX_TMP/t1" "$3" "$4" || rc=1
	return $rc
}
check "XDP_TX: 30 frames of 60..9014 bytes back at the peer exact" \
	tx_count $PORT_MB_TX swap $SIZES 30

# ------------------------------------------------ bpf_xdp_get_buff_len
LENMAP=$(prog_map_id "$MBID" hash)
buff_len() {
	local n=3
	pexec python3 "$MB" send "$PEER" "$DUT_MAC" "$DUT_IP" $PORT_MB_LEN --sizes $SIZES \
		--count $((n * 10)) || return 1
	sleep 0.5
	bpftool map dump id "$LENMAP" -j | python3 -c '
import json, sys
want = {int(s): int(sys.argv[2]) for s in sys.argv[1].split(",")}
got = {}
for e in json.load(sys.stdin):
    k = e.get("formatted", {}).get("key", e["key"])
    v = e.get("formatted", {}).get("value", e["value"])
    if isinstance(k, list):
        k = int.from_bytes(bytes(int(x, 0) for x in k), "little")
    if isinstance(v, list):
        b = bytes(int(x, 0) for x in v)
        v = dict(zip(("frames", "linear", "mismatch"),
                     (int.from_bytes(b[i:i + 8], "little") for i in (0, 8, 16))))
    got[k] = v
ok = True
for k in sorted(set(want) | set(got)):
    v = got.get(k, {"frames": 0, "linear": 0, "mismatch": 0})
    print("buff_len %5d: %d frames (want %d), linear part %d, length mismatches %d" %
          (k, v["frames"], want.get(k, 0), v["linear"], v["mismatch"]))
    if v["frames"] != want.get(k, 0) or v["mismatch"]:
        ok = False
    if k > 4096 and v["linear"] >= k:
        print("  a %d-byte frame in one buffer?" % k)
        ok = False
sys.exit(0 if ok else 1)' "$SIZES" $n
}
if [ -n "$LENMAP" ]; then
	check "bpf_xdp_get_buff_len = frame length for 60..9014 bytes, linear part < length above 4 KB" buff_len
else
	fail "bpf_xdp_get_buff_len per length" "no hash map in program $MBID"
fi

# ------------------------------------------------ load/store bytes
check "bpf_xdp_load/store_bytes: 100 bytes inverted across each buffer boundary, XDP_TX exact" \
	tx_count $PORT_MB_BYTES bytes $BYTES 16

# ------------------------------------------------ adjust_tail
# 3600-byte frames are always two buffers (above the single-buffer MTU
# VMX_XDP_MAX_MTU), with a short fragment that -1000 frees entirely; -5000
# frees every fragment of 8000 and 9014 bytes and cuts the linear part.
# Grown frames up to the MTU's (9000 + 18 bytes) go out; 9014-byte ones
# grown by 24 or 1000 would be longer: refused below.
for t in -10:$BIG -1000:$BIG -5000:8000,9014 24:3600,5000,8000 1000:3600,5000,8000; do
	check "bpf_xdp_adjust_tail ${t%%:*} on frames of ${t#*:} bytes, XDP_TX exact" \
		tx_count $PORT_MB_TAIL tail "${t#*:}" 8 "${t%%:*}"
done
# past_mtu DELTA: 9014-byte frames grown by DELTA: XDP_TX refused (a frame
# longer than the MTU allows never reaches the device: the test device's
# strict check tx-oversize sees anything above 9234 bytes), each counted in
# rxN_xdp_tx_errors, none back at the peer.
past_mtu() {
	local e0 e1
	e0=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	mb_bounce $PORT_MB_TAIL none 9014 6 "$1" || return 1
	# a loaded DUT may run the program after the peer's 1.5 s window
	wait_for "$(scaled 10)" above $((e0 + 5)) estat "$DUT" 'rx[0-9]+_xdp_tx_errors'
	e1=$(estat "$DUT" 'rx[0-9]+_xdp_tx_errors')
	echo "rxN_xdp_tx_errors +$((e1 - e0))"
	[ $((e1 - e0)) = 6 ]
}
check "bpf_xdp_adjust_tail +24 past the MTU: XDP_TX refused, counted, nothing sent" past_mtu 24
check "bpf_xdp_adjust_tail +1000 past the MTU: XDP_TX refused, counted, nothing sent" past_mtu 1000
overgrow() {
	local a0 a1
	a0=$(estat "$DUT" 'rx[0-9]+_xdp_aborted')
	mb_bounce $PORT_MB_TAIL none 5000,8000,9014 6 4096 || return 1
	a1=$(estat "$DUT" 'rx[0-9]+_xdp_aborted')
	echo "rxN_xdp_aborted +$((a1 - a0))"
	[ $((a1 - a0)) = 6 ]
}
check "bpf_xdp_adjust_tail +4096 (beyond the last fragment's page) fails: aborted, nothing sent" overgrow
for d in -10 -3000 24 1000; do
	check "bpf_xdp_adjust_tail $d then XDP_PASS: UDP datagrams of $BIG bytes changed exactly" \
		udp_recv $PORT_MB_TAIL_PASS 8 $BIG $d
done

# ------------------------------------------------ redirect
# devmap_redirect SIZES N: N frames cycling over SIZES redirected to DUT2
# come back to the peer exact, sent by DUT2 alone.
devmap_redirect() {
	local map n=$2 rc=0 s10=$VMX_TMP/r10 s11=$VMX_TMP/r11 s20=$VMX_TMP/r20 s21=$VMX_TMP/r21
	map=$(prog_map_id "$MBID" devmap) || { echo "no devmap in xdp_mb"; return 1; }
	# shellcheck disable=SC2046 # u32_le prints four words
	bpftool map update id "$map" key $(u32_le 0) value $(u32_le "$(cat "/sys/class/net/$DUT2/ifindex")") || return 1
	snap "$DUT" >"$s10"; snap "$DUT2" >"$s20"
	mb_bounce $PORT_MB_REDIRECT "${3:-swap}" "$1" "$n" || rc=1
	sleep 0.3
	snap "$DUT" >"$s11"; snap "$DUT2" >"$s21"
	RD=$(sdelta "$s10" "$s11" 'rx[0-9]+_xdp_redirect') RE=$(sdelta "$s10" "$s11" 'rx[0-9]+_xdp_redirect_errors')
	XM=$(sdelta "$s20" "$s21" 'xdptx[0-9]+_xdp_xmit')
	echo "$DUT rxN_xdp_redirect +$RD errors +$RE; $DUT2 xdptxN_xdp_xmit +$XM" \
	     "errors +$(sdelta "$s20" "$s21" 'xdptx[0-9]+_xdp_xmit_errors')"
	[ "$(sdelta "$s20" "$s21" 'xdptx[0-9]+_xdp_xmit_errors')" = 0 ] || rc=1
	[ "$(sdelta "$s10" "$s11" 'xdptx[0-9]+_xdp_xmit|rx[0-9]+_xdp_tx')" = 0 ] ||
		{ echo "$DUT sent frames itself"; rc=1; }
	[ -z "${3:-}" ] || return $rc
	[ "$RD" = "$n" ] || { echo "want $n redirects"; rc=1; }
	[ "$XM" = "$n" ] || { echo "want $n xdp_xmit on $DUT2"; rc=1; }
	return $rc
}
# devmap_refused SIZES N: the kernel refuses to redirect them (counted as
# redirect errors), nothing is sent.
devmap_refused() {
	devmap_redirect "$1" "$2" none || return 1
	[ "$RE" = "$2" ] && [ "$RD" = 0 ] && [ "$XM" = 0 ]
}
ONEBUF=60,1514,3000,3500
if [ -z "$DUT2" ]; then
	skip "devmap redirect of multi-buffer frames" "needs a second vmxnet3 NIC"
elif ! ip link set "$DUT2" mtu $MTU up || ! wait_carrier "$DUT2" 10 >/dev/null; then
	fail "devmap redirect of multi-buffer frames" "$DUT2 not up at MTU $MTU"
elif kernel_at_least 6 3; then
	check "devmap redirect $DUT -> $DUT2 of 60..9014-byte frames: back at the peer exact, sent by $DUT2" \
		devmap_redirect $SIZES 12
else
	# 6.1's xdp_do_redirect refuses multi-buffer frames for every map
	# but a cpumap (-EOPNOTSUPP); 6.3 lets devmap check the target's
	# NDO_XMIT_SG instead
	check "devmap redirect $DUT -> $DUT2 of one-buffer frames: back at the peer exact, sent by $DUT2" \
		devmap_redirect $ONEBUF 8
	check "devmap redirect of multi-buffer frames refused by kernel $(uname -r): redirect errors, nothing sent" \
		devmap_refused $BIG 8
	skip "devmap redirect of multi-buffer frames" \
		"kernel $(uname -r) redirects multi-buffer frames to a cpumap only (devmap: 6.3+)"
fi
[ -z "$DUT2" ] || ip link set "$DUT2" down

cpumap_redirect() {
	local map n=20 r0 r1
	map=$(prog_map_id "$MBID" cpumap) || { echo "no cpumap in xdp_mb"; return 1; }
	# shellcheck disable=SC2046 # u32_le prints four words
	bpftool map update id "$map" key $(u32_le 0) value $(u32_le 256) || return 1
	r0=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	udp_recv $PORT_MB_CPUMAP $n $SIZES || return 1
	r1=$(estat "$DUT" 'rx[0-9]+_xdp_redirect')
	echo "rxN_xdp_redirect +$((r1 - r0))"
	[ $((r1 - r0)) = $n ]
}
check "cpumap redirect of 60..9014-byte frames: UDP datagrams exact at a socket" cpumap_redirect

check "8000-byte pings with xdp_mb still attached" ping_big
check "xdp_mb detached" xdp_detach "$DUT"
check "8000-byte pings after detach" ping_big

# frags program attached at MTU 1500, then the MTU raised to 9000
raise_mtu() {
	set_mtu_both 1500 || return 1
	xdp_attach "$DUT" xdp_mb xdp.frags || return 1
	set_mtu_both $MTU || { echo "MTU $MTU refused with xdp_mb attached"; return 1; }
	xdp_native "$DUT" xdp_mb && ping_big
}
check "xdp_mb at MTU 1500, MTU raised to $MTU: accepted, 8000-byte pings pass" raise_mtu
xdp_detach "$DUT" 2>/dev/null
set_mtu_both 1500 >/dev/null
check "ping at MTU 1500 after everything" ping_ok
check_pp_settled "no page_pool left with pages in flight"
check "no page_pool or XDP warning in the kernel log" dmesg_xdp_clean

log "runtime ${SECONDS}s"
vmx_done
