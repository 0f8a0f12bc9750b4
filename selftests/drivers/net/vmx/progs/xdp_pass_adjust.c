// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_xdp_adjust_head() / bpf_xdp_adjust_tail(), then XDP_PASS: the stack
 * must get the frame as the program left it (xdp_features.sh).
 *   ethertype VMX_TEST_ETYPE, ENCAP_LEN bytes, an IPv4 packet: the
 *     ENCAP_LEN bytes removed with adjust_head, the MACs moved up and the
 *     ethertype set to IPv4: a plain frame the stack delivers
 *   IPv4/UDP to PORT_PASS_VLAN: adjust_head(-4) and an 802.1Q tag of VLAN
 *     PASS_VID inserted after the MACs: the stack hands it to that VLAN
 *   IPv4/UDP to PORT_PASS_TAIL_GROW / PORT_PASS_TAIL_SHRINK: TAIL_GROW bytes
 *     of TAIL_FILL appended / TAIL_SHRINK bytes cut, the IPv4 and UDP
 *     lengths adjusted and the IPv4 header checksum updated (the senders
 *     leave the UDP checksum 0)
 * Everything else passes untouched.
 */
#include "xdp_common.h"

#define PASS_VID		99
#define ENCAP_LEN		8

/* RFC 1624 update of a 16-bit one's complement sum; byte order neutral */
static __always_inline void csum_replace(__u16 *sum, __u16 from, __u16 to)
{
	__u32 s = (__u16)~*sum + (__u16)~from + to;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	*sum = ~s;
}

static __always_inline int decap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr old = *(struct ethhdr *)data, *eth;

	if (bpf_xdp_adjust_head(ctx, ENCAP_LEN))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(eth->h_dest, old.h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_source, old.h_source, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IP);
	return XDP_PASS;
}

static __always_inline int vlan_push(struct xdp_md *ctx)
{
	void *data, *data_end;
	__u8 *p;
	int i;

	if (bpf_xdp_adjust_head(ctx, -4))
		return XDP_ABORTED;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	p = data;
	if ((void *)(p + 18) > data_end)
		return XDP_ABORTED;
	/* MACs 4 bytes up; the old ethertype stays at 16 */
#pragma unroll
	for (i = 0; i < 2 * ETH_ALEN; i++)
		p[i] = p[i + 4];
	p[12] = 0x81;
	p[13] = 0x00;
	p[14] = PASS_VID >> 8;
	p[15] = PASS_VID & 0xff;
	return XDP_PASS;
}

static __always_inline int tail(struct xdp_md *ctx, int grow)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int delta = grow ? TAIL_GROW : -TAIL_SHRINK;
	__u8 fill[TAIL_GROW];
	struct udphdr *udp;
	struct iphdr *ip;
	__u32 len = data_end - data;
	__u16 old, new;
	int i;

	if (bpf_xdp_adjust_tail(ctx, delta))
		return XDP_ABORTED;
	if (grow) {
#pragma unroll
		for (i = 0; i < TAIL_GROW; i++)
			fill[i] = TAIL_FILL;
		if (bpf_xdp_store_bytes(ctx, len, fill, TAIL_GROW))
			return XDP_ABORTED;
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	ip = data + sizeof(struct ethhdr);
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return XDP_ABORTED;
	old = ip->tot_len;
	new = bpf_htons(bpf_ntohs(old) + delta);
	ip->tot_len = new;
	csum_replace(&ip->check, old, new);
	udp->len = bpf_htons(bpf_ntohs(udp->len) + delta);
	return XDP_PASS;
}

SEC("xdp")
int xdp_pass_adjust(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	__u8 *inner = (__u8 *)(eth + 1) + ENCAP_LEN;

	if ((void *)(inner + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(VMX_TEST_ETYPE) && *inner == 0x45)
		return decap(ctx);
	switch (udp_dport(data, data_end)) {
	case PORT_PASS_VLAN:
		return vlan_push(ctx);
	case PORT_PASS_TAIL_GROW:
		return tail(ctx, 1);
	case PORT_PASS_TAIL_SHRINK:
		return tail(ctx, 0);
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
