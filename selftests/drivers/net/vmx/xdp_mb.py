#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""xdp_mb.py - frames for progs/xdp_mb.c (multi-buffer XDP, xdp_frags.sh)
and the checks of what comes back or reaches a socket. Frames are
xdp_pkt.py's (MAGIC, run, sequence number, known pattern; IPv4/UDP,
checksum 0), with the program's argument (--delta) at MB_ARG_OFF.

  xdp_mb.py bounce IF DSTMAC DSTIP PORT MODE --sizes N,N.. [--count C]
            [--delta D] [--timeout S]
      Send C frames (default: one per size, sizes cycling) from IF and
      check every frame that comes back on IF against MODE:
        swap   MACs swapped, otherwise identical (XDP_TX, devmap redirect)
        bytes  MACs swapped, the linear length L the program wrote at
               MB_ARG_OFF, MB_RANGE bytes inverted from L - MB_RANGE/2 and
               from L + MB_FRAG - MB_RANGE/2 (where the frame has them);
               a frame above 4096 bytes must have L below its length
        tail   MACs swapped, ethertype 0x88b5, the frame cut by -D bytes,
               or grown by D bytes: zeros, the last MB_TAIL_MARK TAIL_FILL
        none   nothing may come back
      Exit 0 when every frame came back exactly once, exact (none: when
      nothing came back).
  xdp_mb.py send IF DSTMAC DSTIP PORT --sizes N,N.. [--count C] [--delta D]
      Only send (run "MBUF": what recv expects).
  xdp_mb.py recv ADDR PORT --sizes N,N.. [--count C] [--delta D]
            [--timeout S]
      A UDP socket on ADDR:PORT (this netns) must get each of the C
      datagrams sent with the same arguments exactly once: the payload as
      sent, or for D != 0 with the UDP payload changed as in "tail".
      Prints "listening" once bound.
The constants must match progs/mb_common.h and progs/xdp_common.h.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xdp_pkt import (MAGIC, PACKET_OUTGOING, TAIL_FILL, TEST_ETYPE,  # noqa: E402
                     build, hexdiff, mac_bytes, open_sock, send_all)

MB_ARG_OFF, MB_RANGE, MB_FRAG, MB_TAIL_MARK = 54, 100, 4096, 8
RUN = b"MBUF"


def parse(a, nfixed):
    opts = dict(zip(a[nfixed::2], a[nfixed + 1::2]))
    sizes = [int(x) for x in opts["--sizes"].split(",")]
    count = int(opts.get("--count", len(sizes)))
    return (a[:nfixed], sizes, count, int(opts.get("--delta", 0)),
            float(opts.get("--timeout", 5)))


def frame(dst, src, dstip, port, size, run, seq, delta):
    f = build(dst, src, dstip, port, size, run, seq)
    return f[:MB_ARG_OFF] + struct.pack("<i", delta) + f[MB_ARG_OFF + 4:]


def make(ifname, dstmac, dstip, port, sizes, count, delta, run):
    src = mac_bytes(open("/sys/class/net/%s/address" % ifname).read().strip())
    return [frame(mac_bytes(dstmac), src, dstip, port, sizes[i % len(sizes)],
                  run, i, delta) for i in range(count)]


def tail_change(b, delta):
    """b with its end changed as xdp_mb's tail() does for delta"""
    if delta < 0:
        return b[:delta]
    mark = MB_TAIL_MARK if delta >= MB_TAIL_MARK else 0
    return b + bytes(delta - mark) + bytes([TAIL_FILL]) * mark


def invert(b, off):
    if off < 0 or off + MB_RANGE > len(b):
        return b
    return b[:off] + bytes(x ^ 0xFF for x in b[off:off + MB_RANGE]) + b[off + MB_RANGE:]


def expected(sent, got, mode, delta):
    sw = sent[6:12] + sent[0:6]
    if mode == "swap":
        return sw + sent[12:]
    if mode == "tail":
        return tail_change(sw + struct.pack("!H", TEST_ETYPE) + sent[14:], delta)
    # bytes: L as the program wrote it
    lin = struct.unpack("<I", got[MB_ARG_OFF:MB_ARG_OFF + 4])[0] if len(got) >= 58 else 0
    w = sw + sent[12:MB_ARG_OFF] + struct.pack("<I", lin) + sent[MB_ARG_OFF + 4:]
    w = invert(w, lin - MB_RANGE // 2)
    return invert(w, lin + MB_FRAG - MB_RANGE // 2)


def cmd_bounce(a):
    (ifname, dstmac, dstip, port, mode), sizes, count, delta, timeout = parse(a, 5)
    frames = make(ifname, dstmac, dstip, int(port), sizes, count, delta, os.urandom(4))
    key = MAGIC + frames[0][46:50]
    s = open_sock(ifname)
    s.settimeout(0.05)
    send_all(s, frames, 0.005)
    if mode == "none":
        timeout = min(timeout, 1.5)
    got, bad = {}, []
    end = time.time() + timeout
    while time.time() < end:
        if len(got) == count:
            end = min(end, time.time() + 0.3)
        try:
            data, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] == PACKET_OUTGOING or data[42:50] != key:
            continue
        seq = struct.unpack("!I", data[50:54])[0]
        if seq >= count:
            bad.append("seq %d out of range" % seq)
            continue
        got.setdefault(seq, []).append(data)
    print("sent %d frames of %s bytes to %s port %s (mode %s, delta %d), %d came back" %
          (count, ",".join(map(str, sizes)), dstip, port, mode, delta,
           sum(len(v) for v in got.values())))
    if mode == "none":
        return 0 if not got else 1
    ok, lins = 0, {}
    for seq in range(count):
        rx = got.get(seq, [])
        if len(rx) != 1:
            bad.append("frame %d (%d bytes) came back %d times" % (seq, len(frames[seq]), len(rx)))
            continue
        want = expected(frames[seq], rx[0], mode, delta)
        if rx[0] != want:
            bad.append("frame %d: %d bytes, want %d: %s" %
                       (seq, len(rx[0]), len(want), hexdiff(rx[0], want)))
            continue
        if mode == "bytes":
            lin = struct.unpack("<I", rx[0][MB_ARG_OFF:MB_ARG_OFF + 4])[0]
            lins.setdefault(len(frames[seq]), set()).add(lin)
            if len(frames[seq]) > 4096 and lin >= len(frames[seq]):
                bad.append("frame %d of %d bytes was linear (L %d)" % (seq, len(frames[seq]), lin))
                continue
        ok += 1
    for n in sorted(lins):
        print("  %d-byte frames: linear part %s" % (n, ",".join(map(str, sorted(lins[n])))))
    print("%d/%d returned frames exact" % (ok, count))
    for b in bad[:10]:
        print("  " + b)
    return 0 if ok == count and not bad else 1


def cmd_send(a):
    (ifname, dstmac, dstip, port), sizes, count, delta, _ = parse(a, 4)
    frames = make(ifname, dstmac, dstip, int(port), sizes, count, delta, RUN)
    send_all(open_sock(ifname), frames, 0.005)
    print("sent %d frames of %s bytes to %s port %s (delta %d)" %
          (count, ",".join(map(str, sizes)), dstip, port, delta))
    return 0


def cmd_recv(a):
    # xdp_pass_pkt.py's receiver, with these sizes, run and payloads
    (addr, port), sizes, count, delta, timeout = parse(a, 2)
    import xdp_pass_pkt as pp

    def payload(dstip, dport, size, seq):
        p = frame(b"\0" * 6, b"\0" * 6, dstip, dport, size, RUN, seq, delta)[42:]
        return tail_change(p, delta) if delta else p
    pp.SIZES, pp.RUN, pp.payload = sizes, RUN, payload
    return pp.recv(addr, int(port), count, "exact", timeout, None)


def main():
    cmds = {"bounce": (cmd_bounce, 5), "send": (cmd_send, 4), "recv": (cmd_recv, 2)}
    c = cmds.get(sys.argv[1] if len(sys.argv) > 1 else "")
    if not c or len(sys.argv) - 2 < c[1] or "--sizes" not in sys.argv:
        print(__doc__)
        return 2
    return c[0](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
