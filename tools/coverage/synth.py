#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""synth.py - a made-up coverage run, to check report.py without a guest.

Usage: tools/coverage/synth.py VMX.KO OUTDIR FUNC [FUNC...]

Writes OUTDIR/synth.loads (one load, .text at 0xffffffffc0a02000) and
OUTDIR/synth.tb: the translation blocks of every FUNC (split after each
branch, call or return, as TCG does), with every byte the kernel may
rewrite at load time replaced by junk (as relocation and patching would);
plus decoys that report.py must reject or ignore: the blocks of another
function placed at FUNC's addresses (another module's code at a freed vmx
address), and blocks outside every vmx section.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

BASE = 0xffffffffc0a02000
ENDS = ('j', 'call', 'ret', 'ud2', 'int3')


def blocks(mod, sym):
    """[(off, size)] of the function's instructions split as TCG would"""
    out, start, end = [], None, None
    for off, size, frames, s in mod.insns['.text']:
        if s != sym:
            continue
        text = mod.raw[off]
        if start is None:
            start = off
        end = off + size
        if text.startswith(ENDS):
            out.append((start, end - start))
            start = None
    if start is not None:
        out.append((start, end - start))
    return out


def main():
    ko, outdir, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    mod = report.Module(ko)
    mod.raw = {o: t for o, _, t, _ in report.disassemble(ko, '.text')}
    ref, mask = mod.bytes['.text'], mod.mask['.text']
    rnd = random.Random(1)
    os.makedirs(outdir, exist_ok=True)

    def patched(off, size):
        return bytes(rnd.randrange(256) if mask[off + i] else ref[off + i]
                     for i in range(size))

    lines = []
    for f in funcs:
        for off, size in blocks(mod, f):
            lines.append(f'tb 0x{BASE + off:x} {size} {patched(off, size).hex()}')
    # decoy 1: another function's blocks at the first FUNC's addresses
    fset = set(funcs)
    syms = sorted({s for _, _, _, s in mod.insns['.text']
                   if s and not s.startswith('__pfx_') and s not in fset})
    decoys, other = 0, None
    if syms:
        other = syms[len(syms) // 2]
        target = blocks(mod, funcs[0])[0][0]
        first = blocks(mod, other)[0][0]
        for off, size in blocks(mod, other):
            lines.append(f'tb 0x{BASE + target + off - first:x} {size} {patched(off, size).hex()}')
            decoys += 1
    # decoy 2: outside vmx
    lines.append(f'tb 0x{BASE - 0x100000:x} 3 {ref[:3].hex()}')
    with open(os.path.join(outdir, 'synth.tb'), 'w') as fo:
        fo.write('# synth\n' + '\n'.join(lines) + '\n')
    with open(os.path.join(outdir, 'synth.loads'), 'w') as fo:
        fo.write(f'load 1\n.text 0x{BASE:x}\n.init.text 0xffffffffc0b00000\n')
    print(f'{len(lines) - decoys - 1} blocks of {" ".join(funcs)}; '
          f'{decoys} decoys ({other} at {funcs[0]}), 1 outside')


if __name__ == '__main__':
    main()
