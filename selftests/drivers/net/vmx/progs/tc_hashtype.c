// SPDX-License-Identifier: GPL-2.0
/*
 * tc ingress (clsact, direct action) for tdev_csum.sh: the hash type the
 * driver gave each skb, by class: TCP and UDP to HTY_PORT, ICMP echo
 * requests, over IPv4 and IPv6 (no IPv6 extension header walked).
 * Reading __sk_buff->hash reads skb->hash as the driver left it (no
 * software hash computed for the read). bpf_get_hash_recalc()
 * (skb_get_hash()) keeps a hash set with skb->l4_hash (PKT_HASH_TYPE_L4)
 * and replaces one set with an L3 type by the stack's own flow hash, so a
 * hash it keeps was an L4 one. Every frame goes on.
 *
 * hty_cnt[3 * class + 0..2]: skbs, with a hash, with an L4 hash; classes
 * 0 TCP4, 1 UDP4, 2 ICMP4, 3 TCP6, 4 UDP6, 5 ICMPv6.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define HTY_PORT	7804

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 18);
	__type(key, __u32);
	__type(value, __u64);
} hty_cnt SEC(".maps");

static __always_inline void hty_add(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&hty_cnt, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* class of an L4 header at l4 with protocol proto (v6: 3 added), or -1 */
static __always_inline int hty_class(__u8 proto, __u8 *l4, void *data_end)
{
	__u16 *ports = (void *)l4;

	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		if ((void *)(ports + 2) > data_end ||
		    ports[1] != bpf_htons(HTY_PORT))
			return -1;
		return proto == IPPROTO_TCP ? 0 : 1;
	}
	if ((void *)(l4 + 1) > data_end)
		return -1;
	if (proto == IPPROTO_ICMP && l4[0] == 8)	/* echo request */
		return 2;
	if (proto == IPPROTO_ICMPV6 && l4[0] == 128)	/* echo request */
		return 2;
	return -1;
}

SEC("tc")
int tc_hashtype(struct __sk_buff *skb)
{
	void *data_end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct ethhdr *eth = data;
	__u32 base, hash;
	int c;

	if ((void *)(eth + 1) > data_end)
		return TC_ACT_OK;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->ihl != 5)
			return TC_ACT_OK;
		c = hty_class(ip->protocol, (void *)(ip + 1), data_end);
		if (c < 0 || (c == 2 && ip->protocol != IPPROTO_ICMP))
			return TC_ACT_OK;
		base = 3 * c;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return TC_ACT_OK;
		c = hty_class(ip6->nexthdr, (void *)(ip6 + 1), data_end);
		if (c < 0 || (c == 2 && ip6->nexthdr != IPPROTO_ICMPV6))
			return TC_ACT_OK;
		base = 3 * (c + 3);
	} else {
		return TC_ACT_OK;
	}
	hash = skb->hash;
	hty_add(base);
	if (!hash)
		return TC_ACT_OK;
	hty_add(base + 1);
	if (bpf_get_hash_recalc(skb) == hash)
		hty_add(base + 2);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
