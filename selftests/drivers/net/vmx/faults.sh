#!/usr/bin/env bash
# faults.sh - fault injection aimed at vmx's own code (debug kernel of
# tools/kernels: FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_STACKTRACE_FILTER).
#
# Only allocations made with vmx's code on the stack can fail: failslab and
# fail_page_alloc get require-start/require-end = the loaded vmx.ko's code
# (its executable sections, from /sys/module/vmx/sections and the ELF
# section sizes; .init/.exit text left out), ignore-gfp-wait=N (GFP_KERNEL
# allocations count too) and, for pages, min-order=0.
#
# Configuration paths, a systematic sweep (the kernel's fail-nth): for
# n = 1, 2, ... the operation runs in a task whose n-th allocation from vmx
# code fails (/proc/self/fail-nth, which honours the stack filter), until it
# runs through without an n-th one: every allocation point of the path
# fails once, in the same order on every run (no randomness at all). Each
# attr's "times" counter tells whether a fault was injected. Paths:
#   probe     bind of the second vmxnet3 to vmx (sysfs bind: the probe runs
#             in the writing task); narrower, see path_probe (two 6.12
#             kernel bugs in ACPI and PCI MSI error paths)
#   open      ip link set up
#   rings     ethtool -G (small rings, to keep the sweep short)
#   channels  ethtool -L combined 1 -> max (raising
#             real_num_{tx,rx}_queues allocates queue kobjects, which can
#             fail too)
#   mtu       ip link set mtu 1500 -> 3000
#   xdp       XDP attach (xdp_pass) and detach
# After each injected run: a refused operation exits non-zero with a
# message and leaves the state (up, MTU, channels, rings, XDP) as it was; an
# operation that went through shows the new state; either way the real
# queue counts equal the channel count (/sys/class/net/IF/queues/tx-*,
# rx-*: a count above the channels is a TX queue without a ring), the
# interface still passes traffic to the peer after the operation is
# undone, and no kernel splat (BUG/WARNING/KASAN/lockdep/DMA-API) appeared
# since the run started.
#
# Data paths, probability 100 while a load runs, then off:
#   rxrefill  fail_page_alloc, aimed at the page_pool's page allocations
#             only (__page_pool_alloc_pages_slow on the stack; skb heads
#             must not fail), while the peer floods UDP to a socket on the
#             DUT that never reads (it holds the RX pages, so the page_pool
#             must go to the page allocator) until RX queue 0 is empty and
#             dead (no frame, dev_rx_nobuf and rx-alloc-fail growing);
#             then the flood stops, the injection stops, 2 s of quiet,
#             and 20 datagrams must all arrive with dev_rx_nobuf
#             unchanged: the ring refilled on its own (QEMU's device
#             interrupts for each frame it drops, so with the flood still
#             running a driver without a retry recovered too), while the
#             DUT transmitted nothing (tx_packets unchanged: no
#             TX-completion interrupt restarted it); queue 0's
#             rx-alloc-fail (qstats) grew: the failures are counted.
#   txlin     failslab + fail_page_alloc while tx_frags.py sends
#             17-fragment datagrams the driver must linearize: the
#             linearization fails, the datagrams are dropped and counted;
#             afterwards the same datagrams arrive intact.
# The TX DMA mapping itself cannot be made to fail by an allocator fault
# (dma-direct allocates nothing): the swiotlb4k groups (swiotlb_small.sh)
# run out of bounce buffers for real, also on the debug kernel.
#
# At the end: kmemleak (when the kernel has it) reports nothing with vmx in
# its backtrace after the driver is unloaded, and no page_pool of vmx is
# left holding pages (pp_check.py).
#
# Environment: VMX_FAULTS (paths to run, default all above), VMX_FAULT_MAX
# (highest n tried per path, default 400: a path with more allocation
# points is cut there and says so), VMX_FAULT_FROM (first n, default 1; a
# window that starts past the path's last allocation point fails: it
# tested nothing), VMX_FAULT_VERBOSE (the attrs' verbose: 1 one line per
# fault, 2 with a stack trace), VMX_FAULT_STRIDE and VMX_FAULT_HEAD (a
# sampled sweep: every point of the first HEAD (default 16), then every
# STRIDE-th, default 1 = every point; VMX_FAULT_SEED, default 1, picks
# which of each STRIDE: the same points on every run), VMX_FAULT_WITHIN (a kernel function, e.g.
# netif_set_real_num_rx_queues: only allocations with it on the stack
# count and fail, instead of all with vmx's code on the stack).
# On the debug kernel n does not name the same allocation on every run:
# the kernel's own debug allocations made with vmx's code on the stack
# shift the count by tens (one ethtool -L combined 1 -> 2 counted 880 to
# 990 of them, run to run), so a point deep in a path is aimed at with
# VMX_FAULT_WITHIN, whose count stays small (about 20 allocations in
# netif_set_real_num_rx_queues adding one RX queue). With about 15 s per
# point there (the checks after each run under KASAN, lockdep and TCG),
# the debug group samples (VMX_FAULT_STRIDE): the first points of a path
# are the structures it allocates before the ring fills, which all fail
# alike.
# Topology: tools/vm.sh --kernel debug --nic vmxnet3 --nic vmxnet3 --nic virtio
# vmx-timeout: 3600
# The driver's lines for an allocation refused (open, ethtool -G/-L, MTU,
# XDP detach, probe):
# vmx-expects-log: cannot allocate or DMA-map the rings even at [0-9]+/[0-9]+ RX buffers \(-[0-9]+\): out of memory or of DMA mapping space \(bounce buffers\?\)
# vmx-expects-log: RX rings reduced from [0-9]+/[0-9]+ to [0-9]+/[0-9]+: not enough memory or DMA mapping space \(bounce buffers\?\) for the configured sizes
# vmx-expects-log: MTU [0-9]+ not applied \(-[0-9]+\), keeping [0-9]+
# vmx-expects-log: keeping the XDP buffer layout
# vmx-expects-log: probe with driver vmx failed with error -[0-9]+
# The injection's own line (with VMX_FAULT_VERBOSE=2 a stack dump follows
# it) and the page allocator's warning for a refused page (a stack dump
# follows it): only those lines are allowed, each with the "Call Trace:"
# of its own dump (lib/log.sh); any other trace still fails.
# vmx-expects-log: FAULT_INJECTION: forcing a failure\.
# vmx-expects-log: .+: page allocation failure: order:[0-9]+, mode:0x[0-9a-f]+\([^)]*\), nodemask=.*
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/xdp_lib.sh"

FI_MAX=${VMX_FAULT_MAX:-400}
FI_FROM=${VMX_FAULT_FROM:-1}
FI_STRIDE=${VMX_FAULT_STRIDE:-1}
FI_HEAD=${VMX_FAULT_HEAD:-16}
FI_SEED=${VMX_FAULT_SEED:-1}
PATHS=${VMX_FAULTS:-open rings channels mtu xdp rxrefill txlin probe}
SINK_PORT=9998

if ! have_fi > "$VMX_TMP/fi.out" 2>&1; then
	skip "fault injection" "kernel $(uname -r) has no fault injection with a stack filter: $(cat "$VMX_TMP/fi.out") (run on tools/vm.sh --kernel debug)"
	vmx_done
fi

xdp_setup
# no injection outlives the test, however it ends
trap 'fi_off 2>/dev/null; _vmx_on_exit' EXIT

# fi_left: faults both attrs may still inject (each injection counts down).
fi_left() {
	local a t s=0
	for a in $FI_ATTRS; do read -r t < "$FI/$a/times"; s=$((s + t)); done
	echo $s
}

# fi_nth N CMD...: run CMD (exec'd, in a task of its own) with its N-th
# allocation from vmx code failing. Output in $VMX_TMP/fi.out; sets
# FI_INJECTED (faults injected: 0 when CMD made fewer than N).
FI_INJECTED=0
fi_nth() {
	local n=$1 t0 rc
	shift
	t0=$(fi_left)
	( echo "$n" > /proc/self/fail-nth && exec "$@" ) > "$VMX_TMP/fi.out" 2>&1
	rc=$?
	FI_INJECTED=$((t0 - $(fi_left)))
	return $rc
}

# splats_since MARK: kernel log lines after the line MARK that report a
# kernel problem whoever caused it (the test's expected lines aside).
splats_since() {
	dmesg 2>/dev/null | awk -v m="$1" 'f { print } index($0, m) { f = 1 }' |
		grep -E 'BUG:|WARNING:|KASAN|Oops|general protection|kernel BUG|UBSAN|DMA-API|possible (circular|recursive)|lock(dep| held)|inconsistent lock|suspicious RCU|unreferenced object|refcount_t:|list_(add|del) corruption|could not restore|device refused activation|restart failed'
}

# ------------------------------------------------------------ state
ch_now() { ethtool -l "$DUT" | sed -n '/Current/,$p' | sed -n 's/^Combined:[[:space:]]*//p'; }
ch_max() { ethtool -l "$DUT" | sed -n '/maximums/,/Current/p' | sed -n 's/^Combined:[[:space:]]*//p'; }
rings_now() {
	ethtool -g "$DUT" | sed -n '/Current/,$p' | awk '
		$1 == "RX:" { r = $2 } $1 == "RX" && $2 == "Jumbo:" { j = $3 } $1 == "TX:" { t = $2 }
		END { print r "/" j "/" t }'
}
nqueues() { local q=(/sys/class/net/"$DUT"/queues/"$1"-*); echo ${#q[@]}; }
is_up() { local f; read -r f < "/sys/class/net/$DUT/flags"; echo $((f & 1)); }

# dut_state: what an operation may change, one line.
dut_state() {
	echo "up=$(is_up) mtu=$(cat "/sys/class/net/$DUT/mtu") ch=$(ch_now) rings=$(rings_now) xdp=$(xdp_state "$DUT" | cut -d' ' -f1)"
}

# queues_consistent: real_num_tx_queues and real_num_rx_queues (their
# sysfs queue directories) equal the channel count the driver runs with.
queues_consistent() {
	local c t r
	c=$(ch_now) t=$(nqueues tx) r=$(nqueues rx)
	[ "$t" = "$c" ] && [ "$r" = "$c" ] && return 0
	echo "channels $c but real_num_tx_queues $t, real_num_rx_queues $r"
	return 1
}

# alive: carrier (when up) and a ping to the peer; a down interface is
# brought up for the ping and down again.
alive() {
	local was
	was=$(is_up)
	[ "$was" = 1 ] || ip link set "$DUT" up || return 1
	wait_carrier "$DUT" 10 && dut_ping -c 2 -i 0.2 "$PEER_IP"
	local rc=$?
	[ "$was" = 1 ] || ip link set "$DUT" down
	return $rc
}

# ------------------------------------------------------------ the sweep
# fi_next N: the point after N: N + 1 within the first FI_HEAD, then the
# next of every FI_STRIDE-th (the one FI_SEED picks).
fi_next() {
	local n=$(($1 + 1)) h=$((FI_FROM + FI_HEAD)) off
	if [ "$FI_STRIDE" -le 1 ] || [ "$n" -lt "$h" ]; then echo $n; return; fi
	off=$((FI_SEED % FI_STRIDE))
	echo $((n + (FI_STRIDE + off - (n - h) % FI_STRIDE) % FI_STRIDE))
}

# fi_span PREV ENDED: how many points the path had, "N" when every point
# was tried, "PREV..ENDED-1" when sampling skipped some.
fi_span() {
	if [ $(($2 - $1)) -le 1 ]; then echo $(($2 - 1)); else echo "$1..$(($2 - 1))"; fi
}

# fi_sampled: how the sweep was sampled (empty: every point).
fi_sampled() {
	[ "$FI_STRIDE" -le 1 ] ||
		echo " (sampled: n=$FI_FROM..$((FI_FROM + FI_HEAD - 1)), then every $FI_STRIDE-th, seed $FI_SEED; one point again: VMX_FAULT_FROM=n VMX_FAULT_MAX=n)"
}

# fi_sweep PATH UNDO_FN CMD...: the systematic sweep of one path (see the
# header). UNDO_FN brings the state back after CMD went through. Prints
# one line per injected run; fails on any bad one.
fi_sweep() {
	local path=$1 undo=$2 n s0 want s1 rc mark bad=0 refused=0 done_ok=0 ended= prev=0
	shift 2
	s0=$(dut_state)
	"$@" > "$VMX_TMP/fi.out" 2>&1 || { cat "$VMX_TMP/fi.out"; echo "$path: '$*' fails without any fault"; return 1; }
	want=$(dut_state)
	"$undo" || { echo "$path: undo failed"; return 1; }
	[ "$(dut_state)" = "$s0" ] || { echo "$path: undo left $(dut_state), want $s0"; return 1; }
	echo "$path: '$*': $s0 -> $want$(fi_sampled)"
	for ((n = FI_FROM; n <= FI_MAX; prev = n, n = $(fi_next $n))); do
		mark="vmx-faults: $path n=$n $RANDOM"
		echo "$mark" > /dev/kmsg
		fi_nth "$n" "$@"
		rc=$?
		if [ "$FI_INJECTED" = 0 ]; then
			ended=$n
			if [ $rc != 0 ]; then
				echo "n=$n: no fault injected, yet exit $rc: $(tail -n 2 "$VMX_TMP/fi.out")"
				bad=$((bad + 1))
			fi
			if [ "$n" = "$FI_FROM" ] && [ "$FI_FROM" -gt 1 ]; then
				echo "n=$n: no fault injected at the window's first n (VMX_FAULT_FROM past the path's end): nothing tested"
				bad=$((bad + 1))
			fi
			"$undo" > /dev/null 2>&1
			break
		fi
		s1=$(dut_state)
		local why=
		if [ $rc != 0 ]; then
			refused=$((refused + 1))
			[ -s "$VMX_TMP/fi.out" ] || why+=" refused (exit $rc) without a message;"
			[ "$s1" = "$s0" ] || why+=" refused but the state is $s1;"
			echo "n=$n: refused, exit $rc: $(tail -n 1 "$VMX_TMP/fi.out")"
		else
			done_ok=$((done_ok + 1))
			# a smaller ring after an open that was short of memory is
			# the driver's documented fallback (it says so in the log)
			if [ "$s1" != "$want" ] && ! { [ "$path" = open ] &&
				dmesg | awk -v m="$mark" 'f { print } index($0, m) { f = 1 }' | grep -q 'RX rings reduced'; }; then
				why+=" went through but the state is $s1;"
			fi
			echo "n=$n: went through ($s1)"
		fi
		if ! queues_consistent > "$VMX_TMP/qc.out"; then
			why+=" $(cat "$VMX_TMP/qc.out");"
			# traffic now may crash the kernel (a TX queue without
			# a ring): say so first, then repair
			# (the operation without a fault, and the undo)
			echo "n=$n: BAD: $(cat "$VMX_TMP/qc.out")"
			echo "vmx-faults: $path n=$n bad: $(cat "$VMX_TMP/qc.out")" > /dev/kmsg
			{ "$@" && "$undo"; } > /dev/null 2>&1
		fi
		if [ $rc = 0 ]; then
			"$undo" > "$VMX_TMP/undo.out" 2>&1 || why+=" undo failed: $(tail -n 1 "$VMX_TMP/undo.out");"
		fi
		[ "$(dut_state)" = "$s0" ] || why+=" state after undo $(dut_state);"
		alive > "$VMX_TMP/alive.out" 2>&1 || why+=" no traffic afterwards: $(tail -n 1 "$VMX_TMP/alive.out");"
		splats_since "$mark" > "$VMX_TMP/splat.out"
		[ -s "$VMX_TMP/splat.out" ] && why+=" kernel log: $(head -n 3 "$VMX_TMP/splat.out" | paste -sd' ');"
		if [ -n "$why" ]; then
			echo "n=$n: BAD:$why"
			# (on the console too: a long sweep's output comes at its end)
			echo "vmx-faults: $path n=$n bad" > /dev/kmsg
			bad=$((bad + 1))
			# keep going from a known state if possible
			[ "$(dut_state)" = "$s0" ] || "$undo" > /dev/null 2>&1
		fi
	done
	if [ -z "$ended" ]; then
		echo "$path: cut at n=$FI_MAX (VMX_FAULT_MAX): $refused refused, $done_ok went through, $bad bad"
	else
		echo "$path: $(fi_span $prev $ended) allocation points in vmx code (from n=$FI_FROM): $refused refused, $done_ok went through, $bad bad"
	fi
	[ $bad = 0 ]
}

# ------------------------------------------------------------ paths
RING_BASE="rx 64 rx-jumbo 32 tx 64"
RING_NEW="rx 128 rx-jumbo 64 tx 128"
# (after an open that fell back to smaller rings: the base sizes again)
undo_open() { ip link set "$DUT" down || return 1; ethtool -G "$DUT" $RING_BASE 2>/dev/null; return 0; }
undo_rings() { ethtool -G "$DUT" $RING_BASE; }
undo_channels() { ethtool -L "$DUT" combined 1; }
undo_mtu() { ip link set "$DUT" mtu 1500; }
undo_xdp_attach() { xdp_detach "$DUT"; }
undo_xdp_detach() { xdp_attach "$DUT" xdp_pass; }

path_open() {
	ip link set "$DUT" down || return 1
	fi_sweep open undo_open ip link set "$DUT" up
	local rc=$?
	ip link set "$DUT" up
	wait_carrier "$DUT" 10 || return 1
	return $rc
}
path_rings() { fi_sweep rings undo_rings ethtool -G "$DUT" $RING_NEW; }
path_channels() {
	local m
	m=$(ch_max)
	[ "${m:-1}" -gt 1 ] || { echo "one channel only: nothing to raise"; return 1; }
	ethtool -L "$DUT" combined 1 || return 1
	fi_sweep channels undo_channels ethtool -L "$DUT" combined "$m"
}
path_mtu() { fi_sweep mtu undo_mtu ip link set "$DUT" mtu 3000; }
path_xdp() {
	local rc=0
	fi_sweep xdp-attach undo_xdp_attach ip link set dev "$DUT" xdpdrv obj "$(xdp_obj xdp_pass)" sec xdp || rc=1
	xdp_attach "$DUT" xdp_pass || return 1
	fi_sweep xdp-detach undo_xdp_detach ip link set dev "$DUT" xdpdrv off || rc=1
	xdp_detach "$DUT"
	return $rc
}

# probe: the second vmxnet3 device, unbound and bound again through sysfs
# with the n-th allocation failing in the probe. Narrower than the other
# paths: only allocations within 16 frames of vmx's code, and none under
# the PCI MSI or ACPICA code (reject_range). Two bugs of the 6.12 kernel itself show up otherwise
# (found here, not vmx's): an allocation failing in ACPICA's _PRT
# evaluation (pci_enable_device, about 20 frames deep) leaves a freed
# operand attached ("ACPI Error: AE_NO_MEMORY, Could not update object
# reference count", then a KASAN slab-use-after-free in
# acpi_ns_get_attached_object at every later enable or disable of the
# device); one failing in msix_setup_interrupts unmaps the MSI-X table
# twice (pci_free_msi_irqs, then msix_capability_init's out_unmap with
# NULL: WARNING at arch/x86/mm/ioremap.c:461 iounmap).
PROBE_DEPTH=16

# reject_range: "START END" from the PCI MSI code (drivers/pci/msi, linked
# first) to the end of ACPICA (drivers/acpi/acpica): in this link order
# nothing vmx's own allocations pass through lies in between (checked: at
# most 4 MB; ACPICA's init code beyond _etext left out), from
# /proc/kallsyms.
reject_range() {
	awk 'NF == 3 && $3 == "_etext" { e = $1 }
		NF == 3 && $2 ~ /^[Tt]$/ {
		if ($3 ~ /^(pci_enable_msi|pci_msix_vec_count|pci_alloc_irq_vectors_affinity|__pci_enable_msix_range)$/) m[++nm] = $1
		if ($3 ~ /^acpi_(ut|ns|ps|ds|ex|ev|hw|tb|rs)_/) a[++na] = $1
	} END { if (e != "") for (i in a) if (a[i] >= e) delete a[i]; for (i in m) print "m", m[i]; for (i in a) print "a", a[i] }' /proc/kallsyms |
		sort -k2 | awk '$1 == "m" && lo == "" { lo = $2 } $1 == "a" { hi = $2 }
			END { if (lo == "" || hi == "" || lo ~ /^0+$/) exit 1; print lo, hi }' |
		{ read -r lo hi || return 1
		  lo=$((16#$lo)) hi=$((16#$hi + 0x2000))
		  [ $((hi - lo)) -gt 0 ] && [ $((hi - lo)) -lt $((4 << 20)) ] ||
			{ echo "PCI MSI to ACPICA span $((hi - lo)) bytes: not the link order expected" >&2; return 1; }
		  printf '%#x %#x\n' "$lo" "$hi"; }
}

# probe_narrow / probe_wide: the probe's settings on, and back.
probe_narrow() {
	local a r
	read -r -a r <<<"$(reject_range)"
	[ ${#r[@]} = 2 ] || { echo "PCI MSI and ACPICA code not found in /proc/kallsyms"; return 1; }
	for a in $FI_ATTRS; do
		fi_set $a stacktrace-depth $PROBE_DEPTH && fi_set $a reject-start "${r[0]}" &&
			fi_set $a reject-end "${r[1]}" || return 1
	done
	echo "probe: stacktrace-depth $PROBE_DEPTH, reject ${r[0]}..${r[1]} (PCI MSI .. ACPICA code)"
}
probe_wide() {
	local a
	for a in $FI_ATTRS; do
		fi_set $a stacktrace-depth 32; fi_set $a reject-start 0; fi_set $a reject-end 0
	done
}
PROBE_DEV=
bound_ifaces() {
	local n
	for n in /sys/bus/pci/devices/"$PROBE_DEV"/net/*; do
		[ -e "$n" ] && printf '%s ' "${n##*/}"
	done
}
_bound() { [ -n "$(bound_ifaces)" ]; }
path_probe() {
	local n rc bad=0 refused=0 ok_=0 mark ended='' drv=/sys/bus/pci/drivers/$VMX_DRIVER_NAME why prev=0
	local -a gone
	PROBE_DEV=$(basename "$(readlink -f "/sys/class/net/$DUT2/device")")
	echo "probe: device $PROBE_DEV ($DUT2)$(fi_sampled)"
	probe_narrow || return 1
	for ((n = FI_FROM; n <= FI_MAX; prev = n, n = $(fi_next $n))); do
		# the interface's error counters go with the unbind: checked
		# first, as an unload's (the last bind's faults included)
		read -r -a gone <<< "$(bound_ifaces)"
		dut_retire_ifaces unbind "${gone[@]}"
		echo "$PROBE_DEV" > "$drv/unbind" || { echo "unbind failed"; return 1; }
		mark="vmx-faults: probe n=$n $RANDOM"
		echo "$mark" > /dev/kmsg
		fi_nth "$n" sh -c "echo $PROBE_DEV > $drv/bind"
		rc=$?
		why=
		if [ "$FI_INJECTED" = 0 ]; then
			ended=$n
			[ $rc = 0 ] && [ -n "$(bound_ifaces)" ] || { echo "n=$n: no fault, yet bind exit $rc, interfaces '$(bound_ifaces)'"; bad=$((bad + 1)); }
			break
		fi
		if [ $rc != 0 ]; then
			refused=$((refused + 1))
			[ -z "$(bound_ifaces)" ] || why+=" bind refused but interface $(bound_ifaces) exists;"
			echo "n=$n: refused: $(tail -n 1 "$VMX_TMP/fi.out")"
			echo "$PROBE_DEV" > "$drv/bind" 2> "$VMX_TMP/bind.out" || why+=" bind without a fault failed: $(cat "$VMX_TMP/bind.out");"
		else
			ok_=$((ok_ + 1))
			echo "n=$n: went through ($(bound_ifaces))"
		fi
		wait_for 10 _bound
		[ -n "$(bound_ifaces)" ] || why+=" no interface after a clean bind;"
		alive > "$VMX_TMP/alive.out" 2>&1 || why+=" $DUT: no traffic: $(tail -n 1 "$VMX_TMP/alive.out");"
		splats_since "$mark" > "$VMX_TMP/splat.out"
		[ -s "$VMX_TMP/splat.out" ] && why+=" kernel log: $(head -n 3 "$VMX_TMP/splat.out" | paste -sd' ');"
		[ -z "$why" ] || { echo "n=$n: BAD:$why"; bad=$((bad + 1)); echo "vmx-faults: probe n=$n bad" > /dev/kmsg; }
	done
	probe_wide
	[ -e "/sys/bus/pci/devices/$PROBE_DEV/driver" ] || echo "$PROBE_DEV" > "$drv/bind"
	if [ -z "$ended" ]; then
		echo "probe: cut at n=$FI_MAX: $refused refused, $ok_ went through, $bad bad"
	else
		echo "probe: $(fi_span $prev $ended) allocation points in vmx code: $refused refused, $ok_ went through, $bad bad"
	fi
	[ $bad = 0 ]
}

# rxrefill (see the header). The flood: a Python loop sending datagrams
# from the peer (a bash /dev/udp loop was too slow to drain the pool).
# rx0_alloc_fail: RX queue 0's page allocation failures (qstats
# rx-alloc-fail of queue 0; ethtool -S has no such counter).
rx0_alloc_fail() {
	nl_qstats queue "$DUT" | awk '$1 == "rx" && $2 == 0 && $3 == "rx-alloc-fail" { v = $4 } END { print v + 0 }'
}
_rx_moved() { [ "$(stat_of "$DUT" rx_packets)" != "$1" ]; }
# _rx_grew FROM N: rx_packets at least FROM + N
_rx_grew() { [ "$(stat_of "$DUT" rx_packets)" -ge $(($1 + $2)) ]; }
# _rx_dead NOBUF0 FAIL0: no frame for a whole second while the flood runs,
# the device dropped frames for want of buffers (dev_rx_nobuf above
# NOBUF0) and the refill failed (queue 0's rx-alloc-fail above FAIL0): a
# pause of the sender, or frames dropped for want of an skb, is not a
# dead ring.
_rx_dead() {
	local a b
	a=$(stat_of "$DUT" rx_packets); sleep 1; b=$(stat_of "$DUT" rx_packets)
	[ "$a" = "$b" ] && [ "$(estat "$DUT" dev_rx_nobuf)" -gt "$1" ] &&
		[ "$(rx0_alloc_fail)" -gt "$2" ]
}
path_rxrefill() {
	local sink flood f0 f1 tx0 rx0 nb0 nb1 nb2 rc=0
	have_qstats || { echo "no qstats-get in $(uname -r): rx-alloc-fail unreadable"; return 1; }
	# only the page_pool's page allocations fail: with every allocation
	# under vmx's code failing, the skb heads (slab pages) failed too, the
	# frames were dropped and their pages recycled into the ring, which
	# never ran dry (rx_packets stalled, rx-alloc-fail stayed 0, and a
	# driver that never retries the refill passed)
	fi_arm __page_pool_alloc_pages_slow > /dev/null || return 1
	sysctl -qw net.core.rmem_max=268435456
	# nothing on the DUT may transmit: no neighbour lookups, no IPv6
	pexec ip neigh replace "$DUT_IP" lladdr "$(mac_of "$DUT")" dev "$PEER" nud permanent
	sysctl -qw "net.ipv6.conf.$DUT.disable_ipv6=1"
	listen_start "$VMX_TMP/sink.out" bound python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 33, 1 << 28)  # SO_RCVBUFFORCE
s.bind(("0.0.0.0", int(sys.argv[1])))
print("bound", flush=True)
time.sleep(3600)' "$SINK_PORT" || { echo "sink did not start"; return 1; }
	sink=$LISTEN_PID
	f0=$(rx0_alloc_fail)
	nb0=$(estat "$DUT" dev_rx_nobuf)
	bg_start pexec python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a = (sys.argv[1], int(sys.argv[2]))
while True:
    s.sendto(b"vmx-faults", a)' "$DUT_IP" "$SINK_PORT"
	flood=$BG_PID
	wait_for 20 _rx_moved "$(stat_of "$DUT" rx_packets)" || { echo "the flood does not reach $DUT"; rc=1; }
	fi_on fail_page_alloc
	if [ $rc = 0 ] && ! wait_for 300 _rx_dead "$nb0" "$f0"; then
		echo "RX queue 0 never ran dry: rx-alloc-fail (queue 0) $f0 -> $(rx0_alloc_fail), dev_rx_nobuf $nb0 -> $(estat "$DUT" dev_rx_nobuf)"
		rc=1
	fi
	# the flood stops before the injection does: QEMU's device raises an
	# interrupt for every frame it drops for want of a buffer, and that
	# NAPI run refills; with no frame arriving, only the driver's own
	# retry can refill the ring
	bg_stop "$flood"
	sleep 1
	tx0=$(stat_of "$DUT" tx_packets)
	rx0=$(stat_of "$DUT" rx_packets)
	nb1=$(estat "$DUT" dev_rx_nobuf)
	f1=$(rx0_alloc_fail)
	[ $rc = 0 ] && echo "injected: RX queue 0 empty, rx_packets stopped at $rx0, rx-alloc-fail (queue 0) $f0 -> $f1, dev_rx_nobuf $nb0 -> $nb1; flood stopped"
	fi_off
	if [ $rc = 0 ]; then
		# quiet: nothing arrives, nothing is sent; the ring must refill
		sleep 2
		udp_send --ns "$PEER_NS" "$DUT_IP" "$SINK_PORT" 20
		if wait_for 30 _rx_grew "$rx0" 20; then
			echo "injection off, 2 s quiet, 20 datagrams: rx_packets $rx0 -> $(stat_of "$DUT" rx_packets)"
		else
			echo "injection off, 2 s quiet, 20 datagrams: rx_packets $rx0 -> $(stat_of "$DUT" rx_packets), want +20"
			rc=1
		fi
		nb2=$(estat "$DUT" dev_rx_nobuf)
		if [ "$nb2" != "$nb1" ]; then
			echo "dev_rx_nobuf $nb1 -> $nb2 after the injection stopped: the ring was still empty when frames came (no refill retry)"
			rc=1
		fi
		if [ "$(stat_of "$DUT" tx_packets)" != "$tx0" ]; then
			echo "the DUT transmitted meanwhile (tx_packets $tx0 -> $(stat_of "$DUT" tx_packets)): the recovery may have come from a TX completion"
			rc=1
		fi
	fi
	kill "$sink" 2>/dev/null; wait "$sink" 2>/dev/null
	sysctl -qw "net.ipv6.conf.$DUT.disable_ipv6=0"
	ip addr replace "$DUT_IP6/64" dev "$DUT" nodad
	pexec ip neigh del "$DUT_IP" dev "$PEER" 2>/dev/null
	f1=$(rx0_alloc_fail)
	echo "rx-alloc-fail (queue 0) $f0 -> $f1"
	[ "$f1" -gt "$f0" ] || { echo "rx-alloc-fail of queue 0 did not grow"; rc=1; }
	dut_ping -c 5 -i 0.2 "$PEER_IP" || rc=1
	fi_arm > /dev/null || rc=1
	return $rc
}

# txlin: 17-fragment datagrams need linearizing (tx_linearize.sh); with
# vmx's allocations failing they are dropped and counted, then they pass.
TXF=$VMX_LIB_DIR/tx_frags.py
TXLIN_PORT=9124
_udp_bound() { pexec ss -Hlun "sport = :$1" | grep -q .; }
path_txlin() {
	local d0 d1 l0 l1 rc=0 rpid
	d0=$(estat "$DUT" 'tx[0-9]+_drop')
	l0=$(estat "$DUT" 'tx[0-9]+_linearize')
	fi_arm "" > /dev/null || return 1
	fi_on failslab fail_page_alloc
	python3 "$TXF" send "$PEER_IP" $TXLIN_PORT 20 17 > "$VMX_TMP/txf.out" 2>&1
	fi_off
	fi_arm > /dev/null || rc=1
	d1=$(estat "$DUT" 'tx[0-9]+_drop')
	l1=$(estat "$DUT" 'tx[0-9]+_linearize')
	echo "with faults: 20 datagrams of 17 fragments: txN_drop +$((d1 - d0)), txN_linearize +$((l1 - l0))"
	[ $((d1 - d0)) -gt 0 ] || { echo "no drop counted: the linearization did not fail"; rc=1; }
	pexec timeout 90 python3 "$TXF" recv "$PEER_IP" $TXLIN_PORT 20 --frags 17 \
		--timeout 20 > "$VMX_TMP/recv.out" 2>&1 &
	rpid=$!
	_vmx_bg+=("$rpid")
	wait_for 20 _udp_bound $TXLIN_PORT || { echo "receiver did not start"; return 1; }
	python3 "$TXF" send "$PEER_IP" $TXLIN_PORT 20 17 || rc=1
	wait "$rpid" || rc=1
	cat "$VMX_TMP/recv.out"
	return $rc
}

# ------------------------------------------------------------ run
check "fault attrs aimed at vmx's code" fi_arm || { fi_off; vmx_done; }
# small rings keep every sweep short (fewer page-pool bulk allocations)
check "small rings ($RING_BASE)" ethtool -G "$DUT" $RING_BASE

for p in $PATHS; do
	case $p in
	probe)
		if [ -n "$DUT2" ]; then check "probe: every allocation point refused cleanly or recovered" path_probe
		else skip "probe" "needs a second vmxnet3 NIC (the first one carries the traffic checks)"; fi ;;
	open) check "open (ip link set up): every allocation point refused cleanly or recovered" path_open ;;
	rings) check "ring resize (ethtool -G): every allocation point refused cleanly or recovered" path_rings ;;
	channels)
		if [ "$(ch_max)" -gt 1 ]; then
			check "channel change (ethtool -L): every allocation point refused cleanly or recovered, real queue counts = channels" path_channels
		else skip "channel change" "one channel only (--smp 1?)"; fi ;;
	mtu) check "MTU change: every allocation point refused cleanly or recovered" path_mtu ;;
	xdp) check "XDP attach and detach: every allocation point refused cleanly or recovered" path_xdp ;;
	rxrefill) check "RX refill: queue 0 run dry by page allocation failures recovers on its own once they stop (no TX meanwhile)" path_rxrefill ;;
	txlin) check "TX linearize failing: datagrams dropped and counted, then sent intact" path_txlin ;;
	*) fail "unknown fault path '$p' (VMX_FAULTS)" ;;
	esac
done
fi_off
check_pp_settled "no page_pool of vmx holds pages after the paths" 20
vmx_done
