// SPDX-License-Identifier: GPL-2.0
/*
 * tc ingress (clsact, direct action) for tdev_contract.sh: the hash the
 * driver put on each IPv4 TCP and UDP skb to RXH_PORT. Reading
 * __sk_buff->hash reads skb->hash as it is: no software hash is computed
 * for the read. bpf_get_hash_recalc() (skb_get_hash()) keeps a hash the
 * driver set with an L4 type (skb->l4_hash) and replaces one set with an
 * L3 type by the stack's own flow hash, so a hash it keeps was an L4 one.
 * Every frame goes on.
 *
 * rxh_cnt[0..2]: TCP skbs, with a hash, with an L4 hash;
 * rxh_cnt[3..5]: the same for UDP.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define RXH_PORT	7803

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 6);
	__type(key, __u32);
	__type(value, __u64);
} rxh_cnt SEC(".maps");

static __always_inline void rxh_add(__u32 key)
{
	__u64 *v = bpf_map_lookup_elem(&rxh_cnt, &key);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tc")
int tc_rxhash(struct __sk_buff *skb)
{
	void *data_end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	__u16 *ports = (void *)(ip + 1);
	__u32 base, hash;

	if ((void *)(ports + 2) > data_end)
		return TC_ACT_OK;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ports[1] != bpf_htons(RXH_PORT))
		return TC_ACT_OK;
	if (ip->protocol == IPPROTO_TCP)
		base = 0;
	else if (ip->protocol == IPPROTO_UDP)
		base = 3;
	else
		return TC_ACT_OK;
	hash = skb->hash;
	rxh_add(base);
	if (!hash)
		return TC_ACT_OK;
	rxh_add(base + 1);
	if (bpf_get_hash_recalc(skb) == hash)
		rxh_add(base + 2);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
