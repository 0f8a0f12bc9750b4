/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmx: driver-private structures shared by the vmx_*.c files.
 */
#ifndef _VMX_H_
#define _VMX_H_

#include <linux/bitfield.h>
#include <linux/bpf.h>
#include <linux/if_vlan.h>
#include <linux/io.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <net/xdp.h>
#include <net/xdp_sock_drv.h>

#include "vmx_compat.h"
#include "vmx_defs.h"

#define VMX_DRV_NAME		"vmx"
#define VMX_DRV_VERSION		0x01000000	/* 1.0.0.0, reported to the device */

#define VMX_DEF_TX_RING		512
#define VMX_DEF_RX_RING0	1024
#define VMX_DEF_RX_RING1	256
#define VMX_MIN_RING		32
#define VMX_DEF_QUEUES		8
#define VMX_NO_VEC		U32_MAX

/*
 * RX buffers come from page_pools, one per ring. A ring-0 buffer is a page
 * or, for the stack at an MTU that fits, half a page; its frame starts
 * after the headroom. Two layouts: for the stack (NET_SKB_PAD, mapped from
 * the device) and for XDP (XDP_PACKET_HEADROOM, whole pages mapped both
 * ways for XDP_TX). Ring-1 buffers are whole pages.
 */
#define VMX_RX_SKB_HEADROOM	NET_SKB_PAD
#define VMX_RX_XDP_HEADROOM	XDP_PACKET_HEADROOM
#define VMX_RX_TAILROOM		SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
#define VMX_RX_BUF_LEN(truesize, headroom) \
	((truesize) - (headroom) - VMX_RX_TAILROOM)
#define VMX_RX_HEAD_LEN(headroom) VMX_RX_BUF_LEN(PAGE_SIZE, headroom)
#define VMX_RX_BODY_LEN		min_t(u32, PAGE_SIZE, VMX_RX_MAX_BUF)
/* Buffers one frame may span: the head plus the skb fragment slots. */
#define VMX_RX_MAX_SG		(1 + MAX_SKB_FRAGS)

/* Largest MTU whose frame fits a single ring-0 buffer (XDP limit). */
#define VMX_XDP_MAX_MTU		(VMX_RX_HEAD_LEN(VMX_RX_XDP_HEADROOM) - \
				 ETH_HLEN - VLAN_HLEN)

/* XDP_TX frames sent with one doorbell */
#define VMX_XDP_TX_BATCH	NAPI_POLL_WEIGHT

/* TX doorbell deferral bound while the stack says more is coming. */
#define VMX_TX_DEFER_MAX	64
/* Longest vmx_down() waits for the device to send what it was handed. */
#define VMX_TX_SETTLE_MS	20
/* Descriptors one packet may need, plus room to keep the queue running. */
#define VMX_TX_WAKE_THRESH	(2 * VMX_TX_MAX_DESC_TSO)

enum vmx_rxq_stat {
	VMX_RXS_PACKETS,
	VMX_RXS_BYTES,
	VMX_RXS_ALLOC_FAIL,
	VMX_RXS_CSUM_OK,
	VMX_RXS_CSUM_NONE,
	VMX_RXS_LRO_PKTS,
	VMX_RXS_LRO_BYTES,
	VMX_RXS_DEV_ERR,	/* frames the device flagged as bad */
	VMX_RXS_DROP,		/* frames the driver could not deliver */
	VMX_RXS_BAD_DESC,	/* completions that made no sense */
	VMX_RXS_RUNT,		/* frames shorter than an Ethernet header */
	VMX_RXS_DATA_RING,	/* frames copied from the RX data ring */
	VMX_RXS_COPIED,		/* ring buffers copied out, page kept */
	VMX_RXS_XDP_PACKETS,
	VMX_RXS_XDP_DROP,
	VMX_RXS_XDP_PASS,
	VMX_RXS_XDP_TX,
	VMX_RXS_XDP_TX_ERR,
	VMX_RXS_XDP_REDIRECT,
	VMX_RXS_XDP_REDIRECT_ERR,
	VMX_RXS_XDP_ABORTED,
	VMX_RXS_XDP_FRAGS,	/* multi-buffer frames run through XDP */
	VMX_RXS_XSK_COPIED,	/* frames copied into AF_XDP buffers */
	VMX_RXS_INNER_UNUSED,	/* inner results (rev 4+) passed up unused */
	VMX_RXS_OOO,		/* completions ahead of a slot still pending */
	VMX_RXS_LRO_UNPARSED,	/* aggregates without usable headers */
	VMX_RXS_NUM
};

enum vmx_txq_stat {
	VMX_TXS_PACKETS,
	VMX_TXS_BYTES,
	VMX_TXS_TSO_PKTS,
	VMX_TXS_TSO_BYTES,
	VMX_TXS_CSUM,
	VMX_TXS_DROP,		/* could not map or linearize */
	VMX_TXS_MAP_ERR,	/* DMA mapping failures (also in DROP) */
	VMX_TXS_LINEARIZE,
	VMX_TXS_STOP,
	VMX_TXS_WAKE,
	VMX_TXS_DOORBELL,
	VMX_TXS_BAD_DESC,
	VMX_TXS_XDP_XMIT,
	VMX_TXS_XDP_XMIT_ERR,
	VMX_TXS_XSK_XMIT,	/* frames sent from an AF_XDP TX ring */
	VMX_TXS_XSK_BAD,	/* AF_XDP descriptors the device cannot send */
	VMX_TXS_TSO_TUNNEL,	/* Geneve/VXLAN TSO packets (rev 4+) */
	VMX_TXS_CSUM_TUNNEL,	/* Geneve/VXLAN inner checksum packets */
	VMX_TXS_NUM
};

struct vmx_rxq_stats {
	struct u64_stats_sync syncp;
	u64 s[VMX_RXS_NUM];
};

struct vmx_txq_stats {
	struct u64_stats_sync syncp;
	u64 s[VMX_TXS_NUM];
};

/*
 * A buffer posted to the device: @off bytes into @page, or on a zero-copy
 * AF_XDP queue's ring 0 an AF_XDP buffer (@xsk; NULL if none either way).
 */
struct vmx_rx_buf {
	union {
		struct page *page;
		struct xdp_buff *xsk;
	};
	u32 off;
	u8 done;		/* out-of-order: returned, not yet passed by cons */
	dma_addr_t dma;		/* copy mode: the driver's own mapping */
};

/* One ring the driver fills and the device consumes (RX ring 0 / 1). */
struct vmx_rx_ring {
	struct vmx_rx_desc *desc;
	dma_addr_t desc_pa;
	struct page_pool *pp;	/* this ring's buffers */
	bool pp_own;		/* @pp was made for this ring (not lent by ring 0) */
	struct vmx_rx_buf *buf;	/* buffer posted at each index */
	u32 truesize;		/* PAGE_SIZE or a fragment of a page */
	u32 size;
	u32 fill;		/* next index the driver writes */
	u32 cons;		/* next index the device will return */
	u32 fill_gen;		/* generation written at @fill */
	u32 buf_len;
	u32 dw2;		/* descriptor dword 2 but the generation bit */
	u16 dma_off;		/* frame offset in a buffer (ring 0: headroom) */
	bool xsk;		/* buffers from the queue's AF_XDP pool */
	bool ooo;		/* completions may come out of ring order */
};

struct vmx_priv;

/*
 * What an XDP program runs on: the buffer and the completion that ended
 * the frame, where the metadata kfuncs find the hash and the VLAN tag.
 */
struct vmx_xdp_buff {
	struct xdp_buff xdp;
	const struct vmx_rx_comp *eop;
};

struct vmx_rxq {
	struct vmx_priv *vp;
	struct napi_struct *napi;
	struct vmx_rx_ring ring[2];
	struct vmx_rx_comp *comp;
	dma_addr_t comp_pa;
	u32 comp_size;
	u32 comp_next;
	u32 comp_gen;
	u8 *data_ring;		/* rev 3+ small-frame ring, or NULL */
	dma_addr_t data_ring_pa;
	u32 data_desc_size;
	u16 qid;
	u16 headroom;		/* ring-0 frame offset in its page */
	bool xdp;		/* XDP layout: programs may run here */
	bool bad;		/* a bad completion was seen: reset pending */
	bool copy;		/* every mapping bounced: copy, keep buffers */
	bool started;		/* handed to the device once (vmx_rxq_start) */
	struct xsk_buff_pool *xsk_pool;	/* zero-copy AF_XDP: ring 0's buffers */
	enum dma_data_direction dma_dir;
	struct sk_buff *skb;	/* frame being assembled across polls */
	struct vmx_xdp_buff xb;	/* multi-buffer XDP frame being assembled */
	bool xb_open;		/* @xb holds a frame's first buffers */
	u32 lro_mss;		/* of the frame being assembled (type-4 SOP) */
	struct page *dr_page;	/* XDP: page of a dropped data-ring frame */
	struct xdp_rxq_info xdp_rxq;
	u32 xdp_tx_n;		/* XDP_TX frames collected in this poll */
	struct xdp_frame *xdp_tx[VMX_XDP_TX_BATCH];
	struct timer_list refill_timer;	/* retries a refill that found no pages */
	struct vmx_rxq_stats stats;
};

enum vmx_tx_buf_type {
	VMX_TXB_NONE,
	VMX_TXB_SKB_HEAD,	/* dma_map_single of linear data */
	VMX_TXB_SKB_FRAG,	/* skb_frag_dma_map */
	VMX_TXB_XDP_TX,		/* page_pool page, no unmap */
	VMX_TXB_XDP_XMIT,	/* xdp_frame mapped by ndo_xdp_xmit */
	VMX_TXB_XDP_XMIT_FRAG,	/* a fragment of one, mapped as a page */
	VMX_TXB_XSK,		/* AF_XDP buffer, mapped with its pool */
};

struct vmx_tx_buf {
	union {
		struct sk_buff *skb;	/* on the EOP slot of an skb */
		struct xdp_frame *xdpf;	/* on the slot of an XDP frame */
	};
	dma_addr_t dma;
	u32 len;
	u32 xsk_extra;		/* AF_XDP descriptors completed with this one */
	u8 type;
	bool eop;
};

struct vmx_txq {
	struct vmx_priv *vp;
	struct netdev_queue *nq;
	struct vmx_tx_desc *desc;
	dma_addr_t desc_pa;
	struct vmx_tx_comp *comp;
	dma_addr_t comp_pa;
	u8 *data_ring;
	dma_addr_t data_ring_pa;
	struct vmx_tx_buf *buf;
	u32 size;
	u32 data_desc_size;
	u32 fill;		/* producer index */
	u32 fill_gen;
	u32 posted;		/* end of what the device owns: fill once handed over */
	u32 clean;		/* oldest in-flight descriptor */
	u32 comp_next;
	u32 comp_gen;
	u32 deferred;		/* wire packets since the last doorbell */
	u32 kicked;		/* fill index at the last doorbell */
	u16 qid;
	bool xdp;		/* carries XDP_TX / ndo_xdp_xmit frames */
	bool bad;		/* a bad completion was seen: reset pending */
	spinlock_t xdp_lock;	/* ndo_xdp_xmit callers on this queue */
	struct xsk_buff_pool *xsk_pool;	/* zero-copy AF_XDP TX, XDP queues */
	u32 xsk_tail;		/* slot of the last AF_XDP frame posted */
	/*
	 * One writer each: @stats by the senders (under the queue's xmit or
	 * XDP lock), @cstats by the completion side (NAPI, or the XDP lock of
	 * a dedicated XDP queue). Readers add the two.
	 */
	struct vmx_txq_stats stats;
	struct vmx_txq_stats cstats;
};

/* A set of queues and ring sizes; swapped as a whole on reconfiguration. */
struct vmx_qset {
	u32 mtu;		/* given to the device, RX buffers sized to it */
	u32 nq;			/* stack queue pairs */
	u32 nxdp;		/* extra TX queues for XDP */
	u32 tx_size;
	u32 rx_size[2];
	bool xdp;		/* RX buffers laid out for XDP */
	struct vmx_txq *txq;	/* nq + nxdp */
	struct vmx_rxq *rxq;	/* nq */
};

struct vmx_qvec {
	struct napi_struct napi;
	struct vmx_priv *vp;
	u32 qid;		/* channel: its queues' index */
	u32 idx;		/* device interrupt index */
	bool active;		/* has queues in the current set */
	/*
	 * Mask mode auto: the device masked the vector when it fired (set
	 * by the handler, cleared by the unmask at the poll's end). A poll
	 * a wakeup or busy poll started leaves an unmasked vector alone.
	 */
	bool masked;
	char name[IFNAMSIZ + 16];
};

enum vmx_intr_type {
	VMX_IT_INTX,
	VMX_IT_MSI,
	VMX_IT_MSIX,
};

enum vmx_state {
	VMX_S_UP,		/* device activated, NAPI enabled */
	VMX_S_RESET_PENDING,
	VMX_S_STOPPING,		/* vmx_down() runs: no TX queue is woken */
	VMX_S_OPEN,		/* queues and IRQs held (ndo_open succeeded) */
};

#define VMX_DEV_STATS	(sizeof(struct vmx_tx_stats) / sizeof(__le64))

/* Counters kept across queue teardown so totals never go backwards. */
struct vmx_base_stats {
	u64 rx[VMX_RXS_NUM];
	u64 tx[VMX_TXS_NUM];
	u64 dev_tx[VMX_DEV_STATS];	/* struct vmx_tx_stats order */
	u64 dev_rx[VMX_DEV_STATS];	/* struct vmx_rx_stats order */
};

/* Offsets in the configuration page (vmx_priv.conf) */
#define VMX_CONF_RSS		0
#define VMX_CONF_COAL		256
#define VMX_CONF_PM		512

struct vmx_priv {
	struct net_device *netdev;
	struct pci_dev *pdev;
	u8 __iomem *pt;
	u8 __iomem *vd;

	struct vmx_shared *shared;
	dma_addr_t shared_pa;
	void *qdesc;		/* TX then RX queue descriptors */
	dma_addr_t qdesc_pa;
	u8 *mf_table;
	dma_addr_t mf_table_pa;

	spinlock_t cmd_lock;	/* CMD register and the shared area */
	u32 rev;
	u32 max_mtu;
	u32 max_queues;		/* queue pairs: device, vectors and CPUs */
	u32 nr_napi;		/* NAPI instances listed: the active channels */
	u32 max_tx_queues;	/* TX queues the device takes (stack + XDP) */
	u32 txdata_size;
	u32 rxdata_size;
	u32 caps;		/* rev 7+: DCR0 capabilities granted */
	u32 db_tx, db_rx, db_rx2;	/* doorbell offsets in BAR0 */

	enum vmx_intr_type intr_type;
	u8 mask_mode;
	u32 num_vecs;
	u32 event_vec;
	u32 xdp_vec;		/* XDP TX completions, or VMX_NO_VEC */
	bool intr_ext;		/* the device reads the extended block */
	char xdp_irq_name[IFNAMSIZ + 16];
	struct vmx_qvec qv[VMX_MAX_TX_QUEUES];

	struct vmx_qset qs;
	struct bpf_prog *xdp_prog;
	bool lro_before_xdp;
	/* zero-copy AF_XDP pools per channel, taken by the next queue set */
	struct xsk_buff_pool *xsk_pool[VMX_MAX_RX_QUEUES];
	u32 xsk_pools;		/* how many are set */
	/* what the pools point at while no queue set is live (no NAPI id) */
	struct xdp_rxq_info xsk_idle_rxq;

	unsigned long state;
	u64 resets;		/* done by the reset work item */
	struct work_struct reset_work;
	struct work_struct event_work;
	atomic_t events;
	u32 link_speed;
	/* configuration buffers the device reads: RSS, coalescing, PM */
	u8 *conf;
	dma_addr_t conf_pa;
	u8 rss_key[VMX_RSS_KEY_SIZE];
	u8 rss_ind[VMX_RSS_IND_SIZE];
	u32 rss_fields;		/* asked for with SET_RSS_FIELDS (rev 4+) */
	u32 rss_granted;	/* what GET_RSS_FIELDS said was granted */
	struct vmx_coal coal;	/* the user's scheme, if coal_set */
	bool coal_set;
	u32 wol;		/* WAKE_* the user enabled */

	/* device counters: last value seen per queue, and running totals */
	u64 dev_last_tx[VMX_MAX_TX_QUEUES][VMX_DEV_STATS];
	u64 dev_last_rx[VMX_MAX_RX_QUEUES][VMX_DEV_STATS];

	unsigned long active_vlans[BITS_TO_LONGS(VLAN_N_VID)];
	struct vmx_base_stats base;	/* under stats_lock */
	spinlock_t stats_lock;
};

/* UDP destination port of a tunnel the device offloads (rev 4+) */
static inline bool vmx_tunnel_port(__be16 port)
{
	return port == htons(VMX_PORT_VXLAN) ||
	       port == htons(VMX_PORT_VXLAN_LINUX) ||
	       port == htons(VMX_PORT_GENEVE);
}

static inline u32 vmx_rd_vd(struct vmx_priv *vp, u32 reg)
{
	return readl(vp->vd + reg);
}

static inline void vmx_wr_vd(struct vmx_priv *vp, u32 reg, u32 val)
{
	writel(val, vp->vd + reg);
}

static inline void vmx_wr_pt(struct vmx_priv *vp, u32 reg, u32 val)
{
	writel(val, vp->pt + reg);
}

/* The doorbells: where they are depends on the LARGE_BAR capability. */
static inline void vmx_db_txprod(struct vmx_priv *vp, u32 q, u32 val)
{
	vmx_wr_pt(vp, vp->db_tx + 8 * q, val);
}

static inline void vmx_db_rxprod(struct vmx_priv *vp, u32 q, u32 fill0,
				 u32 fill1)
{
	vmx_wr_pt(vp, vp->db_rx + 8 * q, fill0);
	vmx_wr_pt(vp, vp->db_rx2 + 8 * q, fill1);
}

static inline void vmx_mask_vec(struct vmx_priv *vp, u32 vec, bool mask)
{
	vmx_wr_pt(vp, VMX_REG_IMR(vec), mask);
}

static inline struct vmx_txq_desc *vmx_txq_desc(struct vmx_priv *vp, u32 q)
{
	return (struct vmx_txq_desc *)vp->qdesc + q;
}

static inline struct vmx_rxq_desc *vmx_rxq_desc(struct vmx_priv *vp, u32 q)
{
	/* RX queue descriptors follow the TX ones in use, without a gap */
	return (struct vmx_rxq_desc *)((struct vmx_txq_desc *)vp->qdesc +
				       vp->qs.nq + vp->qs.nxdp) + q;
}

/* Slots from @from up to @to on a ring of @size (both below @size). */
static inline u32 vmx_ring_dist(u32 to, u32 from, u32 size)
{
	return to >= from ? to - from : to + size - from;
}

/* The slot before @idx. */
static inline u32 vmx_ring_prev(u32 idx, u32 size)
{
	return idx ? idx - 1 : size - 1;
}

/* The slot after @idx (no generation to flip). */
static inline u32 vmx_ring_after(u32 idx, u32 size)
{
	return idx + 1 == size ? 0 : idx + 1;
}

static inline u32 vmx_ring_next(u32 idx, u32 size, u32 *gen)
{
	if (++idx == size) {
		idx = 0;
		*gen ^= 1;
	}
	return idx;
}

/* vmx_drv.c */
u32 vmx_cmd(struct vmx_priv *vp, u32 cmd);
void vmx_cmd_nr(struct vmx_priv *vp, u32 cmd);
void vmx_schedule_reset(struct vmx_priv *vp);
int vmx_reconfigure(struct vmx_priv *vp, const struct vmx_qset *want,
		    struct netlink_ext_ack *extack);
bool vmx_qset_shrink(struct vmx_qset *qs);
u32 vmx_xdp_queues(const struct vmx_priv *vp, u32 nq);

/* vmx_irq.c */
void vmx_mask_all(struct vmx_priv *vp, bool mask);
int vmx_alloc_vectors(struct vmx_priv *vp, u32 conf_type);
void vmx_free_irqs(struct vmx_priv *vp);
int vmx_request_irqs(struct vmx_priv *vp);
void vmx_sync_irqs(struct vmx_priv *vp);
void vmx_napi_list(struct vmx_priv *vp, u32 nq);

/* vmx_stats.c */
void vmx_fold_dev_stats(struct vmx_priv *vp, bool baseline);
void vmx_carry_queue_stats_locked(struct vmx_priv *vp, struct vmx_qset *qs,
				  const struct vmx_qset *next);
void vmx_qset_zero_stats(struct vmx_qset *qs);
void vmx_get_base_totals(struct vmx_priv *vp, u64 *rx, u64 *tx);
void vmx_get_totals(struct vmx_priv *vp, u64 *rx, u64 *tx);
void vmx_get_stats64(struct net_device *nd, struct rtnl_link_stats64 *st);
#ifdef VMX_HAVE_QSTATS
extern const struct netdev_stat_ops vmx_stat_ops;
#endif

/* vmx_rx.c */
int vmx_rxq_alloc(struct vmx_priv *vp, struct vmx_rxq *rxq, u16 qid,
		  const struct vmx_qset *qs);
void vmx_rxq_free(struct vmx_rxq *rxq);
void vmx_rxq_start(struct vmx_rxq *rxq);
void vmx_rxq_stop(struct vmx_rxq *rxq);
void vmx_rxq_write_desc(struct vmx_rxq *rxq, struct vmx_rxq_desc *d,
			u32 nrxq, u8 intr_idx);
int vmx_rx_poll(struct vmx_rxq *rxq, int budget);

/* vmx_tx.c */
int vmx_txq_alloc(struct vmx_priv *vp, struct vmx_txq *txq, u16 qid,
		  const struct vmx_qset *qs);
void vmx_txq_free(struct vmx_txq *txq);
void vmx_txq_start(struct vmx_txq *txq);
void vmx_txq_drain(struct vmx_txq *txq);
void vmx_txq_write_desc(struct vmx_txq *txq, struct vmx_txq_desc *d,
			u8 intr_idx);
int __vmx_tx_clean(struct vmx_txq *txq, int budget, bool netpoll);
void vmx_tx_doorbell(struct vmx_txq *txq);
netdev_tx_t vmx_start_xmit(struct sk_buff *skb, struct net_device *netdev);
netdev_features_t vmx_features_check(struct sk_buff *skb,
				     struct net_device *netdev,
				     netdev_features_t features);
u32 vmx_tx_avail(const struct vmx_txq *txq);
int vmx_tx_xdp_post(struct vmx_txq *txq, struct xdp_frame **frames, int n,
		    bool mapped);
void vmx_tx_xdp_handover(struct vmx_txq *txq, u32 first, u32 gen);

/* vmx_xdp.c */
#define VMX_XDP_FLAG_TX		BIT(0)	/* XDP_TX frames collected in the poll */
#define VMX_XDP_FLAG_REDIRECT	BIT(1)	/* xdp_do_flush() due */
int vmx_bpf(struct net_device *netdev, struct netdev_bpf *bpf);
int vmx_xdp_xmit(struct net_device *netdev, int n, struct xdp_frame **frames,
		 u32 flags);
void vmx_xdp_buff_free(struct vmx_rxq *rxq, struct xdp_buff *xdp, bool direct);
void vmx_xdp_poll_done(struct vmx_rxq *rxq, struct vmx_txq *xtxq,
		       u32 xdp_flags);
void vmx_xdp_tx_flush(struct vmx_rxq *rxq, struct vmx_txq *xtxq);
void vmx_xdp_txq_poll(struct vmx_txq *txq);
int vmx_xdp_check_mtu(struct vmx_priv *vp, int mtu,
		      struct netlink_ext_ack *extack);
void vmx_xdp_update_features(struct vmx_priv *vp);
#ifdef VMX_HAVE_XDP_META
extern const struct xdp_metadata_ops vmx_xdp_metadata_ops;
#endif
struct vmx_txq *vmx_xdp_txq(struct vmx_priv *vp, u32 rxqid);
int vmx_xsk_wakeup(struct net_device *netdev, u32 qid, u32 flags);
u32 vmx_xsk_xmit(struct vmx_txq *txq, u32 budget);
int vmx_xsk_check_mtu(struct vmx_priv *vp, u32 mtu);

/* vmx_ethtool.c */
void vmx_set_ethtool_ops(struct net_device *netdev);

/* completion rings */
/*
 * Is the queue's next completion the driver's? Inline: asked before every
 * reclaim and again after the poll re-enables its interrupt.
 */
static inline bool vmx_rx_pending(const struct vmx_rxq *rxq)
{
	u32 dw3 = le32_to_cpu(READ_ONCE(rxq->comp[rxq->comp_next].dw[3]));

	return !rxq->bad && !!(dw3 & VMX_RXC_GEN) == rxq->comp_gen;
}

/* Every slot but one posted: the slot after the last posted is the next due. */
static inline bool vmx_rx_ring_full(const struct vmx_rx_ring *r)
{
	return vmx_ring_after(r->fill, r->size) == r->cons;
}

/*
 * Nothing for vmx_rx_poll() to do: no completion, no frame left open, both
 * rings fully posted (a ring short of buffers, after a failed allocation
 * or for an AF_XDP fill ring, is refilled by the poll). Inline: most polls
 * of a TCP sender are for TX completions and find RX idle.
 */
static inline bool vmx_rx_idle(const struct vmx_rxq *rxq)
{
	return !vmx_rx_pending(rxq) && !rxq->xb_open &&
	       vmx_rx_ring_full(&rxq->ring[0]) &&
	       vmx_rx_ring_full(&rxq->ring[1]);
}

static inline bool vmx_tx_pending(const struct vmx_txq *txq)
{
	u32 dw3 = le32_to_cpu(READ_ONCE(txq->comp[txq->comp_next].dw[3]));

	return !txq->bad && !!(dw3 & VMX_TXC_GEN) == txq->comp_gen;
}

/*
 * Reclaim what the device completed (__vmx_tx_clean()); nothing completed
 * costs no call: nothing to free, no room made, no wake due.
 */
static inline int vmx_tx_clean(struct vmx_txq *txq, int budget, bool netpoll)
{
	return vmx_tx_pending(txq) ? __vmx_tx_clean(txq, budget, netpoll) : 0;
}

/* stats helpers */

static inline void vmx_rxq_add(struct vmx_rxq *rxq, enum vmx_rxq_stat s, u64 v)
{
	u64_stats_update_begin(&rxq->stats.syncp);
	rxq->stats.s[s] += v;
	u64_stats_update_end(&rxq->stats.syncp);
}

/* Sender side of a TX queue (xmit or XDP lock held). */
static inline void vmx_txq_add(struct vmx_txq *txq, enum vmx_txq_stat s, u64 v)
{
	u64_stats_update_begin(&txq->stats.syncp);
	txq->stats.s[s] += v;
	u64_stats_update_end(&txq->stats.syncp);
}

/* Completion side of a TX queue. */
static inline void vmx_txq_cadd(struct vmx_txq *txq, enum vmx_txq_stat s,
				u64 v)
{
	u64_stats_update_begin(&txq->cstats.syncp);
	txq->cstats.s[s] += v;
	u64_stats_update_end(&txq->cstats.syncp);
}

void vmx_rxq_read_stats(struct vmx_rxq *rxq, u64 *out);
void vmx_txq_read_stats(struct vmx_txq *txq, u64 *out);

/* vmx_drv.c: device configuration the ethtool side changes */
void vmx_rss_default(struct vmx_priv *vp);
void vmx_rss_update(struct vmx_priv *vp);
u32 vmx_rss_fields_apply(struct vmx_priv *vp);
void vmx_coal_apply(struct vmx_priv *vp);
void vmx_coal_read(struct vmx_priv *vp, struct vmx_coal *out);

#endif /* _VMX_H_ */
