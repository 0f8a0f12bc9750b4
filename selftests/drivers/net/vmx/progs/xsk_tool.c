// SPDX-License-Identifier: GPL-2.0
/*
 * xsk_tool - the AF_XDP socket of the vmx selftests.
 *
 * Usage: xsk_tool [-m copy|zc] [-w on|off] [-f CHUNK] [-n COUNT] [-t SECS]
 *                 [-b BUDGET [-s MS]] [-q] [-o] IFNAME QUEUE rx|tx|fwd
 *
 *   -m  bind mode: copy (XDP_COPY, default) or zc (XDP_ZEROCOPY)
 *   -w  need_wakeup (XDP_USE_NEED_WAKEUP): on (default) or off
 *   -f  UMEM chunk (frame) size, default 4096
 *   -n  frames to receive (rx), to forward (fwd); 0: until SECS or a signal
 *   -t  give up after SECS seconds (default 20)
 *   -b  busy polling with this NAPI budget (see below)
 *   -s  with -b: the busy polls of rx/fwd MS milliseconds apart, each
 *       also a sendto() (see below)
 *   -q  rx: print no frames, only the count at the end (rxdrop: each
 *       chunk goes straight back to the fill ring; the benchmark's
 *       AF_XDP cells, tools/bench-guest.sh)
 *   -o  tx: also print the order of the completions, "xsk: completion
 *       order: I I ...": for each address the completion ring gave back,
 *       the number of the frame (0 for stdin's first line) whose chunk
 *       it is ("0x<addr>" for an address that is no frame's)
 *
 * rx   print each frame received as "<len> <hex bytes>" on stdout (the
 *      lines of a batch written out at once); "xsk: received N" on stderr
 *      at the end; ended by SIGINT/SIGTERM it still takes the frames
 *      already on its RX ring
 * tx   send the frames given on stdin, one per line as "<hex>" or
 *      "<len> <hex>", wait for their completions; "xsk: sent N completed N".
 *      The descriptor's length is <len> where one is given, whatever the
 *      hex bytes' count (the chunk holds them, zero-padded up to <len>):
 *      "0 <hex>" sends a descriptor of length 0, which a vmxnet3 device
 *      cannot send (0 means 16 KiB to it). Descriptors the kernel refuses
 *      (XDP_STATISTICS tx_invalid_descs: a length of 0 from 6.x on, one
 *      beyond the chunk) are never completed: they are not waited for,
 *      and the line ends in ", refused by the kernel N"
 * fwd  l2fwd: swap the MACs of every frame received and send it back out
 *      of the same socket; "xsk: received N forwarded N completed N"
 *
 * rx and fwd put the socket into the XSKMAP of the driver-mode XDP program
 * already attached to IFNAME, at key QUEUE (no program is loaded here:
 * the tests attach progs/xdp_redirect_xsk.o). Once bound (and in the map)
 * the tool prints "xsk: ready (zero-copy|copy, need_wakeup on|off)" on
 * stderr, read back from the socket (XDP_OPTIONS). SIGINT/SIGTERM end it
 * early with the summary line. A socket error (the device went away:
 * ENETDOWN) ends it with "xsk: socket error: ...". SIGUSR1 (rx, fwd) puts
 * the socket into the XSKMAP of the program attached to IFNAME now (after
 * a detach and a new attach, whose map is a new one) and prints "xsk:
 * remapped" ("xsk: remap failed" when there is no such program).
 *
 * With need_wakeup on, the driver is kicked (recvfrom/sendto) only when it
 * asks for it through the ring flags; with it off, RX is never kicked and
 * TX is kicked after every batch.
 *
 * Busy polling (-b): the socket gets SO_PREFER_BUSY_POLL, SO_BUSY_POLL
 * (BUSY_POLL_US) and SO_BUSY_POLL_BUDGET, and the device IFNAME's
 * napi_defer_hard_irqs and gro_flush_timeout (sysfs) are set to
 * DEFER_HARD_IRQS and FLUSH_TIMEOUT_NS until the tool ends (then put back
 * as found): the NAPI of the queue is run from this process, by a
 * recvfrom(MSG_DONTWAIT) whenever the RX ring is empty (rx, fwd) and a
 * sendto after every TX batch, and the device's interrupt stays masked
 * as long as that happens more often than the flush timeout. The ready
 * line then ends in ", busy poll on (budget B)"; at the end
 * "xsk: busy poll: N recvfrom calls".
 *
 * With -s MS the rx/fwd loop waits MS ms between two busy polls (instead
 * of spinning) and each one is also a sendto(MSG_DONTWAIT): the TX side's
 * busy poll, which on a zero-copy socket reads the NAPI id of the pool's
 * xdp_rxq_info (what the driver registered for the queue), whatever the
 * TX ring holds. sendto fails with ENETDOWN while the interface is down;
 * such failures do not end the tool. At the end "xsk: sendto: N calls, N
 * ENETDOWN, N other errors". A long-lived socket across a device's
 * suspend, resume and close without burning a vCPU.
 *
 * rx and fwd end with "xsk: napi id N": SO_INCOMING_NAPI_ID of the socket
 * (the NAPI instance its frames came from; 0 when none is known).
 *
 * Exit status: 0 when COUNT frames were received/forwarded (tx: every
 * frame completed), 1 when fewer, 2 on a setup error (e.g. the bind was
 * refused: "xsk: bind (zc): <error>"), 3 on a socket error.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#define RING_SIZE	XSK_RING_PROD__DEFAULT_NUM_DESCS
/* the first RING_SIZE chunks go to the fill ring, the rest to tx */
#define NUM_FRAMES	(2 * RING_SIZE)
#define BATCH		64

/* busy polling (-b): the socket's SO_BUSY_POLL, and the device's settings
 * that keep its interrupt masked between two polls of the application
 * (up to twice 2 ms without one: generous, for slow emulated guests whose
 * vCPUs take turns) */
#define BUSY_POLL_US		20
#define DEFER_HARD_IRQS		2
#define FLUSH_TIMEOUT_NS	2000000

#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL		46
#endif
#ifndef SO_INCOMING_NAPI_ID
#define SO_INCOMING_NAPI_ID	56
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif

static struct xsk_ring_prod fq, tx;
static struct xsk_ring_cons cq, rx;
static struct xsk_socket *xsk;
static void *area;
static unsigned int chunk = XSK_UMEM__DEFAULT_FRAME_SIZE;
static int wakeup = 1;
static int busy_budget;		/* 0: no busy polling */
static unsigned long busy_calls;
static int send_ms;		/* -s: pace of the busy polls, each a sendto too */
static unsigned long send_calls, send_down, send_err;
static volatile sig_atomic_t stop;
static volatile sig_atomic_t remap;	/* SIGUSR1 */
static int dev_ifindex;
static int sockerr;
static int quiet;		/* -q: rx prints no frames */
static int show_order;		/* -o */
static __u64 comp_log[RING_SIZE];	/* -o: the addresses completed, in order */
static unsigned int comp_logged;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	remap = 1;
}

static int die(const char *what, int err)
{
	fprintf(stderr, "xsk: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 2;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* fd of the XSKMAP used by the driver-mode program on @ifindex */
static int find_xskmap(int ifindex)
{
	struct bpf_prog_info pinfo = {};
	__u32 len = sizeof(pinfo), ids[16], i, prog_id = 0;
	int pfd, mfd, err;

	err = bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &prog_id);
	if (err || !prog_id) {
		fprintf(stderr, "xsk: no driver-mode XDP program on ifindex %d\n",
			ifindex);
		return -1;
	}
	pfd = bpf_prog_get_fd_by_id(prog_id);
	if (pfd < 0)
		return -1;
	pinfo.nr_map_ids = 16;
	pinfo.map_ids = (__u64)(unsigned long)ids;
	err = bpf_obj_get_info_by_fd(pfd, &pinfo, &len);
	close(pfd);
	if (err)
		return -1;
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
	fprintf(stderr, "xsk: program %u has no XSKMAP\n", prog_id);
	return -1;
}

/* SIGUSR1 came: into the XSKMAP of the program attached now */
static void remap_check(void)
{
	int fd;

	if (!remap)
		return;
	remap = 0;
	fd = find_xskmap(dev_ifindex);
	if (fd >= 0 && !xsk_socket__update_xskmap(xsk, fd))
		fprintf(stderr, "xsk: remapped\n");
	else
		fprintf(stderr, "xsk: remap failed\n");
	if (fd >= 0)
		close(fd);
}

/* the socket's error (ENETDOWN once the device is gone), or 0; kept,
 * since reading SO_ERROR clears it */
static int sock_error(void)
{
	socklen_t len = sizeof(sockerr);

	if (!sockerr &&
	    getsockopt(xsk_socket__fd(xsk), SOL_SOCKET, SO_ERROR, &sockerr, &len))
		sockerr = errno;
	return sockerr;
}

/* wait for RX (up to 100 ms), kicking the driver when it asks to; with
 * busy polling, run the queue's NAPI once from here instead */
static void rx_wait(void)
{
	struct pollfd pfd = { .fd = xsk_socket__fd(xsk), .events = POLLIN };

	if (busy_budget) {
		recvfrom(pfd.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		busy_calls++;
		if (send_ms) {
			send_calls++;
			if (sendto(pfd.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
				if (errno == ENETDOWN)
					send_down++;
				else if (errno != EAGAIN && errno != EBUSY &&
					 errno != ENOBUFS)
					send_err++;
			}
			poll(NULL, 0, send_ms);
		}
		return;
	}
	if (wakeup && xsk_ring_prod__needs_wakeup(&fq))
		recvfrom(pfd.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	poll(&pfd, 1, 100);
}

static void tx_kick(void)
{
	if (busy_budget || !wakeup || xsk_ring_prod__needs_wakeup(&tx))
		sendto(xsk_socket__fd(xsk), NULL, 0, MSG_DONTWAIT, NULL, 0);
}

/* give chunks back to the fill ring (all or nothing: it has room for all) */
static void refill(const __u64 *addrs, unsigned int n)
{
	unsigned int i, idx;

	while (xsk_ring_prod__reserve(&fq, n, &idx) != n)
		;
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = addrs[i];
	xsk_ring_prod__submit(&fq, n);
}

/* completed TX chunks; fwd gives them back to the fill ring */
static unsigned int reap(int to_fill)
{
	__u64 addrs[BATCH];
	unsigned int n, i, idx;

	n = xsk_ring_cons__peek(&cq, BATCH, &idx);
	for (i = 0; i < n; i++) {
		addrs[i] = *xsk_ring_cons__comp_addr(&cq, idx + i);
		if (comp_logged < RING_SIZE)
			comp_log[comp_logged++] = addrs[i];
	}
	xsk_ring_cons__release(&cq, n);
	if (to_fill && n)
		refill(addrs, n);
	return n;
}

/* print and give back what the RX ring holds (up to BATCH); how many */
static unsigned int rx_batch(void)
{
	unsigned int n, i, j, idx;
	__u64 addrs[BATCH];

	n = xsk_ring_cons__peek(&rx, BATCH, &idx);
	for (i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, idx + i);
		const unsigned char *p = xsk_umem__get_data(area, d->addr);

		addrs[i] = xsk_umem__extract_addr(d->addr);
		if (quiet)
			continue;
		printf("%u ", d->len);
		for (j = 0; j < d->len; j++)
			printf("%02x", p[j]);
		printf("\n");
	}
	if (n) {
		xsk_ring_cons__release(&rx, n);
		refill(addrs, n);
		/* whole lines out per batch: a test may count them meanwhile */
		fflush(stdout);
	}
	return n;
}

static int do_rx(unsigned int count, double end)
{
	unsigned int got = 0, n;

	while (!stop && (!count || got < count) && now() < end) {
		remap_check();
		n = rx_batch();
		if (!n) {
			if (sock_error())
				break;
			rx_wait();
			continue;
		}
		got += n;
	}
	/*
	 * Ended by a signal: the frames already on the RX ring are still
	 * taken (a test that stops the socket once the driver has
	 * redirected every frame gets them all).
	 */
	if (stop)
		while ((n = rx_batch()) > 0)
			got += n;
	fflush(stdout);
	fprintf(stderr, "xsk: received %u\n", got);
	return got >= count ? 0 : 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* the last word of @line as bytes into @out; length, or -1 */
static int parse_hex(char *line, unsigned char *out, unsigned int max)
{
	char *w = NULL, *t, *save = NULL;
	unsigned int n = 0;

	for (t = strtok_r(line, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
		w = t;
	if (!w || strlen(w) % 2 || strlen(w) / 2 > max)
		return -1;
	for (; *w; w += 2) {
		int hi = hexval(w[0]), lo = hexval(w[1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = hi << 4 | lo;
	}
	return n;
}

/* "xsk: completion order: ..." (-o) */
static void show_comp_order(void)
{
	unsigned int i;
	__u64 a;

	fprintf(stderr, "xsk: completion order:");
	for (i = 0; i < comp_logged; i++) {
		a = comp_log[i];
		if (a % chunk || a / chunk < RING_SIZE || a / chunk >= NUM_FRAMES)
			fprintf(stderr, " 0x%llx", (unsigned long long)a);
		else
			fprintf(stderr, " %llu", (unsigned long long)(a / chunk - RING_SIZE));
	}
	fprintf(stderr, "\n");
}

/* TX descriptors the kernel refused (never to be completed) */
static unsigned int tx_refused(void)
{
	struct xdp_statistics st = {};
	socklen_t len = sizeof(st);

	if (getsockopt(xsk_socket__fd(xsk), SOL_XDP, XDP_STATISTICS, &st, &len))
		return 0;
	return st.tx_invalid_descs;
}

static int do_tx(double end)
{
	static char line[65536];
	unsigned int sent = 0, done = 0, refused = 0, idx;
	long want;
	char *sp;
	int len;

	while (fgets(line, sizeof(line), stdin)) {
		__u64 addr = (__u64)(RING_SIZE + sent) * chunk;
		unsigned char *p = xsk_umem__get_data(area, addr);

		if (sent == RING_SIZE) {
			fprintf(stderr, "xsk: more than %u frames on stdin\n", RING_SIZE);
			return 2;
		}
		/* "<len> <hex>": the descriptor's length */
		want = -1;
		sp = strpbrk(line, " \t");
		if (sp && sp[strspn(sp, " \t\n")])
			want = strtol(line, NULL, 10);
		len = parse_hex(line, p, chunk);
		if (len < 0 || want > (long)chunk || want < -1) {
			fprintf(stderr, "xsk: bad frame line %u on stdin\n", sent + 1);
			return 2;
		}
		if (want < 0 && !len)
			continue;
		if (want > len)
			memset(p + len, 0, want - len);
		if (want >= 0)
			len = want;
		while (xsk_ring_prod__reserve(&tx, 1, &idx) != 1) {
			tx_kick();
			done += reap(0);
		}
		xsk_ring_prod__tx_desc(&tx, idx)->addr = addr;
		xsk_ring_prod__tx_desc(&tx, idx)->len = len;
		xsk_ring_prod__submit(&tx, 1);
		sent++;
		if (sent % BATCH == 0)
			tx_kick();
	}
	while (!stop && done + refused < sent && now() < end) {
		tx_kick();
		done += reap(0);
		if (done + refused < sent) {
			if (sock_error())
				break;
			poll(NULL, 0, 10);
			refused = tx_refused();
		}
	}
	refused = tx_refused();
	if (refused)
		fprintf(stderr, "xsk: sent %u completed %u, refused by the kernel %u\n",
			sent, done, refused);
	else
		fprintf(stderr, "xsk: sent %u completed %u\n", sent, done);
	if (show_order)
		show_comp_order();
	return done == sent ? 0 : 1;
}

static int do_fwd(unsigned int count, double end)
{
	unsigned int got = 0, done = 0, n, i, ridx, tidx;

	while (!stop && (!count || done < count) && now() < end) {
		remap_check();
		done += reap(1);
		n = xsk_ring_cons__peek(&rx, BATCH, &ridx);
		if (!n) {
			if (sock_error())
				break;
			if (got > done)
				tx_kick();
			rx_wait();
			continue;
		}
		while (xsk_ring_prod__reserve(&tx, n, &tidx) != n) {
			tx_kick();
			done += reap(1);
		}
		for (i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&rx, ridx + i);
			struct xdp_desc *t = xsk_ring_prod__tx_desc(&tx, tidx + i);
			unsigned char *p = xsk_umem__get_data(area, d->addr), mac[6];

			memcpy(mac, p, 6);
			memcpy(p, p + 6, 6);
			memcpy(p + 6, mac, 6);
			t->addr = d->addr;
			t->len = d->len;
		}
		xsk_ring_prod__submit(&tx, n);
		xsk_ring_cons__release(&rx, n);
		got += n;
		tx_kick();
	}
	/* what is on the TX ring still completes */
	while (!stop && done < got && now() < end) {
		tx_kick();
		done += reap(1);
		if (done < got)
			poll(NULL, 0, 10);
	}
	fprintf(stderr, "xsk: received %u forwarded %u completed %u\n", got, got, done);
	return done >= count && done == got ? 0 : 1;
}

/* the device settings busy polling changes, and what they were */
static struct {
	const char *name;
	long val, old;
	int set;
} devset[] = {
	{ .name = "napi_defer_hard_irqs", .val = DEFER_HARD_IRQS },
	{ .name = "gro_flush_timeout", .val = FLUSH_TIMEOUT_NS },
};
static const char *devname;

/* write @val to /sys/class/net/IFNAME/@name, optionally reading it first */
static int sysfs_dev(const char *name, long val, long *old)
{
	char path[256];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", devname, name);
	if (old) {
		f = fopen(path, "r");
		if (!f || fscanf(f, "%ld", old) != 1)
			err = f ? EINVAL : errno;
		if (f)
			fclose(f);
		if (err)
			return err;
	}
	f = fopen(path, "w");
	if (!f)
		return errno;
	if (fprintf(f, "%ld\n", val) < 0)
		err = EIO;
	if (fclose(f) && !err)
		err = errno;
	return err;
}

static void busy_poll_restore(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(devset) / sizeof(devset[0]); i++)
		if (devset[i].set && sysfs_dev(devset[i].name, devset[i].old, NULL))
			fprintf(stderr, "xsk: cannot put %s of %s back to %ld\n",
				devset[i].name, devname, devset[i].old);
}

/* busy polling on socket @fd, the device's interrupt held off meanwhile */
static int busy_poll_setup(int fd)
{
	const struct {
		int opt, val;
		const char *name;
	} so[] = {
		{ SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL" },
		{ SO_BUSY_POLL, BUSY_POLL_US, "SO_BUSY_POLL" },
		{ SO_BUSY_POLL_BUDGET, busy_budget, "SO_BUSY_POLL_BUDGET" },
	};
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(so) / sizeof(so[0]); i++)
		if (setsockopt(fd, SOL_SOCKET, so[i].opt, &so[i].val, sizeof(so[i].val)))
			return die(so[i].name, errno);
	for (i = 0; i < sizeof(devset) / sizeof(devset[0]); i++) {
		err = sysfs_dev(devset[i].name, devset[i].val, &devset[i].old);
		if (err) {
			busy_poll_restore();
			return die(devset[i].name, err);
		}
		devset[i].set = 1;
	}
	return 0;
}

/* "xsk: napi id N": the NAPI instance the socket's frames came from */
static void show_napi_id(int fd)
{
	unsigned int id = 0;
	socklen_t len = sizeof(id);

	if (getsockopt(fd, SOL_SOCKET, SO_INCOMING_NAPI_ID, &id, &len))
		fprintf(stderr, "xsk: getsockopt SO_INCOMING_NAPI_ID: %s\n",
			strerror(errno));
	else
		fprintf(stderr, "xsk: napi id %u\n", id);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-m copy|zc] [-w on|off] [-f CHUNK] [-n COUNT] [-t SECS] [-b BUDGET [-s MS]] [-q] [-o] IFNAME QUEUE rx|tx|fwd\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = XDP_FLAGS_DRV_MODE,
	};
	struct xsk_umem_config ucfg = {
		.fill_size = RING_SIZE,
		.comp_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.frame_headroom = XSK_UMEM__DEFAULT_FRAME_HEADROOM,
	};
	struct xdp_options opts = {};
	socklen_t olen = sizeof(opts);
	unsigned int count = 0, queue, i, idx;
	const char *action, *mode = "copy";
	struct xsk_umem *umem;
	double secs = 20;
	int ifindex, mapfd = -1, zc = 0, c, err, rc;
	char what[64];

	while ((c = getopt(argc, argv, "m:w:f:n:t:b:s:qo")) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "zc") && strcmp(optarg, "copy"))
				usage(argv[0]);
			zc = !strcmp(optarg, "zc");
			mode = optarg;
			break;
		case 'w':
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				usage(argv[0]);
			wakeup = !strcmp(optarg, "on");
			break;
		case 'f':
			chunk = atoi(optarg);
			break;
		case 'n':
			count = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'b':
			busy_budget = atoi(optarg);
			if (busy_budget <= 0)
				usage(argv[0]);
			break;
		case 's':
			send_ms = atoi(optarg);
			if (send_ms <= 0)
				usage(argv[0]);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'o':
			show_order = 1;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (argc - optind != 3 || (send_ms && !busy_budget))
		usage(argv[0]);
	action = argv[optind + 2];
	if (strcmp(action, "rx") && strcmp(action, "tx") && strcmp(action, "fwd"))
		usage(argv[0]);
	devname = argv[optind];
	ifindex = if_nametoindex(argv[optind]);
	if (!ifindex)
		return die(argv[optind], errno);
	queue = atoi(argv[optind + 1]);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_usr1);
	dev_ifindex = ifindex;

	if (strcmp(action, "tx")) {
		mapfd = find_xskmap(ifindex);
		if (mapfd < 0)
			return 2;
	}
	area = mmap(NULL, (size_t)NUM_FRAMES * chunk, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return die("mmap", errno);
	ucfg.frame_size = chunk;
	err = xsk_umem__create(&umem, area, (__u64)NUM_FRAMES * chunk, &fq, &cq, &ucfg);
	if (err)
		return die("xsk_umem__create", err);
	cfg.bind_flags = (zc ? XDP_ZEROCOPY : XDP_COPY) |
			 (wakeup ? XDP_USE_NEED_WAKEUP : 0);
	snprintf(what, sizeof(what), "bind (%s)", mode);
	err = xsk_socket__create(&xsk, argv[optind], queue, umem,
				 strcmp(action, "tx") ? &rx : NULL, &tx, &cfg);
	if (err)
		return die(what, err);

	/* after the bind: the driver starts with an empty fill ring */
	if (xsk_ring_prod__reserve(&fq, RING_SIZE, &idx) != RING_SIZE)
		return die("fill ring reserve", EINVAL);
	for (i = 0; i < RING_SIZE; i++)
		*xsk_ring_prod__fill_addr(&fq, idx + i) = (__u64)i * chunk;
	xsk_ring_prod__submit(&fq, RING_SIZE);

	if (mapfd >= 0) {
		err = xsk_socket__update_xskmap(xsk, mapfd);
		if (err)
			return die("xsk_socket__update_xskmap", err);
	}
	if (getsockopt(xsk_socket__fd(xsk), SOL_XDP, XDP_OPTIONS, &opts, &olen))
		return die("getsockopt XDP_OPTIONS", errno);
	if (busy_budget) {
		err = busy_poll_setup(xsk_socket__fd(xsk));
		if (err)
			return err;
		snprintf(what, sizeof(what), ", busy poll on (budget %d)", busy_budget);
	} else {
		what[0] = 0;
	}
	fprintf(stderr, "xsk: ready (%s, need_wakeup %s%s)\n",
		opts.flags & XDP_OPTIONS_ZEROCOPY ? "zero-copy" : "copy",
		wakeup ? "on" : "off", what);

	if (!strcmp(action, "rx"))
		rc = do_rx(count, now() + secs);
	else if (!strcmp(action, "tx"))
		rc = do_tx(now() + secs);
	else
		rc = do_fwd(count, now() + secs);
	if (strcmp(action, "tx"))
		show_napi_id(xsk_socket__fd(xsk));
	if (busy_budget) {
		busy_poll_restore();
		fprintf(stderr, "xsk: busy poll: %lu recvfrom calls\n", busy_calls);
		if (send_ms)
			fprintf(stderr, "xsk: sendto: %lu calls, %lu ENETDOWN, %lu other errors\n",
				send_calls, send_down, send_err);
	}
	err = sock_error();
	if (err) {
		fprintf(stderr, "xsk: socket error: %s\n", strerror(err));
		rc = 3;
	}
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return rc;
}
