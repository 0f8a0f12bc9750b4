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

    # XDP_TX and ndo_xdp_xmit are judged by what reached the generator:
    # xdp-bench counts frames the program ran on, also those a driver
    # failed to send.
    def handled(key):
        if key[0] in ("tx", "xdp_xmit"):
            return med(key, "back_pps")
        return med(key, "handled_pps")

    def cost(key):
        """CPU 0 microseconds per handled packet (median over rounds)."""
        vals = []
        for r in cells.get(key, []):
            h = r.get("back_pps") if key[0] in ("tx", "xdp_xmit") \
                else r.get("handled_pps")
            if h and "cpu0" in r:
                vals.append(1e6 * r["cpu0"] / h)
        return statistics.median(vals) if vals else None

    print("XDP, 64/512-byte UDP (packets/s, median of %d rounds; spread ="
          " min..max; us = CPU-0 microseconds per packet)"
          % max((r["round"] for r in rows), default=0))
    hdr = "%-13s %-6s %4s" % ("test", "mode", "size")
    for d in drivers:
        hdr += " | %-8s %8s %15s %8s %5s %5s" % (d, "handled", "(spread)",
                                                 "offered", "loss%", "us")
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
            key = (t, m, s, d)
            h, lo, hi = handled(key)
            o, _, _ = med(key, "offered_pps")
            if h is None:
                line += " | %-8s %8s %15s %8s %5s %5s" % ("", "-", "", "-",
                                                          "-", "-")
                hs.append(None)
                continue
            us = cost(key)
            loss = 100.0 * (o - h) / o if o and t != "skb_tx" else 0.0
            line += " | %-8s %8d %15s %8d %5.1f %5s" % (
                "", h, "(%d..%d)" % (lo, hi), o, max(loss, 0.0),
                "%.1f" % us if us else "-")
            hs.append(h)
            xb, _, _ = med(key, "handled_pps")
            summary.append({"test": t, "mode": m, "size": s, "driver": d,
                            "handled_pps": h, "min": lo, "max": hi,
                            "offered_pps": o, "xdp_bench_pps": xb,
                            "cpu0_us_per_pkt": us})
        if len(hs) == 2 and hs[0] and hs[1]:
            line += " | %.2fx" % (hs[0] / hs[1])
        print(line)

    print()
    print("xdp-bench's own rate for XDP_TX / ndo_xdp_xmit (frames the"
          " program ran on; median)")
    for t, m, s in xdp_keys:
        if t not in ("tx", "xdp_xmit"):
            continue
        parts = []
        for d in drivers:
            v, _, _ = med((t, m, s, d), "handled_pps")
            if v is not None:
                parts.append("%s %d" % (d, v))
        print("  %-13s %-6s %4s: %s" % (t, m, s, ", ".join(parts)))

    print()
    print("DUT interrupts per 1000 handled packets (median)")
    for t, m, s in xdp_keys:
        parts = []
        for d in drivers:
            key = (t, m, s, d)
            n, _, _ = med(key, "irqs")
            h, _, _ = handled(key)
            secs = max((r.get("secs", 0) for r in cells.get(key, [])),
                       default=0)
            if n is None or not h or not secs:
                continue
            parts.append("%s %.1f" % (d, 1000.0 * n / (h * secs)))
        if parts:
            print("  %-13s %-6s %4s: %s" % (t, m, s, ", ".join(parts)))

    def host_cost(key, field):
        """Host CPU microseconds of QEMU thread(s) @field per packet."""
        vals = []
        for r in cells.get(key, []):
            h = r.get("back_pps") if key[0] in ("tx", "xdp_xmit") \
                else r.get("handled_pps")
            if h and r.get(field):
                vals.append(1e6 * r[field] / h)
        return statistics.median(vals) if vals else None

    if any(r.get("host_dut") for r in rows):
        print()
        print("Host CPU microseconds per handled packet (median): QEMU's DUT"
              " vCPU thread (guest CPU 0: driver, NAPI, XDP and the device"
              " work its doorbells start) / the whole QEMU process")
        for t, m, s in xdp_keys:
            parts, duts = [], []
            for d in drivers:
                key = (t, m, s, d)
                hd = host_cost(key, "host_dut")
                ha = host_cost(key, "host_all")
                if hd is None or ha is None:
                    continue
                duts.append(hd)
                parts.append("%s %5.2f / %5.2f" % (d, hd, ha))
                for e in summary:
                    if (e.get("test"), e.get("mode"), e.get("size"),
                            e.get("driver")) == key:
                        e["host_dut_us_per_pkt"] = hd
                        e["host_all_us_per_pkt"] = ha
            if parts:
                ratio = ""
                if len(duts) == 2 and duts[1]:
                    ratio = " | DUT thread %.2fx" % (duts[0] / duts[1])
                print("  %-13s %-6s %4s: %s%s" % (t, m, s, ", ".join(parts),
                                                  ratio))

    print()
    print("native/skb ratio (handled packets/s; CPU-0 us per packet)")
    for d in drivers:
        for s in sorted({k[2] for k in xdp_keys}):
            parts = []
            for t in ("drop", "pass", "tx", "redirect-cpu"):
                n, _, _ = handled((t, "native", s, d))
                k, _, _ = handled((t, "skb", s, d))
                cn, ck = cost((t, "native", s, d)), cost((t, "skb", s, d))
                if n and k:
                    parts.append("%s %.2fx%s" % (
                        t, n / k,
                        " (%.1f vs %.1f us)" % (cn, ck) if cn and ck else ""))
            if parts:
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
