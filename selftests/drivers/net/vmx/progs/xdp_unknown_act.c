// SPDX-License-Identifier: GPL-2.0
/*
 * Returns an action the kernel does not define (UNKNOWN_ACT) for IPv4/UDP
 * frames to PORT_UNKNOWN_ACT, XDP_PASS for everything else: the driver must
 * drop such a frame and count it as aborted (xdp_features.sh).
 */
#include "xdp_common.h"

#define UNKNOWN_ACT		42

SEC("xdp")
int xdp_unknown_act(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;

	if (udp_dport(data, data_end) == PORT_UNKNOWN_ACT)
		return UNKNOWN_ACT;
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
