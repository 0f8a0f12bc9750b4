#!/usr/bin/env bash
# run-tests.sh - the vmx test suite: setup, build, then one QEMU guest per
# group of tests, two guests at a time on two cores or more (VMX_JOBS);
# TAP collected under results/.
#
# Usage:
#   tools/run-tests.sh [GROUP...]        run these groups (default: all)
#   tools/run-tests.sh --list            list groups and their tests
#   tools/run-tests.sh --summarize DIR [GROUP...]  the summary of an earlier
#                     run's results directory (its groups, or these), with
#                     nothing set up, built or booted; summary.txt untouched
#   tools/run-tests.sh -h | --help
#
# Groups (kernel, guest configuration):
#   core      6.12, NICs vmxnet3 vmxnet3 virtio on a hub: all core tests
#   core61    6.1,  same NICs: the core tests but mac, multicast, promisc,
#             and XDP actions, redirects, frags, AF_XDP on the old kernel
#   swiotlb   6.12, swiotlb=force (every DMA mapping bounced), with XDP_TX
#             and redirects
#   iommu     6.12, intel-iommu, intel_iommu=on iommu.strict=1
#   intx      6.12, pci=nomsi (legacy INTx interrupts)
#   tap       6.12, vmxnet3 + virtio through vnet_hdr taps on a bridge in a
#             private host netns (large frames, TSO from the peer, LRO; TCP
#             copies of merged and jumbo frames compared byte for byte)
#   xdp       6.12, hub NICs: native XDP (actions, redirect, xdp-bench,
#             churn), AF_XDP copy and zero-copy
#   swiotlb4k 6.12, swiotlb=4096,force: an 8 MB bounce pool, smaller than
#             the default rings want (link, ping, TCP, TX mapping failures)
#   hotplug   6.12, hub NICs each behind a pcie-root-port (--hotplug): device
#             link events (set_link) and hot unplug (device_del) under traffic
#   kselftests 6.12, hub NICs: the kernel's own drivers/net and drivers/net/hw
#             selftests against vmx (NETIF, netns remote), excluded ones SKIP
#             with the reason
# On the project's test device (tools/testdev; vm.sh --nic vmxnet3t), last:
#   msi       6.12, test devices with msix=off (no MSI-X capability): the
#             driver's MSI fallback; link, ping, TCP, XDP actions
#   tdev      6.12, test devices at revision 9, strict, RSS on, 2 queues:
#             revision, ethtool controls, XDP on data-ring frames, RSS,
#             Geneve/VXLAN TSO (DCR0 offers the tunnel bits 2..7), frames
#             with bad checksums from the peer, hash types
#   tdevx     6.12, asynchronous TX + interrupt moderation; fault injection;
#             malformed completions, frames split across polls
#             (tdev_malformed.sh); what vmx tells the stack (tdev_contract.sh);
#             netconsole on a NIC whose one TX queue XDP_TX shares and whose
#             completions each cover a ring pass (netconsole.sh); TX
#             pending at QUIESCE dropped, completed by QUIESCE, completed
#             late (at RESET_DEV) (tdev_quiesce.sh); a TX queue the device
#             stalls past the stack's TX watchdog (tdev_txstall.sh)
#   tdevrev   6.12, one test-device NIC per revision 1..9 (LARGE_BAR offered
#             at 7 and 9), 4 vCPUs; one NIC reports 4 TX / 4 RX queues:
#             XDP shares the stack TX queues (tdev_queues.sh); one completes
#             RX out of order (tdev_ooo.sh); tunnel TSO in offload mode 1 at
#             revisions 4 and 6, MTU 9190 from 6 (tdev_revtraffic.sh);
#             the in-tree vmxnet3 on one NIC per revision, then vmx on 4
#             and 6, with one traffic mix, strict violations by kind
#             (fidelity.sh)
#   tdevpm    6.12, the test device at revision 9, the guest's root in RAM
#             and a swap disk (vm.sh --swap): suspend.sh: suspend (mem,
#             freeze) and hibernation in pm_test mode, then two real
#             hibernations (image restored at once, and by the next boot
#             after a reboot that resets every device), a refused resume
#   benchsmoke on the host, last: tools/bench.sh --quick (the counting
#             benchmark's smoke: every default cell and ndo_xdp_xmit of
#             vmx, vmxnet3 and virtio_net has numbers; its own guest,
#             stock QEMU with the counting plugin)
# Heavier tier, only when named (make test-extra):
#   pm        6.12, stock QEMU: suspend.sh as in tdevpm (core runs its
#             pm_test part on stock QEMU)
#   smp8      6.12, --smp 8, hub NICs: 8 channels, XDP sharing stack queues
#   dkms      6.12, the vmx-dkms package: dpkg -i, DKMS build, switch-over
#   dkms61    6.1,  the same package on the old kernel
#   tdevfull  6.12, as tdev: every core and XDP test
#   tdevtap   6.12, the test device as the vmxnet3 NIC of --tap (revision 9,
#             strict, GSO frames from the tap: type-4 LRO completions)
#   tdevq32   6.12, 32 vCPUs, a NIC with 32 TX / 32 RX queues (rev 6):
#             the extended interrupt block and back to the legacy one
#   tdevdma   6.12, swiotlb=force: tdev_malformed.sh through bounce buffers
# On the debug 6.12 kernel (tools/kernels: KASAN, lockdep, kmemleak,
# DMA-API debug, fault injection; make kernels builds it, make test-debug
# runs these), only when named:
#   debug     debug, hub NICs: the core tests
#   xdpdebug  debug, hub NICs: the XDP tests
#   faultsdebug debug, hub NICs: faults.sh (failslab/fail_page_alloc aimed
#             at vmx: probe, open, rings, channels, MTU, XDP, RX refill,
#             TX linearize; each sweep's first 16 points, then every 29th)
#   hotplugdebug debug, NICs behind root ports: link_events.sh,
#             hotplug.sh (device_del under traffic)
#   dmadebug  debug, swiotlb=4096,force: swiotlb_small.sh (TX mapping
#             failures for real, under DMA-API debug)
#   tdevdebug debug, the test device's async-TX and fault NICs:
#             tdev_async.sh, tdev_faults.sh, tdev_malformed.sh (malformed
#             completions and split frames under KASAN and DMA-API debug)
#   tdevdebug2 debug, two clean test-device NICs: tdev_datarring.sh
#   pmdebug   debug, the RAM root: suspend.sh (mem, freeze and disk in
#             pm_test mode; no swap disk: no virtio_blk in that kernel)
#   The driver is built (make modules-debug) and checked (make check-debug)
#   against the debug tree first; the guests boot with kasan_multi_shot,
#   no5lvl (see DEBUG_OPTS) and 3 GB; test timeouts are tripled (VMX_TIMEOUT_SCALE); guest-suite.sh
#   scans kmemleak after every test.
# On the newest kernel Debian ships as source (tools/kernels/newest.sh: 7.x,
# non-debug; make kernel-newest builds it), only when named:
#   newest    newest, hub NICs: the core tests
#   xdpnewest newest, hub NICs: the XDP tests
#   ksftnewest newest, hub NICs: the newest kernel's own drivers/net tests
#             (its own copies: tools/kselftests-install.sh --newest)
#   ksftnewtd newest, test-device NICs (RSS, UDP RSS capability): its
#             hw/xdp_metadata.py
#   The driver is built (make modules-newest) and checked (make
#   check-newest) against its tree first.
# Every group boots with --guest-monitor: tests reach the QEMU monitor with
# lib.sh's hmp ("set_link nic1 off", "device_del nic2" under --hotplug).
#
# Environment:
#   VMX_DRIVER=vmx|vmxnet3  driver under test (default vmx). vmxnet3 runs the
#                     suite against the in-tree driver, for reference; the
#                     build is skipped then.
#   TESTS="a.sh b.sh" run only these tests (in the selected groups).
#   SKIP_SETUP=1      do not run tools/setup.sh.
#   SKIP_BUILD=1      do not run make.
#   SKIP_CHECK=1      do not run make check (W=1 + sparse; otherwise run
#                     after the build, before any guest; a warning counts
#                     as one failure).
#   RESULTS=DIR       results directory (default results/<date-time>).
#   VERBOSE=1         copy every guest console to stdout.
#   VMX_TCG_THREAD=single|multi  TCG threading of the guests (default here:
#                     single; multi-threaded TCG can race with the kernel's
#                     int3 text patching: static keys, BPF dispatcher).
#   VMX_JOBS=N        guests at once (default: the number of cores, at most
#                     2; a value given is used as is). With single-threaded
#                     TCG a guest keeps one core busy, so two cores run
#                     two groups side by side; one
#                     while the test device's QEMU builds; benchsmoke
#                     always alone, last. Tests must pass with a guest
#                     beside them: a test that needs a quiet machine is a
#                     defect of the test.
#   VMX_APPEND="..."  extra guest kernel arguments for every group, e.g.
#                     "slub_debug=FZPU page_poison=1 kfence.sample_interval=5"
#                     when hunting a memory corruption.
#   VMX_*             passed on into the guests (see lib.sh).
#   VMX_COVERAGE=DIR  coverage on (make coverage, tools/coverage/README.md):
#                     every guest under the vmxcount plugin, records in DIR;
#                     test timeouts doubled (group_scale).
#
# Every group names its mode (VMX_MODE in its env: msix, msi, intx,
# swiotlb, iommu, hotplug, monitor, testdev); mode.sh runs first and proves
# it, or the rest of the group is not run. Each group also gets kernel_log, the kernel
# log outside the tests' own windows (boot, between tests, after the last).
# Tests fail on bad kernel log lines and non-zero error counters (read
# before every unload and at vmx_done); "# vmx-expects: resets<=N",
# "bad_desc<=N" / "# vmx-expects-log: REGEX" header
# lines declare what a test causes on purpose (lib/log.sh). On the test device every test
# must also leave its strict-mode violation count where it was (guest-suite.sh;
# "# vmx-expects: violations" when a test causes them on purpose).
#
# The test device's QEMU is built (tools/testdev/build.sh: about 11 minutes
# from scratch, seconds when cached in /var/cache/vmx-testdev) in the
# background, niced, while the stock-QEMU groups run one at a time; the
# test-device groups wait for it and start after every other selected
# group has started. Progress lines carry the group's name ("[core]")
# when guests run side by side; the summary keeps the groups' order.
#
# Results: RESULTS/check.log (make check), RESULTS/testdev-build.log,
# RESULTS/<group>/console.log
# (guest console), <test>.log (TAP),
# <test>.rc ("exit-status seconds"), guest-info.txt, dmesg.txt; results/latest
# points to the newest run. Under each failing subtest the summary shows
# the last four diagnostic lines it printed. Subtests are counted: every "ok"/"not ok" line of
# every test; a test that crashed, timed out, exited non-zero without a
# failing subtest, or never ran (guest crash, missing kernel, failed build)
# adds one failure. A SKIP ("ok N CHECK # SKIP reason") counts as skipped
# only when selftests/drivers/net/vmx/expected-skips lists it for the group
# and test; any other SKIP is a failure ("unexpected SKIP", VMX_DRIVER=vmx
# only). After the per-test lines, the skips grouped by reason. Then
# "time: build Ns, check Ns, <group> Ns, ..." and the
# last line, "N passed, N failed, N skipped"; the exit status is 0 only
# when nothing failed.
#
# Examples:
#   VMX_DRIVER=vmxnet3 tools/run-tests.sh core
#   TESTS="ping.sh tcp.sh" tools/run-tests.sh core core61
set -u

TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJ=$(cd "$TOOLS_DIR/.." && pwd)
TESTDIR=selftests/drivers/net/vmx
export VMX_DRIVER=${VMX_DRIVER:-vmx}
export VMX_TCG_THREAD=${VMX_TCG_THREAD:-single}

# qstats_down.sh last: on a driver with the NULL queue bug it oopses.
CORE_TESTS="load_unload.sh link.sh ping.sh tcp.sh udp.sh vlan.sh mac.sh
	multicast.sh promisc.sh mtu.sh refuse.sh ethtool.sh offloads.sh reconfig.sh
	revision.sh tx_linearize.sh ethtool_ctl.sh suspend.sh mtu_order.sh qstats_down.sh"
# DMA-mapping checks: the data paths and the setup/teardown paths.
# Load/unload loops (about 2.5 s a cycle on TCG, 2 loops of N plus 5
# unbind/binds) are few in make test: 3 or 4 per group here, 20 on the
# debug kernel (KASAN, kmemleak), where a leak per cycle shows.
DMA_TESTS="ping.sh tcp.sh mtu.sh load_unload.sh"
DMA_ENV="VMX_LOAD_LOOPS=3;VMX_TCP_MTUS=1500 9000"
HUB3="--nic vmxnet3 --nic vmxnet3 --nic virtio"

# Per group: kernel, vm.sh options, tests, and ";"-separated VAR=VALUE
# settings passed into the guest.
# netconsole.sh last: after it the next test found no peer NIC ("no
# virtio_net interface for the peer"; its socat, started through a shell
# function, seems to keep the peer netns alive; not fixed yet)
XDP_TESTS="xdp_basic.sh xdp_redirect.sh xdp_bench.sh xdp_robust.sh
	xdp_features.sh qstats_xdp.sh xdp_meta.sh xdp_frags.sh xdp_rxmeta.sh
	netconsole.sh"

ALL_GROUPS=(core core61 swiotlb iommu intx tap xdp swiotlb4k
	hotplug kselftests msi tdev tdevx tdevrev tdevpm benchsmoke)
# The heavier tier (make test-extra) and the debug kernel's groups (make
# test-debug): run only when named.
DEBUG_GROUPS=(debug xdpdebug faultsdebug dmadebug tdevdebug tdevdebug2 hotplugdebug pmdebug)
NEWEST_GROUPS=(newest xdpnewest ksftnewest ksftnewtd)
EXTRA_GROUPS=(pm smp8 dkms dkms61 tdevfull tdevtap tdevq32 tdevdma "${DEBUG_GROUPS[@]}" "${NEWEST_GROUPS[@]}")
declare -A G_KERNEL G_OPTS G_TESTS G_ENV
G_KERNEL[core]=6.12;    G_OPTS[core]=$HUB3;   G_TESTS[core]=$CORE_TESTS
G_ENV[core]="VMX_MODE=msix monitor;VMX_LOAD_LOOPS=4;VMX_LINK_LOOPS=10"
# On 6.1 the compat layer is what differs: probe/remove, data path, ethtool
# and feature ops, MTU/reset paths. The RX-filter tests (mac, multicast,
# promisc) and VLAN filtering (vlan) run the same driver code as on 6.12
# and stay in core. 6.1's in-tree vmxnet3 has no XDP at all; vmx's compat
# layer is what runs XDP there. TCP at 1500 and 9000 (3000 is the same
# code).
G_KERNEL[core61]=6.1;   G_OPTS[core61]=$HUB3
G_TESTS[core61]="load_unload.sh link.sh ping.sh tcp.sh mtu.sh ethtool.sh
	offloads.sh ethtool_ctl.sh xdp_basic.sh xdp_redirect.sh xdp_meta.sh
	xdp_frags.sh xdp_rxmeta.sh xdp_xsk.sh"
G_ENV[core61]="VMX_MODE=msix monitor;VMX_LOAD_LOOPS=3;VMX_LINK_LOOPS=5;VMX_TCP_MTUS=1500 9000"
G_KERNEL[swiotlb]=6.12; G_OPTS[swiotlb]="$HUB3 --append swiotlb=force"
# With XDP_TX and ndo_xdp_xmit mapping and syncing through bounce buffers.
G_TESTS[swiotlb]="$DMA_TESTS xdp_basic.sh xdp_redirect.sh"
G_ENV[swiotlb]="VMX_MODE=msix swiotlb monitor;$DMA_ENV"
G_KERNEL[iommu]=6.12;   G_OPTS[iommu]="$HUB3 --iommu"
G_TESTS[iommu]=$DMA_TESTS;   G_ENV[iommu]="VMX_MODE=msix iommu monitor;$DMA_ENV"
G_KERNEL[intx]=6.12;    G_OPTS[intx]="$HUB3 --append pci=nomsi"
G_TESTS[intx]="ping.sh tcp.sh link.sh load_unload.sh"
G_ENV[intx]="VMX_MODE=intx monitor;VMX_LOAD_LOOPS=3;VMX_TCP_MTUS=1500 9000;VMX_LINK_LOOPS=5"
G_KERNEL[tap]=6.12;     G_OPTS[tap]="--tap"
G_TESTS[tap]="lro.sh tcp.sh ping.sh"
G_ENV[tap]="VMX_MODE=msix monitor"
# Native XDP: every action, both redirect targets, xdp-bench, churn.
# AF_XDP copy and zero-copy (xdp_xsk.sh) last: run before netconsole.sh in
# one guest, netconsole.sh saw none of its messages arrive (not understood
# yet).
G_KERNEL[xdp]=6.12;     G_OPTS[xdp]=$HUB3;    G_TESTS[xdp]="$XDP_TESTS xdp_xsk.sh"
# 150 churn cycles (600 attach/replace/detach operations; 500 cycles in
# tdevfull, make test-extra).
G_ENV[xdp]="VMX_MODE=msix monitor;VMX_XDP_CYCLES=150"
# Hot unplug and device link events: NICs behind pcie-root-ports; the tests
# drive QEMU's monitor through hmp (every group has --guest-monitor).
G_KERNEL[hotplug]=6.12; G_OPTS[hotplug]="$HUB3 --hotplug"
G_TESTS[hotplug]="link_events.sh hotplug.sh"
G_ENV[hotplug]="VMX_MODE=msix hotplug monitor"
# Eight queue pairs (mode msix then wants 8 + 2 vectors).
G_KERNEL[smp8]=6.12;    G_OPTS[smp8]="$HUB3 --smp 8"
G_TESTS[smp8]="channels8.sh"; G_ENV[smp8]="VMX_MODE=msix monitor"
# A bounce pool smaller than the default rings want (8 MB): the driver opens
# with smaller rings and says so; data path and TX mapping failures.
G_KERNEL[swiotlb4k]=6.12; G_OPTS[swiotlb4k]="$HUB3 --append swiotlb=4096,force"
G_TESTS[swiotlb4k]="swiotlb_small.sh"
G_ENV[swiotlb4k]="VMX_MODE=msix swiotlb monitor"
# The kernel's own driver tests (6.12 ones, so 6.12 only).
G_KERNEL[kselftests]=6.12; G_OPTS[kselftests]=$HUB3
G_TESTS[kselftests]="kselftests.sh"; G_ENV[kselftests]="VMX_MODE=msix monitor"
# The project's test device (tools/testdev) with vm.sh's defaults for it:
# max-revision=9, rss=on, strict=on. MSI only: no MSI-X capability, so the
# driver falls back to one MSI vector.
G_KERNEL[msi]=6.12
G_OPTS[msi]="--nic vmxnet3t:msix=off --nic vmxnet3t:msix=off --nic virtio"
G_TESTS[msi]="link.sh ping.sh tcp.sh xdp_basic.sh"
G_ENV[msi]="VMX_MODE=msi testdev monitor;VMX_TCP_MTUS=1500 9000"
# The highest revision, strict checks, RSS over 2 queues (--smp 2): what of
# the core and XDP suites fits in about 12 minutes; tdevfull runs them all.
# DCR0 offers the tunnel offloads (bits 2..7; tunnel_tso.sh), nothing else.
# xdp_frags.sh here too: multi-buffer XDP_TX reaches a device that counts
# every frame longer than it sends (strict tx-oversize).
TDEV_HUB3="--nic vmxnet3t:dcr0=0xfc,ptcr0=0x80000000 --nic vmxnet3t:dcr0=0xfc,ptcr0=0x80000000 --nic virtio --smp 2"
G_KERNEL[tdev]=6.12;    G_OPTS[tdev]=$TDEV_HUB3
G_TESTS[tdev]="revision.sh ping.sh tcp.sh ethtool_ctl.sh xdp_basic.sh
	xdp_redirect.sh tdev_datarring.sh tdev_rss.sh qstats_xdp.sh xdp_features.sh
	xdp_rxmeta.sh xdp_xsk.sh tunnel_tso.sh tdev_lro_hostile.sh tdev_csum.sh
	xdp_frags.sh"
G_ENV[tdev]="VMX_MODE=msix testdev monitor;VMX_EXPECT_REV=9"
# The device completing TX later than the doorbell, each queue 300 us
# later than the one before, with interrupt moderation (first NIC), and
# faults: on command to the first NIC, at a seeded rate on the second
# (every kind: link flaps, refused ACTIVATEs and eop-break too, testdev
# patch 0016); TX completed 1 s late (third); one TX queue shared by XDP
# and one completion per ring pass, 2 ms after the doorbell (fourth,
# netconsole.sh: inside netpoll's one-jiffy spin); then one NIC per quiesce-tx
# behaviour (drop, complete, late), TX processed 100 ms after the doorbell
# (five times vmx's 20 ms settle wait at close, so a burst is still pending
# at QUIESCE), late ones 10 s after QUIESCE (long after vmx would have
# freed its rings, had it not reset the device; tdev_quiesce.sh); last a
# NIC that serves TX 20 s after the doorbell, a stall the stack's 5 s TX
# watchdog sees (tdev_txstall.sh).
G_KERNEL[tdevx]=6.12
G_OPTS[tdevx]="--nic vmxnet3t:tx-delay-us=200,tx-delay-step-us=300,intr-min-gap-us=100 --nic vmxnet3t:fault-rate=2000,fault-seed=13,fault-kinds=0x1ff --nic vmxnet3t:tx-delay-us=1000000 --nic vmxnet3t:max-tx-queues=1,tx-comp-batch=on,tx-delay-us=2000 --nic vmxnet3t:tx-delay-us=100000,quiesce-tx=drop --nic vmxnet3t:tx-delay-us=100000,quiesce-tx=complete --nic vmxnet3t:tx-delay-us=100000,quiesce-tx=late,quiesce-late-us=10000000 --nic vmxnet3t:tx-delay-us=20000000 --nic virtio"
G_TESTS[tdevx]="tdev_async.sh tdev_faults.sh tdev_malformed.sh tdev_contract.sh
	netconsole.sh tdev_quiesce.sh tdev_txstall.sh"
G_ENV[tdevx]="VMX_MODE=msix testdev monitor"
# One test-device NIC per revision (1, 3, 4, 6, 7, 9, 9 with capabilities
# and disabled offloads, 6 with 4 queues, 9 asking for RX producer writes
# with 256-byte RX data ring entries, 9 completing RX out of order):
# negotiation and what each revision gates.
TDEV_REV_NICS="--nic vmxnet3t:max-revision=1 --nic vmxnet3t:max-revision=3 --nic vmxnet3t:max-revision=4 --nic vmxnet3t:max-revision=6 --nic vmxnet3t:max-revision=7,dcr0=0x10203 --nic vmxnet3t:max-revision=9,link-speed=25000"
G_KERNEL[tdevrev]=6.12
G_OPTS[tdevrev]="$TDEV_REV_NICS --nic vmxnet3t:max-revision=9,dcr0=0x10203,ptcr0=0x80000000,disabled-offloads=3 --nic vmxnet3t:max-revision=6,max-tx-queues=4,max-rx-queues=4 --nic vmxnet3t:max-revision=9,update-rx-prod=on,rxdata-size=256 --nic vmxnet3t:dcr0=0x20000,ptcr0=0x20000,ooo-rx=on --nic virtio --smp 4"
G_TESTS[tdevrev]="revisions.sh tdev_queues.sh tdev_ooo.sh tdev_revtraffic.sh fidelity.sh"
G_ENV[tdevrev]="VMX_MODE=msix testdev monitor"
# System suspend (mem, freeze) and hibernation (pm_test, then the image
# written to a swap disk and restored, once at once and once across a
# reboot) with the guest's root in RAM (vm.sh --swap: no 9p to lose across
# them): the test device at revision 9 (tdevpm) and Debian's QEMU (pm, its
# revision 1 model); the console stays on across it (a crash in a resume
# callback is seen).
G_KERNEL[pm]=6.12
G_OPTS[pm]="--nic vmxnet3 --nic vmxnet3 --nic virtio --swap 1024 --append no_console_suspend"
G_TESTS[pm]="suspend.sh"
G_ENV[pm]="VMX_MODE=msix monitor"
G_KERNEL[tdevpm]=6.12
G_OPTS[tdevpm]="--nic vmxnet3t:dcr0=0x100fc,ptcr0=0x80000000 --nic vmxnet3 --nic virtio --swap 1024 --append no_console_suspend"
G_TESTS[tdevpm]="suspend.sh"
G_ENV[tdevpm]="VMX_MODE=msix testdev monitor"
# The counting benchmark's smoke, run on the host (tools/bench.sh --quick
# boots its own guest with the counting plugin, stock QEMU): every default
# cell and ndo_xdp_xmit of vmx, vmxnet3 and virtio_net has numbers. Last,
# after the test device's build
# (which adds the deb-src entries the plugin's QEMU headers come from).
G_KERNEL[benchsmoke]=6.12
G_OPTS[benchsmoke]="(host: tools/bench.sh --quick)"
G_TESTS[benchsmoke]="bench_smoke"
# 32 TX / 32 RX queues (rev 6, 65 vectors, the extended interrupt block) on 32 vCPUs.
G_KERNEL[tdevq32]=6.12
G_OPTS[tdevq32]="--nic vmxnet3t:max-revision=6,max-tx-queues=32,max-rx-queues=32 --nic virtio --smp 32"
G_TESTS[tdevq32]="tdev_queues32.sh"
G_ENV[tdevq32]="VMX_MODE=testdev monitor"
# Malformed completions (tdev_malformed.sh) with every DMA mapping bounced:
# vmx's copy out of the bounce buffer sees the same short heads.
G_KERNEL[tdevdma]=6.12
G_OPTS[tdevdma]="--nic vmxnet3t --nic virtio --append swiotlb=force"
G_TESTS[tdevdma]="tdev_malformed.sh"
G_ENV[tdevdma]="VMX_MODE=msix swiotlb testdev monitor"
G_KERNEL[tdevfull]=6.12; G_OPTS[tdevfull]=$TDEV_HUB3
G_TESTS[tdevfull]="$CORE_TESTS $XDP_TESTS"
G_ENV[tdevfull]="VMX_MODE=msix testdev monitor;VMX_EXPECT_REV=9"
# A hub never delivers GSO frames: type-4 LRO completions need the taps.
G_KERNEL[tdevtap]=6.12; G_OPTS[tdevtap]="--tap --tap-nic vmxnet3t"
G_TESTS[tdevtap]="revision.sh lro.sh tcp.sh ping.sh"
G_ENV[tdevtap]="VMX_MODE=msix testdev monitor;VMX_EXPECT_REV=9"
# The Debian package: built on the host (make deb), installed in the guest.
# The 6.12 one rebuilds the initramfs for real (update-initramfs, 15+ min
# under TCG) and checks vmx is in it; 6.1 runs the same package code and
# checks the module resolution mkinitramfs uses only.
G_KERNEL[dkms]=6.12;    G_OPTS[dkms]=$HUB3;   G_TESTS[dkms]="dkms.sh"
G_ENV[dkms]="VMX_MODE=msix monitor;VMX_DKMS_INITRAMFS=1"
G_KERNEL[dkms61]=6.1;   G_OPTS[dkms61]=$HUB3; G_TESTS[dkms61]="dkms.sh"
G_ENV[dkms61]="VMX_MODE=msix monitor"

# The debug kernel (tools/kernels): the same guests, slower (KASAN under
# TCG), more memory. no5lvl: the first boot of this kernel here (TCG's
# -cpu max offers 5-level paging) reported 13 KASAN wild-memory-access on
# per-CPU data in the timer interrupt from early boot (get_cpu_vendor,
# tick_periodic) and lockdep switched itself off; every boot with no5lvl
# was clean, and so was a later one without it: the cause is not
# established, no5lvl stays as a precaution.
DEBUG_OPTS="$HUB3 --mem 3072 --append kasan_multi_shot --append no5lvl"
DEBUG_ENV="VMX_TIMEOUT_SCALE=3"
G_KERNEL[debug]=debug;  G_OPTS[debug]=$DEBUG_OPTS; G_TESTS[debug]=$CORE_TESTS
G_ENV[debug]="VMX_MODE=msix monitor;$DEBUG_ENV"
G_KERNEL[xdpdebug]=debug; G_OPTS[xdpdebug]=$DEBUG_OPTS; G_TESTS[xdpdebug]=$XDP_TESTS
# 500 churn cycles of xdp_robust.sh did not end within its 1260 s there
G_ENV[xdpdebug]="VMX_MODE=msix monitor;$DEBUG_ENV;VMX_XDP_CYCLES=100"
G_KERNEL[faultsdebug]=debug; G_OPTS[faultsdebug]=$DEBUG_OPTS; G_TESTS[faultsdebug]="faults.sh"
# (about 15 s per injected point there: a sampled sweep, see faults.sh)
G_ENV[faultsdebug]="VMX_MODE=msix monitor;$DEBUG_ENV;VMX_FAULT_STRIDE=29;VMX_FAULT_MAX=4000"
# Hot unplug (device_del) under traffic and link events racing
# reconfiguration, each NIC behind its root port, as the hotplug group.
G_KERNEL[hotplugdebug]=debug; G_OPTS[hotplugdebug]="$DEBUG_OPTS --hotplug"
G_TESTS[hotplugdebug]="link_events.sh hotplug.sh"
G_ENV[hotplugdebug]="VMX_MODE=msix hotplug monitor;$DEBUG_ENV"
G_KERNEL[dmadebug]=debug; G_OPTS[dmadebug]="$DEBUG_OPTS --append swiotlb=4096,force"
G_TESTS[dmadebug]="swiotlb_small.sh"
G_ENV[dmadebug]="VMX_MODE=msix swiotlb monitor;$DEBUG_ENV"
# The test device under the debug kernel: TX completed from a timer later
# than the doorbell with interrupt moderation, and injected faults (the NICs
# of tdevx), XDP on RX data ring frames: use-after-free, leaks and DMA-API
# misuse on the paths only the test device reaches.
G_KERNEL[tdevdebug]=debug
G_OPTS[tdevdebug]="--nic vmxnet3t:tx-delay-us=200,intr-min-gap-us=100 --nic vmxnet3t:fault-rate=2000,fault-seed=13 --nic virtio --mem 3072 --append kasan_multi_shot --append no5lvl"
G_TESTS[tdevdebug]="tdev_async.sh tdev_faults.sh tdev_malformed.sh"
G_ENV[tdevdebug]="VMX_MODE=msix testdev monitor;$DEBUG_ENV"
# XDP on RX data ring frames (devmap to the second NIC, cpumap) under the
# debug kernel: two clean test-device NICs at revision 9 (tdevdebug's second
# NIC injects faults: a redirect to it meets the resets they cause).
G_KERNEL[tdevdebug2]=debug
G_OPTS[tdevdebug2]="--nic vmxnet3t --nic vmxnet3t --nic virtio --mem 3072 --append kasan_multi_shot --append no5lvl"
G_TESTS[tdevdebug2]="tdev_datarring.sh"
G_ENV[tdevdebug2]="VMX_MODE=msix testdev monitor;$DEBUG_ENV"
# Suspend and hibernation in pm_test mode (mem, freeze, disk: every
# driver's suspend, freeze, thaw and restore callbacks) under the debug
# kernel, with the root in RAM (no 9p to lose): the resume paths under
# lockdep, KASAN and DMA-API debug. No real hibernation: the debug kernel
# has no virtio_blk for a swap disk (tools/kernels/modules.list).
G_KERNEL[pmdebug]=debug
G_OPTS[pmdebug]="--nic vmxnet3t:dcr0=0x100fc,ptcr0=0x80000000 --nic vmxnet3 --nic virtio --ramroot --mem 3072 --append kasan_multi_shot --append no5lvl --append no_console_suspend"
G_TESTS[pmdebug]="suspend.sh"
G_ENV[pmdebug]="VMX_MODE=msix testdev monitor;$DEBUG_ENV"
# The newest kernel Debian ships as source (tools/kernels/newest.sh: 7.x,
# non-debug; make kernel-newest): vmx built and checked against it (make
# modules-newest, check-newest), the core and XDP suites.
G_KERNEL[newest]=newest; G_OPTS[newest]=$HUB3; G_TESTS[newest]=$CORE_TESTS
G_ENV[newest]="VMX_MODE=msix monitor"
G_KERNEL[xdpnewest]=newest; G_OPTS[xdpnewest]=$HUB3; G_TESTS[xdpnewest]=$XDP_TESTS
G_ENV[xdpnewest]="VMX_MODE=msix monitor"
G_KERNEL[ksftnewest]=newest; G_OPTS[ksftnewest]=$HUB3
G_TESTS[ksftnewest]="kselftests.sh"; G_ENV[ksftnewest]="VMX_MODE=msix monitor"
# The newest kernel's RSS-dependent XDP test on the test device (rev 9, RSS,
# the DCR0 UDP/ESP RSS capability offered, so UDP can be hashed on ports).
G_KERNEL[ksftnewtd]=newest
G_OPTS[ksftnewtd]="--nic vmxnet3t:dcr0=0x203,ptcr0=0x80000000 --nic vmxnet3t:dcr0=0x203,ptcr0=0x80000000 --nic virtio --smp 2"
G_TESTS[ksftnewtd]="kselftests.sh"
G_ENV[ksftnewtd]="VMX_MODE=msix testdev monitor;VMX_KSFT_TESTS=drivers/net/hw/xdp_metadata.py"

usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

list_groups() {
	local g
	for g in "${ALL_GROUPS[@]}" "${EXTRA_GROUPS[@]}"; do
		printf '%-8s kernel %-5s %s\n         tests: %s\n' "$g" "${G_KERNEL[$g]}" \
			"${G_OPTS[$g]}" "$(echo ${G_TESTS[$g]})"
		case " ${ALL_GROUPS[*]} " in *" $g "*) ;;
		*) echo "         (only when named: not in the default run)" ;; esac
		[ -z "${G_ENV[$g]:-}" ] || printf '         env: %s\n' "${G_ENV[$g]}"
	done
}

SEL=()
SUMMARIZE=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	--list) list_groups; exit 0 ;;
	--summarize)
		if [ $# -lt 2 ] || [ ! -d "$2" ]; then
			echo "run-tests: --summarize needs a results directory" >&2
			exit 2
		fi
		SUMMARIZE=$(cd "$2" && pwd)
		shift ;;
	-*) echo "run-tests: unknown option $1" >&2; exit 2 ;;
	*)
		[ -n "${G_KERNEL[$1]+x}" ] ||
			{ echo "run-tests: unknown group '$1' (have: ${ALL_GROUPS[*]} ${EXTRA_GROUPS[*]})" >&2; exit 2; }
		SEL+=("$1") ;;
	esac
	shift
done
if [ -n "$SUMMARIZE" ] && [ ${#SEL[@]} -eq 0 ]; then
	# every group the results directory has, in the usual order
	for g in "${ALL_GROUPS[@]}" "${EXTRA_GROUPS[@]}"; do
		[ ! -d "$SUMMARIZE/$g" ] || SEL+=("$g")
	done
fi
[ ${#SEL[@]} -gt 0 ] || SEL=("${ALL_GROUPS[@]}")

# uses_testdev GROUP: the group's guest runs the test device's QEMU.
uses_testdev() { [[ " ${G_OPTS[$1]} " == *" --nic vmxnet3t"* || " ${G_OPTS[$1]} " == *" --tap-nic vmxnet3t"* ]]; }
# Test-device groups last (their QEMU builds meanwhile), each kind in the
# order given.
TD_SEL=()
ST_SEL=()
BENCH_SEL=()
for g in "${SEL[@]}"; do
	if [ "$g" = benchsmoke ]; then BENCH_SEL=("$g")
	elif uses_testdev "$g"; then TD_SEL+=("$g"); else ST_SEL+=("$g"); fi
done
SEL=("${ST_SEL[@]}" "${TD_SEL[@]}" "${BENCH_SEL[@]}")
# --summarize: its groups in SUM_SEL; SEL stays empty, so that no setup,
# build, check, kernel selftest install or guest below runs.
SUM_SEL=()
if [ -n "$SUMMARIZE" ]; then
	SUM_SEL=("${SEL[@]}")
	SEL=()
	SKIP_SETUP=1 SKIP_BUILD=1 SKIP_CHECK=1
fi

# Tests of a group after the TESTS filter; mode.sh first (whatever TESTS
# says) when the group names its mode.
group_tests() {
	local t out=()
	case ";${G_ENV[$1]:-}" in *";VMX_MODE="*) out=(mode.sh) ;; esac
	for t in ${G_TESTS[$1]}; do
		if [ -n "${TESTS:-}" ]; then
			case " $(echo $TESTS) " in
			*" $t "*|*" ${t%.sh} "*) ;;
			*) continue ;;
			esac
		fi
		out+=("$t")
	done
	echo "${out[@]}"
}

# group_scale GROUP: the group's VMX_TIMEOUT_SCALE (1 if unset), doubled
# under make coverage, whose plugin slows every guest (tdev_faults.sh on the
# debug kernel outran its 1440 s under it). Passed into the guest too.
group_scale() {
	local s
	s=$(printf '%s\n' "${G_ENV[$1]:-}" | tr ';' '\n' | sed -n 's/^VMX_TIMEOUT_SCALE=//p')
	s=${s:-1}
	[ -z "${VMX_COVERAGE:-}" ] || s=$((s * 2))
	echo "$s"
}

# Test timeout from its "# vmx-timeout: N" line (same rule as
# guest-suite.sh), times the group's scale: test_timeout TEST GROUP.
test_timeout() {
	local t
	t=$(sed -n 's/^# vmx-timeout: *\([0-9][0-9]*\).*/\1/p' "$PROJ/$TESTDIR/$1" 2>/dev/null | head -n1)
	echo $(( ${t:-${VMX_TEST_TIMEOUT:-300}} * $(group_scale "$2") ))
}

RUN_ID=$(date +%Y%m%d-%H%M%S)
if [ -n "$SUMMARIZE" ]; then
	# read only: an earlier run's directory, wherever it is
	RESULTS=$SUMMARIZE
else
	RESULTS=${RESULTS:-$PROJ/results/$RUN_ID}
	mkdir -p "$RESULTS" || exit 2
	RESULTS=$(cd "$RESULTS" && pwd)
	[ -e "$PROJ/results/.gitignore" ] || { mkdir -p "$PROJ/results"; echo '*' > "$PROJ/results/.gitignore"; }
	case "$RESULTS" in
	"$PROJ"/results/*) ln -sfn "$RESULTS" "$PROJ/results/latest" ;;
	"$PROJ"/*) ;;
	*) echo "run-tests: RESULTS must be inside $PROJ (the guest writes there)" >&2; exit 2 ;;
	esac
fi

PASS=0
FAIL=0
SKIP=0
SUMMARY=()
TIMES=()
# every SKIP seen: "reason<TAB>group/test<TAB>how" (how: expected, unexpected
# (counted as a failure) or unlisted (VMX_DRIVER is not vmx)), for the
# skips-by-reason part of the summary
SKIP_RECS=()
t_start=$(date +%s)

say() { echo "run-tests: $*"; }

# Count every selected test of the listed groups as one failure (never run).
fail_groups() {
	local why=$1 g t
	shift
	for g in "$@"; do
		for t in $(group_tests "$g"); do
			FAIL=$((FAIL + 1))
			SUMMARY+=("FAIL  $g/$t: not run ($why)")
		done
	done
}

# ------------------------------------------------------------ setup, build
if [ "${SKIP_SETUP:-0}" != 1 ]; then
	say "setup (tools/setup.sh)"
	if ! "$TOOLS_DIR/setup.sh" > "$RESULTS/setup.log" 2>&1; then
		tail -n 20 "$RESULTS/setup.log"
		say "SETUP FAILED (log: $RESULTS/setup.log)"
		fail_groups "setup failed" "${SEL[@]}"
		SKIP_BUILD=1 SEL=()
	fi
fi

# The test device's QEMU, in the background while the stock-QEMU groups
# run (nice: the guests come first); testdev_wait before the first group
# that needs it.
TD_PID=
TD_START=
TD_OK=
TD_RC=
if [ ${#TD_SEL[@]} -gt 0 ] && [ ${#SEL[@]} -gt 0 ]; then
	say "test device QEMU: building in the background (tools/testdev/build.sh, log: $RESULTS/testdev-build.log)"
	TD_START=$(date +%s)
	( nice -n 10 "$TOOLS_DIR/testdev/build.sh"; rc=$?
	  date +%s > "$RESULTS/.testdev-end"; exit $rc ) > "$RESULTS/testdev-build.log" 2>&1 &
	TD_PID=$!
fi
# testdev_wait: the background build finished and succeeded.
testdev_wait() {
	local rc w0
	[ -z "$TD_OK" ] || return "$TD_OK"
	w0=$(date +%s)
	if [ -n "$TD_RC" ]; then
		rc=$TD_RC
	else
		wait "$TD_PID"
		rc=$?
	fi
	TIMES+=("testdev-build $(( $(cat "$RESULTS/.testdev-end" 2>/dev/null || date +%s) - TD_START ))s"
		"testdev-wait $(( $(date +%s) - w0 ))s")
	if [ $rc = 0 ]; then
		say "test device QEMU: $(tail -n 1 "$RESULTS/testdev-build.log")"
		TD_OK=0
	else
		tail -n 20 "$RESULTS/testdev-build.log"
		say "TEST DEVICE BUILD FAILED (log: $RESULTS/testdev-build.log)"
		TD_OK=1
	fi
	return $TD_OK
}

if [ "${SKIP_BUILD:-0}" != 1 ] && [ "$VMX_DRIVER" = vmx ]; then
	if grep -qsE '^all-kernels[[:space:]]*:' "$PROJ/Makefile"; then
		target=all-kernels
	else
		target=
	fi
	say "build (make $target; XDP programs)"
	if ! { make -C "$PROJ" $target &&
	       make -C "$PROJ/$TESTDIR/progs"; } > "$RESULTS/build.log" 2>&1; then
		tail -n 30 "$RESULTS/build.log"
		say "BUILD FAILED (log: $RESULTS/build.log)"
		fail_groups "build failed" "${SEL[@]}"
		SEL=()
	fi
	TIMES+=("build $(( $(date +%s) - t_start ))s")
fi

# The groups of the kernels built in tools/kernels (debug: make kernels;
# newest: make kernel-newest; never built here): vmx built against their
# trees (make modules-debug / modules-newest).
OWN_KERNELS=()
for k in debug newest; do
	ksel=()
	for g in "${SEL[@]}"; do [ "${G_KERNEL[$g]}" = "$k" ] && ksel+=("$g"); done
	[ ${#ksel[@]} -gt 0 ] || continue
	OWN_KERNELS+=("$k")
	[ "${SKIP_BUILD:-0}" != 1 ] && [ "$VMX_DRIVER" = vmx ] || continue
	say "build against the $k kernel (make modules-$k)"
	if ! make -C "$PROJ" "modules-$k" > "$RESULTS/build-$k.log" 2>&1; then
		tail -n 20 "$RESULTS/build-$k.log"
		say "BUILD AGAINST THE $k KERNEL FAILED (log: $RESULTS/build-$k.log; kernel not built?)"
		fail_groups "no vmx.ko for the $k kernel" "${ksel[@]}"
		mapfile -t SEL < <(printf '%s\n' "${SEL[@]}" | grep -vxF -f <(printf '%s\n' "${ksel[@]}"))
		unset 'OWN_KERNELS[-1]'
	fi
done

# The 6.12 kernel's own drivers/net selftests, extracted from linux-source
# into .cache/kselftests (not in git) for the kselftests group.
case " ${SEL[*]} " in
*" kselftests "*)
	say "kernel selftests (tools/kselftests-install.sh)"
	if ! "$TOOLS_DIR/kselftests-install.sh" > "$RESULTS/kselftests-install.log" 2>&1; then
		tail -n 10 "$RESULTS/kselftests-install.log"
		fail_groups "kernel selftests not installed" kselftests
		mapfile -t SEL < <(printf '%s\n' "${SEL[@]}" | grep -vx kselftests)
	fi ;;
esac
# The newest kernel's own copies of those tests (from its source tree,
# unpacked before its build starts; XDP programs and helpers built, a newer
# ethtool) for the ksftnewest group.
case " ${SEL[*]} " in
*" ksftnewest "*|*" ksftnewtd "*)
	say "newest kernel's selftests (tools/kselftests-install.sh --newest)"
	if ! "$TOOLS_DIR/kselftests-install.sh" --newest > "$RESULTS/kselftests-install-newest.log" 2>&1; then
		tail -n 10 "$RESULTS/kselftests-install-newest.log"
		fail_groups "newest kernel's selftests not installed" ksftnewest ksftnewtd
		mapfile -t SEL < <(printf '%s\n' "${SEL[@]}" | grep -vxE 'ksftnewest|ksftnewtd')
	fi ;;
esac

# Static checks before any guest: W=1 + sparse against every installed
# 6.1/6.12 header tree (make check); a warning is one failure in the
# summary, and the guests still run.
if [ "${SKIP_CHECK:-0}" != 1 ] && [ "$VMX_DRIVER" = vmx ] && [ ${#SEL[@]} -gt 0 ]; then
	say "static checks (make check: W=1 + sparse, every kernel)"
	c_start=$(date +%s)
	if make -C "$PROJ" check > "$RESULTS/check.log" 2>&1; then
		SUMMARY+=("PASS  make check: no warning ($(( $(date +%s) - c_start ))s)")
		PASS=$((PASS + 1))
	else
		grep -E 'warning|error' "$RESULTS/check.log" | head -n 20 | sed 's/^/    /'
		say "STATIC CHECKS FAILED (log: $RESULTS/check.log)"
		SUMMARY+=("FAIL  make check: warnings or errors, see check.log ($(( $(date +%s) - c_start ))s)")
		FAIL=$((FAIL + 1))
	fi
	TIMES+=("check $(( $(date +%s) - c_start ))s")
	for k in "${OWN_KERNELS[@]}"; do
		c_start=$(date +%s)
		if make -C "$PROJ" "check-$k" > "$RESULTS/check-$k.log" 2>&1; then
			SUMMARY+=("PASS  make check-$k: no warning ($(( $(date +%s) - c_start ))s)")
			PASS=$((PASS + 1))
		else
			grep -E 'warning|error' "$RESULTS/check-$k.log" | head -n 20 | sed 's/^/    /'
			SUMMARY+=("FAIL  make check-$k: warnings or errors, see check-$k.log")
			FAIL=$((FAIL + 1))
		fi
		TIMES+=("check-$k $(( $(date +%s) - c_start ))s")
	done
fi

# ------------------------------------------------------------ expected skips
# The SKIPs the suite expects (format in the file's header): a SKIP no line
# matches is a failure, so that a feature vmx stops offering, or a test
# precondition that stops holding, does not pass as a skip. Loaded into
# EXP_KEY ("group test.sh") and EXP_GLOB (the check-name glob), one entry
# per group of a line; a line that is malformed, names an unknown group or
# a test its group does not run is one failure of the run.
EXPECTED_SKIPS=$PROJ/$TESTDIR/expected-skips
EXP_KEY=()
EXP_GLOB=()
load_expected_skips() {
	local n=0 line groups t rest glob g err
	local -a gl
	if [ ! -f "$EXPECTED_SKIPS" ]; then
		FAIL=$((FAIL + 1))
		SUMMARY+=("FAIL  ${EXPECTED_SKIPS#"$PROJ"/}: missing (every SKIP is unexpected)")
		return
	fi
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		read -r groups t rest <<< "$line"
		# the check glob ends where the "# why" comment starts
		glob=${rest%%[[:space:]]#*}
		glob=${glob%"${glob##*[![:space:]]}"}
		err=
		if [ -z "$glob" ] || [ "$glob" = "$rest" ]; then
			err="want: GROUP[,GROUP...] TEST.sh CHECK  # why"
		else
			IFS=, read -r -a gl <<< "$groups"
			for g in "${gl[@]}"; do
				if [ -z "${G_TESTS[$g]+x}" ]; then
					err="unknown group '$g'"
				elif [[ " ${G_TESTS[$g]//[$'\t\n']/ } " != *" $t "* ]]; then
					err="group $g does not run $t"
				else
					EXP_KEY+=("$g $t")
					EXP_GLOB+=("$glob")
				fi
			done
		fi
		if [ -n "$err" ]; then
			FAIL=$((FAIL + 1))
			SUMMARY+=("FAIL  ${EXPECTED_SKIPS#"$PROJ"/}:$n: $err")
		fi
	done < "$EXPECTED_SKIPS"
}
load_expected_skips

# skip_expected GROUP TEST CHECK: expected-skips lists CHECK of TEST in GROUP.
skip_expected() {
	local i
	for i in "${!EXP_KEY[@]}"; do
		# shellcheck disable=SC2053  # the list's glob, unquoted on purpose
		[[ ${EXP_KEY[$i]} == "$1 $2" && $3 == ${EXP_GLOB[$i]} ]] && return 0
	done
	return 1
}

# ------------------------------------------------------------ groups
# parse_test GROUP TEST: add the test's subtests to the totals.
parse_test() {
	local g=$1 t=$2 name=${2%.sh} dir=$RESULTS/$1 log rcf rc secs p f s extra=
	local chk why u=0 how l
	local -a unexp=()
	log=$dir/$name.log
	rcf=$dir/$name.rc
	p=0 f=0 s=0
	if [ -f "$log" ]; then
		p=$(grep -cE '^ok [0-9]+' "$log" | head -n1)
		s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$log" | head -n1)
		p=$((p - s))
		f=$(grep -cE '^not ok [0-9]+' "$log" | head -n1)
	fi
	if [ ! -f "$rcf" ]; then
		if [ -f "$log" ]; then extra="did not finish (guest crash or timeout)"
		else extra="not run (guest crash or timeout)"; fi
		rc=- secs=-
	else
		read -r rc secs < "$rcf"
		if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			extra="timed out"
		elif [ "$rc" = 4 ] && [ $f = 0 ]; then
			[ $((p + s)) -gt 0 ] || s=1
		elif [ "$rc" != 0 ] && [ $f = 0 ]; then
			extra="exit status $rc without a failing subtest"
		elif [ "$rc" = 0 ] && [ $((p + s + f)) = 0 ]; then
			extra="no TAP output"
		fi
	fi
	[ -z "$extra" ] || f=$((f + 1))
	# Each SKIP against expected-skips (the lines the count above matched:
	# CHECK is the text between "ok N " and the last "# SKIP"); exit status
	# 4 without any TAP line is a SKIP of the whole test with no name.
	# Against the in-tree vmxnet3 (VMX_DRIVER not vmx, a reference run) an
	# unlisted SKIP stays a skip: the list describes what vmx must do.
	while IFS=$'\t' read -r chk why; do
		chk=${chk%"${chk##*[![:space:]]}"}
		if skip_expected "$g" "$t" "$chk"; then
			how=expected
		elif [ "$VMX_DRIVER" = vmx ]; then
			how=unexpected
			u=$((u + 1))
			unexp+=("unexpected SKIP (not in expected-skips): $chk # $why")
		else
			how=unlisted
		fi
		SKIP_RECS+=("${why:-(no reason given)}"$'\t'"$g/$name"$'\t'"$how")
	done < <(if [ -f "$log" ]; then
			sed -nE 's/^ok [0-9]+ ?(.*)# *SKIP[[:space:]]*(.*)$/\1\t\2/p' "$log"
		 fi
		 if [ "$s" -gt 0 ] && [ "$rc" = 4 ] &&
		    ! grep -qE '^ok [0-9]+.*# *SKIP' "$log" 2>/dev/null; then
			printf '%s\t%s\n' "(whole test)" "exit status 4 without a SKIP line"
		 fi)
	s=$((s - u)); f=$((f + u))
	PASS=$((PASS + p)); FAIL=$((FAIL + f)); SKIP=$((SKIP + s))
	local verdict=PASS
	[ $f -eq 0 ] || verdict=FAIL
	[ $f -ne 0 ] || [ $p -ne 0 ] || [ $s -eq 0 ] || verdict=SKIP
	SUMMARY+=("$(printf '%-5s %s/%s: %d passed, %d failed, %d skipped (%ss)%s' \
		"$verdict" "$g" "$name" "$p" "$f" "$s" "$secs" "${extra:+ - $extra}")")
	for l in "${unexp[@]}"; do
		SUMMARY+=("        $(printf '%s' "$l" | cut -c1-200)")
	done
	if [ -f "$log" ]; then
		while IFS= read -r l; do
			SUMMARY+=("        $l")
		done < <(awk '/^not ok [0-9]+/ { print
				for (i = (k > 4 ? k - 4 : 0); i < k; i++)
					print "  " substr(b[i % 4], 1, 160)
				k = 0; next }
			/^ok [0-9]+/ { k = 0; next }
			/^#/ && !/^# (exit status|SKIP)/ { b[k % 4] = $0; k++ }' "$log")
	fi
}

# crash_lines CONSOLE: what a guest that crashed or hung left on its
# console, at most 12 lines: the kernel's report (first BUG/Oops/panic
# line, RIP, the call trace's first functions), QEMU's own last words
# (an assertion, a signal) and vm.sh's verdict.
crash_lines() {
	[ -f "$1" ] || return 0
	tr -d '\r' <"$1" | awk '
		/qemu-system|Assertion|Segmentation fault|Aborted/ { q[nq++ % 3] = $0 }
		/^vm\.sh:/ { v = $0 }
		!seen && /BUG:|Oops|Kernel panic|WARNING:|general protection|int3:/ { seen = 1 }
		seen && n < 8 && /BUG:|Oops|Kernel panic|WARNING:|general protection|RIP:|Comm:|^ *\[ *[0-9.]+\]  [a-z_0-9.]+\+0x/ { k[n++] = $0 }
		END { for (i = 0; i < n; i++) print substr(k[i], 1, 150)
		      for (i = (nq > 3 ? nq - 3 : 0); i < nq; i++) print substr(q[i % 3], 1, 150)
		      if (v != "") print substr(v, 1, 150) }'
}

# bench_smoke: tools/bench.sh --quick on the host, one test.
bench_smoke() {
	local gdir=$RESULTS/benchsmoke t0 rc secs
	mkdir -p "$gdir"
	# the deb-src entries come with the test device's build
	[ -z "$TD_PID" ] || testdev_wait || true
	say "group benchsmoke: tools/bench.sh --quick (log: $gdir/bench.log)"
	t0=$(date +%s)
	BENCH_NO_SETUP=1 timeout 1200 "$TOOLS_DIR/bench.sh" --quick > "$gdir/bench.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	if [ $rc = 0 ]; then
		PASS=$((PASS + 1))
		SUMMARY+=("PASS  benchsmoke/bench_smoke: 1 passed, 0 failed, 0 skipped (${secs}s)")
	else
		FAIL=$((FAIL + 1))
		SUMMARY+=("FAIL  benchsmoke/bench_smoke: 0 passed, 1 failed, 0 skipped (${secs}s) - tools/bench.sh --quick exit $rc")
		while IFS= read -r l; do
			SUMMARY+=("        $l")
		done < <(grep -v '^ *$' "$gdir/bench.log" | tail -n 6 | cut -c1-160)
	fi
	TIMES+=("benchsmoke ${secs}s")
}

# --summarize: the groups' results as they are (SEL is empty: no guest).
# benchsmoke keeps no exit status (tools/bench.sh's): left out.
for g in "${SUM_SEL[@]}"; do
	if [ "$g" = benchsmoke ]; then
		SUMMARY+=("      group benchsmoke: not summarized (its exit status is not kept)")
		continue
	fi
	for t in $(group_tests "$g") kernel_log.sh; do
		parse_test "$g" "$t"
	done
	SUMMARY+=("      group $g: summarized from $RESULTS/$g")
done

# run_guest GROUP: boot the group's guest and run its tests (in the
# background when VMX_JOBS allows several); the outcome goes to
# GROUP/.guest ("exit-status seconds budget"), read by group_verdict.
run_guest() {
	local g=$1 gdir=$RESULTS/$1 budget t e gstart gsecs vrc tag= scale
	local -a tests opts genv
	read -r -a tests <<< "$(group_tests "$g")"
	mkdir -p "$gdir"
	rm -f "$gdir/.guest"
	budget=180
	for t in "${tests[@]}"; do
		budget=$((budget + $(test_timeout "$t" "$g") + 15))
	done
	# shellcheck disable=SC2206
	opts=(${G_OPTS[$g]})
	# the QEMU monitor for the tests (lib.sh hmp): cheap, so everywhere
	opts+=(--guest-monitor)
	# kernel warnings (KERN_WARNING) in console.log too, not only errors;
	# a log large enough that no test's start marker is overwritten
	opts+=(--append "loglevel=5 log_buf_len=4M")
	[ -n "${VMX_APPEND:-}" ] && opts+=(--append "$VMX_APPEND")
	IFS=';' read -r -a genv <<< "${G_ENV[$g]:-}"
	for e in "${genv[@]}"; do
		[[ $e == VMX_TIMEOUT_SCALE=* ]] || opts+=(--env "$e")
	done
	scale=$(group_scale "$g")
	[ "$scale" = 1 ] || opts+=(--env "VMX_TIMEOUT_SCALE=$scale")
	say "group $g: kernel ${G_KERNEL[$g]}, ${G_OPTS[$g]}; ${#tests[@]} tests: ${tests[*]}"
	gstart=$(date +%s)
	# Progress: the per-test lines of guest-suite.sh and kernel trouble;
	# everything with VERBOSE=1. The whole console is in console.log.
	# Several guests at once: each line says whose it is.
	filter='^vmx-suite:|Kernel panic|BUG:|Oops|WARNING:|^vm\.sh:'
	[ "${VERBOSE:-0}" = 1 ] && filter=
	[ "$JOBS" = 1 ] || tag="[$g] "
	# make coverage (tools/coverage): the guest's records are named after the group
	[ -z "${VMX_COVERAGE:-}" ] || export VMX_COVERAGE_TAG=$g
	"$TOOLS_DIR/vm.sh" --kernel "${G_KERNEL[$g]}" "${opts[@]}" \
		--timeout "$budget" --log "$gdir/console.log" \
		-- tools/guest-suite.sh "${gdir#"$PROJ"/}" "${tests[@]}" 2>&1 |
		grep --line-buffered -E "$filter" | sed -u "s/^/    $tag/"
	vrc=${PIPESTATUS[0]}
	gsecs=$(( $(date +%s) - gstart ))
	echo "$vrc $gsecs $budget" > "$gdir/.guest"
	say "group $g: guest done in ${gsecs}s"
}

# group_verdict GROUP: the group's tests into the totals and the summary,
# with what its guest's exit status says (crash, timeout).
group_verdict() {
	local g=$1 gdir=$RESULTS/$1 vrc=none gsecs=- budget=- gnote t l
	local -a tests
	read -r -a tests <<< "$(group_tests "$g")"
	[ ! -f "$gdir/.guest" ] || read -r vrc gsecs budget < "$gdir/.guest"
	case $vrc in
	0) gnote= ;;
	3) gnote="GROUP COULD NOT START (kernel ${G_KERNEL[$g]} missing?)" ;;
	124) gnote="GUEST TIMED OUT after ${budget}s" ;;
	125) gnote="GUEST CRASHED" ;;
	none) gnote="NO OUTCOME (the host side of the group ended early)" ;;
	*) gnote="guest exit status $vrc" ;;
	esac
	if [ -n "$gnote" ]; then
		say "group $g: $gnote; see $gdir/console.log"
		tail -n 15 "$gdir/console.log" 2>/dev/null | sed 's/^/    /'
	fi
	for t in "${tests[@]}" kernel_log.sh; do
		parse_test "$g" "$t"
	done
	SUMMARY+=("      group $g: ${gsecs}s${gnote:+ - $gnote}")
	# a crash or timeout says in the summary what the console saw of it
	[ -z "$gnote" ] || while IFS= read -r l; do
		SUMMARY+=("        console: $l")
	done < <(crash_lines "$gdir/console.log")
	TIMES+=("$g ${gsecs}s")
}

# The guests: up to VMX_JOBS at once (default: one per core, at most two:
# a guest's TCG is one thread, so each has a core of its own), only one
# while the test device's QEMU builds (the build gets the other core),
# test-device groups once it is built; benchsmoke alone, after every guest
# (it counts instructions on the host's QEMU). The summary keeps the
# groups' order whatever order they end in.
JOBS=${VMX_JOBS:-$(nproc)}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || JOBS=1
[ -n "${VMX_JOBS:-}" ] || [ "$JOBS" -le 2 ] || JOBS=2
declare -A RUNNING=()
# td_building: the test device's QEMU is still being built.
td_building() { [ -n "$TD_PID" ] && [ -z "$TD_OK" ] && [ -z "$TD_RC" ]; }
# jobs_now: how many guests may run at this moment.
jobs_now() {
	if td_building; then echo 1; else echo "$JOBS"; fi
}
# reap_one: wait for a running guest to end, or the test device's build
# (its status kept in TD_RC for testdev_wait): a second guest may start then.
reap_one() {
	local pid='' rc p
	local -a build=()
	! td_building || build=("$TD_PID")
	wait -n -p pid "${!RUNNING[@]}" "${build[@]}"
	rc=$?
	pid=${pid:-}
	if [ -z "$pid" ]; then
		# a job bash reaped itself (killed by a signal while this shell
		# waited for another): forget what no longer exists
		for p in "${!RUNNING[@]}"; do
			kill -0 "$p" 2>/dev/null || unset "RUNNING[$p]"
		done
		if td_building && ! kill -0 "$TD_PID" 2>/dev/null; then
			TD_RC=$rc
		fi
	elif [ "$pid" = "$TD_PID" ]; then
		TD_RC=$rc
	else
		unset "RUNNING[$pid]"
	fi
}
RAN=()
BENCH=
for g in "${SEL[@]}"; do
	[ -n "$(group_tests "$g")" ] || continue
	if [ "$g" = benchsmoke ]; then
		BENCH=1
		continue
	fi
	if uses_testdev "$g" && ! testdev_wait; then
		# (its failures in the summary where its results would be)
		RAN+=("!$g")
		continue
	fi
	while [ ${#RUNNING[@]} -ge "$(jobs_now)" ]; do
		reap_one
	done
	run_guest "$g" &
	RUNNING[$!]=$g
	RAN+=("$g")
done
while [ ${#RUNNING[@]} -gt 0 ]; do
	reap_one
done
for g in "${RAN[@]}"; do
	if [[ $g == !* ]]; then
		fail_groups "the test device's QEMU did not build" "${g#!}"
	else
		group_verdict "$g"
	fi
done
[ -z "$BENCH" ] || bench_smoke

if [ ${#SUMMARY[@]} -eq 0 ]; then
	say "no tests selected (TESTS='${TESTS:-}', groups: ${SEL[*]:-none})"
	FAIL=$((FAIL + 1))
fi

# The skips grouped by reason, most frequent first: how many, where
# ("group/test", "xN" when a test skipped that often, "(unexpected)" when
# counted as a failure, "(unlisted)" when VMX_DRIVER is not vmx). Reasons
# that differ only in a kernel version or a number stay apart.
if [ ${#SKIP_RECS[@]} -gt 0 ]; then
	SUMMARY+=("skipped, by reason (${#SKIP_RECS[@]}; expected ones listed in $TESTDIR/expected-skips):")
	while IFS= read -r l; do
		SUMMARY+=("$l")
	done < <(printf '%s\n' "${SKIP_RECS[@]}" | awk -F'\t' '
		{ w = $2 ($3 == "expected" ? "" : " (" $3 ")")
		  if (!($1 in n)) order[k++] = $1
		  n[$1]++
		  if (!(($1, w) in c)) { nw[$1]++; ws[$1, nw[$1]] = w }
		  c[$1, w]++ }
		END { for (i = 0; i < k; i++) {
			r = order[i]; s = ""
			for (j = 1; j <= nw[r]; j++) {
				w = ws[r, j]
				s = s (j > 1 ? ", " : "") w (c[r, w] > 1 ? " x" c[r, w] : "")
			}
			printf "%d\t%s\t%s\n", n[r], r, s } }' |
		sort -t$'\t' -k1,1nr -s |
		awk -F'\t' '{ printf "%4d  %s\n        %s\n", $1,
			(length($2) > 150 ? substr($2, 1, 147) "..." : $2), $3 }')
fi

echo
echo "==== vmx test summary (driver $VMX_DRIVER, $(( $(date +%s) - t_start ))s, results in $RESULTS)"
# --summarize reads an earlier run: its summary.txt stays as that run wrote it
sumfile=$RESULTS/summary.txt
[ -z "$SUMMARIZE" ] || sumfile=/dev/null
printf '%s\n' "${SUMMARY[@]}" | tee "$sumfile"
# entries joined with ", " (a group's name may itself end in "s")
[ ${#TIMES[@]} -eq 0 ] || { t=$(printf '%s, ' "${TIMES[@]}"); echo "time: ${t%, }"; } |
	tee -a "$sumfile"
echo "$PASS passed, $FAIL failed, $SKIP skipped" | tee -a "$sumfile"
[ "$FAIL" -eq 0 ]
