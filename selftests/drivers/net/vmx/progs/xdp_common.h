/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared bits of the vmx selftest XDP programs.
 *
 * The programs that rewrite or bounce frames act only on IPv4/UDP frames to
 * a test port, so ARP, ping and everything else keeps working while they are
 * attached and the test can count exactly the frames it sent. Frames they
 * rewrite in length get ethertype VMX_TEST_ETYPE (IEEE local experimental),
 * so no stack on the wire tries to parse them.
 */
#ifndef VMX_XDP_COMMON_H
#define VMX_XDP_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* UDP destination ports the test programs act on (see xdp_lib.sh) */
#define PORT_TX		7777	/* xdp_tx: swap MACs, XDP_TX */
#define PORT_GROW	7778	/* adjust_head/adjust_tail: grow, XDP_TX */
#define PORT_SHRINK	7779	/* adjust_head/adjust_tail: shrink, XDP_TX */
#define PORT_REDIRECT	7780	/* xdp_redirect_devmap: swap MACs, redirect */
#define PORT_XSK	7781	/* xdp_redirect_xsk: to the AF_XDP socket */
#define PORT_META	7782	/* xdp_meta: 4 bytes of metadata, XDP_PASS */
#define PORT_PASS_VLAN	7783	/* xdp_pass_adjust: push a VLAN tag, XDP_PASS */
#define PORT_PASS_TAIL_GROW	7784	/* xdp_pass_adjust: grow the tail */
#define PORT_PASS_TAIL_SHRINK	7785	/* xdp_pass_adjust: shrink the tail */
#define PORT_UNKNOWN_ACT	7786	/* xdp_unknown_act: return action 42 */

#define HEAD_GROW	16	/* bytes added in front (after the MACs) */
#define HEAD_SHRINK	8	/* bytes removed after the Ethernet header */
#define TAIL_GROW	24	/* bytes appended, filled with TAIL_FILL */
#define TAIL_SHRINK	10	/* bytes cut from the end */
#define HEAD_FILL	0xa5
#define TAIL_FILL	0x5a
#define VMX_TEST_ETYPE	0x88b5

/* UDP destination port of an IPv4/UDP frame, or -1. */
static __always_inline int udp_dport(void *data, void *data_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);

	if ((void *)(udp + 1) > data_end)
		return -1;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP)
		return -1;
	return bpf_ntohs(udp->dest);
}

static __always_inline void swap_macs(struct ethhdr *eth)
{
	unsigned char tmp[ETH_ALEN];

	__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
}

#endif
