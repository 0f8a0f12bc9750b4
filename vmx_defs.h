/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmx: VMware vmxnet3 paravirtual NIC - device interface.
 *
 * Register offsets, commands, the driver shared area, queue descriptors and
 * ring descriptors as the device sees them. Everything here is little-endian
 * on the device side; descriptor words are accessed with FIELD_GET/FIELD_PREP
 * on the CPU-endian value of the __le word. No driver state lives here.
 */
#ifndef _VMX_DEFS_H_
#define _VMX_DEFS_H_

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

#define PCI_VENDOR_ID_VMWARE_VMX	0x15ad
#define PCI_DEVICE_ID_VMWARE_VMXNET3	0x07b0

/* BAR numbers */
#define VMX_BAR_PT		0	/* interrupt masks and doorbells */
#define VMX_BAR_VD		1	/* control registers */

/* BAR1 ("VD") registers, 32 bits wide on an 8-byte stride */
#define VMX_REG_VRRS		0x00	/* device revision select */
#define VMX_REG_UVRS		0x08	/* UPT version select */
#define VMX_REG_DSAL		0x10	/* shared area address, low */
#define VMX_REG_DSAH		0x18	/* shared area address, high */
#define VMX_REG_CMD		0x20	/* command / result */
#define VMX_REG_MACL		0x28	/* MAC bytes 0..3 */
#define VMX_REG_MACH		0x30	/* MAC bytes 4..5 */
#define VMX_REG_ICR		0x38	/* INTx cause */
#define VMX_REG_ECR		0x40	/* event acknowledge (write 1 to clear) */
#define VMX_REG_DCR0		0x48	/* rev 7+: capabilities offered/requested */
#define VMX_REG_PTCR0		0x88	/* rev 7+: pass-through capabilities */

/* DCR0 / PTCR0 capability bits (rev 7+) */
#define VMX_CAP_UDP_RSS		BIT(0)
#define VMX_CAP_ESP_RSS_IPV4	BIT(1)
#define VMX_CAP_GENEVE_CSUM	BIT(2)	/* inner checksum offload */
#define VMX_CAP_GENEVE_TSO	BIT(3)
#define VMX_CAP_VXLAN_CSUM	BIT(4)
#define VMX_CAP_VXLAN_TSO	BIT(5)
#define VMX_CAP_GENEVE_OUTER	BIT(6)	/* outer UDP checksum offload */
#define VMX_CAP_VXLAN_OUTER	BIT(7)
#define VMX_CAP_TUNNEL		GENMASK(7, 2)
#define VMX_CAP_ESP_RSS_IPV6	BIT(9)
#define VMX_CAP_LARGE_BAR	BIT(16)
#define VMX_CAP_OOORX_COMP	BIT(17)
#define VMX_CAP_PT_ALLOWED	BIT(31)	/* PTCR0: every capability allowed */

/* BAR0 ("PT") registers */
#define VMX_REG_IMR(i)		(0x000 + 8 * (i))	/* 1 = vector masked */
#define VMX_REG_TXPROD		0x600	/* + 8 * queue */
#define VMX_REG_RXPROD		0x800
#define VMX_REG_RXPROD2		0xa00
/* rev 7+ with LARGE_BAR granted: the doorbells move */
#define VMX_REG_TXPROD_LB	0x1000
#define VMX_REG_RXPROD_LB	0x1400
#define VMX_REG_RXPROD2_LB	0x1800

/* Commands written to VMX_REG_CMD */
enum vmx_cmd {
	VMX_CMD_ACTIVATE_DEV		= 0xcafe0000,
	VMX_CMD_QUIESCE_DEV		= 0xcafe0001,
	VMX_CMD_RESET_DEV		= 0xcafe0002,
	VMX_CMD_UPDATE_RX_MODE		= 0xcafe0003,
	VMX_CMD_UPDATE_MAC_FILTERS	= 0xcafe0004,
	VMX_CMD_UPDATE_VLAN_FILTERS	= 0xcafe0005,
	VMX_CMD_UPDATE_RSSIDT		= 0xcafe0006,
	VMX_CMD_UPDATE_PMCFG		= 0xcafe0008,
	VMX_CMD_UPDATE_FEATURE		= 0xcafe0009,
	VMX_CMD_SET_COALESCE		= 0xcafe000e,	/* rev 3+ */
	VMX_CMD_SET_RSS_FIELDS		= 0xcafe0010,	/* rev 4+ */
	VMX_CMD_SET_RING_BUFFER_SIZE	= 0xcafe0013,	/* rev 7+ */

	VMX_CMD_GET_QUEUE_STATUS	= 0xf00d0000,
	VMX_CMD_GET_STATS		= 0xf00d0001,
	VMX_CMD_GET_LINK		= 0xf00d0002,
	VMX_CMD_GET_CONF_INTR		= 0xf00d0008,
	VMX_CMD_GET_TXDATA_DESC_SIZE	= 0xf00d000a,	/* rev 3+ */
	VMX_CMD_GET_COALESCE		= 0xf00d000b,	/* rev 3+ */
	VMX_CMD_GET_RSS_FIELDS		= 0xf00d000c,	/* rev 4+ */
	VMX_CMD_GET_MAX_QUEUES_CONF	= 0xf00d000f,	/* rev 6+ */
	VMX_CMD_GET_DCR0_REG		= 0xf00d0012,	/* rev 7+ */
	VMX_CMD_GET_DISABLED_OFFLOADS	= 0xf00d0014,	/* rev 9 */
};

/* GET_LINK result */
#define VMX_LINK_UP		BIT(0)
#define VMX_LINK_SPEED		GENMASK(31, 16)	/* Mbit/s */

/* GET_CONF_INTR result */
#define VMX_CONF_INTR_TYPE	GENMASK(1, 0)
#define   VMX_INTR_TYPE_AUTO	0
#define   VMX_INTR_TYPE_INTX	1
#define   VMX_INTR_TYPE_MSI	2
#define   VMX_INTR_TYPE_MSIX	3
#define VMX_CONF_INTR_MASK	GENMASK(3, 2)
#define   VMX_IMM_AUTO		0
#define   VMX_IMM_ACTIVE	1
#define   VMX_IMM_LAZY		2

/* GET_TXDATA_DESC_SIZE result */
#define VMX_TXDATA_SIZE		GENMASK(15, 0)
#define VMX_RXDATA_SIZE		GENMASK(31, 16)	/* rev 9 */

/* GET_DISABLED_OFFLOADS result (rev 9) */
#define VMX_DISABLED_TSO	BIT(0)
#define VMX_DISABLED_LRO	BIT(1)

/* GET_MAX_QUEUES_CONF result */
#define VMX_MAXQ_TX		GENMASK(7, 0)
#define VMX_MAXQ_RX		GENMASK(15, 8)

/* Event bits in the shared area's ecr word and the ECR register */
#define VMX_ECR_RQERR		BIT(0)
#define VMX_ECR_TQERR		BIT(1)
#define VMX_ECR_LINK		BIT(2)
#define VMX_ECR_DIC		BIT(3)
#define VMX_ECR_DEBUG		BIT(4)

/* uptFeatures */
#define VMX_F_RXCSUM		BIT_ULL(0)
#define VMX_F_RSS		BIT_ULL(1)
#define VMX_F_RXVLAN		BIT_ULL(2)
#define VMX_F_LRO		BIT_ULL(3)
#define VMX_F_RXINNEROFLD	BIT_ULL(4)	/* rev 4+: inner RX offloads */

/* UDP destination ports of the tunnels the device offloads (rev 4+) */
#define VMX_PORT_VXLAN		4789
#define VMX_PORT_VXLAN_LINUX	8472
#define VMX_PORT_GENEVE		6081

/* rxMode */
#define VMX_RXM_UCAST		BIT(0)
#define VMX_RXM_MCAST		BIT(1)
#define VMX_RXM_BCAST		BIT(2)
#define VMX_RXM_ALL_MULTI	BIT(3)
#define VMX_RXM_PROMISC		BIT(4)

/* Guest OS descriptor (driverInfo.gos) */
#define VMX_GOS_BITS		GENMASK(1, 0)
#define   VMX_GOS_BITS_64	2
#define VMX_GOS_TYPE		GENMASK(5, 2)
#define   VMX_GOS_TYPE_LINUX	1

#define VMX_SHARED_MAGIC	0xbabefee1

/* Limits */
#define VMX_REV_MAX		9	/* highest revision vmx implements */
#define VMX_MAX_TX_QUEUES	32	/* rev 6+, extended interrupt block */
#define VMX_MAX_RX_QUEUES	32
#define VMX_LEGACY_TX_QUEUES	8	/* the legacy block's limits */
#define VMX_LEGACY_RX_QUEUES	16
#define VMX_MAX_INTRS		25
#define VMX_MAX_INTRS_EXT	65
#define VMX_RING_ALIGN		512
#define VMX_RING_SIZE_ALIGN	32
#define VMX_RING_MAX		4096
#define VMX_COMP_RING_MAX	8192
#define VMX_TX_MAX_BUF		16384	/* len 0 encodes 16384 */
#define VMX_TX_MAX_DESC_NONTSO	16
#define VMX_TX_MAX_DESC_TSO	24
#define VMX_TX_MAX_CSUM_OFF	1024
#define VMX_TX_MAX_HLEN		1023
#define VMX_TXDATA_DESC_SIZE	128	/* fixed before rev 3 */
#define VMX_TXDATA_DESC_MAX	2048
#define VMX_RXDATA_DESC_SIZE	128
#define VMX_RXDATA_DESC_MAX	2048
#define VMX_RX_MAX_BUF		16383
#define VMX_MIN_MTU		60
#define VMX_MAX_MTU		9000
#define VMX_MAX_MTU_REV6	9190
#define VMX_MF_TABLE_MAX	(0xffff / ETH_ALEN)

/* Shared area (Documentation/vmxnet3-interface.rst, "The shared area"), 800 bytes */
struct vmx_var_desc {
	__le32 conf_ver;
	__le32 conf_len;
	__le64 conf_pa;
};

/* RSS configuration buffer (rssConfDesc) */
#define VMX_RSS_CONF_LEN	176
#define VMX_RSS_KEY_SIZE	40
#define VMX_RSS_IND_SIZE	128
#define VMX_RSS_HASH_ALL	0x0f	/* IPv4, TCP/IPv4, IPv6, TCP/IPv6 */
#define VMX_RSS_FUNC_TOEPLITZ	1
#define VMX_RSS_OFF_KEY		8
#define VMX_RSS_OFF_IND		48

/* SET_RSS_FIELDS / GET_RSS_FIELDS: L4 protocols hashed (rev 4+) */
#define VMX_RSSF_TCP4		BIT(0)
#define VMX_RSSF_TCP6		BIT(1)
#define VMX_RSSF_UDP4		BIT(2)
#define VMX_RSSF_UDP6		BIT(3)
#define VMX_RSSF_ESP4		BIT(4)
#define VMX_RSSF_ESP6		BIT(5)	/* rev 6+ */
#define VMX_RSSF_DEFAULT	(VMX_RSSF_TCP4 | VMX_RSSF_TCP6)

/* Interrupt coalescing scheme (SET_COALESCE / GET_COALESCE, rev 3+) */
struct vmx_coal {
	__le32 mode;
	__le32 p[3];	/* rate: p[0] intr/s; static: TX, TX comp, RX depth */
};

#define VMX_COAL_DISABLED	0
#define VMX_COAL_ADAPTIVE	1
#define VMX_COAL_STATIC		2
#define VMX_COAL_RATE		3
#define VMX_COAL_RATE_MIN	100
#define VMX_COAL_RATE_MAX	100000
#define VMX_COAL_DEPTH_MAX	128

/* Power-management buffer (pmConfDesc, UPDATE_PMCFG) */
#define VMX_PM_CONF_LEN		920
#define VMX_PM_WAKE_MAGIC	BIT(0)

struct vmx_shared {
	__le32 magic;
	__le32 size;
	/* misc */
	__le32 drv_version;
	__le32 gos;
	__le32 rev_spt;
	__le32 upt_spt;
	__le64 upt_features;
	__le64 dd_pa;
	__le64 queue_desc_pa;
	__le32 dd_len;
	__le32 queue_desc_len;
	__le32 mtu;
	__le16 max_rx_sg;
	u8 num_tx_queues;
	u8 num_rx_queues;
	__le32 misc_rsvd[4];
	/* interrupt configuration */
	u8 auto_mask;
	u8 num_intrs;
	u8 event_intr_idx;
	u8 mod_levels[VMX_MAX_INTRS];
	__le32 intr_ctrl;
	__le32 intr_rsvd[2];
	/* RX filters */
	__le32 rx_mode;
	__le16 mf_table_len;
	__le16 rx_filter_rsvd;
	__le64 mf_table_pa;
	__le32 vf_table[4096 / 32];
	struct vmx_var_desc rss_conf;
	struct vmx_var_desc pm_conf;
	struct vmx_var_desc plugin_conf;
	__le32 ecr;
	__le32 rsvd;
	union {			/* parameters of some commands */
		struct vmx_var_desc desc;	/* SET/GET_COALESCE */
		__le32 rss_fields;		/* SET_RSS_FIELDS */
		__le16 buf_size[4];		/* SET_RING_BUFFER_SIZE */
		u8 raw[16];
	} cmd_info;
	/* rev 6+: read instead of the legacy block when more than
	 * VMX_LEGACY_TX_QUEUES TX or VMX_LEGACY_RX_QUEUES RX queues are used
	 */
	struct {
		u8 auto_mask;
		u8 num_intrs;
		u8 event_intr_idx;
		u8 rsvd;
		__le32 intr_ctrl;
		__le32 rsvd2;
		u8 mod_levels[VMX_MAX_INTRS_EXT];
		u8 rsvd3[3];
	} intr_ext;
};

#define VMX_INTR_CTRL_DISABLE_ALL	BIT(0)
#define VMX_IML_ADAPTIVE		8

static_assert(offsetof(struct vmx_shared, drv_version) == 8);
static_assert(offsetof(struct vmx_shared, upt_features) == 24);
static_assert(offsetof(struct vmx_shared, mtu) == 56);
static_assert(offsetof(struct vmx_shared, num_rx_queues) == 63);
static_assert(offsetof(struct vmx_shared, auto_mask) == 80);
static_assert(offsetof(struct vmx_shared, intr_ctrl) == 108);
static_assert(offsetof(struct vmx_shared, rx_mode) == 120);
static_assert(offsetof(struct vmx_shared, mf_table_pa) == 128);
static_assert(offsetof(struct vmx_shared, vf_table) == 136);
static_assert(offsetof(struct vmx_shared, rss_conf) == 648);
static_assert(offsetof(struct vmx_shared, ecr) == 696);
static_assert(offsetof(struct vmx_shared, cmd_info) == 704);
static_assert(offsetof(struct vmx_shared, intr_ext) == 720);
static_assert(offsetof(struct vmx_shared, intr_ext.intr_ctrl) == 724);
static_assert(offsetof(struct vmx_shared, intr_ext.mod_levels) == 732);
static_assert(sizeof(struct vmx_shared) == 800);

/* Device counters written by GET_STATS */
struct vmx_tx_stats {
	__le64 tso_pkts;
	__le64 tso_bytes;
	__le64 ucast_pkts;
	__le64 ucast_bytes;
	__le64 mcast_pkts;
	__le64 mcast_bytes;
	__le64 bcast_pkts;
	__le64 bcast_bytes;
	__le64 err_pkts;
	__le64 discard_pkts;
};

struct vmx_rx_stats {
	__le64 lro_pkts;
	__le64 lro_bytes;
	__le64 ucast_pkts;
	__le64 ucast_bytes;
	__le64 mcast_pkts;
	__le64 mcast_bytes;
	__le64 bcast_pkts;
	__le64 bcast_bytes;
	__le64 nobuf_pkts;
	__le64 err_pkts;
};

/* Queue descriptor table entries, 256 bytes each (section 6) */
struct vmx_txq_desc {
	__le32 num_deferred;		/* driver, device may reset */
	__le32 threshold;		/* device */
	__le64 ctrl_rsvd;
	__le64 ring_pa;
	__le64 data_ring_pa;
	__le64 comp_ring_pa;
	__le64 dd_pa;
	__le64 conf_rsvd;
	__le32 ring_size;
	__le32 data_ring_size;
	__le32 comp_ring_size;
	__le32 dd_len;
	u8 intr_idx;
	u8 conf_rsvd1;
	__le16 data_desc_size;		/* rev 3+ */
	__le32 conf_rsvd2;
	u8 stopped;			/* GET_QUEUE_STATUS */
	u8 status_rsvd[3];
	__le32 error;
	struct vmx_tx_stats stats;	/* GET_STATS */
	u8 pad[88];
};

struct vmx_rxq_desc {
	u8 update_prod;			/* device: doorbells wanted */
	u8 ctrl_rsvd[15];
	__le64 ring_pa[2];
	__le64 comp_ring_pa;
	__le64 dd_pa;
	__le64 data_ring_pa;		/* rev 3+ */
	__le32 ring_size[2];
	__le32 comp_ring_size;
	__le32 dd_len;
	u8 intr_idx;
	u8 conf_rsvd1;
	__le16 data_desc_size;		/* rev 3+, 0 = no RX data ring */
	__le32 conf_rsvd2;
	u8 stopped;
	u8 status_rsvd[3];
	__le32 error;
	struct vmx_rx_stats stats;
	u8 pad[88];
};

static_assert(offsetof(struct vmx_txq_desc, ring_pa) == 16);
static_assert(offsetof(struct vmx_txq_desc, ring_size) == 56);
static_assert(offsetof(struct vmx_txq_desc, intr_idx) == 72);
static_assert(offsetof(struct vmx_txq_desc, data_desc_size) == 74);
static_assert(offsetof(struct vmx_txq_desc, stopped) == 80);
static_assert(offsetof(struct vmx_txq_desc, stats) == 88);
static_assert(sizeof(struct vmx_txq_desc) == 256);
static_assert(offsetof(struct vmx_rxq_desc, ring_pa) == 16);
static_assert(offsetof(struct vmx_rxq_desc, data_ring_pa) == 48);
static_assert(offsetof(struct vmx_rxq_desc, ring_size) == 56);
static_assert(offsetof(struct vmx_rxq_desc, intr_idx) == 72);
static_assert(offsetof(struct vmx_rxq_desc, stats) == 88);
static_assert(sizeof(struct vmx_rxq_desc) == 256);

/* TX descriptor: addr, dword 2, dword 3 */
struct vmx_tx_desc {
	__le64 addr;
	__le32 dw2;
	__le32 dw3;
};

#define VMX_TXD_LEN		GENMASK(13, 0)
#define VMX_TXD_GEN		BIT(14)
#define VMX_TXD_OCO		BIT(15)	/* rev 4+: outer UDP checksum too */
#define VMX_TXD_DTYPE		BIT(16)
#define VMX_TXD_EXT1		BIT(17)	/* rev 7+: offload of inner headers */
#define VMX_TXD_MSSCOF		GENMASK(31, 18)
#define VMX_TXD_HLEN		GENMASK(9, 0)
#define VMX_TXD_OM		GENMASK(11, 10)
#define   VMX_OM_NONE		0
#define   VMX_OM_ENCAP		1	/* rev 4..6: tunnel, inner offload */
#define   VMX_OM_CSUM		2
#define   VMX_OM_TSO		3
#define VMX_TXD_EOP		BIT(12)
#define VMX_TXD_CQ		BIT(13)
#define VMX_TXD_TI		BIT(15)
#define VMX_TXD_TCI		GENMASK(31, 16)

/* TX completion: four dwords */
struct vmx_tx_comp {
	__le32 dw[4];
};

#define VMX_TXC_IDX		GENMASK(11, 0)	/* dword 0 */
#define VMX_TXC_GEN		BIT(31)		/* dword 3 */

/* RX descriptor */
struct vmx_rx_desc {
	__le64 addr;
	__le32 dw2;
	__le32 dw3;
};

#define VMX_RXD_LEN		GENMASK(13, 0)
#define VMX_RXD_BTYPE		BIT(14)
#define   VMX_RXD_BTYPE_HEAD	0
#define   VMX_RXD_BTYPE_BODY	1
#define VMX_RXD_GEN		BIT(31)

/* RX completion (types 3 and 4; QEMU writes type 0) */
struct vmx_rx_comp {
	__le32 dw[4];
};

#define VMX_RXC_IDX		GENMASK(11, 0)	/* dword 0 */
#define VMX_RXC_INNER_FLAGS	BIT(12)	/* rev 4+: flags of the inner headers */
#define VMX_RXC_INNER		BIT(13)	/* rev 4+: results of the inner ones */
#define VMX_RXC_EOP		BIT(14)
#define VMX_RXC_SOP		BIT(15)
#define VMX_RXC_RQID		GENMASK(25, 16)
#define VMX_RXC_RSS_TYPE	GENMASK(29, 26)
#define   VMX_RSS_NONE		0
#define   VMX_RSS_IPV4		1
#define   VMX_RSS_TCP_IPV4	2
#define   VMX_RSS_IPV6		3
#define   VMX_RSS_TCP_IPV6	4
#define   VMX_RSS_UDP_IPV4	5
#define   VMX_RSS_UDP_IPV6	6
#define VMX_RXC_CNC		BIT(30)
#define VMX_RXC_LRO_SEGS	GENMASK(7, 0)	/* dword 1, type 4 */
#define VMX_RXC_LEN		GENMASK(13, 0)	/* dword 2 */
#define VMX_RXC_ERR		BIT(14)
#define VMX_RXC_TS		BIT(15)
#define VMX_RXC_TCI		GENMASK(31, 16)
#define VMX_RXC_CSUM		GENMASK(15, 0)	/* dword 3 */
#define VMX_RXC_LRO_MSS		GENMASK(15, 0)	/* dword 3, type 4 */
#define VMX_RXC_TUC		BIT(16)
#define VMX_RXC_UDP		BIT(17)
#define VMX_RXC_TCP		BIT(18)
#define VMX_RXC_IPC		BIT(19)
#define VMX_RXC_V6		BIT(20)
#define VMX_RXC_V4		BIT(21)
#define VMX_RXC_FRG		BIT(22)
#define VMX_RXC_FCS		BIT(23)
#define VMX_RXC_TYPE		GENMASK(30, 24)
#define   VMX_RXC_TYPE_LRO	4
#define VMX_RXC_GEN		BIT(31)

#endif /* _VMX_DEFS_H_ */
