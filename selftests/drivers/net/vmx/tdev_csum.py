#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tdev_csum.py - frames with wrong and right checksums for tdev_csum.sh.

  tdev_csum.py send IF DSTMAC KIND COUNT [--sniff IF2] [--inner-dmac MAC]
      From IF (the peer), on an AF_PACKET socket: COUNT frames of KIND with
      a wrong checksum, then COUNT with every checksum right (the
      control), to PORT. KIND:
        ip4hdr  IPv4 UDP, the IPv4 header checksum wrong
        udp4    IPv4 UDP, the UDP checksum wrong
        tcp4    IPv4 TCP SYN, the TCP checksum wrong
        udp6    IPv6 UDP, the UDP checksum wrong
        tcp6    IPv6 TCP SYN, the TCP checksum wrong
        vxudp   VXLAN (UDP 4789, outer checksum 0, VNI 42) of inner IPv4
                UDP to 10.42.0.1 (MAC --inner-dmac), the inner UDP
                checksum wrong
        vxtcp   the same with an inner TCP SYN
        vxouter VXLAN as vxudp, every inner checksum right, the outer UDP
                checksum not 0: wrong (the bad frames) or right
        gnouter the same in Geneve (UDP 6081, VNI 43)
      UDP payloads are "VMXC KIND bad|good N", which the DUT's receiver
      logs. For TCP kinds every SYN has its own source port, and the SYN-ACKs
      that come back (seen on IF2, default IF: vmxtun0 for the inner
      frames) are counted: prints "synack bad=B good=G" (the bad ones must
      get none). Prints "sent KIND COUNT+COUNT".
  tdev_csum.py recv OUT SECONDS
      On the DUT: UDP sockets and TCP listeners on PORT over IPv4 and IPv6
      (never accepting: the kernel answers SYNs); each datagram's payload
      is a line of OUT, written at once. Ends after SECONDS.
  tdev_csum.py hashgen IF DSTMAC COUNT
      From IF: COUNT TCP SYNs and COUNT UDP datagrams to HTY_PORT over
      IPv4 and over IPv6, right checksums, new source port each.
Addresses from the environment: PEER_IP DUT_IP PEER_IP6 DUT_IP6 (the
suite's defaults otherwise); inner 10.42.0.2 -> 10.42.0.1 (tunnel_up).
"""
import os
import random
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xdp_pkt import ETH_P_ALL, PACKET_OUTGOING, csum, mac_bytes  # noqa: E402

PORT = 7805      # tdev_csum.sh CSUM_PORT
HTY_PORT = 7804  # progs/tc_hashtype.c
PEER_IP = os.environ.get("PEER_IP", "10.99.0.2")
DUT_IP = os.environ.get("DUT_IP", "10.99.0.1")
PEER_IP6 = os.environ.get("PEER_IP6", "fd99::2")
DUT_IP6 = os.environ.get("DUT_IP6", "fd99::1")
IN_SRC, IN_DST = "10.42.0.2", "10.42.0.1"


def ifmac(ifname):
    return mac_bytes(open("/sys/class/net/%s/address" % ifname).read().strip())


def wrong(c):
    """a checksum that is wrong, never 0 (UDP: none) or 0xffff"""
    b = c ^ 0x1234
    return b if b not in (0, 0xFFFF) else c ^ 0x4321


def ip4(src, dst, proto, payload, ident, bad=False):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                    0x4000, 64, proto, 0, socket.inet_aton(src),
                    socket.inet_aton(dst))
    c = csum(h)
    if bad:
        c = wrong(c)
    return h[:10] + struct.pack("!H", c) + h[12:] + payload


def ip6(src, dst, proto, payload):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), proto, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def pseudo(v6, src, dst, proto, length):
    if v6:
        return (socket.inet_pton(socket.AF_INET6, src) +
                socket.inet_pton(socket.AF_INET6, dst) +
                struct.pack("!IxxxB", length, proto))
    return (socket.inet_aton(src) + socket.inet_aton(dst) +
            struct.pack("!xBH", proto, length))


def l4csum(seg, v6, src, dst, proto, off, bad, udp):
    c = csum(pseudo(v6, src, dst, proto, len(seg)) + seg)
    if udp and c == 0:
        c = 0xFFFF
    if bad:
        c = wrong(c)
    return seg[:off] + struct.pack("!H", c) + seg[off + 2:]


def udp_seg(v6, src, dst, sport, dport, payload, bad=False):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return l4csum(seg, v6, src, dst, 17, 6, bad, True)


def syn_seg(v6, src, dst, sport, dport, bad=False):
    seg = struct.pack("!HHIIBBHHH", sport, dport, random.getrandbits(32), 0,
                      6 << 4, 0x02, 64240, 0, 0) + struct.pack("!BBH", 2, 4, 1400)
    return l4csum(seg, v6, src, dst, 6, 16, bad, False)


def encap(geneve, dmac_in, smac_in, inner_ip, sport):
    """outer UDP (checksum 0) of a VXLAN (VNI 42) or Geneve (VNI 43, no
    options) frame carrying inner_ip"""
    inner = dmac_in + smac_in + b"\x08\x00" + inner_ip
    if geneve:
        body = struct.pack("!BBHI", 0, 0, 0x6558, 43 << 8) + inner
    else:
        body = struct.pack("!II", 0x08000000, 42 << 8) + inner
    u = struct.pack("!HHHH", sport, 6081 if geneve else 4789,
                    8 + len(body), 0) + body
    return u


def frame(kind, dst, src, i, bad, a):
    """one frame of KIND; returns (frame, tcp source port or None)"""
    tag = ("VMXC %s %s %d" % (kind, "bad" if bad else "good", i)).encode()
    tag += b"." * (32 - len(tag))
    sport = (30000 if bad else 40000) + (os.getpid() % 500) * 20 + i
    if kind == "ip4hdr":
        p = udp_seg(False, PEER_IP, DUT_IP, sport, PORT, tag)
        return dst + src + b"\x08\x00" + ip4(PEER_IP, DUT_IP, 17, p, i, bad), None
    if kind in ("udp4", "udp6"):
        v6 = kind == "udp6"
        s, d = (PEER_IP6, DUT_IP6) if v6 else (PEER_IP, DUT_IP)
        p = udp_seg(v6, s, d, sport, PORT, tag, bad)
        if v6:
            return dst + src + b"\x86\xdd" + ip6(s, d, 17, p), None
        return dst + src + b"\x08\x00" + ip4(s, d, 17, p, i), None
    if kind in ("tcp4", "tcp6"):
        v6 = kind == "tcp6"
        s, d = (PEER_IP6, DUT_IP6) if v6 else (PEER_IP, DUT_IP)
        p = syn_seg(v6, s, d, sport, PORT, bad)
        if v6:
            return dst + src + b"\x86\xdd" + ip6(s, d, 6, p), sport
        return dst + src + b"\x08\x00" + ip4(s, d, 6, p, i), sport
    if kind in ("vxudp", "vxtcp"):
        if kind == "vxudp":
            inner = ip4(IN_SRC, IN_DST, 17,
                        udp_seg(False, IN_SRC, IN_DST, sport, PORT, tag, bad), i)
            tp = None
        else:
            inner = ip4(IN_SRC, IN_DST, 6,
                        syn_seg(False, IN_SRC, IN_DST, sport, PORT, bad), i)
            tp = sport
        u = encap(False, mac_bytes(a["--inner-dmac"]),
                  ifmac(a.get("--inner-if", "vmxtun0")), inner, 50000 + i)
        return dst + src + b"\x08\x00" + ip4(PEER_IP, DUT_IP, 17, u, 1000 + i), tp
    if kind in ("vxouter", "gnouter"):
        # inner UDP right; the outer UDP checksum is the one wrong
        inner = ip4(IN_SRC, IN_DST, 17,
                    udp_seg(False, IN_SRC, IN_DST, sport, PORT, tag), i)
        u = encap(kind == "gnouter", mac_bytes(a["--inner-dmac"]),
                  ifmac(a.get("--inner-if", "vmxtun0")), inner, 50000 + i)
        u = l4csum(u, False, PEER_IP, DUT_IP, 17, 6, bad, True)
        return dst + src + b"\x08\x00" + ip4(PEER_IP, DUT_IP, 17, u, 1000 + i), None
    raise SystemExit("unknown kind " + kind)


def synacks(s, ports, until):
    """source ports (ours) that got a SYN-ACK from PORT before until"""
    got = set()
    while time.time() < until:
        r, _, _ = select.select([s], [], [], max(0, until - time.time()))
        if not r:
            break
        pkt, addr = s.recvfrom(65536)
        if addr[2] == PACKET_OUTGOING or len(pkt) < 14:
            continue
        et = struct.unpack("!H", pkt[12:14])[0]
        if et == 0x0800 and len(pkt) >= 34 and pkt[23] == 6:
            l4 = pkt[14 + (pkt[14] & 15) * 4:]
        elif et == 0x86DD and len(pkt) >= 54 and pkt[20] == 6:
            l4 = pkt[54:]
        else:
            continue
        if len(l4) < 14:
            continue
        sp, dp = struct.unpack("!HH", l4[:4])
        if sp == PORT and dp in ports and (l4[13] & 0x12) == 0x12:
            got.add(dp)
    return got


def cmd_send(args):
    ifname, dstmac, kind, count = args[:4]
    count = int(count)
    a = dict(zip(args[4::2], args[5::2]))
    dst, src = mac_bytes(dstmac), ifmac(ifname)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    sn = None
    if kind.endswith("tcp4") or kind.endswith("tcp6") or kind == "vxtcp":
        sn = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        sn.bind((a.get("--sniff", ifname), ETH_P_ALL))
    bad_ports, good_ports = set(), set()
    for bad, ports in ((True, bad_ports), (False, good_ports)):
        for i in range(count):
            f, tp = frame(kind, dst, src, i, bad, a)
            if tp is not None:
                ports.add(tp)
            s.send(f.ljust(60, b"\0"))
            time.sleep(0.005)
    print("sent %s %d+%d" % (kind, count, count))
    if sn:
        # SYN-ACKs of the good ones, then a little more for late ones
        got, end = set(), time.time() + float(a.get("--timeout", 5))
        while time.time() < end and not good_ports <= got:
            got |= synacks(sn, bad_ports | good_ports, min(end, time.time() + 0.2))
        got |= synacks(sn, bad_ports | good_ports, time.time() + 0.3)
        print("synack bad=%d good=%d" % (len(got & bad_ports), len(got & good_ports)))
    sys.stdout.flush()


def cmd_recv(args):
    out, secs = args[0], float(args[1])
    socks, listeners = [], []
    for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        for typ in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            x = socket.socket(fam, typ)
            x.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if fam == socket.AF_INET6:
                x.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            x.bind((addr, PORT))
            if typ == socket.SOCK_STREAM:
                x.listen(128)
                listeners.append(x)     # kept open: the kernel answers SYNs
            else:
                socks.append(x)
    end = time.time() + secs
    with open(out, "a", buffering=1) as f:
        f.write("ready\n")
        while time.time() < end:
            r, _, _ = select.select(socks, [], [], 0.5)
            for x in r:
                data = x.recv(4096)
                f.write(data.decode(errors="replace").rstrip(".") + "\n")


def cmd_hashgen(args):
    ifname, dstmac, count = args[0], args[1], int(args[2])
    dst, src = mac_bytes(dstmac), ifmac(ifname)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((ifname, 0))
    base = 20000 + (os.getpid() % 500) * 20
    for i in range(count):
        for v6 in (False, True):
            sa, da = (PEER_IP6, DUT_IP6) if v6 else (PEER_IP, DUT_IP)
            for proto in (6, 17):
                if proto == 6:
                    p = syn_seg(v6, sa, da, base + i, HTY_PORT)
                else:
                    p = udp_seg(v6, sa, da, base + i, HTY_PORT, b"vmx hash %d" % i)
                if v6:
                    f = dst + src + b"\x86\xdd" + ip6(sa, da, proto, p)
                else:
                    f = dst + src + b"\x08\x00" + ip4(sa, da, proto, p, i)
                s.send(f.ljust(60, b"\0"))
                time.sleep(0.005)
    print("sent %d TCP SYNs and %d UDP datagrams over IPv4 and IPv6" % (count, count))


if __name__ == "__main__":
    cmds = {"send": cmd_send, "recv": cmd_recv, "hashgen": cmd_hashgen}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](sys.argv[2:])
