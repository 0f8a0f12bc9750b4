#!/usr/bin/env python3
"""Summarise tools/bench-guest.sh output.

Usage:
  bench_report.py count [--check [--expect CELLS]] RAW.jsonl MARKS OUT.json HOST_KERNEL QEMU_VERSION
      the counting benchmark: joins the guest's cell lines with the
      vmxcount plugin's marks; per packet: instructions on the DUT vCPU,
      MMIO writes/reads per BAR register, interrupts; vmx/in-tree ratios.
      --check: exit 1 unless every cell of every driver has numbers (the
      cells in the guest's lines, and CELLS, "TEST:MODE:SIZE ...").
  bench_report.py time RAW.jsonl OUT.json HOST_KERNEL QEMU_VERSION
      the wall-clock benchmark: medians, spread, ratios.
Prints a table; writes the raw lines and the summary to OUT.json.
"""
import functools
import json
import statistics
import sys
from collections import defaultdict


def time_main(argv):
    raw, out = argv[0], argv[1]
    host = argv[2] if len(argv) > 2 else ""
    qemu = argv[3] if len(argv) > 3 else ""
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


# ---------------------------------------------------------------- counting

# Projection constants (see Documentation/performance.rst, "Projection"):
# cycles per exit: a KVM_RUN round trip with an exit to user space measured
# on AMD SVM, lkml 2020-12 (lkml.iu.edu/hypermail/linux/kernel/2012.2/00527.html:
# "total cycles: 2528"); an interrupt is counted as one such exit (an
# assumption: injection plus EOI without posted interrupts is at least one);
# IPC 1.0 and 3 GHz are assumptions, the same for both drivers.
PROJ_GHZ = 3.0
PROJ_IPC = 1.0
PROJ_EXIT_CYCLES = 2528
PROJ_IRQ_CYCLES = 2528


# the background spin on CPU 0 (see count_main's "without the spin")
SPIN_FUNCS = ("native_queued_spin_lock_slowpath", "lock_timer_base", "__timer_delete_sync")
# the lock helpers the spin calls: counted with it in the proportion to
# lock_timer_base that the load's idle phase (no traffic at all) shows;
# the rest of their count (the cell's own locking) stays
SPIN_HELPERS = ("_raw_spin_lock_irqsave", "_raw_spin_unlock_irqrestore")
SPIN_BASE = "lock_timer_base"


def parse_marks(path):
    marks, io, hist = {}, defaultdict(dict), defaultdict(lambda: defaultdict(int))
    end = None
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "mark":
            marks[int(f[2])] = {"seq": int(f[1]), "vcpu": int(f[3]),
                                "insns": [int(x) for x in f[5:]]}
        elif f[0] == "io":
            io[int(f[1])][int(f[3], 16)] = (f[2], int(f[5]), int(f[7]))
        elif f[0] == "hist":
            hist[int(f[1])][int(f[2], 16)] += int(f[3])
        elif f[0] == "end":
            end = [int(x) for x in f[2:]]
    return marks, io, hist, end


def bar_reg(bar, off):
    """Name of a vmxnet3 register: BAR0 doorbells and masks, BAR1 offsets."""
    if bar == 0:
        for base, name in ((0xA00, "RXPROD2"), (0x800, "RXPROD"), (0x600, "TXPROD")):
            if base <= off < base + 0x200:
                return "%s[%d]" % (name, (off - base) // 8)
        if off < 0x600:
            return "IMR[%d]" % (off // 8)
    return "BAR%d+0x%x" % (bar, off)


def parse_bars(s):
    """'start-end ...' of DUT BAR0, BAR1, DUT2 BAR0, BAR1."""
    out = []
    names = [("dut", 0), ("dut", 1), ("dut2", 0), ("dut2", 1)]
    for (nic, bar), r in zip(names, s.split()):
        a, _, b = r.partition("-")
        out.append((nic, bar, int(a, 16), int(b or a, 16)))
    return out


@functools.lru_cache(maxsize=None)
def load_syms(path):
    """A kallsyms copy's text symbols, sorted; read once per file (several
    MB, asked for by every cell of a driver's loads)."""
    syms = []
    try:
        for line in open(path):
            f = line.split()
            if len(f) >= 3 and f[1] in "tTwW":
                mod = f[3] if len(f) > 3 else ""
                syms.append((int(f[0], 16), f[2] + (" " + mod if mod else "")))
    except OSError:
        return []
    syms.sort()
    return syms


def symbolize(syms, addrs):
    import bisect
    keys = [a for a, _ in syms]
    out = defaultdict(int)
    for a, n in addrs.items():
        i = bisect.bisect_right(keys, a) - 1
        # farther than any function is long: code loaded after the copy
        # of kallsyms was taken (the XDP program's JIT image)
        if i < 0 or a - keys[i] > 0x10000:
            out["[not in kallsyms: BPF JIT, the XDP program]"] += n
        else:
            out[syms[i][1]] += n
    return out


def cell_counts(r, marks, io, hist):
    m0, m1 = marks.get(r["mark0"]), marks.get(r["mark1"])
    if not m0 or not m1:
        return None
    n = max(len(m0["insns"]), len(m1["insns"]))
    i0 = m0["insns"] + [0] * (n - len(m0["insns"]))
    i1 = m1["insns"] + [0] * (n - len(m1["insns"]))
    d = [b - a for a, b in zip(i0, i1)]
    regs = defaultdict(lambda: [0, 0])
    other = defaultdict(lambda: [0, 0])
    bars = parse_bars(r.get("bars", ""))
    io0, io1 = io.get(m0["seq"], {}), io.get(m1["seq"], {})
    for phys, (name, w1, r1) in io1.items():
        _, w0, r0 = io0.get(phys, (name, 0, 0))
        if w1 == w0 and r1 == r0:
            continue
        for nic, bar, a, b in bars:
            if a <= phys <= b:
                key = "%s %s" % (nic, bar_reg(bar, phys - a))
                regs[key][0] += w1 - w0
                regs[key][1] += r1 - r0
                break
        else:
            other[name][0] += w1 - w0
            other[name][1] += r1 - r0
    h = defaultdict(int)
    for seq in range(m0["seq"] + 1, m1["seq"] + 1):
        for a, v in hist.get(seq, {}).items():
            h[a] += v
    return {"insns": d, "regs": dict(regs), "other_io": dict(other), "hist": h}


def count_main(argv):
    check = False
    expect = []
    while argv and argv[0].startswith("--"):
        if argv[0] == "--check":
            check = True
            argv = argv[1:]
        elif argv[0] == "--expect":
            # "TEST:MODE:SIZE ..." cells and "DRIVER ..." every one must have
            expect = [tuple(c.split(":")) for c in argv[1].split()]
            argv = argv[2:]
        else:
            sys.exit("unknown option " + argv[0])
    raw, marksf, out = argv[0], argv[1], argv[2]
    host = argv[3] if len(argv) > 3 else ""
    qemu = argv[4] if len(argv) > 4 else ""
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    marks, io, hist, _ = parse_marks(marksf)
    base = raw[:-len(".jsonl")] if raw.endswith(".jsonl") else raw
    idle = {}
    cells = defaultdict(list)
    problems = []
    # per load: each spin helper's instructions per lock_timer_base
    # instruction with no traffic (the idle phase)
    helper_k = {}
    for r in rows:
        c = cell_counts(r, marks, io, hist) if r["test"] == "idle" else None
        if not c or not c["hist"]:
            continue
        fn = symbolize(load_syms("%s.kallsyms.%s" % (base, r["driver"])), c["hist"])
        if fn.get(SPIN_BASE, 0) > 0:
            helper_k[r["load"]] = {h: fn.get(h, 0) / fn[SPIN_BASE] for h in SPIN_HELPERS}
    for r in rows:
        c = cell_counts(r, marks, io, hist)
        if c is None:
            problems.append("%s %s %s %s load %s: marker %s/%s not seen by the plugin"
                            % (r["driver"], r["test"], r["mode"], r["size"], r["load"],
                               r["mark0"], r["mark1"]))
            continue
        if r["test"] == "idle":
            idle[r["load"]] = c["insns"][0] / r["secs"] if r["secs"] > 0 else 0
            continue
        handled = r["packets"] - r.get("dev_nobuf", 0)
        if handled <= 0:
            problems.append("%s %s %s %s load %s: no packet handled (sent %s)"
                            % (r["driver"], r["test"], r["mode"], r["size"], r["load"],
                               r["packets"]))
            continue
        bar0w = sum(w for k, (w, _) in c["regs"].items() if "BAR" not in k.split()[1])
        exits = sum(w + rd for w, rd in c["regs"].values())
        irqs = sum(r.get("irqs", {}).values())
        m = {
            "load": r["load"], "packets": r["packets"], "handled": handled,
            "dev_nobuf": r.get("dev_nobuf", 0), "back": r.get("back", 0),
            "secs": r["secs"],
            "insn_dut": c["insns"][0] / handled,
            "insn_all": sum(c["insns"]) / handled,
            "insn_dut_idle": idle.get(r["load"], 0) * r["secs"] / handled,
            "insn_dut_net": (c["insns"][0] - idle.get(r["load"], 0) * r["secs"]) / handled,
            "doorbells_tx": sum(w for k, (w, _) in c["regs"].items() if "TXPROD" in k) / handled,
            "bar0_writes": bar0w / handled,
            "exits": exits / handled,
            "irqs": irqs / handled,
            "regs": {k: [w / handled, rd / handled] for k, (w, rd) in sorted(c["regs"].items())},
            "irq_vectors": {k: v / handled for k, v in sorted(r.get("irqs", {}).items())},
            "other_io": c["other_io"],
            "stats": r.get("stats", {}),
        }
        if c["hist"]:
            syms = load_syms("%s.kallsyms.%s" % (base, r["driver"]))
            if syms:
                fn = symbolize(syms, c["hist"])
                top = sorted(fn.items(), key=lambda kv: -kv[1])[:25]
                m["functions"] = [[k, v / handled] for k, v in top]
                tag = " [%s]" % r["driver"]
                m["driver_module"] = sum(v for k, v in fn.items() if k.endswith(tag)) / handled
                # CPU 0 without the background spin seen with no traffic at
                # all (waiting in timer deletion for a lock or a callback
                # held by CPU 1; see Documentation/performance.rst)
                spin = sum(fn.get(k, 0) for k in SPIN_FUNCS)
                for h, k in helper_k.get(r["load"], {}).items():
                    spin += min(fn.get(h, 0), k * fn.get(SPIN_BASE, 0))
                m["insn_dut_nospin"] = (c["insns"][0] - spin) / handled
        cells[(r["test"], r["mode"], r["size"], r["driver"])].append(m)

    def mean(key, field):
        v = [m[field] for m in cells.get(key, [])]
        return sum(v) / len(v) if v else None

    drivers = sorted({k[3] for k in cells}, key=lambda d: (d != "vmx", d))
    other = [d for d in drivers if d != "vmx"]
    ref = other[0] if other else None
    tests = sorted({k[:3] for k in cells}, key=lambda k: (k[2], k[0], k[1]))
    summary = []
    print("Counting benchmark: per handled packet, mean over the driver's loads "
          "(ABBA); insn = guest instructions on the DUT vCPU (CPU 0), net = minus "
          "CPU 0's idle rate over the cell's time; exits = BAR accesses; tcp cells "
          "(mode rx/tx, size = MTU): per KiB of the stream instead of per packet")
    hdr = "%-13s %-6s %4s | %-8s %8s %8s %13s %7s %7s %7s | %s" % (
        "test", "mode", "size", "driver", "insn", "net", "(net by load)", "bar0 w", "exits",
        "irqs", "vmx/ref net insn, bar0 w, irqs, projected pps")
    print(hdr)
    for t in tests:
        row = {"test": t[0], "mode": t[1], "size": t[2], "drivers": {}}
        for d in drivers:
            key = t + (d,)
            if key not in cells:
                continue
            row["drivers"][d] = {
                "insn_dut": mean(key, "insn_dut"), "insn_all": mean(key, "insn_all"),
                "insn_dut_idle": mean(key, "insn_dut_idle"),
                "insn_dut_net": mean(key, "insn_dut_net"),
                "doorbells_tx": mean(key, "doorbells_tx"),
                "bar0_writes": mean(key, "bar0_writes"), "exits": mean(key, "exits"),
                "irqs": mean(key, "irqs"), "loads": cells[key],
            }
            dd = row["drivers"][d]
            nospin = [m["insn_dut_nospin"] for m in cells[key] if "insn_dut_nospin" in m]
            # with the per-function histogram: CPU 0 without the background
            # spin, else the idle-corrected count
            dd["insn_proj"] = sum(nospin) / len(nospin) if nospin else dd["insn_dut_net"]
            ns = (dd["insn_proj"] / (PROJ_IPC * PROJ_GHZ) +
                  (dd["exits"] * PROJ_EXIT_CYCLES + dd["irqs"] * PROJ_IRQ_CYCLES) / PROJ_GHZ)
            dd["projected_ns"] = ns
            dd["projected_pps"] = 1e9 / ns if ns else None
        vm, rf = row["drivers"].get("vmx"), row["drivers"].get(ref) if ref else None
        ratio = ""
        if vm and rf:

            def rat(f):
                return vm[f] / rf[f] if rf[f] else (1.0 if vm[f] == 0 else float("inf"))
            row["ratio"] = {f: rat(f) for f in ("insn_dut", "insn_dut_net", "bar0_writes",
                                                "doorbells_tx", "irqs", "exits")}
            row["ratio"]["projected_pps"] = vm["projected_pps"] / rf["projected_pps"]
            native64 = t[1] == "native" and t[2] == 64 and t[0] != "xdp_xmit"
            goal = 0.85 if native64 else 1.0
            miss = []
            if row["ratio"]["insn_dut_net"] > goal:
                miss.append("insn > %.2fx" % goal)
            if t[0] in ("tx", "xdp_xmit") and t[1] == "native" and vm["doorbells_tx"] > 1 / 32:
                miss.append("TXPROD > 1/32")
            if vm["irqs"] > rf["irqs"] * 1.0001:
                miss.append("irqs > ref")
            row["targets_missed"] = miss
            ratio = "%.2fx %.2fx %.2fx %.2fx%s" % (
                row["ratio"]["insn_dut_net"], row["ratio"]["bar0_writes"], row["ratio"]["irqs"],
                row["ratio"]["projected_pps"], ("  MISS: " + ", ".join(miss)) if miss else "")
        for i, d in enumerate(drivers):
            dd = row["drivers"].get(d)
            if not dd:
                continue
            loads = " ".join("%.0f" % m["insn_dut_net"] for m in dd["loads"])
            print("%-13s %-6s %4s | %-8s %8.0f %8.0f %13s %7.4f %7.4f %7.4f | %s" % (
                t[0] if i == 0 else "", t[1] if i == 0 else "", t[2] if i == 0 else "",
                d, dd["insn_dut"], dd["insn_dut_net"], loads, dd["bar0_writes"], dd["exits"],
                dd["irqs"],
                ratio if i == 0 else ""))
        summary.append(row)

    print("\nMMIO accesses per packet by register (writes/reads; dut = the NIC "
          "under test, dut2 = the ndo_xdp_xmit source)")
    for row in summary:
        for d, dd in row["drivers"].items():
            regs = defaultdict(lambda: [0.0, 0.0])
            for m in dd["loads"]:
                for k, (w, rd) in m["regs"].items():
                    regs[k][0] += w / len(dd["loads"])
                    regs[k][1] += rd / len(dd["loads"])
            s = ", ".join("%s %.4f/%.4f" % (k, w, rd) for k, (w, rd) in sorted(regs.items()))
            print("  %-13s %-6s %4s %-8s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
    print("\nInterrupts per packet by vector")
    for row in summary:
        for d, dd in row["drivers"].items():
            vec = defaultdict(float)
            for m in dd["loads"]:
                for k, v in m["irq_vectors"].items():
                    vec[k] += v / len(dd["loads"])
            s = ", ".join("%s %.4f" % (k, v) for k, v in sorted(vec.items()) if v)
            print("  %-13s %-6s %4s %-8s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
    print("\nIdle CPU 0 (timer ticks etc.) per packet, included in insn above; "
          "instructions on all vCPUs per packet")
    for row in summary:
        for d, dd in row["drivers"].items():
            print("  %-13s %-6s %4s %-8s idle %.0f, all vCPUs %.0f, handled %s of %s, back %s" % (
                row["test"], row["mode"], row["size"], d, dd["insn_dut_idle"], dd["insn_all"],
                "/".join(str(m["handled"]) for m in dd["loads"]),
                "/".join(str(m["packets"]) for m in dd["loads"]),
                "/".join(str(m["back"]) for m in dd["loads"])))
    mods = [row for row in summary if any("driver_module" in m for dd in row["drivers"].values()
                                         for m in dd["loads"])]
    if mods:
        print("\nInstructions per packet in the driver module's own functions (DUT vCPU, "
              "mean of the loads; needs BENCH_HIST=1)")
        for row in mods:
            vals = {}
            for d, dd in row["drivers"].items():
                v = [m["driver_module"] for m in dd["loads"] if "driver_module" in m]
                if v:
                    vals[d] = sum(v) / len(v)
                    dd["driver_module"] = vals[d]
            s = "  ".join("%s %.0f" % (d, v) for d, v in vals.items())
            if "vmx" in vals and ref in vals and vals[ref]:
                s += "  %.2fx" % (vals["vmx"] / vals[ref])
            ns = {}
            for d, dd in row["drivers"].items():
                v = [m["insn_dut_nospin"] for m in dd["loads"] if "insn_dut_nospin" in m]
                if v:
                    ns[d] = dd["insn_dut_nospin"] = sum(v) / len(v)
            s += "  | CPU 0 without the timer spin: " + "  ".join(
                "%s %.0f" % (d, v) for d, v in ns.items())
            if "vmx" in ns and ref in ns and ns[ref]:
                s += "  %.2fx" % (ns["vmx"] / ns[ref])
            print("  %-13s %-6s %4s %s" % (row["test"], row["mode"], row["size"], s))
    print("\nethtool -S counters that moved in the window (first load; dut2 = second NIC)")
    for row in summary:
        for d, dd in row["drivers"].items():
            st = dd["loads"][0].get("stats", {})
            s = ", ".join("%s %+d" % (k, v) for k, v in sorted(st.items())
                          if not k.endswith(("bytes", "_bytes")))
            print("  %-13s %-6s %4s %-8s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
    fns = [(row, d, dd) for row in summary for d, dd in row["drivers"].items()
           if any("functions" in m for m in dd["loads"])]
    if fns:
        print("\nWhere the DUT vCPU's instructions go (per packet, first load, top functions)")
        for row, d, dd in fns:
            m = next(m for m in dd["loads"] if "functions" in m)
            print("  %s %s %s %s (the driver module's own functions: %.0f):" % (
                row["test"], row["mode"], row["size"], d, m.get("driver_module", 0)))
            for name, v in m["functions"][:15]:
                print("    %8.1f  %s" % (v, name))
    print("\nProjection (not a measurement): ns/packet = insn (without the spin if known, "
          "else net) / (IPC %.1f x %.1f GHz) + "
          "(exits + irqs) x %d cycles; see Documentation/performance.rst" % (
              PROJ_IPC, PROJ_GHZ, PROJ_EXIT_CYCLES))
    for p in problems:
        print("PROBLEM: " + p)
    json.dump({"host_kernel": host, "qemu": qemu, "cells": summary, "problems": problems,
               "raw": rows, "projection": {"ghz": PROJ_GHZ, "ipc": PROJ_IPC,
                                           "exit_cycles": PROJ_EXIT_CYCLES,
                                           "irq_cycles": PROJ_IRQ_CYCLES}},
              open(out, "w"), indent=1, default=float)
    print("\nwritten: %s" % out)
    if check:
        want = {(r["test"], r["mode"], r["size"]) for r in rows if r["test"] != "idle"}
        want |= {(t, m, int(z)) for t, m, z in expect}
        drv = {r["driver"] for r in rows}
        missing = ["%s %s %s %s" % (t + (d,)) for t in sorted(want, key=str) for d in sorted(drv)
                   if t + (d,) not in cells]
        if "vmx" not in drv or not ref:
            missing.append("both drivers (have: %s)" % " ".join(sorted(drv)))
        for row in summary:
            for d, dd in row["drivers"].items():
                if not dd["insn_dut"]:
                    missing.append("%s %s %s %s: no instructions" % (
                        row["test"], row["mode"], row["size"], d))
        if missing or problems:
            for m in missing:
                print("bench check: no numbers for " + m, file=sys.stderr)
            return 1
        print("bench check: every cell of %s has numbers" % " and ".join(sorted(drv)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "count":
        sys.exit(count_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "time":
        sys.exit(time_main(sys.argv[2:]))
    sys.exit(time_main(sys.argv[1:]))
