#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tx_frags.py - UDP datagrams whose payload sits in many page fragments,
and a receiver that checks them byte for byte.

  tx_frags.py send DST PORT COUNT FRAGS [--len L]
      Send COUNT IPv4 datagrams to DST:PORT with MSG_ZEROCOPY. The payload
      of each is FRAGS pieces of L bytes (default 64), every piece in a page
      of its own, so the skb the driver gets has FRAGS page fragments and
      only the headers in its linear part. Waits for the zerocopy
      completions and prints how many datagrams the kernel reported as
      copied (the skb's fragments copied before transmission, e.g. when the
      driver linearized it); exit 1 if a completion is missing.
  tx_frags.py recv ADDR PORT COUNT [--timeout S] [--len L --frags F]
      Receive on ADDR:PORT until COUNT datagrams arrived or S seconds
      (default 20) passed without one; exit 0 when all COUNT arrived, each
      exactly once and exactly as sent (F * L bytes).
"""
import errno
import mmap
import select
import socket
import struct
import sys
import time

SO_ZEROCOPY = getattr(socket, "SO_ZEROCOPY", 60)
MSG_ZEROCOPY = getattr(socket, "MSG_ZEROCOPY", 0x4000000)
MSG_ERRQUEUE = getattr(socket, "MSG_ERRQUEUE", 0x2000)
SO_EE_ORIGIN_ZEROCOPY = 5
SO_EE_CODE_ZEROCOPY_COPIED = 1
MAGIC = b"VMXL"
PAGE = 4096


def payload(seq, size):
    head = MAGIC + struct.pack("!I", seq)
    return head + bytes((i * 13 + seq * 7 + 1) & 0xFF for i in range(size - len(head)))


def opt(args, name, default):
    if name in args:
        return int(args[args.index(name) + 1])
    return default


def drain_completions(s, timeout):
    """Read zerocopy notifications; return (datagrams done, datagrams copied)."""
    done = copied = 0
    end = time.time() + timeout
    while True:
        left = end - time.time()
        if left <= 0:
            return done, copied
        # error queue readiness shows as POLLERR
        p = select.poll()
        p.register(s, 0)
        if not p.poll(int(left * 1000)):
            return done, copied
        try:
            _, anc, _, _ = s.recvmsg(0, 1024, MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except OSError as e:
            if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                continue
            raise
        for _lvl, _typ, data in anc:
            ee_errno, origin, _t, code, _p, lo, hi = struct.unpack("=IBBBBII", data[:16])
            if origin != SO_EE_ORIGIN_ZEROCOPY:
                print(f"unexpected error queue entry: errno {ee_errno} origin {origin}")
                continue
            done += hi - lo + 1
            if code & SO_EE_CODE_ZEROCOPY_COPIED:
                copied += hi - lo + 1
        return done, copied


def send(dst, port, count, frags, plen):
    size = frags * plen
    # one page per piece and datagram: nothing is rewritten while the
    # device may still read it, and no two pieces share a page
    buf = mmap.mmap(-1, count * frags * PAGE)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_ZEROCOPY, 1)
    done = copied = 0
    for seq in range(count):
        data = payload(seq, size)
        iov = []
        for i in range(frags):
            off = (seq * frags + i) * PAGE + 64 + 8 * (i % 8)
            buf[off:off + plen] = data[i * plen:(i + 1) * plen]
            iov.append(memoryview(buf)[off:off + plen])
        n = s.sendmsg(iov, [], MSG_ZEROCOPY, (dst, port))
        if n != size:
            print(f"datagram {seq}: sent {n} of {size} bytes")
            return 1
        d, c = drain_completions(s, 0)
        done += d
        copied += c
        time.sleep(0.01)
    while done < count:
        d, c = drain_completions(s, 10)
        if not d:
            break
        done += d
        copied += c
    print(f"sent {count} datagrams of {frags} x {plen} bytes; "
          f"zerocopy completions {done}, copied by the kernel {copied}")
    if done != count:
        print("missing zerocopy completions")
        return 1
    return 0


def recv(addr, port, count, timeout, size):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((addr, port))
    s.settimeout(timeout)
    seen, bad = set(), 0
    while len(seen) < count:
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        seq = struct.unpack("!I", data[4:8])[0] if len(data) >= 8 else -1
        if data[:4] != MAGIC or seq in seen or data != payload(seq, size):
            bad += 1
            if bad <= 5:
                print(f"bad datagram ({len(data)} bytes, seq {seq}): {data[:32].hex()}...")
            continue
        seen.add(seq)
    print(f"received {len(seen)} of {count} datagrams exact, {bad} bad")
    return 0 if len(seen) == count and not bad else 1


def main(a):
    if len(a) >= 5 and a[0] == "send":
        return send(a[1], int(a[2]), int(a[3]), int(a[4]), opt(a, "--len", 64))
    if len(a) >= 4 and a[0] == "recv":
        size = opt(a, "--frags", 1) * opt(a, "--len", 64)
        return recv(a[1], int(a[2]), int(a[3]), opt(a, "--timeout", 20), size)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
