// SPDX-License-Identifier: GPL-2.0
/*
 * UDP to PORT_META: put META_MAGIC into 4 bytes of XDP metadata in front
 * of the frame (bpf_xdp_adjust_meta) and pass it to the stack, where
 * tc_meta.o looks for it on the skb. Everything else passes untouched.
 */
#include "xdp_common.h"
#include "meta_common.h"

SEC("xdp")
int xdp_meta(struct xdp_md *ctx)
{
	void *data, *data_end;
	__u32 *meta;

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (udp_dport(data, data_end) != PORT_META)
		return XDP_PASS;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		return XDP_PASS;
	meta = (void *)(long)ctx->data_meta;
	if ((void *)(meta + 1) > (void *)(long)ctx->data)
		return XDP_PASS;
	*meta = META_MAGIC;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
