// SPDX-License-Identifier: GPL-2.0
/*
 * A multi-buffer (xdp.frags) program for xdp_frags.sh: what it does to
 * IPv4/UDP frames depends on the destination port (mb_common.h); every
 * other frame passes, so ping, TCP and the rest of the traffic go through
 * it to the stack. Frames longer than the linear part (data..data_end)
 * are read and written with bpf_xdp_load_bytes/bpf_xdp_store_bytes only.
 */
#include "xdp_common.h"
#include "mb_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct mb_len);
} mb_len SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} mb_tx_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);	/* queue size; no program */
} mb_cpu SEC(".maps");

static __always_inline int count_len(struct xdp_md *ctx, struct iphdr *ip)
{
	__u32 len = bpf_xdp_get_buff_len(ctx);
	struct mb_len *v, nv = {};

	v = bpf_map_lookup_elem(&mb_len, &len);
	if (!v) {
		bpf_map_update_elem(&mb_len, &len, &nv, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&mb_len, &len);
		if (!v)
			return XDP_ABORTED;
	}
	__sync_fetch_and_add(&v->frames, 1);
	v->linear = ctx->data_end - ctx->data;
	if (len != bpf_ntohs(ip->tot_len) + ETH_HLEN)
		__sync_fetch_and_add(&v->mismatch, 1);
	return XDP_DROP;
}

/* invert MB_RANGE bytes from @off, if the frame holds them */
static __always_inline int invert(struct xdp_md *ctx, __u32 off, __u32 len)
{
	__u8 buf[MB_RANGE];
	int i;

	if (off + MB_RANGE > len)
		return 0;
	if (bpf_xdp_load_bytes(ctx, off, buf, MB_RANGE))
		return -1;
#pragma unroll
	for (i = 0; i < MB_RANGE; i++)
		buf[i] ^= 0xff;
	return bpf_xdp_store_bytes(ctx, off, buf, MB_RANGE) ? -1 : 0;
}

static __always_inline int bytes(struct xdp_md *ctx)
{
	__u32 lin = ctx->data_end - ctx->data;
	__u32 len = bpf_xdp_get_buff_len(ctx);
	__u32 *arg = (void *)(long)ctx->data + MB_ARG_OFF;

	if ((void *)(arg + 1) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	*arg = lin;
	if (lin < MB_RANGE / 2 + MB_ARG_OFF + 4)
		return XDP_ABORTED;
	if (invert(ctx, lin - MB_RANGE / 2, len) ||
	    invert(ctx, lin + MB_FRAG - MB_RANGE / 2, len))
		return XDP_ABORTED;
	if ((void *)(long)ctx->data + ETH_HLEN > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	swap_macs((void *)(long)ctx->data);
	return XDP_TX;
}

/* bpf_xdp_adjust_tail by the frame's own delta; a grown frame gets
 * MB_TAIL_MARK bytes of TAIL_FILL at its end */
static __always_inline int tail(struct xdp_md *ctx, int *delta)
{
	__u8 mark[MB_TAIL_MARK];
	__s32 *arg = (void *)(long)ctx->data + MB_ARG_OFF;
	__u32 len;
	int d, i;

	if ((void *)(arg + 1) > (void *)(long)ctx->data_end)
		return -1;
	d = *arg;
	*delta = d;
	if (bpf_xdp_adjust_tail(ctx, d))
		return -1;
	if (d < MB_TAIL_MARK)
		return 0;
#pragma unroll
	for (i = 0; i < MB_TAIL_MARK; i++)
		mark[i] = TAIL_FILL;
	len = bpf_xdp_get_buff_len(ctx);
	if (len < MB_TAIL_MARK)
		return -1;
	return bpf_xdp_store_bytes(ctx, len - MB_TAIL_MARK, mark, MB_TAIL_MARK) ? -1 : 0;
}

/* the IPv4 and UDP lengths and the IPv4 checksum after a tail change */
static __always_inline int fix_lengths(struct xdp_md *ctx, int delta)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = (void *)(long)ctx->data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip + 1);
	__u16 *w = (void *)ip;
	__u32 sum = 0;
	int i;

	if ((void *)(udp + 1) > data_end)
		return -1;
	ip->tot_len = bpf_htons(bpf_ntohs(ip->tot_len) + delta);
	udp->len = bpf_htons(bpf_ntohs(udp->len) + delta);
	udp->check = 0;
	ip->check = 0;
#pragma unroll
	for (i = 0; i < 10; i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->check = ~sum;
	return 0;
}

SEC("xdp.frags")
int xdp_mb(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	__u32 k = 0;
	int delta;

	switch (udp_dport(data, data_end)) {
	case PORT_MB_DROP:
		return XDP_DROP;
	case PORT_MB_TX:
		swap_macs(data);
		return XDP_TX;
	case PORT_MB_LEN:
		return count_len(ctx, data + ETH_HLEN);
	case PORT_MB_BYTES:
		return bytes(ctx);
	case PORT_MB_TAIL:
		if (tail(ctx, &delta))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		if (data + ETH_HLEN > (void *)(long)ctx->data_end)
			return XDP_ABORTED;
		swap_macs(data);
		((struct ethhdr *)data)->h_proto = bpf_htons(VMX_TEST_ETYPE);
		return XDP_TX;
	case PORT_MB_TAIL_PASS:
		if (tail(ctx, &delta) || fix_lengths(ctx, delta))
			return XDP_ABORTED;
		return XDP_PASS;
	case PORT_MB_REDIRECT:
		swap_macs(data);
		return bpf_redirect_map(&mb_tx_port, 0, XDP_ABORTED);
	case PORT_MB_CPUMAP:
		return bpf_redirect_map(&mb_cpu, k, XDP_ABORTED);
	}
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
