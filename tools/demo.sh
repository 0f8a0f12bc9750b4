#!/usr/bin/env bash
# demo.sh - `make demo`, the main job: install what is missing, build
# vmx.ko and the XDP test programs, boot one 6.12 guest (one vmxnet3 NIC for
# vmx, one virtio-net peer in a netns, on a private QEMU hub), load vmx, show
# ethtool -i, attach an XDP program with "ip link set dev X xdp obj ...",
# then pktgen traffic from the peer against xdp-bench drop, tx and
# redirect-cpu -c 0 -r drop (a few seconds each, rates printed), a short
# iperf3 TCP run, and a compact summary. A few minutes under TCG.
#
# Usage: tools/demo.sh            (as root, from anywhere in the tree)
# Env:   DEMO_SECS   seconds of traffic per xdp-bench run (default 3)
#        SKIP_SETUP=1 / SKIP_BUILD=1   skip tools/setup.sh / make
#
# Inside the guest the same script runs with --guest. Only one guest of
# this machine's users runs at a time: the boot waits on /tmp/vmx-guest.lock.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROGS=$TOP/selftests/drivers/net/vmx/progs
DUT_IP=10.99.0.1
PEER_IP=10.99.0.2
NS=peer

# ================================================================= guest
if [ "${1:-}" = --guest ]; then
	SECS=${DEMO_SECS:-3}
	OUT=$TOP/.cache/demo
	SUM=$OUT/summary.txt
	mkdir -p "$OUT"
	: >"$SUM"
	step() { printf '\n=== %s\n' "$*"; }
	die() { echo "demo: $*" >&2; echo "FAILED: $*" >>"$SUM"; exit 1; }
	sum() { printf '%-22s %s\n' "$1" "$2" | tee -a "$SUM"; }
	pexec() { ip netns exec "$NS" "$@"; }
	byd() {
		local n d
		for n in /sys/class/net/*; do
			[ -e "$n/device/driver" ] || continue
			d=$(basename "$(readlink "$n/device/driver")")
			[ "$d" = "$1" ] && basename "$n"
		done
	}
	# counter NAME-REGEX: sum of the matching ethtool -S counters of DUT
	counter() {
		ethtool -S "$DUT" | awk -v re="^($1)$" '
			{ n = $1; sub(":$", "", n) } n ~ re { s += $2 } END { printf "%d\n", s }'
	}
	pg() { pexec sh -c "echo '$2' > /proc/net/pktgen/$1"; }
	xdp_mode() {
		ip link show dev "$DUT" | head -n1 | grep -o -E ' xdp(generic|offload)? ' | tr -d ' '
	}

	step "kernel $(uname -r), $(nproc) vCPUs"
	modprobe virtio_net || die "virtio_net"
	for dep in $(modinfo -F depends "$TOP/vmx.ko" | tr ',' ' '); do
		modprobe "$dep" || die "modprobe $dep"
	done
	insmod "$TOP/vmx.ko" || die "insmod vmx.ko"
	for _ in $(seq 50); do
		DUT=$(byd vmx | head -n1); PEER=$(byd virtio_net | head -n1)
		[ -n "$DUT" ] && [ -n "$PEER" ] && break
		sleep 0.1
	done
	[ -n "$DUT" ] || die "no interface bound to vmx"
	[ -n "$PEER" ] || die "no virtio-net peer"
	echo "DUT $DUT (vmx), peer $PEER (virtio_net) in netns $NS"
	ip netns add "$NS"
	ip link set "$PEER" netns "$NS"
	for _ in $(seq 50); do pexec test -e "/sys/class/net/$PEER" && break; sleep 0.1; done
	pexec ip link set lo up
	pexec ip addr add "$PEER_IP/24" dev "$PEER"
	pexec ip link set "$PEER" up
	ip addr add "$DUT_IP/24" dev "$DUT"
	ip link set "$DUT" up
	for _ in $(seq 100); do [ "$(cat "/sys/class/net/$DUT/carrier")" = 1 ] && break; sleep 0.1; done
	ping -c 2 -W 2 "$PEER_IP" >/dev/null || die "no ping between $DUT and the peer"

	step "ethtool -i $DUT"
	ethtool -i "$DUT"
	sum "driver" "$(ethtool -i "$DUT" | awk -F': ' '/^driver/ {print $2}') ($(ethtool -i "$DUT" | awk -F': ' '/^firmware/ {print $2}'), $(uname -r))"

	step "ip link set dev $DUT xdp obj xdp_pass.o sec xdp"
	ip link set dev "$DUT" xdp obj "$PROGS/xdp_pass.o" sec xdp || die "XDP attach failed"
	ip -d link show dev "$DUT" | grep -E "^[0-9]+:|prog/xdp" | sed 's/ *link\/ether.*//'
	mode=$(xdp_mode)
	p0=$(counter 'rx[0-9]+_xdp_pass')
	pexec ping -c 10 -i 0.05 -q "$DUT_IP" | tail -n 2
	p1=$(counter 'rx[0-9]+_xdp_pass')
	echo "ethtool -S: rxN_xdp_pass +$((p1 - p0))"
	[ "$mode" = xdp ] || die "program not attached in native mode ($mode)"
	[ $((p1 - p0)) -ge 10 ] || die "ping did not go through the program"
	sum "XDP attach" "native (ip shows 'xdp'), ping through xdp_pass: rxN_xdp_pass +$((p1 - p0))"
	ip link set dev "$DUT" xdp off

	step "pktgen in the peer netns: 60-byte UDP to $DUT ($(cat "/sys/class/net/$DUT/address"))"
	modprobe pktgen || die "pktgen"
	for t in $(pexec sh -c 'ls /proc/net/pktgen' | grep kpktgend_); do pg "$t" rem_device_all; done
	pg kpktgend_0 "add_device $PEER"
	for c in "count 20000000" "pkt_size 60" "delay 0" "burst 8" "dst $DUT_IP" \
		 "dst_mac $(cat "/sys/class/net/$DUT/address")"; do
		pg "$PEER" "$c" || die "pktgen: $c"
	done

	# bench NAME COUNTER ARGS...: xdp-bench ARGS while pktgen sends SECS s
	bench() {
		local name=$1 ctr=$2 pid pgpid c0 c1 t0 t1 sent peak
		shift 2
		step "xdp-bench $* ($SECS s of pktgen traffic)"
		timeout -s INT 120 xdp-bench "$@" -i 1 >"$OUT/bench.out" 2>&1 &
		pid=$!
		for _ in $(seq 200); do [ "$(xdp_mode)" = xdp ] && break; sleep 0.1; done
		[ "$(xdp_mode)" = xdp ] || { kill -INT $pid; wait $pid; cat "$OUT/bench.out"; die "xdp-bench $* did not attach"; }
		c0=$(counter "$ctr"); t0=$(date +%s%N)
		pexec sh -c 'echo start > /proc/net/pktgen/pgctrl' &
		pgpid=$!
		sleep "$SECS"
		pg pgctrl stop; wait $pgpid; sleep 0.5
		c1=$(counter "$ctr"); t1=$(date +%s%N)
		kill -INT $pid; wait $pid
		sent=$(pexec awk '/pkts-sofar:/ {print $2}' "/proc/net/pktgen/$PEER")
		grep -v '^ *$' "$OUT/bench.out"
		peak=$(grep -oE "[0-9][0-9,]* rx/s" "$OUT/bench.out" | tr -d , | sort -n | tail -n1)
		[ -n "$peak" ] && [ "${peak%% *}" -gt 0 ] || die "xdp-bench $*: no rate"
		sum "$name" "${peak%% *} rx/s peak; driver ${ctr#*_} +$((c1 - c0)) of $sent sent ($(( (c1 - c0) * 1000 / ((t1 - t0) / 1000000) )) pps avg)"
	}
	bench "xdp-bench drop" 'rx[0-9]+_xdp_drop' drop "$DUT"
	bench "xdp-bench tx" 'rx[0-9]+_xdp_tx' tx "$DUT"
	bench "redirect-cpu drop" 'rx[0-9]+_xdp_redirect' redirect-cpu -c 0 -r drop "$DUT"

	step "iperf3 TCP, $DUT -> peer and peer -> $DUT, 3 s each"
	tcp() {
		pexec timeout 30 iperf3 -s -1 >/dev/null 2>&1 &
		for _ in $(seq 50); do pexec ss -Hltn 'sport = :5201' | grep -q LISTEN && break; sleep 0.1; done
		iperf3 -c "$PEER_IP" -t 3 --connect-timeout 5000 "$@" | tail -n 4 | head -n 2
		wait
	}
	out=$(tcp) || true
	echo "$out"
	r1=$(echo "$out" | awk '/receiver/ {print $7, $8}')
	out=$(tcp -R) || true
	echo "$out"
	r2=$(echo "$out" | awk '/receiver/ {print $7, $8}')
	[ -n "$r1" ] && [ -n "$r2" ] || die "iperf3 failed"
	sum "iperf3 TCP" "$DUT->peer $r1, peer->$DUT $r2"
	exit 0
fi

# ================================================================= host
set -e
cd "$TOP"
[ "$(id -u)" = 0 ] || { echo "demo: run as root (it installs packages and boots QEMU)" >&2; exit 1; }
t0=$(date +%s)
if [ "${SKIP_SETUP:-0}" != 1 ]; then
	echo "demo: tools/setup.sh (installs only what is missing)"
	tools/setup.sh
fi
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	echo "demo: make"
	make -s modules
	make -s -C "$PROGS"
fi
KVER=$(ls /boot/vmlinuz-6.12.* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -n1)
[ -n "$KVER" ] || { echo "demo: no 6.12 kernel in /boot (tools/setup.sh)" >&2; exit 1; }
v=$(modinfo -F vermagic vmx.ko | awk '{print $1}')
[ "$v" = "$KVER" ] || { echo "demo: vmx.ko is built for '$v', the guest runs $KVER (make KDIR=/usr/src/linux-headers-$KVER)" >&2; exit 1; }
mkdir -p .cache/demo
rm -f .cache/demo/summary.txt
echo "demo: booting a $KVER guest (vmxnet3 + virtio-net on a private hub; waits for /tmp/vmx-guest.lock)"
set +e
flock /tmp/vmx-guest.lock tools/vm.sh --kernel "$KVER" --nic vmxnet3 --nic virtio \
	--timeout 900 --log .cache/demo/console.log \
	${DEMO_SECS:+--env DEMO_SECS=$DEMO_SECS} -- bash tools/demo.sh --guest
rc=$?
set -e
echo
echo "================ vmx demo summary ($(( $(date +%s) - t0 )) s, guest console: .cache/demo/console.log)"
cat .cache/demo/summary.txt 2>/dev/null || echo "(no summary: the guest did not get that far)"
[ $rc = 0 ] && echo "demo: OK" || echo "demo: FAILED (exit status $rc)"
exit $rc
