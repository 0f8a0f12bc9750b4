// SPDX-License-Identifier: GPL-2.0
/* Every frame dropped, multi-buffer ones too (the benchmark's 9000-byte
 * XDP_DROP cell: xdp-bench has no xdp.frags program).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp.frags")
int xdp_drop_mb(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
