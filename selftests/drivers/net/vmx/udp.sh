#!/usr/bin/env bash
# udp.sh - iperf3 UDP both directions: small and MTU-sized datagrams,
# datagrams that need IP fragmentation, IPv6. Loss must stay under
# VMX_UDP_MAX_LOSS percent (default 5).
source "$(dirname "$0")/lib.sh"

vmx_setup

check "UDP DUT->peer 1400B 30M" iperf_check -u -b 30M -l 1400
check "UDP peer->DUT 1400B 30M" iperf_check -u -b 30M -l 1400 -R
check "UDP DUT->peer 64B" iperf_check -u -b 2M -l 64
check "UDP peer->DUT 64B" iperf_check -u -b 2M -l 64 -R
check "UDP DUT->peer 8000B fragmented" iperf_check -u -b 20M -l 8000
check "UDP peer->DUT 8000B fragmented" iperf_check -u -b 20M -l 8000 -R
IPERF_DST=$PEER_IP6
check "UDP v6 DUT->peer" iperf_check -u -b 20M -l 1200
check "UDP v6 peer->DUT" iperf_check -u -b 20M -l 1200 -R
IPERF_DST=$PEER_IP

vmx_done
