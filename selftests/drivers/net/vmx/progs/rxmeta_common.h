/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by xdp_rxmeta.c (XDP RX metadata kfuncs) and tc_rxmeta.c (what
 * the stack got for the same frames), read by xdp_rxmeta.sh: both record
 * IPv4 TCP and UDP frames to RXM_PORT, untagged or with one 802.1Q tag
 * left in the frame, per flow.
 */
#ifndef VMX_RXMETA_COMMON_H
#define VMX_RXMETA_COMMON_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>

#define RXM_PORT	7800
#define RXM_NO_VID	0xffff	/* no tag in the frame itself */

/* key: IPPROTO_TCP/UDP << 24 | third byte of the destination address << 16
 * | source port (a UDP source port may come back on another subnet) */
struct rxm_flow {
	__u32 saddr, daddr;	/* network order */
	__u16 sport, dport;	/* host order */
	__u32 proto;
	__u32 frames;
	__u32 inline_vid;	/* VID of a tag in the frame, RXM_NO_VID */
	/* xdp_rxmeta: the kfuncs' return values and results (last frame),
	 * and how many frames gave a different hash than the first */
	__s32 hash_rc;
	__u32 hash;
	__u32 rss_type;
	__u32 hash_changed;
	__s32 vlan_rc;
	__u32 vlan_proto;	/* host order */
	__u32 vlan_tci;
	/* tc_rxmeta: skb->hash, skb->vlan_present, skb->vlan_tci */
	__u32 skb_hash;
	__u32 skb_vlan_present;
	__u32 skb_vlan_tci;
};

struct rxm_l4 {
	__u16 source, dest;
};

/* Parse Ethernet [802.1Q] IPv4 TCP/UDP to RXM_PORT into @f; 0 if it is one. */
static __always_inline int rxm_parse(void *data, void *data_end,
				     struct rxm_flow *f, __u32 *key)
{
	struct ethhdr *eth = data;
	__u16 proto;
	void *p = eth + 1;
	struct iphdr *ip;
	struct rxm_l4 *l4;

	if (p > data_end)
		return -1;
	proto = eth->h_proto;
	f->inline_vid = RXM_NO_VID;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		__u16 *tag = p;

		if ((void *)(tag + 2) > data_end)
			return -1;
		f->inline_vid = bpf_ntohs(tag[0]) & 0xfff;
		proto = tag[1];
		p = tag + 2;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return -1;
	ip = p;
	if ((void *)(ip + 1) > data_end || ip->ihl != 5)
		return -1;
	if (ip->protocol != IPPROTO_TCP && ip->protocol != IPPROTO_UDP)
		return -1;
	l4 = (void *)(ip + 1);
	if ((void *)(l4 + 1) > data_end || l4->dest != bpf_htons(RXM_PORT))
		return -1;
	f->saddr = ip->saddr;
	f->daddr = ip->daddr;
	f->sport = bpf_ntohs(l4->source);
	f->dport = RXM_PORT;
	f->proto = ip->protocol;
	*key = (__u32)ip->protocol << 24 |
	       (bpf_ntohl(ip->daddr) >> 8 & 0xff) << 16 | f->sport;
	return 0;
}

#endif
