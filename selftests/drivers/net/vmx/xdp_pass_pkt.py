#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""xdp_pass_pkt.py - frames for progs/xdp_pass_adjust.c and a UDP receiver
that checks what the stack delivered after the program changed them.

  xdp_pass_pkt.py send IF DSTMAC DSTIP PORT COUNT [--encap]
      Send COUNT IPv4/UDP frames (xdp_pkt.py's frames: known payload, UDP
      checksum 0) on a raw socket. --encap puts ethertype 0x88b5 and 8
      bytes in front of the IPv4 header (what the program strips).
  xdp_pass_pkt.py recv ADDR PORT COUNT MODE [--timeout S] [--dev IF]
      Receive on ADDR:PORT (only frames that came in on IF with --dev) until COUNT datagrams arrived or S seconds
      (default 10) passed without one. MODE says what the payload must be:
        exact        as sent
        tail-grow    as sent plus TAIL_GROW bytes of TAIL_FILL
        tail-shrink  as sent without its last TAIL_SHRINK bytes
        none         nothing may arrive
      Exit 0 when each datagram arrived exactly once and exactly as MODE
      says (for none: when nothing arrived).
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xdp_pkt import (MAGIC, TAIL_FILL, TAIL_GROW, TAIL_SHRINK,  # noqa: E402
                     TEST_ETYPE, build, mac_bytes, open_sock, send_all)

RUN = b"PASS"
SIZES = [80, 300, 1000, 1400]
ENCAP = b"VMXENCAP"


def payload(dstip, port, size, seq):
    return build(b"\0" * 6, b"\0" * 6, dstip, port, size, RUN, seq)[42:]


def send(ifname, dstmac, dstip, port, count, encap):
    src = mac_bytes(open("/sys/class/net/%s/address" % ifname).read().strip())
    frames = []
    for seq in range(count):
        f = build(mac_bytes(dstmac), src, dstip, port, SIZES[seq % len(SIZES)], RUN, seq)
        if encap:
            f = f[:12] + struct.pack("!H", TEST_ETYPE) + ENCAP + f[14:]
        frames.append(f)
    send_all(open_sock(ifname), frames)
    print("sent %d%s frames to %s port %d" % (count, " encapsulated" if encap else "",
                                              dstip, port))
    return 0


def recv(addr, port, count, mode, timeout, dev):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if dev:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((addr, port))
    print("listening", flush=True)
    s.settimeout(timeout)
    seen, bad = set(), []
    while len(seen) < count:
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        if data[:8] != MAGIC + RUN or len(data) < 12:
            bad.append("foreign datagram of %d bytes" % len(data))
            continue
        seq = struct.unpack("!I", data[8:12])[0]
        extra = {"tail-grow": TAIL_GROW, "tail-shrink": -TAIL_SHRINK}.get(mode, 0)
        size = SIZES[seq % len(SIZES)]
        want = payload(addr, port, size, seq)
        if mode == "tail-grow":
            want += bytes([TAIL_FILL]) * TAIL_GROW
        elif mode == "tail-shrink":
            want = want[:-TAIL_SHRINK]
        if seq in seen:
            bad.append("datagram %d twice" % seq)
        elif data != want:
            bad.append("datagram %d: %d bytes, want %d (%+d): %s" % (
                seq, len(data), len(want), extra, data[-8:].hex()))
        else:
            seen.add(seq)
    print("received %d of %d datagrams as expected for %s, %d bad" %
          (len(seen), count, mode, len(bad)))
    for b in bad[:5]:
        print("  " + b)
    if mode == "none":
        return 0 if not seen and not bad else 1
    return 0 if len(seen) == count and not bad else 1


def main(a):
    if len(a) >= 6 and a[0] == "send":
        return send(a[1], a[2], a[3], int(a[4]), int(a[5]), "--encap" in a)
    if len(a) >= 5 and a[0] == "recv":
        t = float(a[a.index("--timeout") + 1]) if "--timeout" in a else 10
        dev = a[a.index("--dev") + 1] if "--dev" in a else None
        return recv(a[1], int(a[2]), int(a[3]), a[4], t, dev)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
