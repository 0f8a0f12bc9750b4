// SPDX-License-Identifier: GPL-2.0
/*
 * UDP to PORT_REDIRECT: swap the MACs and redirect through tx_port[0] (a
 * DEVMAP entry holding the target ifindex, set from user space). Swapping
 * the MACs matters on a shared wire: the frame leaves addressed to its
 * sender, never back to this NIC. An empty tx_port makes bpf_redirect_map()
 * return XDP_ABORTED.
 */
#include "xdp_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

SEC("xdp")
int xdp_redirect_devmap(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (udp_dport(data, data_end) != PORT_REDIRECT)
		return XDP_PASS;
	swap_macs(data);
	return bpf_redirect_map(&tx_port, 0, XDP_ABORTED);
}

char _license[] SEC("license") = "GPL";
