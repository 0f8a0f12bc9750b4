// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: ethtool operations.
 *
 * Standard counters live in ndo_get_stats64 and the per-queue netlink
 * stats; ethtool -S only lists what has no standard home.
 */
#include <linux/ethtool.h>
#include <linux/netdevice.h>

#include "vmx.h"

struct vmx_stat_desc {
	const char *name;
	u32 idx;
};

/* per RX queue, printed as rxN_<name> */
static const struct vmx_stat_desc vmx_rx_stats[] = {
	{ "lro_pkts",		VMX_RXS_LRO_PKTS },
	{ "lro_bytes",		VMX_RXS_LRO_BYTES },
	{ "dev_err",		VMX_RXS_DEV_ERR },
	{ "drop",		VMX_RXS_DROP },
	{ "bad_desc",		VMX_RXS_BAD_DESC },
	{ "data_ring",		VMX_RXS_DATA_RING },
	{ "copied",		VMX_RXS_COPIED },
	{ "xdp_packets",	VMX_RXS_XDP_PACKETS },
	{ "xdp_drop",		VMX_RXS_XDP_DROP },
	{ "xdp_pass",		VMX_RXS_XDP_PASS },
	{ "xdp_tx",		VMX_RXS_XDP_TX },
	{ "xdp_tx_errors",	VMX_RXS_XDP_TX_ERR },
	{ "xdp_redirect",	VMX_RXS_XDP_REDIRECT },
	{ "xdp_redirect_errors", VMX_RXS_XDP_REDIRECT_ERR },
	{ "xdp_aborted",	VMX_RXS_XDP_ABORTED },
	{ "xdp_frags",		VMX_RXS_XDP_FRAGS },
	{ "xsk_copied",		VMX_RXS_XSK_COPIED },
	{ "inner_unused",	VMX_RXS_INNER_UNUSED },
	{ "ooo",		VMX_RXS_OOO },
	{ "lro_unparsed",	VMX_RXS_LRO_UNPARSED },
};

/* per TX queue, printed as txN_<name> (XDP queues as xdptxN_<name>) */
static const struct vmx_stat_desc vmx_tx_stats[] = {
	{ "packets",		VMX_TXS_PACKETS },
	{ "bytes",		VMX_TXS_BYTES },
	{ "drop",		VMX_TXS_DROP },
	{ "map_errors",		VMX_TXS_MAP_ERR },
	{ "linearize",		VMX_TXS_LINEARIZE },
	{ "doorbells",		VMX_TXS_DOORBELL },
	{ "bad_desc",		VMX_TXS_BAD_DESC },
	{ "xdp_xmit",		VMX_TXS_XDP_XMIT },
	{ "xdp_xmit_errors",	VMX_TXS_XDP_XMIT_ERR },
	{ "xsk_xmit",		VMX_TXS_XSK_XMIT },
	{ "xsk_invalid",		VMX_TXS_XSK_BAD },
	{ "tso_tunnel",		VMX_TXS_TSO_TUNNEL },
	{ "csum_tunnel",	VMX_TXS_CSUM_TUNNEL },
};

/* device-wide counters from the device, no standard home */
static const char * const vmx_dev_stats[] = {
	"dev_tx_tso_pkts",
	"dev_tx_tso_bytes",
	"dev_rx_lro_pkts",
	"dev_rx_lro_bytes",
	"dev_rx_nobuf",
	"resets",		/* driver: device resets done */
	"bad_desc",		/* driver: bad completions, every queue ever */
};

static u32 vmx_ntxq(const struct vmx_priv *vp)
{
	return vp->qs.txq ? vp->qs.nq + vp->qs.nxdp : 0;
}

static u32 vmx_nrxq(const struct vmx_priv *vp)
{
	return vp->qs.rxq ? vp->qs.nq : 0;
}

static int vmx_get_sset_count(struct net_device *nd, int sset)
{
	struct vmx_priv *vp = netdev_priv(nd);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return ARRAY_SIZE(vmx_dev_stats) +
	       vmx_nrxq(vp) * ARRAY_SIZE(vmx_rx_stats) +
	       vmx_ntxq(vp) * ARRAY_SIZE(vmx_tx_stats);
}

static void vmx_get_strings(struct net_device *nd, u32 sset, u8 *data)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u32 q, i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(vmx_dev_stats); i++)
		ethtool_sprintf(&data, "%s", vmx_dev_stats[i]);
	for (q = 0; q < vmx_nrxq(vp); q++)
		for (i = 0; i < ARRAY_SIZE(vmx_rx_stats); i++)
			ethtool_sprintf(&data, "rx%u_%s", q,
					vmx_rx_stats[i].name);
	for (q = 0; q < vmx_ntxq(vp); q++)
		for (i = 0; i < ARRAY_SIZE(vmx_tx_stats); i++)
			ethtool_sprintf(&data, "%stx%u_%s",
					q < vp->qs.nq ? "" : "xdp",
					q < vp->qs.nq ? q : q - vp->qs.nq,
					vmx_tx_stats[i].name);
}

static void vmx_get_ethtool_stats(struct net_device *nd,
				  struct ethtool_stats *es, u64 *data)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u64 r[VMX_RXS_NUM], t[VMX_TXS_NUM];
	struct rtnl_link_stats64 st;
	unsigned long flags;
	u32 q, i;

	/* refreshes the device counter totals */
	dev_get_stats(nd, &st);
	spin_lock_irqsave(&vp->stats_lock, flags);
	*data++ = vp->base.dev_tx[offsetof(struct vmx_tx_stats, tso_pkts) / 8];
	*data++ = vp->base.dev_tx[offsetof(struct vmx_tx_stats, tso_bytes) / 8];
	*data++ = vp->base.dev_rx[offsetof(struct vmx_rx_stats, lro_pkts) / 8];
	*data++ = vp->base.dev_rx[offsetof(struct vmx_rx_stats, lro_bytes) / 8];
	*data++ = vp->base.dev_rx[offsetof(struct vmx_rx_stats, nobuf_pkts) / 8];
	spin_unlock_irqrestore(&vp->stats_lock, flags);
	*data++ = READ_ONCE(vp->resets);
	/* the per-queue counts go with their queues (ifdown, fewer channels) */
	vmx_get_totals(vp, r, t);
	*data++ = r[VMX_RXS_BAD_DESC] + t[VMX_TXS_BAD_DESC];

	for (q = 0; q < vmx_nrxq(vp); q++) {
		vmx_rxq_read_stats(&vp->qs.rxq[q], r);
		for (i = 0; i < ARRAY_SIZE(vmx_rx_stats); i++)
			*data++ = r[vmx_rx_stats[i].idx];
	}
	for (q = 0; q < vmx_ntxq(vp); q++) {
		vmx_txq_read_stats(&vp->qs.txq[q], t);
		for (i = 0; i < ARRAY_SIZE(vmx_tx_stats); i++)
			*data++ = t[vmx_tx_stats[i].idx];
	}
}

static void vmx_get_drvinfo(struct net_device *nd,
			    struct ethtool_drvinfo *info)
{
	struct vmx_priv *vp = netdev_priv(nd);

	strscpy(info->driver, VMX_DRV_NAME, sizeof(info->driver));
	strscpy(info->version, VMX_VERSION, sizeof(info->version));
	snprintf(info->fw_version, sizeof(info->fw_version),
		 "vmxnet3 rev %u", vp->rev);
	strscpy(info->bus_info, pci_name(vp->pdev), sizeof(info->bus_info));
}

static void vmx_get_ringparam(struct net_device *nd,
			      struct ethtool_ringparam *rp,
			      struct kernel_ethtool_ringparam *krp,
			      struct netlink_ext_ack *extack)
{
	struct vmx_priv *vp = netdev_priv(nd);

	rp->rx_max_pending = VMX_RING_MAX;
	rp->rx_jumbo_max_pending = VMX_RING_MAX;
	rp->tx_max_pending = VMX_RING_MAX;
	rp->rx_pending = vp->qs.rx_size[0];
	rp->rx_jumbo_pending = vp->qs.rx_size[1];
	rp->tx_pending = vp->qs.tx_size;
}

static bool vmx_ring_size_ok(u32 n)
{
	return n >= VMX_MIN_RING && n <= VMX_RING_MAX &&
	       !(n % VMX_RING_SIZE_ALIGN);
}

static int vmx_set_ringparam(struct net_device *nd,
			     struct ethtool_ringparam *rp,
			     struct kernel_ethtool_ringparam *krp,
			     struct netlink_ext_ack *extack)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_qset want = vp->qs;

	if (rp->rx_mini_pending) {
		NL_SET_ERR_MSG_MOD(extack, "no rx-mini ring");
		return -EINVAL;
	}
	if (!vmx_ring_size_ok(rp->rx_pending) ||
	    !vmx_ring_size_ok(rp->rx_jumbo_pending) ||
	    !vmx_ring_size_ok(rp->tx_pending)) {
		vmx_extack_fmt(extack, "ring size out of range or not aligned",
			       "ring sizes must be multiples of %u from %u to %u",
			       VMX_RING_SIZE_ALIGN, VMX_MIN_RING, VMX_RING_MAX);
		return -EINVAL;
	}
	/* from revision 7 every ring is a power of two (as Linux keeps it) */
	if (vp->rev >= 7 && (!is_power_of_2(rp->rx_pending) ||
			     !is_power_of_2(rp->rx_jumbo_pending) ||
			     !is_power_of_2(rp->tx_pending))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "from device revision 7 ring sizes must be powers of two");
		return -EINVAL;
	}
	if (rp->rx_pending == want.rx_size[0] &&
	    rp->rx_jumbo_pending == want.rx_size[1] &&
	    rp->tx_pending == want.tx_size)
		return 0;
	want.rx_size[0] = rp->rx_pending;
	want.rx_size[1] = rp->rx_jumbo_pending;
	want.tx_size = rp->tx_pending;
	return vmx_reconfigure(vp, &want, extack);
}

static void vmx_get_channels(struct net_device *nd,
			     struct ethtool_channels *ch)
{
	struct vmx_priv *vp = netdev_priv(nd);

	ch->max_combined = vp->max_queues;
	ch->combined_count = vp->qs.nq;
	ch->max_other = vp->intr_type == VMX_IT_MSIX;
	ch->other_count = ch->max_other;
}

static int vmx_set_channels(struct net_device *nd, struct ethtool_channels *ch)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_qset want = vp->qs;
	int err;

	/* the ethtool core already refused counts above the maxima */
	if (ch->rx_count || ch->tx_count || !ch->combined_count)
		return -EINVAL;
	if (ch->combined_count == vp->qs.nq)
		return 0;
	want.nq = ch->combined_count;
	if (vp->xsk_pools && vmx_xdp_queues(vp, want.nq) != want.nq) {
		netdev_err(nd, "AF_XDP zero-copy needs an XDP TX queue per channel: at most %u channels while a pool is bound\n",
			   vp->max_tx_queues / 2);
		return -EOPNOTSUPP;
	}
	err = vmx_reconfigure(vp, &want, NULL);
	if (!err)
		vmx_xdp_update_features(vp);
	return err;
}

static int vmx_get_link_ksettings(struct net_device *nd,
				  struct ethtool_link_ksettings *ks)
{
	struct vmx_priv *vp = netdev_priv(nd);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	if (netif_carrier_ok(nd)) {
		ks->base.speed = vp->link_speed;
		ks->base.duplex = DUPLEX_FULL;
	} else {
		ks->base.speed = SPEED_UNKNOWN;
		ks->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

/* What one device reset renews: everything of this function, nothing shared. */
#define VMX_RESET_PARTS	(ETH_RESET_DMA | ETH_RESET_IRQ | ETH_RESET_FILTER | \
			 ETH_RESET_OFFLOAD | ETH_RESET_MAC)

/*
 * ethtool --reset DEV dedicated|all: the recovery the driver runs after a
 * TX timeout or a bad descriptor (quiesce, reset, activate again with the
 * same rings, filters, offloads and XDP program), by the same work item.
 * The parts cannot be reset one by one, so a narrower request is refused.
 */
static int vmx_reset(struct net_device *nd, u32 *flags)
{
	struct vmx_priv *vp = netdev_priv(nd);

	if ((*flags & VMX_RESET_PARTS) != VMX_RESET_PARTS) {
		netdev_info(nd, "only a whole-device reset is possible (ethtool --reset %s dedicated)\n",
			    nd->name);
		return -EOPNOTSUPP;
	}
	if (!netif_running(nd))
		return -ENETDOWN;
	vmx_schedule_reset(vp);
	*flags &= ~VMX_RESET_PARTS;
	return 0;
}

/* ---- interrupt coalescing (rev 3+) ---- */

/*
 * The device's schemes map onto ethtool's fields one at a time:
 * adaptive-rx on: adaptive; rx-usecs N: rate-based, one interrupt per N us
 * at most (10..10000); rx-frames / tx-frames / tx-frames-irq: static
 * depths (1..128, the ones not given 64); all zero: no coalescing.
 */
#define VMX_COAL_DEF_DEPTH	64

/* Coalescing commands exist from revision 3; below, a refusal that says so. */
static bool vmx_coal_supported(struct vmx_priv *vp,
			       struct netlink_ext_ack *extack)
{
	if (vp->rev >= 3)
		return true;
	vmx_extack_fmt(extack, "coalescing needs device revision 3",
		       "coalescing needs device revision 3 (this device: %u)",
		       vp->rev);
	return false;
}

static int vmx_get_coalesce(struct net_device *nd, struct ethtool_coalesce *ec,
			    struct kernel_ethtool_coalesce *kec,
			    struct netlink_ext_ack *extack)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_coal c;
	u32 rate;

	if (!vmx_coal_supported(vp, extack))
		return -EOPNOTSUPP;
	vmx_coal_read(vp, &c);
	switch (le32_to_cpu(c.mode)) {
	case VMX_COAL_ADAPTIVE:
		ec->use_adaptive_rx_coalesce = 1;
		break;
	case VMX_COAL_RATE:
		rate = le32_to_cpu(c.p[0]);
		ec->rx_coalesce_usecs = rate ? USEC_PER_SEC / rate : 0;
		break;
	case VMX_COAL_STATIC:
		ec->tx_max_coalesced_frames = le32_to_cpu(c.p[0]);
		ec->tx_max_coalesced_frames_irq = le32_to_cpu(c.p[1]);
		ec->rx_max_coalesced_frames = le32_to_cpu(c.p[2]);
		break;
	}
	return 0;
}

static u32 vmx_coal_depth(u32 v)
{
	return v ? v : VMX_COAL_DEF_DEPTH;
}

static int vmx_set_coalesce(struct net_device *nd, struct ethtool_coalesce *ec,
			    struct kernel_ethtool_coalesce *kec,
			    struct netlink_ext_ack *extack)
{
	struct vmx_priv *vp = netdev_priv(nd);
	bool frames = ec->rx_max_coalesced_frames ||
		      ec->tx_max_coalesced_frames ||
		      ec->tx_max_coalesced_frames_irq;
	bool usecs = ec->rx_coalesce_usecs;
	struct vmx_coal c = { };

	if (!vmx_coal_supported(vp, extack))
		return -EOPNOTSUPP;
	if (ec->use_adaptive_rx_coalesce + usecs + frames > 1) {
		NL_SET_ERR_MSG_MOD(extack,
				   "one scheme at a time: adaptive-rx, rx-usecs (rate) or frame counts (static)");
		return -EINVAL;
	}
	if (ec->use_adaptive_rx_coalesce) {
		c.mode = cpu_to_le32(VMX_COAL_ADAPTIVE);
	} else if (usecs) {
		u32 rate = USEC_PER_SEC / ec->rx_coalesce_usecs;

		if (rate < VMX_COAL_RATE_MIN || rate > VMX_COAL_RATE_MAX) {
			vmx_extack_fmt(extack, "rx-usecs out of range",
				       "rx-usecs must be %u..%u (the device takes %u..%u interrupts/s)",
				       (u32)(USEC_PER_SEC / VMX_COAL_RATE_MAX),
				       (u32)(USEC_PER_SEC / VMX_COAL_RATE_MIN),
				       VMX_COAL_RATE_MIN, VMX_COAL_RATE_MAX);
			return -EINVAL;
		}
		c.mode = cpu_to_le32(VMX_COAL_RATE);
		c.p[0] = cpu_to_le32(rate);
	} else if (frames) {
		if (ec->rx_max_coalesced_frames > VMX_COAL_DEPTH_MAX ||
		    ec->tx_max_coalesced_frames > VMX_COAL_DEPTH_MAX ||
		    ec->tx_max_coalesced_frames_irq > VMX_COAL_DEPTH_MAX) {
			vmx_extack_fmt(extack, "frame counts out of range",
				       "frame counts must be at most %u",
				       VMX_COAL_DEPTH_MAX);
			return -EINVAL;
		}
		c.mode = cpu_to_le32(VMX_COAL_STATIC);
		c.p[0] = cpu_to_le32(vmx_coal_depth(ec->tx_max_coalesced_frames));
		c.p[1] = cpu_to_le32(vmx_coal_depth(ec->tx_max_coalesced_frames_irq));
		c.p[2] = cpu_to_le32(vmx_coal_depth(ec->rx_max_coalesced_frames));
	} else {
		c.mode = cpu_to_le32(VMX_COAL_DISABLED);
	}
	vp->coal = c;
	vp->coal_set = true;
	vmx_coal_apply(vp);
	return 0;
}

/* ---- RSS: key, indirection table, hashed fields ---- */

static u32 vmx_get_rxfh_key_size(struct net_device *nd)
{
	return VMX_RSS_KEY_SIZE;
}

static u32 vmx_get_rxfh_indir_size(struct net_device *nd)
{
	return VMX_RSS_IND_SIZE;
}

static void vmx_rxfh_read(struct vmx_priv *vp, u32 *indir, u8 *key)
{
	u32 i;

	vmx_rss_default(vp);
	if (indir)
		for (i = 0; i < VMX_RSS_IND_SIZE; i++)
			indir[i] = vp->rss_ind[i];
	if (key)
		memcpy(key, vp->rss_key, VMX_RSS_KEY_SIZE);
}

/* Toeplitz only; entries below the queue count (the ethtool core checks). */
static int vmx_rxfh_write(struct vmx_priv *vp, const u32 *indir,
			  const u8 *key, u8 hfunc,
			  struct netlink_ext_ack *extack)
{
	u32 i;

	if (hfunc != ETH_RSS_HASH_NO_CHANGE && hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "the device hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (indir)
		for (i = 0; i < VMX_RSS_IND_SIZE; i++)
			vp->rss_ind[i] = indir[i];
	if (key)
		memcpy(vp->rss_key, key, VMX_RSS_KEY_SIZE);
	vmx_rss_update(vp);
	return 0;
}

#ifdef VMX_HAVE_RXFH_PARAM
static int vmx_get_rxfh(struct net_device *nd, struct ethtool_rxfh_param *p)
{
	p->hfunc = ETH_RSS_HASH_TOP;
	vmx_rxfh_read(netdev_priv(nd), p->indir, p->key);
	return 0;
}

static int vmx_set_rxfh(struct net_device *nd, struct ethtool_rxfh_param *p,
			struct netlink_ext_ack *extack)
{
	return vmx_rxfh_write(netdev_priv(nd), p->indir, p->key, p->hfunc,
			      extack);
}
#else
static int vmx_get_rxfh(struct net_device *nd, u32 *indir, u8 *key, u8 *hfunc)
{
	if (hfunc)
		*hfunc = ETH_RSS_HASH_TOP;
	vmx_rxfh_read(netdev_priv(nd), indir, key);
	return 0;
}

static int vmx_set_rxfh(struct net_device *nd, const u32 *indir,
			const u8 *key, const u8 hfunc)
{
	return vmx_rxfh_write(netdev_priv(nd), indir, key, hfunc, NULL);
}
#endif

/* The SET_RSS_FIELDS bit of a flow type, or 0 when it has none. */
static u32 vmx_rss_field(u32 flow_type)
{
	switch (flow_type) {
	case TCP_V4_FLOW:	return VMX_RSSF_TCP4;
	case TCP_V6_FLOW:	return VMX_RSSF_TCP6;
	case UDP_V4_FLOW:	return VMX_RSSF_UDP4;
	case UDP_V6_FLOW:	return VMX_RSSF_UDP6;
	case ESP_V4_FLOW:	return VMX_RSSF_ESP4;
	case ESP_V6_FLOW:	return VMX_RSSF_ESP6;
	default:		return 0;
	}
}

/* rev 7+: the DCR0 capability a hashed field needs (TCP needs none) */
static u32 vmx_rss_cap(u32 bit)
{
	if (bit & (VMX_RSSF_UDP4 | VMX_RSSF_UDP6))
		return VMX_CAP_UDP_RSS;
	if (bit & VMX_RSSF_ESP4)
		return VMX_CAP_ESP_RSS_IPV4;
	if (bit & VMX_RSSF_ESP6)
		return VMX_CAP_ESP_RSS_IPV6;
	return 0;
}

#define VMX_RXH_IP	(RXH_IP_SRC | RXH_IP_DST)
#define VMX_RXH_L4	(RXH_L4_B_0_1 | RXH_L4_B_2_3)

static bool vmx_flow_is_ip(u32 flow_type)
{
	switch (flow_type) {
	case TCP_V4_FLOW: case UDP_V4_FLOW: case ESP_V4_FLOW: case AH_V4_FLOW:
	case AH_ESP_V4_FLOW: case SCTP_V4_FLOW: case IPV4_FLOW:
	case TCP_V6_FLOW: case UDP_V6_FLOW: case ESP_V6_FLOW: case AH_V6_FLOW:
	case AH_ESP_V6_FLOW: case SCTP_V6_FLOW: case IPV6_FLOW:
		return true;
	default:
		return false;
	}
}

/* ethtool -n DEV rx-flow-hash FLOW: the fields hashed for @flow_type */
static int vmx_flow_hash_get(struct vmx_priv *vp, u32 flow_type, u32 *data)
{
	u32 bit;

	if (!vmx_flow_is_ip(flow_type))
		return -EINVAL;
	*data = VMX_RXH_IP;
	bit = vmx_rss_field(flow_type);
	if (bit & (vp->rev >= 4 ? vp->rss_granted : VMX_RSSF_DEFAULT))
		*data |= VMX_RXH_L4;
	return 0;
}

static u32 vmx_get_rx_ring_count(struct net_device *nd)
{
	struct vmx_priv *vp = netdev_priv(nd);

	return vp->qs.nq;
}

#ifdef VMX_HAVE_RXFH_FIELDS
static int vmx_get_rxfh_fields(struct net_device *nd,
			       struct ethtool_rxfh_fields *f)
{
	return vmx_flow_hash_get(netdev_priv(nd), f->flow_type, &f->data);
}
#endif

static int vmx_get_rxnfc(struct net_device *nd, struct ethtool_rxnfc *info,
			 u32 *rules)
{
	switch (info->cmd) {
	case ETHTOOL_GRXRINGS:
		info->data = vmx_get_rx_ring_count(nd);
		return 0;
	case ETHTOOL_GRXFH: {
		u32 data;
		int err;

		err = vmx_flow_hash_get(netdev_priv(nd), info->flow_type,
					&data);
		info->data = data;
		return err;
	}
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * ethtool -N DEV rx-flow-hash FLOW sd|sdfn: addresses are always hashed;
 * the ports (the SPI for ESP) of TCP, UDP and ESP can be added or removed
 * from revision 4 (ESP over IPv6 from 6), as far as the device grants.
 */
static int vmx_flow_hash_set(struct net_device *nd, u32 flow_type, u32 data)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u32 bit, old = vp->rss_fields;

	if (!vmx_flow_is_ip(flow_type))
		return -EINVAL;
	bit = vmx_rss_field(flow_type);
	if (data != VMX_RXH_IP &&
	    (!bit || data != (VMX_RXH_IP | VMX_RXH_L4))) {
		netdev_info(nd, "rx-flow-hash: only sd, or sdfn for TCP, UDP and ESP\n");
		return -EINVAL;
	}
	if (!bit)
		return 0;
	if (vp->rev >= 7 && vmx_rss_cap(bit) &&
	    !(vp->caps & vmx_rss_cap(bit))) {
		netdev_info(nd, "rx-flow-hash: the device did not grant the capability (DCR0 %#x)\n",
			    vmx_rss_cap(bit));
		return -EOPNOTSUPP;
	}
	if (vp->rev < 4 || (bit == VMX_RSSF_ESP6 && vp->rev < 6)) {
		netdev_info(nd, "rx-flow-hash: choosing hashed fields needs device revision %u (this device: %u)\n",
			    bit == VMX_RSSF_ESP6 ? 6 : 4, vp->rev);
		return -EOPNOTSUPP;
	}
	if (data & VMX_RXH_L4)
		vp->rss_fields |= bit;
	else
		vp->rss_fields &= ~bit;
	if (vp->rss_fields == old)
		return 0;
	if ((vmx_rss_fields_apply(vp) & bit) != (vp->rss_fields & bit)) {
		netdev_info(nd, "rx-flow-hash: the device did not grant the change (fields %#x asked, %#x in effect)\n",
			    vp->rss_fields, vp->rss_granted);
		vp->rss_fields = old;
		vmx_rss_fields_apply(vp);
		return -EOPNOTSUPP;
	}
	return 0;
}

#ifdef VMX_HAVE_RXFH_FIELDS
static int vmx_set_rxfh_fields(struct net_device *nd,
			       const struct ethtool_rxfh_fields *f,
			       struct netlink_ext_ack *extack)
{
	return vmx_flow_hash_set(nd, f->flow_type, f->data);
}
#endif

static int vmx_set_rxnfc(struct net_device *nd, struct ethtool_rxnfc *info)
{
	if (info->cmd != ETHTOOL_SRXFH)
		return -EOPNOTSUPP;
	return vmx_flow_hash_set(nd, info->flow_type, info->data);
}

/* ---- register dump (ethtool -d) ---- */

/*
 * Layout version 1, u32 words: revision, VRRS, UVRS, MACL, MACH, ECR,
 * queue pairs, XDP TX queues, state bits; then per TX queue fill, posted,
 * clean, comp_next, size, bad; per RX queue ring 0 fill, cons, size,
 * ring 1 fill, cons, size, comp_next, comp_size, bad. The BAR0 doorbells
 * are write-only and not read.
 */
#define VMX_REGS_HEAD	9
#define VMX_REGS_TXQ	6
#define VMX_REGS_RXQ	9

static int vmx_get_regs_len(struct net_device *nd)
{
	return (VMX_REGS_HEAD + VMX_MAX_TX_QUEUES * VMX_REGS_TXQ +
		VMX_MAX_RX_QUEUES * VMX_REGS_RXQ) * sizeof(u32);
}

static void vmx_get_regs(struct net_device *nd, struct ethtool_regs *regs,
			 void *p)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u32 *w = p, q;

	memset(p, 0, vmx_get_regs_len(nd));
	regs->version = 2;	/* 2: 32 TX and 32 RX queue slots */
	*w++ = vp->rev;
	*w++ = vmx_rd_vd(vp, VMX_REG_VRRS);
	*w++ = vmx_rd_vd(vp, VMX_REG_UVRS);
	*w++ = vmx_rd_vd(vp, VMX_REG_MACL);
	*w++ = vmx_rd_vd(vp, VMX_REG_MACH);
	*w++ = vmx_rd_vd(vp, VMX_REG_ECR);
	*w++ = vp->qs.nq;
	*w++ = vp->qs.nxdp;
	*w++ = vp->state;
	for (q = 0; q < vmx_ntxq(vp); q++) {
		struct vmx_txq *t = &vp->qs.txq[q];

		*w++ = t->fill;
		*w++ = t->posted;
		*w++ = t->clean;
		*w++ = t->comp_next;
		*w++ = t->size;
		*w++ = t->bad;
	}
	w = (u32 *)p + VMX_REGS_HEAD + VMX_MAX_TX_QUEUES * VMX_REGS_TXQ;
	for (q = 0; q < vmx_nrxq(vp); q++) {
		struct vmx_rxq *r = &vp->qs.rxq[q];

		*w++ = r->ring[0].fill;
		*w++ = r->ring[0].cons;
		*w++ = r->ring[0].size;
		*w++ = r->ring[1].fill;
		*w++ = r->ring[1].cons;
		*w++ = r->ring[1].size;
		*w++ = r->comp_next;
		*w++ = r->comp_size;
		*w++ = r->bad;
	}
}

/* ---- Wake-on-LAN ---- */

static void vmx_get_wol(struct net_device *nd, struct ethtool_wolinfo *wol)
{
	struct vmx_priv *vp = netdev_priv(nd);

	wol->supported = WAKE_MAGIC;
	wol->wolopts = vp->wol;
}

static int vmx_set_wol(struct net_device *nd, struct ethtool_wolinfo *wol)
{
	struct vmx_priv *vp = netdev_priv(nd);

	if (wol->wolopts & ~WAKE_MAGIC) {
		netdev_info(nd, "Wake-on-LAN: magic packet (g) only\n");
		return -EOPNOTSUPP;
	}
	vp->wol = wol->wolopts;
	device_set_wakeup_enable(&vp->pdev->dev, !!vp->wol);
	return 0;
}

static const struct ethtool_ops vmx_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_RX_USECS |
				     ETHTOOL_COALESCE_RX_MAX_FRAMES |
				     ETHTOOL_COALESCE_TX_MAX_FRAMES |
				     ETHTOOL_COALESCE_TX_MAX_FRAMES_IRQ |
				     ETHTOOL_COALESCE_USE_ADAPTIVE_RX,
	.get_drvinfo		= vmx_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= vmx_get_link_ksettings,
	.get_ringparam		= vmx_get_ringparam,
	.set_ringparam		= vmx_set_ringparam,
	.get_channels		= vmx_get_channels,
	.set_channels		= vmx_set_channels,
	.get_sset_count		= vmx_get_sset_count,
	.get_strings		= vmx_get_strings,
	.get_ethtool_stats	= vmx_get_ethtool_stats,
	.get_ts_info		= ethtool_op_get_ts_info,
	.reset			= vmx_reset,
	.get_coalesce		= vmx_get_coalesce,
	.set_coalesce		= vmx_set_coalesce,
	.get_rxfh_key_size	= vmx_get_rxfh_key_size,
	.get_rxfh_indir_size	= vmx_get_rxfh_indir_size,
	.get_rxfh		= vmx_get_rxfh,
	.set_rxfh		= vmx_set_rxfh,
	.get_rxnfc		= vmx_get_rxnfc,
	.set_rxnfc		= vmx_set_rxnfc,
#ifdef VMX_HAVE_RXFH_FIELDS
	.get_rxfh_fields	= vmx_get_rxfh_fields,
	.set_rxfh_fields	= vmx_set_rxfh_fields,
#endif
#ifdef VMX_HAVE_RX_RING_COUNT
	.get_rx_ring_count	= vmx_get_rx_ring_count,
#endif
	.get_regs_len		= vmx_get_regs_len,
	.get_regs		= vmx_get_regs,
	.get_wol		= vmx_get_wol,
	.set_wol		= vmx_set_wol,
};

/**
 * vmx_set_ethtool_ops() - install the ethtool operations
 * @nd: device
 */
void vmx_set_ethtool_ops(struct net_device *nd)
{
	nd->ethtool_ops = &vmx_ethtool_ops;
}
