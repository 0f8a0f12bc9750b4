#!/usr/bin/env python3
"""Offline checks of tools/bench_report.py count --check.

Writes synthetic raw inputs (the RAW.jsonl lines tools/bench-guest.sh
emits and the vmxcount plugin's MARKS lines) and runs the report on each:
a good run (vmx with numbers in every cell, the in-tree drivers' refused
zero-copy bind) must pass --check; each defect case must fail it.
Usage: tools/bench_report_test.py   (no guest, no QEMU)
"""
import json
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(TOP, "tools", "bench_report.py")
ZC_REFUSED = "xsk: bind (zc): Operation not supported"
FRAGS_REFUSED = "native XDP refused: Error: vmxnet3: MTU 9000 too large for XDP."
N = 3000


class Run:
    """A raw file and its marks: cell() adds a counted cell, na() a cell
    the driver could not run."""

    def __init__(self):
        self.rows, self.marks, self.seq = [], [], 0

    def _mark(self, insns):
        self.seq += 1
        # "mark SEQ ID VCPU - INSNS..." (parse_marks: f[1] seq, f[2] id,
        # f[3] vcpu, f[5:] the per-vCPU instruction counts)
        self.marks.append("mark %d %d 0 - %d %d" % (self.seq, self.seq, insns, insns // 2))
        return self.seq

    def cell(self, drv, load, test, mode, size=64, sent=N, nobuf=0, back=None,
             got=None):
        a = self._mark(10 ** 9)
        b = self._mark(10 ** 9 + 1000 * sent)
        r = {"driver": drv, "load": load, "test": test, "mode": mode, "size": size,
             "packets": sent, "pps": 10000, "dev_nobuf": nobuf,
             "back": sent if back is None else back, "irqs": {}, "stats": {},
             "bars": "", "mark0": a, "mark1": b, "secs": 1.0}
        if mode.startswith("xsk-"):
            r["xsk_received"] = sent - nobuf if got is None else got
        self.rows.append(r)
        return self

    def without(self, drv, load, mode, test=None):
        """the run without that load's cells of @mode (and @test)"""
        self.rows = [x for x in self.rows if not (
            x["driver"] == drv and x["load"] == load and x["mode"] == mode
            and test in (None, x["test"]))]
        return self

    def na(self, drv, load, test, mode, why, size=64):
        self.rows.append({"driver": drv, "load": load, "test": test, "mode": mode,
                          "size": size, "na": why})
        return self

    def check(self, tmp, name):
        raw = os.path.join(tmp, name + ".jsonl")
        marks = os.path.join(tmp, name + ".marks")
        with open(raw, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in self.rows)
        with open(marks, "w") as f:
            f.writelines(m + "\n" for m in self.marks)
        p = subprocess.run([sys.executable, REPORT, "count", "--check", raw, marks,
                            os.path.join(tmp, name + ".json")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        return p.returncode, p.stdout, p.stderr


def good(loads=(1, 2)):
    """vmx, vmxnet3 and virtio_net, each loaded twice: every cell of vmx
    with numbers; the in-tree drivers refuse the zero-copy bind, vmxnet3
    the multi-buffer cell's MTU."""
    r = Run()
    for load in loads:
        for d in ("vmx", "vmxnet3", "virtio_net"):
            ld = load * 10 + ("vmx", "vmxnet3", "virtio_net").index(d)
            r.cell(d, ld, "drop", "native")
            r.cell(d, ld, "rxdrop", "xsk-copy", nobuf=7)
            r.cell(d, ld, "l2fwd", "xsk-copy", back=N + 5)
            if d == "vmx":
                r.cell(d, ld, "rxdrop", "xsk-zc")
                r.cell(d, ld, "l2fwd", "xsk-zc")
            else:
                r.na(d, ld, "rxdrop", "xsk-zc", ZC_REFUSED)
                r.na(d, ld, "l2fwd", "xsk-zc", ZC_REFUSED)
            if d == "vmxnet3":
                r.na(d, ld, "drop", "frags", FRAGS_REFUSED, size=9000)
            else:
                r.cell(d, ld, "drop", "frags", size=9000)
    return r


def cases():
    """(name, run, None: --check passes; else a line it must fail with)"""
    yield "good", good(), None
    # 1: the socket got nothing, or fewer than the frames divided by
    r = good().without("vmx", 10, "xsk-zc", "rxdrop")
    r.cell("vmx", 10, "rxdrop", "xsk-zc", got=0)
    yield "socket-got-nothing", r, "load 10: the socket received 0 of the 3000 frames"
    r = good()
    r.cell("vmx", 10, "rxdrop", "xsk-copy", size=512, nobuf=100, got=N - 101)
    r.cell("vmxnet3", 11, "rxdrop", "xsk-copy", size=512)
    r.cell("virtio_net", 12, "rxdrop", "xsk-copy", size=512)
    yield "socket-one-short", r, "the socket received 2899 of the 2900 frames"
    r = good()
    r.cell("vmx", 10, "l2fwd", "xsk-copy", size=512, back=N // 2 + 1)
    r.cell("vmxnet3", 11, "l2fwd", "xsk-copy", size=512)
    r.cell("virtio_net", 12, "l2fwd", "xsk-copy", size=512)
    yield "l2fwd-half-back", r, "1501 of the 3000 frames handled came back"
    # 2: an in-tree driver's "not available" other than the refused
    # zero-copy bind, and the refusal text in copy mode
    r = good()
    r.na("vmxnet3", 11, "rxdrop", "xsk-copy", "native XDP refused: Invalid argument", size=512)
    r.cell("vmx", 10, "rxdrop", "xsk-copy", size=512)
    r.cell("virtio_net", 12, "rxdrop", "xsk-copy", size=512)
    yield "intree-na-xdp-refused", r, "vmxnet3 rxdrop xsk-copy 512 load 11: not available"
    r = good()
    r.na("virtio_net", 12, "rxdrop", "xsk-zc", "xsk: bind (zc): Device or resource busy",
         size=512)
    r.cell("vmx", 10, "rxdrop", "xsk-zc", size=512)
    r.cell("vmxnet3", 11, "rxdrop", "xsk-zc", size=512)
    yield "intree-na-zc-other-error", r, "virtio_net rxdrop xsk-zc 512 load 12: not available"
    r = good()
    r.na("virtio_net", 12, "l2fwd", "xsk-copy", "the socket did not start", size=512)
    r.cell("vmx", 10, "l2fwd", "xsk-copy", size=512)
    r.cell("vmxnet3", 11, "l2fwd", "xsk-copy", size=512)
    yield "intree-na-copy", r, "virtio_net l2fwd xsk-copy 512 load 12: not available"
    # multi-buffer cells: only vmxnet3's refusal of the MTU is excused
    r = good().without("virtio_net", 12, "frags")
    r.na("virtio_net", 12, "drop", "frags", "native XDP refused: Error: virtio_net: XDP expects "
         "header/data in single page, any_header_sg required", size=9000)
    yield "virtio-na-frags", r, "virtio_net drop frags 9000 load 12: not available"
    r = good().without("vmxnet3", 11, "frags")
    r.na("vmxnet3", 11, "drop", "frags", "native XDP refused: RTNETLINK answers: Device or "
         "resource busy", size=9000)
    yield "intree-na-frags-other", r, "vmxnet3 drop frags 9000 load 11: not available"
    # 3: vmx not available in one load, numbers from the other
    r = good().without("vmx", 10, "xsk-zc", "rxdrop")
    r.na("vmx", 10, "rxdrop", "xsk-zc", ZC_REFUSED)
    yield "vmx-na-one-load", r, "vmx rxdrop xsk-zc 64 load 10: not available"


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, run, want in cases():
            rc, out, err = run.check(tmp, name)
            res = "pass" if rc == 0 else "fail"
            right = rc == 0 if want is None else \
                rc == 1 and any(line.startswith("bench check: ") and want in line
                                for line in err.splitlines())
            bad += not right
            print("%-4s %-26s --check: %s (want %s)" % (
                "ok" if right else "BAD", name, res,
                "pass" if want is None else "fail: " + want))
            if not right or "-v" in sys.argv:
                for line in (out + err).splitlines():
                    if line.startswith(("PROBLEM", "bench check", "  ")) and \
                            ("SHORT" in line or "PROBLEM" in line or "bench check" in line
                             or "not available" in line):
                        print("       " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
