#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""xdp_rxmeta.py - check what progs/xdp_rxmeta.c (the XDP RX metadata
kfuncs) and progs/tc_rxmeta.c (the skb) recorded per flow, from
"bpftool map dump -j" files.

  xdp_rxmeta.py XDP_DUMP TC_DUMP HASH VLAN [--key HEX] [--udp-l4]
                [--min N]
      HASH: "hash"   every flow's bpf_xdp_metadata_rx_hash returned 0, the
                     hash equals the Toeplitz hash of the flow with KEY
                     (ethtool -x: aa:bb:..) over what its RSS type covers,
                     the type is XDP_RSS_TYPE_L4_IPV4_TCP for TCP and
                     XDP_RSS_TYPE_L4_IPV4_UDP (--udp-l4) or
                     XDP_RSS_TYPE_L3_IPV4 for UDP, the same for every
                     frame of a flow, and the skb got the same hash;
            "nodata" every call returned -ENODATA.
      VLAN: "none"   no flow was tagged; rx_vlan_tag returned -ENODATA;
            "VID"    flows to 10.99.VID.0/24 came tagged VID: rx_vlan_tag
                     returned 0, 802.1Q and VID (the device stripped the
                     tag: none left in the frame), the skb has the same
                     tag; untagged flows -ENODATA;
            "VID:inline" the tag stayed in the frame (offload off):
                     rx_vlan_tag -ENODATA, the frame's own tag is VID.
      At least N flows (default 4) and every flow the XDP program saw was
      seen by tc with as many frames.
"""
import json
import os
import socket
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tools", "testdev"))
from qtest import toeplitz  # noqa: E402

ENODATA = 61
NO_VID = 0xFFFF
TCP, UDP = 6, 17
# include/net/xdp.h
L3_IPV4, L4, L4_TCP, L4_UDP = 1, 8, 16, 32
TYPE_L3_IPV4 = L3_IPV4
TYPE_L4_IPV4_TCP = L3_IPV4 | L4 | L4_TCP
TYPE_L4_IPV4_UDP = L3_IPV4 | L4 | L4_UDP
# progs/rxmeta_common.h struct rxm_flow
FIELDS = ("saddr daddr sport dport proto frames inline_vid hash_rc hash rss_type "
          "hash_changed vlan_rc vlan_proto vlan_tci skb_hash skb_vlan_present "
          "skb_vlan_tci").split()
FMT = "<4s4sHHIIIiIIIiIIIII"


def load(path):
    flows = {}
    for e in json.load(open(path)):
        v = bytes(int(x, 16) for x in e["value"])
        f = dict(zip(FIELDS, struct.unpack(FMT, v[:struct.calcsize(FMT)])))
        f["src"], f["dst"] = socket.inet_ntoa(f["saddr"]), socket.inet_ntoa(f["daddr"])
        flows[struct.unpack("<I", bytes(int(x, 16) for x in e["key"]))[0]] = f
    return flows


def main(a):
    if len(a) < 4:
        print(__doc__)
        return 2
    xdp, tc = load(a[0]), load(a[1])
    mode, vlan = a[2], a[3]
    opts = a[4:]
    key = bytes.fromhex(opts[opts.index("--key") + 1].replace(":", "")) if "--key" in opts else b""
    udp_l4 = "--udp-l4" in opts
    nmin = int(opts[opts.index("--min") + 1]) if "--min" in opts else 4
    vid, inline = (int(vlan.split(":")[0]), vlan.endswith(":inline")) if vlan != "none" else (None, False)
    if mode == "hash":
        print("RSS key %s; UDP hashed over %s" % (key.hex(), "the 4-tuple" if udp_l4 else "the addresses"))
    bad, shown = [], set()
    for k in sorted(xdp):
        f = xdp[k]
        t = tc.get(k, {})
        tagged = vid is not None and f["dst"].startswith("10.99.%d." % vid)
        name = "%s %s:%d -> %s:%d" % ("TCP" if f["proto"] == TCP else "UDP", f["src"],
                                      f["sport"], f["dst"], f["dport"])
        desc = ("%s: %d frames (tc %d); rx_hash rc %d hash %#010x type %#x; skb hash %#010x;"
                " rx_vlan_tag rc %d proto %#06x tci %#x; in-frame VID %s; skb vlan %d tci %#x" %
                (name, f["frames"], t.get("frames", 0), f["hash_rc"], f["hash"], f["rss_type"],
                 t.get("skb_hash", 0), f["vlan_rc"], f["vlan_proto"], f["vlan_tci"],
                 "-" if f["inline_vid"] == NO_VID else f["inline_vid"],
                 t.get("skb_vlan_present", 0), t.get("skb_vlan_tci", 0)))
        why = []
        if t.get("frames") != f["frames"]:
            why.append("tc saw %d frames, XDP %d" % (t.get("frames", 0), f["frames"]))
        if mode == "nodata":
            if f["hash_rc"] != -ENODATA:
                why.append("rx_hash returned %d, want -ENODATA (-61)" % f["hash_rc"])
        else:
            if f["proto"] == TCP:
                want_type = TYPE_L4_IPV4_TCP
            else:
                want_type = TYPE_L4_IPV4_UDP if udp_l4 else TYPE_L3_IPV4
            data = f["saddr"] + f["daddr"]
            if want_type & L4:
                data += struct.pack("!HH", f["sport"], f["dport"])
            want = toeplitz(key, data)
            if f["hash_rc"] != 0:
                why.append("rx_hash returned %d, want 0" % f["hash_rc"])
            if f["rss_type"] != want_type:
                why.append("RSS type %#x, want %#x" % (f["rss_type"], want_type))
            if f["hash"] != want:
                why.append("hash %#010x, Toeplitz of the flow %#010x" % (f["hash"], want))
            if f["hash_changed"]:
                why.append("the hash changed %d times within the flow" % f["hash_changed"])
            if t.get("skb_hash") != f["hash"]:
                why.append("the skb got hash %#010x" % t.get("skb_hash", 0))
        if tagged and not inline:
            if f["vlan_rc"] != 0 or f["vlan_proto"] != 0x8100 or f["vlan_tci"] & 0xFFF != vid:
                why.append("rx_vlan_tag: want 0, 0x8100, VID %d" % vid)
            if f["inline_vid"] != NO_VID:
                why.append("the tag is still in the frame")
            if not t.get("skb_vlan_present") or t.get("skb_vlan_tci", 0) & 0xFFF != vid or \
                    t.get("skb_vlan_tci") != f["vlan_tci"]:
                why.append("the skb's tag differs")
        elif tagged:
            if f["vlan_rc"] != -ENODATA:
                why.append("rx_vlan_tag returned %d with the tag in the frame, want -ENODATA" %
                           f["vlan_rc"])
            if f["inline_vid"] != vid:
                why.append("no tag %d in the frame" % vid)
        else:
            if f["vlan_rc"] != -ENODATA:
                why.append("rx_vlan_tag returned %d for an untagged frame, want -ENODATA" %
                           f["vlan_rc"])
        # every flow with a problem (up to 10), one of each kind without
        kind = (f["proto"], tagged)
        if (why and len(bad) < 10) or (not why and kind not in shown):
            print(desc)
            shown.add(kind)
        for w in why[:4] if len(bad) < 10 else []:
            print("  " + w)
        bad += why
    ntag = sum(1 for f in xdp.values() if vid is not None and f["dst"].startswith("10.99.%d." % vid))
    print("%d flows (%d tagged), %d problems" % (len(xdp), ntag, len(bad)))
    if len(xdp) < nmin or (vid is not None and ntag == 0):
        print("too few flows seen")
        return 1
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
