// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: receive path.
 *
 * Each RX queue has ring 0 (HEAD buffers, one page_pool page each, frame
 * data after NET_SKB_PAD, or after XDP_PACKET_HEADROOM in pages mapped
 * both ways while a program is attached), ring 1 (BODY buffers, whole
 * pages, for the rest of jumbo and LRO frames), one completion ring and, from device
 * revision 3, an RX data ring into which the device copies small frames.
 * Nothing the device writes into a completion is trusted: ring id, index
 * and length are checked, and a completion that makes no sense stops the
 * queue and schedules a reset.
 *
 * A channel with a zero-copy AF_XDP pool (vmx_xdp.c) has ring 0 filled with
 * the pool's UMEM buffers instead (the frame at their start, no headroom
 * of the driver's); ring 1 keeps its own page_pool and only ever carries
 * the rest of a frame that is then dropped.
 */
#include <linux/bpf_trace.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/swiotlb.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>

#include "vmx.h"

static struct device *vmx_dmadev(const struct vmx_rxq *rxq)
{
	return &rxq->vp->pdev->dev;
}

/*
 * Ring-0 buffer size: half a page when a stack-layout frame of this MTU
 * fits one, which halves the DMA mapping space the ring pins (it matters
 * where every mapping is bounced, as in confidential-computing guests);
 * otherwise a page. XDP always uses whole pages.
 */
static u32 vmx_rx_head_truesize(const struct vmx_qset *qs)
{
	u32 half = PAGE_SIZE / 2;

	if (!qs->xdp && qs->mtu + ETH_HLEN + VLAN_HLEN <=
	    VMX_RX_BUF_LEN(half, VMX_RX_SKB_HEADROOM))
		return half;
	return PAGE_SIZE;
}

/*
 * A ring and its page_pool. The pool syncs for the device only the part
 * of a page the device writes: from the first buffer's frame start to the
 * last buffer's end.
 *
 * In the XDP layout ring 1 takes its pages from ring 0's pool (@shared):
 * the kernel returns every page of a multi-buffer XDP frame, fragments
 * included, to the one pool of the queue's memory model
 * (xdp_return_frame_bulk()), so both rings' pages must come from it. That
 * pool covers whole pages.
 */
static int vmx_rx_ring_alloc(struct vmx_rxq *rxq, struct vmx_rx_ring *r,
			     u32 size, u8 btype, u32 truesize,
			     struct page_pool *shared, u32 shared_size)
{
	struct vmx_priv *vp = rxq->vp;
	u32 head = btype == VMX_RXD_BTYPE_HEAD ? rxq->headroom : 0;
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.order = 0,
		.pool_size = size,
		.nid = dev_to_node(&vp->pdev->dev),
		.dev = &vp->pdev->dev,
		/* XDP_TX sends ring-1 pages too (multi-buffer frames) */
		.dma_dir = rxq->dma_dir,
	};

	r->size = size;
	r->truesize = truesize;
	r->buf_len = btype == VMX_RXD_BTYPE_HEAD ?
		     VMX_RX_BUF_LEN(truesize, head) : VMX_RX_BODY_LEN;
	if (btype == VMX_RXD_BTYPE_HEAD && rxq->xsk_pool) {
		r->xsk = true;
		r->buf_len = min_t(u32, VMX_RX_MAX_BUF,
				   xsk_pool_get_rx_frame_size(rxq->xsk_pool));
		goto rings;
	}
	/* copy mode: each slot's buffer is mapped once, by the driver */
	if (rxq->copy)
		pp.flags = 0;
	if (truesize < PAGE_SIZE)
		pp.flags |= VMX_PP_FLAG_FRAG;
	pp.offset = head;
	pp.max_len = PAGE_SIZE - truesize + r->buf_len;
	if (shared_size) {
		pp.pool_size += shared_size;
		pp.offset = 0;
		pp.max_len = PAGE_SIZE;
	}
	vmx_pp_params_set_owner(&pp, rxq->napi, vp->netdev, rxq->qid);
	r->pp_own = !shared;
	r->pp = shared ?: page_pool_create(&pp);
	if (IS_ERR(r->pp)) {
		int err = PTR_ERR(r->pp);

		r->pp = NULL;
		return err;
	}
rings:
	/* what every descriptor of the ring carries but its address and gen */
	r->dma_off = head;
	r->dw2 = FIELD_PREP(VMX_RXD_LEN, r->buf_len) |
		 FIELD_PREP(VMX_RXD_BTYPE, btype);
	r->desc = dma_alloc_coherent(vmx_dmadev(rxq), size * sizeof(*r->desc),
				     &r->desc_pa, GFP_KERNEL);
	if (!r->desc)
		return -ENOMEM;
	r->buf = kcalloc(size, sizeof(*r->buf), GFP_KERNEL);
	if (!r->buf)
		return -ENOMEM;
	return 0;
}

static void vmx_rx_ring_free(struct vmx_rxq *rxq, struct vmx_rx_ring *r)
{
	u32 i;

	if (r->buf) {
		for (i = 0; i < r->size; i++) {
			if (!r->buf[i].page)
				continue;
			if (r->xsk) {
				xsk_buff_free(r->buf[i].xsk);
				continue;
			}
			if (rxq->copy)
				dma_unmap_page_attrs(vmx_dmadev(rxq),
						     r->buf[i].dma, r->truesize,
						     DMA_FROM_DEVICE,
						     DMA_ATTR_SKIP_CPU_SYNC);
			page_pool_put_full_page(r->pp, r->buf[i].page, false);
		}
		kfree(r->buf);
		r->buf = NULL;
	}
	if (r->desc)
		dma_free_coherent(vmx_dmadev(rxq), r->size * sizeof(*r->desc),
				  r->desc, r->desc_pa);
	r->desc = NULL;
	/*
	 * A queue set that never ran (an allocation failed while the old set
	 * runs on the same NAPIs): its pools were never used by them, and
	 * destroying a pool asserts that its NAPI cannot run.
	 */
	if (r->pp && r->pp_own && !rxq->started)
		vmx_pp_forget_napi(r->pp);
	if (r->pp && r->pp_own)
		page_pool_destroy(r->pp);
	r->pp = NULL;
}

/*
 * A new buffer for @r, or false (counted) when none could be had. Inlined
 * in the refill, which runs it for every frame a page went up with.
 */
static __always_inline bool vmx_rx_buf_alloc(struct vmx_rxq *rxq,
					     struct vmx_rx_ring *r,
					     struct vmx_rx_buf *b)
{
	if (r->xsk) {
		/* none while the application's fill ring is empty: not counted */
		b->off = 0;
		b->xsk = xsk_buff_alloc(rxq->xsk_pool);
		return b->xsk;
	}
	if (r->truesize == PAGE_SIZE) {
		b->off = 0;
		b->page = page_pool_dev_alloc_pages(r->pp);
	} else {
		b->page = page_pool_dev_alloc_frag(r->pp, &b->off,
						   r->truesize);
	}
	if (unlikely(!b->page))
		goto fail;
	if (rxq->copy) {
		b->dma = dma_map_page_attrs(vmx_dmadev(rxq), b->page, b->off,
					    r->truesize, DMA_FROM_DEVICE,
					    DMA_ATTR_SKIP_CPU_SYNC);
		if (unlikely(dma_mapping_error(vmx_dmadev(rxq), b->dma))) {
			page_pool_put_full_page(r->pp, b->page, false);
			b->page = NULL;
			goto fail;
		}
	}
	return true;
fail:
	vmx_rxq_add(rxq, VMX_RXS_ALLOC_FAIL, 1);
	return false;
}

/* Whether the buffers of @rxq need DMA syncs at all. */
static inline bool vmx_rx_need_sync(const struct vmx_rxq *rxq)
{
	return vmx_dma_need_sync(&rxq->vp->pdev->dev);
}

/* The DMA address of a buffer's start. */
static dma_addr_t vmx_rx_buf_dma(const struct vmx_rxq *rxq,
				 const struct vmx_rx_ring *r,
				 const struct vmx_rx_buf *b)
{
	if (r->xsk)
		return xsk_buff_xdp_get_dma(b->xsk);
	if (rxq->copy)
		return b->dma;
	return page_pool_get_dma_addr(b->page) + b->off;
}

/* A buffer the frame no longer needs: back to its pool, or, in copy
 * mode, left in its slot to be posted again.
 */
static void vmx_rx_release(struct vmx_rxq *rxq, struct vmx_rx_ring *r,
			   const struct vmx_rx_buf *b)
{
	if (r->xsk)
		xsk_buff_free(b->xsk);
	else if (!rxq->copy)
		page_pool_recycle_direct(r->pp, b->page);
}

/* Put a buffer behind every slot so that starting the queue cannot fail. */
static int vmx_rx_ring_populate(struct vmx_rxq *rxq, struct vmx_rx_ring *r)
{
	u32 i;

	/* AF_XDP buffers only once the queue starts: the application fills */
	if (r->xsk)
		return 0;
	for (i = 0; i < r->size; i++)
		if (!r->buf[i].page && !vmx_rx_buf_alloc(rxq, r, &r->buf[i]))
			return -ENOMEM;
	return 0;
}

/* Drop a multi-buffer XDP frame still being assembled. */
static void vmx_rx_xb_close(struct vmx_rxq *rxq, bool direct)
{
	if (!rxq->xb_open)
		return;
	rxq->xb_open = false;
	vmx_xdp_buff_free(rxq, &rxq->xb.xdp, direct);
}

static void vmx_rx_refill_timer(struct timer_list *t)
{
	struct vmx_rxq *rxq = vmx_timer_container_of(rxq, t, refill_timer);

	napi_schedule(rxq->napi);
}

/**
 * vmx_rxq_alloc() - allocate the rings, buffers and page_pools of a queue
 * @vp: device
 * @rxq: queue to fill in (zeroed by the caller)
 * @qid: queue index
 * @qs: queue set giving the ring sizes, the MTU and the buffer layout
 *
 * Return: 0 or a negative errno; on error everything is released.
 */
int vmx_rxq_alloc(struct vmx_priv *vp, struct vmx_rxq *rxq, u16 qid,
		  const struct vmx_qset *qs)
{
	int err;

	rxq->vp = vp;
	rxq->qid = qid;
	rxq->napi = &vp->qv[qid].napi;
	rxq->xdp = qs->xdp;
	rxq->headroom = qs->xdp ? VMX_RX_XDP_HEADROOM : VMX_RX_SKB_HEADROOM;
	/* XDP_TX sends straight out of XDP-layout pages */
	rxq->dma_dir = qs->xdp ? DMA_BIDIRECTIONAL : DMA_FROM_DEVICE;
	/*
	 * Where every mapping goes through a bounce buffer (swiotlb=force,
	 * confidential-computing guests) a page lent to the stack keeps its
	 * bounce slots until a socket reads it, and a small pool runs dry:
	 * copy frames out and keep the buffers in their slots instead, each
	 * mapped once by the driver (page_pool would map a whole refill
	 * batch beyond the ring). The copy costs what the bounce already
	 * cost once more. XDP keeps its page_pool pages (XDP_TX sends them).
	 */
	rxq->copy = !qs->xdp && is_swiotlb_force_bounce(&vp->pdev->dev);
	if (qid < ARRAY_SIZE(vp->xsk_pool))
		rxq->xsk_pool = vp->xsk_pool[qid];
	if (rxq->xsk_pool) {
		rxq->headroom = 0;
		rxq->copy = false;
	}
	u64_stats_init(&rxq->stats.syncp);
	timer_setup(&rxq->refill_timer, vmx_rx_refill_timer, 0);

	err = vmx_rx_ring_alloc(rxq, &rxq->ring[0], qs->rx_size[0],
				VMX_RXD_BTYPE_HEAD, vmx_rx_head_truesize(qs),
				NULL, qs->xdp ? qs->rx_size[1] : 0);
	if (err)
		goto err_free;
	err = vmx_rx_ring_alloc(rxq, &rxq->ring[1], qs->rx_size[1],
				VMX_RXD_BTYPE_BODY, PAGE_SIZE,
				qs->xdp ? rxq->ring[0].pp : NULL, 0);
	if (err)
		goto err_free;

	rxq->comp_size = qs->rx_size[0] + qs->rx_size[1];
	rxq->comp = dma_alloc_coherent(&vp->pdev->dev,
				       rxq->comp_size * sizeof(*rxq->comp),
				       &rxq->comp_pa, GFP_KERNEL);
	if (!rxq->comp) {
		err = -ENOMEM;
		goto err_free;
	}

	if (vp->rxdata_size) {
		rxq->data_desc_size = vp->rxdata_size;
		rxq->data_ring = dma_alloc_coherent(&vp->pdev->dev,
						    qs->rx_size[0] *
						    rxq->data_desc_size,
						    &rxq->data_ring_pa,
						    GFP_KERNEL);
		if (!rxq->data_ring) {
			err = -ENOMEM;
			goto err_free;
		}
	}

	err = vmx_rx_ring_populate(rxq, &rxq->ring[0]);
	if (!err)
		err = vmx_rx_ring_populate(rxq, &rxq->ring[1]);
	if (err)
		goto err_free;

	/* ring-1 pages are the fragments bpf_xdp_adjust_tail() may grow */
	err = __xdp_rxq_info_reg(&rxq->xdp_rxq, vp->netdev, qid,
				 rxq->napi->napi_id, PAGE_SIZE);
	if (err)
		goto err_free;
	if (rxq->xsk_pool)
		err = xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq,
						 MEM_TYPE_XSK_BUFF_POOL, NULL);
	else
		err = xdp_rxq_info_reg_mem_model(&rxq->xdp_rxq,
						 MEM_TYPE_PAGE_POOL,
						 rxq->ring[0].pp);
	if (err) {
		xdp_rxq_info_unreg(&rxq->xdp_rxq);
		goto err_free;
	}
	return 0;

err_free:
	vmx_rxq_free(rxq);
	return err;
}

/**
 * vmx_rxq_free() - release everything vmx_rxq_alloc() set up
 * @rxq: queue, stopped
 */
void vmx_rxq_free(struct vmx_rxq *rxq)
{
	struct device *dev = vmx_dmadev(rxq);

	vmx_timer_delete_sync(&rxq->refill_timer);
	vmx_rx_xb_close(rxq, false);
	if (xdp_rxq_info_is_reg(&rxq->xdp_rxq))
		xdp_rxq_info_unreg(&rxq->xdp_rxq);
	if (rxq->skb) {
		dev_kfree_skb_any(rxq->skb);
		rxq->skb = NULL;
	}
	if (rxq->data_ring)
		dma_free_coherent(dev, rxq->ring[0].size * rxq->data_desc_size,
				  rxq->data_ring, rxq->data_ring_pa);
	rxq->data_ring = NULL;
	if (rxq->comp)
		dma_free_coherent(dev, rxq->comp_size * sizeof(*rxq->comp),
				  rxq->comp, rxq->comp_pa);
	rxq->comp = NULL;
	/* ring 1 first: it may use ring 0's pool */
	vmx_rx_ring_free(rxq, &rxq->ring[1]);
	vmx_rx_ring_free(rxq, &rxq->ring[0]);
}

static u32 vmx_rx_ring_owned(const struct vmx_rx_ring *r)
{
	return vmx_ring_dist(r->fill, r->cons, r->size);
}

/*
 * Hand the slot at r->fill to the device; false if no page was available.
 * Inlined in the refill loop (once per frame).
 */
static __always_inline bool vmx_rx_post(struct vmx_rxq *rxq,
					struct vmx_rx_ring *r)
{
	struct vmx_rx_desc *d = &r->desc[r->fill];
	struct vmx_rx_buf *b = &r->buf[r->fill];

	if (!b->page && !vmx_rx_buf_alloc(rxq, r, b))
		return false;
	d->addr = cpu_to_le64(vmx_rx_buf_dma(rxq, r, b) + r->dma_off);
	d->dw3 = 0;
	/* address and length visible before the generation hands it over */
	dma_wmb();
	d->dw2 = cpu_to_le32(r->dw2 | (r->fill_gen ? VMX_RXD_GEN : 0));
	r->fill = vmx_ring_next(r->fill, r->size, &r->fill_gen);
	return true;
}

static noinline u32 vmx_rx_post_n(struct vmx_rxq *rxq, struct vmx_rx_ring *r,
				  u32 want, bool *short_of_pages)
{
	u32 n;

	for (n = 0; n < want; n++) {
		if (!vmx_rx_post(rxq, r)) {
			*short_of_pages = true;
			break;
		}
	}
	return n;
}

/*
 * Post every free slot. Returns the number posted; *@short_of_pages is set
 * when a page allocation failed and the ring stays short. Inline: a ring
 * with nothing to post (ring 1 in most polls) costs no call.
 */
static __always_inline u32 vmx_rx_refill(struct vmx_rxq *rxq,
					 struct vmx_rx_ring *r,
					 bool *short_of_pages)
{
	if (vmx_rx_ring_full(r))
		return 0;
	return vmx_rx_post_n(rxq, r, r->size - 1 - vmx_rx_ring_owned(r),
			     short_of_pages);
}

/**
 * vmx_rxq_start() - reset the rings to the state ACTIVATE expects and post
 * @rxq: queue, not yet known to the device
 */
void vmx_rxq_start(struct vmx_rxq *rxq)
{
	bool short_of_pages = false;
	u32 i, j;

	for (i = 0; i < 2; i++) {
		struct vmx_rx_ring *r = &rxq->ring[i];

		memset(r->desc, 0, r->size * sizeof(*r->desc));
		r->fill = 0;
		r->cons = 0;
		r->fill_gen = 1;
		r->ooo = !!(rxq->vp->caps & VMX_CAP_OOORX_COMP);
		/* (the marks are read only in out-of-order mode) */
		for (j = 0; r->ooo && j < r->size; j++)
			r->buf[j].done = 0;
		vmx_rx_refill(rxq, r, &short_of_pages);
	}
	memset(rxq->comp, 0, rxq->comp_size * sizeof(*rxq->comp));
	/* only the live set's queue: a set being built may still fail */
	if (rxq->xsk_pool)
		xsk_pool_set_rxq_info(rxq->xsk_pool, &rxq->xdp_rxq);
	rxq->started = true;
	rxq->comp_next = 0;
	rxq->comp_gen = 1;
	rxq->bad = false;
}

/**
 * vmx_rxq_stop() - forget a partly received frame after the device stopped
 * @rxq: queue
 */
void vmx_rxq_stop(struct vmx_rxq *rxq)
{
	vmx_timer_delete_sync(&rxq->refill_timer);
	vmx_rx_xb_close(rxq, false);
	if (rxq->dr_page) {
		page_pool_put_full_page(rxq->ring[0].pp, rxq->dr_page, false);
		rxq->dr_page = NULL;
	}
	if (rxq->skb) {
		dev_kfree_skb_any(rxq->skb);
		rxq->skb = NULL;
	}
}

/**
 * vmx_rxq_write_desc() - describe the queue in the queue descriptor table
 * @rxq: queue
 * @d: its RX queue descriptor
 * @nrxq: number of RX queues programmed into the device
 * @intr_idx: interrupt vector
 */
void vmx_rxq_write_desc(struct vmx_rxq *rxq, struct vmx_rxq_desc *d,
			u32 nrxq, u8 intr_idx)
{
	memset(d, 0, sizeof(*d));
	d->ring_pa[0] = cpu_to_le64(rxq->ring[0].desc_pa);
	d->ring_pa[1] = cpu_to_le64(rxq->ring[1].desc_pa);
	d->comp_ring_pa = cpu_to_le64(rxq->comp_pa);
	d->dd_pa = cpu_to_le64(~0ULL);
	d->ring_size[0] = cpu_to_le32(rxq->ring[0].size);
	d->ring_size[1] = cpu_to_le32(rxq->ring[1].size);
	d->comp_ring_size = cpu_to_le32(rxq->comp_size);
	d->intr_idx = intr_idx;
	if (rxq->data_ring) {
		d->data_ring_pa = cpu_to_le64(rxq->data_ring_pa);
		d->data_desc_size = cpu_to_le16(rxq->data_desc_size);
	}
}

/*
 * Write both producer doorbells if the device wants them. Inlined in the
 * poll, which refills after every frame it took.
 */
static __always_inline void vmx_rxq_kick(struct vmx_rxq *rxq)
{
	struct vmx_priv *vp = rxq->vp;

	if (!READ_ONCE(vmx_rxq_desc(vp, rxq->qid)->update_prod))
		return;
	vmx_db_rxprod(vp, rxq->qid, rxq->ring[0].fill, rxq->ring[1].fill);
}

static void vmx_rx_bad(struct vmx_rxq *rxq, const char *why, u32 a, u32 b)
{
	vmx_rxq_add(rxq, VMX_RXS_BAD_DESC, 1);
	if (!rxq->bad)
		netdev_err(rxq->vp->netdev,
			   "rxq %u: bad completion (%s %u/%u), resetting\n",
			   rxq->qid, why, a, b);
	rxq->bad = true;
	vmx_schedule_reset(rxq->vp);
}

/*
 * Out-of-order completions (OOORX_COMP granted, rev 7+): slot @idx is
 * back but slots before it may still be the device's, and none is
 * returned implicitly. The slot is marked; r->cons passes only the run of
 * marked slots, so the refill re-arms in ring order up to the first slot
 * still pending. A slot returned twice is a completion that makes no
 * sense.
 */
static bool vmx_rx_take_ooo(struct vmx_rxq *rxq, struct vmx_rx_ring *r,
			    u32 idx)
{
	if (r->buf[idx].done) {
		vmx_rx_bad(rxq, "index returned twice", idx, r->size);
		return false;
	}
	if (idx != r->cons)
		vmx_rxq_add(rxq, VMX_RXS_OOO, 1);
	r->buf[idx].done = 1;
	while (r->cons != r->fill && r->buf[r->cons].done) {
		r->buf[r->cons].done = 0;
		r->cons = vmx_ring_after(r->cons, r->size);
	}
	return true;
}

/*
 * Take the buffer the device returned at @idx of ring @r into @out. In
 * ring order every slot of the ring up to @idx is returned with it (the
 * device may skip slots); the skipped ones keep their buffers and are
 * simply posted again.
 */
static inline bool vmx_rx_take(struct vmx_rxq *rxq, struct vmx_rx_ring *r,
			       u32 idx, bool keep, struct vmx_rx_buf *out)
{
	if (unlikely(idx >= r->size ||
		     vmx_ring_dist(idx, r->cons, r->size) >=
		     vmx_rx_ring_owned(r))) {
		vmx_rx_bad(rxq, "index", idx, r->size);
		return false;
	}
	if (unlikely(r->ooo) && !vmx_rx_take_ooo(rxq, r, idx))
		return false;
	*out = r->buf[idx];
	if (!keep)
		r->buf[idx].page = NULL;
	if (likely(!r->ooo))
		r->cons = vmx_ring_after(idx, r->size);
	return true;
}

/* Did the device verify the IP and TCP/UDP checksums it describes? */
static __always_inline bool vmx_rx_csum_ok(struct vmx_rxq *rxq, u32 dw0,
					   u32 dw3)
{
	if (!(rxq->vp->netdev->features & NETIF_F_RXCSUM) ||
	    (dw0 & VMX_RXC_CNC) || !(dw3 & (VMX_RXC_TCP | VMX_RXC_UDP)))
		return false;
	if (dw3 & VMX_RXC_V4)
		return (dw3 & VMX_RXC_IPC) && (dw3 & VMX_RXC_TUC);
	if (dw3 & VMX_RXC_V6)
		return dw3 & VMX_RXC_TUC;
	return false;
}

/*
 * The outer headers of a Geneve/VXLAN frame whose outer UDP checksum is 0:
 * Ethernet, IPv4 (not a fragment) or IPv6, UDP to a tunnel port the device
 * offloads. Read with skb_header_pointer(), nothing assumed.
 */
static bool vmx_rx_tunnel_nocsum(const struct sk_buff *skb)
{
	const struct udphdr *uh;
	u32 off = ETH_HLEN;
	struct udphdr _uh;
	__be16 proto;
	u8 l4;

	proto = ((const struct ethhdr *)skb->data)->h_proto;
	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *iph;
		struct iphdr _iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5 || ip_is_fragment(iph))
			return false;
		l4 = iph->protocol;
		off += iph->ihl * 4;
	} else if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6;
		struct ipv6hdr _ip6;

		ip6 = skb_header_pointer(skb, off, sizeof(_ip6), &_ip6);
		if (!ip6)
			return false;
		l4 = ip6->nexthdr;
		off += sizeof(*ip6);
	} else {
		return false;
	}
	if (l4 != IPPROTO_UDP)
		return false;
	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	return uh && !uh->check && vmx_tunnel_port(uh->dest);
}

/*
 * rev 4+, completion dword 0 bit 13 (or 12): the checksum results are the
 * inner headers' of a tunnelled frame. They are claimed only for a
 * Geneve/VXLAN frame whose outer UDP checksum is 0: its checksums are the
 * outer UDP one (zero, nothing to verify, but it counts as the first) and
 * the inner TCP/UDP one, so csum_level 1 (at level 0 the stack would
 * spend the claim on the zero outer checksum and verify the inner one
 * itself). Any other frame goes up without a result, counted in
 * rxN_inner_unused, and the stack checks it.
 */
static void vmx_rx_csum_inner(struct vmx_rxq *rxq, struct sk_buff *skb,
			      u32 dw0, u32 dw3)
{
	skb_checksum_none_assert(skb);
	if (vmx_rx_csum_ok(rxq, dw0, dw3) && vmx_rx_tunnel_nocsum(skb)) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		skb->csum_level = 1;
		vmx_rxq_add(rxq, VMX_RXS_CSUM_OK, 1);
		return;
	}
	vmx_rxq_add(rxq, VMX_RXS_CSUM_NONE, 1);
	vmx_rxq_add(rxq, VMX_RXS_INNER_UNUSED, 1);
}

/* every frame's: inlined in delivery */
static __always_inline void vmx_rx_csum(struct vmx_rxq *rxq,
					struct sk_buff *skb, u32 dw0, u32 dw3)
{
	bool ok = vmx_rx_csum_ok(rxq, dw0, dw3);

	skb_checksum_none_assert(skb);
	if (ok) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		vmx_rxq_add(rxq, VMX_RXS_CSUM_OK, 1);
	} else {
		vmx_rxq_add(rxq, VMX_RXS_CSUM_NONE, 1);
	}
}

static void vmx_rx_hash(struct sk_buff *skb, u32 dw0, u32 hash)
{
	switch (FIELD_GET(VMX_RXC_RSS_TYPE, dw0)) {
	case VMX_RSS_NONE:
		return;
	case VMX_RSS_IPV4:
	case VMX_RSS_IPV6:
		skb_set_hash(skb, hash, PKT_HASH_TYPE_L3);
		return;
	default:
		skb_set_hash(skb, hash, PKT_HASH_TYPE_L4);
	}
}

/*
 * An aggregated TCP frame: give the stack gso_size/gso_segs so it can be
 * forwarded or resegmented. The headers are parsed and checked here, never
 * taken from the completion: Ethernet, at most one VLAN tag (VLAN
 * stripping off), IPv4 (not a fragment) or IPv6, then TCP. An aggregate
 * whose headers are anything else (a tunnel, an IPv4 fragment, a header
 * the device misparsed) goes up without GSO fields and is counted in
 * rxN_lro_unparsed. A segment size from a type-4 completion is used only
 * when it fits the frame and the MTU, and then an aggregate shorter than
 * the MTU (segments smaller than the MTU allows) is one too; without it
 * the size comes from the MTU and only a frame longer than the MTU is an
 * aggregate. The segment count always comes from the payload. Called for
 * a frame with a segment size or longer than an untagged MTU-sized one.
 */
static void vmx_rx_lro(struct vmx_rxq *rxq, struct sk_buff *skb, u32 mss,
		       u32 dw3)
{
	u32 mtu = rxq->vp->netdev->mtu, l2 = ETH_HLEN, hlen, plen;
	struct skb_shared_info *sh;
	bool v6 = dw3 & VMX_RXC_V6;
	struct tcphdr *th;
	__be16 proto;

	proto = ((struct ethhdr *)skb->data)->h_proto;
	if (eth_type_vlan(proto)) {
		if (!pskb_may_pull(skb, VLAN_ETH_HLEN))
			goto unparsed;
		proto = ((struct vlan_ethhdr *)skb->data)->h_vlan_encapsulated_proto;
		l2 = VLAN_ETH_HLEN;
		/* a tagged frame of the MTU's size */
		if (!mss && skb->len <= mtu + l2)
			return;
	}
	if (!(dw3 & VMX_RXC_TCP) || !(dw3 & (VMX_RXC_V4 | VMX_RXC_V6)))
		goto unparsed;
	if (v6 && proto == htons(ETH_P_IPV6)) {
		if (!pskb_may_pull(skb, l2 + sizeof(struct ipv6hdr)) ||
		    ((struct ipv6hdr *)(skb->data + l2))->nexthdr !=
		    IPPROTO_TCP)
			goto unparsed;
		hlen = sizeof(struct ipv6hdr);
	} else if (!v6 && proto == htons(ETH_P_IP)) {
		struct iphdr *iph;

		if (!pskb_may_pull(skb, l2 + sizeof(*iph)))
			goto unparsed;
		iph = (struct iphdr *)(skb->data + l2);
		/* a fragment: no TCP header, or not all of the segment */
		if (iph->ihl < 5 || iph->protocol != IPPROTO_TCP ||
		    ip_is_fragment(iph))
			goto unparsed;
		hlen = iph->ihl * 4;
	} else {
		goto unparsed;
	}
	if (!pskb_may_pull(skb, l2 + hlen + sizeof(*th)))
		goto unparsed;
	th = (struct tcphdr *)(skb->data + l2 + hlen);
	if (th->doff < 5)
		goto unparsed;
	hlen += th->doff * 4;
	if (hlen >= mtu || skb->len <= l2 + hlen)
		goto unparsed;
	plen = skb->len - l2 - hlen;
	if (!mss || mss > plen || mss > mtu - hlen)
		mss = mtu - hlen;
	if (plen <= mss)
		return;
	sh = skb_shinfo(skb);
	sh->gso_size = mss;
	sh->gso_segs = DIV_ROUND_UP(plen, mss);
	sh->gso_type = v6 ? SKB_GSO_TCPV6 : SKB_GSO_TCPV4;
	vmx_rxq_add(rxq, VMX_RXS_LRO_PKTS, 1);
	vmx_rxq_add(rxq, VMX_RXS_LRO_BYTES, skb->len);
	return;
unparsed:
	vmx_rxq_add(rxq, VMX_RXS_LRO_UNPARSED, 1);
}

/* A frame received from the device: qstats count it whatever its fate. */
static void vmx_rx_count(struct vmx_rxq *rxq, u32 len)
{
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[VMX_RXS_PACKETS]++;
	rxq->stats.s[VMX_RXS_BYTES] += len;
	u64_stats_update_end(&rxq->stats.syncp);
}

/* A frame too short to hold an Ethernet header: counted and dropped. */
static void vmx_rx_runt(struct vmx_rxq *rxq, u32 len)
{
	vmx_rx_count(rxq, len);
	vmx_rxq_add(rxq, VMX_RXS_RUNT, 1);
}

/*
 * Hand a whole frame to the stack. @counted: XDP already counted it as
 * received (with its length before the program ran). Inlined in XDP_PASS
 * and in vmx_rx_one()'s ring path; the other paths call vmx_rx_deliver().
 */
static __always_inline void __vmx_rx_deliver(struct vmx_rxq *rxq,
					     struct sk_buff *skb,
					     const struct vmx_rx_comp *eop,
					     u32 lro_mss, bool counted)
{
	struct net_device *nd = rxq->vp->netdev;
	u32 dw0 = le32_to_cpu(eop->dw[0]);
	u32 dw2 = le32_to_cpu(eop->dw[2]);
	u32 dw3 = le32_to_cpu(eop->dw[3]);
	bool inner;

	if (!counted)
		vmx_rx_count(rxq, skb->len);
	/* eth_type_trans() pulls the header from the linear part */
	if (unlikely(skb_headlen(skb) < ETH_HLEN)) {
		vmx_rxq_add(rxq, VMX_RXS_RUNT, 1);
		napi_consume_skb(skb, 1);
		return;
	}
	/* reserved below rev 4 */
	inner = rxq->vp->rev >= 4 &&
		(dw0 & (VMX_RXC_INNER | VMX_RXC_INNER_FLAGS));
	if (inner)
		vmx_rx_csum_inner(rxq, skb, dw0, dw3);
	else
		vmx_rx_csum(rxq, skb, dw0, dw3);
	if (FIELD_GET(VMX_RXC_TYPE, dw3) != VMX_RXC_TYPE_LRO &&
	    (nd->features & NETIF_F_RXHASH))
		vmx_rx_hash(skb, dw0, le32_to_cpu(eop->dw[1]));
	if ((dw2 & VMX_RXC_TS) && (nd->features & NETIF_F_HW_VLAN_CTAG_RX))
		__vlan_hwaccel_put_tag(skb, htons(ETH_P_8021Q),
				       FIELD_GET(VMX_RXC_TCI, dw2));
	if (nd->features & NETIF_F_LRO) {
		if (inner) {
			/* a tunnel aggregate: the flags describe its inner headers */
			if (lro_mss || skb->len > nd->mtu + VLAN_ETH_HLEN)
				vmx_rxq_add(rxq, VMX_RXS_LRO_UNPARSED, 1);
		} else if (lro_mss || skb->len > nd->mtu + ETH_HLEN) {
			/* most frames are no aggregate: that test costs no call */
			vmx_rx_lro(rxq, skb, lro_mss, dw3);
		}
	}
	skb_record_rx_queue(skb, rxq->qid);
	skb->protocol = eth_type_trans(skb, nd);

	if (skb_is_gso(skb))
		netif_receive_skb(skb);
	else
		napi_gro_receive(rxq->napi, skb);
}

static void vmx_rx_deliver(struct vmx_rxq *rxq, struct sk_buff *skb,
			   const struct vmx_rx_comp *eop, u32 lro_mss,
			   bool counted)
{
	__vmx_rx_deliver(rxq, skb, eop, lro_mss, counted);
}

/*
 * Copy mode: a copy of the frame in a new skb; the ring buffer stays in
 * its slot.
 */
static struct sk_buff *vmx_rx_copy_head(struct vmx_rxq *rxq,
					const struct vmx_rx_buf *b,
					u32 data_off, u32 len)
{
	struct sk_buff *skb;

	skb = napi_alloc_skb(rxq->napi, len);
	if (likely(skb)) {
		skb_put_data(skb, page_address(b->page) + b->off + data_off,
			     len);
		vmx_rxq_add(rxq, VMX_RXS_COPIED, 1);
	} else {
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
	}
	/* the buffer stays in its slot and goes back to the device */
	dma_sync_single_range_for_device(vmx_dmadev(rxq), b->dma, data_off,
					 len, DMA_FROM_DEVICE);
	return skb;
}

/* An skb around a ring-0 buffer; the frame is @len bytes at @data_off. */
static struct sk_buff *vmx_rx_build_head(struct vmx_rxq *rxq,
					 const struct vmx_rx_buf *b,
					 u32 truesize, u32 data_off, u32 len)
{
	struct sk_buff *skb;

	if (rxq->copy)
		return vmx_rx_copy_head(rxq, b, data_off, len);
	skb = napi_build_skb(page_address(b->page) + b->off, truesize);
	if (unlikely(!skb)) {
		page_pool_recycle_direct(rxq->ring[0].pp, b->page);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return NULL;
	}
	skb_reserve(skb, data_off);
	__skb_put(skb, len);
	skb_mark_for_recycle(skb);
	return skb;
}

/* Copy a frame out of the RX data ring (rev 3+). */
static struct sk_buff *vmx_rx_from_data_ring(struct vmx_rxq *rxq, u32 idx,
					     u32 len)
{
	struct sk_buff *skb;

	skb = napi_alloc_skb(rxq->napi, len);
	if (unlikely(!skb)) {
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return NULL;
	}
	skb_put_data(skb, rxq->data_ring + idx * rxq->data_desc_size, len);
	vmx_rxq_add(rxq, VMX_RXS_DATA_RING, 1);
	return skb;
}

/*
 * Run the program on one frame and carry out its verdict. Inlined in the
 * poll: it runs for every frame while a program is attached.
 * @rxq: receiving queue
 * @prog: program, read once for this poll
 * @xdp: the frame, in a page_pool page of @rxq
 * @xtxq: TX queue for XDP_TX
 * @xdp_flags: accumulates what vmx_xdp_poll_done() must finish
 *
 * XDP_TX and XDP_REDIRECT consume the pages; every failure of theirs, and
 * XDP_ABORTED or an unknown verdict, is counted and returned as XDP_DROP.
 * On XDP_DROP and XDP_PASS the caller still owns the pages (a dropped
 * ring-0 page is posted again as it is, without a trip through its pool).
 *
 * Return: XDP_PASS, XDP_TX, XDP_REDIRECT or XDP_DROP.
 */
static __always_inline u32 vmx_xdp_run(struct vmx_rxq *rxq,
				       struct bpf_prog *prog,
				       struct xdp_buff *xdp,
				       struct vmx_txq *xtxq, u32 *xdp_flags)
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
		/*
		 * A program may grow a frame past what the MTU lets the
		 * device send (bpf_xdp_adjust_tail into a fragment's page);
		 * the kernel checks redirected frames so (xdp_ok_fwd_dev),
		 * nothing checks XDP_TX: refused here, counted.
		 */
		if (unlikely(xdp_get_buff_len(xdp) > nd->mtu + VLAN_ETH_HLEN)) {
			trace_xdp_exception(nd, prog, act);
			st = VMX_RXS_XDP_TX_ERR;
			goto drop;
		}
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
	/* the caller still owns the buffers: it may post them again as they are */
	act = XDP_DROP;
count:
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[VMX_RXS_XDP_PACKETS]++;
	rxq->stats.s[st]++;
	u64_stats_update_end(&rxq->stats.syncp);
	return act;
}

struct vmx_rx_ctx {
	struct bpf_prog *prog;
	struct vmx_txq *xtxq;
	u32 xdp_flags;
	bool frags;		/* the program takes multi-buffer frames */
};

/*
 * XDP_PASS: the frame in @xdp goes up as an skb built around its pages,
 * with the fragments and the metadata the program left (or is dropped and
 * counted when no skb could be had). Out of line: the verdicts that keep
 * the frame in the driver do not pay for it.
 */
static noinline void vmx_rx_xdp_pass(struct vmx_rxq *rxq,
				     struct xdp_buff *xdp,
				     const struct vmx_rx_comp *eop,
				     u32 lro_mss)
{
	u32 meta, nfrags = 0, fsize = 0, xflags = 0;
	struct skb_shared_info *sh;
	struct sk_buff *skb;

	/* build_skb() clears the shared info the fragments are listed in */
	if (unlikely(xdp_buff_has_frags(xdp))) {
		sh = xdp_get_shared_info_from_buff(xdp);
		nfrags = sh->nr_frags;
		fsize = sh->xdp_frags_size;
		xflags = vmx_xdp_skb_flags(xdp);
	}
	meta = xdp->data - xdp->data_meta;
	skb = napi_build_skb(xdp->data_hard_start, xdp->frame_sz);
	if (unlikely(!skb)) {
		vmx_xdp_buff_free(rxq, xdp, true);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return;
	}
	skb_reserve(skb, xdp->data - xdp->data_hard_start);
	__skb_put(skb, xdp->data_end - xdp->data);
	skb_mark_for_recycle(skb);
	if (meta)
		skb_metadata_set(skb, meta);
	if (nfrags)
		vmx_xdp_update_skb(skb, nfrags, fsize, nfrags * PAGE_SIZE,
				   xflags);
	__vmx_rx_deliver(rxq, skb, eop, lro_mss, true);
}

/*
 * Run XDP on the frame in @xb: a ring-0 page (or a copy of a data ring
 * entry) and, for a multi-buffer frame, the ring-1 pages in its shared
 * info. @eop is the completion that ended the frame, @lro_mss its LRO
 * segment size (0 if none). Returns the verdict
 * of vmx_xdp_run(): on XDP_DROP the pages are still the caller's; on
 * XDP_PASS the frame was delivered as an skb, with the fragments and the
 * metadata the program left (or dropped and counted when no skb could be
 * had). Inlined in each of its three callers: it runs for every frame.
 */
static __always_inline u32 vmx_rx_xdp_buff(struct vmx_rxq *rxq,
					   struct vmx_rx_ctx *c,
					   struct vmx_xdp_buff *xb,
					   const struct vmx_rx_comp *eop,
					   u32 lro_mss)
{
	struct xdp_buff *xdp = &xb->xdp;
	u32 act;

	xb->eop = eop;
	vmx_rx_count(rxq, likely(!xdp_buff_has_frags(xdp)) ?
			  xdp->data_end - xdp->data : xdp_get_buff_len(xdp));
	act = vmx_xdp_run(rxq, c->prog, xdp, c->xtxq, &c->xdp_flags);
	if (act == XDP_PASS)
		vmx_rx_xdp_pass(rxq, xdp, eop, lro_mss);
	return act;
}

/* Start an xdp_buff on @len bytes of a ring-0 page. */
static void vmx_rx_xb_init(struct vmx_rxq *rxq, struct vmx_xdp_buff *xb,
			   struct page *page, u32 len)
{
	xdp_init_buff(&xb->xdp, PAGE_SIZE, &rxq->xdp_rxq);
	xdp_prepare_buff(&xb->xdp, page_address(page), VMX_RX_XDP_HEADROOM,
			 len, true);
}

/*
 * XDP on a single-buffer frame of @len bytes in @page, taken from slot
 * @idx of ring 0: a dropped frame leaves the page in its slot, posted
 * again as it is (synced for the device as page_pool would). The frame
 * uses the queue's xdp_buff: no multi-buffer frame is open (a frame start
 * inside one is a bad completion).
 */
static void vmx_rx_xdp(struct vmx_rxq *rxq, struct vmx_rx_ctx *c, u32 idx,
		       struct page *page, u32 len,
		       const struct vmx_rx_comp *eop)
{
	struct vmx_rx_ring *r = &rxq->ring[0];

	vmx_rx_xb_init(rxq, &rxq->xb, page, len);
	if (vmx_rx_xdp_buff(rxq, c, &rxq->xb, eop, rxq->lro_mss) != XDP_DROP)
		return;
	r->buf[idx].page = page;
	if (unlikely(vmx_rx_need_sync(rxq)))
		dma_sync_single_range_for_device(&rxq->vp->pdev->dev,
						 page_pool_get_dma_addr(page),
						 r->dma_off, r->buf_len,
						 page_pool_get_dma_dir(r->pp));
}

/*
 * A frame that starts in the data ring: copied into a page for XDP. The
 * page of a dropped frame is kept for the next one.
 */
static void vmx_rx_data_ring_xdp(struct vmx_rxq *rxq, struct vmx_rx_ctx *c,
				 u32 idx, u32 len,
				 const struct vmx_rx_comp *rc)
{
	struct page *page = rxq->dr_page;

	if (page)
		rxq->dr_page = NULL;
	else
		page = page_pool_dev_alloc_pages(rxq->ring[0].pp);
	if (unlikely(!page)) {
		vmx_rxq_add(rxq, VMX_RXS_ALLOC_FAIL, 1);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return;
	}
	memcpy(page_address(page) + VMX_RX_XDP_HEADROOM,
	       rxq->data_ring + idx * rxq->data_desc_size, len);
	vmx_rxq_add(rxq, VMX_RXS_DATA_RING, 1);
	vmx_rx_xb_init(rxq, &rxq->xb, page, len);
	if (vmx_rx_xdp_buff(rxq, c, &rxq->xb, rc, 0) == XDP_DROP)
		rxq->dr_page = page;
}

static void vmx_rx_drop(struct vmx_rxq *rxq, enum vmx_rxq_stat why)
{
	if (rxq->skb) {
		dev_kfree_skb_any(rxq->skb);
		rxq->skb = NULL;
	}
	vmx_rxq_add(rxq, why, 1);
}

/*
 * Copy mode: a ring-1 buffer's @len bytes go into a page of the kernel's
 * own (never mapped); the buffer stays in its slot. Returns false when no
 * page could be had and the frame was dropped.
 */
static bool vmx_rx_copy_frag(struct vmx_rxq *rxq, const struct vmx_rx_buf *b,
			     u32 len)
{
	struct page *page = dev_alloc_page();

	if (likely(page)) {
		memcpy(page_address(page), page_address(b->page) + b->off, len);
		skb_add_rx_frag(rxq->skb, skb_shinfo(rxq->skb)->nr_frags,
				page, 0, len, PAGE_SIZE);
		vmx_rxq_add(rxq, VMX_RXS_COPIED, 1);
	} else {
		vmx_rx_drop(rxq, VMX_RXS_DROP);
	}
	dma_sync_single_range_for_device(vmx_dmadev(rxq), b->dma, 0, len,
					 DMA_FROM_DEVICE);
	return page;
}

/*
 * A ring-1 buffer of the multi-buffer XDP frame in rxq->xb: added as the
 * next fragment; at the end of the frame the program runs. A frame with
 * more buffers than the shared info holds is dropped (the rest of it is
 * recycled as the continuation of a dropped frame).
 */
static int vmx_rx_xb_add(struct vmx_rxq *rxq, struct vmx_rx_ctx *c,
			 const struct vmx_rx_comp *rc, struct page *page,
			 u32 off, u32 len)
{
	struct xdp_buff *xdp = &rxq->xb.xdp;
	u32 dw2 = le32_to_cpu(rc->dw[2]);
	bool eop = le32_to_cpu(rc->dw[0]) & VMX_RXC_EOP;
	struct skb_shared_info *sh;

	sh = xdp_get_shared_info_from_buff(xdp);
	if (!len) {
		page_pool_recycle_direct(rxq->ring[1].pp, page);
	} else if (sh->nr_frags == MAX_SKB_FRAGS &&
		   xdp_buff_has_frags(xdp)) {
		page_pool_recycle_direct(rxq->ring[1].pp, page);
		vmx_rx_xb_close(rxq, true);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return eop;
	} else {
		if (!xdp_buff_has_frags(xdp)) {
			sh->nr_frags = 0;
			sh->xdp_frags_size = 0;
			xdp_buff_set_frags_flag(xdp);
		}
		vmx_frag_fill(&sh->frags[sh->nr_frags++], page, off, len);
		sh->xdp_frags_size += len;
		if (page_is_pfmemalloc(page))
			xdp_buff_set_frag_pfmemalloc(xdp);
	}
	if (!eop)
		return 0;
	if (dw2 & VMX_RXC_ERR) {
		vmx_rx_xb_close(rxq, true);
		vmx_rxq_add(rxq, VMX_RXS_DEV_ERR, 1);
		return 1;
	}
	rxq->xb_open = false;
	if (xdp_buff_has_frags(xdp))
		vmx_rxq_add(rxq, VMX_RXS_XDP_FRAGS, 1);
	if (vmx_rx_xdp_buff(rxq, c, &rxq->xb, rc, 0) == XDP_DROP)
		vmx_xdp_buff_free(rxq, xdp, true);
	return 1;
}

/*
 * Zero-copy AF_XDP: run the program on @xdp, a UMEM buffer holding a whole
 * frame; the frame of XDP_PASS (or of a queue without a program) goes to
 * the stack as a copy, the buffer back to the pool. Returns that skb or
 * NULL.
 */
static struct sk_buff *vmx_xsk_run(struct vmx_rxq *rxq, struct vmx_rx_ctx *c,
				   struct xdp_buff *xdp,
				   const struct vmx_rx_comp *eop)
{
	struct sk_buff *skb;
	u32 meta, len;

	vmx_rx_count(rxq, xdp->data_end - xdp->data);
	if (c->prog) {
#ifdef VMX_HAVE_XDP_META
		/* the metadata kfuncs find the completion in the buffer's cb */
		XSK_CHECK_PRIV_TYPE(struct vmx_xdp_buff);
		((struct vmx_xdp_buff *)xdp)->eop = eop;
#endif
		switch (vmx_xdp_run(rxq, c->prog, xdp, c->xtxq,
				    &c->xdp_flags)) {
		case XDP_PASS:
			break;
		case XDP_DROP:
			xsk_buff_free(xdp);
			return NULL;
		default:
			return NULL;
		}
	}
	meta = xdp->data - xdp->data_meta;
	len = xdp->data_end - xdp->data;
	skb = napi_alloc_skb(rxq->napi, meta + len);
	if (likely(skb)) {
		skb_put_data(skb, xdp->data_meta, meta + len);
		if (meta) {
			__skb_pull(skb, meta);
			skb_metadata_set(skb, meta);
		}
	} else {
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
	}
	xsk_buff_free(xdp);
	return skb;
}

/*
 * A ring-0 completion of a zero-copy queue: @xdp holds @len bytes of a
 * frame. Frames are single-buffer here; one the device split anyway is
 * dropped with the rest of it (recycled as the continuation of a dropped
 * frame). Returns 1 when a frame ended here, else 0.
 */
static int vmx_xsk_rx(struct vmx_rxq *rxq, struct vmx_rx_ctx *c,
		      struct xdp_buff *xdp, u32 len,
		      const struct vmx_rx_comp *rc)
{
	bool eop = le32_to_cpu(rc->dw[0]) & VMX_RXC_EOP;
	u32 dw2 = le32_to_cpu(rc->dw[2]);
	struct sk_buff *skb;

	if (eop && !len) {
		/* the device skipped this buffer */
		xsk_buff_free(xdp);
		return 0;
	}
	if (unlikely(!eop || (dw2 & VMX_RXC_ERR))) {
		xsk_buff_free(xdp);
		vmx_rxq_add(rxq, eop ? VMX_RXS_DEV_ERR : VMX_RXS_DROP, 1);
		return eop;
	}
	xsk_buff_set_size(xdp, len);
	vmx_xsk_sync_for_cpu(xdp, rxq->xsk_pool);
	skb = vmx_xsk_run(rxq, c, xdp, rc);
	if (skb)
		vmx_rx_deliver(rxq, skb, rc, 0, true);
	return 1;
}

/*
 * A data ring frame on a zero-copy queue with a program: copied into @xdp,
 * the UMEM buffer of the ring 0 slot the device passed over (the refill
 * gives the slot a new one). A second buffer from the pool could be
 * missing: between a restart's ACTIVATE and the old rings' release the new
 * rings hold every buffer the application posted, and a frame dropped for
 * want of one would never reach XDP although the device delivered it.
 */
static struct sk_buff *vmx_xsk_data_ring(struct vmx_rxq *rxq,
					 struct vmx_rx_ctx *c,
					 struct xdp_buff *xdp, u32 idx,
					 u32 len, const struct vmx_rx_comp *rc)
{
	if (unlikely(len > xsk_pool_get_rx_frame_size(rxq->xsk_pool))) {
		xsk_buff_free(xdp);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
		return NULL;
	}
	xsk_buff_set_size(xdp, len);
	memcpy(xdp->data, rxq->data_ring + idx * rxq->data_desc_size, len);
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[VMX_RXS_DATA_RING]++;
	rxq->stats.s[VMX_RXS_XSK_COPIED]++;
	u64_stats_update_end(&rxq->stats.syncp);
	return vmx_xsk_run(rxq, c, xdp, rc);
}

/* A data ring completion: ring 0 slot @idx comes back unused. */
static int vmx_rx_data_ring(struct vmx_rxq *rxq, const struct vmx_rx_comp *rc,
			    struct vmx_rx_ctx *c)
{
	u32 dw0 = le32_to_cpu(rc->dw[0]), dw2 = le32_to_cpu(rc->dw[2]);
	u32 idx = FIELD_GET(VMX_RXC_IDX, dw0), len = FIELD_GET(VMX_RXC_LEN, dw2);
	struct vmx_rx_buf b;
	bool zc;

	if (!(dw0 & VMX_RXC_SOP) || !(dw0 & VMX_RXC_EOP) ||
	    len > rxq->data_desc_size) {
		vmx_rx_bad(rxq, "data ring len", len, rxq->data_desc_size);
		return -EIO;
	}
	/* zero-copy: the slot's own buffer takes the frame */
	zc = c->prog && rxq->ring[0].xsk && !(dw2 & VMX_RXC_ERR) &&
	     len >= ETH_HLEN;
	if (!vmx_rx_take(rxq, &rxq->ring[0], idx, !zc, &b))
		return -EIO;
	if (unlikely(zc && !b.xsk)) {
		vmx_rx_bad(rxq, "empty slot", idx, rxq->ring[0].size);
		return -EIO;
	}
	if (dw2 & VMX_RXC_ERR) {
		vmx_rx_drop(rxq, VMX_RXS_DEV_ERR);
		return 1;
	}
	if (unlikely(len < ETH_HLEN)) {
		vmx_rx_runt(rxq, len);
		return 1;
	}
	if (zc) {
		rxq->skb = vmx_xsk_data_ring(rxq, c, b.xsk, idx, len, rc);
		if (rxq->skb)
			vmx_rx_deliver(rxq, rxq->skb, rc, 0, true);
	} else if (c->prog) {
		vmx_rx_data_ring_xdp(rxq, c, idx, len, rc);
	} else {
		rxq->skb = vmx_rx_from_data_ring(rxq, idx, len);
		if (rxq->skb)
			vmx_rx_deliver(rxq, rxq->skb, rc, 0, false);
	}
	rxq->skb = NULL;
	return 1;
}

/*
 * Handle one completion (a copy the device can no longer change). Returns
 * 1 when a frame ended here, 0 otherwise, or -EIO when the completion made
 * no sense.
 */
static int vmx_rx_one(struct vmx_rxq *rxq, const struct vmx_rx_comp *rc,
		      struct vmx_rx_ctx *c)
{
	u32 nrxq = rxq->vp->qs.nq, dw0, dw2, dw3, idx, len, rqid;
	/* vmx_rx_take() fills it before any use: not zeroed per frame */
	struct vmx_rx_buf b __uninitialized;
	struct vmx_rx_ring *r;
	bool sop, eop;

	dw0 = le32_to_cpu(rc->dw[0]);
	dw2 = le32_to_cpu(rc->dw[2]);
	dw3 = le32_to_cpu(rc->dw[3]);
	idx = FIELD_GET(VMX_RXC_IDX, dw0);
	rqid = FIELD_GET(VMX_RXC_RQID, dw0);
	len = FIELD_GET(VMX_RXC_LEN, dw2);
	sop = dw0 & VMX_RXC_SOP;
	eop = dw0 & VMX_RXC_EOP;

	if (sop && (rxq->skb || rxq->xb_open)) {
		vmx_rx_bad(rxq, "sop inside frame", idx, rqid);
		return -EIO;
	}
	if (sop) {
		/* beside rxq->skb: the EOP may come in a later poll */
		rxq->lro_mss = 0;
		if (FIELD_GET(VMX_RXC_TYPE, dw3) == VMX_RXC_TYPE_LRO &&
		    rxq->vp->rev >= 2)
			rxq->lro_mss = FIELD_GET(VMX_RXC_LRO_MSS, dw3);
	}

	if (rqid == rxq->qid + 2 * nrxq && rxq->data_ring)
		return vmx_rx_data_ring(rxq, rc, c);
	/* ring 0 holds head buffers only: frames start there, never go on */
	if (rqid == rxq->qid && sop) {
		r = &rxq->ring[0];
	} else if (rqid == rxq->qid + nrxq && !sop) {
		r = &rxq->ring[1];
	} else {
		vmx_rx_bad(rxq, sop ? "ring id" : "ring id of a body", rqid,
			   nrxq);
		return -EIO;
	}
	if (len > r->buf_len) {
		vmx_rx_bad(rxq, "length", len, r->buf_len);
		return -EIO;
	}
	if (!sop && !rxq->skb && !rxq->xb_open) {
		/* continuation of a frame already dropped: recycle */
		if (!vmx_rx_take(rxq, r, idx, true, &b))
			return -EIO;
		return eop;
	}
	if (!vmx_rx_take(rxq, r, idx, rxq->copy, &b))
		return -EIO;
	if (!b.page) {
		vmx_rx_bad(rxq, "empty slot", idx, r->size);
		return -EIO;
	}
	if (r->xsk)
		return vmx_xsk_rx(rxq, c, b.xsk, len, rc);
	if (vmx_rx_need_sync(rxq))
		dma_sync_single_range_for_cpu(&rxq->vp->pdev->dev,
					      vmx_rx_buf_dma(rxq, r, &b),
					      r->dma_off, len,
					      rxq->copy ? DMA_FROM_DEVICE :
					      page_pool_get_dma_dir(r->pp));

	if (sop) {
		if (eop && len == 0) {
			/* the device skipped this buffer */
			vmx_rx_release(rxq, r, &b);
			return 0;
		}
		if (unlikely(len < ETH_HLEN)) {
			/*
			 * No Ethernet header in the head: nothing may parse
			 * it, and a 0-byte XDP frame would be sent as 16 KiB.
			 * The rest of the frame is recycled as a dropped one's.
			 */
			vmx_rx_release(rxq, r, &b);
			vmx_rx_runt(rxq, len);
			return eop;
		}
		if (eop && c->prog && !(dw2 & VMX_RXC_ERR)) {
			vmx_rx_xdp(rxq, c, idx, b.page, len, rc);
			return 1;
		}
		if (c->prog && c->frags && !eop) {
			/* the rest comes in ring-1 buffers */
			vmx_rx_xb_init(rxq, &rxq->xb, b.page, len);
			rxq->xb_open = true;
			return 0;
		}
		if (c->prog) {
			/*
			 * A frame in error, or multi-buffer for a program
			 * that does not take them: never reaches it.
			 */
			page_pool_recycle_direct(r->pp, b.page);
			vmx_rxq_add(rxq, eop ? VMX_RXS_DEV_ERR : VMX_RXS_DROP, 1);
			return eop;
		}
		rxq->skb = vmx_rx_build_head(rxq, &b, r->truesize,
					     rxq->headroom, len);
		if (!rxq->skb)
			return eop;
	} else if (rxq->xb_open) {
		return vmx_rx_xb_add(rxq, c, rc, b.page, b.off, len);
	} else if (len == 0 ||
		   skb_shinfo(rxq->skb)->nr_frags >= MAX_SKB_FRAGS) {
		vmx_rx_release(rxq, r, &b);
		if (len) {
			vmx_rx_drop(rxq, VMX_RXS_DROP);
			return eop;
		}
	} else if (rxq->copy) {
		if (!vmx_rx_copy_frag(rxq, &b, len))
			return eop;
	} else {
		skb_add_rx_frag(rxq->skb, skb_shinfo(rxq->skb)->nr_frags,
				b.page, b.off, len, r->truesize);
	}

	if (!eop)
		return 0;
	if (dw2 & VMX_RXC_ERR) {
		vmx_rx_drop(rxq, VMX_RXS_DEV_ERR);
		return 1;
	}
	/* the path of every frame received in ring buffers: no call */
	__vmx_rx_deliver(rxq, rxq->skb, rc, rxq->lro_mss, false);
	rxq->skb = NULL;
	return 1;
}

/**
 * vmx_rx_poll() - process RX completions of a queue
 * @rxq: queue
 * @budget: most frames to process
 *
 * Return: frames processed.
 */
int vmx_rx_poll(struct vmx_rxq *rxq, int budget)
{
	struct vmx_priv *vp = rxq->vp;
	bool short_of_pages = false;
	struct vmx_rx_ctx c = { };
	int done = 0, ret;

	if (unlikely(rxq->bad))
		return 0;

	/* queues of the stack layout ignore a program being attached */
	c.prog = rxq->xdp ? READ_ONCE(vp->xdp_prog) : NULL;
	if (c.prog) {
		c.xtxq = vmx_xdp_txq(vp, rxq->qid);
		c.frags = c.prog->aux->xdp_has_frags;
	}
	/*
	 * A multi-buffer frame opened in an earlier poll under a program
	 * that takes them ends under one that does too, or not at all: the
	 * program was detached or swapped for one without frags since.
	 */
	if (unlikely(rxq->xb_open && !c.frags)) {
		vmx_rx_xb_close(rxq, true);
		vmx_rxq_add(rxq, VMX_RXS_DROP, 1);
	}

	while (done < budget) {
		struct vmx_rx_comp *rc = &rxq->comp[rxq->comp_next];
		/* written whole below: no zeroing per frame (INIT_STACK_ALL_ZERO) */
		struct vmx_rx_comp copy __uninitialized;
		u32 i;

		if (!!(le32_to_cpu(READ_ONCE(rc->dw[3])) & VMX_RXC_GEN) !=
		    rxq->comp_gen)
			break;
		/* the rest of the completion only after its generation */
		dma_rmb();
		/* read once: the device cannot change what is checked */
		for (i = 0; i < ARRAY_SIZE(copy.dw); i++)
			copy.dw[i] = READ_ONCE(rc->dw[i]);
		ret = vmx_rx_one(rxq, &copy, &c);
		if (ret < 0)
			break;
		done += ret;
		rxq->comp_next = vmx_ring_next(rxq->comp_next, rxq->comp_size,
					       &rxq->comp_gen);
	}

	if (c.prog)
		vmx_xdp_poll_done(rxq, c.xtxq, c.xdp_flags);
	/* a quiesced device gets no buffers: vmx_down() drains it */
	if (rxq->bad || unlikely(!test_bit(VMX_S_UP, &vp->state)))
		return done;
	if (vmx_rx_refill(rxq, &rxq->ring[0], &short_of_pages) |
	    vmx_rx_refill(rxq, &rxq->ring[1], &short_of_pages))
		vmx_rxq_kick(rxq);
	/*
	 * A zero-copy ring short of buffers waits for the application's fill
	 * ring: with need_wakeup it says so and is woken (ndo_xsk_wakeup);
	 * without, the timer below polls for them.
	 */
	if (rxq->xsk_pool && xsk_uses_need_wakeup(rxq->xsk_pool)) {
		if (short_of_pages)
			xsk_set_rx_need_wakeup(rxq->xsk_pool);
		else
			xsk_clear_rx_need_wakeup(rxq->xsk_pool);
		short_of_pages = false;
	}
	/* no page now: try again soon rather than wait for a frame */
	if (unlikely(short_of_pages) && !timer_pending(&rxq->refill_timer))
		mod_timer(&rxq->refill_timer, jiffies + max(HZ / 100, 1));
	return done;
}

/**
 * vmx_rxq_read_stats() - consistent snapshot of a queue's counters
 * @rxq: queue
 * @out: VMX_RXS_NUM values
 */
void vmx_rxq_read_stats(struct vmx_rxq *rxq, u64 *out)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&rxq->stats.syncp);
		memcpy(out, rxq->stats.s, sizeof(rxq->stats.s));
	} while (u64_stats_fetch_retry(&rxq->stats.syncp, start));
}
