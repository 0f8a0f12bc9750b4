#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nlstats.py - queue statistics of one interface through the netdev generic
netlink family (NETDEV_CMD_QSTATS_GET, kernel 6.10+): the request
`ynl --family netdev --dump qstats-get` makes. It needs no privilege.

  nlstats.py dev IFINDEX     device scope: "name value" per counter
                             (base stats plus every queue; printed
                             nothing = the driver reported nothing)
  nlstats.py queue IFINDEX   queue scope: "rx|tx QUEUE name value" per
                             counter of every queue (nothing while down)

Exit 0 with the stats, 1 on a netlink error, 2 when this kernel has no
netdev family or no qstats-get. The netlink socket is pp_check.py's.
"""
import errno
import struct
import sys

from pp_check import Genl, NLM_F_DUMP, uint

NETDEV_CMD_QSTATS_GET = 12
A_IFINDEX, A_QUEUE_TYPE, A_QUEUE_ID, A_SCOPE = 1, 2, 3, 4
SCOPE_QUEUE = 1
# attribute 8 onwards, in the order of include/uapi/linux/netdev.h
NAMES = """rx-packets rx-bytes tx-packets tx-bytes rx-alloc-fail rx-hw-drops
rx-hw-drop-overruns rx-csum-complete rx-csum-unnecessary rx-csum-none
rx-csum-bad rx-hw-gro-packets rx-hw-gro-bytes rx-hw-gro-wire-packets
rx-hw-gro-wire-bytes rx-hw-drop-ratelimits tx-hw-drops tx-hw-drop-errors
tx-csum-none tx-needs-csum tx-hw-gso-packets tx-hw-gso-bytes
tx-hw-gso-wire-packets tx-hw-gso-wire-bytes tx-hw-drop-ratelimits tx-stop
tx-wake""".split()


def nla(typ, fmt, val):
    return struct.pack("HH" + fmt, 4 + struct.calcsize(fmt), typ, val)


def counters(a):
    return ["%s %d" % (n, uint(a[8 + i])) for i, n in enumerate(NAMES)
            if 8 + i in a]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("dev", "queue"):
        print(__doc__)
        return 2
    scope, ifindex = sys.argv[1], int(sys.argv[2])
    req = nla(A_IFINDEX, "I", ifindex)
    if scope == "queue":
        req += nla(A_SCOPE, "I", SCOPE_QUEUE)
    g = Genl()
    try:
        fam = g.family("netdev")
    except OSError as e:
        print("no netdev netlink family: %s" % e)
        return 2
    try:
        msgs = g.request(fam, NLM_F_DUMP, NETDEV_CMD_QSTATS_GET, req)
    except OSError as e:
        print("qstats-get ifindex %d scope %s: %s" % (ifindex, scope, e))
        return 2 if e.errno in (errno.EOPNOTSUPP, errno.EINVAL) else 1
    for a in msgs:
        if scope == "dev":
            print("\n".join(counters(a)))
        else:
            qt = "tx" if uint(a.get(A_QUEUE_TYPE)) else "rx"
            qid = uint(a.get(A_QUEUE_ID))
            for c in counters(a):
                print("%s %d %s" % (qt, qid, c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
