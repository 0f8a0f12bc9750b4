#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""xdp_pkt.py - send known IPv4/UDP frames on a raw AF_PACKET socket and
check what an XDP program sent back, byte for byte.

  xdp_pkt.py bounce IF DSTMAC DSTIP PORT COUNT MODE [--timeout S] [--save F]
             [--sizes N,N,...]
      Send COUNT frames (sizes cycling over SIZES) from IF, capture what
      comes back on IF for up to S seconds and compare every returned frame
      with the frame expected for MODE:
        swap         MACs swapped, otherwise identical (XDP_TX, redirect)
        head-grow    swapped MACs, ethertype 0x88b5, HEAD_GROW x 0xa5, rest
        head-shrink  swapped MACs, ethertype 0x88b5, HEAD_SHRINK bytes cut
                     after the Ethernet header
        tail-grow    swapped MACs, ethertype 0x88b5, TAIL_GROW x 0x5a added
        tail-shrink  swapped MACs, ethertype 0x88b5, TAIL_SHRINK bytes cut
        none         nothing may come back
      Exit 0 when every frame came back exactly once and exactly as
      expected (for "none": when nothing came back).
  xdp_pkt.py send IF DSTMAC DSTIP PORT COUNT [--save F]
      Only send (--save writes "<len> <hex>" per frame).
  xdp_pkt.py spin IF DSTMAC DSTIP PORT SIZE SECONDS
      Offer one SIZE-byte frame over and over for SECONDS: at once again
      after the kernel refused it as longer than the MTU (EMSGSIZE), 2 ms
      after it was taken (a trace of every frame sent stays small), so an
      MTU change is used from the moment the stack sees it.
  xdp_pkt.py cmp SENT GOT
      Compare two "<len> <hex>" files (e.g. the AF_XDP receiver's output
      with the frames sent): same multiset of frames.
The constants must match progs/xdp_common.h.
"""
import errno
import os
import socket
import struct
import sys
import time

HEAD_GROW, HEAD_SHRINK, TAIL_GROW, TAIL_SHRINK = 16, 8, 24, 10
HEAD_FILL, TAIL_FILL, TEST_ETYPE = 0xA5, 0x5A, 0x88B5
SIZES = [60, 64, 98, 128, 255, 512, 777, 1000, 1280, 1400, 1514]
MAGIC = b"VMXT"
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SRC_IP = os.environ.get("PEER_IP", "10.99.0.2")


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def build(dst, src, dstip, port, size, run, seq):
    payload_len = size - 14 - 20 - 8
    head = MAGIC + run + struct.pack("!I", seq)
    pat = bytes((i * 7 + seq) & 0xFF for i in range(payload_len - len(head)))
    payload = head + pat
    udp = struct.pack("!HHHH", 40000 + seq % 1000, port, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload),
                     seq & 0xFFFF, 0x4000, 64, 17, 0,
                     socket.inet_aton(SRC_IP), socket.inet_aton(dstip))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return dst + src + b"\x08\x00" + ip + udp + payload


def expected(frame, mode):
    sw = frame[6:12] + frame[0:6]
    et = struct.pack("!H", TEST_ETYPE)
    if mode == "swap":
        return sw + frame[12:]
    if mode == "head-grow":
        return sw + et + bytes([HEAD_FILL]) * HEAD_GROW + frame[14:]
    if mode == "head-shrink":
        return sw + et + frame[14 + HEAD_SHRINK:]
    if mode == "tail-grow":
        return sw + et + frame[14:] + bytes([TAIL_FILL]) * TAIL_GROW
    if mode == "tail-shrink":
        return sw + et + frame[14:-TAIL_SHRINK]
    return None


def sizes_for(mode, sizes=None):
    # --sizes: exactly those; otherwise grown frames stay within 1514
    # bytes and shrunk ones keep the 12 bytes that identify them (magic,
    # run, sequence number after the UDP header)
    if sizes:
        return sizes
    grow = {"head-grow": HEAD_GROW, "tail-grow": TAIL_GROW}.get(mode, 0)
    low = 42 + 12 + (TAIL_SHRINK if mode == "tail-shrink" else 0)
    return [max(low, min(s, 1514 - grow)) for s in SIZES]


def open_sock(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((ifname, ETH_P_ALL))
    return s


def make_frames(ifname, dstmac, dstip, port, count, mode, sizes=None):
    src = mac_bytes(open("/sys/class/net/%s/address" % ifname).read().strip())
    run = os.urandom(4)
    sz = sizes_for(mode, sizes)
    return run, [build(mac_bytes(dstmac), src, dstip, port, sz[i % len(sz)],
                       run, i) for i in range(count)]


def save(path, frames):
    with open(path, "w") as f:
        for fr in frames:
            f.write("%d %s\n" % (len(fr), fr.hex()))


def send_all(s, frames, gap=0.002):
    for fr in frames:
        s.send(fr)
        time.sleep(gap)


def hexdiff(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return "first difference at byte %d: got %s want %s" % (
                i, a[i:i + 8].hex(), b[i:i + 8].hex())
    return "lengths %d vs %d" % (len(a), len(b))


def cmd_bounce(a):
    ifname, dstmac, dstip, port, count, mode = a[:6]
    port, count = int(port), int(count)
    opts = dict(zip(a[6::2], a[7::2]))
    timeout = float(opts.get("--timeout", 5))
    if mode == "none":
        timeout = min(timeout, 1.5)
    frames_mode = mode if mode != "none" else "swap"
    sizes = [int(x) for x in opts["--sizes"].split(",")] if "--sizes" in opts else None
    run, frames = make_frames(ifname, dstmac, dstip, port, count, frames_mode, sizes)
    if "--save" in opts:
        save(opts["--save"], frames)
    s = open_sock(ifname)
    s.settimeout(0.05)
    send_all(s, frames)
    got = {}
    bad = []
    key = MAGIC + run
    end = time.time() + timeout
    grace = None
    while time.time() < end:
        if grace is None and len(got) == count:
            grace = time.time() + 0.3
            end = min(end, grace)
        try:
            data, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] == PACKET_OUTGOING:
            continue
        # only UDP or the test ethertype: an ICMP error quoting one of our
        # frames is not that frame coming back
        et = data[12:14]
        if not (et == struct.pack("!H", TEST_ETYPE) or
                (et == b"\x08\x00" and len(data) > 23 and data[23] == 17)):
            continue
        i = data.find(key)
        if i < 0 or i + 12 > len(data):
            continue
        seq = struct.unpack("!I", data[i + 8:i + 12])[0]
        if seq >= count:
            bad.append("seq %d out of range" % seq)
            continue
        got.setdefault(seq, []).append(data)
    lens = sorted({len(f) for f in frames})
    print("sent %d frames to %s port %d (sizes %d..%d), %d came back" %
          (count, dstip, port, lens[0], lens[-1], sum(len(v) for v in got.values())))
    if mode == "none":
        return 0 if not got else 1
    ok = 0
    for seq in range(count):
        want = expected(frames[seq], mode)
        rx = got.get(seq, [])
        if not rx:
            bad.append("frame %d (%d bytes) did not come back" % (seq, len(frames[seq])))
        elif len(rx) > 1:
            bad.append("frame %d came back %d times" % (seq, len(rx)))
        elif rx[0] != want:
            bad.append("frame %d: %d bytes, want %d: %s" %
                       (seq, len(rx[0]), len(want), hexdiff(rx[0], want)))
        else:
            ok += 1
    print("%d/%d returned frames exact (mode %s, length change %+d)" %
          (ok, count, mode, len(expected(frames[0], mode)) - len(frames[0])))
    for b in bad[:10]:
        print("  " + b)
    if len(bad) > 10:
        print("  ... %d more problems" % (len(bad) - 10))
    return 0 if ok == count and not bad else 1


def cmd_send(a):
    ifname, dstmac, dstip, port, count = a[:5]
    opts = dict(zip(a[5::2], a[6::2]))
    sizes = [int(x) for x in opts["--sizes"].split(",")] if "--sizes" in opts else None
    _, frames = make_frames(ifname, dstmac, dstip, int(port), int(count), "swap", sizes)
    if "--save" in opts:
        save(opts["--save"], frames)
    s = open_sock(ifname)
    send_all(s, frames)
    print("sent %d frames to %s port %s" % (len(frames), dstip, port))
    return 0


def cmd_spin(a):
    ifname, dstmac, dstip, port, size, secs = a[:6]
    _, frames = make_frames(ifname, dstmac, dstip, int(port), 1, "swap", [int(size)])
    s = open_sock(ifname)
    sent = refused = full = 0
    end = time.monotonic() + float(secs)
    while time.monotonic() < end:
        try:
            s.send(frames[0])
            sent += 1
            time.sleep(0.002)
        except OSError as e:
            if e.errno == errno.EMSGSIZE:
                refused += 1
            elif e.errno in (errno.ENOBUFS, errno.EAGAIN):
                full += 1
                time.sleep(0.001)
            else:
                raise
    print("%d-byte frames: %d sent, %d refused as too long, %d times the queue was full"
          % (int(size), sent, refused, full))
    return 0 if sent else 1


def cmd_cmp(a):
    def load(p):
        out = []
        for line in open(p):
            f = line.split()
            if len(f) == 2 and f[0].isdigit():
                out.append((int(f[0]), f[1]))
        return out
    sent, got = load(a[0]), load(a[1])
    ok = all(int(n) == len(h) // 2 for n, h in got)
    same = sorted(sent) == sorted(got)
    print("sent %d frames, received %d; %s" %
          (len(sent), len(got), "identical bytes" if same else "DIFFERENT"))
    if not same:
        missing = set(sent) - set(got)
        extra = set(got) - set(sent)
        print("  %d sent frames not received exactly, %d unexpected" %
              (len(missing), len(extra)))
    return 0 if same and ok else 1


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cmds = {"bounce": (cmd_bounce, 6), "send": (cmd_send, 5), "spin": (cmd_spin, 6),
            "cmp": (cmd_cmp, 2)}
    c = cmds.get(sys.argv[1])
    if not c or len(sys.argv) - 2 < c[1]:
        print(__doc__)
        return 2
    return c[0](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
