// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_xdp_adjust_head() then XDP_TX:
 *   PORT_GROW:   HEAD_GROW bytes of HEAD_FILL inserted after the MACs and
 *                the ethertype: out = swapped MACs, VMX_TEST_ETYPE,
 *                HEAD_FILL x HEAD_GROW, in[14:]
 *   PORT_SHRINK: HEAD_SHRINK bytes after the Ethernet header removed:
 *                out = swapped MACs, VMX_TEST_ETYPE, in[14 + HEAD_SHRINK:]
 */
#include "xdp_common.h"

SEC("xdp")
int xdp_adjust_head(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr old, *eth;
	int port, delta, i;
	__u8 *p;

	port = udp_dport(data, data_end);
	if (port != PORT_GROW && port != PORT_SHRINK)
		return XDP_PASS;
	__builtin_memcpy(&old, data, sizeof(old));

	delta = port == PORT_GROW ? -HEAD_GROW : HEAD_SHRINK;
	if (bpf_xdp_adjust_head(ctx, delta))
		return XDP_ABORTED;

	data_end = (void *)(long)ctx->data_end;
	data = (void *)(long)ctx->data;
	eth = data;
	p = (__u8 *)(eth + 1);
	if ((void *)(p + HEAD_GROW) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(eth->h_dest, old.h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, old.h_dest, ETH_ALEN);
	eth->h_proto = bpf_htons(VMX_TEST_ETYPE);
	if (port == PORT_GROW) {
#pragma unroll
		for (i = 0; i < HEAD_GROW; i++)
			p[i] = HEAD_FILL;
	}
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
