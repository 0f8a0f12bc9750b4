// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_xdp_adjust_tail() then XDP_TX:
 *   PORT_GROW:   out = swapped MACs, VMX_TEST_ETYPE, in[14:],
 *                TAIL_FILL x TAIL_GROW
 *   PORT_SHRINK: out = swapped MACs, VMX_TEST_ETYPE, in[14:-TAIL_SHRINK]
 */
#include "xdp_common.h"

SEC("xdp")
int xdp_adjust_tail(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u8 fill[TAIL_GROW];
	struct ethhdr *eth = data;
	int port, i;
	__u32 len;

	port = udp_dport(data, data_end);
	if (port != PORT_GROW && port != PORT_SHRINK)
		return XDP_PASS;
	swap_macs(eth);
	eth->h_proto = bpf_htons(VMX_TEST_ETYPE);
	len = data_end - data;

	if (port == PORT_SHRINK) {
		if (bpf_xdp_adjust_tail(ctx, -TAIL_SHRINK))
			return XDP_ABORTED;
		return XDP_TX;
	}
	if (bpf_xdp_adjust_tail(ctx, TAIL_GROW))
		return XDP_ABORTED;
#pragma unroll
	for (i = 0; i < TAIL_GROW; i++)
		fill[i] = TAIL_FILL;
	/* the grown area is not left to whatever the kernel put there */
	if (bpf_xdp_store_bytes(ctx, len, fill, TAIL_GROW))
		return XDP_ABORTED;
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
