// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: statistics.
 *
 * Each queue counts in its own u64_stats; the device keeps its own counters
 * per queue, which are folded into totals. What queues that go away
 * counted (a reconfiguration, ip link set down) moves into the base, so
 * totals never go backwards. Read through ndo_get_stats64 and the
 * per-queue netdev stats (netdev_stat_ops).
 */
#include <linux/netdevice.h>

#include "vmx.h"

/**
 * vmx_fold_dev_stats() - fold the device counters into the totals
 * @vp: device; must be active
 * @baseline: only take the current values as the last seen (the device
 *	      counts afresh from its activation)
 */
void vmx_fold_dev_stats(struct vmx_priv *vp, bool baseline)
{
	struct vmx_qset *qs = &vp->qs;
	unsigned long flags;
	u32 q, k;

	vmx_cmd_nr(vp, VMX_CMD_GET_STATS);
	spin_lock_irqsave(&vp->stats_lock, flags);
	for (q = 0; q < qs->nq + qs->nxdp; q++) {
		const __le64 *c = (const __le64 *)&vmx_txq_desc(vp, q)->stats;

		for (k = 0; k < VMX_DEV_STATS; k++) {
			u64 v = le64_to_cpu(c[k]), *last = &vp->dev_last_tx[q][k];

			if (!baseline)
				vp->base.dev_tx[k] += v >= *last ? v - *last : v;
			*last = v;
		}
	}
	for (q = 0; q < qs->nq; q++) {
		const __le64 *c = (const __le64 *)&vmx_rxq_desc(vp, q)->stats;

		for (k = 0; k < VMX_DEV_STATS; k++) {
			u64 v = le64_to_cpu(c[k]), *last = &vp->dev_last_rx[q][k];

			if (!baseline)
				vp->base.dev_rx[k] += v >= *last ? v - *last : v;
			*last = v;
		}
	}
	spin_unlock_irqrestore(&vp->stats_lock, flags);
}

/* The TX queue of @next that takes over from queue @q of @qs, or NULL. */
static struct vmx_txq *vmx_txq_successor(const struct vmx_qset *qs, u32 q,
					 const struct vmx_qset *next)
{
	if (!next->txq)
		return NULL;
	if (q < qs->nq)
		return q < next->nq ? &next->txq[q] : NULL;
	q -= qs->nq;
	return q < next->nxdp ? &next->txq[next->nq + q] : NULL;
}

/**
 * vmx_carry_queue_stats_locked() - hand queue counters to the next set
 * @vp: device; under stats_lock
 * @qs: the live queue set
 * @next: the set that replaces it, not running yet
 *
 * Hand the counters of the live set @qs over to @next, which is not running
 * yet: a queue that exists in both keeps counting where it was (ethtool -S
 * and the per-queue netdev stats do not restart on a ring resize or an XDP
 * attach), the counters of a queue that goes away move into the base.
 */
void vmx_carry_queue_stats_locked(struct vmx_priv *vp, struct vmx_qset *qs,
				  const struct vmx_qset *next)
{
	u64 rx[VMX_RXS_NUM], tx[VMX_TXS_NUM];
	struct vmx_txq *to;
	u32 q, k;

	if (!qs->txq)
		return;
	for (q = 0; q < qs->nq; q++) {
		vmx_rxq_read_stats(&qs->rxq[q], rx);
		if (next->rxq && q < next->nq) {
			memcpy(next->rxq[q].stats.s, rx, sizeof(rx));
			continue;
		}
		for (k = 0; k < VMX_RXS_NUM; k++)
			vp->base.rx[k] += rx[k];
	}
	for (q = 0; q < qs->nq + qs->nxdp; q++) {
		vmx_txq_read_stats(&qs->txq[q], tx);
		to = vmx_txq_successor(qs, q, next);
		if (to) {
			memcpy(to->stats.s, tx, sizeof(tx));
			memset(to->cstats.s, 0, sizeof(to->cstats.s));
			continue;
		}
		for (k = 0; k < VMX_TXS_NUM; k++)
			vp->base.tx[k] += tx[k];
	}
}

/**
 * vmx_qset_zero_stats() - clear the counters of a queue set
 * @qs: queue set
 *
 * A set whose counters are already in the base starts counting afresh.
 */
void vmx_qset_zero_stats(struct vmx_qset *qs)
{
	u32 q;

	for (q = 0; q < qs->nq; q++)
		memset(qs->rxq[q].stats.s, 0, sizeof(qs->rxq[q].stats.s));
	for (q = 0; q < qs->nq + qs->nxdp; q++) {
		memset(qs->txq[q].stats.s, 0, sizeof(qs->txq[q].stats.s));
		memset(qs->txq[q].cstats.s, 0, sizeof(qs->txq[q].cstats.s));
	}
}

/*
 * The base (queues no longer in use) plus the XDP TX queues, and with
 * @stack also the stack's queues. Under stats_lock, which keeps the queue
 * set from being swapped.
 */
static void vmx_sum_queues(struct vmx_priv *vp, u64 *rx, u64 *tx, bool stack)
{
	u64 r[VMX_RXS_NUM], t[VMX_TXS_NUM];
	struct vmx_qset *qs = &vp->qs;
	u32 q, k;

	memcpy(rx, vp->base.rx, sizeof(vp->base.rx));
	memcpy(tx, vp->base.tx, sizeof(vp->base.tx));
	for (q = stack ? 0 : qs->nq; qs->txq && q < qs->nq + qs->nxdp; q++) {
		vmx_txq_read_stats(&qs->txq[q], t);
		for (k = 0; k < VMX_TXS_NUM; k++)
			tx[k] += t[k];
	}
	for (q = 0; stack && qs->rxq && q < qs->nq; q++) {
		vmx_rxq_read_stats(&qs->rxq[q], r);
		for (k = 0; k < VMX_RXS_NUM; k++)
			rx[k] += r[k];
	}
}

/**
 * vmx_get_base_totals() - counters of queues no longer in use, plus the
 * XDP TX queues, which the stack does not see as queues
 * @vp: device
 * @rx: VMX_RXS_NUM values
 * @tx: VMX_TXS_NUM values
 */
void vmx_get_base_totals(struct vmx_priv *vp, u64 *rx, u64 *tx)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->stats_lock, flags);
	vmx_sum_queues(vp, rx, tx, false);
	spin_unlock_irqrestore(&vp->stats_lock, flags);
}

/**
 * vmx_get_totals() - every counter of the interface since it was created:
 * the base and every live queue
 * @vp: device
 * @rx: VMX_RXS_NUM values
 * @tx: VMX_TXS_NUM values
 */
void vmx_get_totals(struct vmx_priv *vp, u64 *rx, u64 *tx)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->stats_lock, flags);
	vmx_sum_queues(vp, rx, tx, true);
	spin_unlock_irqrestore(&vp->stats_lock, flags);
}

/**
 * vmx_get_stats64() - ndo_get_stats64: queue, base and device counters
 * @nd: net device
 * @st: filled in
 */
void vmx_get_stats64(struct net_device *nd, struct rtnl_link_stats64 *st)
{
	u64 rx[VMX_RXS_NUM], tx[VMX_TXS_NUM], dtx[VMX_DEV_STATS];
	struct vmx_priv *vp = netdev_priv(nd);
	u64 drx[VMX_DEV_STATS];
	unsigned long flags;

	spin_lock_irqsave(&vp->stats_lock, flags);
	vmx_sum_queues(vp, rx, tx, true);
	spin_unlock_irqrestore(&vp->stats_lock, flags);
	if (test_bit(VMX_S_UP, &vp->state))
		vmx_fold_dev_stats(vp, false);
	spin_lock_irqsave(&vp->stats_lock, flags);
	memcpy(dtx, vp->base.dev_tx, sizeof(dtx));
	memcpy(drx, vp->base.dev_rx, sizeof(drx));
	spin_unlock_irqrestore(&vp->stats_lock, flags);

	st->rx_packets = rx[VMX_RXS_PACKETS];
	st->rx_bytes = rx[VMX_RXS_BYTES];
	st->tx_packets = tx[VMX_TXS_PACKETS];
	st->tx_bytes = tx[VMX_TXS_BYTES];
	st->multicast = drx[offsetof(struct vmx_rx_stats, mcast_pkts) / 8];
	st->rx_missed_errors = drx[offsetof(struct vmx_rx_stats, nobuf_pkts) / 8];
	st->rx_errors = drx[offsetof(struct vmx_rx_stats, err_pkts) / 8] +
			rx[VMX_RXS_BAD_DESC];
	st->rx_length_errors = rx[VMX_RXS_RUNT];
	st->rx_errors += rx[VMX_RXS_RUNT];
	st->rx_dropped = rx[VMX_RXS_DROP] + rx[VMX_RXS_DEV_ERR];
	st->tx_errors = dtx[offsetof(struct vmx_tx_stats, err_pkts) / 8] +
			tx[VMX_TXS_BAD_DESC];
	st->tx_dropped = dtx[offsetof(struct vmx_tx_stats, discard_pkts) / 8] +
			 tx[VMX_TXS_DROP];
}

#ifdef VMX_HAVE_QSTATS
static void vmx_fill_qstats_rx(const u64 *r, struct netdev_queue_stats_rx *st)
{
	st->packets = r[VMX_RXS_PACKETS];
	st->bytes = r[VMX_RXS_BYTES];
	st->alloc_fail = r[VMX_RXS_ALLOC_FAIL];
	st->csum_unnecessary = r[VMX_RXS_CSUM_OK];
	st->csum_none = r[VMX_RXS_CSUM_NONE];
	st->hw_gro_packets = r[VMX_RXS_LRO_PKTS];
	st->hw_gro_bytes = r[VMX_RXS_LRO_BYTES];
}

static void vmx_fill_qstats_tx(const u64 *t, struct netdev_queue_stats_tx *st)
{
	st->packets = t[VMX_TXS_PACKETS];
	st->bytes = t[VMX_TXS_BYTES];
	st->hw_gso_packets = t[VMX_TXS_TSO_PKTS];
	st->hw_gso_bytes = t[VMX_TXS_TSO_BYTES];
	st->needs_csum = t[VMX_TXS_CSUM];
	st->stop = t[VMX_TXS_STOP];
	st->wake = t[VMX_TXS_WAKE];
}

/*
 * The kernel asks for every real queue, even while the device is down and
 * has no queues (a device-scope qstats dump needs no privilege): then the
 * base holds all the counters and a queue reports nothing.
 */
static void vmx_qstat_rx(struct net_device *nd, int idx,
			 struct netdev_queue_stats_rx *st)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u64 r[VMX_RXS_NUM];
	unsigned long flags;
	bool have;

	spin_lock_irqsave(&vp->stats_lock, flags);
	have = vp->qs.rxq && idx < vp->qs.nq;
	if (have)
		vmx_rxq_read_stats(&vp->qs.rxq[idx], r);
	spin_unlock_irqrestore(&vp->stats_lock, flags);
	if (have)
		vmx_fill_qstats_rx(r, st);
}

static void vmx_qstat_tx(struct net_device *nd, int idx,
			 struct netdev_queue_stats_tx *st)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u64 t[VMX_TXS_NUM];
	unsigned long flags;
	bool have;

	spin_lock_irqsave(&vp->stats_lock, flags);
	have = vp->qs.txq && idx < vp->qs.nq;
	if (have)
		vmx_txq_read_stats(&vp->qs.txq[idx], t);
	spin_unlock_irqrestore(&vp->stats_lock, flags);
	if (have)
		vmx_fill_qstats_tx(t, st);
}

static void vmx_qstat_base(struct net_device *nd,
			   struct netdev_queue_stats_rx *rx,
			   struct netdev_queue_stats_tx *tx)
{
	struct vmx_priv *vp = netdev_priv(nd);
	u64 r[VMX_RXS_NUM], t[VMX_TXS_NUM];

	vmx_get_base_totals(vp, r, t);
	vmx_fill_qstats_rx(r, rx);
	vmx_fill_qstats_tx(t, tx);
}

const struct netdev_stat_ops vmx_stat_ops = {
	.get_queue_stats_rx	= vmx_qstat_rx,
	.get_queue_stats_tx	= vmx_qstat_tx,
	.get_base_stats		= vmx_qstat_base,
};
#endif
