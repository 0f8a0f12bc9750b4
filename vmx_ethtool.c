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
};

/* device-wide counters from the device, no standard home */
static const char * const vmx_dev_stats[] = {
	"dev_tx_tso_pkts",
	"dev_tx_tso_bytes",
	"dev_rx_lro_pkts",
	"dev_rx_lro_bytes",
	"dev_rx_nobuf",
	"resets",		/* driver: device resets done */
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

	/* the ethtool core already refused counts above the maxima */
	if (ch->rx_count || ch->tx_count || !ch->combined_count)
		return -EINVAL;
	if (ch->combined_count == vp->qs.nq)
		return 0;
	want.nq = ch->combined_count;
	return vmx_reconfigure(vp, &want, NULL);
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

static u32 vmx_get_msglevel(struct net_device *nd)
{
	return ((struct vmx_priv *)netdev_priv(nd))->msg_enable;
}

static void vmx_set_msglevel(struct net_device *nd, u32 v)
{
	((struct vmx_priv *)netdev_priv(nd))->msg_enable = v;
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

static const struct ethtool_ops vmx_ethtool_ops = {
	.get_drvinfo		= vmx_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= vmx_get_link_ksettings,
	.get_msglevel		= vmx_get_msglevel,
	.set_msglevel		= vmx_set_msglevel,
	.get_ringparam		= vmx_get_ringparam,
	.set_ringparam		= vmx_set_ringparam,
	.get_channels		= vmx_get_channels,
	.set_channels		= vmx_set_channels,
	.get_sset_count		= vmx_get_sset_count,
	.get_strings		= vmx_get_strings,
	.get_ethtool_stats	= vmx_get_ethtool_stats,
	.get_ts_info		= ethtool_op_get_ts_info,
	.reset			= vmx_reset,
};

/**
 * vmx_set_ethtool_ops() - install the ethtool operations
 * @nd: device
 */
void vmx_set_ethtool_ops(struct net_device *nd)
{
	nd->ethtool_ops = &vmx_ethtool_ops;
}
