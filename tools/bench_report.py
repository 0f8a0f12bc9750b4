#!/usr/bin/env python3
"""Summarise tools/bench-guest.sh output.

Usage:
  bench_report.py count [--check [--expect CELLS]] RAW.jsonl MARKS OUT.json HOST_KERNEL QEMU_VERSION
      the counting benchmark: joins the guest's cell lines with the
      vmxcount plugin's marks; per packet: instructions on the DUT vCPU,
      MMIO writes/reads per BAR register, interrupts; vmx/in-tree ratios.
      --check: exit 1 unless every cell of every driver has numbers (the
      cells in the guest's lines, and CELLS, "TEST:MODE:SIZE ...") and
      no PROBLEM was found (e.g. an AF_XDP socket that missed frames).
  bench_report.py time RAW.jsonl OUT.json HOST_KERNEL QEMU_VERSION
      the wall-clock benchmark: medians, spread, ratios.
Prints a table; writes the raw lines and the summary to OUT.json.
"""
import functools
import json
import re
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


# QEMU's virtio-pci modern BAR (7.2 to 10.0): common configuration at 0,
# ISR at 0x1000, device configuration at 0x2000, notify region at 0x3000
# with one 4-byte slot per virtqueue (notify_off_multiplier 4); the
# plugin also names the region (virtio-pci-notify-..., ...).
VIRTIO_NOTIFY_BASE = 0x3000


def bar_reg(bar, off, region=""):
    """Name of a device register: vmxnet3 BAR0 doorbells and masks, BAR1
    offsets; virtio's notify slots (virtqueue 0 = RX 0, 1 = TX 0, with one
    queue pair 2 = the control queue) and configuration regions; MSI-X."""
    if region.startswith("virtio-pci-notify"):
        q = (off - VIRTIO_NOTIFY_BASE) // 4
        return "NOTIFY[%s]" % ({0: "rx0", 1: "tx0"}.get(q, "vq%d" % q))
    for pre, name in (("virtio-pci-common", "VCOMMON"), ("virtio-pci-isr", "VISR"),
                      ("virtio-pci-device", "VDEVCFG"), ("msix-table", "MSIX"),
                      ("msix-pba", "MSIXPBA")):
        if region.startswith(pre):
            return "%s+0x%x" % (name, off)
    if bar == 0 and not region.startswith("virtio"):
        for base, name in ((0xA00, "RXPROD2"), (0x800, "RXPROD"), (0x600, "TXPROD")):
            if base <= off < base + 0x200:
                return "%s[%d]" % (name, (off - base) // 8)
        if off < 0x600:
            return "IMR[%d]" % (off // 8)
    return "BAR%d+0x%x" % (bar, off)


def parse_bars(s):
    """'NIC:BAR:start-end ...' (every memory BAR of the DUT and DUT2), or
    the older 'start-end ...' of DUT BAR0, BAR1, DUT2 BAR0, BAR1."""
    out = []
    names = [("dut", 0), ("dut", 1), ("dut2", 0), ("dut2", 1)]
    for i, r in enumerate(s.split()):
        if r.count(":") == 2:
            nic, bar, r = r.split(":")
            bar = int(bar)
        elif i < len(names):
            nic, bar = names[i]
        else:
            continue
        a, _, b = r.partition("-")
        out.append((nic, bar, int(a, 16), int(b or a, 16)))
    return out


# The virtio core built into the guest kernel (CONFIG_VIRTIO=y,
# CONFIG_VIRTIO_PCI=y on Debian's 6.12), without a module tag in kallsyms:
# drivers/virtio/virtio_ring.c (virtqueue_*, vring_* and these statics)
# and the data-path functions of virtio_pci_common.c and virtio.c. What
# vmx and vmxnet3 do in their own module (rings, doorbells, interrupt
# handlers) virtio_net does partly here, so "own + core" is the fair
# comparison; both are reported.
VIRTIO_CORE_PREFIXES = ("virtqueue_", "__virtqueue_", "vring_", "__vring_")
VIRTIO_CORE_NAMES = frozenset((
    "detach_buf_split", "detach_buf_packed", "more_used", "more_used_split",
    "more_used_packed", "alloc_indirect_split", "alloc_indirect_packed",
    "is_used_desc_packed", "packed_last_used", "packed_used_wrap_counter",
    "virtio_max_dma_size", "virtio_break_device", "__virtio_unbreak_device",
    "vp_notify", "vp_notify_with_data", "vp_interrupt", "vp_vring_interrupt",
    "vp_vring_slow_path_interrupt", "vp_config_changed", "vp_synchronize_vectors",
    "virtio_config_changed", "__virtio_config_changed"))


def is_virtio_core(sym):
    if " " in sym:  # "name [module]": a module's, not the built-in core
        return False
    name = sym.split(".")[0]
    return name in VIRTIO_CORE_NAMES or name.startswith(VIRTIO_CORE_PREFIXES)


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
                key = "%s %s" % (nic, bar_reg(bar, phys - a, name))
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


def virtio_table(summary):
    """vmx, vmxnet3 and virtio_net side by side, and vmx's targets against
    virtio_net: its own instructions at or below virtio_net's (virtio_net.ko
    plus the virtio core) in every native XDP cell, exits (register
    accesses plus interrupts) at or below virtio_net's in every cell."""
    rows = [r for r in summary if "vmx" in r["drivers"] and "virtio_net" in r["drivers"]]
    if not rows:
        return
    print("\nThree DUTs, per handled packet (tcp: per KiB): own = the driver's own "
          "instructions (virtio_net: virtio_net.ko + the virtio core; .ko alone in "
          "brackets), cpu0 = CPU 0 without the timer spin (else net), devw = register "
          "writes (vmxnet3 BARs; virtio notify), irq = interrupts, exits = register "
          "accesses + irq")
    print("%-13s %-6s %4s | %-33s | %-33s | %-40s | %s" % (
        "test", "mode", "size", "vmx: own cpu0 devw irq", "vmxnet3: own cpu0 devw irq",
        "virtio_net: own (ko) cpu0 devw irq", "vmx/virtio_net own, exits"))

    def cols(dd, virtio=False):
        if not dd:
            return "-"
        own = dd.get("driver_module")
        cpu = dd.get("insn_dut_nospin", dd.get("insn_dut_net"))
        if own is None:
            o = "%5s" % "-"
        elif virtio:
            o = "%5.0f (%4.0f)" % (own + dd.get("virtio_core", 0), own)
        else:
            o = "%5.0f" % own
        return "%s %6.0f %6.4f %6.4f" % (o, cpu, dd["dev_writes"], dd["irqs"])

    for r in rows:
        vm, vn = r["drivers"]["vmx"], r["drivers"]["virtio_net"]
        vx = r["drivers"].get("vmxnet3")
        # multi-buffer (frags) cells are native XDP too
        native = r["mode"] in ("native", "frags")
        cmp = {}
        miss = []
        if "driver_module" in vm and "driver_module" in vn:
            vown = vn["driver_module"] + vn.get("virtio_core", 0)
            cmp["own"] = vm["driver_module"] / vown if vown else float("inf")
            cmp["own_ko"] = vm["driver_module"] / vn["driver_module"] \
                if vn["driver_module"] else float("inf")
            if native and vm["driver_module"] > vown:
                miss.append("own > virtio_net")
        ex_vm = vm["exits"] + vm["irqs"]
        ex_vn = vn["exits"] + vn["irqs"]
        cmp["exits"] = ex_vm / ex_vn if ex_vn else (1.0 if ex_vm == 0 else float("inf"))
        cmp["exits_vmx"], cmp["exits_virtio_net"] = ex_vm, ex_vn
        if ex_vm > ex_vn * 1.0001:
            miss.append("exits > virtio_net")
        r["vs_virtio_net"] = cmp
        r["targets_missed_virtio_net"] = miss
        print("%-13s %-6s %4s | %-33s | %-33s | %-40s | %s %.2fx%s" % (
            r["test"], r["mode"], r["size"], cols(vm), cols(vx), cols(vn, True),
            "%.2fx" % cmp["own"] if "own" in cmp else "-", cmp["exits"],
            ("  MISS: " + ", ".join(miss)) if miss else ""))


XSK_MODES = ("xsk-zc", "xsk-copy")
# tools/bench-guest.sh count_xsk's reason for a refused zero-copy bind:
# xsk_tool's "xsk: bind (zc): <strerror>" with the kernel's EOPNOTSUPP for a
# driver without the xsk-zerocopy feature (the in-tree vmxnet3 and
# virtio_net of 6.12)
ZC_REFUSED = "xsk: bind (zc): Operation not supported"


# tools/bench-guest.sh count_frags_attach's reason when the in-tree vmxnet3
# refuses a multi-buffer cell: its XDP takes no MTU above 3 KiB (the
# kernel's extack, through ip's "Error: vmxnet3: ...")
FRAGS_REFUSED = re.compile(r"^native XDP refused: Error: vmxnet3: MTU \d+ too large for XDP\.?$")


def na_excused(r):
    """A cell's "not available" line (r["na"]) that is no gap: an in-tree
    driver refusing the AF_XDP zero-copy bind, the in-tree vmxnet3
    refusing XDP at a multi-buffer cell's MTU. Anything else (vmx or
    virtio_net not running a cell, an in-tree driver refusing native XDP or
    a copy-mode socket, a zero-copy bind failing otherwise) is a problem."""
    if r["driver"] == "vmx":
        return False
    if r["mode"] == "xsk-zc":
        return r["na"] == ZC_REFUSED
    return r["driver"] == "vmxnet3" and r["mode"] == "frags" and bool(FRAGS_REFUSED.match(r["na"]))


def xsk_short(r, handled):
    """What an AF_XDP cell's socket (and, l2fwd, the generator) missed of
    the @handled frames its figures are divided by: one line each, none
    when it got them all.

    No frame may be missing, no margin: tools/bench-guest.sh count_xsk
    reads both counts after the generator has finished (pktgen's start
    returns once it has sent its count), the 0.2 s the cell leaves for the
    last frames and the second marker. xsk_received is xsk_tool's total,
    printed as it ends (stopped after these reads; rx also takes what is
    left on its RX ring then); back, the generator's rx_packets, is read
    after the marker too, before the socket stops. A frame not at the
    socket or back at the generator by then was not handled inside the
    counted window, so its cost is not in the cell's figures either;
    back may only be larger (it counts whatever else reached the
    generator)."""
    out = []
    got = r.get("xsk_received")
    if got is None or got < handled:
        out.append("the socket received %s of the %d frames handled" % (got, handled))
    if r["test"] == "l2fwd" and r.get("back", 0) < handled:
        out.append("%d of the %d frames handled came back" % (r.get("back", 0), handled))
    return out


def xsk_table(summary, na):
    """The AF_XDP cells (rxdrop, l2fwd; mode xsk-zc or xsk-copy): each
    driver's figures per packet, zero-copy against copy mode (vmx's target:
    CPU 0 per packet in zero-copy at most 0.6x copy mode's), and vmx
    against the other drivers in the same mode."""
    rows = [r for r in summary if r["mode"] in XSK_MODES]
    if not rows and not na:
        return
    print("\nAF_XDP (socket on CPU 0 with the DUT's NAPI; queue 0), per handled packet: "
          "own = the driver module's instructions (virtio_net: + the virtio core), "
          "cpu0 = CPU 0 without the timer spin (else net), devw, irq; socket = frames "
          "the socket received, back = frames back at the generator (l2fwd)")
    by = {(r["test"], r["mode"], r["size"]): r for r in rows}
    for r in rows:
        for d, dd in r["drivers"].items():
            own = dd.get("driver_module")
            if own is not None and d == "virtio_net":
                own += dd.get("virtio_core", 0)
            cpu = dd.get("insn_dut_nospin", dd.get("insn_dut_net"))
            short = ["load %s: %s" % (m["load"], w) for m in dd["loads"]
                     for w in m.get("xsk_short", [])]
            print("  %-7s %-8s %4s %-10s own %5s cpu0 %6.0f devw %6.4f irq %6.4f socket %s back %s"
                  " of handled %s%s" % (
                      r["test"], r["mode"], r["size"], d, "%.0f" % own if own is not None else "-",
                      cpu, dd["dev_writes"], dd["irqs"],
                      "/".join(str(m.get("xsk_received")) for m in dd["loads"]),
                      "/".join(str(m["back"]) for m in dd["loads"]),
                      "/".join(str(m["handled"]) for m in dd["loads"]),
                      ("  SHORT: " + "; ".join(short)) if short else ""))
    for (t, m, z, d), why in sorted(na.items()):
        if m in XSK_MODES:
            print("  %-7s %-8s %4s %-10s not available: %s" % (t, m, z, d, why))
    print("zero-copy / copy mode per packet (CPU 0; own)")
    for (t, m, z), r in sorted(by.items()):
        if m != "xsk-zc" or (t, "xsk-copy", z) not in by:
            continue
        rc = by[(t, "xsk-copy", z)]
        for d, zc in r["drivers"].items():
            cp = rc["drivers"].get(d)
            if not cp:
                continue
            cz = zc.get("insn_dut_nospin", zc.get("insn_dut_net"))
            cc = cp.get("insn_dut_nospin", cp.get("insn_dut_net"))
            ratio = cz / cc if cc else float("inf")
            own = ""
            if zc.get("driver_module") and cp.get("driver_module"):
                own = " own %.2fx" % (zc["driver_module"] / cp["driver_module"])
            miss = ""
            if d == "vmx":
                r.setdefault("xsk_zc_vs_copy", {})[d] = ratio
                miss = "  (target <= 0.60x: %s)" % ("met" if ratio <= 0.6 else "MISS")
            print("  %-7s %4s %-10s cpu0 %.0f / %.0f = %.2fx%s%s" % (t, z, d, cz, cc, ratio, own, miss))
    print("vmx against the other drivers in the same AF_XDP cell (CPU 0; own)")
    for (t, m, z), r in sorted(by.items()):
        vm = r["drivers"].get("vmx")
        if not vm:
            continue
        for d, dd in r["drivers"].items():
            if d == "vmx":
                continue
            a = vm.get("insn_dut_nospin", vm.get("insn_dut_net"))
            b = dd.get("insn_dut_nospin", dd.get("insn_dut_net"))
            own = ""
            if "driver_module" in vm and "driver_module" in dd:
                ob = dd["driver_module"] + (dd.get("virtio_core", 0) if d == "virtio_net" else 0)
                own = " own %.0f / %.0f = %.2fx" % (vm["driver_module"], ob,
                                                    vm["driver_module"] / ob if ob else float("inf"))
            print("  %-7s %-8s %4s vmx / %-10s cpu0 %.0f / %.0f = %.2fx%s" % (
                t, m, z, d, a, b, a / b if b else float("inf"), own))


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
    # cells a driver cannot run (tools/bench-guest.sh count_na: e.g. an
    # AF_XDP zero-copy bind the in-tree vmxnet3 refuses): the reason.
    # Judged per load (a driver loaded twice could run the cell in one load
    # and not in the other): only an in-tree driver's refused zero-copy
    # bind is no problem; vmx must run every cell in every load.
    na = {}
    for r in rows:
        if "na" in r:
            na[(r["test"], r["mode"], r["size"], r["driver"])] = r["na"]
            if not na_excused(r):
                problems.append("%s %s %s %s load %s: not available: %s" % (
                    r["driver"], r["test"], r["mode"], r["size"], r["load"], r["na"]))
            continue
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
        short = xsk_short(r, handled) if r["mode"] in XSK_MODES else []
        for why in short:
            problems.append("%s %s %s %s load %s: %s" % (
                r["driver"], r["test"], r["mode"], r["size"], r["load"], why))
        # vmxnet3's BAR0 registers (the doorbells and interrupt masks)
        bar0w = sum(w for k, (w, _) in c["regs"].items()
                    if k.split()[1].startswith(("IMR", "TXPROD", "RXPROD")))
        # every write to a register of the DUT or DUT2 (vmxnet3 BAR0/BAR1,
        # virtio's notify and configuration regions, MSI-X tables)
        devw = sum(w for w, _ in c["regs"].values())
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
            "doorbells_tx": sum(w for k, (w, _) in c["regs"].items()
                                if "TXPROD" in k or "NOTIFY[tx" in k) / handled,
            "bar0_writes": bar0w / handled,
            "dev_writes": devw / handled,
            "exits": exits / handled,
            "irqs": irqs / handled,
            "regs": {k: [w / handled, rd / handled] for k, (w, rd) in sorted(c["regs"].items())},
            "irq_vectors": {k: v / handled for k, v in sorted(r.get("irqs", {}).items())},
            "other_io": c["other_io"],
            "stats": r.get("stats", {}),
            "xsk_received": r.get("xsk_received"),
            "xsk_short": short,
        }
        if c["hist"]:
            syms = load_syms("%s.kallsyms.%s" % (base, r["driver"]))
            if syms:
                fn = symbolize(syms, c["hist"])
                top = sorted(fn.items(), key=lambda kv: -kv[1])[:25]
                m["functions"] = [[k, v / handled] for k, v in top]
                tag = " [%s]" % r["driver"]
                m["driver_module"] = sum(v for k, v in fn.items() if k.endswith(tag)) / handled
                # the built-in virtio core on CPU 0 (virtio_net's rings and
                # notifications; about 0 for the other drivers)
                m["virtio_core"] = sum(v for k, v in fn.items() if is_virtio_core(k)) / handled
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

    order = {"vmx": 0, "vmxnet3": 1, "virtio_net": 2}
    drivers = sorted({k[3] for k in cells}, key=lambda d: (order.get(d, 3), d))
    other = [d for d in drivers if d != "vmx"]
    # the ratio columns and their targets: vmx against the in-tree vmxnet3;
    # virtio_net, when loaded, has its own table below
    ref = "vmxnet3" if "vmxnet3" in drivers else (other[0] if other else None)
    tests = sorted({k[:3] for k in cells}, key=lambda k: (k[2], k[0], k[1]))
    summary = []
    print("Counting benchmark: per handled packet, mean over the driver's loads "
          "(ABBA); insn = guest instructions on the DUT vCPU (CPU 0), net = minus "
          "CPU 0's idle rate over the cell's time; dev w = writes to the DUT's and "
          "DUT2's registers (vmxnet3 BARs, virtio notify/config regions, MSI-X); "
          "exits = register reads and writes; tcp cells "
          "(mode rx/tx, size = MTU): per KiB of the stream instead of per packet")
    hdr = "%-13s %-6s %4s | %-10s %8s %8s %13s %7s %7s %7s | %s" % (
        "test", "mode", "size", "driver", "insn", "net", "(net by load)", "dev w", "exits",
        "irqs", "vmx/%s net insn, dev w, irqs, projected pps" % ref)
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
                "dev_writes": mean(key, "dev_writes"),
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
                                                "dev_writes", "doorbells_tx", "irqs", "exits")}
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
                row["ratio"]["insn_dut_net"], row["ratio"]["dev_writes"], row["ratio"]["irqs"],
                row["ratio"]["projected_pps"], ("  MISS: " + ", ".join(miss)) if miss else "")
        for i, d in enumerate(drivers):
            dd = row["drivers"].get(d)
            if not dd:
                continue
            loads = " ".join("%.0f" % m["insn_dut_net"] for m in dd["loads"])
            # an AF_XDP load whose socket (or generator) missed frames:
            # its figures are divided by frames it did not get
            short = any(m.get("xsk_short") for m in dd["loads"])
            print("%-13s %-6s %4s | %-10s %8.0f %8.0f %13s %7.4f %7.4f %7.4f | %s%s" % (
                t[0] if i == 0 else "", t[1] if i == 0 else "", t[2] if i == 0 else "",
                d, dd["insn_dut"], dd["insn_dut_net"], loads, dd["dev_writes"], dd["exits"],
                dd["irqs"],
                ratio if i == 0 else "",
                "  SHORT: frames missing (see the AF_XDP table)" if short else ""))
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
            print("  %-13s %-6s %4s %-10s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
    print("\nInterrupts per packet by vector")
    for row in summary:
        for d, dd in row["drivers"].items():
            vec = defaultdict(float)
            for m in dd["loads"]:
                for k, v in m["irq_vectors"].items():
                    vec[k] += v / len(dd["loads"])
            s = ", ".join("%s %.4f" % (k, v) for k, v in sorted(vec.items()) if v)
            print("  %-13s %-6s %4s %-10s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
    print("\nIdle CPU 0 (timer ticks etc.) per packet, included in insn above; "
          "instructions on all vCPUs per packet")
    for row in summary:
        for d, dd in row["drivers"].items():
            print("  %-13s %-6s %4s %-10s idle %.0f, all vCPUs %.0f, handled %s of %s, back %s" % (
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
            for d, dd in row["drivers"].items():
                v = [m["virtio_core"] for m in dd["loads"] if "virtio_core" in m]
                if v:
                    dd["virtio_core"] = sum(v) / len(v)
            s = "  ".join(("%s %.0f+%.0f" % (d, v, row["drivers"][d]["virtio_core"])
                           if d == "virtio_net" else "%s %.0f" % (d, v))
                          for d, v in vals.items())
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
        print("  (virtio_net A+B: A in virtio_net.ko, B in the built-in virtio core it "
              "calls, virtio_ring and virtio_pci's notify and interrupt handlers)")
    virtio_table(summary)
    xsk_table(summary, na)
    print("\nethtool -S counters that moved in the window (first load; dut2 = second NIC)")
    for row in summary:
        for d, dd in row["drivers"].items():
            st = dd["loads"][0].get("stats", {})
            s = ", ".join("%s %+d" % (k, v) for k, v in sorted(st.items())
                          if not k.endswith(("bytes", "_bytes")))
            print("  %-13s %-6s %4s %-10s %s" % (row["test"], row["mode"], row["size"], d, s or "-"))
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
               "not_available": ["%s %s %s %s: %s" % (k + (v,)) for k, v in sorted(na.items())],
               "raw": rows, "projection": {"ghz": PROJ_GHZ, "ipc": PROJ_IPC,
                                           "exit_cycles": PROJ_EXIT_CYCLES,
                                           "irq_cycles": PROJ_IRQ_CYCLES}},
              open(out, "w"), indent=1, default=float)
    print("\nwritten: %s" % out)
    if check:
        want = {(r["test"], r["mode"], r["size"]) for r in rows if r["test"] != "idle"}
        want |= {(t, m, int(z)) for t, m, z in expect}
        drv = {r["driver"] for r in rows}
        # a cell the in-tree driver cannot run (na_excused) is no gap; any
        # other "not available" line is a problem above, per load
        missing = ["%s %s %s %s" % (t + (d,)) + (": %s" % na[t + (d,)] if t + (d,) in na else "")
                   for t in sorted(want, key=str) for d in sorted(drv)
                   if t + (d,) not in cells and (d == "vmx" or t + (d,) not in na)]
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
            for p in problems:
                print("bench check: " + p, file=sys.stderr)
            return 1
        print("bench check: every cell of %s has numbers" % " and ".join(sorted(drv)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "count":
        sys.exit(count_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "time":
        sys.exit(time_main(sys.argv[2:]))
    sys.exit(time_main(sys.argv[1:]))
