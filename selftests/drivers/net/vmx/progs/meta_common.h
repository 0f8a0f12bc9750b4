/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by xdp_meta.c and tc_meta.c: the value written as XDP metadata
 * into frames to PORT_META (xdp_common.h) and tc_meta's counters.
 */
#ifndef VMX_META_COMMON_H
#define VMX_META_COMMON_H

#define META_MAGIC	0x21786d76	/* "vmx!" in memory on little endian */

/* tc_meta's counters (array map "meta_cnt", u64 values) */
#define META_CNT_OK	0	/* UDP to PORT_META with META_MAGIC in data_meta */
#define META_CNT_BAD	1	/* UDP to PORT_META without it */

#endif
