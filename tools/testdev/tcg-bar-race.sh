#!/usr/bin/env bash
# tcg-bar-race.sh - reproducer for the TCG race that patch 0013 fixes: run
# in a guest with two vmxnet3 NICs and at least 2 vCPUs under multi-threaded
# TCG. CPU 0 reads BAR1 of NIC READ in a loop while CPU 1 toggles the memory
# decode of NIC TOGGLE N times (each toggle changes the memory map). QEMU
# 10.0.13 without patch 0013 aborts within seconds with "iotlb_to_section:
# Assertion `section_index < d->map.sections_nb' failed".
#
# Usage (host):
#   VMX_TCG_THREAD=multi tools/vm.sh --nic vmxnet3t --nic vmxnet3t --nic virtio \
#       -- tools/testdev/tcg-bar-race.sh 00:04.0 00:05.0 3000
set -u
R=${1:-00:04.0} T=${2:-00:05.0} N=${3:-3000}
python3 - "$R" <<'PY' &
import mmap, os, struct, sys
f = os.open(f"/sys/bus/pci/devices/0000:{sys.argv[1]}/resource1", os.O_RDWR | os.O_SYNC)
m = mmap.mmap(f, 4096)
os.sched_setaffinity(0, {0})
while True:
    struct.unpack_from("<I", m, 0)          # VRRS
PY
reader=$!
taskset -pc 1 $$ > /dev/null
for ((i = 0; i < N; i++)); do
	setpci -s "$T" COMMAND=0x0000:0x0002    # memory decode off
	setpci -s "$T" COMMAND=0x0002:0x0002    # and on again
done
kill "$reader"
echo "toggled the memory decode of $T $N times while reading $R: QEMU alive"
