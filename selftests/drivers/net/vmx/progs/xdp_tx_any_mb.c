// SPDX-License-Identifier: GPL-2.0
/* xdp_tx_any.c for multi-buffer frames: every frame sent back as it is. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp.frags")
int xdp_tx_any_mb(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
