// SPDX-License-Identifier: GPL-2.0
/*
 * UDP to PORT_XSK: redirect to the AF_XDP socket of the receiving queue
 * (xsks[rx_queue_index], filled by xsk_tool); without a socket there the
 * frame goes to the stack.
 */
#include "xdp_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int xdp_redirect_xsk(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (udp_dport(data, data_end) != PORT_XSK)
		return XDP_PASS;
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS);
}

char _license[] SEC("license") = "GPL";
