#!/usr/bin/env bash
# guest-suite.sh - run selftests one after the other INSIDE a tools/vm.sh
# guest; used by tools/run-tests.sh (one boot per group).
#
# Usage (in the guest, cwd = project dir):
#   tools/guest-suite.sh OUTDIR TEST.sh [TEST.sh...]
#
# For each test: runs selftests/drivers/net/vmx/TEST.sh under `timeout`
# (the test's "# vmx-timeout: N" header line, else $VMX_TEST_TIMEOUT, else
# 300 s), output to OUTDIR/TEST.log, then writes OUTDIR/TEST.rc holding
# "<exit status> <seconds>". A test without a .rc file never finished (the
# guest crashed or was killed). Between tests it removes the peer netns and
# unloads the driver under test, so each test starts from the same state.
# One progress line per test goes to stdout (the guest console).
set -u

[ $# -ge 1 ] || { echo "usage: $0 OUTDIR TEST..." >&2; exit 2; }
OUT=$1
shift
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../selftests/drivers/net/vmx" && pwd)
mkdir -p "$OUT" || exit 2

{
	echo "kernel: $(uname -r)"
	echo "cmdline: $(cat /proc/cmdline)"
	echo "cpus: $(nproc)"
	echo "driver: ${VMX_DRIVER:-vmx}"
	lspci -nn 2>/dev/null
	ip -br link
} > "$OUT/guest-info.txt" 2>&1

cleanup_between() {
	ip netns del peer 2>/dev/null
	case "${VMX_DRIVER:-vmx}" in
	vmx) rmmod vmx 2>/dev/null ;;
	*) rmmod "${VMX_DRIVER}" 2>/dev/null ;;
	esac
}

for t in "$@"; do
	name=${t%.sh}
	script=$DIR/$name.sh
	log=$OUT/$name.log
	rm -f "$OUT/$name.rc"
	if [ ! -f "$script" ]; then
		echo "not ok 1 $name # no such test: $script" > "$log"
		echo "1 0" > "$OUT/$name.rc"
		echo "vmx-suite: $name: missing"
		continue
	fi
	tmo=$(sed -n 's/^# vmx-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n1)
	tmo=${tmo:-${VMX_TEST_TIMEOUT:-300}}
	echo "vmx-suite: $name starting (timeout ${tmo}s)" > /dev/kmsg
	start=$(date +%s)
	timeout -k 10 "$tmo" bash "$script" > "$log" 2>&1 < /dev/null
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "# TIMEOUT: killed after ${tmo}s" >> "$log"
	fi
	echo "$rc $secs" > "$OUT/$name.rc.tmp" && mv "$OUT/$name.rc.tmp" "$OUT/$name.rc"
	printf 'vmx-suite: %-14s exit %-3s %4ss  %s\n' "$name" "$rc" "$secs" \
		"$(grep -c '^ok ' "$log") ok, $(grep -c '^not ok ' "$log") not ok"
	cleanup_between
done
dmesg > "$OUT/dmesg.txt" 2>&1
# Which interrupt mode (MSI-X, MSI, IO-APIC INTx) the NICs ended up with.
cat /proc/interrupts > "$OUT/interrupts.txt" 2>&1
exit 0
