#!/usr/bin/env bash
# revision.sh - revision-gated paths. The negotiated device revision is
# read from ethtool -i; paths the device cannot offer are SKIPped with the
# reason (QEMU's vmxnet3 is revision 1).
# vmx-timeout: 120
source "$(dirname "$0")/lib.sh"

vmx_setup

rev=$(dut_revision)
check "ethtool -i reports the negotiated revision" test -n "$rev"
log "negotiated revision: ${rev:-unknown}"

data_ring_frames() {
	ethtool -S "$DUT" | awk '/rx[0-9]+_data_ring:/ {s += $2} END {print s + 0}'
}

small_frames_use_data_ring() {
	local b a
	b=$(data_ring_frames)
	peer_ping -c 20 -i 0.02 -s 32 "$DUT_IP" || return 1
	a=$(data_ring_frames)
	echo "rxN_data_ring: $b -> $a"
	[ $((a - b)) -ge 20 ]
}

if [ "${rev:-0}" -ge 3 ]; then
	check "small frames arrive through the RX data ring" small_frames_use_data_ring
else
	skip "small frames arrive through the RX data ring" \
		"device revision ${rev:-?} < 3 has no RX data ring (QEMU offers only revision 1)"
fi
if [ "${rev:-0}" -ge 2 ]; then
	skip "LRO completions carry segment count and MSS" \
		"needs a host that aggregates into type-4 completions; not testable from the guest alone"
else
	skip "LRO completions carry segment count and MSS" \
		"device revision ${rev:-?} < 2 has no type-4 LRO completions (QEMU offers only revision 1)"
fi

vmx_done
