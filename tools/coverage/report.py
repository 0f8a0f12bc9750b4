#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py - which lines of vmx_*.c the guests ran (make coverage).

Usage:
  tools/coverage/report.py [--ko VMX.KO] [--annotate] DIR

DIR holds, per guest (one run-tests.sh group), what a coverage run left
there (tools/vm.sh with VMX_COVERAGE=DIR):
  TAG.tb     the vmxcount plugin's cov= output: "tb VADDR SIZE HEXBYTES",
             one line per distinct translation block executed in module
             space (tools/count/vmxcount.c)
  TAG.loads  the guest's record of every vmx load (lib/driver.sh dut_load):
             "load N" then "SECTION ADDRESS" lines from
             /sys/module/vmx/sections/ (.text, .init.text, .exit.text)

Writes DIR/coverage.txt (per file, per function, the functions never
entered), DIR/coverage.json and, with --annotate, DIR/annotated/<file>
(each source line marked: "    ok" ran, " #####" never ran, blank: no code
in vmx.ko). Prints the per-file table.

How a block is attributed: for every load of the same guest and every text
section, an address inside the section at that load is checked against
vmx.ko's own bytes at that offset, byte for byte, except the bytes the
kernel rewrites at load time (relocated fields and the opcode before a
call/jmp rel32: __fentry__ nops, return thunks, retpolines; the sites
listed in __jump_table, .smp_locks, .static_call_sites, .call_sites,
.return_sites, .ibt_endbr_seal, __mcount_loc, .altinstructions). Only a
block that matches counts: code of another module loaded later at a
freed vmx address, or a block of vmx that was patched in an unexpected
way, is left out (and counted in "rejected"). Every instruction of a
matching block counts as executed (a translation block is straight-line
code: it ends at the first branch).

Which vmx.ko: each guest's own build, build/<kver>/vmx.ko for the kernel
in DIR/TAG.kver (6.12, 6.1, the debug 6.12; --ko: one file for all). The
figures are the union over the builds: a line is executable if a build
has code for it, ran if a guest ran it in any build, so code for another
kernel (vmx_compat.h's 6.1 branches) counts on that kernel.

What a line is: the line table of vmx.ko's text sections (objdump -dl
--inlines, so DWARF's view). An instruction belongs to the innermost
frame's line and, when it was inlined, to each call site in the project's
files too (a call of vmx_wr_vd() on vmx_drv.c:118 is executable, and ran,
when its inlined body did). Frames in kernel headers are not counted.
Function padding (__pfx_*) and alignment nops are not code. Lines no
build the guests ran has code for (a kernel's compat branch when no guest
ran that kernel, code the compiler removed) are neither executable nor
missed. A function is a source
function, inlined or not (DWARF's name for the frame), keyed by file and
name; "never entered": none of its lines ran.
"""
import argparse
import glob
import json
import os
import re
import struct
import subprocess
import sys

# sections whose relocations point at code the kernel patches at load
PATCH_SITE_SECTIONS = ('__jump_table', '.smp_locks', '.static_call_sites',
                       '.call_sites', '.return_sites', '.retpoline_sites',
                       '.ibt_endbr_seal', '__mcount_loc', '.altinstructions',
                       '__patchable_function_entries')
RELOC_SIZE = {1: 8, 2: 4, 4: 4, 9: 4, 10: 4, 11: 4, 24: 8, 41: 4, 42: 4}
NOP_RE = re.compile(r'^(nop|xchg\s+%ax,%ax|cs nop|data16|int3)')


class Elf:
    """The little a relocatable x86-64 object needs: sections, symbols,
    relocations."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b'\x7fELF' or d[4] != 2 or d[5] != 1:
            raise SystemExit(f'{path}: not a little-endian ELF64 file')
        shoff, = struct.unpack_from('<Q', d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
        self.sections = []
        for i in range(shnum):
            (name, typ, flags, addr, off, size, link, info, align,
             entsize) = struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)
            self.sections.append(dict(name=name, type=typ, flags=flags, off=off,
                                      size=size, link=link, info=info,
                                      entsize=entsize, index=i))
        strtab = self.sections[shstrndx]
        for s in self.sections:
            s['name'] = self._str(strtab, s['name'])
        self.by_name = {s['name']: s for s in self.sections}
        self.symbols = []
        symtab = next((s for s in self.sections if s['type'] == 2), None)
        if symtab:
            strs = self.sections[symtab['link']]
            for i in range(symtab['size'] // 24):
                name, info, other, shndx, value, size = struct.unpack_from(
                    '<IBBHQQ', d, symtab['off'] + i * 24)
                self.symbols.append(dict(name=self._str(strs, name), info=info,
                                         shndx=shndx, value=value, size=size))

    def _str(self, sec, off):
        start = sec['off'] + off
        return self.data[start:self.data.index(b'\0', start)].decode()

    def bytes_of(self, name):
        s = self.by_name[name]
        return self.data[s['off']:s['off'] + s['size']]

    def relocs(self, target_index):
        """(section applying, offset, type, symbol, addend) of every RELA
        section (type 4) whose sh_info is target_index."""
        for s in self.sections:
            if s['type'] != 4 or s['info'] != target_index:
                continue
            for i in range(s['size'] // 24):
                off, info, addend = struct.unpack_from('<QQq', self.data, s['off'] + i * 24)
                yield off, info & 0xffffffff, self.symbols[info >> 32], addend

    def all_relocs(self):
        for s in self.sections:
            if s['type'] != 4:
                continue
            applies_to = self.sections[s['info']]['name']
            for i in range(s['size'] // 24):
                off, info, addend = struct.unpack_from('<QQq', self.data, s['off'] + i * 24)
                yield applies_to, off, info & 0xffffffff, self.symbols[info >> 32], addend


def text_sections(elf):
    # SHF_ALLOC | SHF_EXECINSTR, with bytes
    return [s['name'] for s in elf.sections
            if s['flags'] & 0x6 == 0x6 and s['type'] == 1 and s['size']]


def masks(elf, texts):
    """Per text section, a bytearray: 1 where the kernel may rewrite the
    byte at load time."""
    m = {t: bytearray(elf.by_name[t]['size']) for t in texts}

    def mark(t, start, n):
        mm = m[t]
        for i in range(max(start, 0), min(start + n, len(mm))):
            mm[i] = 1

    for t in texts:
        for off, typ, sym, addend in elf.relocs(elf.by_name[t]['index']):
            n = RELOC_SIZE.get(typ, 4)
            # the opcode too: call/jmp rel32 become nops, ret, call *%reg
            mark(t, off - 1 if typ in (2, 4) else off, n + (1 if typ in (2, 4) else 0))
    index_to_text = {elf.by_name[t]['index']: t for t in texts}
    for applies_to, off, typ, sym, addend in elf.all_relocs():
        if applies_to not in PATCH_SITE_SECTIONS:
            continue
        t = index_to_text.get(sym['shndx'])
        if t is None:
            continue
        mark(t, sym['value'] + addend, 5)
    return m


LOC_RE = re.compile(r'^(/\S+):(\d+)(?: \(discriminator \d+\))?$')
INL_RE = re.compile(r'^inlined by (/\S+):(\d+)(?: \(discriminator \d+\))? \((.+)\)$')
SYM_RE = re.compile(r'^([0-9a-f]+) <(.+)>:$')
FUNC_RE = re.compile(r'^(\S+)\(\):$')
INSN_RE = re.compile(r'^\s+([0-9a-f]+):\t(.*)$')


def disassemble(ko, section):
    """[(offset, symbol, text, chain)] where chain is [(file, line, func)],
    innermost first."""
    out = subprocess.run(['objdump', '-d', '-l', '--inlines', '--no-show-raw-insn',
                          '-j', section, ko], check=True, capture_output=True,
                         text=True).stdout
    insns = []
    sym = func = None
    chain = []
    after_insn = False
    for line in out.splitlines():
        mo = INSN_RE.match(line)
        if mo:
            insns.append((int(mo.group(1), 16), sym, mo.group(2), tuple(chain)))
            after_insn = True
            continue
        mo = SYM_RE.match(line)
        if mo:
            sym = mo.group(2)
            continue
        mo = FUNC_RE.match(line)
        if mo:
            func = mo.group(1)
            continue
        mo = LOC_RE.match(line)
        if mo:
            chain = [(mo.group(1), int(mo.group(2)), func)]
            after_insn = False
            continue
        mo = INL_RE.match(line)
        if mo:
            if after_insn:
                chain = chain[:1]
                after_insn = False
            chain.append((mo.group(1), int(mo.group(2)), mo.group(3)))
    return insns


def is_project(path):
    b = os.path.basename(path)
    return b.startswith('vmx') and b.endswith(('.c', '.h')) and not path.startswith('/usr/')


class Module:
    def __init__(self, ko):
        self.ko = ko
        self.elf = Elf(ko)
        self.texts = text_sections(self.elf)
        self.bytes = {t: self.elf.bytes_of(t) for t in self.texts}
        self.mask = masks(self.elf, self.texts)
        self.insns = {}     # section -> sorted [(off, size, frames)]
        self.starts = {}    # section -> {off: index}
        for t in self.texts:
            raw = disassemble(ko, t)
            size = len(self.bytes[t])
            lst = []
            for i, (off, sym, text, chain) in enumerate(raw):
                end = raw[i + 1][0] if i + 1 < len(raw) else size
                code = not (sym or '').startswith('__pfx_') and not NOP_RE.match(text)
                frames = tuple((os.path.basename(f), ln, fn) for f, ln, fn in chain
                               if is_project(f)) if code else ()
                lst.append((off, end - off, frames, sym))
            self.insns[t] = lst
            self.starts[t] = {off: i for i, (off, _, _, _) in enumerate(lst)}

    def match(self, section, off, data):
        """'exact', 'weak' (every byte is one the kernel may rewrite) or
        None."""
        if section not in self.bytes or off not in self.starts[section]:
            return None
        ref, mask = self.bytes[section], self.mask[section]
        if off + len(data) > len(ref):
            return None
        compared = 0
        for i, b in enumerate(data):
            if mask[off + i]:
                continue
            if ref[off + i] != b:
                return None
            compared += 1
        return 'exact' if compared else 'weak'

    def covered(self, section, off, size):
        """indices of the instructions a block [off, off+size) runs"""
        lst, i = self.insns[section], self.starts[section][off]
        while i < len(lst) and lst[i][0] < off + size:
            yield i
            i += 1


def read_loads(path):
    """[{section: base}] per load"""
    loads = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == 'load':
                loads.append({})
            elif len(w) == 2 and loads and w[1].startswith('0x'):
                loads[-1][w[0]] = int(w[1], 16)
    return loads


def read_tbs(path):
    tbs = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 4 and w[0] == 'tb':
                tbs.append((int(w[1], 16), int(w[2]), bytes.fromhex(w[3])))
    return tbs


def attribute(mod, tbs, loads, executed):
    """Marks executed instructions; returns per-guest counts."""
    st = dict(blocks=len(tbs), matched=0, weak=0, rejected=0, outside=0)
    ranges = []
    for ld in loads:
        for sec, base in ld.items():
            if sec in mod.bytes:
                ranges.append((base, base + len(mod.bytes[sec]), sec))
    ranges = sorted(set(ranges))
    weak = []
    bases_ok = set()
    for vaddr, size, data in tbs:
        inside = [(lo, sec) for lo, hi, sec in ranges if lo <= vaddr < hi]
        if not inside:
            st['outside'] += 1
            continue
        verdict = None
        for lo, sec in inside:
            r = mod.match(sec, vaddr - lo, data)
            if r == 'exact':
                verdict = (sec, vaddr - lo, size)
                bases_ok.add((sec, lo))
                break
            if r == 'weak' and verdict is None:
                verdict = ('weak', sec, vaddr - lo, size, lo)
        if verdict is None:
            st['rejected'] += 1
        elif verdict[0] == 'weak':
            weak.append(verdict[1:])
        else:
            st['matched'] += 1
            for i in mod.covered(*verdict):
                executed[verdict[0]].add(i)
    # a block of rewritten bytes only (a lone "ret" that was a return
    # thunk jump) counts where other blocks proved vmx was at that base
    for sec, off, size, lo in weak:
        if (sec, lo) in bases_ok:
            st['weak'] += 1
            for i in mod.covered(sec, off, size):
                executed[sec].add(i)
        else:
            st['rejected'] += 1
    return st


def summarize(mod, executed):
    lines = {}      # (file, line) -> ran
    funcs = {}      # (file, func) -> {line: ran}
    for sec, lst in mod.insns.items():
        for i, (off, size, frames, sym) in enumerate(lst):
            ran = i in executed[sec]
            for f, ln, fn in frames:
                lines[(f, ln)] = lines.get((f, ln), False) or ran
                d = funcs.setdefault((f, fn), {})
                d[ln] = d.get(ln, False) or ran
    return lines, funcs


DEF_RE = re.compile(r'^[A-Za-z_][^;=()]*?\b(\w+)\(', re.M)


def project_functions(src, files):
    """{name: {files defining it}} for the functions the project's files
    define (a definition starts in column 0, kernel style)"""
    names = {}
    for f in files:
        path = os.path.join(src, f)
        if os.path.exists(path):
            with open(path) as fi:
                for n in DEF_RE.findall(fi.read()):
                    names.setdefault(n, set()).add(f)
    return names


def home_functions(funcs, defined):
    """Each function under the file that defines it. The compiler leaves
    some instructions of an inlined helper (vmx.h's vmx_rxq_add) in its
    caller's scope with the helper's line: DWARF then names the caller
    with a line of another file. Such a line is counted in the caller, as
    "file:line" beside its own line numbers, not as a function of its
    own in that file. Functions the project does not define are dropped
    (a kernel header's inline that carries a project call site's line)."""
    out = {}
    for (f, fn), d in funcs.items():
        homes = defined.get(fn)
        if not homes:
            continue
        if f in homes or len(homes) != 1:
            or_into(out.setdefault((f, fn), {}), d)
        else:
            or_into(out.setdefault((next(iter(homes)), fn), {}),
                    {f'{f}:{ln}': ran for ln, ran in d.items()})
    return out


def or_into(into, ran):
    """@into[k] |= @ran[k] for every k of @ran (ran somewhere: ran)"""
    for k, r in ran.items():
        into[k] = into.get(k, False) or r


def pct(a, b):
    return f'{100.0 * a / b:5.1f}%' if b else '    -'


def ko_for(proj, kver):
    """the build of vmx a guest of kernel KVER ran: build/<kver>/vmx.ko
    (make all-kernels, make modules-debug); the DKMS groups' vmx is
    built from the same sources by the same compiler in the guest, and
    only blocks that match this file byte for byte count"""
    return os.path.join(proj, 'build', kver, 'vmx.ko')


def merge(into_lines, into_funcs, lines, funcs):
    """union over builds: a line is executable if one build has code for
    it, ran if one build ran it"""
    or_into(into_lines, lines)
    for k, d in funcs.items():
        or_into(into_funcs.setdefault(k, {}), d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ko', help='one vmx.ko with debug info for every guest (default: '
                    'build/<kver>/vmx.ko for each kernel the guests ran, from DIR/TAG.kver)')
    ap.add_argument('--annotate', action='store_true')
    ap.add_argument('--src', help='project sources for --annotate (default: the checkout)')
    ap.add_argument('dir')
    a = ap.parse_args()
    proj = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    by_ko = {}      # vmx.ko -> [TAG.tb]
    for tb in sorted(glob.glob(os.path.join(a.dir, '*.tb'))):
        tag = os.path.basename(tb)[:-3]
        kv = tb[:-3] + '.kver'
        kver = open(kv).read().strip() if os.path.exists(kv) else ''
        if a.ko:
            ko = a.ko
        elif kver:
            ko = ko_for(proj, kver)
        else:
            c = sorted(glob.glob(os.path.join(proj, 'build', '6.12.*', 'vmx.ko')))
            ko = c[-1] if c else ''
        if not ko or not os.path.exists(ko):
            print(f'{tag}: no vmx.ko for kernel {kver or "?"} ({ko or "none"}): left out',
                  file=sys.stderr)
            continue
        by_ko.setdefault(ko, []).append(tb)
    if not by_ko:
        sys.exit(f'{a.dir}: no *.tb file with a vmx.ko to map it (give --ko)')
    lines, funcs, guests, builds = {}, {}, {}, {}
    for ko, tbs in sorted(by_ko.items()):
        mod = Module(ko)
        executed = {t: set() for t in mod.texts}
        for tb in tbs:
            tag = os.path.basename(tb)[:-3]
            lp = os.path.join(a.dir, tag + '.loads')
            loads = read_loads(lp) if os.path.exists(lp) else []
            st = attribute(mod, read_tbs(tb), loads, executed)
            st['loads'] = len(loads)
            guests[tag] = st
        bl, bf = summarize(mod, executed)
        builds[ko] = dict(groups=[os.path.basename(t)[:-3] for t in tbs],
                          lines=len(bl), ran=sum(bl.values()))
        merge(lines, funcs, bl, bf)
    defined = project_functions(a.src or proj, {f for f, _ in lines})
    funcs = home_functions(funcs, defined)

    files = sorted({f for f, _ in lines})
    out = []
    out.append('vmx coverage, union of the builds (a line counts where a build has code for it):')
    for ko, b in builds.items():
        out.append(f"  {ko}: {b['ran']} of {b['lines']} lines ran ({pct(b['ran'], b['lines']).strip()}), "
                   f"groups {' '.join(b['groups'])}")
    out.append('guests: ' + ', '.join(
        f"{g} ({s['loads']} loads, {s['matched'] + s['weak']} blocks in vmx, "
        f"{s['rejected']} rejected)" for g, s in guests.items()))
    out.append('')
    out.append(f"{'file':<16} {'lines':>6} {'ran':>6} {'cover':>7} {'funcs':>6} {'entered':>8}")
    tot = [0, 0, 0, 0]
    per_file = {}
    for f in files:
        ex = [ln for (ff, ln) in lines if ff == f]
        ran = sum(1 for ln in ex if lines[(f, ln)])
        fl = [fn for (ff, fn) in funcs if ff == f]
        ent = sum(1 for fn in fl if any(funcs[(f, fn)].values()))
        per_file[f] = dict(lines=len(ex), ran=ran, functions=len(fl), entered=ent)
        tot = [tot[0] + len(ex), tot[1] + ran, tot[2] + len(fl), tot[3] + ent]
        out.append(f'{f:<16} {len(ex):>6} {ran:>6} {pct(ran, len(ex)):>7} {len(fl):>6} {ent:>8}')
    out.append(f"{'total':<16} {tot[0]:>6} {tot[1]:>6} {pct(tot[1], tot[0]):>7} {tot[2]:>6} {tot[3]:>8}")
    table = list(out)
    out.append('')
    out.append('per function (file, function, lines ran/lines, cover):')
    per_func = {}
    for (f, fn) in sorted(funcs):
        d = funcs[(f, fn)]
        ran = sum(d.values())
        per_func[f'{f}:{fn}'] = dict(lines=len(d), ran=ran,
                                     missed=sorted((ln for ln, r in d.items() if not r),
                                                     key=lambda x: (isinstance(x, str), str(x).zfill(8))))
        out.append(f'  {f:<16} {fn:<40} {ran:>4}/{len(d):<4} {pct(ran, len(d))}')
    out.append('')
    never = [f'{f}:{fn}' for (f, fn) in sorted(funcs) if not any(funcs[(f, fn)].values())]
    out.append(f'never entered ({len(never)}):')
    out.extend(f'  {x}' for x in never)
    with open(os.path.join(a.dir, 'coverage.txt'), 'w') as fo:
        fo.write('\n'.join(out) + '\n')
    with open(os.path.join(a.dir, 'coverage.json'), 'w') as fo:
        json.dump(dict(builds=builds, guests=guests, files=per_file,
                       total=dict(lines=tot[0], ran=tot[1], functions=tot[2], entered=tot[3]),
                       functions=per_func, never_entered=never), fo, indent=1)
    if a.annotate:
        src = a.src or proj
        od = os.path.join(a.dir, 'annotated')
        os.makedirs(od, exist_ok=True)
        for f in files:
            p = os.path.join(src, f)
            if not os.path.exists(p):
                continue
            with open(p) as fi, open(os.path.join(od, f), 'w') as fo:
                for n, text in enumerate(fi, 1):
                    r = lines.get((f, n))
                    mark = '' if r is None else ('ok' if r else '#####')
                    fo.write(f'{mark:>6} {n:5}: {text}')
    print('\n'.join(table))
    print(f"never entered: {len(never)} functions (list in {os.path.join(a.dir, 'coverage.txt')})")


if __name__ == '__main__':
    main()
