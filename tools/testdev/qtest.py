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
import json
import os
import shutil
import socket
import tempfile
import struct
import subprocess
import sys
import time

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


LIVE = []                # QEMUs started; a case that fails midway leaves one


class QTest:
    def __init__(self, qemu, props, net=None):
        nic = f"vmxnet3,addr={DEV:02x}.0,id=nic1,romfile={props}"
        self.qmp_path = os.path.join(tempfile.mkdtemp(prefix="vmx-qt"), "qmp")
        extra = []
        if net:
            # a datagram backend: this script is the other end of the wire
            extra = ["-netdev", "dgram,id=n0,local.type=inet,"
                     f"local.host=127.0.0.1,local.port={net[0]},"
                     "remote.type=inet,remote.host=127.0.0.1,"
                     f"remote.port={net[1]}"]
            nic += ",netdev=n0"
        # no qtest log: it copies every command and answer to stderr,
        # which is read only at close (a full pipe blocks QEMU)
        self.p = subprocess.Popen(
            [qemu, "-machine", "q35", "-accel", "qtest", "-qtest", "stdio",
             "-qtest-log", "none",
             "-nodefaults", "-display", "none", "-m", "128",
             "-qmp", f"unix:{self.qmp_path},server=on,wait=off"] + extra +
            ["-device", nic],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        LIVE.append(self)

    irqs = None

    def cmd(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        while True:
            r = self.p.stdout.readline()
            if not r:
                raise RuntimeError("qemu exited: " + self.p.stderr.read())
            if r.startswith("IRQ raise") and self.irqs is not None:
                self.irqs.append(int(r.split()[2]))
            if r.startswith("OK") or r.startswith("FAIL") or r.startswith("ERR"):
                return r.split()

    def rd(self, addr):
        return int(self.cmd(f"readl 0x{addr:x}")[1], 16)

    def wr(self, addr, val):
        self.cmd(f"writel 0x{addr:x} 0x{val:x}")

    def cfg_wr(self, reg, val):
        self.cmd(f"outl 0xcf8 0x{0x80000000 | DEV << 11 | reg:x}")
        self.cmd(f"outl 0xcfc 0x{val:x}")

    def cfg_rd(self, reg):
        """one byte of configuration space"""
        self.cmd(f"outl 0xcf8 0x{0x80000000 | DEV << 11 | (reg & ~3):x}")
        v = int(self.cmd("inl 0xcfc")[1], 16)
        return (v >> (8 * (reg & 3))) & 0xFF

    def cap_off(self, cap_id):
        """configuration-space offset of a capability, 0 if absent"""
        ptr = self.cfg_rd(0x34)
        for _ in range(48):
            if not ptr:
                break
            if self.cfg_rd(ptr) == cap_id:
                return ptr
            ptr = self.cfg_rd(ptr + 1) & ~3
        return 0

    def msix_vectors(self):
        """MSI-X table size from the capability's message control"""
        off = self.cap_off(0x11)
        return ((self.cfg_rd(off + 3) << 8 | self.cfg_rd(off + 2)) & 0x7FF) + 1

    def caps(self):
        """capability IDs in the order of the list (0x05 MSI, 0x11 MSI-X)"""
        out, ptr = [], self.cfg_rd(0x34)
        while ptr and len(out) < 48:
            out.append(self.cfg_rd(ptr))
            ptr = self.cfg_rd(ptr + 1) & ~3
        return out

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

    def write(self, addr, data):
        self.cmd(f"write 0x{addr:x} {len(data)} 0x{data.hex()}")

    def read(self, addr, size):
        return bytes.fromhex(self.cmd(f"read 0x{addr:x} {size}")[1][2:])

    def clock_step(self, ns):
        self.cmd(f"clock_step {ns}")

    def close(self):
        """stop QEMU; returns its stderr"""
        self.p.kill()
        self.p.wait(timeout=10)
        shutil.rmtree(os.path.dirname(self.qmp_path), ignore_errors=True)
        return self.p.stderr.read()

    def qmp(self, execute, args):
        """one QMP command on a connection of its own: its return value,
        or the error object"""
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(self.qmp_path)
            f = c.makefile("rw")
            f.readline()
            for cmd in ({"execute": "qmp_capabilities"},
                        {"execute": execute, "arguments": args}):
                f.write(json.dumps(cmd) + "\n")
                f.flush()
                while True:
                    r = json.loads(f.readline())
                    if "return" in r or "error" in r:
                        break
            return r.get("return", r.get("error"))

    def qom(self, prop, value=None):
        """qom-get on the NIC over QMP (what a host-side runner does);
        with a value, qom-set"""
        args = {"path": "/machine/peripheral/nic1", "property": prop}
        if value is not None:
            args["value"] = value
        return self.qmp("qom-set" if value is not None else "qom-get", args)

    def hmp(self, line):
        """an HMP command (what a guest's lib/testdev.sh hmp sends through
        tools/hmp-relay.py): its output, carriage returns removed"""
        out = self.qmp("human-monitor-command", {"command-line": line})
        return out.replace("\r", "") if isinstance(out, str) else out

    def alive(self):
        return self.p.poll() is None


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

# A minimal driver in guest RAM: one TX and one RX queue, rings of 32.
SH, QD = 0x100000, 0x101000
TXR, TXC, TXD = 0x102000, 0x103000, 0x104000
RX0, RX1, RXC, RXD = 0x106000, 0x107000, 0x108000, 0x10A000
BUF = 0x200000
NR, DSZ = 32, 128


def le16(v):
    return struct.pack("<H", v)


def le32(v):
    return struct.pack("<I", v)


def le64(v):
    return struct.pack("<Q", v)


def bring_up(q, rev, rxdata=DSZ, upt=0, sg=1):
    """VRRS, shared area, rings, ACTIVATE; returns the CMD read-back"""
    q.vd(VRRS, 1 << (rev - 1))
    q.vd(UVRS, 1)
    q.cmd(f"memset 0x{SH:x} 0x20000 0")
    q.write(SH, le32(0xBABEFEE1))
    q.write(SH + 12, le32(2 | 1 << 2))          # 64-bit Linux
    q.write(SH + 24, le64(upt))                 # misc.uptFeatures
    q.write(SH + 16, le32(1) + le32(1))
    q.write(SH + 40, le64(QD))
    q.write(SH + 52, le32(512) + le32(1500) + le16(sg) + bytes([1, 1]))
    q.write(SH + 120, le32(0x10))               # promiscuous
    tx = QD
    q.write(tx + 16, le64(TXR) + le64(TXD) + le64(TXC))
    q.write(tx + 56, le32(NR) + le32(NR) + le32(NR))
    q.write(tx + 74, le16(DSZ))
    rx = QD + 256
    q.write(rx + 16, le64(RX0) + le64(RX1) + le64(RXC))
    q.write(rx + 48, le64(RXD if rxdata else 0))
    q.write(rx + 56, le32(NR) + le32(NR) + le32(2 * NR))
    q.write(rx + 74, le16(rxdata))
    for i in range(NR - 1):                     # HEAD buffers, gen 1
        q.write(RX0 + 16 * i, le64(BUF + 2048 * i) + le32(2048 | 1 << 31))
        q.write(RX1 + 16 * i, le64(BUF + 0x10000 + 4096 * i) +
                le32(4096 | 1 << 14 | 1 << 31))
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    return q.command(0xCAFE0000)


def rx_comp(q, i):
    """(gen, rqID, rxdIdx, sop, eop, len, type) of RX completion i"""
    d0, _, d2, d3 = struct.unpack("<IIII", q.read(RXC + 16 * i, 16))
    return (d3 >> 31, d0 >> 16 & 0x3FF, d0 & 0xFFF, d0 >> 15 & 1,
            d0 >> 14 & 1, d2 & 0x3FFF, d3 >> 24 & 0x7F)


def wait_for(fn, secs=5):
    end = time.time() + secs
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.02)
    return fn()


def frame(n):
    return bytes.fromhex("ffffffffffff525400123401" "88b5") + bytes(
        (i & 0xFF for i in range(n - 14)))


def udp_pair():
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(("127.0.0.1", 0))
    a.settimeout(2)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(("127.0.0.1", 0))
    port = b.getsockname()[1]
    b.close()                                   # QEMU's local port
    return a, port


def case_rx(qemu, rev, rxdata_prop="on"):
    """RX at revision {rev}: small frames through the data ring (rev 3+)"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision={rev},rx-data-ring={rxdata_prop},"
              "strict=on",
              (qport, sock.getsockname()[1])).setup()
    check(f"rev {rev}: ACTIVATE succeeds", bring_up(q, rev), 0)
    small, big = frame(60), frame(300)
    sock.sendto(small, ("127.0.0.1", qport))
    c = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
    data_ring = rev >= 3 and rxdata_prop == "on"
    want = (1, 2 if data_ring else 0, 0, 1, 1, 60, 3 if rev >= 2 else 0)
    check(f"rev {rev}, rx-data-ring={rxdata_prop}: 60-byte frame completed"
          f" with ring id {want[1]}", c, want)
    where = RXD if data_ring else BUF
    check(f"rev {rev}: frame bytes in the {'data ring' if data_ring else 'HEAD buffer'}",
          q.read(where, 60), small)
    sock.sendto(big, ("127.0.0.1", qport))
    c = wait_for(lambda: rx_comp(q, 1)[0] and rx_comp(q, 1))
    want = (1, 0, 1, 1, 1, 300, 3 if rev >= 2 else 0)
    check(f"rev {rev}: 300-byte frame (> data ring entry) through ring 0",
          c, want)
    check(f"rev {rev}: its bytes in HEAD buffer 1",
          q.read(BUF + 2048, 300), big)
    check(f"rev {rev}: device counters (qom-get over QMP)",
          [q.qom(p) for p in ("stat-rx-queue0", "stat-rx-bytes-queue0",
                              "stat-rx-data-ring", "stat-violations")],
          [2, 360, 1 if data_ring else 0, 0])
    check(f"rev {rev}: no strict-mode violation", strict_lines(q.close()), [])
    sock.close()


def tx_comp(q, i):
    d0, _, _, d3 = struct.unpack("<IIII", q.read(TXC + 16 * i, 16))
    return (d3 >> 31, d0 & 0xFFF)


def case_tx(qemu, delay):
    """TX from the data ring; with tx-delay-us, completed only later"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,tx-delay-us={delay},strict=on",
              (qport, sock.getsockname()[1])).setup()
    check(f"tx-delay-us={delay}: ACTIVATE succeeds", bring_up(q, 3), 0)
    f = frame(60)
    q.write(TXD, f)
    q.write(TXR, le64(TXD) + le32(60 | 1 << 14) + le32(1 << 12 | 1 << 13))
    q.wr(BAR0 + 0x600, 1)                       # TXPROD[0]
    if delay:
        check("no completion right after the doorbell", tx_comp(q, 0), (0, 0))
        q.clock_step(delay * 1000)
    check(f"tx-delay-us={delay}: completion for descriptor 0",
          wait_for(lambda: tx_comp(q, 0)[0] and tx_comp(q, 0)), (1, 0))
    try:
        got = sock.recv(2048)
    except socket.timeout:
        got = b""
    check(f"tx-delay-us={delay}: the frame reached the wire", got, f)
    check(f"tx-delay-us={delay}: device counters (qom-get over QMP)",
          [q.qom(p) for p in ("stat-bar0-txprod", "stat-tx-queue0",
                              "stat-tx-bytes-queue0", "stat-tx-data-ring",
                              "stat-tx-data-ring-bad", "stat-tx-timer-runs")],
          [1, 1, 60, 1, 0, 1 if delay else 0])
    check(f"tx-delay-us={delay}: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()



def toeplitz(key, data):
    """Toeplitz hash of data with a 40-byte key"""
    k = int.from_bytes(key, "big")
    kbits = len(key) * 8
    h = 0
    for i, byte in enumerate(data):
        for b in range(8):
            if byte & (0x80 >> b):
                h ^= (k >> (kbits - 32 - (i * 8 + b))) & 0xFFFFFFFF
    return h


def ipv4_frame(src, dst, n=60):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, n - 14, 0, 0, 64, 253, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    return bytes.fromhex("ffffffffffff5254001234010800") + ip + bytes(n - 34)


RX0B, RX1B, RXCB, RXDB = 0x110000, 0x111000, 0x112000, 0x114000


def case_rss(qemu, rss):
    """rss={rev} with two RX queues: Toeplitz hash, table, completion"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,rss={rss}",
              (qport, sock.getsockname()[1])).setup()
    key = bytes((i * 7 + 3) & 0xFF for i in range(40))
    table = bytes(i % 2 for i in range(128))
    q.cmd(f"memset 0x{SH:x} 0x40000 0")
    bring_up(q, 3)                      # queue 0 as usual, then redo as 2
    q.command(0xCAFE0002)               # RESET_DEV: reconfigure
    q.write(SH + 24, le64(1 << 1))      # uptFeatures: RSS
    q.write(SH + 52, le32(768))
    q.write(SH + 63, bytes([2]))        # two RX queues
    rx = QD + 512
    q.write(rx + 16, le64(RX0B) + le64(RX1B) + le64(RXCB))
    q.write(rx + 48, le64(RXDB))
    q.write(rx + 56, le32(NR) + le32(NR) + le32(2 * NR))
    q.write(rx + 74, le16(DSZ))
    for i in range(NR - 1):
        q.write(RX0B + 16 * i, le64(BUF + 0x80000 + 2048 * i) +
                le32(2048 | 1 << 31))
    conf = 0x120000
    q.write(conf, le16(0x0F) + le16(1) + le16(40) + le16(128) + key + table)
    q.write(SH + 648, le32(1) + le32(176) + le64(conf))
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    check(f"rss={rss}: ACTIVATE with two RX queues", q.command(0xCAFE0000), 0)
    seen = {0: 0, 1: 0}
    ok = True
    for n in range(8):
        src, dst = f"10.0.{n}.{n + 1}", "10.0.0.200"
        sock.sendto(ipv4_frame(src, dst), ("127.0.0.1", qport))
        h = toeplitz(key, socket.inet_aton(src) + socket.inet_aton(dst))
        want_q = table[h % 128] if rss == "on" else 0
        base = RXCB if want_q else RXC
        slot = seen[want_q]
        c = wait_for(lambda: struct.unpack("<IIII", q.read(base + 16 * slot,
                                                            16)), 2)
        if not c[3] >> 31:
            print(f"# frame {n} ({src}): nothing on queue {want_q}")
            ok = False
            continue
        seen[want_q] += 1
        got = (c[0] >> 26 & 0xF, c[1], c[0] >> 16 & 0x3FF)
        want = (1, h, 2 * 2 + want_q) if rss == "on" else (0, 0, 4)
        if got != want:
            print(f"# frame {n} ({src}): rssType/hash/rqID {got}, want {want}")
            ok = False
    check(f"rss={rss}: every frame on the queue the table names, with"
          " rssType 1 and the Toeplitz hash" if rss == "on" else
          "rss=off: every frame on queue 0, no hash", ok, True)
    if rss == "on":
        check("rss=on: both queues received", min(seen.values()) > 0, True)
    q.close()
    sock.close()


def strict_lines(err):
    return [ln for ln in err.splitlines() if "strict:" in ln]


def case_strict(qemu):
    """strict mode: bad rings and descriptors are counted, QEMU survives"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=3,strict=on",
              (qport, sock.getsockname()[1])).setup()
    q.cmd(f"memset 0x{SH:x} 0x20000 0")
    q.write(QD + 256 + 60, le32(30))            # RX ring 1: 30 entries
    q.write(SH + 60, le16(4))                   # maxNumRxSG 4
    bring_up_keep = bring_up(q, 3)
    q.write(QD + 256 + 60, le32(30))            # after bring_up's reset
    q.write(SH + 60, le16(4))
    q.command(0xCAFE0002)
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    check("strict: ACTIVATE still succeeds", (bring_up_keep,
          q.command(0xCAFE0000)), (0, 0))
    # ring 1 holds HEAD buffers: a 3000-byte frame needs one of them
    for i in range(NR - 1):
        q.write(RX1 + 16 * i + 8, le32(4096 | 1 << 31))
    sock.sendto(frame(3000), ("127.0.0.1", qport))
    # a TX packet asking for encapsulation offload (om 1)
    q.write(TXD, frame(60))
    q.write(TXR, le64(TXD) + le32(60 | 1 << 14) +
            le32(1 << 10 | 1 << 12 | 1 << 13))
    q.wr(BAR0 + 0x600, 1)
    check("strict: TX packet with om 1 completed (not an abort)",
          wait_for(lambda: tx_comp(q, 0)[0] and tx_comp(q, 0)), (1, 0))
    time.sleep(0.3)
    check("strict: QEMU survived a HEAD buffer in ring 1", q.alive(), True)
    kinds = sorted({ln.split("strict: ")[1].split(":")[0]
                    for ln in strict_lines(q.close())})
    check("strict: violations reported by kind", kinds,
          ["ring-config", "rx-desc", "tx-desc"])
    sock.close()


SEQ_KINDS = ("tx-gen", "rx-gen", "tx-reuse", "rx-owned")
TXB = 0x400000                  # TX buffers outside the TX data ring


def lap_gen(k):
    """the generation of absolute ring position k (rings of NR, gen 1 first)"""
    return 1 if (k // NR) % 2 == 0 else 0


def tx_post(q, k, nfrag=1):
    """post a 60-byte frame at absolute TX position k in nfrag descriptors
    as a driver must: the SOP with the wrong generation, the rest with the
    right one, the SOP's generation flipped last; returns the next position"""
    f = frame(60)
    step = 60 // nfrag
    for j in range(nfrag):
        i = (k + j) % NR
        buf = TXB + 0x1000 * i
        q.write(buf, f[j * step:(j + 1) * step])
        gen = lap_gen(k + j) ^ (1 if j == 0 else 0)
        last = (1 << 12 | 1 << 13) if j == nfrag - 1 else 0
        q.write(TXR + 16 * i, le64(buf) + le32(step | gen << 14) + le32(last))
    q.write(TXR + 16 * (k % NR) + 8, le32(step | lap_gen(k) << 14))
    return k + nfrag


def rx_rearm(q, k):
    """hand RX ring 0 position k (absolute) back to the device: address and
    length first, the generation last"""
    i = k % NR
    q.write(RX0 + 16 * i, le64(BUF + 2048 * i) + le32(2048))
    q.write(RX0 + 16 * i + 8, le32(2048 | lap_gen(k) << 31))


def seq_counters(q):
    return [q.qom(f"stat-violation-{k}") for k in SEQ_KINDS] + [
        q.qom("stat-violations")]


def case_seq_ok(qemu, delay):
    """hand-over sequences, well formed (tx-delay-us={rev}): no violation"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,tx-delay-us={delay},update-rx-prod=on,"
              "strict=on", (qport, sock.getsockname()[1])).setup()
    check(f"sequences, tx-delay-us={delay}: ACTIVATE succeeds",
          bring_up(q, 3), 0)
    # TX: an empty doorbell, packets of 1 and 2 descriptors, the same value
    # twice, 40 more packets (the ring wraps), a late doorbell
    k = 0
    q.wr(BAR0 + 0x600, 0)                       # nothing handed over
    for _ in range(3):
        k = tx_post(q, k)
    q.wr(BAR0 + 0x600, k % NR)
    q.wr(BAR0 + 0x600, k % NR)                  # nothing new
    k = tx_post(q, k, 2)
    q.wr(BAR0 + 0x600, k % NR)
    pkts = 4
    for n in range(40):
        k = tx_post(q, k, 2 if n % 7 == 3 else 1)
        pkts += 1
        q.wr(BAR0 + 0x600, k % NR)
        if delay and n % 5 == 4:                # a batch per timer run
            q.clock_step(delay * 1000)
    q.wr(BAR0 + 0x600, (k - 3) % NR)            # late: behind the device
    if delay:
        q.clock_step(delay * 1000)
    sent = wait_for(lambda: q.qom("stat-tx-queue0") == pkts and pkts)
    # RX: both rings announced after ACTIVATE, then 36 frames of 300 bytes
    # into ring 0, each buffer re-armed and announced (ring 0 wraps)
    q.wr(BAR0 + 0x800, NR - 1)
    q.wr(BAR0 + 0xA00, NR - 1)
    fill = NR - 1
    for j in range(36):
        sock.sendto(frame(300), ("127.0.0.1", qport))
        wait_for(lambda: rx_comp(q, j)[0])
        rx_rearm(q, fill)
        fill += 1
        q.wr(BAR0 + 0x800, fill % NR)
    q.wr(BAR0 + 0x800, (fill - 2) % NR)         # late
    q.wr(BAR0 + 0x800, fill % NR)               # nothing new
    got = q.qom("stat-rx-queue0")
    check(f"sequences, tx-delay-us={delay}: {pkts} TX packets (ring wrapped),"
          " 36 RX frames, no violation of any kind",
          (sent, got, seq_counters(q)), (pkts, 36, [0] * 5))
    check(f"sequences, tx-delay-us={delay}: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


def case_tx_comp_batch(qemu, batch):
    """TX completions with tx-comp-batch={rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,tx-delay-us=1000,tx-comp-batch={batch},"
              "strict=on", (qport, sock.getsockname()[1])).setup()
    check(f"tx-comp-batch={batch}: ACTIVATE succeeds", bring_up(q, 3), 0)
    # five packets (the third in two descriptors), one doorbell, one pass
    k = 0
    for n in range(5):
        k = tx_post(q, k, 2 if n == 2 else 1)
    q.wr(BAR0 + 0x600, k % NR)
    q.clock_step(1000 * 1000)
    wait_for(lambda: q.qom("stat-tx-queue0") == 5)
    comps = [tx_comp(q, i) for i in range(6)]
    # every packet its own completion, or one naming the last EOP (5)
    want = [(1, 0), (1, 1), (1, 3), (1, 4), (1, 5), (0, 0)]
    if batch == "on":
        want = [(1, 5)] + [(0, 0)] * 5
    check(f"tx-comp-batch={batch}: completions of one pass", comps, want)
    got = []
    for _ in range(5):
        try:
            got.append(len(sock.recv(2048)))
        except socket.timeout:
            break
    check(f"tx-comp-batch={batch}: all five frames on the wire", got,
          [60] * 5)
    check(f"tx-comp-batch={batch}: stat-tx-comp-batched",
          q.qom("stat-tx-comp-batched"), 4 if batch == "on" else 0)
    check(f"tx-comp-batch={batch}: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


def case_seq_bad(qemu, kind):
    """hand-over sequence broken: {rev}"""
    sock, qport = udp_pair()
    delay = 1000 if kind == "tx-reuse" else 0
    q = QTest(qemu, f",max-revision=3,tx-delay-us={delay},strict=on",
              (qport, sock.getsockname()[1])).setup()
    check(f"{kind}: ACTIVATE succeeds", bring_up(q, 3), 0)
    extra = ()
    if kind == "tx-gen":
        # a second packet posted with its SOP generation never flipped
        k = tx_post(q, 0)
        q.write(TXR + 16 + 8, le32(60 | 0 << 14))
        q.write(TXR + 16, le64(TXB) + le32(60 | 0 << 14) +
                le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600, k + 1)               # claims descriptors 0 and 1
        extra = (wait_for(lambda: tx_comp(q, 0)[0]), tx_comp(q, 1)[0])
        want = (1, 0)
    elif kind == "rx-gen":
        q.write(RX0 + 16 * 5 + 8, le32(2048))   # descriptor 5: gen 0
        q.wr(BAR0 + 0x800, NR - 1)
    elif kind == "tx-reuse":
        k = tx_post(q, 0)
        q.wr(BAR0 + 0x600, k)
        # the driver rewrites the address before the completion
        q.write(TXB + 0x8000, frame(60))
        q.write(TXR, le64(TXB + 0x8000))
        q.clock_step(delay * 1000)
        extra = (wait_for(lambda: tx_comp(q, 0)[0]),)
        want = (1,)
    elif kind == "rx-owned":
        q.wr(BAR0 + 0x800, NR - 1)
        q.write(RX0, le64(BUF + 0x40000))       # address changed, owned
        sock.sendto(frame(300), ("127.0.0.1", qport))
        extra = (wait_for(lambda: rx_comp(q, 0)[0]),)
        want = (1,)
    if extra:
        check(f"{kind}: the device went on", extra, want)
    wantc = [1 if k == kind else 0 for k in SEQ_KINDS] + [1]
    check(f"{kind}: counted as {kind} only (stat-violation-*,"
          " stat-violations)", seq_counters(q), wantc)
    kinds = sorted({ln.split("strict: ")[1].split(":")[0]
                    for ln in strict_lines(q.close())})
    check(f"{kind}: reported on stderr by kind", kinds, [kind])
    sock.close()


def case_moderation(qemu, gap):
    """intr-min-gap-us={rev}: a second RX interrupt within the gap waits"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,intr-min-gap-us={gap},strict=on",
              (qport, sock.getsockname()[1])).setup()
    q.cmd("irq_intercept_in ioapic")
    q.irqs = []
    check(f"gap {gap}: ACTIVATE succeeds", bring_up(q, 3), 0)
    q.wr(BAR0 + 0, 0)                           # unmask vector 0 (INTx)

    def deliver(i):
        sock.sendto(frame(60), ("127.0.0.1", qport))
        wait_for(lambda: rx_comp(q, i)[0])
        q.vd(0x38)                              # ICR: take the interrupt
        n = len(q.irqs)
        return n

    first = deliver(0)
    second = deliver(1)
    if gap:
        q.clock_step(gap * 1000)
        q.vd(0x38)
    third = len(q.irqs)
    want = (1, 1, 2) if gap else (1, 2, 2)
    check(f"gap {gap}: interrupts after frame 1, frame 2"
          f"{', the gap' if gap else ''}", (first, second, third), want)
    check(f"gap {gap}: no strict-mode violation", strict_lines(q.close()), [])
    sock.close()


SET_COALESCE, COALBUF = 0xCAFE000E, 0x130000


def set_coalesce(q, mode, p0=0, p1=0, p2=0):
    """SET_COALESCE through cmdInfo (version 1, 16 bytes at COALBUF)"""
    q.write(COALBUF, le32(mode) + le32(p0) + le32(p1) + le32(p2))
    q.write(SH + 704, le32(1) + le32(16) + le64(COALBUF))
    return q.command(SET_COALESCE)


def intr_bring_up(q):
    """bring_up at rev 3 with the queues on vector 0 (INTx, unmasked) and
    the events on vector 1 (a queue vector, as a driver's MSI-X set-up has
    them); returns the CMD read-back"""
    q.vd(VRRS, 1 << 2)
    q.vd(UVRS, 1)
    r = bring_up(q, 3)
    q.command(0xCAFE0002)                       # RESET_DEV
    q.write(SH + 82, bytes([1]))                # eventIntrIdx 1
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    r = (r, q.command(0xCAFE0000))
    q.wr(BAR0 + 0, 0)                           # unmask vector 0
    return r


def rx_sender(q, sock, qport):
    """a function that sends the next 60-byte frame to RX queue 0, waits for
    its completion, takes the interrupt (ICR) and returns stat-intr0"""
    nrx = [0]

    def rx_one():
        i = nrx[0]
        nrx[0] += 1
        sock.sendto(frame(60), ("127.0.0.1", qport))
        wait_for(lambda: rx_comp(q, i)[0])
        q.vd(0x38)                              # ICR: take the interrupt
        return q.qom("stat-intr0")
    return rx_one


def case_coal_static(qemu):
    """static coalescing (SET_COALESCE mode 2): RX and TX depths, bound"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=3,coal-flush-us=1000,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("static: ACTIVATE succeeds", intr_bring_up(q), (0, 0))
    check("static: SET_COALESCE mode 2, TX 64, TX completions 2, RX 4",
          set_coalesce(q, 2, 64, 2, 4), 0)
    rx_one = rx_sender(q, sock, qport)

    base = q.qom("stat-intr0")
    got = [rx_one() - base for _ in range(4)]
    check("static: RX depth 4: no interrupt for frames 1-3, one at frame 4",
          got, [0, 0, 0, 1])
    fifth = rx_one() - base
    q.clock_step(999 * 1000)
    q.vd(0x38)
    early = q.qom("stat-intr0") - base
    q.clock_step(1000)
    q.vd(0x38)
    late = q.qom("stat-intr0") - base
    check("static: a lone frame 5 held, sent by the 1000 us bound (not at"
          " 999 us)", (fifth, early, late), (1, 1, 2))
    ntx = [0]

    def tx_one():
        i = ntx[0]
        ntx[0] += 1
        q.write(TXD + DSZ * i, frame(60))
        q.write(TXR + 16 * i, le64(TXD + DSZ * i) + le32(60 | 1 << 14) +
                le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600, i + 1)               # TXPROD[0]
        wait_for(lambda: tx_comp(q, i)[0])
        q.vd(0x38)
        return q.qom("stat-intr0") - base

    check("static: TX completion depth 2: no interrupt for the first TX"
          " completion, one at the second", [tx_one(), tx_one()], [2, 3])
    check("static: counters (stat-coal-depth, stat-coal-flush,"
          " stat-intr-held)",
          [q.qom(p) for p in ("stat-coal-depth", "stat-coal-flush",
                              "stat-intr-held")], [2, 1, 5])
    held = rx_one() - base
    r = set_coalesce(q, 0)
    q.vd(0x38)
    check("static: a frame held when the scheme changes to mode 0 (none) is"
          " sent at the change", (held, r, q.qom("stat-intr0") - base),
          (3, 0, 4))
    check("static: mode 0 (none): every frame interrupts at once",
          (rx_one() - base, rx_one() - base), (5, 6))
    check("static: no strict-mode violation", strict_lines(q.close()), [])
    sock.close()


def case_coal_adaptive(qemu, prop):
    """adaptive coalescing with coal-adaptive={rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,coal-adaptive={prop},strict=on",
              (qport, sock.getsockname()[1])).setup()
    check(f"adaptive {prop}: ACTIVATE succeeds", intr_bring_up(q), (0, 0))
    rx_one = rx_sender(q, sock, qport)

    for _ in range(24):                         # 24 frames at one instant
        rx_one()
    q.clock_step(10 * 1000 * 1000)              # a 10 ms window: 2500/s
    a = rx_one()
    b = rx_one()                                # within the chosen gap
    q.clock_step(1000 * 1000)
    q.vd(0x38)
    c = q.qom("stat-intr0")
    gap = q.qom("stat-coal-adaptive-us")
    on = prop == "on"
    check(f"adaptive {prop}: after 2500 frames/s "
          f"{'a 1000 us gap: the next frame waits for it' if on else 'no gap: the next frame interrupts at once'}",
          (b - a, c - a, gap), (0, 1, 1000) if on else (1, 1, 0))
    q.clock_step(20 * 1000 * 1000)              # slow: the gap goes
    d = rx_one()
    e = rx_one()
    check(f"adaptive {prop}: after a slow window no gap (each frame"
          " interrupts at once)", (e - d, q.qom("stat-coal-adaptive-us")),
          (1, 0))
    check(f"adaptive {prop}: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


def case_fault_new(qemu, kind):
    """fault {rev} at rate 1e6 (or on command)"""
    sock, qport = udp_pair()
    bit = {"link-flap": 6, "activate-refused": 7, "eop-break": 8,
           "queue-error-tx": None}[kind]
    props = ",max-revision=3"
    if bit is not None:
        props += f",fault-rate=1000000,fault-kinds={1 << bit}"
    q = QTest(qemu, props, (qport, sock.getsockname()[1])).setup()
    if kind == "activate-refused":
        first = bring_up(q, 3)
        second = q.command(0xCAFE0000)
        q.command(0xCAFE0002)                   # RESET_DEV
        q.vd(DSAL, SH)
        q.vd(DSAH, 0)
        third = q.command(0xCAFE0000)
        fourth = q.command(0xCAFE0000)
        check(f"{kind}: at random, never two in a row: ACTIVATE refused,"
              " accepted, (after RESET_DEV) refused, accepted",
              (first, second, third, fourth, q.qom("stat-fault-" + kind)),
              (1, 0, 1, 0, 2))
        q.close()
        sock.close()
        return
    check(f"{kind}: ACTIVATE succeeds", bring_up(q, 3), 0)
    if kind == "eop-break":
        sock.sendto(frame(300), ("127.0.0.1", qport))
        c0 = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
        sock.sendto(frame(60), ("127.0.0.1", qport))
        c1 = wait_for(lambda: rx_comp(q, 1)[0] and rx_comp(q, 1))
        check(f"{kind}: a ring-0 frame completed without EOP, a data ring"
              " frame (one completion) not eligible",
              (c0, c1, q.qom("stat-fault-" + kind)),
              ((1, 0, 0, 1, 0, 300, 3), (1, 2, 1, 1, 1, 60, 3), 1))
    elif kind == "link-flap":
        up = q.command(GET_LINK)
        sock.sendto(frame(60), ("127.0.0.1", qport))
        wait_for(lambda: rx_comp(q, 0)[0])
        ecr = struct.unpack("<I", q.read(SH + 696, 4))[0]
        down = q.command(GET_LINK)
        sock.sendto(frame(60), ("127.0.0.1", qport))
        time.sleep(0.2)
        lost = (rx_comp(q, 1)[0], q.qom("stat-rx-inactive"))
        q.clock_step(100 * 1000 * 1000)
        again = q.command(GET_LINK)
        check(f"{kind}: a received frame flaps the link: LINK event, down,"
              " a frame meanwhile dropped, up 100 ms later, counted once",
              (up & 1, ecr & 4, down & 1, lost, again & 1,
               q.qom("stat-fault-" + kind)), (1, 4, 0, (0, 1), 1, 1))
    elif kind == "queue-error-tx":
        q.qom("fault", "queue-error-tx")
        ecr = struct.unpack("<I", q.read(SH + 696, 4))[0]
        q.command(0xF00D0000)                   # GET_QUEUE_STATUS
        st = struct.unpack("<B3xI", q.read(QD + 80, 8))
        rst = struct.unpack("<B3xI", q.read(QD + 256 + 80, 8))
        q.write(TXD, frame(60))
        q.write(TXR, le64(TXD) + le32(60 | 1 << 14) + le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600, 1)
        time.sleep(0.2)
        check(f"{kind}: on command: TQERR event, TX queue 0 stopped with"
              " error 0x80000005 (RX queue running), no TX completion",
              (ecr & 3, st, rst, tx_comp(q, 0)[0],
               q.qom("stat-fault-queue-error")),
              (2, (1, 0x80000005), (0, 0), 0, 1))
    q.close()
    sock.close()


FAULT_BITS = {"rx-bad-rqid": 0, "rx-bad-idx": 1, "rx-bad-len": 2,
              "rx-no-sop": 3, "tx-bad-idx": 4, "queue-error": 5}


def case_fault(qemu, kind):
    """fault {rev} at rate 1e6: the completion or queue is broken so"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,fault-rate=1000000,"
              f"fault-kinds={1 << FAULT_BITS[kind]}",
              (qport, sock.getsockname()[1])).setup()
    check(f"{kind}: ACTIVATE succeeds", bring_up(q, 3), 0)
    if kind == "tx-bad-idx":
        q.write(TXD, frame(60))
        q.write(TXR, le64(TXD) + le32(60 | 1 << 14) + le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600, 1)
        check(f"{kind}: TX completion index = ring size",
              wait_for(lambda: tx_comp(q, 0)[0] and tx_comp(q, 0)), (1, NR))
    elif kind == "queue-error":
        sock.sendto(frame(60), ("127.0.0.1", qport))
        time.sleep(0.2)
        sock.sendto(frame(60), ("127.0.0.1", qport))
        time.sleep(0.2)
        q.command(0xF00D0000)                   # GET_QUEUE_STATUS
        st = struct.unpack("<B3xI", q.read(QD + 256 + 80, 8))
        ecr = struct.unpack("<I", q.read(SH + 696, 4))[0]
        check(f"{kind}: RQERR event, queue stopped with error 0x80000005, "
              "second frame not delivered",
              (ecr & 1, st, rx_comp(q, 1)[0]), (1, (1, 0x80000005), 0))
    else:
        sock.sendto(frame(60), ("127.0.0.1", qport))
        c = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
        good = (1, 2, 0, 1, 1, 60, 3)
        i = {"rx-bad-rqid": 1, "rx-bad-idx": 2, "rx-bad-len": 5,
             "rx-no-sop": 3}[kind]
        bad = {"rx-bad-rqid": 3, "rx-bad-idx": NR, "rx-bad-len": DSZ + 1,
               "rx-no-sop": 0}[kind]
        want = good[:i] + (bad,) + good[i + 1:]
        check(f"{kind}: RX completion {want}", c, want)
    q.close()
    sock.close()


def xorshift_faults(seed, rate, kinds_per_event, events):
    """what fault_rate/fault_seed give, as patch 0008's generator draws
    them: per event, one draw per kind in kinds_per_event (in that order)
    until one fires; returns the kind fired per event (None: none)"""
    x, out = seed, []
    for _ in range(events):
        fired = None
        for kind in kinds_per_event:
            x = x or 0x9E3779B97F4A7C15
            x ^= x << 13 & 0xFFFFFFFFFFFFFFFF
            x ^= x >> 7
            x ^= x << 17 & 0xFFFFFFFFFFFFFFFF
            if x % 1000000 < rate:
                fired = kind
                break
        out.append(fired)
    return out


def case_tx_bad_eop(qemu):
    """fault tx-bad-eop on command"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=3,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("tx-bad-eop: ACTIVATE succeeds", bring_up(q, 3), 0)
    got = []

    def send(k, nfrag, c):
        k = tx_post(q, k, nfrag)
        q.wr(BAR0 + 0x600, k % NR)
        got.append(wait_for(lambda: tx_comp(q, c)[0] and tx_comp(q, c)))
        return k
    q.qom("fault", "tx-bad-eop")
    armed = q.qom("fault")
    k = send(0, 1, 0)           # the first packet: descriptor NR - 1
    k = send(k, 1, 1)           # one-shot: the next as usual
    q.qom("fault", "tx-bad-eop")
    k = send(k, 1, 2)           # the EOP of packet 1, completed already
    q.qom("fault", "tx-bad-eop")
    k = send(k, 3, 3)           # 3..5: its SOP 3, not its EOP 5
    k = send(k, 2, 4)           # 6..7 as usual
    check("tx-bad-eop armed on command, listed by qom-get fault",
          armed, "tx-bad-eop")
    check("tx-bad-eop: the descriptor before a one-descriptor packet (the"
          " previous EOP, or NR - 1 for the first), a three-descriptor"
          " packet's SOP; one-shot; generations right",
          got, [(1, NR - 1), (1, 1), (1, 1), (1, 3), (1, 7)])
    frames = []
    for _ in range(5):
        try:
            frames.append(sock.recv(2048))
        except socket.timeout:
            break
    check("tx-bad-eop: every packet still sent, byte-exact",
          frames, [frame(60)] * 5)
    check("tx-bad-eop: stat-fault-tx-bad-eop 3, stat-fault-tx-bad-idx 0",
          (q.qom("stat-fault-tx-bad-eop"), q.qom("stat-fault-tx-bad-idx")),
          (3, 0))
    check("tx-bad-eop: no strict-mode violation", strict_lines(q.close()), [])
    sock.close()


def case_tx_bad_eop_random(qemu, kinds):
    """TX faults at random, fault-kinds {rev}: the draws the seed gives"""
    sock, qport = udp_pair()
    seed, rate, npkt = 7, 300000, 24
    q = QTest(qemu, f",max-revision=3,fault-rate={rate},fault-seed={seed},"
              f"fault-kinds={kinds:#x}",
              (qport, sock.getsockname()[1])).setup()
    check(f"fault-kinds {kinds:#x}: ACTIVATE succeeds", bring_up(q, 3), 0)
    got, k = [], 0
    for c in range(npkt):
        k = tx_post(q, k)
        q.wr(BAR0 + 0x600, k % NR)
        got.append(wait_for(lambda: tx_comp(q, c % NR)[0] == lap_gen(c) and
                            tx_comp(q, c % NR))[1])
    # a TX completion draws tx-bad-idx (bit 4), then tx-bad-eop (bit 12)
    # if that did not fire; queue-error and link-flap are not in the kinds
    order = [b for b in (4, 12) if kinds >> b & 1]
    fired = xorshift_faults(seed, rate, order, npkt)
    want = [NR if f == 4 else (c - 1) % NR if f == 12 else c % NR
            for c, f in enumerate(fired)]
    check(f"fault-kinds {kinds:#x}, seed {seed}, rate {rate}: the TX"
          " completion indexes the seed's draws give (tx-bad-eop draws only"
          " with bit 12 set)", got, want)
    check(f"fault-kinds {kinds:#x}: counted per kind",
          (q.qom("stat-fault-tx-bad-idx"), q.qom("stat-fault-tx-bad-eop")),
          (fired.count(4), fired.count(12)))
    q.close()
    sock.close()


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


def case_link_speed(qemu):
    """link-speed: GET_LINK's upper 16 bits, refused past them"""
    q = QTest(qemu, ",max-revision=9,link-speed=25000").setup()
    check("link-speed=25000: GET_LINK up at 25 Gbit/s",
          q.command(GET_LINK), (25000 << 16) | 1)
    q.close()
    p = subprocess.run([qemu, "-machine", "q35", "-accel", "qtest",
                        "-nodefaults", "-display", "none", "-device",
                        "vmxnet3,link-speed=100000"],
                       capture_output=True, text=True, timeout=30)
    check("link-speed=100000 refused (16 bits)",
          (p.returncode != 0, "link-speed" in p.stderr), (True, True))


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


# Many queues: each TX queue's rings at TXQ + 0x10000 * i (ring, completion
# ring, data ring), each RX queue's at RXQ + 0x10000 * i (rings 0 and 1,
# completion ring; no data ring), the queue table at QD2.
QD2, TXQ, RXQ = 0x140000, 0x300000, 0x800000
INTR_EXT = 720


def bring_up_n(q, rev, ntx, nrx, event=None, ext_event=None):
    """ACTIVATE with ntx TX and nrx RX queues: TX queue i on vector i, RX
    queue j on ntx + j, events on `event` (default ntx + nrx) in the legacy
    intrConf; ext_event, when given, goes into the extended block at shared
    offset 720. Returns the CMD read-back."""
    if event is None:
        event = ntx + nrx
    q.command(0xCAFE0002)                       # RESET_DEV
    q.vd(VRRS, 1 << (rev - 1))
    q.vd(UVRS, 1)
    q.cmd(f"memset 0x{SH:x} 0x1000 0")
    q.cmd(f"memset 0x{QD2:x} 0x10000 0")
    q.write(SH, le32(0xBABEFEE1))
    q.write(SH + 12, le32(2 | 1 << 2))
    q.write(SH + 16, le32(1) + le32(1))
    q.write(SH + 40, le64(QD2))
    q.write(SH + 52, le32(256 * (ntx + nrx)) + le32(1500) + le16(1) +
            bytes([ntx, nrx]))
    q.write(SH + 80, bytes([1, ntx + nrx + 1, event]))
    if ext_event is not None:
        q.write(SH + INTR_EXT, bytes([1, ntx + nrx + 1, ext_event]))
    q.write(SH + 120, le32(0x10))
    for i in range(ntx):
        b, d = TXQ + 0x10000 * i, QD2 + 256 * i
        q.write(d + 16, le64(b) + le64(b + 0x2000) + le64(b + 0x1000))
        q.write(d + 56, le32(NR) + le32(NR) + le32(NR))
        q.write(d + 72, bytes([i, 0]) + le16(DSZ))
    for j in range(nrx):
        b, d = RXQ + 0x10000 * j, QD2 + 256 * (ntx + j)
        q.write(d + 16, le64(b) + le64(b + 0x1000) + le64(b + 0x2000))
        q.write(d + 56, le32(NR) + le32(NR) + le32(2 * NR))
        q.write(d + 72, bytes([ntx + j, 0]))
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    return q.command(0xCAFE0000)


def case_queue_limits(qemu):
    """max-tx-queues=4,max-rx-queues=2: reported and enforced"""
    q = QTest(qemu, ",max-revision=6,max-tx-queues=4,max-rx-queues=2").setup()
    q.vd(VRRS, 1 << 5)
    check("GET_MAX_QUEUES_CONF: 4 TX, 2 RX", q.command(GET_MAX_QUEUES_CONF),
          0x0204)
    check("25 MSI-X vectors within the legacy limits", q.msix_vectors(), 25)
    check("ACTIVATE with 4 TX, 2 RX queues succeeds", bring_up_n(q, 6, 4, 2),
          0)
    check("ACTIVATE with 5 TX queues (above max-tx-queues) is refused",
          bring_up_n(q, 6, 5, 2), 1)
    check("ACTIVATE with 3 RX queues (above max-rx-queues) is refused",
          bring_up_n(q, 6, 4, 3), 1)
    q.close()


def case_queues32(qemu):
    """max-tx-queues=32,max-rx-queues=32: the extended configuration"""
    q = QTest(qemu, ",max-revision=6,max-tx-queues=32,max-rx-queues=32"
                    ",strict=on").setup()
    q.vd(VRRS, 1 << 5)
    check("GET_MAX_QUEUES_CONF: 32 TX, 32 RX",
          q.command(GET_MAX_QUEUES_CONF), 0x2020)
    check("65 MSI-X vectors", q.msix_vectors(), 65)
    check("legacy intrConf (8 TX, 8 RX): event vector 30 refused",
          bring_up_n(q, 6, 8, 8, event=30), 1)
    check("16 TX + 16 RX: intrConfExt read (legacy event index 200 ignored),"
          " vectors up to 32 accepted",
          (bring_up_n(q, 6, 16, 16, event=200, ext_event=32),
           q.qom("stat-intr-ext")), (0, 1))
    q.wr(BAR0 + 8 * 32, 0)                      # unmask the event vector
    q.qom("fault", "link-flap")
    ecr = struct.unpack("<I", q.read(SH + 696, 4))[0]
    check("link-flap: LINK event raised on vector 32 (stat-intr32)",
          (ecr & 4, q.qom("stat-intr32")), (4, 1))
    check("32 TX + 32 RX queues accepted",
          bring_up_n(q, 6, 32, 32, ext_event=64), 0)
    check("33 TX queues refused", bring_up_n(q, 6, 33, 32, ext_event=64), 1)
    q.close()


def case_tx_delay_step(qemu):
    """tx-delay-us=1000,tx-delay-step-us=3000: TX queues complete apart"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=4,tx-delay-us=1000,tx-delay-step-us=3000,"
              "strict=on", (qport, sock.getsockname()[1])).setup()
    check("tx-delay-step-us: ACTIVATE with 2 TX queues",
          bring_up_n(q, 4, 2, 1), 0)
    f = frame(60)
    for i in range(2):
        q.write(TXBUF + 0x100 * i, f)
        q.write(TXQ + 0x10000 * i, le64(TXBUF + 0x100 * i) +
                le32(60 | 1 << 14) + le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600 + 8 * i, 1)           # TXPROD[i]

    def done(i):
        d3 = struct.unpack("<I", q.read(TXQ + 0x10000 * i + 0x100C, 4))[0]
        return d3 >> 31

    q.clock_step(1000 * 1000)
    check("tx-delay-step-us: after 1 ms queue 0 is completed, queue 1 not",
          (wait_for(lambda: done(0)), done(1)), (1, 0))
    q.clock_step(3000 * 1000)
    check("tx-delay-step-us: after 4 ms queue 1 is completed too",
          wait_for(lambda: done(1)), 1)
    got = []
    for _ in range(2):
        try:
            got.append(sock.recv(2048))
        except socket.timeout:
            break
    check("tx-delay-step-us: both frames on the wire", got, [f, f])
    check("tx-delay-step-us: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


def case_large_bar(qemu, offer):
    """large-BAR doorbells with LARGE_BAR {rev}"""
    q = QTest(qemu, f",max-revision=7,dcr0={offer}").setup()
    q.vd(VRRS, 1 << 6)
    q.vd(DCR0, 0x10000)
    granted = q.command(GET_DCR0_REG)
    check(f"dcr0={offer}: ACTIVATE succeeds", bring_up(q, 7), 0)
    lb = granted & 0x10000
    before = [q.qom(f"stat-bar0-{k}") for k in ("txprod", "rxprod", "rxprod2",
                                                "unknown")]
    for off in (0x600, 0x800, 0xA00):           # small-BAR doorbells
        q.wr(BAR0 + off, 0)
    if lb:
        for off in (0x1000, 0x1400, 0x1800):    # large-BAR doorbells
            q.wr(BAR0 + off, 0)
    after = [q.qom(f"stat-bar0-{k}") for k in ("txprod", "rxprod", "rxprod2",
                                               "unknown")]
    got = tuple(a - b if isinstance(a, int) and isinstance(b, int) else a
                for a, b in zip(after, before))
    if lb:
        check("LARGE_BAR granted: doorbells at 0x1000/0x1400/0x1800 counted, "
              "the small-BAR ones decode to nothing", got, (1, 1, 1, 3))
    else:
        check("no LARGE_BAR: doorbells at 0x600/0x800/0xA00 counted", got,
              (1, 1, 1, 0))
    q.close()


def case_msix(qemu, prop):
    """msix={rev}: the capabilities a driver finds"""
    q = QTest(qemu, f",msix={prop}").setup()
    caps = q.caps()
    check(f"msix={prop}: MSI capability offered", 0x05 in caps, True)
    check(f"msix={prop}: MSI-X capability "
          f"{'offered' if prop == 'on' else 'absent'}", 0x11 in caps,
          prop == "on")
    q.close()


# Tunnel offloads (patch 0018): Geneve/VXLAN frames built here, checked on
# the wire byte for byte against segments built here independently.
TXBUF = 0x400000                # TX buffers outside the data ring
OUT_MACS = bytes.fromhex("525400aabb01" "525400123401")
IN_MACS = bytes.fromhex("02000000aa02" "02000000aa01")
A4 = (bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
B4 = (bytes([192, 168, 7, 1]), bytes([192, 168, 7, 2]))
A6 = (bytes.fromhex("fd00" + "00" * 13 + "01"),
      bytes.fromhex("fd00" + "00" * 13 + "02"))
B6 = (bytes.fromhex("fd07" + "00" * 13 + "01"),
      bytes.fromhex("fd07" + "00" * 13 + "02"))


def sum16(data):
    """ones-complement sum, folded, not complemented"""
    if len(data) % 2:
        data += b"\0"
    v = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while v >> 16:
        v = (v & 0xFFFF) + (v >> 16)
    return v


def ip_hdr(v6, addrs, proto, plen, ident, csum=True):
    if v6:
        return struct.pack("!IHBB", 0x60000000, plen, proto, 64) + \
            addrs[0] + addrs[1]
    h = struct.pack("!BBHHHBBH", 0x45, 0, 20 + plen, ident, 0x4000, 64,
                    proto, 0) + addrs[0] + addrs[1]
    if csum:
        h = h[:10] + struct.pack("!H", ~sum16(h) & 0xFFFF) + h[12:]
    return h


def pseudo(ip, proto, length):
    if ip[0] >> 4 == 4:
        return ip[12:20] + struct.pack("!BBH", 0, proto, length)
    return ip[8:40] + struct.pack("!IxxxB", length, proto)


def tun_frame(port, ov6, iv6, payload, seq=1000, flags=0x18, oid=0x100,
              iid=0x200, ucsum="ok", tcsum="ok", icsum=True, tot=None):
    """a VXLAN (4789/8472) or Geneve (6081, one 8-byte option) frame of
    inner TCP; tcsum "ok", "seed0" (pseudo-header sum, length 0: TSO) or
    "seed" (with the length: checksum offload); ucsum "ok" or "zero";
    tot: inner/outer lengths as for a packet of that much payload"""
    plen = len(payload) if tot is None else tot
    tcp = struct.pack("!HHIIBBHHH", 40000, 5201, seq, 77, 5 << 4, flags,
                      512, 0, 0)
    inner_ip = ip_hdr(iv6, B6 if iv6 else B4, 6, 20 + plen, iid, icsum)
    if tcsum == "ok":
        c = ~sum16(pseudo(inner_ip, 6, 20 + len(payload)) + tcp +
                   payload) & 0xFFFF
    else:
        c = sum16(pseudo(inner_ip, 6, 0 if tcsum == "seed0" else
                         20 + len(payload)))
    tcp = tcp[:16] + struct.pack("!H", c) + tcp[18:]
    inner = IN_MACS + struct.pack("!H", 0x86DD if iv6 else 0x0800) + \
        inner_ip + tcp
    if port == 6081:
        tun = struct.pack("!BBHI", 2, 0, 0x6558, 42 << 8) + \
            struct.pack("!HBBI", 0x0102, 3, 1, 0xDEADBEEF)
    else:
        tun = struct.pack("!II", 0x08000000, 42 << 8)
    ulen = 8 + len(tun) + len(inner) + plen
    udp = struct.pack("!HHHH", 50000, port, ulen, 0)
    outer_ip = ip_hdr(ov6, A6 if ov6 else A4, 17, ulen, oid)
    if ucsum == "ok":
        c = ~sum16(pseudo(outer_ip, 17, ulen) + udp + tun + inner +
                   payload) & 0xFFFF
        udp = udp[:6] + struct.pack("!H", c or 0xFFFF)
    hdr = OUT_MACS + struct.pack("!H", 0x86DD if ov6 else 0x0800) + \
        outer_ip + udp + tun + inner
    return hdr + payload, len(hdr)


def tun_post(q, idx, data, hlen, om, msscof, oco=0, ext1=0, split=None):
    """post @data as one packet from descriptor @idx (headers and payload
    in two buffers outside the data ring); returns the next index"""
    split = split or hlen
    parts = [data[:split], data[split:]] if split < len(data) else [data]
    addr = TXBUF + idx * 0x10000
    for k, part in enumerate(parts):
        q.write(addr, part)
        dw2 = len(part) | 1 << 14
        dw3 = 0
        if k == 0:
            dw2 |= oco << 15 | ext1 << 17 | msscof << 18
            dw3 |= hlen | om << 10
        if k == len(parts) - 1:
            dw3 |= 1 << 12 | 1 << 13
        q.write(TXR + 16 * (idx + k), le64(addr) + le32(dw2) + le32(dw3))
        addr += len(part)
    q.wr(BAR0 + 0x600, idx + len(parts))
    return idx + len(parts)


def wire(sock, count, secs=2.0):
    """up to @count frames from the wire"""
    out = []
    sock.settimeout(secs)
    try:
        while len(out) < count:
            out.append(sock.recv(65536))
    except socket.timeout:
        pass
    return out


def tso_segments(port, ov6, iv6, payload, mss, oco, flags=0x18):
    segs = []
    for i, off in enumerate(range(0, len(payload), mss)):
        last = off + mss >= len(payload)
        f = flags & ~(0 if last else 0x09)
        segs.append(tun_frame(port, ov6, iv6, payload[off:off + mss],
                              seq=1000 + off, flags=f, oid=0x100 + i,
                              iid=0x200 + i,
                              ucsum="ok" if oco else "zero")[0])
    return segs


def tun_bring_up(qemu, props, rev, dcr0_req=None):
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision={rev},strict=on{props}",
              (qport, sock.getsockname()[1])).setup()
    granted = None
    if dcr0_req is not None:
        q.vd(VRRS, 1 << (rev - 1))
        q.vd(DCR0, dcr0_req)
        granted = q.command(GET_DCR0_REG)
    check(f"tunnel rev {rev}{props}: ACTIVATE succeeds", bring_up(q, rev), 0)
    return q, sock, granted


def case_tunnel_tso(qemu, rev, port, ov6, iv6, oco, mss, size):
    """tunnel TSO at rev {rev}"""
    what = (f"rev {rev} {'Geneve' if port == 6081 else 'VXLAN'} {port} "
            f"{'v6' if ov6 else 'v4'}/{'v6' if iv6 else 'v4'} oco={oco} "
            f"mss {mss}, {size} bytes")
    ext1 = rev >= 7
    q, sock, granted = tun_bring_up(qemu, ",dcr0=0xfc" if ext1 else "",
                                    rev, 0xfc if ext1 else None)
    if ext1:
        check(f"{what}: DCR0 tunnel bits 2..7 granted", granted, 0xfc)
    payload = bytes((i * 7 + 3) & 0xFF for i in range(size))
    flags = 0x19 if size % 2 else 0x18          # FIN too on one of them
    frame_, hlen = tun_frame(port, ov6, iv6, payload, flags=flags,
                             ucsum="zero", tcsum="seed0", icsum=False)
    tun_post(q, 0, frame_, hlen, 3 if ext1 else 1, mss, oco, int(ext1))
    check(f"{what}: completed",
          wait_for(lambda: tx_comp(q, 0)[0] and tx_comp(q, 0)), (1, 1))
    want = tso_segments(port, ov6, iv6, payload, mss, oco, flags)
    got = wire(sock, len(want)) + wire(sock, 1, 0.2)
    check(f"{what}: {len(want)} segments on the wire, sizes",
          [len(f) for f in got], [len(f) for f in want])
    check(f"{what}: segments byte-exact (lengths, ids, IP/TCP/UDP checksums,"
          " sequence numbers, PSH/FIN on the last)", got == want, True)
    if got != want:
        for g, w in zip(got, want):
            if g != w:
                diff = [i for i in range(min(len(g), len(w))) if g[i] != w[i]]
                print(f"# first differing bytes at {diff[:8]}")
                break
    check(f"{what}: counters", [q.qom(p) for p in (
        "stat-tunnel-tso", "stat-tunnel-segments", "stat-tunnel-bad",
        "stat-violations", "stat-tx-queue0")], [1, len(want), 0, 0, 1])
    check(f"{what}: no strict-mode violation", strict_lines(q.close()), [])
    sock.close()


def case_tunnel_csum(qemu, rev):
    """tunnel checksum at rev {rev}"""
    ext1 = rev >= 7
    q, sock, _ = tun_bring_up(qemu, ",dcr0=0xfc" if ext1 else "", rev,
                              0xfc if ext1 else None)
    idx = 0
    for k, (port, oco) in enumerate(((4789, 0), (6081, 1))):
        payload = bytes((i * 13 + k) & 0xFF for i in range(333))
        frame_, hlen = tun_frame(port, False, k == 1, payload, ucsum="zero",
                                 tcsum="seed")
        field = hlen - 20 + 16
        idx = tun_post(q, idx, frame_, hlen, 2 if ext1 else 1,
                       field if ext1 else 0, oco, int(ext1))
        want = tun_frame(port, False, k == 1, payload,
                         ucsum="ok" if oco else "zero")[0]
        got = wire(sock, 1) + wire(sock, 1, 0.2)
        check(f"tunnel checksum rev {rev} port {port} oco={oco}: the frame "
              "with its inner TCP checksum (and outer UDP with oco)",
              got, [want])
    check(f"tunnel checksum rev {rev}: counters", [q.qom(p) for p in (
        "stat-tunnel-csum", "stat-tunnel-bad", "stat-violations")], [2, 0, 0])
    check(f"tunnel checksum rev {rev}: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


def case_tunnel_bad(qemu, rev):
    """malformed tunnel requests at rev {rev}"""
    ext1 = rev >= 7
    props = ",dcr0=0xfc" if ext1 else ""
    if rev == 5:
        props = ",tunnel-offloads=off"
    # rev 7: only the VXLAN offloads asked for, not Geneve nor outer csum
    q, sock, granted = tun_bring_up(qemu, props, rev, 0x30 if ext1 else None)
    payload = bytes(range(200)) * 15
    good, hlen = tun_frame(4789, False, False, payload, ucsum="zero",
                           tcsum="seed0", icsum=False)
    om = 3 if ext1 else 1
    bad = []
    if rev == 5:
        bad.append(("tunnel-offloads=off", good, hlen, om, 1000, 0))
    elif ext1:
        gen, gh = tun_frame(6081, False, False, payload, ucsum="zero",
                            tcsum="seed0", icsum=False)
        bad += [("Geneve TSO not granted", gen, gh, 3, 1000, 0),
                ("outer checksum not granted", good, hlen, 3, 1000, 1),
                ("mode 1 at rev 7", good, hlen, 1, 1000, 0),
                ("checksum field not where msscof says", good, hlen, 2,
                 hlen - 2, 0),
                ("TSO with MSS 0", good, hlen, 3, 0, 0)]
    else:
        other = bytearray(good)
        other[14 + 20 + 2:14 + 20 + 4] = struct.pack("!H", 1234)
        trunc = good[:hlen - 6]
        bad += [("hlen one short", good, hlen - 1, om, 1000, 0),
                ("hlen past the frame", trunc, hlen, om, 1000, 0),
                ("outer UDP port 1234", bytes(other), hlen, om, 1000, 0),
                ("3000 segments of 1 byte", good, hlen, om, 1, 0),
                ("IPv4 fragment", good[:20] + b"\x20" + good[21:], hlen, om,
                 1000, 0)]
    idx = 0
    for k, (name, data, h, m, mss, oco) in enumerate(bad):
        idx = tun_post(q, idx, data, h, m, mss, oco, int(ext1),
                       split=min(h, len(data)))
        c = wait_for(lambda: tx_comp(q, k)[0] and tx_comp(q, k))
        check(f"tunnel rev {rev}{props}: {name}: completed, nothing sent",
              (c, wire(sock, 1, 0.2)), ((1, idx - 1), []))
    check(f"tunnel rev {rev}{props}: QEMU survived", q.alive(), True)
    viol = q.qom("stat-violation-tx-desc")
    check(f"tunnel rev {rev}{props}: each request counted (tx-desc)", viol,
          len(bad))
    # a good one still goes through afterwards (VXLAN TSO)
    if rev != 5:
        idx = tun_post(q, idx, good, hlen, om, 1000, 0, int(ext1))
        got = wire(sock, 3) + wire(sock, 1, 0.2)
        check(f"tunnel rev {rev}{props}: a good request after them is sent",
              got, tso_segments(4789, False, False, payload, 1000, 0))
    kinds = sorted({ln.split("strict: ")[1].split(":")[0]
                    for ln in strict_lines(q.close())})
    check(f"tunnel rev {rev}{props}: reported as tx-desc", kinds, ["tx-desc"])
    sock.close()


UPDATE_FEATURE = 0xCAFE0009
F_RXCSUM, F_RXINNEROFLD = 1, 1 << 4


def rx_csum(q, i):
    """(gen, bits 13:12, cnc, v4, v6, tcp, udp, ipc, tuc) of RX
    completion i"""
    d0, _, _, d3 = struct.unpack("<IIII", q.read(RXC + 16 * i, 16))
    return (d3 >> 31, d0 >> 12 & 3, d0 >> 30 & 1, d3 >> 21 & 1, d3 >> 20 & 1,
            d3 >> 18 & 1, d3 >> 17 & 1, d3 >> 19 & 1, d3 >> 16 & 1)


def case_rx_inner(qemu, rev, upt, props=""):
    """inner RX results at rev {rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision={rev},strict=on{props}",
              (qport, sock.getsockname()[1])).setup()
    what = f"RX inner rev {rev} uptFeatures 0x{upt:x}{props}"
    check(f"{what}: ACTIVATE succeeds", bring_up(q, rev, upt=upt), 0)
    on = rev >= 4 and upt & F_RXINNEROFLD and "off" not in props
    k = 0

    def rx(data):
        nonlocal k
        sock.sendto(data, ("127.0.0.1", qport))
        c = wait_for(lambda: rx_csum(q, k)[0] and rx_csum(q, k))
        k += 1
        return c
    # QEMU's result on a hub: no checksum evaluated
    none = (1, 0, 1, 0, 0, 0, 0, 0, 0)
    # patch 0024 (rx-csum-verify, default on): the outer results verified
    # where no inner results apply: IPv4 header right, UDP without checksum
    outer = none if "rx-csum-verify=off" in props else \
        (1, 0, 0, 1, 0, 0, 1, 1, 0)
    payload = bytes((i * 5 + 1) & 0xFF for i in range(200))
    good, _ = tun_frame(4789, False, False, payload, ucsum="zero")
    check(f"{what}: VXLAN 4789 v4/v4 TCP, checksums right: "
          + ("bits 13:12, v4 tcp ipc tuc" if on else "QEMU's result"),
          rx(good), (1, 3, 0, 1, 0, 1, 0, 1, 1) if on else outer)
    bad = bytearray(good)
    bad[-1] ^= 0x5A
    check(f"{what}: inner TCP checksum wrong: "
          + ("bits 13:12, tuc clear" if on else "QEMU's result"),
          rx(bytes(bad)), (1, 3, 0, 1, 0, 1, 0, 1, 0) if on else outer)
    if not on:
        check(f"{what}: no inner results counted",
              [q.qom("stat-rx-inner"), q.qom("stat-rx-inner-bad")], [0, 0])
        check(f"{what}: QEMU alive", q.alive(), True)
        q.close()
        sock.close()
        return
    g6, _ = tun_frame(6081, True, True, payload[:30], ucsum="ok")
    check(f"{what}: Geneve v6/v6 TCP through the data ring "
          f"({len(g6)} bytes): bits 13:12, v6 tcp tuc",
          rx(g6), (1, 3, 0, 0, 1, 1, 0, 0, 1))
    bip = bytearray(good)
    bip[14 + 20 + 16 + 14 + 10] ^= 0x01         # inner IPv4 checksum
    check(f"{what}: inner IPv4 header checksum wrong: ipc clear, tuc set",
          rx(bytes(bip)), (1, 3, 0, 1, 0, 1, 0, 0, 1))
    check(f"{what}: a truncated VXLAN frame (inner IP length past the end):"
          " QEMU's result", rx(good[:-40]), none)
    check(f"{what}: a VXLAN frame cut inside the inner IP header:"
          " QEMU's result", rx(good[:14 + 20 + 16 + 14 + 12]), none)
    other = bytearray(good)
    other[14 + 20 + 2:14 + 20 + 4] = struct.pack("!H", 4790)
    check(f"{what}: another UDP port: the outer results", rx(bytes(other)),
          outer)
    check(f"{what}: counters (stat-rx-inner, stat-rx-inner-bad)",
          [q.qom("stat-rx-inner"), q.qom("stat-rx-inner-bad")], [4, 2])
    # UPDATE_FEATURE without RXINNEROFLD: QEMU's result again
    q.write(SH + 24, le64(upt & ~F_RXINNEROFLD))
    q.command(UPDATE_FEATURE)
    check(f"{what}: after UPDATE_FEATURE without RXINNEROFLD: no inner "
          "result (the outer results)", rx(good), outer)
    q.write(SH + 24, le64(upt))
    q.command(UPDATE_FEATURE)
    check(f"{what}: RXINNEROFLD set again by UPDATE_FEATURE: bits 13:12",
          rx(good), (1, 3, 0, 1, 0, 1, 0, 1, 1))
    check(f"{what}: QEMU alive, no strict-mode violation, frames counted",
          (q.alive(), q.qom("stat-violations"), q.qom("stat-rx-queue0")),
          (True, 0, k))
    check(f"{what}: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


F_LRO = 1 << 3


def case_lro_force(qemu):
    """forced LRO completions (lro-force-mss)"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=9,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("lro-force: ACTIVATE with LRO",
          bring_up(q, 9, upt=F_RXCSUM | F_LRO), 0)
    k = 0

    def rx(data):
        """(type, ring id, segCnt, MSS, v4, v6, tcp, udp) of its completion"""
        nonlocal k
        sock.sendto(data, ("127.0.0.1", qport))
        c = wait_for(lambda: rx_comp(q, k)[0] and rx_comp(q, k))
        _, d1, _, d3 = struct.unpack("<IIII", q.read(RXC + 16 * k, 16))
        k += 1
        return (c[6], c[1], d1 & 0xFF, d3 & 0xFFFF, d3 >> 21 & 1,
                d3 >> 20 & 1, d3 >> 18 & 1, d3 >> 17 & 1)
    udp = bytearray(ipv4_frame("10.0.0.1", "10.0.0.2", 300))
    udp[23] = 17                                # IPv4 protocol UDP
    udp, other = bytes(udp), frame(300)
    check("lro-force: off by default (qom-get 0), a 300-byte frame type 3",
          (q.qom("lro-force-mss"), rx(udp)[0]), (0, 3))
    for mss, segs in ((1000, 1), (100, 3), (1, 255), (65536, 1)):
        q.qom("lro-force-mss", mss)
        check(f"lro-force-mss {mss}: a 300-byte IPv4 frame: type 4, ring 0, "
              f"segCnt {segs}, MSS {mss & 0xFFFF}, flags v4 tcp",
              rx(udp), (4, 0, segs, mss & 0xFFFF, 1, 0, 1, 0))
    q.qom("lro-force-mss", 1000)
    check("lro-force-mss 1000: a 300-byte non-IP frame: type 4, flags v4 tcp",
          rx(other), (4, 0, 1, 1000, 1, 0, 1, 0))
    check("lro-force-mss 1000: a 100-byte frame (data ring): type 3",
          rx(frame(100))[:2], (3, 2))
    q.write(SH + 24, le64(F_RXCSUM))
    q.command(UPDATE_FEATURE)
    check("lro-force-mss 1000, LRO off by UPDATE_FEATURE: type 3",
          rx(udp)[0], 3)
    q.write(SH + 24, le64(F_RXCSUM | F_LRO))
    q.command(UPDATE_FEATURE)
    check("lro-force-mss 1000, LRO on again: type 4", rx(udp)[0], 4)
    q.qom("lro-force-mss", 0)
    check("lro-force-mss 0 again: type 3", rx(udp)[0], 3)
    check("lro-force: counters (stat-lro-forced, stat-lro-completions), "
          "no violation, QEMU alive",
          (q.qom("stat-lro-forced"), q.qom("stat-lro-completions"),
           q.qom("stat-violations"), q.alive()), (6, 6, 0, True))
    check("lro-force: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


OOORX_COMP = 1 << 17
QUIESCE_DEV = 0xCAFE0001
RX1BUF = BUF + 0x10000          # ring 1 buffers, as bring_up placed them


def ooo_frame(n, k):
    """frame k of n bytes, its bytes unique to k"""
    return bytes.fromhex("ffffffffffff525400123401" "88b5") + bytes(
        ((i + 7 * k) & 0xFF for i in range(n - 14)))


class RxDriver:
    """RX queue 0 of a driver with OOORX_COMP: it records each
    descriptor's completion and re-arms in ring order only up to the first
    one still pending (positions are absolute: position p of a ring is its
    descriptor p % NR)"""

    def __init__(self, q):
        self.q = q
        self.fill = [NR - 1, NR - 1]            # bring_up armed 0..NR-2
        self.cons = [0, 0]                      # first position pending
        self.done = [set(), set()]              # completed past cons
        self.seq = [[], []]                     # rxdIdx per ring, in order
        self.ooo = [0, 0, 0]                    # ahead of a pending one,
                                                # by ring id (2: data ring)
        self.bad = []                           # completions not pending
        self.ci = 0                             # completions read

    def complete(self, rq, idx):
        ring = 1 if rq == 1 else 0
        c, f = self.cons[ring], self.fill[ring]
        pos = [p for p in range(c, f) if p % NR == idx and
               p not in self.done[ring]]
        self.seq[ring].append(idx)
        if not pos:
            self.bad.append((ring, idx))
            return
        if pos[0] != c:
            self.ooo[rq] += 1
        self.done[ring].add(pos[0])
        while self.cons[ring] in self.done[ring]:
            self.done[ring].discard(self.cons[ring])
            self.cons[ring] += 1

    def comp(self, secs=2):
        """the next completion, None if the device wrote none"""
        k = self.ci % (2 * NR)
        gen = 1 - self.ci // (2 * NR) % 2
        c = wait_for(lambda: rx_comp(self.q, k)[0] == gen and
                     rx_comp(self.q, k), secs)
        return c or None

    def receive(self):
        """the next frame's bytes and (ring id, rxdIdx, sop, eop) of each
        of its completions; then re-arm and ring RXPROD / RXPROD2"""
        parts, data = [], b""
        while True:
            c = self.comp()
            if c is None:
                raise RuntimeError(f"no completion {self.ci}")
            self.ci += 1
            _, rq, idx, sop, eop, ln, _ = c
            where = {0: BUF + 2048 * idx, 1: RX1BUF + 4096 * idx,
                     2: RXD + DSZ * idx}[rq]
            data += self.q.read(where, ln)
            parts.append((rq, idx, sop, eop))
            self.complete(rq, idx)
            if eop:
                break
        for ring in (0, 1):
            f0 = self.fill[ring]
            while self.fill[ring] < self.cons[ring] + NR:
                k = self.fill[ring]
                i = k % NR
                base, addr, blen = ((RX0, BUF + 2048 * i, 2048) if ring == 0
                                    else (RX1, RX1BUF + 4096 * i,
                                          4096 | 1 << 14))
                self.q.write(base + 16 * i, le64(addr) + le32(blen))
                self.q.write(base + 16 * i + 8, le32(blen | lap_gen(k) << 31))
                self.fill[ring] += 1
            if self.fill[ring] != f0:
                self.q.wr(BAR0 + (0x800, 0xA00)[ring], self.fill[ring] % NR)
        return data, parts


OOO_SIZES = (300, 60, 5000, 1000, 120, 9000, 300, 2100)


def case_ooo(qemu, offer, req, prop):
    """out-of-order RX completions, DCR0 offered {rev:#x}"""
    sock, qport = udp_pair()
    what = f"ooo-rx={prop}, DCR0 offered 0x{offer:x} requested 0x{req:x}"
    q = QTest(qemu, f",max-revision=7,dcr0=0x{offer:x},ptcr0=0x80000000,"
              f"ooo-rx={prop},update-rx-prod=on,strict=on",
              (qport, sock.getsockname()[1])).setup()
    q.vd(VRRS, 1 << 6)
    q.vd(DCR0, req)
    granted = q.command(GET_DCR0_REG)
    on = granted & OOORX_COMP and prop == "on"
    check(f"{what}: ACTIVATE succeeds, granted 0x{offer & req:x}",
          (granted, bring_up(q, 7, sg=4)), (offer & req, 0))
    q.wr(BAR0 + 0x800, NR - 1)
    q.wr(BAR0 + 0xA00, NR - 1)
    drv = RxDriver(q)
    sent, got, firsts = [], [], []
    for k in range(71):
        f = ooo_frame(OOO_SIZES[k % len(OOO_SIZES)], k)
        sent.append(f)
        sock.sendto(f, ("127.0.0.1", qport))
        try:
            data, parts = drv.receive()
        except RuntimeError:
            break                       # a frame lost: stop there
        got.append(data)
        # SOP first (ring 0 or the data ring), EOP last, none between
        firsts.append(parts[0][2] and parts[-1][3] and
                      not any(s for _, _, s, _ in parts[1:]) and
                      not any(e for _, _, _, e in parts[:-1]) and
                      parts[0][0] in (0, 2))
    n0, n1 = len(drv.seq[0]), len(drv.seq[1])
    check(f"{what}: 71 frames (data ring, ring 0, ring 0 + 1 and 2 BODYs of"
          " ring 1) each delivered once, byte-exact, in order, SOP..EOP"
          " consecutive (frames, bytes right, SOP..EOP right, completions of"
          " descriptors not pending, one more)",
          (len(got), sum(g == f for g, f in zip(got, sent)), sum(firsts),
           drv.bad, drv.comp(0.2)), (71, 71, 71, [], None))
    order = "pairs swapped" if on else "ring order"
    check(f"{what}: ring 0 rxdIdx in {order}: "
          + ("1, 0, 3, 2..." if on else "0, 1, 2..."),
          drv.seq[0], [(k ^ 1 if on else k) % NR for k in range(n0)])
    check(f"{what}: ring 1 rxdIdx ({n1} BODYs) in {order}",
          (n1 > NR, drv.seq[1]),
          (True, [(k ^ 1 if on else k) % NR for k in range(n1)]))
    wantooo = (n0 + 1) // 2 + (n1 + 1) // 2 if on else 0
    check(f"{what}: completions ahead of a pending descriptor: seen by the "
          "driver and stat-rx-ooo, "
          + ("some of ring 0, ring 1 and the data ring" if on else "none"),
          (sum(drv.ooo), q.qom("stat-rx-ooo"), [x > 0 for x in drv.ooo]),
          (wantooo, wantooo, [bool(on)] * 3))
    check(f"{what}: frames counted, no strict-mode violation",
          (q.qom("stat-rx-queue0"), seq_counters(q)), (71, [0] * 5))
    if on:
        # 71 frames: ring 0 still holds position 70 (descriptor 6); a new
        # activation forgets it
        q.command(QUIESCE_DEV)
        check(f"{what}: QUIESCE and ACTIVATE again", bring_up(q, 7, sg=4), 0)
        sock.sendto(frame(300), ("127.0.0.1", qport))
        c = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
        check(f"{what}: the descriptor held before QUIESCE is forgotten: the"
              " next frame takes descriptor 1 of the new ring (0 held)",
              (c, q.qom("stat-violations")),
              ((1, 0, 1, 1, 1, 300, 3), 0))
    check(f"{what}: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


def case_ooo_unaware(qemu):
    """OOORX_COMP granted, a driver returning every descriptor up to rxdIdx"""
    sock, qport = udp_pair()
    what = "ooo-rx=on, a driver that re-arms up to rxdIdx"
    q = QTest(qemu, ",max-revision=7,dcr0=0x20000,ptcr0=0x80000000,"
              "ooo-rx=on,strict=on", (qport, sock.getsockname()[1])).setup()
    q.vd(VRRS, 1 << 6)
    q.vd(DCR0, OOORX_COMP)
    check(f"{what}: OOORX_COMP granted, ACTIVATE succeeds",
          (q.command(GET_DCR0_REG), bring_up(q, 7)), (OOORX_COMP, 0))
    q.wr(BAR0 + 0x800, NR - 1)
    sock.sendto(frame(300), ("127.0.0.1", qport))
    c1 = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
    # completion for descriptor 1: this driver takes 0 as returned too and
    # re-arms positions 31 and 32 (descriptor 0, next lap)
    rx_rearm(q, NR - 1)
    rx_rearm(q, NR)
    q.wr(BAR0 + 0x800, 1)
    sock.sendto(frame(300), ("127.0.0.1", qport))
    c2 = wait_for(lambda: rx_comp(q, 1)[0] and rx_comp(q, 1))
    check(f"{what}: descriptor 1 completed, then the held descriptor 0",
          (c1[2], c2[2]), (1, 0))
    check(f"{what}: the held descriptor re-armed before its completion:"
          " counted as rx-owned only", seq_counters(q), [0, 0, 0, 1, 1])
    kinds = sorted({ln.split("strict: ")[1].split(":")[0]
                    for ln in strict_lines(q.close())})
    check(f"{what}: reported on stderr as rx-owned", kinds, ["rx-owned"])
    sock.close()


# Malformed completions (patch 0023): a short SOP, a zero-length data ring
# completion, a frame's EOP completion written later, a refused ACTIVATE on
# resume; and the strict kinds intr-block, tx-oversize, rx-buf-size.
def rx_bytes(q, c):
    """the bytes RX completion tuple c names (ring 0, ring 1, data ring)"""
    _, rq, idx, _, _, ln, _ = c
    where = {0: BUF + 2048 * idx, 1: RX1BUF + 4096 * idx,
             2: RXD + DSZ * idx}[rq]
    return q.read(where, ln) if ln else b""


def rx_frame(q, sock, qport, data, first, count):
    """send data, wait for its `count` completions from slot `first`:
    returns (completions, the bytes they name, joined)"""
    sock.sendto(data, ("127.0.0.1", qport))
    last = first + count - 1
    wait_for(lambda: rx_comp(q, last)[0])
    cs = [rx_comp(q, first + i) for i in range(count)]
    return cs, b"".join(rx_bytes(q, c) for c in cs)


def case_short_sop(qemu):
    """fault rx-short-sop"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=3,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("rx-short-sop: ACTIVATE (maxNumRxSG 4), short-sop-len 6 and"
          " split-delay-ms 300 by default",
          (bring_up(q, 3, sg=4), q.qom("short-sop-len"),
           q.qom("split-delay-ms")), (0, 6, 300))
    f = [ooo_frame(n, k) for k, n in enumerate((300, 60, 300, 300, 5000,
                                                 300, 300, 300))]
    q.qom("fault", "rx-short-sop")
    # a data ring frame is not eligible: the fault stays armed
    cs, data = rx_frame(q, sock, qport, f[1], 0, 1)
    check("rx-short-sop: a 60-byte frame through the data ring is not"
          " eligible (completed as usual, the fault still armed)",
          (cs, data == f[1], q.qom("fault")),
          ([(1, 2, 0, 1, 1, 60, 3)], True, "rx-short-sop"))
    cs, data = rx_frame(q, sock, qport, f[0], 1, 2)
    check("rx-short-sop: a 300-byte frame: SOP of 6 bytes in ring 0 without"
          " EOP, 294 bytes in ring 1 with EOP, byte-exact",
          (cs, data == f[0]),
          ([(1, 0, 1, 1, 0, 6, 3), (1, 1, 0, 0, 1, 294, 3)], True))
    cs, data = rx_frame(q, sock, qport, f[2], 3, 1)
    check("rx-short-sop: one-shot: the next 300-byte frame as usual, counted"
          " once", (cs, data == f[2], q.qom("stat-fault-rx-short-sop"),
                    q.qom("fault")),
          ([(1, 0, 2, 1, 1, 300, 3)], True, 1, ""))
    q.qom("short-sop-len", 0)
    q.qom("fault", "rx-short-sop")
    cs, data = rx_frame(q, sock, qport, f[3], 4, 2)
    check("rx-short-sop: short-sop-len 0 (qom-set while running): a SOP of"
          " length 0, the whole frame in ring 1",
          (cs, data == f[3]),
          ([(1, 0, 3, 1, 0, 0, 3), (1, 1, 1, 0, 1, 300, 3)], True))
    q.qom("short-sop-len", 6)
    q.qom("fault", "rx-short-sop")
    cs, data = rx_frame(q, sock, qport, f[4], 6, 3)
    check("rx-short-sop: a 5000-byte frame: 6 bytes in ring 0, then two"
          " ring 1 BODYs (4096, 898), EOP on the last",
          (cs, data == f[4]),
          ([(1, 0, 4, 1, 0, 6, 3), (1, 1, 2, 0, 0, 4096, 3),
            (1, 1, 3, 0, 1, 898, 3)], True))
    # ring 1 empty: the frame as usual, the fault stays armed
    q.cmd(f"memset 0x{RX1:x} {16 * NR} 0")
    q.qom("fault", "rx-short-sop")
    cs, data = rx_frame(q, sock, qport, f[5], 9, 1)
    check("rx-short-sop: no ring 1 buffer handed over: the frame as usual,"
          " the fault still armed",
          (cs, data == f[5], q.qom("fault"),
           q.qom("stat-fault-rx-short-sop")),
          ([(1, 0, 5, 1, 1, 300, 3)], True, "rx-short-sop", 3))
    q.write(RX1 + 16 * 4, le64(RX1BUF + 4096 * 4) +
            le32(4096 | 1 << 14 | 1 << 31))
    cs, data = rx_frame(q, sock, qport, f[6], 10, 2)
    check("rx-short-sop: a ring 1 buffer handed over again: the armed fault"
          " fires on the next frame",
          (cs, data == f[6], q.qom("fault")),
          ([(1, 0, 6, 1, 0, 6, 3), (1, 1, 4, 0, 1, 294, 3)], True, ""))
    # no RX data ring, maxNumRxSG 1: a 60-byte frame spans ring 0 + ring 1
    q.command(0xCAFE0002)                       # RESET_DEV
    check("rx-short-sop: ACTIVATE again without a data ring, maxNumRxSG 1",
          bring_up(q, 3, rxdata=0, sg=1), 0)
    q.qom("fault", "rx-short-sop")
    cs, data = rx_frame(q, sock, qport, f[1], 0, 2)
    check("rx-short-sop: a 60-byte frame (no data ring, maxNumRxSG 1) spans"
          " ring 0 (6 bytes, SOP) and ring 1 (54 bytes, EOP)",
          (cs, data == f[1], q.qom("stat-fault-rx-short-sop")),
          ([(1, 0, 0, 1, 0, 6, 3), (1, 1, 0, 0, 1, 54, 3)], True, 5))
    check("rx-short-sop: no violation, QEMU alive",
          (q.qom("stat-violations"), q.alive()), (0, True))
    check("rx-short-sop: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


def case_zero_data_ring(qemu, random):
    """fault rx-zero-data-ring"""
    sock, qport = udp_pair()
    how = "at random (rate 1e6)" if random else "on command"
    props = ",max-revision=3,strict=on"
    if random:
        props += ",fault-rate=1000000,fault-kinds=0x400"
    q = QTest(qemu, props, (qport, sock.getsockname()[1])).setup()
    check(f"rx-zero-data-ring {how}: ACTIVATE", bring_up(q, 3), 0)
    f = [ooo_frame(n, k) for k, n in enumerate((300, 60, 100, 60))]
    if not random:
        q.qom("fault", "rx-zero-data-ring")
        cs, data = rx_frame(q, sock, qport, f[0], 0, 1)
        check(f"rx-zero-data-ring {how}: a 300-byte frame through ring 0 is"
              " not eligible (the fault still armed)",
              (cs, data == f[0], q.qom("fault")),
              ([(1, 0, 0, 1, 1, 300, 3)], True, "rx-zero-data-ring"))
    else:
        rx_frame(q, sock, qport, f[0], 0, 1)
    cs, _ = rx_frame(q, sock, qport, f[1], 1, 1)
    check(f"rx-zero-data-ring {how}: a 60-byte frame through the data ring:"
          " SOP|EOP, ring id 2, length 0, the frame in its entry all the"
          " same", (cs, q.read(RXD + DSZ * 1, 60) == f[1]),
          ([(1, 2, 1, 1, 1, 0, 3)], True))
    cs, data = rx_frame(q, sock, qport, f[2], 2, 1)
    want = 0 if random else 100
    check(f"rx-zero-data-ring {how}: the next data ring frame "
          + ("length 0 too" if random else "as usual (one-shot)"),
          (cs, q.read(RXD + DSZ * 2, 100) == f[2]),
          ([(1, 2, 2, 1, 1, want, 3)], True))
    check(f"rx-zero-data-ring {how}: counted "
          f"(stat-fault-rx-zero-data-ring), no violation",
          (q.qom("stat-fault-rx-zero-data-ring"), q.qom("stat-violations"),
           q.alive()), (2 if random else 1, 0, True))
    q.close()
    sock.close()


def split_bring_up(qemu, sock, qport, props=""):
    q = QTest(qemu, ",max-revision=3,strict=on" + props,
              (qport, sock.getsockname()[1])).setup()
    r = bring_up(q, 3, sg=4)
    q.wr(BAR0 + 0, 0)                           # unmask vector 0 (INTx)
    return q, r


def intr0(q):
    """take the interrupt (ICR) and return stat-intr0"""
    q.vd(0x38)
    return q.qom("stat-intr0")


def case_split(qemu):
    """fault rx-split"""
    sock, qport = udp_pair()
    q, r = split_bring_up(qemu, sock, qport)
    check("rx-split: ACTIVATE", r, 0)
    f = [ooo_frame(n, k) for k, n in enumerate((300, 3000, 60, 300))]
    q.qom("fault", "rx-split")
    cs, data = rx_frame(q, sock, qport, f[0], 0, 1)
    check("rx-split: a frame in one buffer is not eligible (the fault still"
          " armed)", (cs, data == f[0], q.qom("fault"), intr0(q)),
          ([(1, 0, 0, 1, 1, 300, 3)], True, "rx-split", 1))
    sock.sendto(f[1], ("127.0.0.1", qport))
    c1 = wait_for(lambda: rx_comp(q, 1)[0] and rx_comp(q, 1))
    i1 = intr0(q)
    sock.sendto(f[2], ("127.0.0.1", qport))     # held behind the split
    wait_for(lambda: q.qom("stat-rx-split-held"))
    time.sleep(0.1)
    check("rx-split: a 3000-byte frame: the ring 0 completion (SOP, 2048"
          " bytes) written and its interrupt raised, no EOP completion yet,"
          " a frame sent meanwhile held back",
          (c1, i1, rx_comp(q, 2)[0], rx_comp(q, 3)[0],
           q.qom("stat-rx-split-held")),
          ((1, 0, 1, 1, 0, 2048, 3), 2, 0, 0, 1))
    q.clock_step(299 * 1000 * 1000)
    early = (rx_comp(q, 2)[0], rx_comp(q, 3)[0], intr0(q))
    q.clock_step(1000 * 1000)
    c2 = wait_for(lambda: rx_comp(q, 2)[0] and rx_comp(q, 2))
    c3 = wait_for(lambda: rx_comp(q, 3)[0] and rx_comp(q, 3))
    check("rx-split: nothing at 299 ms; at split-delay-ms 300 the EOP"
          " completion (ring 1, 952 bytes) with an interrupt, then the frame"
          " held back",
          (early, c2, c3, intr0(q) >= 3),
          ((0, 0, 2), (1, 1, 0, 0, 1, 952, 3), (1, 2, 2, 1, 1, 60, 3), True))
    check("rx-split: both frames byte-exact",
          (rx_bytes(q, c1) + rx_bytes(q, c2) == f[1],
           rx_bytes(q, c3) == f[2]), (True, True))
    q.qom("split-delay-ms", 50)
    q.qom("fault", "rx-split")
    sock.sendto(f[1], ("127.0.0.1", qport))
    c4 = wait_for(lambda: rx_comp(q, 4)[0] and rx_comp(q, 4))
    q.clock_step(49 * 1000 * 1000)
    early = rx_comp(q, 5)[0]
    q.clock_step(1000 * 1000)
    c5 = wait_for(lambda: rx_comp(q, 5)[0] and rx_comp(q, 5))
    check("rx-split: split-delay-ms 50 (qom-set while running): the EOP"
          " completion at 50 ms, not at 49",
          (c4[3:5], early, c5[3:5]), ((1, 0), 0, (0, 1)))
    cs, data = rx_frame(q, sock, qport, f[3], 6, 1)
    check("rx-split: one-shot: the next frame at once; counted once per"
          " split, no violation",
          (cs, q.qom("stat-fault-rx-split"), q.qom("stat-violations"),
           q.alive()),
          ([(1, 0, 4, 1, 1, 300, 3)], 2, 0, True))
    check("rx-split: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


def case_split_cancel(qemu, cmd, qwrite=True):
    """rx-split pending at {rev}"""
    sock, qport = udp_pair()
    name = {0xCAFE0001: "QUIESCE", 0xCAFE0002: "RESET_DEV"}[cmd]
    if not qwrite:
        name += " (split-quiesce-write off)"
    q, r = split_bring_up(qemu, sock, qport)
    check(f"rx-split, {name} while pending: ACTIVATE, split-quiesce-write"
          " on by default", (r, q.qom("split-quiesce-write")), (0, True))
    if not qwrite:
        q.qom("split-quiesce-write", False)
    q.qom("fault", "rx-split")
    f = ooo_frame(3000, 1)
    sock.sendto(f, ("127.0.0.1", qport))
    c0 = wait_for(lambda: rx_comp(q, 0)[0] and rx_comp(q, 0))
    sock.sendto(frame(60), ("127.0.0.1", qport))
    held = wait_for(lambda: q.qom("stat-rx-split-held"))
    q.command(cmd)
    c1 = rx_comp(q, 1)
    finish = cmd == QUIESCE_DEV and qwrite
    if finish:
        check(f"rx-split, {name} while pending: the EOP completion written"
              " at the QUIESCE (the frame finished, byte-exact), the frame"
              " held back dropped as for an inactive device",
              (c0[3:5], c1, rx_bytes(q, c0) + rx_bytes(q, c1) == f, held,
               q.qom("stat-rx-inactive")),
              ((1, 0), (1, 1, 0, 0, 1, 952, 3), True, 1, 1))
    else:
        check(f"rx-split, {name} while pending: the EOP completion forgotten"
              " (not written), the frame held back dropped as for an"
              " inactive device",
              (c0[3:5], c1[0], held, q.qom("stat-rx-inactive")),
              ((1, 0), 0, 1, 1))
    # activated again at once (the same rings, cleared): nothing pending
    # may land in the new completion ring
    check(f"rx-split, {name}: ACTIVATE again at once", bring_up(q, 3, sg=4),
          0)
    q.clock_step(400 * 1000 * 1000)
    time.sleep(0.2)
    check(f"rx-split, {name}: split-delay-ms later nothing written (the"
          " timer was cancelled)", (rx_comp(q, 0)[0], rx_comp(q, 1)[0]),
          (0, 0))
    cs, data = rx_frame(q, sock, qport, ooo_frame(300, 2), 0, 1)
    check(f"rx-split, {name}: frames received again afterwards",
          (cs, data == ooo_frame(300, 2), q.qom("stat-violations"),
           q.alive()), ([(1, 0, 0, 1, 1, 300, 3)], True, 0, True))
    q.close()
    sock.close()


def case_activate_resume(qemu):
    """activate-refused on command, ACTIVATE of a resume"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=7,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("activate-refused on command: first ACTIVATE", bring_up(q, 7), 0)
    q.qom("fault", "activate-refused")
    again = q.command(0xCAFE0000)               # already active: a no-op
    armed = q.qom("fault")
    # a driver's suspend (QUIESCE, RESET_DEV) and resume (negotiation,
    # shared area, ACTIVATE, which it retries)
    q.command(QUIESCE_DEV)
    q.command(0xCAFE0002)
    q.vd(VRRS, 1 << 6)
    q.vd(UVRS, 1)
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    first = q.command(0xCAFE0000)
    second = q.command(0xCAFE0000)
    check("activate-refused on command: an ACTIVATE of the active device"
          " leaves it armed; after RESET_DEV the resume's ACTIVATE is refused"
          " (non-zero), the second succeeds, counted once",
          (again, armed, first != 0, second, q.qom("fault"),
           q.qom("stat-fault-activate-refused")),
          (0, "activate-refused", True, 0, "", 1))
    cs, data = rx_frame(q, sock, qport, frame(300), 0, 1)
    check("activate-refused on command: frames received after the resume",
          (cs, data == frame(300)), ([(1, 0, 0, 1, 1, 300, 3)], True))
    q.close()
    sock.close()


STRICT_NEW = ("intr-block", "tx-oversize", "rx-buf-size")


def new_counters(q):
    return [q.qom(f"stat-violation-{k}") for k in STRICT_NEW] + [
        q.qom("stat-violations")]


def strict_kinds(err):
    return sorted({ln.split("strict: ")[1].split(":")[0]
                   for ln in strict_lines(err)})


def intr_activate(q, legacy=b"", ext=b"", at=0):
    """RESET_DEV, the interrupt blocks zeroed then written from offset
    `at` of each (legacy at shared 80, extended at 720), ACTIVATE; returns
    (CMD read-back, intr-block violations counted by this ACTIVATE)"""
    before = q.qom("stat-violation-intr-block")
    q.command(0xCAFE0002)
    q.cmd(f"memset 0x{SH + 80:x} 40 0")
    q.cmd(f"memset 0x{SH + 720:x} 80 0")
    if legacy:
        q.write(SH + 80 + at, legacy)
    if ext:
        q.write(SH + 720 + at, ext)
    q.vd(DSAL, SH)
    q.vd(DSAH, 0)
    r = q.command(0xCAFE0000)
    return r, q.qom("stat-violation-intr-block") - before


def case_intr_block(qemu, rev):
    """strict intr-block at rev {rev}"""
    q = QTest(qemu, f",max-revision={rev},strict=on").setup()
    check(f"intr-block rev {rev}: ACTIVATE with both blocks zero",
          (bring_up(q, rev), q.qom("stat-violation-intr-block")), (0, 0))
    ok3 = bytes([1, 3, 2]) + bytes([8] * 3)
    cases = [("legacy: 3 vectors, events on 2, intrCtrl 1 (disable all)",
              dict(legacy=ok3 + bytes(22) + le32(1)), 0),
             ("legacy: numIntrs 26", dict(legacy=bytes([1, 26, 0])), 1),
             ("legacy: eventIntrIdx 3 of 3 vectors",
              dict(legacy=bytes([1, 3, 3])), 1),
             ("legacy: intrCtrl bit 1", dict(legacy=le32(3), at=28), 1),
             ("legacy: reserved byte at 119", dict(legacy=b"\x01", at=39), 1)]
    if rev >= 6:
        ok65 = bytes([1, 65, 64, 0]) + le32(1)
        cases += [
            ("extended numIntrs 0: legacy in use, numIntrs 26",
             dict(legacy=bytes([1, 26, 0])), 1),
            ("extended: 65 vectors, events on 64, intrCtrl 1; the legacy"
             " block (not in use) bogus",
             dict(ext=ok65, legacy=bytes([1, 200, 0]) + bytes(25) +
                  le32(0xFF) + b"\xff"), 0),
            ("extended: numIntrs 66", dict(ext=bytes([1, 66, 0])), 1),
            ("extended: eventIntrIdx 4 of 4 vectors",
             dict(ext=bytes([1, 4, 4])), 1),
            ("extended: reserved byte at 723", dict(ext=bytes([1, 4, 0, 9])),
             1),
            ("extended: intrCtrl bit 31", dict(ext=bytes([1, 4, 0, 0]) +
                                              le32(1 << 31)), 1),
            ("extended: reserved dword at 728",
             dict(ext=bytes([1, 4, 0, 0]) + le32(0) + le32(1)), 1),
            ("extended: reserved byte at 799",
             dict(ext=bytes([1, 4, 0]) + bytes(76) + b"\x01"), 1)]
    else:
        cases += [("below rev 6 the extended block is not looked at",
                   dict(ext=bytes([1, 66, 70, 9])), 0)]
    for name, kw, want in cases:
        check(f"intr-block rev {rev}: {name}: ACTIVATE, "
              f"{want} intr-block violation", intr_activate(q, **kw),
              (0, want))
    total = sum(w for _, _, w in cases)
    check(f"intr-block rev {rev}: counted as intr-block only",
          new_counters(q), [total, 0, 0, total])
    check(f"intr-block rev {rev}: reported on stderr as intr-block",
          strict_kinds(q.close()), ["intr-block"])


def tx_pkt(q, k, p, lens, om=0, hlen=0, msscof=0):
    """post packet p at TX descriptor k of buffers of these length fields
    (0 reads 16384) from TXB, ring it, wait for its completion (slot p);
    returns the next descriptor"""
    f = frame(max(sum(n or 16384 for n in lens), 60))
    off = 0
    for j, n in enumerate(lens):
        i = k + j
        size = n or 16384
        q.write(TXB + 0x10000 * i, f[off:off + size])
        off += size
        dw2 = n | 1 << 14 | (msscof << 18 if j == 0 else 0)
        dw3 = (hlen | om << 10) if j == 0 else 0
        if j == len(lens) - 1:
            dw3 |= 1 << 12 | 1 << 13
        q.write(TXR + 16 * i, le64(TXB + 0x10000 * i) + le32(dw2) + le32(dw3))
    k += len(lens)
    q.wr(BAR0 + 0x600, k)
    wait_for(lambda: tx_comp(q, p)[0])
    return k


def case_tx_oversize(qemu):
    """strict tx-oversize"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=3,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("tx-oversize: ACTIVATE", bring_up(q, 3), 0)
    k = 0
    for p, (name, lens, om, want) in enumerate((
            ("9234 bytes (9216 + 18) in 3 descriptors, no offload",
             (4096, 4096, 1042), 0, 0),
            ("9235 bytes, no offload", (4096, 4096, 1043), 0, 1),
            ("9235 bytes, checksum offload (mode 2)", (9235,), 2, 1),
            ("one descriptor of length field 0 (16384 bytes)", (0,), 0, 1),
            ("60 bytes then a descriptor of length field 0", (60, 0), 0, 1),
            ("TSO (mode 3): 20000 bytes, a length field 0 among them",
             (3616, 0), 3, 0))):
        before = q.qom("stat-violation-tx-oversize")
        k = tx_pkt(q, k, p, lens, om, 54 if om == 3 else 0,
                   1448 if om == 3 else 0)
        check(f"tx-oversize: {name}: completed, {want} violation",
              (q.qom("stat-violation-tx-oversize") - before, tx_comp(q, p)),
              (want, (1, k - 1)))
    # patch 0024: the non-IP frames of the offload cases are also a
    # checksum start inside the Ethernet header (csum-offset) and a TSO of
    # a frame that is not TCP (tx-desc, not sent)
    check("tx-oversize: counted as tx-oversize (and the offload fields as"
          " csum-offset, tx-desc)", new_counters(q) + [
              q.qom("stat-violation-csum-offset"),
              q.qom("stat-violation-tx-desc")], [0, 4, 0, 6, 1, 1])
    check("tx-oversize: reported on stderr as tx-oversize (csum-offset,"
          " tx-desc)", strict_kinds(q.close()),
          ["csum-offset", "tx-desc", "tx-oversize"])
    sock.close()


SET_RING_BUFFER_SIZE = 0xCAFE0013


def case_rx_buf_size(qemu, rev):
    """strict rx-buf-size at rev {rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision={rev},strict=on",
              (qport, sock.getsockname()[1])).setup()
    check(f"rx-buf-size rev {rev}: ACTIVATE (ring 0 HEADs of 2048, ring 1"
          " BODYs of 4096)", bring_up(q, rev, sg=4), 0)
    ci = [0]

    def rx(n, sizes=None):
        """announce sizes (ring 0 HEAD, ring 0 BODY, ring 1 BODY) if given,
        then receive an n-byte frame; the violations it caused"""
        if sizes is not None:
            q.write(SH + 704, le16(sizes[0]) + le16(sizes[1]) +
                    le16(sizes[2]) + le16(0))
            q.command(SET_RING_BUFFER_SIZE)
        before = q.qom("stat-violation-rx-buf-size")
        cnt = 1 if n <= 2048 else 2
        rx_frame(q, sock, qport, ooo_frame(n, ci[0]), ci[0], cnt)
        ci[0] += cnt
        return q.qom("stat-violation-rx-buf-size") - before
    on = rev >= 7
    check(f"rx-buf-size rev {rev}: nothing announced: no violation",
          rx(300), 0)
    check(f"rx-buf-size rev {rev}: 2048/0/4096 announced (what is posted):"
          " a 3000-byte frame over ring 0 and ring 1, no violation",
          rx(3000, (2048, 0, 4096)), 0)
    check(f"rx-buf-size rev {rev}: ring 0 HEAD size 3000 announced: a"
          " frame taking a 2048-byte HEAD "
          + ("is a violation" if on else "(command below rev 7: nothing)"),
          rx(300, (3000, 0, 4096)), 1 if on else 0)
    check(f"rx-buf-size rev {rev}: ring 1 BODY size 8192 announced: a"
          " frame taking a 4096-byte ring 1 BODY "
          + ("is a violation" if on else "(nothing)"),
          rx(3000, (2048, 0, 8192)), 1 if on else 0)
    q.command(0xCAFE0002)                       # RESET_DEV forgets them
    check(f"rx-buf-size rev {rev}: RESET_DEV, ACTIVATE",
          bring_up(q, rev, sg=4), 0)
    ci[0] = 0
    check(f"rx-buf-size rev {rev}: after RESET_DEV the sizes are forgotten:"
          " no violation", (rx(300), rx(3000)), (0, 0))
    want = 2 if on else 0
    check(f"rx-buf-size rev {rev}: counted as rx-buf-size only",
          new_counters(q), [0, 0, want, want])
    check(f"rx-buf-size rev {rev}: reported on stderr "
          + ("as rx-buf-size" if on else "(nothing)"),
          strict_kinds(q.close()), ["rx-buf-size"] if on else [])
    sock.close()

# patch 0024: TX offloads from the descriptor, RX checksums, reset, quiesce
def tcp_frame(v6, payload, seq=5000, flags=0x18, tcsum="ok", opts=b"",
              ident=0x300, proto=6, tot=None, vlan=None):
    """Ethernet + IPv4/IPv6 + TCP (proto 6, with opts) or UDP (proto 17)
    frame; tcsum "ok", "seed0" (pseudo-header sum without the length),
    "seed" (with it), "zero" or "bad"; tot: the L4 length the IP header
    gives (default: the real one); returns (frame, l3, l4, hlen)"""
    if proto == 6:
        l4h = struct.pack("!HHIIBBHHH", 40000, 5201, seq, 77,
                          (5 + len(opts) // 4) << 4, flags, 512, 0, 0) + opts
        field = 16
    else:
        l4h = struct.pack("!HHHH", 40001, 5202, 8 + len(payload), 0)
        field = 6
    l4len = len(l4h) + len(payload) if tot is None else tot
    ip = ip_hdr(v6, A6 if v6 else A4, proto, l4len, ident)
    if tcsum == "ok" or tcsum == "bad":
        c = ~sum16(pseudo(ip, proto, len(l4h) + len(payload)) + l4h +
                   payload) & 0xFFFF
        if tcsum == "bad":
            c ^= 0x0101
    elif tcsum == "zero":
        c = 0
    else:
        c = sum16(pseudo(ip, proto, 0 if tcsum == "seed0" else
                         len(l4h) + len(payload)))
    l4h = l4h[:field] + struct.pack("!H", c) + l4h[field + 2:]
    eth = OUT_MACS + (struct.pack("!HH", 0x8100, vlan) if vlan else b"") + \
        struct.pack("!H", 0x86DD if v6 else 0x0800)
    l3 = len(eth)
    return eth + ip + l4h + payload, l3, l3 + len(ip), l3 + len(ip) + len(l4h)


def l4_ok(f, l3, v6, proto):
    """the TCP/UDP checksum of frame f is right"""
    ip = f[l3:l3 + (40 if v6 else 20)]
    l4 = l3 + len(ip)
    ln = (struct.unpack("!H", ip[4:6])[0] if v6 else
          struct.unpack("!H", ip[2:4])[0] - 20)
    return sum16(pseudo(ip, proto, ln) + f[l4:l4 + ln]) == 0xFFFF


def model_tso(f, l3, l4, hlen, mss, v6):
    """the segments a device cutting at hlen with this MSS sends: headers
    fixed where the frame's IP and TCP headers are, checksums from the
    field's seed"""
    out, payload = [], f[hlen:]
    seed = struct.unpack("!H", f[l4 + 16:l4 + 18])[0]
    ident = struct.unpack("!H", f[l3 + 4:l3 + 6])[0]
    seq = struct.unpack("!I", f[l4 + 4:l4 + 8])[0]
    flags = f[l4 + 13]
    offs = list(range(0, len(payload), mss)) or [0]
    for i, off in enumerate(offs):
        n = min(mss, len(payload) - off)
        last = off + n >= len(payload)
        h = bytearray(f[:hlen])
        tot = hlen + n
        if v6:
            h[l3 + 4:l3 + 6] = struct.pack("!H", tot - l3 - 40)
        else:
            h[l3 + 2:l3 + 4] = struct.pack("!H", tot - l3)
            h[l3 + 4:l3 + 6] = struct.pack("!H", (ident + i) & 0xFFFF)
            h[l3 + 10:l3 + 12] = b"\0\0"
            h[l3 + 10:l3 + 12] = struct.pack(
                "!H", ~sum16(bytes(h[l3:l3 + 20])) & 0xFFFF)
        h[l4 + 4:l4 + 8] = struct.pack("!I", (seq + off) & 0xFFFFFFFF)
        h[l4 + 13] = flags & ~((0 if last else 0x09) | (0x80 if i else 0))
        h[l4 + 16:l4 + 18] = b"\0\0"
        pl = payload[off:off + n]
        c = sum16(struct.pack("!HH", seed, tot - l4) + bytes(h[l4:]) + pl)
        h[l4 + 16:l4 + 18] = struct.pack("!H", ~c & 0xFFFF)
        out.append(bytes(h) + pl)
    return out


def model_csum(f, start, field):
    """the frame a device summing from start and storing at field sends"""
    c = ~sum16(f[start:]) & 0xFFFF or 0xFFFF
    return f[:field] + struct.pack("!H", c) + f[field + 2:]


def off_post(q, idx, data, hlen, om, msscof, split=None, ti=0, tci=0):
    """post @data as one packet from descriptor @idx in two buffers (split
    at @split, default hlen) outside the data ring, ring TXPROD, wait for
    the completion; returns the next index"""
    split = split if split is not None else hlen
    parts = [data[:split], data[split:]] if 0 < split < len(data) else [data]
    addr = TXBUF + (idx % NR) * 0x10000
    for k, part in enumerate(parts):
        i = (idx + k) % NR
        q.write(addr, part)
        dw2 = len(part) | (0 if (idx + k) // NR % 2 else 1 << 14)
        dw3 = 0
        if k == 0:
            dw2 |= msscof << 18
            dw3 |= hlen | om << 10 | ti << 15 | tci << 16
        if k == len(parts) - 1:
            dw3 |= 1 << 12 | 1 << 13
        q.write(TXR + 16 * i, le64(addr) + le32(dw2) + le32(dw3))
        addr += len(part)
    idx += len(parts)
    q.wr(BAR0 + 0x600, idx % NR)
    wait_for(lambda: q.qom("stat-tx-doorbells") and
             tx_comp(q, 0)[0])
    return idx


OFF_KINDS = ("tso-hlen", "tso-seed", "csum-offset", "csum-seed", "tx-desc")


def off_counts(q):
    return [q.qom(f"stat-violation-{k}") for k in OFF_KINDS]


def case_tx_offload(qemu, prop):
    """TX offloads from the descriptor, tx-offload-from-desc={rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,strict=on,tx-offload-from-desc={prop}",
              (qport, sock.getsockname()[1])).setup()
    on = prop == "on"
    what = f"tx-offload-from-desc={prop}"
    check(f"{what}: ACTIVATE", bring_up(q, 3), 0)
    idx = [0]
    base = [0] * 5

    def send(name, data, hlen, om, msscof, kinds, want, ti=0, tci=0,
             split=None):
        """post, then: the violations by kind it caused, the frames"""
        idx[0] = off_post(q, idx[0], data, hlen, om, msscof, split, ti, tci)
        got = wire(sock, max(len(want), 1), 1.0 if want else 0.3) + \
            wire(sock, 8, 0.1)
        c = off_counts(q)
        diff = [a - b for a, b in zip(c, base)]
        base[:] = c
        wk = [kinds.count(k) for k in OFF_KINDS] if on else [0] * 5
        check(f"{what}: {name}: violations by kind {OFF_KINDS}", diff, wk)
        return got
    ts_opt = b"\x01\x01\x08\x0a" + bytes(range(8))
    pay = bytes((i * 11 + 5) & 0xFF for i in range(1300))
    f, l3, l4, h = tcp_frame(False, pay, tcsum="seed0", flags=0x19)
    want = model_tso(f, l3, l4, h, 500, False)
    got = send("TSO IPv4, hlen right, seeded, MSS 500, 1300 bytes", f, h, 3,
               500, [], want)
    if on:
        check(f"{what}: TSO IPv4: 3 segments byte-exact (lengths, ids, IP and"
              " TCP checksums, sequence numbers, FIN/PSH on the last)",
              got, want)
    check(f"{what}: TSO IPv4: every segment's TCP checksum right",
          (len(got), all(l4_ok(g, l3, False, 6) for g in got)), (3, True))
    pay6 = bytes((i * 3 + 1) & 0xFF for i in range(2501))
    f6, l3, l4, h6 = tcp_frame(True, pay6, tcsum="seed0", opts=ts_opt)
    want = model_tso(f6, l3, l4, h6, 1000, True)
    got = send("TSO IPv6 with 12 bytes of TCP options, MSS 1000", f6, h6, 3,
               1000, [], want)
    if on:
        check(f"{what}: TSO IPv6: 3 segments byte-exact", got, want)
    check(f"{what}: TSO IPv6: every segment's TCP checksum right",
          (len(got), all(l4_ok(g, l3, True, 6) for g in got)), (3, True))
    # VLAN insertion with TSO
    want = [g[:12] + struct.pack("!HH", 0x8100, 0x2005) + g[12:]
            for g in model_tso(f, 14, 34, h, 500, False)]
    got = send("TSO with a VLAN tag inserted (ti, tci 0x2005)", f, h, 3, 500,
               [], want, ti=1, tci=0x2005)
    check(f"{what}: TSO + ti: the tag in every segment",
          [g[12:16] for g in got], [want[0][12:16]] * 3)
    # wrong hlen: what the fields say goes on the wire
    want = model_tso(f6, 14, 54, h6 + 4, 1000, True)
    got = send("TSO hlen 4 bytes too long", f6, h6 + 4, 3, 1000,
               ["tso-hlen"], want)
    right = model_tso(f6, 14, 54, h6, 1000, True)
    if on:
        check(f"{what}: hlen too long: segments cut at hlen (corrupt: 4"
              " payload bytes repeated as header)", (got == want,
                                                     got != right),
              (True, True))
    else:
        check(f"{what}: hlen too long: QEMU re-parses, segments right",
              (len(got), all(l4_ok(g, 14, True, 6) for g in got)), (3, True))
    want = model_tso(f6, 14, 54, h6 - 12, 1000, True)
    got = send("TSO hlen without the 12 bytes of TCP options", f6, h6 - 12,
               3, 1000, ["tso-hlen"], want)
    if on:
        check(f"{what}: hlen too short: segments cut at hlen", got, want)
    fs, l3, l4, h = tcp_frame(False, pay, tcsum="seed")
    want = model_tso(fs, l3, l4, h, 500, False)
    got = send("TSO seeded with the length included", fs, h, 3, 500,
               ["tso-seed"], want)
    if on:
        check(f"{what}: wrong seed: segments sent, their TCP checksums wrong",
              (got == want, [l4_ok(g, l3, False, 6) for g in got]),
              (True, [False] * 3))
    fu, l3, l4, h = tcp_frame(False, pay, tcsum="seed0", proto=17)
    got = send("TSO of a UDP frame", fu, h, 3, 500, ["tx-desc"], [])
    if on:
        check(f"{what}: TSO of UDP: nothing sent", got, [])
    # checksum offload (mode 2): hlen = start, msscof = the field
    pay = bytes((i * 7 + 2) & 0xFF for i in range(333))
    fc, l3, l4, h = tcp_frame(False, pay, tcsum="seed")
    ok = tcp_frame(False, pay)[0]
    got = send("checksum IPv4 TCP, right start and field", fc, l4, 2,
               l4 + 16, [], [ok])
    check(f"{what}: checksum IPv4 TCP: the frame with its checksum", got,
          [ok])
    fc6, l3, l4u, _ = tcp_frame(True, pay, tcsum="seed", proto=17)
    ok6 = tcp_frame(True, pay, proto=17)[0]
    got = send("checksum IPv6 UDP", fc6, l4u, 2, l4u + 6, [], [ok6])
    check(f"{what}: checksum IPv6 UDP: the frame with its checksum", got,
          [ok6])
    want = model_csum(fc, l4, l4 + 18)
    got = send("checksum stored at the urgent pointer (msscof + 2)", fc, l4,
               2, l4 + 18, ["csum-offset"], [want])
    if on:
        check(f"{what}: wrong field: the sum stored where msscof says",
              got, [want])
    want = model_csum(fc, l3, l4 + 16)
    got = send("checksum start at the IP header", fc, l3, 2, l4 + 16,
               ["csum-offset"], [want])
    if on:
        check(f"{what}: wrong start: the sum from hlen stored", got, [want])
    got = send("checksum field past the packet", fc, l4, 2, len(fc),
               ["csum-offset"], [])
    if on:
        check(f"{what}: field past the packet: nothing sent", got, [])
    fz, l3, l4, _ = tcp_frame(False, pay, tcsum="zero")
    want = model_csum(fz, l4, l4 + 16)
    got = send("checksum, the field not seeded (0)", fz, l4, 2, l4 + 16,
               ["csum-seed"], [want])
    if on:
        check(f"{what}: not seeded: sent, TCP checksum wrong on the wire",
              (got == [want], l4_ok(want, l3, False, 6)), (True, False))
    tf, _ = tun_frame(4789, False, False, pay, ucsum="zero", tcsum="seed")
    tok, hl = tun_frame(4789, False, False, pay, ucsum="zero")
    got = send("checksum of a VXLAN frame's inner TCP (mode 2, no ext1)",
               tf, hl - 20, 2, hl - 4, [], [tok])
    if on:
        check(f"{what}: inner TCP checksum of a VXLAN frame", got, [tok])
    else:
        check(f"{what}: a VXLAN frame: QEMU's re-parse does not fill the"
              " inner TCP checksum msscof names", got != [tok], True)
    check(f"{what}: counters (stat-tx-tso, -segments, stat-tx-csum, "
          "stat-violations)", [q.qom(p) for p in (
              "stat-tx-tso", "stat-tx-tso-segments", "stat-tx-csum",
              "stat-violations")],
          [6, 18, 6, 8] if on else [0, 0, 0, 0])
    check(f"{what}: QEMU alive", q.alive(), True)
    check(f"{what}: reported on stderr by kind", strict_kinds(q.close()),
          sorted(OFF_KINDS) if on else [])
    sock.close()


def case_tunnel_seed(qemu, rev):
    """tunnel seeds at rev {rev}"""
    ext1 = rev >= 7
    q, sock, _ = tun_bring_up(qemu, ",dcr0=0xfc" if ext1 else "", rev,
                              0xfc if ext1 else None)
    payload = bytes((i * 9 + 4) & 0xFF for i in range(2000))
    f, hlen = tun_frame(4789, False, False, payload, ucsum="zero",
                        tcsum="seed", icsum=False)
    tun_post(q, 0, f, hlen, 3 if ext1 else 1, 1000, 0, int(ext1))
    got = wire(sock, 2) + wire(sock, 1, 0.2)
    check(f"tunnel rev {rev}: TSO with the inner seed including the length:"
          " sent (2 segments), tso-seed 1",
          (len(got), q.qom("stat-violation-tso-seed")), (2, 1))
    f, hlen = tun_frame(6081, False, True, payload[:300], ucsum="zero",
                        tcsum="seed0")
    tun_post(q, 2, f, hlen, 2 if ext1 else 1, hlen - 4 if ext1 else 0, 0,
             int(ext1))
    got = wire(sock, 1) + wire(sock, 1, 0.2)
    check(f"tunnel rev {rev}: checksum request with the inner field not "
          "seeded: sent, csum-seed 1",
          (len(got), q.qom("stat-violation-csum-seed")), (1, 1))
    check(f"tunnel rev {rev}: the seeds counted only as themselves",
          (q.qom("stat-violations"), strict_kinds(q.close())),
          (2, ["csum-seed", "tso-seed"]))
    sock.close()


def rx_flags(q, i):
    """(gen, cnc, v4, v6, tcp, udp, ipc, tuc, frg) of RX completion i"""
    d0, _, _, d3 = struct.unpack("<IIII", q.read(RXC + 16 * i, 16))
    return (d3 >> 31, d0 >> 30 & 1, d3 >> 21 & 1, d3 >> 20 & 1,
            d3 >> 18 & 1, d3 >> 17 & 1, d3 >> 19 & 1, d3 >> 16 & 1,
            d3 >> 22 & 1)


def case_rx_csum(qemu, prop):
    """RX checksum results, rx-csum-verify={rev}"""
    sock, qport = udp_pair()
    q = QTest(qemu, f",max-revision=3,strict=on,rx-csum-verify={prop}",
              (qport, sock.getsockname()[1])).setup()
    on = prop == "on"
    what = f"rx-csum-verify={prop}"
    check(f"{what}: ACTIVATE", bring_up(q, 3, upt=F_RXCSUM), 0)
    k = [0]

    def rx(data):
        sock.sendto(data, ("127.0.0.1", qport))
        c = wait_for(lambda: rx_flags(q, k[0])[0] and rx_flags(q, k[0]))
        k[0] += 1
        return c
    cnc = (1, 1, 0, 0, 0, 0, 0, 0, 0)
    pay = bytes((i * 5 + 3) & 0xFF for i in range(40))
    big = bytes((i * 5 + 3) & 0xFF for i in range(400))
    ip4 = bytearray(tcp_frame(False, pay)[0])
    ip4[14 + 10] ^= 0x10
    frag = bytearray(tcp_frame(False, big, proto=17)[0])
    frag[14 + 6:14 + 8] = struct.pack("!H", 0x2000)    # MF, offset 0
    frag[14 + 10:14 + 12] = b"\0\0"
    frag[14 + 10:14 + 12] = struct.pack("!H", ~sum16(bytes(frag[14:34])) &
                                        0xFFFF)
    icmp = OUT_MACS + b"\x08\x00" + ip_hdr(False, A4, 1, 20, 9) + bytes(20)
    trunc = tcp_frame(False, big, tot=600)[0]
    vlan = tcp_frame(False, pay, vlan=5)[0]
    cases = [
        ("IPv4 TCP, data ring", tcp_frame(False, pay)[0],
         (1, 0, 1, 0, 1, 0, 1, 1, 0), 0),
        ("IPv4 TCP, ring 0", tcp_frame(False, big)[0],
         (1, 0, 1, 0, 1, 0, 1, 1, 0), 0),
        ("IPv4 TCP checksum wrong", tcp_frame(False, big, tcsum="bad")[0],
         (1, 0, 1, 0, 1, 0, 1, 0, 0), 1),
        ("IPv4 header checksum wrong", bytes(ip4),
         (1, 0, 1, 0, 1, 0, 0, 1, 0), 1),
        ("IPv6 UDP", tcp_frame(True, big, proto=17)[0],
         (1, 0, 0, 1, 0, 1, 0, 1, 0), 0),
        ("IPv6 UDP checksum wrong",
         tcp_frame(True, pay, proto=17, tcsum="bad")[0],
         (1, 0, 0, 1, 0, 1, 0, 0, 0), 1),
        ("IPv6 TCP with options", tcp_frame(True, big, opts=bytes(8))[0],
         (1, 0, 0, 1, 1, 0, 0, 1, 0), 0),
        ("IPv4 UDP without checksum (0)",
         tcp_frame(False, pay, proto=17, tcsum="zero")[0],
         (1, 0, 1, 0, 0, 1, 1, 0, 0), 0),
        ("IPv4 fragment", bytes(frag), (1, 0, 1, 0, 0, 0, 1, 0, 1), 0),
        ("IPv4 ICMP", icmp, (1, 0, 1, 0, 0, 0, 1, 0, 0), 0),
        ("not IP", frame(300), cnc, 0),
        ("IPv4 length past the frame", trunc, cnc, 0),
        ("IPv4 TCP with an 802.1Q tag", vlan, (1, 0, 1, 0, 1, 0, 1, 1, 0),
         0)]
    for name, data, want, _ in cases:
        check(f"{what}: {name}: " + ("the results verified" if on else
                                     "QEMU's result (cnc)"),
              rx(data), want if on else cnc)
    check(f"{what}: stat-rx-csum-bad, no violation",
          (q.qom("stat-rx-csum-bad"), q.qom("stat-violations")),
          (sum(c[3] for c in cases) if on else 0, 0))
    check(f"{what}: nothing on stderr", strict_lines(q.close()), [])
    sock.close()


GET_COALESCE, SET_RSS_FIELDS, GET_RSS_FIELDS = 0xF00D000B, 0xCAFE0010, \
    0xF00D000C


def case_reset_config(qemu):
    """RESET_DEV forgets the driver's configuration"""
    sock, qport = udp_pair()
    q = QTest(qemu, ",max-revision=4,strict=on",
              (qport, sock.getsockname()[1])).setup()
    check("reset: ACTIVATE at rev 4", bring_up(q, 4), 0)

    def coal():
        q.write(COALBUF, bytes(16))
        q.write(SH + 704, le32(1) + le32(16) + le64(COALBUF))
        q.command(GET_COALESCE)
        return struct.unpack("<IIII", q.read(COALBUF, 16))
    check("reset: SET_COALESCE mode 2 (2, 4, 8)",
          (set_coalesce(q, 2, 2, 4, 8), coal()), (0, (2, 2, 4, 8)))
    q.write(SH + 704, le32(0x5))                 # TCP4 | UDP4
    q.command(SET_RSS_FIELDS)
    check("reset: SET_RSS_FIELDS TCP4|UDP4", q.command(GET_RSS_FIELDS), 5)
    q.command(QUIESCE_DEV)
    check("reset: QUIESCE keeps them", (coal(), q.command(GET_RSS_FIELDS)),
          ((2, 2, 4, 8), 5))
    q.command(0xCAFE0002)
    check("reset: RESET_DEV, ACTIVATE", bring_up(q, 4), 0)
    check("reset: after RESET_DEV the coalescing scheme is adaptive again"
          " and the RSS fields the default (TCP4|TCP6)",
          (coal(), q.command(GET_RSS_FIELDS)), ((1, 0, 0, 0), 0x3))
    check("reset: QEMU alive, no violation",
          (q.alive(), q.qom("stat-violations")), (True, 0))
    q.close()
    sock.close()


def case_quiesce_tx(qemu, mode):
    """quiesce-tx={rev}"""
    sock, qport = udp_pair()
    props = f",max-revision=3,strict=on,tx-delay-us=1000"
    if mode:
        props += f",quiesce-tx={mode}"
    q = QTest(qemu, props, (qport, sock.getsockname()[1])).setup()
    name = f"quiesce-tx={mode or 'default'}"
    check(f"{name}: ACTIVATE", bring_up(q, 3), 0)
    f = frame(60)
    q.write(TXD, f)
    q.write(TXR, le64(TXD) + le32(60 | 1 << 14) + le32(1 << 12 | 1 << 13))
    q.wr(BAR0 + 0x600, 1)
    q.command(QUIESCE_DEV)
    now = (tx_comp(q, 0), wire(sock, 1, 0.3), q.qom("stat-tx-quiesce"))
    done = ((1, 0), [f], 1)
    none = ((0, 0), [], 0)
    check(f"{name}: a TXPROD not yet acted on, then QUIESCE: "
          + ("completed and sent before QUIESCE returns" if mode == "complete"
             else "nothing yet"), now,
          done if mode == "complete" else none)
    q.clock_step(999 * 1000)
    if mode == "late":
        check(f"{name}: 999 us later still nothing",
              (tx_comp(q, 0), wire(sock, 1, 0.2)), ((0, 0), []))
    q.clock_step(2 * 1000)
    later = (tx_comp(q, 0), wire(sock, 1, 0.3), q.qom("stat-tx-quiesce"))
    check(f"{name}: after quiesce-late-us (1000 us): "
          + ("completed and sent" if mode == "late" else
             "as before" if mode == "complete" else "dropped for good"),
          later, done if mode == "late" else
          ((1, 0), [], 1) if mode == "complete" else none)
    if mode == "late":
        # a second one: RESET_DEV before the timer completes it first
        check(f"{name}: RESET_DEV, ACTIVATE", (q.command(0xCAFE0002),
                                               bring_up(q, 3)), (0, 0))
        q.write(TXD, f)
        q.write(TXR, le64(TXD) + le32(60 | 1 << 14) +
                le32(1 << 12 | 1 << 13))
        q.wr(BAR0 + 0x600, 1)
        q.command(QUIESCE_DEV)
        q.command(0xCAFE0002)
        check(f"{name}: QUIESCE then RESET_DEV at once: completed at the"
              " RESET_DEV", (tx_comp(q, 0), wire(sock, 1, 0.3),
                             q.qom("stat-tx-quiesce")), ((1, 0), [f], 2))
    check(f"{name}: QEMU alive, no violation",
          (q.alive(), q.qom("stat-violations")), (True, 0))
    q.close()
    sock.close()


# patch 0028: tx-desc-summary
def sum_post(q, k, p, parts, om=0, hlen=0, msscof=0, ti=0, tci=0, oco=0,
             ext1=0, dr=False):
    """post packet p (counted from 0 since ACTIVATE) at absolute TX
    position k: buffers @parts, each in its descriptor's TX data ring entry
    with @dr, else outside the data ring; the offload fields in the SOP, cq
    with eop in the last; ring TXPROD and wait for its completion (entry p
    of the completion ring); returns the next position"""
    for j, part in enumerate(parts):
        i = (k + j) % NR
        addr = TXD + DSZ * i if dr else TXBUF + 0x1000 * i
        q.write(addr, part)
        dw2 = len(part) | lap_gen(k + j) << 14
        dw3 = 0
        if j == 0:
            dw2 |= oco << 15 | ext1 << 17 | msscof << 18
            dw3 |= hlen | om << 10 | ti << 15 | tci << 16
        if j == len(parts) - 1:
            dw3 |= 1 << 12 | 1 << 13
        q.write(TXR + 16 * i, le64(addr) + le32(dw2) + le32(dw3))
    q.wr(BAR0 + 0x600, (k + len(parts)) % NR)
    wait_for(lambda: tx_comp(q, p % NR)[0] == lap_gen(p))
    return k + len(parts)


def sum_line(count, n, om=0, hlen=0, msscof=0, ti=0, tci=0, oco=0, ext1=0,
             dr=0, cq=1, ndesc=1):
    """the tx-desc-summary line the script expects for @count packets of
    @n bytes with these fields"""
    lo, hi = 1, 64
    while n > hi and hi < 65536:
        lo, hi = hi + 1, hi * 2
    cls = f"{lo}-{hi}" if n <= hi else "65537+"
    return (f"om={om} hlen={hlen} msscof={msscof} ti={ti} "
            f"tci={hex(tci) if tci else 0} oco={oco} ext1={ext1} dr={dr} "
            f"cq={cq} ndesc={ndesc} len={cls}: {count}\n")


def case_tx_desc_summary(qemu):
    """tx-desc-summary"""
    q, sock, granted = tun_bring_up(qemu, ",dcr0=0xfc", 7, 0xfc)
    check("tx-desc-summary: rev 7, DCR0 tunnel bits granted", granted, 0xfc)
    check("tx-desc-summary: empty before any packet",
          q.qom("tx-desc-summary"), "")
    pos = [0, 0]                # TX ring position, packets since ACTIVATE

    def post(parts, **fields):
        pos[0] = sum_post(q, pos[0], pos[1], parts, **fields)
        pos[1] += 1
    f60 = frame(60)
    post([f60], dr=True)
    post([f60], dr=True)
    pay = bytes((i * 11 + 5) & 0xFF for i in range(1300))
    ft, _, _, h = tcp_frame(False, pay, tcsum="seed0", flags=0x19)
    post([ft[:h], ft[h:]], om=3, hlen=h, msscof=500, ti=1, tci=0x2005)
    gpay = bytes((i * 13 + 1) & 0xFF for i in range(333))
    fg, gh = tun_frame(6081, False, True, gpay, ucsum="zero", tcsum="seed")
    post([fg[:gh], fg[gh:]], om=2, hlen=gh, msscof=gh - 20 + 16, oco=1,
         ext1=1)
    wire(sock, 16, 0.3)
    want = (sum_line(2, 60, dr=1) +
            sum_line(1, len(fg), om=2, hlen=gh, msscof=gh - 4, oco=1, ext1=1,
                     ndesc=2) +
            sum_line(1, len(ft), om=3, hlen=h, msscof=500, ti=1, tci=0x2005,
                     ndesc=2))
    got = q.qom("tx-desc-summary")
    check("tx-desc-summary: two 60-byte data ring frames, a TSO with a VLAN"
          " tag, a rev 7 Geneve checksum request with oco: three tuples"
          " (cq from the EOP), counts 2, 1, 1, sorted by field", got, want)
    check("tx-desc-summary: the packets were good ones (sent, no violation)",
          (q.qom("stat-tx-queue0"), q.qom("stat-violations")), (4, 0))
    check("tx-desc-summary: HMP qom-get prints it as one JSON string (lines"
          " joined by \\n)", q.hmp("qom-get nic1 tx-desc-summary"),
          json.dumps(want) + "\n")
    q.command(0xCAFE0002)
    check("tx-desc-summary: RESET_DEV, ACTIVATE", bring_up(q, 7), 0)
    check("tx-desc-summary: RESET_DEV leaves it alone (the test's record,"
          " not device state)", q.qom("tx-desc-summary"), want)
    check("tx-desc-summary-reset is write-only",
          "not readable" in str(q.qom("tx-desc-summary-reset")), True)
    check("tx-desc-summary: HMP qom-set nic1 tx-desc-summary-reset 1 clears"
          " it", (q.hmp("qom-set nic1 tx-desc-summary-reset 1"),
                  q.qom("tx-desc-summary")), ("", ""))
    # bounded: 70 distinct tuples (hlen 0..69 with no offload) keep 64
    pos[:] = [0, 0]
    for hl in range(70):
        post([f60], hlen=hl, dr=True)
    post([f60], hlen=0, dr=True)                # a tuple it holds
    wire(sock, 80, 0.3)
    want = "".join(sum_line(2 if hl == 0 else 1, 60, hlen=hl, dr=1)
                   for hl in range(64)) + "other: 6\n"
    check("tx-desc-summary: 71 packets of 70 tuples: 64 tuples kept (a"
          " packet of a kept tuple still counted), 6 in other",
          q.qom("tx-desc-summary"), want)
    q.qom("tx-desc-summary-reset", "x")
    post([f60], hlen=69, dr=True)
    check("tx-desc-summary: cleared by a QMP qom-set of any string, then"
          " the next packet alone", q.qom("tx-desc-summary"),
          sum_line(1, 60, hlen=69, dr=1))
    check("tx-desc-summary: QEMU alive, no violation",
          (q.alive(), q.qom("stat-violations"), q.qom("stat-tx-queue0")),
          (True, 0, 76))
    check("tx-desc-summary: no strict-mode violation",
          strict_lines(q.close()), [])
    sock.close()


UPDATE_PMCFG, PMBUF = 0xCAFE0008, 0x150000


def case_pmcfg(qemu):
    """UPDATE_PMCFG: the last good wake-up configuration recorded, a bad one
    a pm-conf violation that changes no record, RESET_DEV keeps it"""
    q = QTest(qemu, ",max-revision=9,strict=on").setup()
    check("UPDATE_PMCFG: pm-wake-events 0xffff before any",
          q.qom("pm-wake-events"), 0xFFFF)
    bring_up(q, 9)

    def pm(events, nf, filters=(), ver=1, ln=920, pa=PMBUF):
        q.cmd(f"memset 0x{PMBUF:x} 920 0")
        q.write(PMBUF, le16(events) + bytes([nf]))
        for k, (msz, psz) in enumerate(filters):
            q.write(PMBUF + 8 + 152 * k, bytes([msz, psz]))
        q.write(SH + 664, le32(ver) + le32(ln) + le64(pa))
        q.command(UPDATE_PMCFG)
        return [q.qom(k) for k in ("stat-pmcfg-updates", "stat-pmcfg-good",
                                   "pm-wake-events", "pm-filters",
                                   "stat-violation-pm-conf")]

    check("UPDATE_PMCFG magic packet: recorded",
          pm(1, 0), [1, 1, 1, 0, 0])
    check("UPDATE_PMCFG one pattern filter (mask 6, pattern 42): recorded",
          pm(2, 1, [(6, 42)]), [2, 2, 2, 1, 0])
    check("UPDATE_PMCFG nothing to wake on: recorded",
          pm(0, 0), [3, 3, 0, 0, 0])
    check("UPDATE_PMCFG confVer 2: pm-conf, record unchanged",
          pm(1, 0, ver=2), [4, 3, 0, 0, 1])
    check("UPDATE_PMCFG confLen 8: pm-conf, record unchanged",
          pm(1, 0, ln=8), [5, 3, 0, 0, 2])
    check("UPDATE_PMCFG wakeUpEvents bit 2: pm-conf",
          pm(4, 0), [6, 3, 0, 0, 3])
    check("UPDATE_PMCFG 7 filters: pm-conf",
          pm(2, 7, [(1, 8)] * 6), [7, 3, 0, 0, 4])
    check("UPDATE_PMCFG filter maskSize 17: pm-conf",
          pm(2, 2, [(6, 42), (17, 42)]), [8, 3, 0, 0, 5])
    check("UPDATE_PMCFG buffer outside guest memory: pm-conf",
          pm(1, 0, pa=0xFFFF00000000), [9, 3, 0, 0, 6])
    pm(1, 0)
    q.command(0xCAFE0002)                       # RESET_DEV
    check("UPDATE_PMCFG: RESET_DEV keeps the record (pm-wake-events 1)",
          q.qom("pm-wake-events"), 1)
    q.close()


def main():
    qemu = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
        [os.path.join(HERE, "build.sh")], check=True, capture_output=True,
        text=True).stdout.strip()
    cases = [(case_default, ()), (case_link_speed, ()), (case_rev6, ()),
             (case_rev9, ()),
             (case_rx, (1,)), (case_rx, (3,)), (case_rx, (6, "off")),
             (case_tx, (0,)), (case_tx, (1000,)),
             (case_rss, ("on",)), (case_rss, ("off",)), (case_strict, ()),
             (case_moderation, (0,)), (case_moderation, (1000,)),
             (case_msix, ("on",)), (case_msix, ("off",)),
             (case_queue_limits, ()), (case_queues32, ()),
             (case_tx_delay_step, ()),
             (case_large_bar, ("0x10000",)), (case_large_bar, ("0",))]
    cases += [(case_fault, (k,)) for k in FAULT_BITS]
    cases += [(case_coal_static, ()), (case_coal_adaptive, ("on",)),
              (case_coal_adaptive, ("off",))]
    cases += [(case_fault_new, (k,)) for k in
              ("eop-break", "link-flap", "activate-refused", "queue-error-tx")]
    cases += [(case_tx_bad_eop, ()), (case_tx_bad_eop_random, (0x10,)),
              (case_tx_bad_eop_random, (0x1010,))]
    cases += [(case_seq_ok, (0,)), (case_seq_ok, (1000,))]
    cases += [(case_tx_comp_batch, ("off",)), (case_tx_comp_batch, ("on",))]
    cases += [(case_seq_bad, (k,)) for k in SEQ_KINDS]
    cases += [(case_tunnel_tso, (4, 4789, False, False, 1, 500, 1300)),
              (case_tunnel_tso, (4, 6081, True, True, 1, 600, 1500)),
              (case_tunnel_tso, (6, 8472, False, True, 0, 1000, 2501)),
              (case_tunnel_tso, (7, 6081, True, False, 1, 1400, 9000)),
              (case_tunnel_csum, (4,)), (case_tunnel_csum, (7,)),
              (case_tunnel_bad, (4,)), (case_tunnel_bad, (5,)),
              (case_tunnel_bad, (7,))]
    cases += [(case_rx_inner, (9, F_RXCSUM | F_RXINNEROFLD)),
              (case_rx_inner, (4, F_RXINNEROFLD)),
              (case_rx_inner, (9, F_RXCSUM)),
              (case_rx_inner, (3, F_RXCSUM | F_RXINNEROFLD)),
              (case_rx_inner, (9, F_RXCSUM | F_RXINNEROFLD,
                               ",rx-inner-results=off")),
              (case_rx_inner, (9, F_RXCSUM | F_RXINNEROFLD,
                               ",rx-inner-results=off,rx-csum-verify=off"))]
    cases += [(case_ooo, (OOORX_COMP, OOORX_COMP, "on")),
              (case_ooo, (0, OOORX_COMP, "on")),
              (case_ooo, (OOORX_COMP, OOORX_COMP, "off")),
              (case_ooo_unaware, ())]
    cases += [(case_lro_force, ())]
    cases += [(case_short_sop, ()), (case_zero_data_ring, (False,)),
              (case_zero_data_ring, (True,)), (case_split, ()),
              (case_split_cancel, (QUIESCE_DEV,)),
              (case_split_cancel, (QUIESCE_DEV, False)),
              (case_split_cancel, (0xCAFE0002,)),
              (case_activate_resume, ()), (case_intr_block, (3,)),
              (case_intr_block, (6,)), (case_tx_oversize, ()),
              (case_rx_buf_size, (7,)), (case_rx_buf_size, (6,))]
    cases += [(case_tx_offload, ("on",)), (case_tx_offload, ("off",)),
              (case_tunnel_seed, (4,)), (case_tunnel_seed, (7,)),
              (case_rx_csum, ("on",)), (case_rx_csum, ("off",)),
              (case_reset_config, ()), (case_quiesce_tx, (None,)),
              (case_quiesce_tx, ("drop",)), (case_quiesce_tx, ("complete",)),
              (case_quiesce_tx, ("late",))]
    cases += [(case_tx_desc_summary, ()), (case_pmcfg, ())]
    for case, args in cases:
        try:
            case(qemu, *args)
        except (RuntimeError, OSError, ValueError, IndexError,
                TypeError) as e:
            doc = case.__doc__.format(rev=args[0] if args else "")
            check(f"{doc}: QEMU answered", str(e).strip(), "")
        for q in [q for q in LIVE if q.alive()]:
            q.close()
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
