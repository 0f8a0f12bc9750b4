/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by xdp_mb.c (multi-buffer XDP, xdp_frags.sh) and xdp_mb.py (the
 * frames and the checks on the other side): UDP destination ports the
 * program acts on and what it does there. Every other frame passes.
 */
#ifndef VMX_MB_COMMON_H
#define VMX_MB_COMMON_H

#define PORT_MB_DROP	7791	/* XDP_DROP */
#define PORT_MB_TX	7792	/* swap MACs, XDP_TX */
#define PORT_MB_LEN	7793	/* count bpf_xdp_get_buff_len per length, XDP_DROP */
#define PORT_MB_BYTES	7794	/* invert two byte ranges across fragment
				 * boundaries (load/store_bytes), XDP_TX */
#define PORT_MB_TAIL	7795	/* bpf_xdp_adjust_tail by the delta the frame
				 * carries, XDP_TX */
#define PORT_MB_REDIRECT 7796	/* swap MACs, redirect through mb_tx_port[0] */
#define PORT_MB_CPUMAP	7797	/* redirect to the CPU in mb_cpu[0], then to
				 * the stack */
#define PORT_MB_TAIL_PASS 7798	/* bpf_xdp_adjust_tail by the delta, fix the
				 * IPv4/UDP lengths, XDP_PASS */

/*
 * Where the frame carries parameters and where the program writes back:
 * the 4 bytes after xdp_pkt.py's MAGIC, run and sequence number (Ethernet
 * 14 + IPv4 20 + UDP 8 + 12).
 */
#define MB_ARG_OFF	54
/* PORT_MB_BYTES: MB_RANGE bytes inverted around the linear part's end L
 * (from L - MB_RANGE / 2) and around L + MB_FRAG (when the frame is that
 * long); L is written at MB_ARG_OFF (u32, little endian). */
#define MB_RANGE	100
#define MB_FRAG		4096
/* PORT_MB_TAIL: a grown frame ends with MB_TAIL_MARK bytes of TAIL_FILL
 * (xdp_common.h), zeros before them */
#define MB_TAIL_MARK	8

/* mb_len: per bpf_xdp_get_buff_len value (key, u32), PORT_MB_LEN frames
 * seen (value, struct mb_len) */
struct mb_len {
	__u64 frames;
	__u64 linear;		/* data_end - data of the last one */
	__u64 mismatch;		/* buff_len != IPv4 total length + 14 */
};

#endif
