// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: native XDP.
 *
 * While a program is attached every ring-0 buffer is a page_pool page with
 * XDP_PACKET_HEADROOM in front of the frame, mapped bidirectionally; the
 * first attach and the last detach switch the queue set to and from that
 * layout (allocate new, swap, roll back on failure), replacing a program is
 * a pointer swap. The RX poll reads the program once and runs it on
 * single-buffer frames from ring 0 and the RX data ring.
 *
 * XDP_TX frames are collected during the poll and posted as one batch with
 * one doorbell. They go to a TX queue reserved for XDP (one per RX queue,
 * after the stack's queues) when the device has room for it; otherwise
 * they share the stack's TX queue under its lock. ndo_xdp_xmit uses the
 * same queues; each XDP queue has a lock because redirects from other CPUs
 * may pick it while its own NAPI sends XDP_TX frames.
 *
 * A dedicated XDP queue is reclaimed by its senders, under that lock, right
 * after each doorbell. QEMU's device sends synchronously on the doorbell,
 * so nothing is left in flight there and the queues' own interrupt vector
 * (xdp_vec) stays masked: no completion interrupt, no extra poll per batch.
 * A device that completes later leaves frames in flight; the sender then
 * unmasks the vector and its interrupt has the NAPIs finish the job.
 */
#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <net/xdp.h>

#include "vmx.h"

#define VMX_XDP_FLAG_TX		BIT(0)
#define VMX_XDP_FLAG_REDIRECT	BIT(1)

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
	sent = vmx_tx_xdp_post(xtxq, rxq->xdp_tx, n, true);
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
 * vmx_xdp_run() - run the program on one frame and carry out its verdict
 * @rxq: receiving queue
 * @prog: program, read once for this poll
 * @xdp: the frame, in a page_pool page of @rxq
 * @xtxq: TX queue for XDP_TX
 * @xdp_flags: accumulates what vmx_xdp_poll_done() must finish
 *
 * On any verdict but XDP_PASS the page is consumed.
 *
 * Return: the verdict.
 */
u32 vmx_xdp_run(struct vmx_rxq *rxq, struct bpf_prog *prog,
		struct xdp_buff *xdp, struct vmx_txq *xtxq, u32 *xdp_flags)
{
	struct net_device *nd = rxq->vp->netdev;
	enum vmx_rxq_stat st;
	struct xdp_frame *f;
	u32 act;

	act = bpf_prog_run_xdp(prog, xdp);
	switch (act) {
	case XDP_PASS:
		st = VMX_RXS_XDP_PASS;
		break;
	case XDP_TX:
		f = xdp_convert_buff_to_frame(xdp);
		if (unlikely(!f)) {
			st = VMX_RXS_XDP_TX_ERR;
			goto drop;
		}
		if (rxq->xdp_tx_n == VMX_XDP_TX_BATCH)
			vmx_xdp_tx_flush(rxq, xtxq);
		rxq->xdp_tx[rxq->xdp_tx_n++] = f;
		*xdp_flags |= VMX_XDP_FLAG_TX;
		vmx_rxq_add(rxq, VMX_RXS_XDP_PACKETS, 1);
		/* counted as sent (or failed) when the batch goes out */
		return act;
	case XDP_REDIRECT:
		if (unlikely(xdp_do_redirect(nd, xdp, prog))) {
			st = VMX_RXS_XDP_REDIRECT_ERR;
			goto drop;
		}
		*xdp_flags |= VMX_XDP_FLAG_REDIRECT;
		st = VMX_RXS_XDP_REDIRECT;
		break;
	default:
		bpf_warn_invalid_xdp_action(nd, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(nd, prog, act);
		st = VMX_RXS_XDP_ABORTED;
		goto drop;
	case XDP_DROP:
		st = VMX_RXS_XDP_DROP;
		goto drop;
	}
	goto count;

drop:
	page_pool_recycle_direct(rxq->ring[0].pp,
				 virt_to_page(xdp->data_hard_start));
	if (act == XDP_PASS)	/* cannot happen; keeps the compiler calm */
		act = XDP_DROP;
count:
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[VMX_RXS_XDP_PACKETS]++;
	rxq->stats.s[st]++;
	u64_stats_update_end(&rxq->stats.syncp);
	return act;
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
	int sent, i;

	if (unlikely(flags & ~XDP_XMIT_FLAGS_MASK))
		return -EINVAL;
	if (unlikely(!test_bit(VMX_S_UP, &vp->state) ||
		     !netif_carrier_ok(nd)))
		return -ENETDOWN;

	for (i = 0; i < n; i++)
		if (unlikely(xdp_frame_has_frags(frames[i])))
			break;
	txq = vmx_xdp_txq(vp, smp_processor_id());
	vmx_xdp_lock(txq);
	if (vmx_tx_avail(txq) < i)
		vmx_xdp_reclaim(txq);
	sent = vmx_tx_xdp_post(txq, frames, i, false);
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

/**
 * vmx_xdp_check_mtu() - can frames of this MTU run through XDP?
 * @vp: device
 * @mtu: MTU to check
 * @extack: for the refusal, may be NULL
 *
 * Return: 0, or -EINVAL when a program is attached and frames of @mtu
 * would not fit one ring-0 buffer.
 */
int vmx_xdp_check_mtu(struct vmx_priv *vp, int mtu,
		      struct netlink_ext_ack *extack)
{
	if (!vp->xdp_prog || mtu <= VMX_XDP_MAX_MTU)
		return 0;
	vmx_extack_fmt(extack, "MTU too large for XDP (one buffer per frame)",
		       "MTU %d too large for XDP: at most %lu (one buffer per frame)",
		       mtu, (unsigned long)VMX_XDP_MAX_MTU);
	return -EINVAL;
}

/**
 * vmx_xdp_update_features() - advertise what XDP can do
 * @vp: device
 */
void vmx_xdp_update_features(struct vmx_priv *vp)
{
	vmx_xdp_features_set(vp->netdev, VMX_XDP_FEATURES);
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

	if (prog && prog->aux->xdp_has_frags) {
		NL_SET_ERR_MSG_MOD(extack,
				   "multi-buffer (frags) XDP programs are not supported");
		return -EOPNOTSUPP;
	}
	if (prog && nd->mtu > VMX_XDP_MAX_MTU) {
		vmx_extack_fmt(extack, "MTU too large for XDP (one buffer per frame)",
			       "MTU %u too large for XDP: at most %lu (one buffer per frame)",
			       nd->mtu, (unsigned long)VMX_XDP_MAX_MTU);
		return -EINVAL;
	}

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
	default:
		return -EINVAL;
	}
}
