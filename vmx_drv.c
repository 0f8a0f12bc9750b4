// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: driver for the VMware vmxnet3 paravirtual NIC.
 *
 * This file: PCI probe/remove, revision negotiation, RX filters, RSS,
 * coalescing, device activation/quiesce/reset, reconfiguration, power
 * management and the netdev ops. Interrupts and NAPI are in vmx_irq.c,
 * statistics in vmx_stats.c.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>

#include "vmx.h"

static const struct pci_device_id vmx_pci_tbl[] = {
	{ PCI_VDEVICE(VMWARE_VMX, PCI_DEVICE_ID_VMWARE_VMXNET3) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vmx_pci_tbl);

/**
 * vmx_cmd() - issue a device command and read back its result
 * @vp: device
 * @cmd: command code
 *
 * Return: the CMD register after the command.
 */
u32 vmx_cmd(struct vmx_priv *vp, u32 cmd)
{
	unsigned long flags;
	u32 ret;

	spin_lock_irqsave(&vp->cmd_lock, flags);
	vmx_wr_vd(vp, VMX_REG_CMD, cmd);
	ret = vmx_rd_vd(vp, VMX_REG_CMD);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
	return ret;
}

/**
 * vmx_cmd_nr() - issue a device command that has no result
 * @vp: device
 * @cmd: command code
 *
 * The CMD register is not read back.
 */
void vmx_cmd_nr(struct vmx_priv *vp, u32 cmd)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->cmd_lock, flags);
	vmx_wr_vd(vp, VMX_REG_CMD, cmd);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

static void vmx_write_mac(struct vmx_priv *vp, const u8 *mac)
{
	vmx_wr_vd(vp, VMX_REG_MACL, get_unaligned_le32(mac));
	vmx_wr_vd(vp, VMX_REG_MACH, get_unaligned_le16(mac + 4));
}

static void vmx_read_mac(struct vmx_priv *vp, u8 *mac)
{
	put_unaligned_le32(vmx_rd_vd(vp, VMX_REG_MACL), mac);
	put_unaligned_le16(vmx_rd_vd(vp, VMX_REG_MACH) & 0xffff, mac + 4);
}

/* ---- RX filters ---- */

static void vmx_write_vlan_table(struct vmx_priv *vp)
{
	struct vmx_shared *sh = vp->shared;
	bool filter = vp->netdev->features & NETIF_F_HW_VLAN_CTAG_FILTER;
	u32 i, w;

	for (i = 0; i < ARRAY_SIZE(sh->vf_table); i++) {
		w = ~0U;
		if (filter)
			w = vp->active_vlans[i * 32 / BITS_PER_LONG] >>
			    (i * 32 % BITS_PER_LONG);
		sh->vf_table[i] = cpu_to_le32(w);
	}
	/* untagged frames */
	sh->vf_table[0] |= cpu_to_le32(1);
}

/* Program rxMode, the multicast table and the VLAN table. */
static void vmx_apply_rx_mode(struct vmx_priv *vp)
{
	struct net_device *nd = vp->netdev;
	struct vmx_shared *sh = vp->shared;
	u32 mode = VMX_RXM_UCAST | VMX_RXM_BCAST, n = 0;
	u32 max = PAGE_SIZE / ETH_ALEN;
	struct netdev_hw_addr *ha;
	unsigned long flags;

	if (nd->flags & IFF_PROMISC)
		mode |= VMX_RXM_PROMISC;
	if ((nd->flags & IFF_ALLMULTI) || netdev_mc_count(nd) > max) {
		mode |= VMX_RXM_ALL_MULTI;
	} else if (!netdev_mc_empty(nd)) {
		netdev_for_each_mc_addr(ha, nd)
			ether_addr_copy(vp->mf_table + ETH_ALEN * n++, ha->addr);
		mode |= VMX_RXM_MCAST;
	}

	spin_lock_irqsave(&vp->cmd_lock, flags);
	sh->rx_mode = cpu_to_le32(mode);
	sh->mf_table_len = cpu_to_le16(n * ETH_ALEN);
	sh->mf_table_pa = cpu_to_le64(n ? vp->mf_table_pa : 0);
	vmx_write_vlan_table(vp);
	if (test_bit(VMX_S_UP, &vp->state)) {
		vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_RX_MODE);
		vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_VLAN_FILTERS);
		vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_MAC_FILTERS);
	}
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

static void vmx_set_rx_mode(struct net_device *nd)
{
	vmx_apply_rx_mode(netdev_priv(nd));
}

static void vmx_update_vlans(struct vmx_priv *vp)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->cmd_lock, flags);
	vmx_write_vlan_table(vp);
	if (test_bit(VMX_S_UP, &vp->state))
		vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_VLAN_FILTERS);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

static int vmx_vlan_add(struct net_device *nd, __be16 proto, u16 vid)
{
	struct vmx_priv *vp = netdev_priv(nd);

	set_bit(vid, vp->active_vlans);
	vmx_update_vlans(vp);
	return 0;
}

static int vmx_vlan_kill(struct net_device *nd, __be16 proto, u16 vid)
{
	struct vmx_priv *vp = netdev_priv(nd);

	clear_bit(vid, vp->active_vlans);
	vmx_update_vlans(vp);
	return 0;
}

/* ---- bring-up ---- */

static u64 vmx_upt_features(struct vmx_priv *vp, netdev_features_t f)
{
	u64 upt = 0;

	if (f & NETIF_F_RXCSUM)
		upt |= VMX_F_RXCSUM;
	if (f & NETIF_F_LRO)
		upt |= VMX_F_LRO;
	if (f & NETIF_F_HW_VLAN_CTAG_RX)
		upt |= VMX_F_RXVLAN;
	/* tunnel offloads (rev 4+): results for the inner headers too */
	if ((f & NETIF_F_RXCSUM) && vp->netdev->hw_enc_features)
		upt |= VMX_F_RXINNEROFLD;
	if (vp->qs.nq > 1)
		upt |= VMX_F_RSS;
	return upt;
}

/**
 * vmx_rss_default() - spread the indirection table over every queue
 * @vp: device; under rtnl
 *
 * Leaves a table the user set alone.
 */
void vmx_rss_default(struct vmx_priv *vp)
{
	u32 i;

	if (netif_is_rxfh_configured(vp->netdev))
		return;
	for (i = 0; i < VMX_RSS_IND_SIZE; i++)
		vp->rss_ind[i] = ethtool_rxfh_indir_default(i, vp->qs.nq);
}

static void vmx_write_rss(struct vmx_priv *vp)
{
	u8 *c = vp->conf + VMX_CONF_RSS;

	memset(c, 0, VMX_RSS_CONF_LEN);
	put_unaligned_le16(VMX_RSS_HASH_ALL, c);
	put_unaligned_le16(VMX_RSS_FUNC_TOEPLITZ, c + 2);
	put_unaligned_le16(VMX_RSS_KEY_SIZE, c + 4);
	put_unaligned_le16(VMX_RSS_IND_SIZE, c + 6);
	memcpy(c + VMX_RSS_OFF_KEY, vp->rss_key, VMX_RSS_KEY_SIZE);
	memcpy(c + VMX_RSS_OFF_IND, vp->rss_ind, VMX_RSS_IND_SIZE);
	vp->shared->rss_conf.conf_ver = cpu_to_le32(1);
	vp->shared->rss_conf.conf_len = cpu_to_le32(VMX_RSS_CONF_LEN);
	vp->shared->rss_conf.conf_pa = cpu_to_le64(vp->conf_pa +
						   VMX_CONF_RSS);
}

/**
 * vmx_rss_update() - give the device a changed key or indirection table
 * @vp: device; under rtnl
 *
 * Called from the set_rxfh operation, before the ethtool core marks the
 * table as the user's: the table in @vp is taken as it is.
 * The table of a stopped device, or of one queue (RSS off), is only kept
 * for the next activation.
 */
void vmx_rss_update(struct vmx_priv *vp)
{
	unsigned long flags;

	if (!test_bit(VMX_S_UP, &vp->state) || vp->qs.nq < 2)
		return;
	spin_lock_irqsave(&vp->cmd_lock, flags);
	vmx_write_rss(vp);
	vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_RSSIDT);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

/**
 * vmx_rss_fields_apply() - ask the device to hash the L4 fields chosen
 * @vp: device, revision 4 or later; under rtnl
 *
 * Return: the fields the device granted (all of them when it is stopped:
 * they are asked for again at activation).
 */
u32 vmx_rss_fields_apply(struct vmx_priv *vp)
{
	unsigned long flags;

	if (!test_bit(VMX_S_UP, &vp->state))
		return vp->rss_fields;
	spin_lock_irqsave(&vp->cmd_lock, flags);
	vp->shared->cmd_info.rss_fields = cpu_to_le32(vp->rss_fields);
	vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_SET_RSS_FIELDS);
	vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_GET_RSS_FIELDS);
	vp->rss_granted = vmx_rd_vd(vp, VMX_REG_CMD);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
	return vp->rss_granted;
}

/* A command whose parameter is a configuration buffer in the conf page. */
static void vmx_cmd_conf(struct vmx_priv *vp, u32 cmd, u32 off, u32 len)
{
	struct vmx_var_desc *d = &vp->shared->cmd_info.desc;
	unsigned long flags;

	spin_lock_irqsave(&vp->cmd_lock, flags);
	d->conf_ver = cpu_to_le32(1);
	d->conf_len = cpu_to_le32(len);
	d->conf_pa = cpu_to_le64(vp->conf_pa + off);
	vmx_wr_vd(vp, VMX_REG_CMD, cmd);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

/**
 * vmx_coal_apply() - give the device the user's coalescing scheme
 * @vp: device, revision 3 or later; under rtnl
 *
 * A stopped device gets it at activation. Nothing is sent until the user
 * chose a scheme: the device keeps its own default.
 */
void vmx_coal_apply(struct vmx_priv *vp)
{
	if (!vp->coal_set || !test_bit(VMX_S_UP, &vp->state))
		return;
	memcpy(vp->conf + VMX_CONF_COAL, &vp->coal, sizeof(vp->coal));
	vmx_cmd_conf(vp, VMX_CMD_SET_COALESCE, VMX_CONF_COAL,
		     sizeof(vp->coal));
}

/**
 * vmx_coal_read() - the coalescing scheme in effect
 * @vp: device, revision 3 or later; under rtnl
 * @out: the scheme
 *
 * The user's, else the device's own once it is running; adaptive (the
 * device's default) before the first activation.
 */
void vmx_coal_read(struct vmx_priv *vp, struct vmx_coal *out)
{
	if (vp->coal_set) {
		*out = vp->coal;
	} else if (test_bit(VMX_S_UP, &vp->state)) {
		vmx_cmd_conf(vp, VMX_CMD_GET_COALESCE, VMX_CONF_COAL,
			     sizeof(*out));
		memcpy(out, vp->conf + VMX_CONF_COAL, sizeof(*out));
	} else {
		memset(out, 0, sizeof(*out));
		out->mode = cpu_to_le32(VMX_COAL_ADAPTIVE);
	}
}

/* The interrupt control word of the block the device reads. */
static __le32 *vmx_intr_ctrl(struct vmx_priv *vp)
{
	return vp->intr_ext ? &vp->shared->intr_ext.intr_ctrl :
			      &vp->shared->intr_ctrl;
}

static void vmx_write_shared(struct vmx_priv *vp)
{
	struct vmx_shared *sh = vp->shared;
	struct vmx_qset *qs = &vp->qs;
	u32 q, nvec, ntx = qs->nq + qs->nxdp;

	memset(sh, 0, sizeof(*sh));
	sh->magic = cpu_to_le32(VMX_SHARED_MAGIC);
	sh->drv_version = cpu_to_le32(VMX_DRV_VERSION);
	sh->gos = cpu_to_le32(FIELD_PREP(VMX_GOS_BITS, VMX_GOS_BITS_64) |
			      FIELD_PREP(VMX_GOS_TYPE, VMX_GOS_TYPE_LINUX));
	sh->rev_spt = cpu_to_le32(1);
	sh->upt_spt = cpu_to_le32(1);
	sh->upt_features = cpu_to_le64(vmx_upt_features(vp,
							vp->netdev->features));
	sh->queue_desc_pa = cpu_to_le64(vp->qdesc_pa);
	sh->queue_desc_len = cpu_to_le32((ntx + qs->nq) * 256);
	sh->mtu = cpu_to_le32(qs->mtu);
	sh->max_rx_sg = cpu_to_le16(VMX_RX_MAX_SG);
	sh->num_tx_queues = ntx;
	sh->num_rx_queues = qs->nq;

	/*
	 * The vectors this configuration uses, not all those allocated: the
	 * queues' come last, so at most 8 queue pairs (what the legacy block
	 * is used for) stay within its VMX_MAX_INTRS.
	 */
	nvec = vp->qv[qs->nq - 1].idx + 1;
	/* more queues than the legacy block describes: the extended one */
	vp->intr_ext = vp->rev >= 6 && (ntx > VMX_LEGACY_TX_QUEUES ||
					qs->nq > VMX_LEGACY_RX_QUEUES ||
					nvec > VMX_MAX_INTRS);
	if (vp->intr_ext) {
		sh->intr_ext.auto_mask = vp->mask_mode == VMX_IMM_AUTO;
		sh->intr_ext.num_intrs = nvec;
		sh->intr_ext.event_intr_idx = vp->event_vec;
		memset(sh->intr_ext.mod_levels, VMX_IML_ADAPTIVE, nvec);
	} else {
		sh->auto_mask = vp->mask_mode == VMX_IMM_AUTO;
		sh->num_intrs = nvec;
		sh->event_intr_idx = vp->event_vec;
		memset(sh->mod_levels, VMX_IML_ADAPTIVE, nvec);
	}
	*vmx_intr_ctrl(vp) = cpu_to_le32(VMX_INTR_CTRL_DISABLE_ALL);
	if (vp->qs.nq > 1) {
		vmx_rss_default(vp);
		vmx_write_rss(vp);
	}

	for (q = 0; q < ntx; q++)
		vmx_txq_write_desc(&qs->txq[q], vmx_txq_desc(vp, q),
				   q >= qs->nq && vp->xdp_vec != VMX_NO_VEC ?
				   vp->xdp_vec : vp->qv[q % qs->nq].idx);
	for (q = 0; q < qs->nq; q++)
		vmx_rxq_write_desc(&qs->rxq[q], vmx_rxq_desc(vp, q), qs->nq,
				   vp->qv[q].idx);
}

static void vmx_update_link(struct vmx_priv *vp)
{
	u32 link = vmx_cmd(vp, VMX_CMD_GET_LINK);
	struct net_device *nd = vp->netdev;

	vp->link_speed = FIELD_GET(VMX_LINK_SPEED, link);
	if (link & VMX_LINK_UP) {
		if (!netif_carrier_ok(nd)) {
			netdev_info(nd, "link up, %u Mbps\n", vp->link_speed);
			netif_carrier_on(nd);
			netif_tx_wake_all_queues(nd);
		}
	} else if (netif_carrier_ok(nd)) {
		netdev_info(nd, "link down\n");
		netif_carrier_off(nd);
		netif_tx_stop_all_queues(nd);
	}
}

/*
 * rev 7+: tell the device the buffer sizes of the rings (ring 0 HEAD only).
 * One size per ring for every queue: the smallest any queue posts (an
 * AF_XDP channel's UMEM buffers may be smaller than the others').
 */
static void vmx_set_ring_buf_sizes(struct vmx_priv *vp)
{
	u32 q, len0 = U16_MAX, len1 = U16_MAX;
	unsigned long flags;

	for (q = 0; q < vp->qs.nq; q++) {
		len0 = min(len0, vp->qs.rxq[q].ring[0].buf_len);
		len1 = min(len1, vp->qs.rxq[q].ring[1].buf_len);
	}
	spin_lock_irqsave(&vp->cmd_lock, flags);
	memset(&vp->shared->cmd_info, 0, sizeof(vp->shared->cmd_info));
	vp->shared->cmd_info.buf_size[0] = cpu_to_le16(len0);
	vp->shared->cmd_info.buf_size[2] = cpu_to_le16(len1);
	vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_SET_RING_BUFFER_SIZE);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
}

/* Activate the device with the current queue set. Called under rtnl. */
static int vmx_up(struct vmx_priv *vp)
{
	struct vmx_qset *qs = &vp->qs;
	u32 q, ret;

	for (q = 0; q < qs->nq + qs->nxdp; q++)
		vmx_txq_start(&qs->txq[q]);
	for (q = 0; q < qs->nq; q++)
		vmx_rxq_start(&qs->rxq[q]);
	for (q = 0; q < VMX_MAX_TX_QUEUES; q++)
		vp->qv[q].active = q < qs->nq;

	vmx_write_shared(vp);
	/*
	 * The RX filters go in before ACTIVATE, which reads them: with an
	 * empty mode the device would drop every frame until the commands
	 * below.
	 */
	netif_addr_lock_bh(vp->netdev);
	vmx_apply_rx_mode(vp);
	netif_addr_unlock_bh(vp->netdev);
	vmx_write_mac(vp, vp->netdev->dev_addr);
	vmx_wr_vd(vp, VMX_REG_DSAL, lower_32_bits(vp->shared_pa));
	vmx_wr_vd(vp, VMX_REG_DSAH, upper_32_bits(vp->shared_pa));
	ret = vmx_cmd(vp, VMX_CMD_ACTIVATE_DEV);
	if (ret) {
		netdev_err(vp->netdev, "device refused activation (%#x)\n",
			   ret);
		vmx_wr_vd(vp, VMX_REG_DSAL, 0);
		vmx_wr_vd(vp, VMX_REG_DSAH, 0);
		return -EIO;
	}
	/* the device reloads its permanent address on activation */
	vmx_write_mac(vp, vp->netdev->dev_addr);
	set_bit(VMX_S_UP, &vp->state);
	if (vp->rev >= 7)
		vmx_set_ring_buf_sizes(vp);
	if (vp->rev >= 3)
		vmx_coal_apply(vp);
	if (vp->rev >= 4 && vp->rss_fields != VMX_RSSF_DEFAULT &&
	    vmx_rss_fields_apply(vp) != vp->rss_fields)
		netdev_warn(vp->netdev, "device granted RSS fields %#x of %#x\n",
			    vp->rss_granted, vp->rss_fields);
	vmx_fold_dev_stats(vp, true);

	for (q = 0; q < qs->nq; q++) {
		vmx_db_rxprod(vp, q, qs->rxq[q].ring[0].fill,
			      qs->rxq[q].ring[1].fill);
	}
	netif_addr_lock_bh(vp->netdev);
	vmx_apply_rx_mode(vp);
	netif_addr_unlock_bh(vp->netdev);

	for (q = 0; q < qs->nq; q++) {
		napi_enable(&vp->qv[q].napi);
		vmx_queue_set_napi(vp->netdev, q, VMX_QTYPE_RX, &vp->qv[q].napi);
		vmx_queue_set_napi(vp->netdev, q, VMX_QTYPE_TX, &vp->qv[q].napi);
	}
	clear_bit(VMX_S_STOPPING, &vp->state);
	/* a wake, not a start: what the qdisc kept meanwhile goes out now */
	netif_tx_wake_all_queues(vp->netdev);
	vmx_update_link(vp);

	*vmx_intr_ctrl(vp) &= cpu_to_le32(~VMX_INTR_CTRL_DISABLE_ALL);
	vmx_mask_all(vp, false);
	/* anything that arrived before the unmask */
	for (q = 0; q < qs->nq; q++)
		napi_schedule(&vp->qv[q].napi);
	return 0;
}

/*
 * The device is quiesced: hand what it completed before that to the stack
 * instead of dropping it with the rings (a restart of one queue's pool or
 * of the ring sizes loses nothing on the others). One NAPI pass per queue
 * with work, run by local_bh_enable(); without refills while the device
 * is down the rings run dry, so even a device that keeps completing
 * cannot keep it going.
 */
static void vmx_drain_rx(struct vmx_priv *vp)
{
	u32 q;

	local_bh_disable();
	for (q = 0; q < vp->qs.nq; q++)
		if (vmx_rx_pending(&vp->qs.rxq[q]))
			napi_schedule(&vp->qv[q].napi);
	local_bh_enable();
}

/*
 * The stack's queues are stopped: give the device a moment to send what
 * it was handed, which a QUIESCE would throw away (a device that works
 * asynchronously, as ESXi does, may not have reached it yet). NAPI reaps
 * the completions meanwhile. Bounded: a stuck device only delays the stop.
 */
static void vmx_tx_settle(struct vmx_priv *vp)
{
	unsigned long end = jiffies + msecs_to_jiffies(VMX_TX_SETTLE_MS);
	struct vmx_qset *qs = &vp->qs;
	u32 q;

	/* a burst cut short by the stop still gets its doorbell */
	for (q = 0; q < qs->nq; q++) {
		__netif_tx_lock_bh(qs->txq[q].nq);
		if (qs->txq[q].deferred)
			vmx_tx_doorbell(&qs->txq[q]);
		__netif_tx_unlock_bh(qs->txq[q].nq);
	}
	for (q = 0; q < qs->nq; q++)
		while (READ_ONCE(qs->txq[q].clean) != READ_ONCE(qs->txq[q].posted) &&
		       time_before(jiffies, end))
			usleep_range(50, 100);
}

/*
 * Stop the device and reclaim every buffer. Called under rtnl. A restart
 * (@closing false) keeps the carrier: the link did not change, and a
 * carrier flap would restart IPv6 DAD and routing for nothing. The stack's
 * queues stop before the device does: a frame posted after the QUIESCE
 * would only be thrown away with the ring.
 */
static void vmx_down(struct vmx_priv *vp, bool closing)
{
	struct vmx_qset *qs = &vp->qs;
	u32 q;

	if (!test_bit(VMX_S_UP, &vp->state))
		return;
	set_bit(VMX_S_STOPPING, &vp->state);
	netif_tx_disable(vp->netdev);
	vmx_tx_settle(vp);
	vmx_fold_dev_stats(vp, false);
	vmx_cmd_nr(vp, VMX_CMD_QUIESCE_DEV);
	*vmx_intr_ctrl(vp) |= cpu_to_le32(VMX_INTR_CTRL_DISABLE_ALL);
	vmx_mask_all(vp, true);
	clear_bit(VMX_S_UP, &vp->state);
	/* ndo_xdp_xmit callers on other CPUs see the bit before we go on */
	synchronize_net();
	vmx_sync_irqs(vp);

	if (closing)
		netif_carrier_off(vp->netdev);
	else
		vmx_drain_rx(vp);
	for (q = 0; q < qs->nq; q++) {
		vmx_queue_set_napi(vp->netdev, q, VMX_QTYPE_RX, NULL);
		vmx_queue_set_napi(vp->netdev, q, VMX_QTYPE_TX, NULL);
		napi_disable(&vp->qv[q].napi);
	}
	/*
	 * A completion that read VMX_S_STOPPING clear just before it was set
	 * may have woken a queue after the netif_tx_disable() above; with
	 * every NAPI instance stopped nothing wakes one now, so stop them
	 * again: no frame reaches the rings until vmx_up() starts them, and
	 * the caller may change what the stack sees (the MTU) meanwhile.
	 */
	netif_tx_disable(vp->netdev);
	vmx_cmd_nr(vp, VMX_CMD_RESET_DEV);
	/*
	 * The device writes nothing more. What it completed after the last
	 * poll (during QUIESCE, or at RESET_DEV for a device that sends
	 * what QUIESCE left later) was sent: count it as sent; only the rest
	 * is dropped.
	 */
	for (q = 0; q < qs->nq + qs->nxdp; q++) {
		vmx_tx_clean(&qs->txq[q], 0, false);
		vmx_txq_drain(&qs->txq[q]);
	}
	for (q = 0; q < qs->nq; q++)
		vmx_rxq_stop(&qs->rxq[q]);
}

/*
 * Make @next the live queue set. The counters of the set it replaces are
 * carried over or go into the base in the same step, so readers never see
 * totals drop.
 */
static void vmx_qset_publish(struct vmx_priv *vp, const struct vmx_qset *next)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->stats_lock, flags);
	vmx_carry_queue_stats_locked(vp, &vp->qs, next);
	vp->qs = *next;
	spin_unlock_irqrestore(&vp->stats_lock, flags);
}

static void vmx_qset_free(struct vmx_priv *vp, struct vmx_qset *qs)
{
	u32 q;

	if (qs->rxq)
		for (q = 0; q < qs->nq; q++)
			vmx_rxq_free(&qs->rxq[q]);
	if (qs->txq)
		for (q = 0; q < qs->nq + qs->nxdp; q++)
			vmx_txq_free(&qs->txq[q]);
	kfree(qs->rxq);
	kfree(qs->txq);
	qs->rxq = NULL;
	qs->txq = NULL;
}

/*
 * Free a set that is no longer live while the device runs another one.
 * The page_pools of both sets belong to the same NAPI instances, and a
 * pool may only be destroyed while its NAPI is disabled.
 */
static void vmx_qset_free_live(struct vmx_priv *vp, struct vmx_qset *qs)
{
	u32 q, n = min(qs->nq, vp->qs.nq);

	for (q = 0; q < n; q++)
		napi_disable(&vp->qv[q].napi);
	vmx_qset_free(vp, qs);
	for (q = 0; q < n; q++)
		napi_enable(&vp->qv[q].napi);
	for (q = 0; q < n; q++)
		napi_schedule(&vp->qv[q].napi);
}

/**
 * vmx_xdp_queues() - dedicated XDP TX queues the device has room for
 * @vp: device
 * @nq: stack queue pairs
 *
 * Return: one per channel where the device takes them, fewer otherwise.
 */
u32 vmx_xdp_queues(const struct vmx_priv *vp, u32 nq)
{
	return min(nq, vp->max_tx_queues - nq);
}

static int vmx_qset_alloc(struct vmx_priv *vp, struct vmx_qset *qs)
{
	u32 q;
	int err;

	/*
	 * Dedicated XDP TX queues wherever the device has room for them;
	 * without room XDP shares the stack's queues under their lock.
	 */
	qs->nxdp = vmx_xdp_queues(vp, qs->nq);
	qs->txq = kcalloc(qs->nq + qs->nxdp, sizeof(*qs->txq), GFP_KERNEL);
	qs->rxq = kcalloc(qs->nq, sizeof(*qs->rxq), GFP_KERNEL);
	if (!qs->txq || !qs->rxq) {
		err = -ENOMEM;
		goto err;
	}
	for (q = 0; q < qs->nq + qs->nxdp; q++) {
		err = vmx_txq_alloc(vp, &qs->txq[q], q, qs);
		if (err)
			goto err;
	}
	for (q = 0; q < qs->nq; q++) {
		err = vmx_rxq_alloc(vp, &qs->rxq[q], q, qs);
		if (err)
			goto err;
	}
	return 0;
err:
	/* queues not reached are zeroed; freeing them is a no-op */
	if (qs->rxq)
		for (q = 0; q < qs->nq; q++)
			if (qs->rxq[q].vp)
				vmx_rxq_free(&qs->rxq[q]);
	if (qs->txq)
		for (q = 0; q < qs->nq + qs->nxdp; q++)
			if (qs->txq[q].vp)
				vmx_txq_free(&qs->txq[q]);
	kfree(qs->rxq);
	kfree(qs->txq);
	qs->rxq = NULL;
	qs->txq = NULL;
	return err;
}

/* Both counts or neither: xmit must never see more TX queues than exist. */
static int vmx_set_real_queues(struct vmx_priv *vp, u32 nq)
{
	return netif_set_real_num_queues(vp->netdev, nq, nq);
}

/**
 * vmx_reconfigure() - switch to new queue counts or ring sizes
 * @vp: device
 * @want: wanted queue count and ring sizes (queues not allocated)
 * @extack: for the error message
 *
 * New queues are allocated before the old ones are touched; if anything
 * fails the old configuration keeps running. Called under rtnl.
 *
 * Return: 0 or a negative errno.
 */
int vmx_reconfigure(struct vmx_priv *vp, const struct vmx_qset *want,
		    struct netlink_ext_ack *extack)
{
	struct vmx_qset old = vp->qs, next = *want;
	int err;

	next.txq = NULL;
	next.rxq = NULL;
	if (!netif_running(vp->netdev) || !test_bit(VMX_S_OPEN, &vp->state)) {
		err = vmx_set_real_queues(vp, next.nq);
		if (err)
			return err;
		vp->qs = next;
		vmx_napi_list(vp, next.nq);
		WRITE_ONCE(vp->netdev->mtu, next.mtu);
		return 0;
	}

	/* the new pools know their NAPI instances */
	if (next.nq > vp->nr_napi)
		vmx_napi_list(vp, next.nq);
	err = vmx_qset_alloc(vp, &next);
	if (err) {
		vmx_napi_list(vp, old.nq);
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot allocate the new rings (out of memory or DMA mapping space), configuration unchanged");
		return err;
	}
	vmx_down(vp, false);
	err = vmx_set_real_queues(vp, next.nq);
	if (!err) {
		vmx_qset_publish(vp, &next);
		/* the stack sees a new MTU only while the device is quiesced */
		WRITE_ONCE(vp->netdev->mtu, next.mtu);
		err = vmx_up(vp);
		if (!err) {
			vmx_qset_free_live(vp, &old);
			vmx_napi_list(vp, next.nq);
			return 0;
		}
		/*
		 * Back to the old set: its counters were handed to @next or
		 * the base, and come back from @next for the queues they share.
		 */
		WRITE_ONCE(vp->netdev->mtu, old.mtu);
		vmx_qset_zero_stats(&old);
		vmx_qset_publish(vp, &old);
		vmx_set_real_queues(vp, old.nq);
	}
	vmx_qset_free(vp, &next);
	NL_SET_ERR_MSG_MOD(extack,
			   "device refused the new configuration, old one restored");
	if (vmx_up(vp))
		netdev_err(vp->netdev, "could not restore the configuration\n");
	vmx_napi_list(vp, old.nq);
	return err;
}

/**
 * vmx_qset_shrink() - halve the RX rings for a retry
 * @qs: wanted queue set
 *
 * Return: false once they are at the minimum.
 */
bool vmx_qset_shrink(struct vmx_qset *qs)
{
	u32 i, was = qs->rx_size[0] + qs->rx_size[1];

	for (i = 0; i < 2; i++)
		qs->rx_size[i] = max_t(u32, VMX_MIN_RING,
				       round_down(qs->rx_size[i] / 2,
						  VMX_RING_SIZE_ALIGN));
	return qs->rx_size[0] + qs->rx_size[1] < was;
}

/*
 * Allocate the queue set to open with. Where every DMA mapping is bounced
 * (swiotlb=force, confidential-computing guests) the pool may not hold the
 * configured RX rings: then open with smaller ones, leaving room for
 * transmit, and say so; ethtool -g shows what is in use.
 */
static int vmx_qset_alloc_open(struct vmx_priv *vp, struct vmx_qset *qs)
{
	u32 want0 = qs->rx_size[0], want1 = qs->rx_size[1], fit0, fit1;
	int err;

	err = vmx_qset_alloc(vp, qs);
	if (err != -ENOMEM)
		goto out;
	while (err == -ENOMEM && vmx_qset_shrink(qs))
		err = vmx_qset_alloc(vp, qs);
	/*
	 * The pool was short: the rings that just fit would leave nothing
	 * for transmit mappings. Halve them once more, so the pool keeps
	 * about as much again for TX.
	 */
	fit0 = qs->rx_size[0];
	fit1 = qs->rx_size[1];
	if (!err) {
		vmx_qset_free(vp, qs);
		if (!vmx_qset_shrink(qs) || vmx_qset_alloc(vp, qs)) {
			qs->rx_size[0] = fit0;
			qs->rx_size[1] = fit1;
			err = vmx_qset_alloc(vp, qs);
		}
	}
out:
	if (err) {
		netdev_err(vp->netdev,
			   "cannot allocate or DMA-map the rings even at %u/%u RX buffers (%d): out of memory or of DMA mapping space (bounce buffers?)\n",
			   qs->rx_size[0], qs->rx_size[1], err);
		return err;
	}
	if (qs->rx_size[0] != want0 || qs->rx_size[1] != want1)
		netdev_warn(vp->netdev,
			    "RX rings reduced from %u/%u to %u/%u: not enough memory or DMA mapping space (bounce buffers?) for the configured sizes\n",
			    want0, want1, qs->rx_size[0], qs->rx_size[1]);
	return 0;
}

/*
 * The queue set is about to go: bound AF_XDP pools stop pointing at its
 * queues' xdp_rxq_info (a busy-polling sendto() reads the NAPI id there).
 */
static void vmx_xsk_park(struct vmx_priv *vp)
{
	u32 q;

	for (q = 0; q < ARRAY_SIZE(vp->xsk_pool) && vp->xsk_pools; q++)
		if (vp->xsk_pool[q])
			xsk_pool_set_rxq_info(vp->xsk_pool[q],
					      &vp->xsk_idle_rxq);
}

static int vmx_open(struct net_device *nd)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_qset next = vp->qs, gone;
	int err;

	next.txq = NULL;
	next.rxq = NULL;
	next.xdp = !!vp->xdp_prog;
	err = vmx_qset_alloc_open(vp, &next);
	if (err)
		return err;
	vmx_qset_publish(vp, &next);
	err = vmx_set_real_queues(vp, vp->qs.nq);
	if (err)
		goto err_free;
	err = vmx_request_irqs(vp);
	if (err)
		goto err_free;
	err = vmx_up(vp);
	if (err)
		goto err_irq;
	set_bit(VMX_S_OPEN, &vp->state);
	return 0;

err_irq:
	vmx_free_irqs(vp);
err_free:
	vmx_xsk_park(vp);
	gone = vp->qs;
	next.txq = NULL;
	next.rxq = NULL;
	vmx_qset_publish(vp, &next);
	vmx_qset_free(vp, &gone);
	return err;
}

static int vmx_stop(struct net_device *nd)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_qset gone, keep;

	/* a resume that could not open the device left nothing to free */
	if (!test_and_clear_bit(VMX_S_OPEN, &vp->state))
		return 0;
	/* a pending event work finds the device down once it gets rtnl */
	vmx_down(vp, true);
	vmx_free_irqs(vp);
	vmx_xsk_park(vp);
	gone = vp->qs;
	keep = gone;
	keep.txq = NULL;
	keep.rxq = NULL;
	vmx_qset_publish(vp, &keep);
	vmx_qset_free(vp, &gone);
	return 0;
}

/* Quiesce, reset and activate again with the same queues. Under rtnl. */
static int vmx_restart(struct vmx_priv *vp)
{
	int err;

	if (!netif_running(vp->netdev))
		return 0;
	vmx_down(vp, false);
	err = vmx_up(vp);
	if (err)
		netdev_err(vp->netdev, "restart failed: %d\n", err);
	return err;
}

/**
 * vmx_schedule_reset() - ask the reset work item to recover the device
 * @vp: device
 */
void vmx_schedule_reset(struct vmx_priv *vp)
{
	if (!test_and_set_bit(VMX_S_RESET_PENDING, &vp->state))
		schedule_work(&vp->reset_work);
}

#define VMX_RESET_TRIES	3

static void vmx_reset_work(struct work_struct *w)
{
	struct vmx_priv *vp = container_of(w, struct vmx_priv, reset_work);

	int i, err = 0;

	rtnl_lock();
	clear_bit(VMX_S_RESET_PENDING, &vp->state);
	if (netif_running(vp->netdev) && netif_device_present(vp->netdev)) {
		netdev_info(vp->netdev, "resetting the device\n");
		/* a refused activation is tried again a few times */
		for (i = 0; i < VMX_RESET_TRIES; i++) {
			err = vmx_restart(vp);
			if (!err)
				break;
			msleep(20 << i);
		}
		if (err) {
			netif_carrier_off(vp->netdev);
			netdev_err(vp->netdev, "the device refused activation %d times; down until the next reset (TX watchdog, ethtool --reset or ip link set down/up)\n",
				   VMX_RESET_TRIES);
		}
		WRITE_ONCE(vp->resets, vp->resets + 1);
	}
	rtnl_unlock();
}

/*
 * Device events, under rtnl like up/down and every reconfiguration, so a
 * link event cannot wake queues in the middle of one of them.
 */
static void vmx_event_work(struct work_struct *w)
{
	struct vmx_priv *vp = container_of(w, struct vmx_priv, event_work);
	u32 ev, q;

	rtnl_lock();
	ev = atomic_xchg(&vp->events, 0);
	if (!netif_running(vp->netdev) || !test_bit(VMX_S_UP, &vp->state))
		goto out;
	if (ev & VMX_ECR_LINK)
		vmx_update_link(vp);
	if (ev & (VMX_ECR_TQERR | VMX_ECR_RQERR)) {
		vmx_cmd_nr(vp, VMX_CMD_GET_QUEUE_STATUS);
		for (q = 0; q < vp->qs.nq + vp->qs.nxdp; q++)
			if (vmx_txq_desc(vp, q)->stopped)
				netdev_err(vp->netdev, "txq %u error %#x\n", q,
					   le32_to_cpu(vmx_txq_desc(vp, q)->error));
		for (q = 0; q < vp->qs.nq; q++)
			if (vmx_rxq_desc(vp, q)->stopped)
				netdev_err(vp->netdev, "rxq %u error %#x\n", q,
					   le32_to_cpu(vmx_rxq_desc(vp, q)->error));
		vmx_schedule_reset(vp);
	}
out:
	rtnl_unlock();
}

static void vmx_tx_timeout(struct net_device *nd, unsigned int txqueue)
{
	struct vmx_priv *vp = netdev_priv(nd);

	netdev_err(nd, "transmit queue %u timed out\n", txqueue);
	vmx_schedule_reset(vp);
}

/* ---- configuration ---- */

/*
 * The device reads the MTU on activation and the RX buffers are sized to
 * it: a new queue set is swapped in, and the stack sees the new MTU only
 * while the device is quiesced (never TSO sized for an MTU the device does
 * not know yet).
 */
static int vmx_change_mtu(struct net_device *nd, int mtu)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_qset want = vp->qs;
	int err;

	err = vmx_xdp_check_mtu(vp, mtu, NULL);
	if (err) {
		netdev_warn(nd, "MTU %d is too large for the attached XDP program without frags support (max %lu)\n",
			    mtu, (unsigned long)VMX_XDP_MAX_MTU);
		return err;
	}
	err = vmx_xsk_check_mtu(vp, mtu);
	if (err)
		return err;
	want.mtu = mtu;
	err = vmx_reconfigure(vp, &want, NULL);
	if (err)
		netdev_err(nd, "MTU %d not applied (%d), keeping %u\n", mtu, err,
			   nd->mtu);
	return err;
}

static int vmx_set_mac(struct net_device *nd, void *p)
{
	struct vmx_priv *vp = netdev_priv(nd);
	unsigned long flags;
	int err;

	err = eth_mac_addr(nd, p);
	if (err)
		return err;
	spin_lock_irqsave(&vp->cmd_lock, flags);
	vmx_write_mac(vp, nd->dev_addr);
	spin_unlock_irqrestore(&vp->cmd_lock, flags);
	return 0;
}

static netdev_features_t vmx_fix_features(struct net_device *nd,
					  netdev_features_t f)
{
	struct vmx_priv *vp = netdev_priv(nd);

	/* the device aggregates only frames whose checksums it checked */
	if (!(f & NETIF_F_RXCSUM))
		f &= ~NETIF_F_LRO;
	/* programs and AF_XDP sockets get frames as they were on the wire */
	if (vp->xdp_prog || vp->xsk_pools)
		f &= ~NETIF_F_LRO;
	return f;
}

static int vmx_set_features(struct net_device *nd, netdev_features_t f)
{
	netdev_features_t changed = nd->features ^ f;
	struct vmx_priv *vp = netdev_priv(nd);
	unsigned long flags;

	if (changed & NETIF_F_HW_VLAN_CTAG_FILTER) {
		nd->features ^= NETIF_F_HW_VLAN_CTAG_FILTER;
		vmx_update_vlans(vp);
	}
	if (changed & (NETIF_F_RXCSUM | NETIF_F_LRO | NETIF_F_HW_VLAN_CTAG_RX)) {
		spin_lock_irqsave(&vp->cmd_lock, flags);
		vp->shared->upt_features = cpu_to_le64(vmx_upt_features(vp, f));
		if (test_bit(VMX_S_UP, &vp->state))
			vmx_wr_vd(vp, VMX_REG_CMD, VMX_CMD_UPDATE_FEATURE);
		spin_unlock_irqrestore(&vp->cmd_lock, flags);
	}
	return 0;
}

#ifdef CONFIG_NET_POLL_CONTROLLER
static void vmx_netpoll(struct net_device *nd)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u32 q;

	for (q = 0; q < vp->qs.nq; q++)
		napi_schedule(&vp->qv[q].napi);
}
#endif

static const struct net_device_ops vmx_netdev_ops = {
	.ndo_open		= vmx_open,
	.ndo_stop		= vmx_stop,
	.ndo_start_xmit		= vmx_start_xmit,
	.ndo_features_check	= vmx_features_check,
	.ndo_get_stats64	= vmx_get_stats64,
	.ndo_set_rx_mode	= vmx_set_rx_mode,
	.ndo_set_mac_address	= vmx_set_mac,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= vmx_change_mtu,
	.ndo_fix_features	= vmx_fix_features,
	.ndo_set_features	= vmx_set_features,
	.ndo_vlan_rx_add_vid	= vmx_vlan_add,
	.ndo_vlan_rx_kill_vid	= vmx_vlan_kill,
	.ndo_tx_timeout		= vmx_tx_timeout,
	.ndo_bpf		= vmx_bpf,
	.ndo_xdp_xmit		= vmx_xdp_xmit,
	.ndo_xsk_wakeup		= vmx_xsk_wakeup,
#ifdef CONFIG_NET_POLL_CONTROLLER
	.ndo_poll_controller	= vmx_netpoll,
#endif
};

/* ---- probe ---- */

static int vmx_negotiate(struct vmx_priv *vp)
{
	u32 vrrs = vmx_rd_vd(vp, VMX_REG_VRRS), rev;

	for (rev = VMX_REV_MAX; rev >= 1; rev--)
		if (vrrs & BIT(rev - 1))
			break;
	if (!rev) {
		dev_err(&vp->pdev->dev, "no supported revision (offered %#x)\n",
			vrrs);
		return -ENODEV;
	}
	vmx_wr_vd(vp, VMX_REG_VRRS, BIT(rev - 1));
	if (!(vmx_rd_vd(vp, VMX_REG_UVRS) & 1)) {
		dev_err(&vp->pdev->dev, "UPT version 1 not offered\n");
		return -ENODEV;
	}
	vmx_wr_vd(vp, VMX_REG_UVRS, 1);
	vp->rev = rev;
	return 0;
}

/*
 * rev 7+: ask for the capabilities vmx uses among those offered: large-BAR
 * doorbells; UDP / ESP hashing, Geneve/VXLAN inner checksum, TSO and outer
 * checksum where pass-through allows them (PTCR0 bit 31, or the bit itself);
 * out-of-order RX completions where PTCR0 offers them too and bit 31 is
 * clear (the RX path then tracks each slot and re-arms in ring order).
 * Only what was asked for is trusted.
 */
static void vmx_negotiate_caps(struct vmx_priv *vp)
{
	u32 dcr, ptcr, want = 0, gated;

	vp->caps = 0;
	vp->db_tx = VMX_REG_TXPROD;
	vp->db_rx = VMX_REG_RXPROD;
	vp->db_rx2 = VMX_REG_RXPROD2;
	if (vp->rev < 7)
		return;
	dcr = vmx_rd_vd(vp, VMX_REG_DCR0);
	ptcr = vmx_rd_vd(vp, VMX_REG_PTCR0);
	if ((dcr & VMX_CAP_LARGE_BAR) &&
	    pci_resource_len(vp->pdev, VMX_BAR_PT) >=
	    VMX_REG_RXPROD2_LB + 8 * VMX_MAX_RX_QUEUES)
		want |= VMX_CAP_LARGE_BAR;
	gated = dcr & (VMX_CAP_UDP_RSS | VMX_CAP_ESP_RSS_IPV4 |
		       VMX_CAP_ESP_RSS_IPV6 | VMX_CAP_TUNNEL);
	if (!(ptcr & VMX_CAP_PT_ALLOWED))
		gated &= ptcr;
	want |= gated;
	/* out of order only where pass-through offers it, constrained */
	if ((dcr & ptcr & VMX_CAP_OOORX_COMP) && !(ptcr & VMX_CAP_PT_ALLOWED))
		want |= VMX_CAP_OOORX_COMP;
	vmx_wr_vd(vp, VMX_REG_DCR0, want);
	vp->caps = vmx_cmd(vp, VMX_CMD_GET_DCR0_REG) & want;
	if (vp->caps & VMX_CAP_LARGE_BAR) {
		vp->db_tx = VMX_REG_TXPROD_LB;
		vp->db_rx = VMX_REG_RXPROD_LB;
		vp->db_rx2 = VMX_REG_RXPROD2_LB;
	}
	dev_info(&vp->pdev->dev, "capabilities offered %#x (pass-through %#x), asked %#x, granted %#x\n",
		 dcr, ptcr, want, vp->caps);
}

static void vmx_query_limits(struct vmx_priv *vp)
{
	u32 v, maxtx = VMX_LEGACY_TX_QUEUES, maxrx = VMX_LEGACY_RX_QUEUES;

	vp->txdata_size = VMX_TXDATA_DESC_SIZE;
	vp->rxdata_size = 0;
	vp->max_mtu = VMX_MAX_MTU;
	if (vp->rev >= 3) {
		u32 sizes = vmx_cmd(vp, VMX_CMD_GET_TXDATA_DESC_SIZE);

		v = FIELD_GET(VMX_TXDATA_SIZE, sizes);
		if (v >= VMX_TXDATA_DESC_SIZE && v <= VMX_TXDATA_DESC_MAX &&
		    !(v % 64))
			vp->txdata_size = v;
		vp->rxdata_size = VMX_RXDATA_DESC_SIZE;
		/* rev 9: the device suggests the RX data ring size, 0 = none */
		v = FIELD_GET(VMX_RXDATA_SIZE, sizes);
		if (vp->rev >= 9 && v <= VMX_RXDATA_DESC_MAX && !(v % 64))
			vp->rxdata_size = v;
	}
	if (vp->rev >= 6) {
		vp->max_mtu = VMX_MAX_MTU_REV6;
		v = vmx_cmd(vp, VMX_CMD_GET_MAX_QUEUES_CONF);
		/* up to 32 each with the extended interrupt block */
		if (FIELD_GET(VMX_MAXQ_TX, v) && FIELD_GET(VMX_MAXQ_RX, v)) {
			maxtx = min_t(u32, VMX_MAX_TX_QUEUES,
				      FIELD_GET(VMX_MAXQ_TX, v));
			maxrx = min_t(u32, VMX_MAX_RX_QUEUES,
				      FIELD_GET(VMX_MAXQ_RX, v));
		}
	}
	/* stack queues come in pairs; XDP takes what TX room is left */
	vp->max_tx_queues = maxtx;
	vp->max_queues = min(maxtx, maxrx);
}

static void vmx_free_dma(struct vmx_priv *vp)
{
	struct device *dev = &vp->pdev->dev;

	if (vp->conf)
		dma_free_coherent(dev, PAGE_SIZE, vp->conf, vp->conf_pa);
	if (vp->mf_table)
		dma_free_coherent(dev, PAGE_SIZE, vp->mf_table,
				  vp->mf_table_pa);
	if (vp->qdesc)
		dma_free_coherent(dev, 2 * VMX_MAX_TX_QUEUES * 256, vp->qdesc,
				  vp->qdesc_pa);
	if (vp->shared)
		dma_free_coherent(dev, sizeof(*vp->shared), vp->shared,
				  vp->shared_pa);
}

static int vmx_alloc_dma(struct vmx_priv *vp)
{
	struct device *dev = &vp->pdev->dev;

	vp->shared = dma_alloc_coherent(dev, sizeof(*vp->shared),
					&vp->shared_pa, GFP_KERNEL);
	vp->qdesc = dma_alloc_coherent(dev, 2 * VMX_MAX_TX_QUEUES * 256,
				       &vp->qdesc_pa, GFP_KERNEL);
	vp->mf_table = dma_alloc_coherent(dev, PAGE_SIZE, &vp->mf_table_pa,
					  GFP_KERNEL);
	vp->conf = dma_alloc_coherent(dev, PAGE_SIZE, &vp->conf_pa,
				      GFP_KERNEL);
	if (!vp->shared || !vp->qdesc || !vp->mf_table || !vp->conf)
		return -ENOMEM;
	return 0;
}

/* rev 9: offloads the host forbids are not offered, and the log says so. */
static void vmx_disabled_offloads(struct vmx_priv *vp, struct net_device *nd)
{
	u32 off = vmx_cmd(vp, VMX_CMD_GET_DISABLED_OFFLOADS);

	if (off & VMX_DISABLED_TSO) {
		netdev_features_t tso = NETIF_F_TSO | NETIF_F_TSO6 |
					NETIF_F_GSO_UDP_TUNNEL |
					NETIF_F_GSO_UDP_TUNNEL_CSUM;

		nd->hw_features &= ~tso;
		nd->hw_enc_features &= ~tso;
		dev_info(&vp->pdev->dev, "the device disabled TSO\n");
	}
	if (off & VMX_DISABLED_LRO) {
		nd->hw_features &= ~NETIF_F_LRO;
		dev_info(&vp->pdev->dev, "the device disabled LRO\n");
	}
}

/*
 * rev 4+: Geneve/VXLAN offloads (inner checksum and TSO, outer UDP
 * checksum for TSO). From rev 7 only what DCR0 granted: without any of
 * the inner checksum/TSO capabilities no tunnel offload, without an outer
 * checksum one no tunnel TSO that needs the outer checksum. Which tunnel
 * (Geneve or VXLAN) a capability covers is checked per packet in
 * vmx_features_check().
 */
static void vmx_tunnel_features(struct vmx_priv *vp, struct net_device *nd)
{
	netdev_features_t f = NETIF_F_GSO_UDP_TUNNEL |
			      NETIF_F_GSO_UDP_TUNNEL_CSUM;

	if (vp->rev < 4)
		return;
	if (vp->rev >= 7) {
		if (!(vp->caps & (VMX_CAP_GENEVE_CSUM | VMX_CAP_GENEVE_TSO |
				  VMX_CAP_VXLAN_CSUM | VMX_CAP_VXLAN_TSO)))
			return;
		if (!(vp->caps & (VMX_CAP_GENEVE_TSO | VMX_CAP_VXLAN_TSO)))
			f = 0;
		if (!(vp->caps & (VMX_CAP_GENEVE_OUTER | VMX_CAP_VXLAN_OUTER)))
			f &= ~NETIF_F_GSO_UDP_TUNNEL_CSUM;
	}
	nd->hw_enc_features = NETIF_F_SG | NETIF_F_IP_CSUM |
			      NETIF_F_IPV6_CSUM | NETIF_F_RXCSUM;
	if (f)
		nd->hw_enc_features |= NETIF_F_TSO | NETIF_F_TSO6 | f;
	/* with only inner checksums granted there is no GSO type to offer */
	nd->hw_features |= f;
}

static const char *const vmx_intr_names[] = {
	[VMX_IT_INTX] = "INTx",
	[VMX_IT_MSI] = "MSI",
	[VMX_IT_MSIX] = "MSI-X",
};

static int vmx_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vmx_priv *vp;
	struct net_device *nd;
	u8 mac[ETH_ALEN];
	u32 conf, i;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err) {
		dev_err(&pdev->dev, "no usable DMA configuration\n");
		return err;
	}
	err = pcim_iomap_regions(pdev, BIT(VMX_BAR_PT) | BIT(VMX_BAR_VD),
				 VMX_DRV_NAME);
	if (err)
		return err;
	pci_set_master(pdev);

	nd = alloc_etherdev_mq(sizeof(*vp), VMX_MAX_TX_QUEUES);
	if (!nd)
		return -ENOMEM;
	SET_NETDEV_DEV(nd, &pdev->dev);
	vp = netdev_priv(nd);
	vp->netdev = nd;
	vp->pdev = pdev;
	vp->pt = pcim_iomap_table(pdev)[VMX_BAR_PT];
	vp->vd = pcim_iomap_table(pdev)[VMX_BAR_VD];
	spin_lock_init(&vp->cmd_lock);
	spin_lock_init(&vp->stats_lock);
	INIT_WORK(&vp->reset_work, vmx_reset_work);
	INIT_WORK(&vp->event_work, vmx_event_work);
	pci_set_drvdata(pdev, vp);

	err = vmx_negotiate(vp);
	if (err)
		goto err_free_nd;
	err = vmx_alloc_dma(vp);
	if (err)
		goto err_free_dma;
	vmx_negotiate_caps(vp);
	vmx_query_limits(vp);

	conf = vmx_cmd(vp, VMX_CMD_GET_CONF_INTR);
	vp->mask_mode = FIELD_GET(VMX_CONF_INTR_MASK, conf);
	vp->max_queues = min_t(u32, vp->max_queues, num_online_cpus());
	err = vmx_alloc_vectors(vp, FIELD_GET(VMX_CONF_INTR_TYPE, conf));
	if (err)
		goto err_free_dma;
	for (i = 0; i < vp->max_queues; i++) {
		vp->qv[i].vp = vp;
		vp->qv[i].qid = i;
		/* the queue vectors come after events (and XDP TX) */
		vp->qv[i].idx = vp->intr_type == VMX_IT_MSIX ?
				i + vp->num_vecs - vp->max_queues : 0;
	}
	vp->qs.nq = min_t(u32, vp->max_queues, VMX_DEF_QUEUES);
	/* all once, so that every instance is initialised and disabled */
	vmx_napi_list(vp, vp->max_queues);
	vmx_napi_list(vp, vp->qs.nq);
	vp->qs.tx_size = VMX_DEF_TX_RING;
	vp->qs.rx_size[0] = VMX_DEF_RX_RING0;
	vp->qs.rx_size[1] = VMX_DEF_RX_RING1;
	vp->qs.mtu = nd->mtu;
	netdev_rss_key_fill(vp->rss_key, sizeof(vp->rss_key));
	vp->rss_fields = VMX_RSSF_DEFAULT;
	vp->rss_granted = VMX_RSSF_DEFAULT;
	device_set_wakeup_capable(&pdev->dev, true);
	err = vmx_set_real_queues(vp, vp->qs.nq);
	if (err)
		goto err_napi;

	vmx_read_mac(vp, mac);
	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(nd, mac);
	} else {
		dev_warn(&pdev->dev, "invalid MAC %pM, using a random one\n",
			 mac);
		eth_hw_addr_random(nd);
	}

	nd->netdev_ops = &vmx_netdev_ops;
	vmx_set_ethtool_ops(nd);
#ifdef VMX_HAVE_XDP_META
	nd->xdp_metadata_ops = &vmx_xdp_metadata_ops;
#endif
#ifdef VMX_HAVE_QSTATS
	nd->stat_ops = &vmx_stat_ops;
#endif
	nd->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	nd->watchdog_timeo = 5 * HZ;
	nd->min_mtu = VMX_MIN_MTU;
	nd->max_mtu = vp->max_mtu;
	nd->hw_features = NETIF_F_SG | NETIF_F_IP_CSUM | NETIF_F_IPV6_CSUM |
			  NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_RXCSUM |
			  NETIF_F_LRO | NETIF_F_HW_VLAN_CTAG_TX |
			  NETIF_F_HW_VLAN_CTAG_RX | NETIF_F_HW_VLAN_CTAG_FILTER;
	if (vp->max_queues > 1)
		nd->hw_features |= NETIF_F_RXHASH;
	vmx_tunnel_features(vp, nd);
	if (vp->rev >= 9)
		vmx_disabled_offloads(vp, nd);
	nd->features = nd->hw_features | NETIF_F_HIGHDMA;
	nd->vlan_features = nd->hw_features &
			    ~(NETIF_F_HW_VLAN_CTAG_TX | NETIF_F_HW_VLAN_CTAG_RX |
			      NETIF_F_HW_VLAN_CTAG_FILTER | NETIF_F_LRO);
	vmx_xdp_update_features(vp);

	netif_carrier_off(nd);
	err = register_netdev(nd);
	if (err)
		goto err_napi;

	netdev_info(nd, "vmxnet3 revision %u, UPT 1, %s with %u vector%s, %u queue pair%s max, MAC %pM\n",
		    vp->rev, vmx_intr_names[vp->intr_type], vp->num_vecs,
		    vp->num_vecs == 1 ? "" : "s", vp->max_queues,
		    vp->max_queues == 1 ? "" : "s", nd->dev_addr);
	return 0;

err_napi:
	vmx_napi_list(vp, 0);
	pci_free_irq_vectors(pdev);
err_free_dma:
	vmx_free_dma(vp);
err_free_nd:
	free_netdev(nd);
	return err;
}

static void vmx_remove(struct pci_dev *pdev)
{
	struct vmx_priv *vp = pci_get_drvdata(pdev);

	/* the works take rtnl: never wait for them under it */
	unregister_netdev(vp->netdev);
	cancel_work_sync(&vp->reset_work);
	cancel_work_sync(&vp->event_work);
	if (vp->xdp_prog)
		bpf_prog_put(vp->xdp_prog);
	vmx_napi_list(vp, 0);
	pci_free_irq_vectors(pdev);
	vmx_free_dma(vp);
	free_netdev(vp->netdev);
}

static void vmx_shutdown(struct pci_dev *pdev)
{
	struct vmx_priv *vp = pci_get_drvdata(pdev);

	cancel_work_sync(&vp->reset_work);
	cancel_work_sync(&vp->event_work);
	rtnl_lock();
	/* a reset scheduled from here on finds the device detached */
	netif_device_detach(vp->netdev);
	if (netif_running(vp->netdev))
		vmx_down(vp, true);
	rtnl_unlock();
}

/*
 * Wake-up configuration for the device, sent before it loses power. The
 * shared area is registered again in case the interface never came up.
 */
static void vmx_write_pm(struct vmx_priv *vp)
{
	u8 *c = vp->conf + VMX_CONF_PM;

	memset(c, 0, VMX_PM_CONF_LEN);
	if (vp->wol & WAKE_MAGIC)
		put_unaligned_le16(VMX_PM_WAKE_MAGIC, c);
	vp->shared->pm_conf.conf_ver = cpu_to_le32(1);
	vp->shared->pm_conf.conf_len = cpu_to_le32(VMX_PM_CONF_LEN);
	vp->shared->pm_conf.conf_pa = cpu_to_le64(vp->conf_pa + VMX_CONF_PM);
	vmx_wr_vd(vp, VMX_REG_DSAL, lower_32_bits(vp->shared_pa));
	vmx_wr_vd(vp, VMX_REG_DSAH, upper_32_bits(vp->shared_pa));
	vmx_cmd_nr(vp, VMX_CMD_UPDATE_PMCFG);
}

/*
 * Suspend and hibernate: the interface is closed as by ip link set down
 * (its counters fold into the base, the XDP program stays attached to the
 * device), and opened again with the same configuration on resume.
 */
static int vmx_suspend(struct device *dev)
{
	struct vmx_priv *vp = dev_get_drvdata(dev);
	struct net_device *nd = vp->netdev;

	cancel_work_sync(&vp->reset_work);
	/*
	 * A reset cancelled before it ran would leave the bit set and every
	 * later one refused; the resume starts the device afresh anyway.
	 */
	clear_bit(VMX_S_RESET_PENDING, &vp->state);
	cancel_work_sync(&vp->event_work);
	rtnl_lock();
	netif_device_detach(nd);
	if (netif_running(nd))
		vmx_stop(nd);
	vmx_write_pm(vp);
	rtnl_unlock();
	device_set_wakeup_enable(dev, !!vp->wol);
	return 0;
}

static int vmx_resume(struct device *dev)
{
	struct vmx_priv *vp = dev_get_drvdata(dev);
	struct net_device *nd = vp->netdev;
	u32 rev = vp->rev, caps = vp->caps;
	int err;

	rtnl_lock();
	/*
	 * The device may have lost power (a hibernation's reboot resets it):
	 * negotiate as at probe, the revision and the capabilities, whose
	 * grant a reset forgets (large-BAR doorbells included).
	 */
	err = vmx_negotiate(vp);
	if (!err && vp->rev != rev) {
		netdev_err(nd, "device revision changed across suspend (%u to %u)\n",
			   rev, vp->rev);
		err = -ENODEV;
	}
	if (!err) {
		vmx_negotiate_caps(vp);
		if (vp->caps != caps) {
			netdev_err(nd, "device capabilities changed across suspend (%#x to %#x)\n",
				   caps, vp->caps);
			err = -ENODEV;
		}
	}
	if (!err && netif_running(nd)) {
		err = vmx_open(nd);
		if (err) {
			/*
			 * Nothing is held: close the interface as the stack
			 * sees it, so that nothing uses queues that are gone,
			 * and let ip link set up try again.
			 */
			netdev_err(nd, "resume: the device could not be opened (%d), interface closed\n",
				   err);
			dev_close(nd);
			err = 0;
		}
	}
	if (!err) {
		netif_device_attach(nd);
	} else {
		/* a device that is not the one suspended: never used again */
		if (netif_running(nd))
			dev_close(nd);
		netdev_err(nd, "resume failed: %d\n", err);
	}
	rtnl_unlock();
	return err;
}

static DEFINE_SIMPLE_DEV_PM_OPS(vmx_pm_ops, vmx_suspend, vmx_resume);

static struct pci_driver vmx_pci_driver = {
	.name		= VMX_DRV_NAME,
	.id_table	= vmx_pci_tbl,
	.probe		= vmx_probe,
	.remove		= vmx_remove,
	.shutdown	= vmx_shutdown,
	.driver.pm	= pm_sleep_ptr(&vmx_pm_ops),
};
/*
 * The in-tree vmxnet3 claims the same device. Loading vmx takes only free
 * NICs and says which ones another driver keeps (switching one over is an
 * unbind there and a bind here, see the README).
 */
static int __init vmx_init(void)
{
	struct pci_dev *pdev = NULL;
	int err;

	err = pci_register_driver(&vmx_pci_driver);
	if (err)
		return err;
	while ((pdev = pci_get_device(PCI_VENDOR_ID_VMWARE_VMX,
				      PCI_DEVICE_ID_VMWARE_VMXNET3, pdev))) {
		/* the driver cannot go away while we print its name */
		device_lock(&pdev->dev);
		if (pdev->dev.driver &&
		    pdev->dev.driver != &vmx_pci_driver.driver)
			pr_info("%s: %s is driven by %s, left alone\n",
				VMX_DRV_NAME, pci_name(pdev),
				pdev->dev.driver->name);
		device_unlock(&pdev->dev);
	}
	return 0;
}
module_init(vmx_init);

static void __exit vmx_exit(void)
{
	pci_unregister_driver(&vmx_pci_driver);
}
module_exit(vmx_exit);

MODULE_DESCRIPTION("VMware vmxnet3 virtual NIC driver with native XDP");
MODULE_VERSION(VMX_VERSION);
MODULE_LICENSE("GPL");
