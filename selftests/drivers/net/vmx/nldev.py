#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nldev.py - a device's XDP features from the netdev generic netlink family:
what the kernel's YNL client shows for "--family netdev --do dev-get"
(Documentation/netlink/specs/netdev.yaml), read with pp_check.py's netlink
socket. Queue statistics: nlstats.py.

  nldev.py IFINDEX
      "xdp-features NAME,NAME..." ("none" if empty), "xdp-features-raw N",
      "xdp-zc-max-segs N"
Exit 2 when the kernel has no netdev family or no dev-get (before 6.3).
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pp_check import Genl, uint  # noqa: E402

CMD_DEV_GET = 1
DEV_IFINDEX, DEV_XDP_FEATURES, DEV_XDP_ZC_MAX_SEGS = 1, 3, 4
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


def main(a):
    if len(a) != 1 or not a[0].isdigit():
        print(__doc__)
        return 2
    g = Genl()
    try:
        dev(g, g.family("netdev"), int(a[0]))
    except OSError as e:
        print("netdev dev-get: %s" % e)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
