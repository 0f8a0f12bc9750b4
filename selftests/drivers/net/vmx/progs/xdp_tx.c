// SPDX-License-Identifier: GPL-2.0
/* UDP to PORT_TX: swap the MACs and send the frame back out (XDP_TX). */
#include "xdp_common.h"

SEC("xdp")
int xdp_tx(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (udp_dport(data, data_end) != PORT_TX)
		return XDP_PASS;
	swap_macs(data);
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
