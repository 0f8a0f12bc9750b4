// SPDX-License-Identifier: GPL-2.0
/* A multi-buffer aware program that passes every frame. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp.frags")
int xdp_frags(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
