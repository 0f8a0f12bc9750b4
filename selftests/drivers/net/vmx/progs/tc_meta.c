// SPDX-License-Identifier: GPL-2.0
/*
 * tc ingress (clsact, direct action): count the UDP frames to PORT_META
 * that reach the stack with META_MAGIC in their XDP metadata
 * (skb->data_meta, set by the driver from what xdp_meta left) and those
 * without it. Every frame goes on (TC_ACT_OK).
 */
#include <linux/pkt_cls.h>
#include "xdp_common.h"
#include "meta_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} meta_cnt SEC(".maps");

SEC("tc")
int tc_meta(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 *meta = (void *)(long)skb->data_meta;
	__u32 k = META_CNT_BAD;
	__u64 *c;

	if (udp_dport(data, data_end) != PORT_META)
		return TC_ACT_OK;
	if ((void *)(meta + 1) <= data && *meta == META_MAGIC)
		k = META_CNT_OK;
	c = bpf_map_lookup_elem(&meta_cnt, &k);
	if (c)
		__sync_fetch_and_add(c, 1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
