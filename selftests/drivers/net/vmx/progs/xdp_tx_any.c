// SPDX-License-Identifier: GPL-2.0
/*
 * Every frame sent back as it is, whatever its length (a malformed one
 * included): the driver, not the program, must keep a frame that holds no
 * Ethernet header off the wire.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_tx_any(struct xdp_md *ctx)
{
	return XDP_TX;
}

char _license[] SEC("license") = "GPL";
