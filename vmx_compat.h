/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmx: the only place that knows about kernel version differences.
 * Supported: 6.1 LTS and 6.12 LTS (and what lies between).
 */
#ifndef _VMX_COMPAT_H_
#define _VMX_COMPAT_H_

#include <linux/version.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>
#include <linux/pci.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif

/* skb_gso_segment() moved to net/gso.h in 6.4 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#include <net/gso.h>
#endif

/* page_pool fragments needed a flag until 6.6 */
#ifdef PP_FLAG_PAGE_FRAG
#define VMX_PP_FLAG_FRAG	PP_FLAG_PAGE_FRAG
#else
#define VMX_PP_FLAG_FRAG	0
#endif

/* timer API renames */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define vmx_timer_container_of(var, t, f)	timer_container_of(var, t, f)
#else
#define vmx_timer_container_of(var, t, f)	from_timer(var, t, f)
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define vmx_timer_delete_sync(t)	timer_delete_sync(t)
#else
#define vmx_timer_delete_sync(t)	del_timer_sync(t)
#endif

/* netdev_stat_ops (per-queue stats over netlink) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define VMX_HAVE_QSTATS 1
#include <net/netdev_queues.h>
#endif

/* page_pool_params.napi and .netdev */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
#define vmx_pp_params_set_owner(pp, n, nd, q)	\
	do {					\
		(pp)->napi = (n);		\
		(pp)->netdev = (nd);		\
		(pp)->queue_idx = (q);		\
	} while (0)
/* a pool whose NAPI never used it, destroyed while that NAPI runs */
#define vmx_pp_forget_napi(pool)	WRITE_ONCE((pool)->p.napi, NULL)
#else
#define vmx_pp_params_set_owner(pp, n, nd, q)	do { } while (0)
#define vmx_pp_forget_napi(pool)		do { } while (0)
#endif

/* xdp_features appeared in 6.3 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define vmx_xdp_features_set(nd, f)	xdp_set_features_flag(nd, f)
#define vmx_xdp_features_clear(nd)	xdp_clear_features_flag(nd)
#define VMX_XDP_FEATURES	(NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT | \
				 NETDEV_XDP_ACT_NDO_XMIT | NETDEV_XDP_ACT_RX_SG | \
				 NETDEV_XDP_ACT_NDO_XMIT_SG | \
				 NETDEV_XDP_ACT_XSK_ZEROCOPY)
#define VMX_XDP_ACT_XSK_ZEROCOPY	NETDEV_XDP_ACT_XSK_ZEROCOPY
#else
#define vmx_xdp_features_set(nd, f)	do { } while (0)
#define vmx_xdp_features_clear(nd)	do { } while (0)
#define VMX_XDP_FEATURES	0
#define VMX_XDP_ACT_XSK_ZEROCOPY	0
#endif

/* xsk_buff_dma_sync_for_cpu() lost its pool argument in 6.10 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define vmx_xsk_sync_for_cpu(xdp, pool)	xsk_buff_dma_sync_for_cpu(xdp)
#else
#define vmx_xsk_sync_for_cpu(xdp, pool)	xsk_buff_dma_sync_for_cpu(xdp, pool)
#endif
/*
 * An skb from a multi-buffer xdp_buff: 6.18 replaced the pfmemalloc bool of
 * xdp_update_skb_shared_info() by the buffer's flags (built and tested on
 * 6.1, 6.12 and 7.3; the boundary is taken from the kernel's history).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define vmx_xdp_skb_flags(xdp)		xdp_buff_get_skb_flags(xdp)
#define vmx_xdp_update_skb(skb, n, size, truesize, flags) \
	xdp_update_skb_frags_info(skb, n, size, truesize, flags)
#else
#define vmx_xdp_skb_flags(xdp)		((u32)xdp_buff_is_frag_pfmemalloc(xdp))
#define vmx_xdp_update_skb(skb, n, size, truesize, flags) \
	xdp_update_skb_shared_info(skb, n, size, truesize, !!(flags))
#endif
/* XDP RX metadata kfuncs: hash with its type (6.4), VLAN tag (6.8) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define VMX_HAVE_XDP_META 1
#endif

/* skb_frag_fill_page_desc() appeared in 6.5 */
static inline void vmx_frag_fill(skb_frag_t *frag, struct page *page,
				 u32 off, u32 size)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	skb_frag_fill_page_desc(frag, page, off, size);
#else
	__skb_frag_set_page(frag, page);
	skb_frag_off_set(frag, off);
	skb_frag_size_set(frag, size);
#endif
}

/*
 * NAPI with a persistent per-queue config (6.13+): its id survives
 * napi_disable()/napi_enable(), so the ids stay in list order and a
 * socket's SO_INCOMING_NAPI_ID stays valid across a reconfiguration (7.3
 * warned in netdev_nl_napi_dump_one() after a channel change otherwise).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define vmx_napi_add(nd, napi, poll, idx) netif_napi_add_config(nd, napi, poll, idx)
#else
#define vmx_napi_add(nd, napi, poll, idx) netif_napi_add(nd, napi, poll)
#endif

/* NAPI <-> IRQ and queue <-> NAPI links for netlink introspection */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define vmx_napi_set_irq(napi, irq)	netif_napi_set_irq(napi, irq)
#define vmx_queue_set_napi(nd, q, t, napi) netif_queue_set_napi(nd, q, t, napi)
#define VMX_QTYPE_RX	NETDEV_QUEUE_TYPE_RX
#define VMX_QTYPE_TX	NETDEV_QUEUE_TYPE_TX
#else
#define vmx_napi_set_irq(napi, irq)	do { } while (0)
#define vmx_queue_set_napi(nd, q, t, napi) do { } while (0)
#define VMX_QTYPE_RX	0
#define VMX_QTYPE_TX	1
#endif

/* PCI_IRQ_LEGACY was renamed in 6.10 */
#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX PCI_IRQ_LEGACY
#endif

/*
 * Formatted extack messages appeared in 6.2. Before that the extack keeps
 * only a constant string: it gets @short_msg and the formatted text goes to
 * the kernel log.
 */
/* 6.8: get_rxfh/set_rxfh take struct ethtool_rxfh_param (and an extack) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define VMX_HAVE_RXFH_PARAM 1
#endif

#ifdef NL_SET_ERR_MSG_FMT_MOD
#define vmx_extack_fmt(extack, short_msg, fmt, args...) \
	NL_SET_ERR_MSG_FMT_MOD(extack, fmt, ##args)
#else
#define vmx_extack_fmt(extack, short_msg, fmt, args...)		\
	do {							\
		NL_SET_ERR_MSG_MOD(extack, short_msg);		\
		pr_err(KBUILD_MODNAME ": " fmt "\n", ##args);	\
	} while (0)
#endif

/*
 * Whether DMA syncs do anything for @dev: 6.11 tells (no bounce buffers,
 * coherent); before, the sync calls find out themselves.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define vmx_dma_need_sync(dev)	dma_dev_need_sync(dev)
#else
#define vmx_dma_need_sync(dev)	true
#endif

/*
 * 6.17 moved ethtool's rx-flow-hash (GRXFH/SRXFH) out of get/set_rxnfc
 * into get/set_rxfh_fields, 6.19 the RX ring count (GRXRINGS, which RSS
 * configuration asks first) into get_rx_ring_count; the core no longer
 * asks get_rxnfc for them (7.3 refuses ethtool -x, -X, -n rx-flow-hash
 * without). Versions taken from history; built here against 6.1, 6.12
 * and 7.3.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define VMX_HAVE_RXFH_FIELDS 1
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define VMX_HAVE_RX_RING_COUNT 1
#endif

#endif /* _VMX_COMPAT_H_ */
