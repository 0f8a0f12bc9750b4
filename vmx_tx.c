// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: transmit path.
 *
 * Split-header transmit: the headers (or a whole small frame) are copied
 * into the TX data ring entry paired with the start-of-packet descriptor;
 * the rest of the frame is DMA-mapped in place. Offloads (checksum, TSO,
 * VLAN insertion) are described in the start-of-packet descriptor, whose
 * generation bit is flipped last so the device sees the whole chain at once.
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip6_checksum.h>
#include <net/tso.h>

#include "vmx.h"

/**
 * vmx_txq_alloc() - allocate the rings of a TX queue
 * @vp: device
 * @txq: queue to fill in (zeroed by the caller)
 * @qid: device queue index
 * @qs: queue set giving the ring size
 *
 * Return: 0 or a negative errno; on error everything is released.
 */
int vmx_txq_alloc(struct vmx_priv *vp, struct vmx_txq *txq, u16 qid,
		  const struct vmx_qset *qs)
{
	struct device *dev = &vp->pdev->dev;

	txq->vp = vp;
	txq->qid = qid;
	txq->size = qs->tx_size;
	txq->data_desc_size = vp->txdata_size;
	txq->xdp = qid >= qs->nq;
	/* AF_XDP zero-copy sends on the XDP queue of its channel */
	if (txq->xdp && qs->nxdp == qs->nq)
		txq->xsk_pool = vp->xsk_pool[qid - qs->nq];
	spin_lock_init(&txq->xdp_lock);
	u64_stats_init(&txq->stats.syncp);
	u64_stats_init(&txq->cstats.syncp);

	txq->desc = dma_alloc_coherent(dev, txq->size * sizeof(*txq->desc),
				       &txq->desc_pa, GFP_KERNEL);
	txq->comp = dma_alloc_coherent(dev, txq->size * sizeof(*txq->comp),
				       &txq->comp_pa, GFP_KERNEL);
	txq->data_ring = dma_alloc_coherent(dev,
					    txq->size * txq->data_desc_size,
					    &txq->data_ring_pa, GFP_KERNEL);
	txq->buf = kcalloc(txq->size, sizeof(*txq->buf), GFP_KERNEL);
	if (!txq->desc || !txq->comp || !txq->data_ring || !txq->buf) {
		vmx_txq_free(txq);
		return -ENOMEM;
	}
	return 0;
}

/**
 * vmx_txq_free() - release the rings of a drained TX queue
 * @txq: queue
 */
void vmx_txq_free(struct vmx_txq *txq)
{
	struct device *dev = &txq->vp->pdev->dev;

	kfree(txq->buf);
	txq->buf = NULL;
	if (txq->data_ring)
		dma_free_coherent(dev, txq->size * txq->data_desc_size,
				  txq->data_ring, txq->data_ring_pa);
	if (txq->comp)
		dma_free_coherent(dev, txq->size * sizeof(*txq->comp),
				  txq->comp, txq->comp_pa);
	if (txq->desc)
		dma_free_coherent(dev, txq->size * sizeof(*txq->desc),
				  txq->desc, txq->desc_pa);
	txq->data_ring = NULL;
	txq->comp = NULL;
	txq->desc = NULL;
}

/**
 * vmx_txq_start() - reset the rings to the state ACTIVATE expects
 * @txq: queue, not yet known to the device
 */
void vmx_txq_start(struct vmx_txq *txq)
{
	memset(txq->desc, 0, txq->size * sizeof(*txq->desc));
	memset(txq->comp, 0, txq->size * sizeof(*txq->comp));
	txq->fill = 0;
	txq->posted = 0;
	txq->clean = 0;
	txq->bad = false;
	txq->fill_gen = 1;
	txq->comp_next = 0;
	txq->comp_gen = 1;
	txq->deferred = 0;
	txq->kicked = 0;
	txq->nq = NULL;
	if (!txq->xdp) {
		txq->nq = netdev_get_tx_queue(txq->vp->netdev, txq->qid);
		netdev_tx_reset_queue(txq->nq);
	}
}

/**
 * vmx_txq_write_desc() - describe the queue in the queue descriptor table
 * @txq: queue
 * @d: its TX queue descriptor
 * @intr_idx: interrupt vector for its completions
 */
void vmx_txq_write_desc(struct vmx_txq *txq, struct vmx_txq_desc *d,
			u8 intr_idx)
{
	memset(d, 0, sizeof(*d));
	d->ring_pa = cpu_to_le64(txq->desc_pa);
	d->data_ring_pa = cpu_to_le64(txq->data_ring_pa);
	d->comp_ring_pa = cpu_to_le64(txq->comp_pa);
	d->dd_pa = cpu_to_le64(~0ULL);
	d->ring_size = cpu_to_le32(txq->size);
	d->data_ring_size = cpu_to_le32(txq->size);
	d->comp_ring_size = cpu_to_le32(txq->size);
	d->intr_idx = intr_idx;
	if (txq->vp->rev >= 3)
		d->data_desc_size = cpu_to_le16(txq->data_desc_size);
}

/**
 * vmx_tx_avail() - free descriptors, keeping one slot empty
 * @txq: queue
 *
 * Return: descriptors a new packet may use.
 */
u32 vmx_tx_avail(const struct vmx_txq *txq)
{
	return txq->size - 1 - vmx_ring_dist(txq->fill, txq->clean, txq->size);
}

static u32 vmx_tx_wake_thresh(const struct vmx_txq *txq)
{
	return clamp_t(u32, (txq->size - 1) / 2, VMX_TX_MAX_DESC_TSO,
		       VMX_TX_WAKE_THRESH);
}

/**
 * vmx_tx_doorbell() - tell the device about everything posted so far
 * @txq: queue
 */
void vmx_tx_doorbell(struct vmx_txq *txq)
{
	struct vmx_txq_desc *qd = vmx_txq_desc(txq->vp, txq->qid);

	WRITE_ONCE(qd->num_deferred, 0);
	txq->deferred = 0;
	txq->kicked = txq->fill;
	/* writel orders the descriptor writes before the MMIO write */
	vmx_db_txprod(txq->vp, txq->qid, txq->fill);
	vmx_txq_add(txq, VMX_TXS_DOORBELL, 1);
}

/*
 * Everything up to txq->fill is complete and about to change hands: from
 * now on a completion for it is accepted. Published just before the
 * generation flips, since a device that does not wait for the doorbell may
 * complete right after the flip; never for a packet still being built or
 * unwound.
 */
static void vmx_tx_handover(struct vmx_txq *txq)
{
	/* pairs with the acquire in __vmx_tx_clean() */
	smp_store_release(&txq->posted, txq->fill);
}

/*
 * Account @pkts wire packets as posted. Returns true when the device's
 * threshold asks for a doorbell now.
 */
static bool vmx_tx_defer(struct vmx_txq *txq, u32 pkts, u32 limit)
{
	struct vmx_txq_desc *qd = vmx_txq_desc(txq->vp, txq->qid);
	u32 thr = max_t(u32, le32_to_cpu(READ_ONCE(qd->threshold)), 1);
	u32 n = le32_to_cpu(READ_ONCE(qd->num_deferred)) + pkts;

	WRITE_ONCE(qd->num_deferred, cpu_to_le32(n));
	txq->deferred += pkts;
	return n >= max(thr, limit);
}

static __always_inline void vmx_tx_unmap(struct vmx_txq *txq,
					 struct vmx_tx_buf *b)
{
	struct device *dev = &txq->vp->pdev->dev;

	switch (b->type) {
	case VMX_TXB_SKB_HEAD:
	case VMX_TXB_XDP_XMIT:
		dma_unmap_single(dev, b->dma, b->len, DMA_TO_DEVICE);
		break;
	case VMX_TXB_SKB_FRAG:
	case VMX_TXB_XDP_XMIT_FRAG:
		dma_unmap_page(dev, b->dma, b->len, DMA_TO_DEVICE);
		break;
	default:
		break;
	}
}

struct vmx_tx_done {
	u32 pkts;		/* skbs, reported to BQL */
	u32 bytes;
	u32 wire;		/* their packets on the wire (TSO segments) */
	u32 xdp_pkts;		/* XDP frames, counted on completion */
	u32 xdp_bytes;
	u32 xsk;		/* AF_XDP descriptors to complete */
	struct xdp_frame_bulk bq;
};

static bool vmx_tx_buf_is_xdp(const struct vmx_tx_buf *b)
{
	return b->type == VMX_TXB_XDP_TX || b->type == VMX_TXB_XDP_XMIT ||
	       b->type == VMX_TXB_XDP_XMIT_FRAG || b->type == VMX_TXB_XSK;
}

/*
 * Release descriptor slots [txq->clean, end] of completed packets. Inlined
 * in the completion loop (once per packet).
 */
static __always_inline void vmx_tx_release(struct vmx_txq *txq, u32 end,
					   int budget,
					   struct vmx_tx_done *done)
{
	for (;;) {
		struct vmx_tx_buf *b = &txq->buf[txq->clean];
		u32 idx = txq->clean;

		vmx_tx_unmap(txq, b);
		if (b->type == VMX_TXB_XSK) {
			done->xdp_pkts++;
			done->xdp_bytes += b->len;
			done->xsk += 1 + b->xsk_extra;
		} else if (b->eop) {
			if (vmx_tx_buf_is_xdp(b)) {
				done->xdp_pkts++;
				done->xdp_bytes += xdp_get_frame_len(b->xdpf);
				xdp_return_frame_bulk(b->xdpf, &done->bq);
			} else if (b->skb) {
				done->pkts++;
				done->bytes += b->skb->len;
				done->wire += skb_is_gso(b->skb) ?
					      skb_shinfo(b->skb)->gso_segs : 1;
				napi_consume_skb(b->skb, budget);
			}
		}
		memset(b, 0, sizeof(*b));
		txq->clean = vmx_ring_after(idx, txq->size);
		if (idx == end)
			break;
	}
}

/*
 * netpoll: release the packets of [txq->clean, @end] up to the first XDP
 * frame, if there is one (then true: the completion is left for NAPI).
 */
static bool vmx_tx_netpoll_stop(struct vmx_txq *txq, u32 end,
				struct vmx_tx_done *done)
{
	u32 i = txq->clean;

	for (;;) {
		if (vmx_tx_buf_is_xdp(&txq->buf[i]))
			break;
		if (i == end)
			return false;
		i = vmx_ring_after(i, txq->size);
	}
	/* the slot before an XDP frame ends the packet before it */
	if (i != txq->clean)
		vmx_tx_release(txq, i ? i - 1 : txq->size - 1, 0, done);
	return true;
}

/*
 * A completion that makes no sense: stop reclaiming this queue (its poll
 * no longer sees work) until the reset work has restarted the device.
 */
static void vmx_tx_bad(struct vmx_txq *txq, u32 idx, u32 posted)
{
	vmx_txq_cadd(txq, VMX_TXS_BAD_DESC, 1);
	if (!txq->bad && net_ratelimit())
		netdev_err(txq->vp->netdev,
			   "txq %u: completion for index %u outside [%u, %u), resetting\n",
			   txq->qid, idx, txq->clean, posted);
	txq->bad = true;
	vmx_schedule_reset(txq->vp);
}

/**
 * __vmx_tx_clean() - reclaim completed descriptors and wake the queue
 * @txq: queue with a completion waiting (vmx_tx_clean() checks)
 * @budget: NAPI budget; 0 outside NAPI (XDP senders, netpoll)
 * @netpoll: called by netpoll: skb completions only, no XDP frames
 *
 * Only descriptors handed over to the device are accepted as completed;
 * anything else is a bad completion.
 *
 * Return: packets completed.
 */
int __vmx_tx_clean(struct vmx_txq *txq, int budget, bool netpoll)
{
	/* not "= { }": that zeroed the bulk queue's 16 pointers on every call */
	struct vmx_tx_done done __uninitialized;
	u32 inflight, idx, dist, posted;

	done.pkts = 0;
	done.bytes = 0;
	done.wire = 0;
	done.xdp_pkts = 0;
	done.xdp_bytes = 0;
	done.xsk = 0;
	xdp_frame_bulk_init(&done.bq);
	/* before 6.13 the init leaves count to the first return; read below */
	done.bq.count = 0;
	rcu_read_lock();	/* xdp_return_frame_bulk() */
	for (;;) {
		struct vmx_tx_comp *tc = &txq->comp[txq->comp_next];
		u32 dw3 = le32_to_cpu(READ_ONCE(tc->dw[3]));

		if (!!(dw3 & VMX_TXC_GEN) != txq->comp_gen)
			break;
		dma_rmb();
		idx = FIELD_GET(VMX_TXC_IDX, le32_to_cpu(READ_ONCE(tc->dw[0])));
		/*
		 * Read after the completion: the sender published it before
		 * handing it over. Pairs with vmx_tx_handover(): buf[] of
		 * what it published is set.
		 */
		posted = smp_load_acquire(&txq->posted);
		inflight = vmx_ring_dist(posted, txq->clean, txq->size);
		dist = vmx_ring_dist(idx, txq->clean, txq->size);
		if (idx >= txq->size || dist >= inflight ||
		    !txq->buf[idx].eop) {
			vmx_tx_bad(txq, idx, posted);
			break;
		}
		/*
		 * netpoll may not free XDP frames: their NAPI will. One
		 * completion may end several packets: the skbs before the
		 * first XDP frame go now, the completion stays for NAPI.
		 */
		if (unlikely(netpoll) && vmx_tx_netpoll_stop(txq, idx, &done))
			break;
		vmx_tx_release(txq, idx, budget, &done);
		txq->comp_next = vmx_ring_next(txq->comp_next, txq->size,
					       &txq->comp_gen);
	}
	/* none queued: netpoll's budget-0 polls never reach XDP returns */
	if (done.bq.count)
		xdp_flush_frame_bulk(&done.bq);
	rcu_read_unlock();
	if (done.xsk)
		xsk_tx_completed(txq->xsk_pool, done.xsk);
	/* sent is what the device completed: a frame dropped at a reset is not */
	if (done.xdp_pkts || done.pkts) {
		u64_stats_update_begin(&txq->cstats.syncp);
		txq->cstats.s[VMX_TXS_PACKETS] += done.xdp_pkts + done.wire;
		txq->cstats.s[VMX_TXS_BYTES] += done.xdp_bytes + done.bytes;
		u64_stats_update_end(&txq->cstats.syncp);
	}
	if (!txq->nq)
		return done.xdp_pkts;

	netdev_tx_completed_queue(txq->nq, done.pkts, done.bytes);
	/* pairs with the barrier in vmx_tx_maybe_stop() */
	smp_mb();
	if (unlikely(netif_tx_queue_stopped(txq->nq)) &&
	    vmx_tx_avail(txq) >= vmx_tx_wake_thresh(txq) &&
	    netif_carrier_ok(txq->vp->netdev) &&
	    !test_bit(VMX_S_STOPPING, &txq->vp->state)) {
		netif_tx_wake_queue(txq->nq);
		vmx_txq_cadd(txq, VMX_TXS_WAKE, 1);
	}
	return done.pkts + done.xdp_pkts;
}

/**
 * vmx_txq_drain() - drop everything still queued after the device stopped
 * @txq: queue
 *
 * What the device never sent is counted as dropped (txN_drop, tx_dropped).
 */
void vmx_txq_drain(struct vmx_txq *txq)
{
	struct vmx_tx_done done = { };

	xdp_frame_bulk_init(&done.bq);
	rcu_read_lock();	/* xdp_return_frame_bulk needs it */
	while (txq->clean != txq->fill)
		vmx_tx_release(txq, txq->clean, 0, &done);
	if (done.bq.count)
		xdp_flush_frame_bulk(&done.bq);
	rcu_read_unlock();
	if (done.pkts + done.xdp_pkts)
		vmx_txq_add(txq, VMX_TXS_DROP, done.pkts + done.xdp_pkts);
	/* the application gets its buffers back: nothing was sent */
	if (done.xsk)
		xsk_tx_completed(txq->xsk_pool, done.xsk);
	if (txq->nq)
		netdev_tx_reset_queue(txq->nq);
}

struct vmx_tx_plan {
	u32 copy;	/* bytes copied into the data ring */
	u32 hlen;
	u32 msscof;
	u32 om;
	u32 dw2;	/* VMX_TXD_OCO, VMX_TXD_EXT1 */
	u32 ndesc;
	u32 pkts;	/* wire packets */
	bool tso;
	bool tunnel;	/* the offload is of a tunnel's inner headers */
};

static u32 vmx_chunks(u32 len)
{
	return DIV_ROUND_UP(len, VMX_TX_MAX_BUF);
}

/* Descriptors needed for the bytes of @skb from offset @off on. */
static u32 vmx_tx_count(const struct sk_buff *skb, u32 off)
{
	u32 head = skb_headlen(skb), pos = head, n = 0, i;

	if (off < head)
		n += vmx_chunks(head - off);
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		u32 sz = skb_frag_size(&skb_shinfo(skb)->frags[i]);

		if (off < pos + sz)
			n += vmx_chunks(pos + sz - max(off, pos));
		pos += sz;
	}
	return n;
}

/*
 * Is the offload @skb asks for (TSO, or the checksum) one of a UDP
 * tunnel's inner headers? vmx_features_check() let it through only for a
 * tunnel the device offloads.
 */
static bool vmx_tx_inner(const struct sk_buff *skb)
{
	if (!skb->encapsulation)
		return false;
	if (skb_is_gso(skb))
		return skb_shinfo(skb)->gso_type &
		       (SKB_GSO_UDP_TUNNEL | SKB_GSO_UDP_TUNNEL_CSUM);
	return skb->ip_summed == CHECKSUM_PARTIAL &&
	       skb_checksum_start(skb) == skb_inner_transport_header(skb);
}

/*
 * Geneve/VXLAN (rev 4+): hlen covers the headers up to the end of the
 * inner TCP header; revisions 4..6 say "tunnel" with offload mode 1 and
 * tell TSO (msscof = MSS) from the checksum (msscof = 0), from revision 7
 * mode 3 or 2 with ext1 (msscof = MSS or the inner checksum field). oco
 * asks for the outer UDP checksum of every segment.
 */
static void vmx_tx_plan_tunnel(struct vmx_txq *txq, struct sk_buff *skb,
			       struct vmx_tx_plan *p)
{
	bool rev7 = txq->vp->rev >= 7;

	p->tunnel = true;
	p->hlen = skb_inner_tcp_all_headers(skb);
	if (rev7)
		p->dw2 = VMX_TXD_EXT1;
	if (skb_is_gso(skb)) {
		p->tso = true;
		p->om = rev7 ? VMX_OM_TSO : VMX_OM_ENCAP;
		p->msscof = skb_shinfo(skb)->gso_size;
		p->pkts = skb_shinfo(skb)->gso_segs;
		if (skb_shinfo(skb)->gso_type & SKB_GSO_UDP_TUNNEL_CSUM)
			p->dw2 |= VMX_TXD_OCO;
		p->copy = p->hlen;
	} else {
		p->om = rev7 ? VMX_OM_CSUM : VMX_OM_ENCAP;
		p->msscof = rev7 ? skb_checksum_start_offset(skb) +
				   skb->csum_offset : 0;
		p->copy = min_t(u32, skb_headlen(skb), txq->data_desc_size);
		p->copy = max(p->copy, p->hlen);
	}
}

static int vmx_tx_plan(struct vmx_txq *txq, struct sk_buff *skb,
		       struct vmx_tx_plan *p)
{
	u32 dsz = txq->data_desc_size, max = VMX_TX_MAX_DESC_NONTSO;

	memset(p, 0, sizeof(*p));
	p->pkts = 1;
	if (vmx_tx_inner(skb)) {
		vmx_tx_plan_tunnel(txq, skb, p);
		if (p->tso)
			max = VMX_TX_MAX_DESC_TSO;
	} else if (skb_is_gso(skb)) {
		p->om = VMX_OM_TSO;
		p->tso = true;
		p->hlen = skb_tcp_all_headers(skb);
		p->msscof = skb_shinfo(skb)->gso_size;
		p->pkts = skb_shinfo(skb)->gso_segs;
		p->copy = p->hlen;
		max = VMX_TX_MAX_DESC_TSO;
	} else if (skb->ip_summed == CHECKSUM_PARTIAL) {
		p->om = VMX_OM_CSUM;
		p->hlen = skb_checksum_start_offset(skb);
		p->msscof = p->hlen + skb->csum_offset;
		p->copy = min_t(u32, skb_headlen(skb), dsz);
		p->copy = max(p->copy, p->msscof + 2);
	} else {
		p->copy = min_t(u32, skb_headlen(skb), dsz);
	}
	if (skb->len <= dsz)
		p->copy = skb->len;
	/* no linear data: the SOP still carries bytes (length 0 means 16 KiB) */
	if (!p->copy)
		p->copy = min_t(u32, skb->len, dsz);
	/* features_check keeps offloaded headers inside one entry */
	if (WARN_ON_ONCE(p->copy > dsz))
		return -EINVAL;

	/* a frame copied whole into the data ring needs its SOP only */
	p->ndesc = 1;
	if (p->copy == skb->len)
		return 0;
	p->ndesc += vmx_tx_count(skb, p->copy);
	if (p->ndesc > max) {
		if (skb_linearize(skb))
			return -ENOMEM;
		vmx_txq_add(txq, VMX_TXS_LINEARIZE, 1);
		p->ndesc = 1 + vmx_tx_count(skb, p->copy);
	}
	return 0;
}

/*
 * The device expects TSO headers with pseudo-header sums of length 0: in
 * the copy @hdr of the headers, the IP header at @l3 (IPv4 if @v4), the TCP
 * header at @l4.
 */
static void vmx_tx_seed(u8 *hdr, u32 l3, u32 l4, bool v4)
{
	struct tcphdr *th = (struct tcphdr *)(hdr + l4);

	if (v4) {
		struct iphdr *iph = (struct iphdr *)(hdr + l3);

		iph->check = 0;
		th->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, 0,
					       IPPROTO_TCP, 0);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(hdr + l3);

		th->check = ~csum_ipv6_magic(&ip6->saddr, &ip6->daddr, 0,
					     IPPROTO_TCP, 0);
	}
}

/* Plain TSO seeds its TCP header, tunnel TSO the inner one. */
static void vmx_tx_seed_tso(struct sk_buff *skb, u8 *hdr, bool tunnel)
{
	if (tunnel)
		vmx_tx_seed(hdr, skb_inner_network_offset(skb),
			    skb_inner_transport_offset(skb),
			    inner_ip_hdr(skb)->version == 4);
	else
		vmx_tx_seed(hdr, skb_network_offset(skb),
			    skb_transport_offset(skb),
			    skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4);
}

static void vmx_tx_desc(struct vmx_txq *txq, u32 idx, dma_addr_t dma,
			u32 len, u32 gen)
{
	struct vmx_tx_desc *d = &txq->desc[idx];

	d->addr = cpu_to_le64(dma);
	d->dw2 = cpu_to_le32(FIELD_PREP(VMX_TXD_LEN, len & (VMX_TX_MAX_BUF - 1)) |
			     (gen ? VMX_TXD_GEN : 0));
	d->dw3 = 0;
}

/* Map @len bytes at @dma-able source into 16 KiB descriptors. */
static int vmx_tx_map_one(struct vmx_txq *txq, struct sk_buff *skb,
			  const skb_frag_t *frag, u32 off, u32 len)
{
	struct device *dev = &txq->vp->pdev->dev;
	struct vmx_tx_buf *b = &txq->buf[txq->fill];
	dma_addr_t dma;
	u32 n;

	if (frag)
		dma = skb_frag_dma_map(dev, frag, off, len, DMA_TO_DEVICE);
	else
		dma = dma_map_single(dev, skb->data + off, len, DMA_TO_DEVICE);
	if (unlikely(dma_mapping_error(dev, dma)))
		return -ENOMEM;

	/* the first slot owns the mapping; the others only carry data */
	b->type = frag ? VMX_TXB_SKB_FRAG : VMX_TXB_SKB_HEAD;
	b->dma = dma;
	b->len = len;
	while (len) {
		n = min_t(u32, len, VMX_TX_MAX_BUF);
		vmx_tx_desc(txq, txq->fill, dma, n, txq->fill_gen);
		txq->fill = vmx_ring_next(txq->fill, txq->size, &txq->fill_gen);
		dma += n;
		len -= n;
	}
	return 0;
}

static int vmx_tx_map(struct vmx_txq *txq, struct sk_buff *skb, u32 off)
{
	u32 head = skb_headlen(skb), pos = head, i;
	int err;

	if (off < head) {
		err = vmx_tx_map_one(txq, skb, NULL, off, head - off);
		if (err)
			return err;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];
		u32 sz = skb_frag_size(f);

		if (off < pos + sz) {
			u32 start = off > pos ? off - pos : 0;

			err = vmx_tx_map_one(txq, skb, f, start, sz - start);
			if (err)
				return err;
		}
		pos += sz;
	}
	return 0;
}

/*
 * Undo a partly mapped packet: slots from @sop to txq->fill. The slots
 * after the SOP were written with the valid generation as they were
 * mapped; each goes back to the driver's generation with no address, so
 * that a later, shorter packet reusing the SOP cannot let the device run
 * on into them.
 */
static void vmx_tx_unwind(struct vmx_txq *txq, u32 sop, u32 sop_gen)
{
	u32 idx = sop, gen = sop_gen;

	while (idx != txq->fill) {
		vmx_tx_unmap(txq, &txq->buf[idx]);
		memset(&txq->buf[idx], 0, sizeof(txq->buf[0]));
		vmx_tx_desc(txq, idx, 0, 0, !gen);
		idx = vmx_ring_next(idx, txq->size, &gen);
	}
	txq->fill = sop;
	txq->fill_gen = sop_gen;
}

/*
 * Not enough room for a packet of @ndesc descriptors: stop the queue, then
 * look again (a completion may have freed room in between and missed the
 * stop). Returns true when the caller must answer NETDEV_TX_BUSY.
 */
static bool vmx_tx_busy(struct vmx_txq *txq, u32 ndesc)
{
	netif_tx_stop_queue(txq->nq);
	vmx_txq_add(txq, VMX_TXS_STOP, 1);
	/* pairs with the barrier in __vmx_tx_clean() */
	smp_mb();
	if (vmx_tx_avail(txq) >= ndesc) {
		netif_tx_start_queue(txq->nq);
		vmx_txq_add(txq, VMX_TXS_WAKE, 1);
		return false;
	}
	/* deferred packets must reach the device or nothing completes */
	if (txq->kicked != txq->fill)
		vmx_tx_doorbell(txq);
	return true;
}

static void vmx_tx_maybe_stop(struct vmx_txq *txq)
{
	if (likely(vmx_tx_avail(txq) > VMX_TX_MAX_DESC_TSO))
		return;
	netif_tx_stop_queue(txq->nq);
	vmx_txq_add(txq, VMX_TXS_STOP, 1);
	/* pairs with the barrier in __vmx_tx_clean() */
	smp_mb();
	if (vmx_tx_avail(txq) >= vmx_tx_wake_thresh(txq)) {
		netif_tx_start_queue(txq->nq);
		vmx_txq_add(txq, VMX_TXS_WAKE, 1);
	}
}

/*
 * The pieces of a TSO packet could not be DMA-mapped (a bounce pool too
 * full or fragmented for them): send it segmented in software, each
 * segment needing only an MTU's worth of mapping, rather than drop it and
 * have TCP retransmit the same unmappable packet again and again.
 */
static netdev_tx_t vmx_tx_gso_fallback(struct vmx_txq *txq,
				       struct sk_buff *skb,
				       struct net_device *netdev)
{
	struct sk_buff *segs, *seg, *next;

	segs = skb_gso_segment(skb, netdev->features & ~NETIF_F_GSO_MASK);
	if (IS_ERR_OR_NULL(segs)) {
		vmx_txq_add(txq, VMX_TXS_DROP, 1);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		/* not GSO any more: no second fallback */
		if (vmx_start_xmit(seg, netdev) == NETDEV_TX_BUSY) {
			vmx_txq_add(txq, VMX_TXS_DROP, 1);
			dev_kfree_skb_any(seg);
		}
	}
	return NETDEV_TX_OK;
}

/**
 * vmx_start_xmit() - ndo_start_xmit
 * @skb: frame
 * @netdev: device
 *
 * Return: NETDEV_TX_OK, or NETDEV_TX_BUSY if the ring is unexpectedly full.
 */
netdev_tx_t vmx_start_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct vmx_priv *vp = netdev_priv(netdev);
	struct vmx_txq *txq = &vp->qs.txq[skb_get_queue_mapping(skb)];
	u32 sop, sop_gen, last, dw2, dw3, len = skb->len;
	struct vmx_tx_plan p;
	struct vmx_tx_desc *d;
	bool kick;
	u8 *hdr;

	if (vmx_tx_plan(txq, skb, &p))
		goto drop;
	if (unlikely(vmx_tx_avail(txq) < p.ndesc) && vmx_tx_busy(txq, p.ndesc))
		return NETDEV_TX_BUSY;

	sop = txq->fill;
	sop_gen = txq->fill_gen;
	hdr = txq->data_ring + sop * txq->data_desc_size;
	/* the usual case, all of it in the linear part, without the walk */
	if (likely(p.copy <= skb_headlen(skb)))
		memcpy(hdr, skb->data, p.copy);
	else if (skb_copy_bits(skb, 0, hdr, p.copy))
		goto drop;
	if (p.tso)
		vmx_tx_seed_tso(skb, hdr, p.tunnel);

	/* SOP points into the data ring; its generation is still invalid */
	vmx_tx_desc(txq, sop, txq->data_ring_pa + sop * txq->data_desc_size,
		    p.copy, !sop_gen);
	txq->fill = vmx_ring_next(txq->fill, txq->size, &txq->fill_gen);
	if (vmx_tx_map(txq, skb, p.copy)) {
		vmx_tx_unwind(txq, sop, sop_gen);
		vmx_txq_add(txq, VMX_TXS_MAP_ERR, 1);
		if (skb_is_gso(skb))
			return vmx_tx_gso_fallback(txq, skb, netdev);
		goto drop;
	}

	last = vmx_ring_prev(txq->fill, txq->size);
	txq->buf[last].eop = true;
	txq->buf[last].skb = skb;
	d = &txq->desc[last];
	d->dw3 = cpu_to_le32(VMX_TXD_EOP | VMX_TXD_CQ);

	d = &txq->desc[sop];
	dw3 = le32_to_cpu(d->dw3) | FIELD_PREP(VMX_TXD_HLEN, p.hlen) |
	      FIELD_PREP(VMX_TXD_OM, p.om);
	if (skb_vlan_tag_present(skb))
		dw3 |= VMX_TXD_TI | FIELD_PREP(VMX_TXD_TCI,
					       skb_vlan_tag_get(skb));
	d->dw3 = cpu_to_le32(dw3);
	dw2 = le32_to_cpu(d->dw2) | FIELD_PREP(VMX_TXD_MSSCOF, p.msscof) |
	      p.dw2;
	d->dw2 = cpu_to_le32(dw2);

	/*
	 * Last use of the skb and BQL before the hand-over: a device that
	 * does not wait for the doorbell may complete and free it at once.
	 */
	skb_tx_timestamp(skb);
	kick = __netdev_tx_sent_queue(txq->nq, len, netdev_xmit_more());

	/* the whole chain is written before the SOP changes hands */
	vmx_tx_handover(txq);
	dma_wmb();
	d->dw2 = cpu_to_le32(dw2 ^ VMX_TXD_GEN);

	u64_stats_update_begin(&txq->stats.syncp);
	if (p.tso) {
		txq->stats.s[VMX_TXS_TSO_PKTS]++;
		txq->stats.s[VMX_TXS_TSO_BYTES] += len;
		txq->stats.s[VMX_TXS_TSO_TUNNEL] += p.tunnel;
	} else if (p.om != VMX_OM_NONE) {
		txq->stats.s[VMX_TXS_CSUM]++;
		txq->stats.s[VMX_TXS_CSUM_TUNNEL] += p.tunnel;
	}
	u64_stats_update_end(&txq->stats.syncp);

	vmx_tx_maybe_stop(txq);
	/*
	 * Doorbell: while the stack has more frames coming, defer (bounded);
	 * otherwise ring once the device's txThreshold is reached. A queue
	 * stopped now (by BQL or by vmx_tx_maybe_stop() just above, after
	 * the stack was told more would come) always rings: nothing more
	 * comes, and only completions restart it.
	 */
	if (vmx_tx_defer(txq, p.pkts, kick ? 1 : VMX_TX_DEFER_MAX) ||
	    netif_xmit_stopped(txq->nq))
		vmx_tx_doorbell(txq);
	return NETDEV_TX_OK;

drop:
	vmx_txq_add(txq, VMX_TXS_DROP, 1);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* the protocol after an IPv4 or IPv6 header, 0 for anything else */
static u8 vmx_tx_l4_proto(__be16 l3, const struct iphdr *iph,
			  const struct ipv6hdr *ip6)
{
	if (l3 == htons(ETH_P_IP))
		return iph->protocol;
	if (l3 == htons(ETH_P_IPV6))
		return ip6->nexthdr;
	return 0;
}

/*
 * A tunnelled frame the device can offload: rev 4+, UDP to the Geneve or
 * VXLAN port, inner Ethernet with IPv4 or IPv6 and TCP, the headers up to
 * the end of the inner TCP header in one data ring entry; from rev 7 the
 * capabilities for that tunnel granted.
 */
static bool vmx_tx_tunnel_ok(struct vmx_priv *vp, struct sk_buff *skb)
{
	u32 hlen, need, gso_type = skb_shinfo(skb)->gso_type;
	bool geneve;

	if (vp->rev < 4 || skb->inner_protocol_type != ENCAP_TYPE_ETHER ||
	    skb->inner_protocol != htons(ETH_P_TEB))
		return false;
	if (vmx_tx_l4_proto(vlan_get_protocol(skb), ip_hdr(skb),
			    ipv6_hdr(skb)) != IPPROTO_UDP ||
	    !vmx_tunnel_port(udp_hdr(skb)->dest))
		return false;
	geneve = udp_hdr(skb)->dest == htons(VMX_PORT_GENEVE);
	/* the inner headers were pushed whole: they are linear */
	if (skb_inner_network_offset(skb) + sizeof(struct ipv6hdr) >
	    skb_headlen(skb) ||
	    vmx_tx_l4_proto(inner_eth_hdr(skb)->h_proto, inner_ip_hdr(skb),
			    inner_ipv6_hdr(skb)) != IPPROTO_TCP)
		return false;
	hlen = skb_inner_tcp_all_headers(skb);
	if (hlen > skb_headlen(skb) ||
	    hlen > min_t(u32, vp->txdata_size, VMX_TX_MAX_HLEN))
		return false;
	if (vp->rev < 7)
		return true;
	if (skb_is_gso(skb))
		need = geneve ? VMX_CAP_GENEVE_TSO : VMX_CAP_VXLAN_TSO;
	else
		need = geneve ? VMX_CAP_GENEVE_CSUM : VMX_CAP_VXLAN_CSUM;
	if (skb_is_gso(skb) && (gso_type & SKB_GSO_UDP_TUNNEL_CSUM))
		need |= geneve ? VMX_CAP_GENEVE_OUTER : VMX_CAP_VXLAN_OUTER;
	return (vp->caps & need) == need;
}

/**
 * vmx_features_check() - drop offloads the device cannot do for @skb
 * @skb: frame
 * @netdev: device
 * @features: offloads the stack wants to use
 *
 * Offloaded headers must fit one TX data ring entry and the descriptor
 * fields; an offload of a tunnel's inner headers needs a tunnel the
 * device offloads (vmx_tx_tunnel_ok()). Anything else falls back to
 * software.
 *
 * Return: the usable features.
 */
netdev_features_t vmx_features_check(struct sk_buff *skb,
				     struct net_device *netdev,
				     netdev_features_t features)
{
	struct vmx_priv *vp = netdev_priv(netdev);
	u32 dsz = vp->txdata_size;

	features = vlan_features_check(skb, features);
	if (vmx_tx_inner(skb)) {
		if (!vmx_tx_tunnel_ok(vp, skb) ||
		    (skb_is_gso(skb) &&
		     skb_shinfo(skb)->gso_size >= VMX_TX_MAX_BUF))
			features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
		return features;
	}
	if (skb_is_gso(skb)) {
		if (skb_tcp_all_headers(skb) > min_t(u32, dsz, VMX_TX_MAX_HLEN) ||
		    skb_shinfo(skb)->gso_size >= VMX_TX_MAX_BUF)
			features &= ~NETIF_F_GSO_MASK;
	}
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		u32 start = skb_checksum_start_offset(skb);
		u32 field = start + skb->csum_offset;

		if (start > VMX_TX_MAX_HLEN || field > VMX_TX_MAX_CSUM_OFF ||
		    field + 2 > dsz)
			features &= ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
	}
	return features;
}

/**
 * vmx_txq_read_stats() - consistent snapshot of a queue's counters
 * @txq: queue
 * @out: VMX_TXS_NUM values
 */
void vmx_txq_read_stats(struct vmx_txq *txq, u64 *out)
{
	u64 c[VMX_TXS_NUM];
	unsigned int start;
	u32 i;

	do {
		start = u64_stats_fetch_begin(&txq->stats.syncp);
		memcpy(out, txq->stats.s, sizeof(txq->stats.s));
	} while (u64_stats_fetch_retry(&txq->stats.syncp, start));
	do {
		start = u64_stats_fetch_begin(&txq->cstats.syncp);
		memcpy(c, txq->cstats.s, sizeof(c));
	} while (u64_stats_fetch_retry(&txq->cstats.syncp, start));
	for (i = 0; i < VMX_TXS_NUM; i++)
		out[i] += c[i];
}

/*
 * Write the descriptors of one XDP frame (its head and each fragment) from
 * txq->fill on, their generations still invalid. Returns false, with
 * nothing left mapped or written, when the frame cannot go now: not enough
 * room, more buffers than the device takes for a packet, or a mapping
 * failure.
 */
static bool vmx_tx_xdp_frame(struct vmx_txq *txq, struct xdp_frame *f,
			     bool mapped)
{
	u32 start = txq->fill, start_gen = txq->fill_gen, nfrags = 0, i;
	struct device *dev = &txq->vp->pdev->dev;
	struct skb_shared_info *sh = NULL;
	struct vmx_tx_buf *b = NULL;

	/* XDP_TX of a single page_pool page: the common case, kept short */
	if (likely(mapped && !xdp_frame_has_frags(f))) {
		struct vmx_tx_desc *d = &txq->desc[txq->fill];
		struct page *page = virt_to_page(f->data);
		dma_addr_t dma;

		/* a length field of 0 means 16 KiB to the device */
		if (unlikely(!vmx_tx_avail(txq) || !f->len))
			return false;
		dma = page_pool_get_dma_addr(page) + offset_in_page(f->data);
		if (vmx_dma_need_sync(dev))
			dma_sync_single_for_device(dev, dma, f->len,
						   DMA_BIDIRECTIONAL);
		b = &txq->buf[txq->fill];
		b->type = VMX_TXB_XDP_TX;
		b->dma = dma;
		b->len = f->len;
		b->eop = true;
		b->xdpf = f;
		d->addr = cpu_to_le64(dma);
		d->dw3 = cpu_to_le32(VMX_TXD_EOP | VMX_TXD_CQ);
		txq->fill = vmx_ring_next(txq->fill, txq->size, &txq->fill_gen);
		return true;
	}
	if (unlikely(xdp_frame_has_frags(f))) {
		sh = xdp_get_shared_info_from_frame(f);
		nfrags = sh->nr_frags;
	}
	if (unlikely(nfrags + 1 > VMX_TX_MAX_DESC_NONTSO ||
		     vmx_tx_avail(txq) < nfrags + 1))
		return false;

	for (i = 0; i <= nfrags; i++) {
		const skb_frag_t *frag = i ? &sh->frags[i - 1] : NULL;
		struct vmx_tx_desc *d = &txq->desc[txq->fill];
		struct page *page;
		dma_addr_t dma;
		u32 off, len;

		if (frag) {
			page = skb_frag_page(frag);
			off = skb_frag_off(frag);
			len = skb_frag_size(frag);
		} else {
			page = virt_to_page(f->data);
			off = f->data - page_address(page);
			len = f->len;
		}
		if (unlikely(!len))
			goto unwind;
		b = &txq->buf[txq->fill];
		if (mapped) {
			/* a page_pool page of this device, mapped both ways */
			dma = page_pool_get_dma_addr(page) + off;
			dma_sync_single_for_device(dev, dma, len,
						   DMA_BIDIRECTIONAL);
			b->type = VMX_TXB_XDP_TX;
		} else {
			if (frag)
				dma = skb_frag_dma_map(dev, frag, 0, len,
						       DMA_TO_DEVICE);
			else
				dma = dma_map_single(dev, f->data, len,
						     DMA_TO_DEVICE);
			if (unlikely(dma_mapping_error(dev, dma)))
				goto unwind;
			b->type = frag ? VMX_TXB_XDP_XMIT_FRAG :
				  VMX_TXB_XDP_XMIT;
		}
		b->dma = dma;
		b->len = len;
		d->addr = cpu_to_le64(dma);
		d->dw3 = cpu_to_le32(i == nfrags ? VMX_TXD_EOP | VMX_TXD_CQ : 0);
		txq->fill = vmx_ring_next(txq->fill, txq->size, &txq->fill_gen);
	}
	b->eop = true;
	b->xdpf = f;
	return true;

unwind:
	while (txq->fill != start) {
		txq->fill = vmx_ring_prev(txq->fill, txq->size);
		vmx_tx_unmap(txq, &txq->buf[txq->fill]);
		memset(&txq->buf[txq->fill], 0, sizeof(txq->buf[0]));
	}
	txq->fill_gen = start_gen;
	return false;
}

/**
 * vmx_tx_xdp_post() - post XDP frames, no doorbell
 * @txq: queue, owned by the caller (lock held)
 * @frames: frames to send
 * @n: number of frames
 * @mapped: true for XDP_TX frames living in this device's page_pool pages
 *	    (already mapped); false for ndo_xdp_xmit frames, mapped here
 *
 * One descriptor per buffer of a frame (multi-buffer frames have several).
 * The whole batch changes hands at once: every descriptor but the first
 * gets its valid generation, then, after a barrier, the first, so a device
 * that does not wait for the doorbell never sees part of a frame. The
 * length sent is each buffer's current length, never the buffer size.
 *
 * Return: number of frames posted, from the start of @frames.
 */
int vmx_tx_xdp_post(struct vmx_txq *txq, struct xdp_frame **frames, int n,
		    bool mapped)
{
	u32 first = txq->fill, gen = txq->fill_gen;
	int done;

	for (done = 0; done < n; done++)
		if (!vmx_tx_xdp_frame(txq, frames[done], mapped))
			break;
	if (done)
		vmx_tx_xdp_handover(txq, first, gen);
	/*
	 * A stack queue XDP shares (no room for XDP queues): stopped here as
	 * by the stack's own sends, so that it never meets a full ring.
	 */
	if (unlikely(!txq->xdp) && txq->nq &&
	    !netif_tx_queue_stopped(txq->nq))
		vmx_tx_maybe_stop(txq);
	return done;
}

/**
 * vmx_tx_xdp_handover() - give the device the descriptors written from @first
 * @txq: queue, owned by the caller (lock held)
 * @first: first descriptor written, up to txq->fill (not included)
 * @gen: the generation valid at @first
 *
 * Every descriptor but the first gets its valid generation and its buffer
 * length, then, after a barrier, the first: a device that does not wait
 * for the doorbell never sees part of the batch.
 */
void vmx_tx_xdp_handover(struct vmx_txq *txq, u32 first, u32 gen)
{
	u32 ndesc = vmx_ring_dist(txq->fill, first, txq->size);
	u32 first_gen = gen, idx;

	vmx_tx_handover(txq);
	/* all addresses and flags visible before any generation flips */
	dma_wmb();
	idx = vmx_ring_next(first, txq->size, &gen);
	while (--ndesc) {
		txq->desc[idx].dw2 =
			cpu_to_le32(FIELD_PREP(VMX_TXD_LEN, txq->buf[idx].len) |
				    (gen ? VMX_TXD_GEN : 0));
		idx = vmx_ring_next(idx, txq->size, &gen);
	}
	dma_wmb();
	txq->desc[first].dw2 =
		cpu_to_le32(FIELD_PREP(VMX_TXD_LEN, txq->buf[first].len) |
			    (first_gen ? VMX_TXD_GEN : 0));
}
