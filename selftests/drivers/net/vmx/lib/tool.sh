# shellcheck shell=bash
# lib/tool.sh - the selftest library for the guest scripts that are not
# tests: tools/demo.sh --guest and tools/bench-guest.sh source this file
# (lib.sh starts a TAP test when sourced: TAP header, kernel log marker,
# the exit trap that ends the test). They get the settings and helpers the
# tests use, from the same files: lib/base.sh (settings, wait_for),
# lib/log.sh, lib/driver.sh (dut_load, ifaces_by_driver, nic_pci_devs,
# pci_ifname...), lib/net.sh (peer_setup, pexec, wait_carrier, mac_of,
# rss_all_to_queue0...), lib/traffic.sh (pings, iperf_check, pg_setup,
# pg_sent...), lib/counters.sh (estat, snap, sdelta, irq_counts...) and
# xdp_lib.sh (xdp_state, xsk_ready_wait, pktgen_setup, bench_run...).
# Besides:
#   log MSG...  "NAME: MSG" on stderr, NAME is $VMX_TOOL (set it before
#               sourcing; default the script's name)
#   VMX_TMP     a scratch directory of this run, in the guest's /tmp
#               (bench_run, iperf_check, bg_start keep their files there)
# Not for tools: lib.sh's checks, vmx_setup and vmx_done, and dut_unload
# (it checks the error counters against a test's allowances): a tool
# unloads with rmmod.

# shellcheck source=base.sh
source "$(dirname "${BASH_SOURCE[0]}")/base.sh"
# shellcheck source=log.sh
source "$VMX_LIB_DIR/lib/log.sh"
# shellcheck source=driver.sh
source "$VMX_LIB_DIR/lib/driver.sh"
# shellcheck source=net.sh
source "$VMX_LIB_DIR/lib/net.sh"
# shellcheck source=traffic.sh
source "$VMX_LIB_DIR/lib/traffic.sh"
# shellcheck source=counters.sh
source "$VMX_LIB_DIR/lib/counters.sh"
# shellcheck source=../xdp_lib.sh
source "$VMX_LIB_DIR/xdp_lib.sh"

VMX_TOOL=${VMX_TOOL:-$(basename "$0" .sh)}
VMX_TMP=$(mktemp -d "/tmp/vmx-$VMX_TOOL.XXXXXX")
# background jobs (bg_start, iperf_server_start, pktgen_start)
_vmx_bg=()

log() { echo "$VMX_TOOL: $*" >&2; }
