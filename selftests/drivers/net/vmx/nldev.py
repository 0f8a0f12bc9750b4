#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nldev.py - a device from the netdev generic netlink family: what the
kernel's YNL client shows for "--family netdev --do dev-get", "--dump
queue-get" and "--dump napi-get" (Documentation/netlink/specs/netdev.yaml),
read with pp_check.py's netlink socket. Queue statistics: nlstats.py.

  nldev.py IFINDEX
      "xdp-features NAME,NAME..." ("none" if empty), "xdp-features-raw N",
      "xdp-zc-max-segs N"
  nldev.py queues IFINDEX
      one "queue rx|tx ID napi-id N" line per queue of the device
      (napi-id 0: the driver linked no NAPI to it)
  nldev.py napis IFINDEX
      one "napi ID irq N pid N" line per NAPI instance of the device
      ("-" where the kernel reports none)
Exit 2 when the kernel has no netdev family or not that command (dev-get
before 6.3, queue-get and napi-get before 6.8).
"""
import errno
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pp_check import Genl, NLM_F_DUMP, uint  # noqa: E402

CMD_DEV_GET, CMD_QUEUE_GET, CMD_NAPI_GET = 1, 10, 11
DEV_IFINDEX, DEV_XDP_FEATURES, DEV_XDP_ZC_MAX_SEGS = 1, 3, 4
Q_ID, Q_IFINDEX, Q_TYPE, Q_NAPI_ID = 1, 2, 3, 4
Q_TYPES = ["rx", "tx"]
NAPI_IFINDEX, NAPI_ID, NAPI_IRQ, NAPI_PID = 1, 2, 3, 4
XDP_ACT = ["basic", "redirect", "ndo-xmit", "xsk-zerocopy", "hw-offload",
           "rx-sg", "ndo-xmit-sg"]


def u32_attr(typ, val):
    return struct.pack("HHI", 8, typ, val)


def dev(g, fam, ifindex):
    a = g.request(fam, 0, CMD_DEV_GET, u32_attr(DEV_IFINDEX, ifindex))[0]
    f = uint(a.get(DEV_XDP_FEATURES)) or 0
    names = [n for i, n in enumerate(XDP_ACT) if f & (1 << i)]
    print("xdp-features " + (",".join(names) or "none"))
    print("xdp-features-raw %d" % f)
    print("xdp-zc-max-segs %d" % (uint(a.get(DEV_XDP_ZC_MAX_SEGS)) or 0))


def opt(v):
    return "-" if v is None else str(uint(v))


def queues(g, fam, ifindex):
    qs = g.request(fam, NLM_F_DUMP, CMD_QUEUE_GET, u32_attr(Q_IFINDEX, ifindex))
    for a in qs:
        if uint(a.get(Q_IFINDEX)) != ifindex:
            continue
        t = uint(a.get(Q_TYPE))
        print("queue %s %d napi-id %d" % (
            Q_TYPES[t] if t < len(Q_TYPES) else "type%d" % t,
            uint(a.get(Q_ID)), uint(a.get(Q_NAPI_ID)) or 0))


def napis(g, fam, ifindex):
    ns = g.request(fam, NLM_F_DUMP, CMD_NAPI_GET, u32_attr(NAPI_IFINDEX, ifindex))
    for a in ns:
        if uint(a.get(NAPI_IFINDEX)) != ifindex:
            continue
        print("napi %d irq %s pid %s" % (uint(a.get(NAPI_ID)),
                                         opt(a.get(NAPI_IRQ)),
                                         opt(a.get(NAPI_PID))))


MODES = {"queues": (queues, "queue-get"), "napis": (napis, "napi-get")}


def main(a):
    fn, what = dev, "dev-get"
    if len(a) == 2 and a[0] in MODES:
        fn, what = MODES[a.pop(0)]
    if len(a) != 1 or not a[0].isdigit():
        print(__doc__)
        return 2
    g = Genl()
    try:
        fam = g.family("netdev")
    except OSError as e:
        print("no netdev netlink family: %s" % e)
        return 2
    try:
        fn(g, fam, int(a[0]))
    except OSError as e:
        print("netdev %s: %s" % (what, e))
        # an unknown command or attribute: the kernel has not got it
        return 2 if e.errno in (errno.EOPNOTSUPP, errno.EINVAL) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
