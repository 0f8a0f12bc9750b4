#!/usr/bin/env bash
# udp.sh - iperf3 UDP both directions: MTU-sized and small datagrams,
# datagrams that need IP fragmentation, IPv6. Rates stay low enough for a
# TCG guest's receiving process (the loss measured is the whole path's,
# socket included); loss must stay under VMX_UDP_MAX_LOSS percent (default 5).
source "$(dirname "$0")/lib.sh"

vmx_setup

# Room for bursts in the receiving sockets (iperf3 -w).
sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608
pexec sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608

check "UDP DUT->peer 1400B" iperf_check -u -w 4M -b 10M -l 1400
check "UDP peer->DUT 1400B" iperf_check -u -w 4M -b 10M -l 1400 -R
check "UDP DUT->peer 64B" iperf_check -u -w 4M -b 400K -l 64
check "UDP peer->DUT 64B" iperf_check -u -w 4M -b 400K -l 64 -R
check "UDP DUT->peer 8000B fragmented" iperf_check -u -w 4M -b 10M -l 8000
check "UDP peer->DUT 8000B fragmented" iperf_check -u -w 4M -b 10M -l 8000 -R
IPERF_DST=$PEER_IP6
check "UDP v6 DUT->peer" iperf_check -u -w 4M -b 10M -l 1200
check "UDP v6 peer->DUT" iperf_check -u -w 4M -b 10M -l 1200 -R
IPERF_DST=$PEER_IP

vmx_done
