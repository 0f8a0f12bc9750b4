#!/usr/bin/env python3
"""Summarise tools/bench-guest.sh output: medians, spread, ratios.

Usage: bench_report.py RAW.jsonl OUT.json HOST_KERNEL QEMU_VERSION
Prints a table; writes the raw lines and the summary to OUT.json.
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    raw, out = sys.argv[1], sys.argv[2]
    host = sys.argv[3] if len(sys.argv) > 3 else ""
    qemu = sys.argv[4] if len(sys.argv) > 4 else ""
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    cells = defaultdict(list)
    for r in rows:
        key = (r["test"], r["mode"], r["size"], r["driver"])
        cells[key].append(r)

    def med(key, field):
        vals = [r.get(field, 0) for r in cells.get(key, [])]
        if not vals:
            return None, None, None
        return statistics.median(vals), min(vals), max(vals)

    drivers = sorted({r["driver"] for r in rows},
                     key=lambda d: (d != "vmx", d))
    summary = []
    print("XDP (packets/s, median of %d rounds; spread = min..max)"
          % max((r["round"] for r in rows), default=0))
    hdr = "%-13s %-6s %4s" % ("test", "mode", "size")
    for d in drivers:
        hdr += " | %-8s %9s %9s %6s" % (d, "handled", "offered", "loss%")
    if len(drivers) == 2:
        hdr += " | %s/%s" % tuple(drivers)
    print(hdr)
    xdp_keys = sorted({(t, m, s) for (t, m, s, _) in cells
                       if not t.startswith("tcp")},
                      key=lambda k: (k[2], k[0], k[1]))
    for t, m, s in xdp_keys:
        line = "%-13s %-6s %4s" % (t, m, s)
        hs = []
        for d in drivers:
            h, lo, hi = med((t, m, s, d), "handled_pps")
            o, _, _ = med((t, m, s, d), "offered_pps")
            if h is None:
                line += " | %-8s %9s %9s %6s" % ("", "-", "-", "-")
                hs.append(None)
                continue
            loss = 100.0 * (o - h) / o if o else 0.0
            line += " | %-8s %9d %9d %6.1f" % ("", h, o, max(loss, 0.0))
            hs.append(h)
            summary.append({"test": t, "mode": m, "size": s, "driver": d,
                            "handled_pps": h, "min": lo, "max": hi,
                            "offered_pps": o})
        if len(hs) == 2 and hs[0] and hs[1]:
            line += " | %.2fx" % (hs[0] / hs[1])
        print(line)

    print()
    print("frames/s back at the generator (XDP_TX, ndo_xdp_xmit; median)")
    for t, m, s in xdp_keys:
        if t not in ("tx", "xdp_xmit"):
            continue
        parts = []
        for d in drivers:
            b, _, _ = med((t, m, s, d), "back_pps")
            if b is not None:
                parts.append("%s %d" % (d, b))
                summary.append({"test": t, "mode": m, "size": s,
                                "driver": d, "back_pps": b})
        if parts:
            print("  %-13s %-6s %4s: %s" % (t, m, s, ", ".join(parts)))

    print()
    print("DUT interrupts per 1000 handled packets (median)")
    for t, m, s in xdp_keys:
        parts = []
        for d in drivers:
            n, _, _ = med((t, m, s, d), "irqs")
            h, _, _ = med((t, m, s, d), "handled_pps")
            secs = max((r.get("secs", 0) for r in cells[(t, m, s, d)]),
                       default=0) if (t, m, s, d) in cells else 0
            if n is None or not h or not secs:
                continue
            parts.append("%s %.1f" % (d, 1000.0 * n / (h * secs)))
        if parts:
            print("  %-13s %-6s %4s: %s" % (t, m, s, ", ".join(parts)))

    print()
    print("native/skb ratio (XDP handled packets/s)")
    for d in drivers:
        for s in sorted({k[2] for k in xdp_keys}):
            parts = []
            for t in ("drop", "pass", "tx", "redirect-cpu"):
                n, _, _ = med((t, "native", s, d), "handled_pps")
                k, _, _ = med((t, "skb", s, d), "handled_pps")
                if n and k:
                    parts.append("%s %.2fx" % (t, n / k))
            print("  %-8s %4s B: %s" % (d, s, ", ".join(parts)))

    tcp_keys = sorted({(t, m, s) for (t, m, s, _) in cells
                       if t.startswith("tcp")})
    if tcp_keys:
        print()
        print("TCP (Mbit/s, iperf3, DUT %s)" % "tx = DUT sends, rx = DUT receives")
        for t, m, s in tcp_keys:
            line = "%-7s %-4s mtu %5s" % (t, m, s)
            ms = []
            for d in drivers:
                v, lo, hi = med((t, m, s, d), "mbit")
                ms.append(v)
                if v is not None:
                    line += " | %-8s %7.1f (%.0f..%.0f)" % (d, v, lo, hi)
                    summary.append({"test": t, "mode": m, "size": s,
                                    "driver": d, "mbit": v, "min": lo,
                                    "max": hi})
            if len(ms) == 2 and ms[0] and ms[1]:
                line += " | %.2fx" % (ms[0] / ms[1])
            print(line)

    with open(out, "w") as f:
        json.dump({"host_kernel": host, "qemu": qemu, "summary": summary,
                   "raw": rows}, f, indent=1)
    print()
    print("json: %s" % out)


if __name__ == "__main__":
    main()
