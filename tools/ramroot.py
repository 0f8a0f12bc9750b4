#!/usr/bin/env python3
"""ramroot.py - the RAM root of tools/vm.sh --ramroot, as a cpio archive.

A guest of vm.sh has its root on the host's / over virtio-9p, which does not
survive hibernation (Linux's 9p transport has no freeze/restore and QEMU
forgets its fids at the device reset). With --ramroot the guest's root is a
tmpfs filled from this archive instead: the files of the Debian packages the
tests use (documentation left out), the shared libraries their programs load
(ldd), the links among them (merged /usr, /etc/alternatives) and chosen
kernel modules with their dependencies. Everything sits under "rr/" in the
archive; the initramfs's /init copies rr/ into the tmpfs it switches to.

Usage: ramroot.py --kver KVER [--moddir DIR] [--module M]... OUT.cpio.gz
  --moddir   where lib/modules/KVER is (default /)
  --module   a module to include with its dependencies (repeatable)
"""

import argparse
import gzip
import os
import stat
import subprocess
import sys

# What the tests that run in a RAM root call (suspend.sh and lib.sh): shell,
# core tools, iproute2, ethtool, ping, iperf3, python3, pciutils, kmod,
# make (xdp_lib.sh checks that the prebuilt XDP objects are up to date).
PACKAGES = """
bash coreutils util-linux mount procps psmisc iproute2 ethtool iputils-ping
kmod grep sed mawk findutils diffutils gzip iperf3 pciutils socat tcpdump
make libc-bin dash busybox-static python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
python3-minimal netbase base-files hostname
""".split()
SKIP = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/locale/",
        "/usr/share/info/", "/usr/share/lintian/", "/__pycache__/",
        "/usr/lib/python3.11/test/", "/usr/lib/python3.11/idlelib/",
        "/usr/lib/python3.11/tkinter/", "/usr/lib/python3.11/ensurepip/")
ETC = ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/hosts",
       "/etc/nsswitch.conf", "/etc/ld.so.cache", "/etc/ld.so.conf",
       "/etc/protocols", "/etc/services", "/etc/iproute2", "/etc/localtime",
       "/etc/os-release", "/etc/debian_version",
       # alternatives: the links themselves are in no package's list
       "/usr/bin/awk"]


class Tree:
    """The paths to archive, each with its parents; symlinks followed."""

    def __init__(self):
        self.paths = set()

    def add(self, path, elf_check=True, recurse=False):
        path = os.path.normpath(path)
        if path in self.paths or not os.path.lexists(path):
            return
        parent = os.path.dirname(path)
        if parent != path:
            # the real directory: /bin/x is /usr/bin/x on merged /usr
            real_parent = os.path.realpath(parent)
            if real_parent != parent:
                self.add(parent)
                path = os.path.join(real_parent, os.path.basename(path))
                if path in self.paths or not os.path.lexists(path):
                    return
            self.add_dirs(real_parent)
        self.paths.add(path)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(path)
            self.add(os.path.join(os.path.dirname(path), target))
        elif stat.S_ISDIR(st.st_mode) and recurse:
            for name in os.listdir(path):
                self.add(os.path.join(path, name), recurse=True)
        elif stat.S_ISREG(st.st_mode) and elf_check and is_elf(path):
            for lib in ldd(path):
                self.add(lib, elf_check=False)

    def add_dirs(self, d):
        while d not in self.paths and d != "/":
            if os.path.islink(d):
                self.add(d)
                return
            self.paths.add(d)
            d = os.path.dirname(d)


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


LDD_SEEN = {}


def ldd(path):
    if path in LDD_SEEN:
        return LDD_SEEN[path]
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            i = parts.index("=>")
            if i + 1 < len(parts) and parts[i + 1].startswith("/"):
                libs.append(parts[i + 1])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    LDD_SEEN[path] = libs
    return libs


def package_files(pkg):
    out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    if out.returncode != 0:
        # the host lacks it, so a guest on the host's root would too
        print(f"ramroot.py: package {pkg} not installed, left out",
              file=sys.stderr)
        return
    for f in out.stdout.splitlines():
        if f in ("", "/.") or any(s in f + "/" for s in SKIP):
            continue
        if os.path.isdir(f) and not os.path.islink(f):
            continue   # a package's directories come with its files
        yield f


def modules(kver, moddir, names):
    base = os.path.join(moddir, "lib/modules", kver)
    files = [os.path.join(base, f) for f in os.listdir(base)
             if f.startswith("modules.")]
    for m in names:
        cmd = ["modprobe", "--show-depends", "-S", kver, m]
        if moddir != "/":
            cmd[2:2] = ["-d", moddir]
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "insmod":
                files.append(parts[1])
    return files


def newc(out, paths, links, prefix="rr"):
    ino = 1

    def entry(name, st, data=b""):
        nonlocal ino
        name_b = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            ino, st.st_mode if st else 0, 0, 0, 1 if not st else
            (2 if stat.S_ISDIR(st.st_mode) else 1),
            int(st.st_mtime) if st else 0, len(data), 0, 0, 0, 0,
            len(name_b), 0))
        ino += 1
        out.write(hdr.encode() + name_b)
        out.write(b"\0" * ((4 - (110 + len(name_b)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))

    dirst = os.stat("/")
    entry(prefix, dirst)
    for p in sorted(paths):
        st = os.lstat(p)
        name = prefix + p
        if stat.S_ISLNK(st.st_mode):
            entry(name, st, os.readlink(p).encode())
        elif stat.S_ISDIR(st.st_mode):
            entry(name, st)
        elif stat.S_ISREG(st.st_mode):
            with open(p, "rb") as f:
                entry(name, st, f.read())
    for name, target in sorted(links.items()):
        st = os.lstat("/")
        entry(prefix + name, os.stat_result(
            (stat.S_IFLNK | 0o777,) + tuple(st)[1:]), target.encode())
    entry("TRAILER!!!", None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kver", required=True)
    ap.add_argument("--moddir", default="/")
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("out")
    a = ap.parse_args()
    tree = Tree()
    for pkg in PACKAGES:
        for f in package_files(pkg):
            tree.add(f)
    for f in ETC:
        tree.add(f, recurse=True)
    for f in modules(a.kver, a.moddir, a.module):
        tree.add(f, elf_check=False)
    # merged /usr: the top-level links
    for d in ("/bin", "/sbin", "/lib", "/lib64"):
        if os.path.islink(d):
            tree.add(d)
    # a kernel whose modules are elsewhere (the debug kernel's cache): its
    # /lib/modules/KVER points there, for modprobe before anything else
    links = {}
    if a.moddir != "/":
        libmod = os.path.realpath("/lib/modules")
        tree.add_dirs(libmod)
        links[os.path.join(libmod, a.kver)] = os.path.join(
            a.moddir, "lib/modules", a.kver)
    tmp = a.out + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=1) as out:
        newc(out, tree.paths, links)
    os.replace(tmp, a.out)
    print(f"ramroot.py: {len(tree.paths)} paths", file=sys.stderr)


if __name__ == "__main__":
    main()
