// SPDX-License-Identifier: GPL-2.0
/* Every frame sent back out with its MACs swapped, multi-buffer ones too
 * (the benchmark's 9000-byte XDP_TX cell, as xdp-bench tx's swap-macs;
 * xdp-bench has no xdp.frags program). The Ethernet header is always in
 * the linear part.
 */
#include "xdp_common.h"

SEC("xdp.frags")
int xdp_tx_mb(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (data + sizeof(struct ethhdr) > data_end)
		return XDP_DROP;
	swap_macs(data);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
