// SPDX-License-Identifier: GPL-2.0
/*
 * tc ingress (clsact, direct action) beside xdp_rxmeta: per flow to
 * RXM_PORT, the hash and VLAN tag the stack got on the skb (skb->hash as
 * the driver set it, skb->vlan_present/vlan_tci). Every frame goes on.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "rxmeta_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct rxm_flow);
} rxm_tc SEC(".maps");

SEC("tc")
int tc_rxmeta(struct __sk_buff *skb)
{
	void *data_end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct rxm_flow f = {}, *old;
	__u32 key;

	if (rxm_parse(data, data_end, &f, &key))
		return TC_ACT_OK;
	f.skb_hash = skb->hash;
	f.skb_vlan_present = skb->vlan_present;
	f.skb_vlan_tci = skb->vlan_tci;
	f.frames = 1;
	old = bpf_map_lookup_elem(&rxm_tc, &key);
	if (old)
		f.frames = old->frames + 1;
	bpf_map_update_elem(&rxm_tc, &key, &f, BPF_ANY);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
