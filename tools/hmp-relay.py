#!/usr/bin/env python3
# hmp-relay.py - give a tools/vm.sh guest the QEMU monitor (started by
# vm.sh --guest-monitor; not meant to be run by hand).
#
# Usage: hmp-relay.py QMP_SOCKET PORT_SOCKET
#
# QMP_SOCKET is QEMU's QMP server (-qmp unix:...), PORT_SOCKET the host end
# of the guest's virtio-serial port "vmx.monitor" (a chardev socket server).
# Both are QEMU servers; the relay connects to both (retrying until QEMU has
# created them) and then, for every line "ID<TAB>COMMAND" the guest writes to
# the port, runs COMMAND as an HMP command (QMP human-monitor-command) and
# writes back
#     vmx-hmp-begin ID
#     <the command's output, as HMP prints it>
#     vmx-hmp-end ID RC
# RC is 0 when the command ran, 1 when QMP refused it or HMP printed an
# error ("Error: ...", "unknown command: ..."). The ID lets the guest skip a
# reply it gave up waiting for. QMP events (DEVICE_DELETED, ...) are
# ignored, except that RESET ones are counted: the command "vmx-resets"
# (not HMP's) answers how many system resets QEMU reported so far (a guest
# that rebooted to restore a hibernation image can tell it did). The relay
# ends when QEMU closes either socket.
import json
import socket
import sys
import time


def connect(path, deadline):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Qmp:
    def __init__(self, sock):
        self.f = sock.makefile("rwb", buffering=0)
        self.n = 0
        self.resets = 0
        self.recv()  # greeting
        self.call("qmp_capabilities")

    def recv(self):
        line = self.f.readline()
        if not line:
            raise EOFError("QMP closed")
        return json.loads(line)

    def call(self, cmd, **args):
        self.n += 1
        msg = {"execute": cmd, "id": self.n}
        if args:
            msg["arguments"] = args
        self.f.write(json.dumps(msg).encode() + b"\n")
        while True:
            r = self.recv()
            if r.get("id") != self.n:
                if r.get("event") == "RESET":
                    self.resets += 1
                continue  # an event
            if "error" in r:
                return 1, "error: %s\n" % r["error"].get("desc", r["error"])
            ret = r.get("return", "")
            return 0, ret if isinstance(ret, str) else json.dumps(ret) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hmp-relay.py QMP_SOCKET PORT_SOCKET")
    deadline = time.monotonic() + 60
    qmp = Qmp(connect(sys.argv[1], deadline))
    port = connect(sys.argv[2], deadline).makefile("rwb", buffering=0)
    for raw in port:
        line = raw.decode(errors="replace").strip("\r\n")
        if "\t" not in line:
            continue  # noise from an earlier, aborted write
        tag, cmd = line.split("\t", 1)
        if cmd.strip() == "vmx-resets":
            rc, _ = qmp.call("query-status")  # reads the events queued
            out = "%d\n" % qmp.resets
        else:
            rc, out = qmp.call("human-monitor-command",
                               **{"command-line": cmd})
        out = out.replace("\r\n", "\n")
        if any(ln.startswith(("Error:", "unknown command:"))
               for ln in out.splitlines()):
            rc = 1
        if out and not out.endswith("\n"):
            out += "\n"
        port.write(("vmx-hmp-begin %s\n%svmx-hmp-end %s %d\n"
                    % (tag, out, tag, rc)).encode())


if __name__ == "__main__":
    try:
        main()
    except (EOFError, OSError, KeyboardInterrupt):
        pass
