// SPDX-License-Identifier: GPL-2.0
/*
 * xsk_rx - minimal AF_XDP copy-mode receiver for the vmx selftests.
 *
 * Usage: xsk_rx IFNAME QUEUE COUNT TIMEOUT_S
 *
 * Binds one AF_XDP socket (XDP_COPY) to IFNAME/QUEUE and puts it into the
 * XSKMAP of the XDP program already attached to IFNAME (driver mode), at
 * key QUEUE; no program is loaded here. Receives until COUNT frames came or
 * TIMEOUT_S passed, printing one line per frame: "<len> <hex bytes>".
 * Prints "xsk_rx: ready" on stderr once the socket is in the map, and
 * "xsk_rx: received N" at the end. Exit 0 when COUNT frames came.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#define NUM_FRAMES	XSK_RING_PROD__DEFAULT_NUM_DESCS
#define FRAME_SIZE	XSK_UMEM__DEFAULT_FRAME_SIZE

static int die(const char *what, int err)
{
	fprintf(stderr, "xsk_rx: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 2;
}

/* fd of the XSKMAP used by the driver-mode program on @ifindex */
static int find_xskmap(int ifindex)
{
	struct bpf_prog_info pinfo = {};
	__u32 len = sizeof(pinfo), ids[16], i, prog_id = 0;
	int pfd, mfd, err;

	err = bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &prog_id);
	if (err || !prog_id) {
		fprintf(stderr, "xsk_rx: no driver-mode XDP program on ifindex %d\n",
			ifindex);
		return -1;
	}
	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -1;
	pinfo.nr_map_ids = 16;
	pinfo.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &pinfo, &len)) {
		close(pfd);
		return -1;
	}
	close(pfd);
	for (i = 0; i < pinfo.nr_map_ids && i < 16; i++) {
		struct bpf_map_info minfo = {};
		__u32 mlen = sizeof(minfo);

		mfd = bpf_map_get_fd_by_id(ids[i]);
		if (mfd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(mfd, &minfo, &mlen) &&
		    minfo.type == BPF_MAP_TYPE_XSKMAP)
			return mfd;
		close(mfd);
	}
	fprintf(stderr, "xsk_rx: program %u has no XSKMAP\n", prog_id);
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = 0,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = XDP_FLAGS_DRV_MODE,
		.bind_flags = XDP_COPY,
	};
	/* zeroed: libxdp leaves cached_prod of the rings to the caller */
	struct xsk_ring_prod fq = {};
	struct xsk_ring_cons cq = {}, rx = {};
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	unsigned int queue, count, got = 0, i, idx;
	double end;
	void *buf;
	int ifindex, mapfd, err;

	if (argc != 5) {
		fprintf(stderr, "usage: %s IFNAME QUEUE COUNT TIMEOUT_S\n", argv[0]);
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex)
		return die(argv[1], errno);
	queue = atoi(argv[2]);
	count = atoi(argv[3]);
	end = now() + atof(argv[4]);

	mapfd = find_xskmap(ifindex);
	if (mapfd < 0)
		return 2;

	buf = mmap(NULL, NUM_FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return die("mmap", errno);
	err = xsk_umem__create(&umem, buf, NUM_FRAMES * FRAME_SIZE, &fq, &cq,
			       NULL);
	if (err)
		return die("xsk_umem__create", err);
	err = xsk_socket__create(&xsk, argv[1], queue, umem, &rx, NULL, &cfg);
	if (err)
		return die("xsk_socket__create (XDP_COPY)", err);

	/* the whole umem goes to the fill ring */
	if (xsk_ring_prod__reserve(&fq, NUM_FRAMES, &idx) != NUM_FRAMES)
		return die("fill ring reserve", EINVAL);
	for (i = 0; i < NUM_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (__u64)i * FRAME_SIZE;
	xsk_ring_prod__submit(&fq, NUM_FRAMES);

	err = xsk_socket__update_xskmap(xsk, mapfd);
	if (err)
		return die("xsk_socket__update_xskmap", err);
	fprintf(stderr, "xsk_rx: ready\n");

	while (got < count && now() < end) {
		struct pollfd pfd = { .fd = xsk_socket__fd(xsk), .events = POLLIN };
		unsigned int n, j, fidx;

		poll(&pfd, 1, 100);
		n = xsk_ring_cons__peek(&rx, 64, &idx);
		if (!n)
			continue;
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, idx + i);
			const unsigned char *p = xsk_umem__get_data(buf, d->addr);

			printf("%u ", d->len);
			for (j = 0; j < d->len; j++)
				printf("%02x", p[j]);
			printf("\n");
			got++;
		}
		/* give the buffers back */
		if (xsk_ring_prod__reserve(&fq, n, &fidx) == n) {
			for (i = 0; i < n; i++)
				*xsk_ring_prod__fill_addr(&fq, fidx + i) =
					xsk_umem__extract_addr(
						xsk_ring_cons__rx_desc(&rx, idx + i)->addr);
			xsk_ring_prod__submit(&fq, n);
		}
		xsk_ring_cons__release(&rx, n);
	}
	fflush(stdout);
	fprintf(stderr, "xsk_rx: received %u\n", got);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return got >= count ? 0 : 1;
}
