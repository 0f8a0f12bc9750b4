// SPDX-License-Identifier: GPL-2.0
/*
 * XDP RX metadata (kernel 6.3+ hash, 6.8+ VLAN tag): for IPv4 TCP/UDP
 * frames to RXM_PORT, record per flow what bpf_xdp_metadata_rx_hash and
 * bpf_xdp_metadata_rx_vlan_tag return (rxmeta_common.h); every frame
 * passes. Load it device-bound (bpftool prog load ... xdpmeta_dev IF),
 * or the verifier refuses the kfuncs.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rxmeta_common.h"

/* include/net/xdp.h (not UAPI); the name matters for the kfunc's BTF */
enum xdp_rss_hash_type {
	XDP_RSS_TYPE_NONE = 0,
};

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
				    enum xdp_rss_hash_type *rss_type) __ksym;
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
					__be16 *vlan_proto, __u16 *vlan_tci) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct rxm_flow);
} rxm_xdp SEC(".maps");

SEC("xdp")
int xdp_rxmeta(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	enum xdp_rss_hash_type type = XDP_RSS_TYPE_NONE;
	struct rxm_flow f = {}, *old;
	__be16 vproto = 0;
	__u16 tci = 0;
	__u32 hash = 0, key;

	if (rxm_parse(data, data_end, &f, &key))
		return XDP_PASS;
	f.hash_rc = bpf_xdp_metadata_rx_hash(ctx, &hash, &type);
	f.hash = hash;
	f.rss_type = type;
	f.vlan_rc = bpf_xdp_metadata_rx_vlan_tag(ctx, &vproto, &tci);
	f.vlan_proto = bpf_ntohs(vproto);
	f.vlan_tci = tci;
	f.frames = 1;
	old = bpf_map_lookup_elem(&rxm_xdp, &key);
	if (old) {
		f.frames = old->frames + 1;
		f.hash_changed = old->hash_changed + (old->hash != hash);
	}
	bpf_map_update_elem(&rxm_xdp, &key, &f, BPF_ANY);
	return XDP_PASS;
}

char _license[] SEC("license") = "GPL";
