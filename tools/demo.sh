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
# Inside the guest the same script runs with --guest, on the selftests'
# library (selftests/drivers/net/vmx/lib/tool.sh): the driver, the peer
# netns, pktgen, xdp-bench runs, counters and iperf3 are set up and read
# by the tests' own helpers. Only one guest of this machine's users runs
# at a time: the boot waits on /tmp/vmx-guest.lock.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROGS=$TOP/selftests/drivers/net/vmx/progs

# ================================================================= guest
if [ "${1:-}" = --guest ]; then
	# The selftests' library (lib/tool.sh: the tests' helpers without a
	# TAP test): the driver, the peer netns, pktgen, xdp-bench, counters
	# and iperf3 are set up and read as the tests do.
	# VMX_KO: the vmx.ko the host half built and checked (not build/<kver>/)
	# shellcheck disable=SC2034 # VMX_TOOL, VMX_KO: read by the library
	VMX_TOOL=demo VMX_KO=$TOP/vmx.ko
	# shellcheck source=../selftests/drivers/net/vmx/lib/tool.sh
	source "$TOP/selftests/drivers/net/vmx/lib/tool.sh" || exit 1
	SECS=${DEMO_SECS:-3}
	OUT=$TOP/.cache/demo
	SUM=$OUT/summary.txt
	mkdir -p "$OUT"
	: >"$SUM"
	step() { printf '\n=== %s\n' "$*"; }
	die() { log "$*"; echo "FAILED: $*" >>"$SUM"; exit 1; }
	sum() { printf '%-22s %s\n' "$1" "$2" | tee -a "$SUM"; }

	step "kernel $(uname -r), $(nproc) vCPUs"
	peer_setup || die "no virtio-net peer in netns $PEER_NS"
	dut_up_driver || die "no interface bound to vmx"
	dut_addr_setup || die "$DUT: addresses or carrier"
	echo "DUT $DUT (vmx), peer $PEER (virtio_net) in netns $PEER_NS"
	dut_ping -c 2 "$PEER_IP" >/dev/null || die "no ping between $DUT and the peer"

	step "ethtool -i $DUT"
	ethtool -i "$DUT"
	sum "driver" "$(ethtool -i "$DUT" | awk -F': ' '/^driver/ {print $2}') ($(ethtool -i "$DUT" | awk -F': ' '/^firmware/ {print $2}'), $(uname -r))"

	step "ip link set dev $DUT xdp obj xdp_pass.o sec xdp"
	ip link set dev "$DUT" xdp obj "$(xdp_obj xdp_pass)" sec xdp || die "XDP attach failed"
	xdp_native "$DUT" xdp_pass || die "program not attached in native mode"
	p0=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	peer_ping -c 10 -i 0.05 -q "$DUT_IP"
	p1=$(estat "$DUT" 'rx[0-9]+_xdp_pass')
	echo "ethtool -S: rxN_xdp_pass +$((p1 - p0))"
	[ $((p1 - p0)) -ge 10 ] || die "ping did not go through the program"
	sum "XDP attach" "native (ip shows 'xdp'), ping through xdp_pass: rxN_xdp_pass +$((p1 - p0))"
	xdp_detach "$DUT"

	step "pktgen in the peer netns: 60-byte UDP to $DUT ($(mac_of "$DUT"))"
	pktgen_setup "$(mac_of "$DUT")" 20000000 || die "pktgen"

	# bench NAME COUNTER ARGS...: xdp-bench ARGS while pktgen sends SECS s
	# (bench_run); COUNTER: the driver's ethtool -S counters that count
	# what the program did
	bench() {
		local name=$1 ctr=$2 n peak
		shift 2
		step "xdp-bench $* ($SECS s of pktgen traffic)"
		bench_run "$SECS" drv "$@" || die "xdp-bench $*"
		peak=$(bench_rate rx/s)
		[ "$peak" -gt 0 ] || die "xdp-bench $*: no rate"
		n=$(bd "$ctr")
		sum "$name" "$peak rx/s peak; driver ${ctr#*_} +$n of $BENCH_SENT sent ($((n * 1000000 / BENCH_USECS)) pps avg)"
	}
	bench "xdp-bench drop" 'rx[0-9]+_xdp_drop' drop "$DUT"
	bench "xdp-bench tx" 'rx[0-9]+_xdp_tx' tx "$DUT"
	bench "redirect-cpu drop" 'rx[0-9]+_xdp_redirect' redirect-cpu -c 0 -r drop "$DUT"

	step "iperf3 TCP, $DUT -> peer and peer -> $DUT, 3 s each"
	# tcp [-R]: iperf_check's received rate, "N Mbit/s"
	tcp() {
		local out rc
		out=$(VMX_IPERF_TIME=3 iperf_check "$@")
		rc=$?
		echo "$out" >&2
		[ $rc = 0 ] || return 1
		sed -n 's/^TCP.*received \([0-9.]* Mbit\/s\).*/\1/p' <<<"$out" | grep .
	}
	r1=$(tcp) || die "iperf3 $DUT -> peer"
	r2=$(tcp -R) || die "iperf3 peer -> $DUT"
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
