#!/usr/bin/env bash
# kselftests.sh - the kernel's own NIC driver selftests against the driver
# under test: every test of the running kernel's tree's
# tools/testing/selftests/drivers/net and drivers/net/hw (TEST_PROGS of their
# Makefiles) that a vmxnet3 can run, in the hardware mode their README.rst
# describes: NETIF is the DUT, the remote end is the virtio peer in netns
# "peer" (REMOTE_TYPE=netns, REMOTE_ARGS=peer), LOCAL_V4/REMOTE_V4 and
# LOCAL_V6/REMOTE_V6 are the addresses lib.sh gives both ends.
#
# The tests come from .cache/kselftests/<version>/, installed on the host by
# tools/kselftests-install.sh: the 6.12 tree's from the linux-source-6.12
# tarball (group kselftests), the newest kernel's own copies from its source
# tree with --newest (group ksftnewest, 7.3), with the XDP programs and
# helpers the newer tests run built, and a newer ethtool in bin/ (put first
# in the tests' PATH). The newest install matching the running kernel's
# major.minor is used; its version picks the run and exclude lists
# (ks_lists_6_12, ks_lists_7_3).
#
# Output: one TAP line per kernel test case ("ok N drivers/net ping.test_v4"),
# the kernel test's own diagnostics as "#   " lines; its SKIP and XFAIL cases
# become "# SKIP" lines with the test's reason. A kernel test that fails to
# start, ends early, exits non-zero without a failing case or times out adds
# one failing line. Each excluded test is one "ok N ... # SKIP <reason>" line;
# a test of the Makefiles that is neither run nor excluded fails (a newer tree
# with a test nobody has looked at).
#
# stats.py runs last: its check_down case dumps per-queue stats of a stopped
# device, which oopses a driver that reads freed queue arrays while the
# netlink dump holds rtnl; every later rtnl user would then hang. The kernel
# log is checked while each kernel test runs and after it: on an Oops or BUG
# the remaining tests are reported as not run, the oops goes into the log,
# and the test ends without the usual cleanup and reboots the guest 15 s
# later (see ks_oops_exit).
#
# Environment:
#   VMX_KSFT_TESTS    space-separated tests to run, e.g. "drivers/net/ping.py"
#                     (default: all runnable ones); naming an excluded test
#                     runs it anyway (to see why it is excluded).
#   VMX_KSFT_TIMEOUT  seconds per kernel test (default 240; a few tests of
#                     the 7.3 tree have their own, KS_TIMEOUTS).
#   VMX_KSFT_DIR      installed tree (default: found under .cache/kselftests).
#   VMX_KSFT_OOPS_REBOOT=0  do not reboot the guest after a kernel oops.
# vmx-timeout: 3600
source "$(dirname "$0")/lib.sh"

KS_TIMEOUT=${VMX_KSFT_TIMEOUT:-240}

# Per tree (kernel major.minor): KS_RUN, the tests run, in this order
# (stats.py last, see above; on 7.3 napi_threaded.py after it: it used to
# hang there, writing 0 to /sys/class/net/DEV/threaded after "ethtool -L
# combined 1" never returning while vmx kept the NAPI of an inactive channel
# registered; a test stuck like that is reported by ks_stuck); KS_EXCLUDED,
# the tests excluded, with the reason; KS_ARGS, a test's arguments (7.3's lib/py takes -t/-T case
# filters); KS_TIMEOUTS, a test's own timeout, in seconds (instead of
# KS_TIMEOUT); KS_CASE_EXCLUDED["TEST:CASE"], one case of a test that runs
# excluded, with the reason (passed as -T CASE, reported as a SKIP line). A
# tree of another version gets the newest lists: its new tests
# fail as unknown until someone reads them and lists them here.
declare -a KS_RUN=()
declare -A KS_EXCLUDED=() KS_ARGS=() KS_TIMEOUTS=() KS_CASE_EXCLUDED=()

# Shared by every tree: hardware a vmxnet3 does not have.
ks_excluded_hw() {
	KS_EXCLUDED+=(
	[drivers/net/hw/devlink_port_split.py]="devlink port splitting of multi-lane switch ports; vmx registers no devlink instance and a vmxnet3 has no lanes"
	[drivers/net/hw/ethtool.sh]="forces speeds/duplex/autoneg on two cabled PHY ports and checks what the partner resolves; a vmxnet3 link is virtual, with no link modes to set"
	[drivers/net/hw/ethtool_extended_state.sh]="link-down extended states (autoneg, no cable) reported by a PHY; a vmxnet3 has no PHY"
	[drivers/net/hw/ethtool_mm.sh]="IEEE 802.3 MAC Merge (frame preemption); no vmxnet3 has it"
	[drivers/net/hw/ethtool_rmon.sh]="RMON packet-size histograms (ethtool -S --groups rmon); the vmxnet3 device keeps no such counters"
	[drivers/net/hw/hw_stats_l3.sh]="L3 hardware statistics of offloaded router interfaces (switch ASICs, mlxsw)"
	[drivers/net/hw/hw_stats_l3_gre.sh]="L3 hardware statistics of offloaded GRE tunnels (switch ASICs, mlxsw)"
	[drivers/net/hw/loopback.sh]="MAC loopback (the loopback feature, ethtool -K loopback); the vmxnet3 device has no loopback mode"
	)
}

# The 6.12 tree (linux-source-6.12).
ks_lists_6_12() {
	KS_RUN=(drivers/net/ping.py drivers/net/queues.py drivers/net/hw/pp_alloc_fail.py
		drivers/net/stats.py)
	ks_excluded_hw
	KS_EXCLUDED+=(
	[drivers/net/netcons_basic.sh]="6.12's version creates and links its own two netdevsim devices (no NETIF mode), and the Debian kernel has no netdevsim (CONFIG_NETDEVSIM unset)"
	[drivers/net/hw/csum.py]="6.12's csum.py builds every command with cfg.remote_ifname, which 6.12's NetDrvEpEnv never sets (AttributeError in every case, whatever the NIC); it also needs the compiled net/lib/csum helper"
	[drivers/net/hw/rss_ctx.py]="RSS contexts: reads ethtool --json -c and -x, which bookworm's ethtool 6.1 refuses ('bad command line argument(s)'); vmx has the RSS key and indirection table (ethtool -x/-X) and rx-flow-hash, but no additional RSS contexts and no ntuple filters, which most cases need, and the others check that traffic spreads over the RX queues, while stock QEMU's vmxnet3 delivers every frame to RX queue 0 (the project's testdev RSS patch would steer)"
	)
}

# The newest kernel's tree (7.3; tools/kselftests-install.sh --newest).
ks_lists_7_3() {
	KS_RUN=(drivers/net/ping.py drivers/net/napi_id.py
		drivers/net/queues.py drivers/net/hds.py drivers/net/shaper.py
		drivers/net/ring_reconfig.py drivers/net/xdp.py drivers/net/netpoll_basic.py
		drivers/net/gro.py
		drivers/net/hw/csum.py drivers/net/hw/irq.py drivers/net/hw/nic_timestamp.py
		drivers/net/hw/ntuple.py drivers/net/hw/gro_hw.py drivers/net/hw/rss_api.py
		drivers/net/hw/rss_drv.py drivers/net/hw/rss_flow_label.py
		drivers/net/hw/rss_input_xfrm.py drivers/net/hw/tso.py drivers/net/hw/uso.py
		drivers/net/hw/xsk_reconfig.py
		drivers/net/hw/nk_netns.py drivers/net/hw/pp_alloc_fail.py
		drivers/net/stats.py drivers/net/napi_threaded.py)
	ks_excluded_hw
	KS_EXCLUDED+=(
	[drivers/net/macsec.py]="MACsec hardware offload (macsec_ops, macsec-hw-offload); vmx has none, and the newest kernel is built without CONFIG_MACSEC, so even the software cases cannot create a macsec device"
	[drivers/net/psp.py]="PSP encryption offload (a psp_dev registered by the driver); vmx registers none; its psp_responder is a YNL C program, not built"
	[drivers/net/so_txtime.py]="SO_TXTIME through the fq and etf qdiscs (a stack test); the newest kernel's config has neither (CONFIG_NET_SCH_FQ, CONFIG_NET_SCH_ETF unset: localmodconfig)"
	[drivers/net/hw/devlink_rate_cross_esw.py]="devlink rate objects across e-switches (SR-IOV NICs); vmx registers no devlink instance"
	[drivers/net/hw/devlink_rate_tc_bw.py]="devlink rate traffic-class bandwidth of an e-switch (SR-IOV NICs); vmx registers no devlink instance"
	[drivers/net/hw/devmem.py]="devmem TCP: needs a memory provider on an RX queue (netdev_queue_mgmt_ops, header split); vmx has neither; ncdevmem is a YNL C program, not built"
	[drivers/net/hw/nk_devmem.py]="devmem TCP through netkit: needs a memory provider on an RX queue (netdev_queue_mgmt_ops, header split); vmx has neither; ncdevmem is a YNL C program, not built"
	[drivers/net/hw/userns_devmem.py]="devmem TCP from a user namespace: needs a memory provider on an RX queue (netdev_queue_mgmt_ops, header split); vmx has neither; ncdevmem is a YNL C program, not built"
	[drivers/net/hw/iou-zcrx.py]="io_uring zero-copy RX: needs a memory provider on an RX queue (netdev_queue_mgmt_ops, header split); vmx has neither; iou-zcrx needs a liburing with zcrx (bookworm's 2.3 has none), not built"
	[drivers/net/hw/nk_qlease.py]="leases an RX queue to a netkit device for io_uring zero-copy RX: needs netdev_queue_mgmt_ops and header split, which vmx has not; runs the iou-zcrx program, not built"
	[drivers/net/hw/ipsec_vxlan.py]="IPsec crypto offload (xfrmdev_ops, esp-hw-offload) under VXLAN GSO; vmx has no IPsec offload"
	[drivers/net/hw/toeplitz.py]="checks every frame's RX hash and queue against a Toeplitz computation: stock QEMU's vmxnet3 computes no RSS hash and delivers every frame to RX queue 0; its toeplitz program is a YNL C program, not built"
	[drivers/net/hw/rss_ctx.py]="RSS contexts: vmx has the RSS key and indirection table (ethtool -x/-X) and rx-flow-hash, but no additional RSS contexts and no ntuple filters, which most cases need; the others check that traffic spreads over the RX queues, while stock QEMU's vmxnet3 delivers every frame to RX queue 0 (the project's testdev RSS patch would steer)"
	[drivers/net/hw/xdp_metadata.py]="checks that bpf_xdp_metadata_rx_hash() returns a non-zero L4 hash for TCP and UDP frames: stock QEMU's vmxnet3 computes no RSS hash (every completion has RSS type 0), so vmx's kfunc returns -ENODATA, as its contract says (dry run: 5 errors of 5 frames, hash 0, type 0); the group ksftnewtd runs it on test-device NICs (RSS, UDP port hashing granted), where it passes"
	[drivers/net/hw/ethtool_std_stats.sh]="IEEE 802.3 MAC/control/pause standard statistics (ethtool -S --all-groups) over two cabled ports driven by mausezahn; vmx reports none of these groups (no get_eth_mac_stats/get_eth_ctrl_stats/get_pause_stats) and has one port"
	)
	# gro.py: about 300 cases over sw, hw and lro GRO and four
	# encapsulations; hw mode needs rx-gro-hw (vmx has none: the cases
	# XDP-hack around it) and lro mode needs a device that coalesces
	# (stock QEMU's vmxnet3 never does); the stack's GRO over vmx's
	# napi_gro_receive is the part about the driver: sw, plain IPv4/IPv6.
	KS_ARGS[drivers/net/gro.py]="-t test.sw_ipv4_* -t test.sw_ipv6_*"
	KS_TIMEOUTS[drivers/net/gro.py]=900
	KS_CASE_EXCLUDED[drivers/net/gro.py:test.sw_ipv4_data_lrg_1byte]="a 1-byte IPv4 segment is a 55-byte frame that arrives padded to 60; QEMU's vmxnet3 reports no checksum result for frames without a vnet header (hub backend), so vmx hands them up CHECKSUM_NONE, and GRO's software check of the TCP checksum covers skb_gro_len(), padding included, so it fails and the segment is not merged (dry run: {100, 1}, want {101}); the IPv6 case (75 bytes, no padding) passes; a device that validates checksums (ESXi) lets GRO merge it"
	local c
	for c in test_rxfh_nl_set_indir_ctx test_rxfh_indir_ctx_ntf test_rss_ctx_add test_rss_ctx_ntf; do
		KS_CASE_EXCLUDED[drivers/net/hw/rss_api.py:$c]="creates additional RSS contexts (ethtool -X context new, rss-create-act); vmx has none, so the first step fails with EOPNOTSUPP instead of skipping"
	done
	for c in test_rxfh_fields_set test_rxfh_fields_ntf; do
		KS_CASE_EXCLUDED[drivers/net/hw/rss_api.py:$c]="changes tcp4/tcp6 rx-flow-hash between sd and sdfn: vmx lets the hashed fields be chosen from device revision 4 on, and stock QEMU's vmxnet3 is revision 1, so vmx answers EOPNOTSUPP (the tdev groups test rx-flow-hash on revision 9)"
	done
	KS_CASE_EXCLUDED[drivers/net/hw/rss_api.py:test_rxfh_fields_set_xfrm]="first sets tcp4 to hash on the source address alone (ip-src); a vmxnet3 hashes both addresses or none (sd, or sdfn from revision 4), so vmx answers EINVAL"
	KS_CASE_EXCLUDED[drivers/net/hw/tso.py:ipv6]="IPv6 TSO over the QEMU hub: QEMU before 8.0 (Debian 12 has 7.2) sends a vmxnet3's TSO frames as IPv4 fragments, which corrupts IPv6 ones whatever the driver (README, Documentation/vmx.rst Limits); the peer drops them and the stream retransmits (dry run: 399 retransmissions, limit 157); tcp.sh covers IPv6 with TSO6 off"
	KS_TIMEOUTS[drivers/net/xdp.py]=600
	KS_TIMEOUTS[drivers/net/hw/tso.py]=600
}

# ks_runtime_exclusion TEST: reason the test cannot run in this guest, if any.
ks_runtime_exclusion() {
	case "$1" in
	drivers/net/netpoll_basic.py)
		command -v bpftrace > /dev/null ||
			echo "counts netpoll_poll_dev() calls with bpftrace while netconsole floods, and fails (not skips) without it: bpftrace is not installed (Debian package bpftrace; tools/setup.sh does not install it)"
		;;
	drivers/net/hw/pp_alloc_fail.py)
		[ -e /sys/kernel/debug/fail_function ] ||
			echo "injects page_pool allocation failures through /sys/kernel/debug/fail_function; this kernel has no function error injection (CONFIG_FUNCTION_ERROR_INJECTION unset: Debian's 6.12, the newest kernel's localmodconfig)"
		;;
	esac
}

# Installed tree for the running kernel.
ks_find_dir() {
	local mm d best=
	mm=$(uname -r | cut -d. -f1,2)
	for d in "$VMX_PROJECT"/.cache/kselftests/"$mm".*/; do
		[ -f "$d/.installed" ] || continue
		if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$d" | sort -V | tail -n1)" = "$d" ]; then
			best=$d
		fi
	done
	[ -n "$best" ] && echo "${best%/}"
}

KSRC=${VMX_KSFT_DIR:-$(ks_find_dir)}
KSFT=$KSRC/tools/testing/selftests
if [ -z "$KSRC" ] || [ ! -d "$KSFT/drivers/net" ]; then
	bail "no kernel selftests installed for $(uname -r) under $VMX_PROJECT/.cache/kselftests: run tools/kselftests-install.sh on the host (--newest for the newest kernel)" install
fi
log "kernel selftests from $KSRC"

# The lists of the tree's version (its install directory is named after it).
KS_MM=$(basename "$KSRC" | cut -d. -f1,2)
case "$KS_MM" in
6.12) ks_lists_6_12 ;;
7.3) ks_lists_7_3 ;;
*) log "no lists for a $KS_MM tree: using the 7.3 tree's"; ks_lists_7_3 ;;
esac

# Tools the install brought along (bin/ethtool: a newer ethtool, whose
# --json covers -g/-l/-c/-x/-S, see tools/kselftests-install.sh), first in
# the kernel tests' PATH.
KS_PATH=$PATH
if [ -d "$KSRC/bin" ]; then
	KS_PATH=$KSRC/bin:$PATH
	for b in "$KSRC"/bin/*; do
		[ -x "$b" ] && log "using ${b#"$KSRC"/}: $("$b" --version 2>&1 | head -n1)"
	done
fi

# Every test of the two Makefiles' TEST_PROGS, as drivers/net[/hw]/NAME.
ks_all_tests() {
	local sub
	for sub in drivers/net drivers/net/hw; do
		sed -n '/^TEST_PROGS[[:space:]]*[:+]*=/,/^[[:space:]]*\(#.*\)\{0,1\}$/p' "$KSFT/$sub/Makefile" |
			tr -s '[:blank:]\134' '\n' | grep -E '\.(py|sh)$' | sed "s|^|$sub/|"
	done
}

# (no process substitution: a tools/vm.sh guest has no /dev/fd)
ks_all_tests > "$VMX_TMP/ks.all"
mapfile -t KS_ALL < "$VMX_TMP/ks.all"
[ ${#KS_ALL[@]} -gt 0 ] || bail "no TEST_PROGS found in $KSFT/drivers/net{,/hw}/Makefile" install

ks_selected() {
	[ -z "${VMX_KSFT_TESTS:-}" ] && return 0
	case " $VMX_KSFT_TESTS " in *" $1 "*) return 0 ;; esac
	return 1
}

ks_in_run_list() {
	local t
	for t in "${KS_RUN[@]}"; do [ "$t" = "$1" ] && return 0; done
	return 1
}

# Kernel Oops/BUG since this test started.
ks_kernel_broken() { dmesg_since_start | grep -qE 'Oops|BUG:|general protection fault|kernel BUG'; }

# ks_line LINE: one line of a kernel test's output, as TAP of this test.
# Uses ks_sub, ks_plan, ks_seen, ks_failed, ks_rc of ks_translate.
ks_line() {
	local line=$1 name rest
	case "$line" in
	"KS-EXIT "*) ks_rc=${line#KS-EXIT } ;;
	"KTAP version"*|"TAP version"*) ;;
	1..*) ks_plan=${line#1..} ;;
	"ok "*|"not ok "*)
		ks_seen=$((ks_seen + 1))
		rest=${line#*ok }
		rest=${rest#* }            # drop the case number
		name=${rest%% # *}
		if [ "$name" != "$rest" ]; then rest=${rest#* # }; else rest=; fi
		if [ "${line%%ok *}" = "not " ]; then
			ks_failed=$((ks_failed + 1))
			if [ -n "$rest" ]; then fail "$ks_sub $name" "kernel test says: $rest"
			else fail "$ks_sub $name"; fi
		else
			case "$rest" in
			SKIP*) skip "$ks_sub $name" "${rest#SKIP }" ;;
			XFAIL*) skip "$ks_sub $name" "kernel test XFAIL: ${rest#XFAIL }" ;;
			*) ok "$ks_sub $name${rest:+ ($rest)}" ;;
			esac
		fi
		;;
	"#"*) printf '#   %s\n' "${line#"# "}" ;;
	*) printf '#   %s\n' "$line" ;;
	esac
}

# ks_translate TEST: read the kernel test's output (stdin; last line
# "KS-EXIT <status>") and print it as TAP subtests of this test. While the
# test is quiet, the kernel log is checked every 5 s: a test whose task died
# in an oops may never close its output, so an oops ends the reading
# (KS_BROKEN=1).
# Once the test has exited, its output is read for 10 s more at most: a
# task it started that is stuck in the kernel (and so survived timeout's
# SIGKILL) keeps the output open for ever (KS_LEFTOVER=1; see ks_stuck).
KS_BROKEN=0
KS_LEFTOVER=0
ks_translate() {
	local t=$1 line r ks_sub=${1%/*} ks_rc=- ks_plan='' ks_seen=0 ks_failed=0 idle=0
	while :; do
		line=
		IFS= read -r -t 5 line
		r=$?
		if [ $r -gt 128 ]; then
			# timeout; bash keeps a partial line in $line
			[ -z "$line" ] || ks_line "$line"
			if ks_kernel_broken; then
				KS_BROKEN=1
				break
			fi
			if [ "$ks_rc" != - ]; then
				idle=$((idle + 1))
				if [ $idle -ge 2 ]; then
					KS_LEFTOVER=1
					break
				fi
			fi
			continue
		fi
		[ -z "$line" ] || ks_line "$line"
		[ $r = 0 ] || break
	done
	ks_kernel_broken && KS_BROKEN=1
	if [ $KS_BROKEN = 1 ]; then
		fail "$ks_sub ${t##*/}: finished" "the kernel oopsed during the test (exit status $ks_rc) after $ks_seen of ${ks_plan:-?} cases"
		return
	fi
	case "$ks_rc" in
	124|137) fail "$ks_sub ${t##*/}: finished" "timed out after ${KS_TIMEOUTS[$t]:-$KS_TIMEOUT}s (exit status $ks_rc)" ;;
	-) fail "$ks_sub ${t##*/}: finished" "no exit status (the runner lost the test)" ;;
	*)
		if [ -z "$ks_plan" ]; then
			fail "$ks_sub ${t##*/}: started" "exit status $ks_rc, no KTAP plan (the test did not get to its cases)"
		elif [ "$ks_seen" -lt "$ks_plan" ]; then
			fail "$ks_sub ${t##*/}: finished" "exit status $ks_rc after $ks_seen of $ks_plan cases"
		elif [ "$ks_rc" != 0 ] && [ "$ks_failed" = 0 ] && [ "$ks_rc" != 4 ]; then
			fail "$ks_sub ${t##*/}: exit status" "exit status $ks_rc without a failing case"
		fi
		;;
	esac
}

# ks_run TEST: run one kernel test in its directory with the environment of
# drivers/net/README.rst (python unbuffered, so that the cases before a
# crash are seen), its KS_ARGS and its timeout. KSFT_MACHINE_SLOW=yes: the
# guest runs under TCG (the tests relax timing checks with it).
# LOCAL_PREFIX_V6 is the prefix NetDrvContEnv (nk_netns.py) routes to a
# netkit container behind the DUT; the peer gets a route to it through the
# DUT.
KS_PREFIX6=fd99:2::/64
ks_run() {
	local t=$1 dir pid tmo=${KS_TIMEOUTS[$1]:-$KS_TIMEOUT} args=() more k run
	dir=$KSFT/${t%/*}
	# exclusions first: ksft.py takes the first filter a case matches, so
	# an -T after a matching -t pattern (gro.py's) would exclude nothing
	for k in "${!KS_CASE_EXCLUDED[@]}"; do
		[ "${k%%:*}" = "$t" ] || continue
		args+=(-T "${k#*:}")
		skip "${t%/*} $(basename "${t%.*}").${k#*:}" "excluded: ${KS_CASE_EXCLUDED[$k]}"
	done
	read -r -a more <<< "${KS_ARGS[$t]:-}"
	args+=("${more[@]}")
	# a test without the executable bit (7.3's hw/xdp_metadata.py) runs
	# through its #! line's interpreter, as kselftest's runner.sh does
	run=("./${t##*/}")
	if [ ! -x "$dir/${t##*/}" ]; then
		read -r -a run <<< "$(head -n 1 "$dir/${t##*/}" | sed -n 's/^#!//p')"
		run+=("./${t##*/}")
		log "${t##*/} is not executable: running ${run[*]}"
	fi
	log "---- $t (timeout ${tmo}s)${args[*]:+ args: ${args[*]}}"
	echo "vmx-selftest: kernel test $t starting" > /dev/kmsg
	# (again before every test: a test that downed the peer took it away)
	pexec ip -6 route replace "$KS_PREFIX6" via "$DUT_IP6" 2>&1 | diag
	rm -f "$VMX_TMP/ks.fifo"
	mkfifo "$VMX_TMP/ks.fifo" || { fail "${t%/*} ${t##*/}: started" "mkfifo failed"; return; }
	(
		cd "$dir" || exit 1
		env PATH="$KS_PATH" NETIF="$DUT" LOCAL_V4="$DUT_IP" REMOTE_V4="$PEER_IP" \
			LOCAL_V6="$DUT_IP6" REMOTE_V6="$PEER_IP6" \
			REMOTE_TYPE=netns REMOTE_ARGS="$PEER_NS" \
			LOCAL_PREFIX_V6="$KS_PREFIX6" KSFT_MACHINE_SLOW=yes \
			PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
			timeout -k 10 "$tmo" "${run[@]}" "${args[@]}" 2>&1 < /dev/null
		echo "KS-EXIT $?"
	) > "$VMX_TMP/ks.fifo" 2>&1 &
	pid=$!
	ks_translate "$t" < "$VMX_TMP/ks.fifo"
	# after an oops the test's task may never finish exiting, nor the
	# subshell when one of the test's tasks is stuck
	[ $KS_BROKEN = 1 ] || [ $KS_LEFTOVER = 1 ] || wait "$pid"
}

# ks_stuck: the tasks in uninterruptible sleep (D) that stay there for 10 s,
# with their kernel stacks, on stdout; none: nothing printed. A task that
# loops in the kernel with short sleeps (napi_disable() waiting for a NAPI
# that never completes) is never reported by the hung-task detector, and
# one stuck under rtnl blocks every later test.
ks_stuck() {
	local p n=0 pids=() again=()
	for p in /proc/[0-9]*; do
		[ "$(awk '{print $3}' "$p/stat" 2> /dev/null)" = D ] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	sleep 10
	for p in "${pids[@]}"; do
		[ "$(awk '{print $3}' "/proc/$p/stat" 2> /dev/null)" = D ] && again+=("$p")
	done
	for p in "${again[@]}"; do
		n=$((n + 1))
		echo "task $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null | cut -c1-120)) in D state, kernel stack:"
		sed 's/^/    /' "/proc/$p/stack" 2> /dev/null
	done
	[ $n = 0 ] || echo "$n task(s) stuck in the kernel"
}

# ks_oops_exit TEST REMAINING...: the kernel oopsed in TEST; report the
# remaining tests as not run, the kernel log, and end here without the usual
# cleanup: the dead task may hold rtnl (the netlink stats dump takes it), and
# then unloading the driver, deleting the netns or any later test blocks for
# ever. The guest is rebooted (QEMU runs with -no-reboot, so it ends) 15 s
# after this test exits, once guest-suite.sh has recorded its exit status;
# tools/vm.sh then reports a crashed guest instead of waiting for its
# timeout. VMX_KSFT_OOPS_REBOOT=0 leaves the guest running.
# KS_STUCK (tasks stuck in the kernel, ks_stuck) ends the same way, as "the
# kernel hung".
KS_STUCK=
ks_oops_exit() {
	local t=$1 r what="oopsed"
	shift
	[ -z "$KS_STUCK" ] || what="hung (tasks stuck in the kernel)"
	for r in "$@"; do
		fail "${r%/*} ${r##*/}" "not run: the kernel $what during $t"
	done
	if [ -n "$KS_STUCK" ]; then
		fail "no task stuck in the kernel" "after $t"
		echo "$KS_STUCK" | diag
		echo w > /proc/sysrq-trigger 2> /dev/null
		dmesg_since_start | tail -n 150 | diag
	else
		fail "kernel log clean" "Oops/BUG during $t"
		dmesg_since_start | grep -E -B 2 -A 40 'Oops|BUG:|general protection fault|kernel BUG' | head -n 120 | diag
	fi
	echo "1..$_vmx_n"
	log "$VMX_TEST: $_vmx_pass passed, $_vmx_fail failed, $_vmx_skip skipped; ended without cleanup after the kernel $what"
	if [ "${VMX_KSFT_OOPS_REBOOT:-1}" = 1 ]; then
		log "rebooting the guest in 15 s (the kernel is unusable)"
		echo "vmx-selftest: $VMX_TEST: kernel $what in $t, rebooting the guest in 15 s" > /dev/kmsg
		( sleep 15; echo b > /proc/sysrq-trigger ) > /dev/null 2>&1 < /dev/null &
		disown
	fi
	_vmx_done=1
	trap - EXIT
	exit "$KSFT_FAIL"
}

vmx_setup
log "NETIF=$DUT LOCAL_V4=$DUT_IP REMOTE_V4=$PEER_IP LOCAL_V6=$DUT_IP6 REMOTE_V6=$PEER_IP6 REMOTE_TYPE=netns REMOTE_ARGS=$PEER_NS LOCAL_PREFIX_V6=$KS_PREFIX6"
# netconsole's dynamic targets (netpoll_basic.py) live in configfs
if [ ! -d /sys/kernel/config/netconsole ]; then
	modprobe configfs 2> /dev/null
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config 2>&1 | diag
fi

# Exclusions and unknown tests first, then the tests that run: tests named in
# VMX_KSFT_TESTS that are not in KS_RUN, then KS_RUN in its order.
declare -A runnable=()
for t in "${KS_ALL[@]}"; do
	why=${KS_EXCLUDED[$t]:-}
	[ -n "$why" ] || why=$(ks_runtime_exclusion "$t")
	if ! ks_selected "$t"; then
		skip "${t%/*} ${t##*/}" "not selected (VMX_KSFT_TESTS=$VMX_KSFT_TESTS)"
	elif [ -n "$why" ] && [ -z "${VMX_KSFT_TESTS:-}" ]; then
		skip "${t%/*} ${t##*/}" "excluded: $why"
	elif [ -z "$why" ] && ! ks_in_run_list "$t"; then
		fail "${t%/*} ${t##*/}" "neither run nor excluded by $VMX_TEST (a test this runner does not know yet)"
	else
		runnable[$t]=1
	fi
done
todo=()
for t in "${KS_ALL[@]}"; do
	[ -n "${runnable[$t]:-}" ] && ! ks_in_run_list "$t" && todo+=("$t")
done
for t in "${KS_RUN[@]}"; do
	case " ${KS_ALL[*]} " in
	*" $t "*) [ -n "${runnable[$t]:-}" ] && todo+=("$t") ;;
	*) fail "${t%/*} ${t##*/}" "not in this tree's Makefiles ($KSFT)" ;;
	esac
done

# ks_irq_prepare: irq.py moves a NAPI IRQ's affinity to CPUs 0-1 ("3"), or to
# CPUs 0 and 2 ("5") when it already is "3"; with fewer than 3 CPUs (this
# guest has 2) "3" is every CPU, the default, and "5" names a CPU that does
# not exist (write: EOVERFLOW). The DUT's IRQs at "3" go to CPU 0 first, so
# the test moves them to "3"; ks_irq_restore puts them back.
KS_IRQ_SAVED=()
ks_irq_prepare() {
	local f n m
	[ "$(nproc)" -lt 3 ] || return 0
	for f in /sys/class/net/"$DUT"/device/msi_irqs/*; do
		n=${f##*/}
		[ -w "/proc/irq/$n/smp_affinity" ] || continue
		m=$(sed 's/^[0,]*//' "/proc/irq/$n/smp_affinity")
		[ "$m" = 3 ] || continue
		echo 1 > "/proc/irq/$n/smp_affinity" 2> /dev/null && KS_IRQ_SAVED+=("$n")
	done
	log "irq.py: ${#KS_IRQ_SAVED[@]} IRQs of $DUT moved from CPUs 0-1 to CPU 0 first ($(nproc) CPUs: the test's other mask, 5, names CPU 2)"
}
ks_irq_restore() {
	local n
	for n in "${KS_IRQ_SAVED[@]}"; do
		echo 3 > "/proc/irq/$n/smp_affinity" 2> /dev/null
	done
	KS_IRQ_SAVED=()
}

# ks_udp_rss: xdp_metadata.py wants an L4 hash type for UDP too; vmxnet3
# hashes UDP by addresses only unless SET_RSS_FIELDS grants the ports (rev
# 4+; from rev 7 only with the device's DCR0 capability): ask for them, and
# say what the device answered (a refusal leaves the L3 hash, and the test
# then fails its UDP case for that reason).
ks_udp_rss() {
	local f out
	for f in udp4 udp6; do
		out=$(ethtool -N "$DUT" rx-flow-hash "$f" sdfn 2>&1) ||
			log "xdp_metadata.py: ethtool -N $DUT rx-flow-hash $f sdfn refused: $out"
	done
	log "xdp_metadata.py: $(ethtool -n "$DUT" rx-flow-hash udp4 2>&1 | tr '\n' ' ')"
}

for i in "${!todo[@]}"; do
	t=${todo[$i]}
	[ "$t" = drivers/net/hw/irq.py ] && ks_irq_prepare
	[ "$t" = drivers/net/hw/xdp_metadata.py ] && ks_udp_rss
	ks_run "$t"
	[ "$t" = drivers/net/hw/irq.py ] && ks_irq_restore
	if ks_kernel_broken; then
		ks_oops_exit "$t" "${todo[@]:$((i + 1))}"
	fi
	KS_STUCK=$(ks_stuck)
	if [ -n "$KS_STUCK" ]; then
		ks_oops_exit "$t" "${todo[@]:$((i + 1))}"
	fi
	# A kernel test that downed the DUT and died before its own cleanup
	# would fail the next ones for no reason of theirs.
	ip link set "$DUT" up
	wait_carrier "$DUT" 10 | diag
done

vmx_done
