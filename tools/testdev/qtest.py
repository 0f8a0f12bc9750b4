#!/usr/bin/env python3
"""qtest.py - register-level checks of the vmxnet3 test device, no guest.

Runs the test device's QEMU under the qtest accelerator (no guest CPU, no
kernel: a fraction of a second per case), programs the NIC's BARs through
PCI configuration space and checks what the registers and the commands that
need no shared memory answer at each offered/selected revision. A cheap
regression check of tools/testdev/patches; the behaviour a driver sees is
tested in guests.

Usage: tools/testdev/qtest.py [QEMU]   (default: tools/testdev/build.sh's)
Output is TAP; exit status 0 when every check passed.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BAR0 = 0xC0000000
BAR1 = 0xC2000000
DEV = 4                 # PCI slot of the NIC on bus 0

# BAR1 registers and commands (vmxnet3-device.md sections 2 and 3)
VRRS, UVRS, DSAL, DSAH, CMD = 0x00, 0x08, 0x10, 0x18, 0x20
DCR0, PTCR0 = 0x48, 0x88
GET_TXDATA_DESC_SIZE = 0xF00D000A
GET_MAX_QUEUES_CONF = 0xF00D000F
GET_DCR0_REG = 0xF00D0012
GET_DID_HI = 0xF00D0006
GET_DISABLED_OFFLOADS = 0xF00D0014
GET_LINK = 0xF00D0002


class QTest:
    def __init__(self, qemu, props):
        self.p = subprocess.Popen(
            [qemu, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-nodefaults", "-display", "none", "-m", "128",
             "-device", f"vmxnet3,addr={DEV:02x}.0,romfile={props}"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        while True:
            r = self.p.stdout.readline()
            if not r:
                raise RuntimeError("qemu exited: " + self.p.stderr.read())
            if r.startswith("OK") or r.startswith("FAIL") or r.startswith("ERR"):
                return r.split()

    def rd(self, addr):
        return int(self.cmd(f"readl 0x{addr:x}")[1], 16)

    def wr(self, addr, val):
        self.cmd(f"writel 0x{addr:x} 0x{val:x}")

    def cfg_wr(self, reg, val):
        self.cmd(f"outl 0xcf8 0x{0x80000000 | DEV << 11 | reg:x}")
        self.cmd(f"outl 0xcfc 0x{val:x}")

    def setup(self):
        self.cfg_wr(0x10, BAR0)
        self.cfg_wr(0x14, BAR1)
        self.cfg_wr(0x04, 0x6)          # memory space + bus master
        return self

    def vd(self, reg, val=None):
        if val is None:
            return self.rd(BAR1 + reg)
        self.wr(BAR1 + reg, val)
        return None

    def command(self, code):
        self.vd(CMD, code)
        return self.vd(CMD)

    def bar0_size(self):
        self.cfg_wr(0x10, 0xFFFFFFFF)
        self.cmd(f"outl 0xcf8 0x{0x80000000 | DEV << 11 | 0x10:x}")
        v = int(self.cmd("inl 0xcfc")[1], 16)
        self.cfg_wr(0x10, BAR0)
        return (~(v & ~0xF) & 0xFFFFFFFF) + 1

    def close(self):
        self.p.kill()
        self.p.wait(timeout=10)


n = 0
failed = 0


def check(name, got, want):
    global n, failed
    n += 1
    if got == want:
        print(f"ok {n} {name}")
    else:
        failed += 1
        print(f"not ok {n} {name}: got {got!r}, want {want!r}")


def case_default(qemu):
    """QEMU's own revision 1, every later command unknown"""
    q = QTest(qemu, "").setup()
    check("default offers revision 1 only", q.vd(VRRS), 0x1)
    check("UVRS offers UPT 1", q.vd(UVRS), 0x1)
    check("GET_LINK up at 1 Gbit/s", q.command(GET_LINK), 0x03E80001)
    check("GET_TXDATA_DESC_SIZE at rev 1 answers 0",
          q.command(GET_TXDATA_DESC_SIZE), 0)
    check("BAR0 is 4 KiB", q.bar0_size(), 4096)
    q.close()


def case_rev6(qemu):
    """max-revision=6: selection rules and the rev 3/6 commands"""
    q = QTest(qemu, ",max-revision=6,txdata-size=256").setup()
    check("max-revision=6 offers 1..6", q.vd(VRRS), 0x3F)
    q.vd(VRRS, 0x30)                    # two bits: refused
    check("a two-bit VRRS write is ignored", q.command(GET_DID_HI), 1)
    q.vd(VRRS, 0x40)                    # rev 7 not offered: refused
    check("an unoffered revision is ignored", q.command(GET_DID_HI), 1)
    check("GET_MAX_QUEUES_CONF below rev 6 answers 0",
          q.command(GET_MAX_QUEUES_CONF), 0)
    q.vd(VRRS, 1 << 5)
    check("revision 6 selected", q.command(GET_DID_HI), 6)
    check("GET_TXDATA_DESC_SIZE = txdata-size",
          q.command(GET_TXDATA_DESC_SIZE), 256)
    check("GET_MAX_QUEUES_CONF: 8 TX, 8 RX",
          q.command(GET_MAX_QUEUES_CONF), 0x0808)
    check("DCR0 reads 0 below rev 7", q.vd(DCR0), 0)
    check("GET_DISABLED_OFFLOADS below rev 9 answers 0",
          q.command(GET_DISABLED_OFFLOADS), 0)
    q.close()


def case_rev9(qemu):
    """max-revision=9 with capabilities: DCR0/PTCR0, large BAR, rev 9"""
    q = QTest(qemu, ",max-revision=9,dcr0=0x30003,ptcr0=0x80000000,"
                    "rxdata-size=256,disabled-offloads=2").setup()
    check("max-revision=9 offers 1..9", q.vd(VRRS), 0x1FF)
    check("LARGE_BAR offered: BAR0 is 16 MiB", q.bar0_size(), 16 << 20)
    q.vd(VRRS, 1 << 8)
    check("rev 9: GET_TXDATA_DESC_SIZE carries the RX data ring size",
          q.command(GET_TXDATA_DESC_SIZE), (256 << 16) | 128)
    check("rev 9: GET_DISABLED_OFFLOADS", q.command(GET_DISABLED_OFFLOADS), 2)
    check("rev 9: DCR0 offers dcr0", q.vd(DCR0), 0x30003)
    check("rev 9: PTCR0 reads ptcr0", q.vd(PTCR0), 0x80000000)
    q.vd(DCR0, 0x10000 | 0x4)           # LARGE_BAR + a bit not offered
    check("GET_DCR0_REG grants requested AND offered",
          q.command(GET_DCR0_REG), 0x10000)
    q.close()


def main():
    qemu = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        [os.path.join(HERE, "build.sh")], check=True, capture_output=True,
        text=True).stdout.strip()
    for case in (case_default, case_rev6, case_rev9):
        try:
            case(qemu)
        except (RuntimeError, OSError, ValueError, IndexError) as e:
            check(f"{case.__doc__}: QEMU answered", str(e).strip(), "")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
