// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: native XDP.
 *
 * While a program is attached every ring-0 buffer is a page_pool page with
 * XDP_PACKET_HEADROOM in front of the frame, mapped bidirectionally; the
 * first attach and the last detach switch the queue set to and from that
 * layout (allocate new, swap, roll back on failure), replacing a program is
 * a pointer swap. The RX poll reads the program once and runs it on
 * frames from ring 0 and the RX data ring; a program loaded with frags
 * support also gets frames that go on in ring-1 pages (jumbo MTU), as
 * multi-buffer xdp_buffs whose fragments are those pages. LRO stays off
 * while any program is attached: a program sees, sends and redirects the
 * frames that were on the wire, never an aggregate larger than the MTU.
 *
 * The verdicts are carried out in the RX poll itself (vmx_rx.c, inlined
 * there: two calls per frame were a sixth of the driver's instructions
 * for XDP_DROP). XDP_TX frames are collected during the poll and posted
 * as one batch with one doorbell. They go to a TX queue reserved for XDP
 * (one per RX queue, after the stack's queues) when the device has room
 * for it; otherwise they share the stack's TX queue under its lock.
 * ndo_xdp_xmit uses the same queues; each XDP queue has a lock because
 * redirects from other CPUs may pick it while its own NAPI sends XDP_TX
 * frames.
 *
 * A dedicated XDP queue is reclaimed by its senders, under that lock, right
 * after each doorbell. QEMU's device sends synchronously on the doorbell,
 * so nothing is left in flight there and the queues' own interrupt vector
 * (xdp_vec) stays masked: no completion interrupt, no extra poll per batch.
 * A device that completes later leaves frames in flight; the sender then
 * unmasks the vector and its interrupt has the NAPIs finish the job.
 *
 * AF_XDP zero-copy (XDP_SETUP_XSK_POOL) works per channel: ring 0 of the
 * channel's RX queue takes its buffers from the socket's UMEM, and the
 * channel's XDP TX queue sends from its TX ring in the channel's NAPI
 * (woken by ndo_xsk_wakeup). Binding or releasing a pool rebuilds the
 * queue set like any reconfiguration. Frames are at most one buffer: a
 * pool must hold a frame of the MTU, LRO stays off, and a frame the
 * device splits anyway is dropped and counted. Frames of the RX data ring
 * are copied into a UMEM buffer before the program runs; frames for the
 * stack (XDP_PASS, or no program) are copied into an skb.
 */
#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <net/xdp.h>

#include "vmx.h"

/**
 * vmx_xdp_txq() - TX queue used for XDP frames coming from @idx
 * @vp: device
 * @idx: RX queue (XDP_TX) or CPU (ndo_xdp_xmit)
 *
 * Return: the queue.
 */
struct vmx_txq *vmx_xdp_txq(struct vmx_priv *vp, u32 idx)
{
	struct vmx_qset *qs = &vp->qs;

	if (qs->nxdp)
		return &qs->txq[qs->nq + idx % qs->nxdp];
	return &qs->txq[idx % qs->nq];
}

static void vmx_xdp_lock(struct vmx_txq *txq)
	__acquires(txq)
{
	if (txq->xdp)
		spin_lock(&txq->xdp_lock);
	else
		__netif_tx_lock(txq->nq, smp_processor_id());
}

static void vmx_xdp_unlock(struct vmx_txq *txq)
	__releases(txq)
{
	if (txq->xdp)
		spin_unlock(&txq->xdp_lock);
	else
		__netif_tx_unlock(txq->nq);
}

/* Reclaim what the device completed; XDP lock held. */
static void vmx_xdp_reclaim(struct vmx_txq *txq)
{
	struct vmx_priv *vp = txq->vp;

	if (!txq->xdp)
		return;		/* a stack queue: its NAPI reclaims it */
	vmx_tx_clean(txq, 0, false);
	if (txq->clean != txq->kicked && vp->xdp_vec != VMX_NO_VEC)
		vmx_mask_vec(vp, vp->xdp_vec, false);
}

/**
 * vmx_xdp_txq_poll() - NAPI's share of reclaiming a dedicated XDP TX queue
 * @txq: the queue
 *
 * Never from netpoll, which may not complete XDP frames.
 */
void vmx_xdp_txq_poll(struct vmx_txq *txq)
{
	spin_lock(&txq->xdp_lock);
	vmx_xdp_reclaim(txq);
	spin_unlock(&txq->xdp_lock);
}

/**
 * vmx_xdp_tx_flush() - send the XDP_TX frames collected so far
 * @rxq: queue that collected them
 * @xtxq: its XDP TX queue
 */
void vmx_xdp_tx_flush(struct vmx_rxq *rxq, struct vmx_txq *xtxq)
{
	u32 n = rxq->xdp_tx_n, sent, i;

	if (!n)
		return;
	vmx_xdp_lock(xtxq);
	if (vmx_tx_avail(xtxq) < n)
		vmx_xdp_reclaim(xtxq);
	/* from a zero-copy queue XDP_TX frames are copies in plain pages */
	sent = vmx_tx_xdp_post(xtxq, rxq->xdp_tx, n, !rxq->xsk_pool);
	if (sent) {
		vmx_tx_doorbell(xtxq);
		vmx_xdp_reclaim(xtxq);
	}
	vmx_xdp_unlock(xtxq);

	for (i = sent; i < n; i++)
		xdp_return_frame_rx_napi(rxq->xdp_tx[i]);
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[VMX_RXS_XDP_TX] += sent;
	rxq->stats.s[VMX_RXS_XDP_TX_ERR] += n - sent;
	u64_stats_update_end(&rxq->stats.syncp);
	rxq->xdp_tx_n = 0;
}

/**
 * vmx_xdp_buff_free() - give the pages of an xdp_buff back to their pools
 * @rxq: queue whose rings they came from
 * @xdp: the frame: a ring-0 page and, if multi-buffer, ring-1 pages
 * @direct: from this queue's NAPI (recycle into the pool's cache)
 */
void vmx_xdp_buff_free(struct vmx_rxq *rxq, struct xdp_buff *xdp, bool direct)
{
	struct skb_shared_info *sh;
	u32 i;

	if (rxq->xsk_pool) {
		xsk_buff_free(xdp);
		return;
	}
	if (unlikely(xdp_buff_has_frags(xdp))) {
		sh = xdp_get_shared_info_from_buff(xdp);
		for (i = 0; i < sh->nr_frags; i++)
			page_pool_put_full_page(rxq->ring[1].pp,
						skb_frag_page(&sh->frags[i]),
						direct);
	}
	page_pool_put_full_page(rxq->ring[0].pp,
				virt_to_page(xdp->data_hard_start), direct);
}

/**
 * vmx_xdp_poll_done() - finish the XDP work of one poll
 * @rxq: queue
 * @xtxq: its XDP TX queue
 * @xdp_flags: what vmx_xdp_run() left to do
 */
void vmx_xdp_poll_done(struct vmx_rxq *rxq, struct vmx_txq *xtxq,
		       u32 xdp_flags)
{
	if (xdp_flags & VMX_XDP_FLAG_TX)
		vmx_xdp_tx_flush(rxq, xtxq);
	if (xdp_flags & VMX_XDP_FLAG_REDIRECT)
		xdp_do_flush();
}

/**
 * vmx_xdp_xmit() - ndo_xdp_xmit: send frames redirected to this device
 * @nd: device
 * @n: number of frames
 * @frames: the frames
 * @flags: XDP_XMIT_FLUSH rings the doorbell
 *
 * Return: frames queued, or a negative errno.
 */
int vmx_xdp_xmit(struct net_device *nd, int n, struct xdp_frame **frames,
		 u32 flags)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct vmx_txq *txq;
	int sent;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	if (unlikely(!test_bit(VMX_S_UP, &vp->state) ||
		     !netif_carrier_ok(nd)))
		return -ENETDOWN;

	txq = vmx_xdp_txq(vp, smp_processor_id());
	vmx_xdp_lock(txq);
	if (vmx_tx_avail(txq) < n)
		vmx_xdp_reclaim(txq);
	sent = vmx_tx_xdp_post(txq, frames, n, false);
	if (flags & XDP_XMIT_FLUSH) {
		vmx_tx_doorbell(txq);
		vmx_xdp_reclaim(txq);
	}
	/* under the lock: other CPUs may send through this queue too */
	u64_stats_update_begin(&txq->stats.syncp);
	txq->stats.s[VMX_TXS_XDP_XMIT] += sent;
	txq->stats.s[VMX_TXS_XDP_XMIT_ERR] += n - sent;
	u64_stats_update_end(&txq->stats.syncp);
	vmx_xdp_unlock(txq);
	return sent;
}

/*
 * Frames of @mtu reach @prog in one buffer, or the program takes
 * multi-buffer frames.
 */
static int vmx_xdp_mtu_ok(const struct bpf_prog *prog, u32 mtu,
			  struct netlink_ext_ack *extack)
{
	if (!prog || prog->aux->xdp_has_frags || mtu <= VMX_XDP_MAX_MTU)
		return 0;
	vmx_extack_fmt(extack, "MTU too large for an XDP program without frags support",
		       "MTU %u too large without frags support: at most %lu",
		       mtu, (unsigned long)VMX_XDP_MAX_MTU);
	return -EINVAL;
}

/**
 * vmx_xdp_check_mtu() - can frames of this MTU run through XDP?
 * @vp: device
 * @mtu: MTU to check
 * @extack: for the refusal, may be NULL
 *
 * Return: 0, or -EINVAL when a program without frags support is attached
 * and frames of @mtu would not fit one ring-0 buffer.
 */
int vmx_xdp_check_mtu(struct vmx_priv *vp, int mtu,
		      struct netlink_ext_ack *extack)
{
	return vmx_xdp_mtu_ok(vp->xdp_prog, mtu, extack);
}

/**
 * vmx_xdp_update_features() - advertise what XDP can do
 * @vp: device
 */
void vmx_xdp_update_features(struct vmx_priv *vp)
{
	u64 f = VMX_XDP_FEATURES;

	/* a zero-copy bind needs an XDP TX queue for every channel */
	if (vmx_xdp_queues(vp, vp->qs.nq) != vp->qs.nq)
		f &= ~(u64)VMX_XDP_ACT_XSK_ZEROCOPY;
	vmx_xdp_features_set(vp->netdev, f);
}

/*
 * Switch the RX buffers between the stack and the XDP layout: a new queue
 * set is allocated and swapped in, the old one keeps running if that fails.
 * A stopped device only records the layout for its next open.
 */
static int vmx_xdp_set_layout(struct vmx_priv *vp, bool xdp,
			      struct netlink_ext_ack *extack)
{
	struct vmx_qset want = vp->qs;

	if (vp->qs.xdp == xdp)
		return 0;
	want.xdp = xdp;
	return vmx_reconfigure(vp, &want, extack);
}

static int vmx_xdp_setup(struct vmx_priv *vp, struct bpf_prog *prog,
			 struct netlink_ext_ack *extack)
{
	struct net_device *nd = vp->netdev;
	struct bpf_prog *old;
	int err;

	err = vmx_xdp_mtu_ok(prog, nd->mtu, extack);
	if (err)
		return err;

	/* one program for another: the buffers are ready, swap the pointer */
	if (!vp->xdp_prog == !prog) {
		old = xchg(&vp->xdp_prog, prog);
		if (old)
			bpf_prog_put(old);
		return 0;
	}

	if (prog) {
		/* XDP-layout buffers first; the program only once they run */
		err = vmx_xdp_set_layout(vp, true, extack);
		if (err)
			return err;
		WRITE_ONCE(vp->xdp_prog, prog);
	} else {
		old = xchg(&vp->xdp_prog, NULL);
		bpf_prog_put(old);
		/*
		 * The detach itself cannot fail: if the stack layout cannot
		 * be set up the XDP one, which serves the stack as well, stays.
		 */
		if (vmx_xdp_set_layout(vp, false, NULL))
			netdev_warn(nd, "keeping the XDP buffer layout\n");
	}

	/* LRO merges frames behind the program's back: off while attached */
	if (prog && (nd->features & NETIF_F_LRO))
		NL_SET_ERR_MSG_MOD(extack,
				   "LRO disabled while an XDP program is attached");
	netdev_update_features(nd);
	return 0;
}

/* ---- AF_XDP zero-copy ---- */

/* The largest frame of @mtu the device may write into one buffer. */
/*
 * Do @pool's buffers (bound to channel @qid) hold a frame of @mtu? Logs
 * the refusal; 0 or -EINVAL.
 */
static int vmx_xsk_pool_fits(struct vmx_priv *vp, struct xsk_buff_pool *pool,
			     u32 qid, u32 mtu)
{
	u32 fs = xsk_pool_get_rx_frame_size(pool);
	u32 need = mtu + ETH_HLEN + VLAN_HLEN;

	if (fs >= need)
		return 0;
	netdev_err(vp->netdev,
		   "AF_XDP zero-copy on queue %u: buffers of %u bytes too small for MTU %u (needs %u)\n",
		   qid, fs, mtu, need);
	return -EINVAL;
}

/**
 * vmx_xsk_check_mtu() - do the bound AF_XDP pools take frames of @mtu?
 * @vp: device
 * @mtu: MTU to check
 *
 * Return: 0, or -EINVAL (logged) when a pool's buffers are too small.
 */
int vmx_xsk_check_mtu(struct vmx_priv *vp, u32 mtu)
{
	u32 q;
	int err;

	for (q = 0; q < ARRAY_SIZE(vp->xsk_pool) && vp->xsk_pools; q++) {
		if (!vp->xsk_pool[q])
			continue;
		err = vmx_xsk_pool_fits(vp, vp->xsk_pool[q], q, mtu);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Bind (@pool) or release (NULL) the zero-copy pool of channel @qid: the
 * queue set is rebuilt with ring 0 of that channel on the pool.
 */
static int vmx_xsk_pool_setup(struct vmx_priv *vp, struct xsk_buff_pool *pool,
			      u16 qid)
{
	struct net_device *nd = vp->netdev;
	struct xsk_buff_pool *old;
	struct vmx_qset want;
	int err;

	if (qid >= vp->qs.nq || qid >= ARRAY_SIZE(vp->xsk_pool)) {
		netdev_err(nd, "AF_XDP zero-copy: no queue %u (%u channels)\n",
			   qid, vp->qs.nq);
		return -EINVAL;
	}
	old = vp->xsk_pool[qid];
	if (pool) {
		if (old)
			return -EBUSY;
		err = vmx_xsk_pool_fits(vp, pool, qid, vp->qs.mtu);
		if (err)
			return err;
		if (vmx_xdp_queues(vp, vp->qs.nq) != vp->qs.nq) {
			netdev_err(nd,
				   "AF_XDP zero-copy needs an XDP TX queue per channel: the device takes %u TX queues, %u channels\n",
				   vp->max_tx_queues, vp->qs.nq);
			return -EOPNOTSUPP;
		}
		err = xsk_pool_dma_map(pool, &vp->pdev->dev, 0);
		if (err)
			return err;
	} else if (!old) {
		return 0;
	}

	vp->xsk_pool[qid] = pool;
	vp->xsk_pools += pool ? 1 : -1;
	want = vp->qs;
	err = vmx_reconfigure(vp, &want, NULL);
	/* a release cannot be refused: retry with smaller RX rings */
	while (err && !pool && vmx_qset_shrink(&want))
		err = vmx_reconfigure(vp, &want, NULL);
	if (err && pool) {
		vp->xsk_pool[qid] = old;
		vp->xsk_pools--;
		xsk_pool_dma_unmap(pool, 0);
		netdev_err(nd, "AF_XDP zero-copy on queue %u: rings not rebuilt (%d)\n",
			   qid, err);
		return err;
	}
	if (err) {
		/* the old rings hold the pool's buffers: stop using them */
		netdev_err(nd, "AF_XDP pool of queue %u released, rings not rebuilt (%d): closing the device\n",
			   qid, err);
		dev_close(nd);
	}
	if (!pool)
		xsk_pool_dma_unmap(old, 0);
	/* LRO is off while a pool is bound */
	netdev_update_features(nd);
	return 0;
}

/**
 * vmx_xsk_wakeup() - ndo_xsk_wakeup: run the channel's NAPI
 * @nd: device
 * @qid: channel
 * @flags: XDP_WAKEUP_RX / XDP_WAKEUP_TX (one NAPI does both)
 *
 * Return: 0, -ENETDOWN or -EINVAL.
 */
int vmx_xsk_wakeup(struct net_device *nd, u32 qid, u32 flags)
{
	struct vmx_priv *vp = netdev_priv(nd);
	struct napi_struct *napi;

	if (unlikely(!test_bit(VMX_S_UP, &vp->state) ||
		     !netif_carrier_ok(nd)))
		return -ENETDOWN;
	if (unlikely(qid >= ARRAY_SIZE(vp->xsk_pool) ||
		     !READ_ONCE(vp->xsk_pool[qid])))
		return -EINVAL;
	napi = &vp->qv[qid].napi;
	if (!napi_if_scheduled_mark_missed(napi)) {
		local_bh_disable();
		napi_schedule(napi);
		local_bh_enable();
	}
	return 0;
}

/*
 * A descriptor the device cannot send (empty, or too long: a length of 0
 * means 16 KiB to the device) is completed in its place in the order: with
 * the AF_XDP frame before it, if that one is still in flight (this batch's
 * previous slot, or the last one posted before), else at once.
 */
static void vmx_xsk_skip(struct vmx_txq *txq, u32 first)
{
	u32 inflight = vmx_ring_dist(txq->fill, txq->clean, txq->size);
	u32 t = txq->xsk_tail;

	vmx_txq_add(txq, VMX_TXS_XSK_BAD, 1);
	if (txq->fill != first)
		t = vmx_ring_prev(txq->fill, txq->size);
	else if (vmx_ring_dist(t, txq->clean, txq->size) >= inflight ||
		 txq->buf[t].type != VMX_TXB_XSK)
		t = txq->size;
	if (t < txq->size)
		txq->buf[t].xsk_extra++;
	else
		xsk_tx_completed(txq->xsk_pool, 1);
}

/**
 * vmx_xsk_xmit() - send from the AF_XDP TX ring of a zero-copy channel
 * @txq: the channel's XDP TX queue (has a pool)
 * @budget: most frames to send
 *
 * Return: frames taken from the TX ring.
 */
u32 vmx_xsk_xmit(struct vmx_txq *txq, u32 budget)
{
	struct xsk_buff_pool *pool = txq->xsk_pool;
	u32 first, gen, n = 0, sent = 0;
	struct xdp_desc d;
	dma_addr_t dma;

	spin_lock(&txq->xdp_lock);
	vmx_xdp_reclaim(txq);
	first = txq->fill;
	gen = txq->fill_gen;
	while (n < budget && vmx_tx_avail(txq) && xsk_tx_peek_desc(pool, &d)) {
		struct vmx_tx_buf *b = &txq->buf[txq->fill];
		struct vmx_tx_desc *desc = &txq->desc[txq->fill];

		n++;
		if (unlikely(!d.len || d.len >= VMX_TX_MAX_BUF)) {
			vmx_xsk_skip(txq, first);
			continue;
		}
		dma = xsk_buff_raw_get_dma(pool, d.addr);
		xsk_buff_raw_dma_sync_for_device(pool, dma, d.len);
		b->type = VMX_TXB_XSK;
		b->dma = dma;
		b->len = d.len;
		b->eop = true;
		desc->addr = cpu_to_le64(dma);
		desc->dw3 = cpu_to_le32(VMX_TXD_EOP | VMX_TXD_CQ);
		txq->xsk_tail = txq->fill;
		txq->fill = vmx_ring_next(txq->fill, txq->size, &txq->fill_gen);
		sent++;
	}
	if (n)
		xsk_tx_release(pool);
	if (sent) {
		vmx_tx_xdp_handover(txq, first, gen);
		vmx_tx_doorbell(txq);
		vmx_txq_add(txq, VMX_TXS_XSK_XMIT, sent);
		vmx_xdp_reclaim(txq);
	}
	if (xsk_uses_need_wakeup(pool))
		xsk_set_tx_need_wakeup(pool);
	spin_unlock(&txq->xdp_lock);
	return n;
}

/**
 * vmx_bpf() - ndo_bpf
 * @nd: device
 * @bpf: command
 *
 * Return: 0 or a negative errno.
 */
int vmx_bpf(struct net_device *nd, struct netdev_bpf *bpf)
{
	struct vmx_priv *vp = netdev_priv(nd);

	switch (bpf->command) {
	case XDP_SETUP_PROG:
		return vmx_xdp_setup(vp, bpf->prog, bpf->extack);
	case XDP_SETUP_XSK_POOL:
		return vmx_xsk_pool_setup(vp, bpf->xsk.pool, bpf->xsk.queue_id);
	default:
		return -EINVAL;
	}
}

#ifdef VMX_HAVE_XDP_META
/* The device's hash types, as XDP names them (vmx_defs.h VMX_RSS_*). */
static const enum xdp_rss_hash_type vmx_xdp_rss_type[] = {
	[VMX_RSS_IPV4]		= XDP_RSS_TYPE_L3_IPV4,
	[VMX_RSS_TCP_IPV4]	= XDP_RSS_TYPE_L4_IPV4_TCP,
	[VMX_RSS_IPV6]		= XDP_RSS_TYPE_L3_IPV6,
	[VMX_RSS_TCP_IPV6]	= XDP_RSS_TYPE_L4_IPV6_TCP,
	[VMX_RSS_UDP_IPV4]	= XDP_RSS_TYPE_L4_IPV4_UDP,
	[VMX_RSS_UDP_IPV6]	= XDP_RSS_TYPE_L4_IPV6_UDP,
};

/* bpf_xdp_metadata_rx_hash(): the hash the device put in the completion */
static int vmx_xdp_rx_hash(const struct xdp_md *ctx, u32 *hash,
			   enum xdp_rss_hash_type *rss_type)
{
	const struct vmx_xdp_buff *xb = (const void *)ctx;
	u32 dw0 = le32_to_cpu(xb->eop->dw[0]);
	u32 dw3 = le32_to_cpu(xb->eop->dw[3]);
	u32 t = FIELD_GET(VMX_RXC_RSS_TYPE, dw0);

	/* type-4 (LRO) completions carry no hash */
	if (t == VMX_RSS_NONE || FIELD_GET(VMX_RXC_TYPE, dw3) == VMX_RXC_TYPE_LRO)
		return -ENODATA;
	*hash = le32_to_cpu(xb->eop->dw[1]);
	*rss_type = t < ARRAY_SIZE(vmx_xdp_rss_type) ? vmx_xdp_rss_type[t] :
		    XDP_RSS_L4;
	return 0;
}

/* bpf_xdp_metadata_rx_vlan_tag(): the tag the device stripped */
static int vmx_xdp_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
			       u16 *vlan_tci)
{
	const struct vmx_xdp_buff *xb = (const void *)ctx;
	u32 dw2 = le32_to_cpu(xb->eop->dw[2]);

	if (!(dw2 & VMX_RXC_TS) ||
	    !(xb->xdp.rxq->dev->features & NETIF_F_HW_VLAN_CTAG_RX))
		return -ENODATA;
	*vlan_proto = htons(ETH_P_8021Q);
	*vlan_tci = FIELD_GET(VMX_RXC_TCI, dw2);
	return 0;
}

const struct xdp_metadata_ops vmx_xdp_metadata_ops = {
	.xmo_rx_hash		= vmx_xdp_rx_hash,
	.xmo_rx_vlan_tag	= vmx_xdp_rx_vlan_tag,
};
#endif
