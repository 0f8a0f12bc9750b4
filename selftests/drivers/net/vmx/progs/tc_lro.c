// SPDX-License-Identifier: GPL-2.0
/*
 * tc ingress (clsact, direct action) for lro.sh: what the stack got on
 * each IPv4 TCP skb to or from LRO_PORT. An aggregate carries gso_size and
 * gso_segs; the count must match the TCP payload it holds. Every frame
 * goes on.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define LRO_PORT 5201		/* iperf3's */

struct lro_seen {
	__u64 skbs;		/* TCP skbs of the port */
	__u64 gso_skbs;		/* ... with gso_size set */
	__u64 segs;		/* sum of their gso_segs */
	__u64 bad_segs;		/* gso_segs != DIV_ROUND_UP(payload, gso_size) */
	__u64 min_size;		/* smallest and largest gso_size */
	__u64 max_size;
	__u64 max_len;		/* longest skb */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lro_seen);
} lro_seen SEC(".maps");

SEC("tc")
int tc_lro(struct __sk_buff *skb)
{
	struct lro_seen *s;
	struct tcphdr th;
	struct iphdr iph;
	__u32 key = 0, hlen, plen, size;

	if (skb->protocol != bpf_htons(ETH_P_IP) ||
	    bpf_skb_load_bytes(skb, ETH_HLEN, &iph, sizeof(iph)) ||
	    iph.protocol != IPPROTO_TCP || iph.ihl < 5)
		return TC_ACT_OK;
	hlen = ETH_HLEN + iph.ihl * 4;
	if (bpf_skb_load_bytes(skb, hlen, &th, sizeof(th)) ||
	    (th.source != bpf_htons(LRO_PORT) && th.dest != bpf_htons(LRO_PORT)))
		return TC_ACT_OK;
	hlen += th.doff * 4;
	s = bpf_map_lookup_elem(&lro_seen, &key);
	if (!s)
		return TC_ACT_OK;
	__sync_fetch_and_add(&s->skbs, 1);
	if (skb->len > s->max_len)
		s->max_len = skb->len;
	size = skb->gso_size;
	if (!size)
		return TC_ACT_OK;
	plen = skb->len > hlen ? skb->len - hlen : 0;
	__sync_fetch_and_add(&s->gso_skbs, 1);
	__sync_fetch_and_add(&s->segs, skb->gso_segs);
	if (skb->gso_segs != (plen + size - 1) / size)
		__sync_fetch_and_add(&s->bad_segs, 1);
	if (!s->min_size || size < s->min_size)
		s->min_size = size;
	if (size > s->max_size)
		s->max_size = size;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
