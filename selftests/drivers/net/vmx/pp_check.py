#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""pp_check.py - page_pool leak check through the netdev generic netlink
family (NETDEV_CMD_PAGE_POOL_GET, kernel 6.8+).

  pp_check.py list            print every page_pool: id ifindex inflight detached
  pp_check.py settled [S]     wait up to S seconds (default 10) until no
                              destroyed-but-not-freed (detached) pool holds
                              pages; exit 1 listing those that still do.
A pool that stays detached with pages in flight after its driver released
everything is a page leak (the kernel only warns about it after 60 s).
Exit 2 when the kernel has no page-pool netlink support.
"""
import os
import socket
import struct
import sys
import time

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NETDEV_CMD_PAGE_POOL_GET = 5
A_ID, A_IFINDEX, A_NAPI, A_INFLIGHT, A_INFLIGHT_MEM, A_DETACH = 1, 2, 3, 4, 5, 6


def attrs(b):
    out = {}
    while len(b) >= 4:
        ln, typ = struct.unpack("HH", b[:4])
        if ln < 4:
            break
        val = b[4:ln]
        out[typ & 0x3FFF] = val
        b = b[(ln + 3) & ~3:]
    return out


def uint(v):
    return int.from_bytes(v, "little") if v is not None else None


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.seq = 1

    def request(self, typ, flags, cmd, payload=b""):
        self.seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + payload
        msg = struct.pack("IHHII", 16 + len(body), typ, flags | NLM_F_REQUEST,
                          self.seq, 0) + body
        self.s.send(msg)
        out = []
        while True:
            data = self.s.recv(1 << 16)
            while len(data) >= 16:
                ln, mtype, _, _, _ = struct.unpack("IHHII", data[:16])
                part = data[16:ln]
                data = data[(ln + 3) & ~3:]
                if mtype == NLMSG_DONE:
                    return out
                if mtype == NLMSG_ERROR:
                    err = struct.unpack("i", part[:4])[0]
                    if err:
                        raise OSError(-err, os.strerror(-err))
                    return out
                out.append(attrs(part[4:]))
            if not (flags & NLM_F_DUMP) and out:
                return out

    def family(self, name):
        n = name.encode() + b"\0"
        a = struct.pack("HH", 4 + len(n), CTRL_ATTR_FAMILY_NAME) + n
        a += b"\0" * ((4 - len(a) % 4) % 4)
        r = self.request(GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, a)
        return struct.unpack("H", r[0][CTRL_ATTR_FAMILY_ID][:2])[0]


def pools():
    g = Genl()
    fam = g.family("netdev")
    out = []
    for a in g.request(fam, NLM_F_DUMP, NETDEV_CMD_PAGE_POOL_GET):
        out.append(dict(id=uint(a.get(A_ID)), ifindex=uint(a.get(A_IFINDEX)),
                        inflight=uint(a.get(A_INFLIGHT)) or 0,
                        detach=uint(a.get(A_DETACH))))
    return out


def show(p):
    return "pool %s ifindex %s inflight %d%s" % (
        p["id"], p["ifindex"], p["inflight"],
        " detached at %ds" % p["detach"] if p["detach"] else "")


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else "list"
    try:
        ps = pools()
    except OSError as e:
        print("page-pool netlink not available: %s" % e)
        return 2
    if cmd == "list":
        for p in ps:
            print(show(p))
        return 0
    if cmd == "settled":
        end = time.time() + float(sys.argv[2] if len(sys.argv) > 2 else 10)
        while True:
            stuck = [p for p in pools() if p["detach"] and p["inflight"]]
            if not stuck:
                print("%d page_pools, none detached with pages in flight" %
                      len(pools()))
                return 0
            if time.time() > end:
                for p in stuck:
                    print("LEAK? " + show(p))
                return 1
            time.sleep(0.5)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
