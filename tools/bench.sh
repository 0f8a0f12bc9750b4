#!/usr/bin/env bash
# bench.sh - `make bench`: vmx against the in-tree vmxnet3, same guest, same
# generator, drivers loaded in turn, several rounds. Not a pass/fail test.
#
# Usage: tools/bench.sh [--quick]
#   --quick   one round, 1 s cells, 64-byte frames, no TCP (a smoke run)
# Env: BENCH_ROUNDS, BENCH_SECS, BENCH_SIZES, BENCH_DRIVERS, BENCH_TCP,
#      BENCH_MTUS (see tools/bench-guest.sh), BENCH_KERNEL (default 6.12).
# Output: a table on stdout and results/bench-<stamp>.json (raw lines and
# medians); the guest log is results/bench-<stamp>.log.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
if [ "${1:-}" = --quick ]; then
	export BENCH_ROUNDS=1 BENCH_SECS=1 BENCH_SIZES=64 BENCH_TCP=0
fi
tools/setup.sh
make -s modules >/dev/null
mkdir -p results
stamp=$(date +%Y%m%d-%H%M%S)
raw=results/bench-$stamp.jsonl
envs=()
for v in $(compgen -e | grep '^BENCH_'); do envs+=(--env "$v=${!v}"); done
tools/vm.sh --kernel "${BENCH_KERNEL:-6.12}" --tap "${envs[@]}" \
	--nic vmxnet3 --nic vmxnet3 --nic virtio --timeout 5400 --quiet \
	--log "results/bench-$stamp.log" -- tools/bench-guest.sh "$raw" ||
	{ echo "bench: guest failed, see results/bench-$stamp.log" >&2; exit 1; }
python3 tools/bench_report.py "$raw" "results/bench-$stamp.json" \
	"$(uname -r)" "$(qemu-system-x86_64 --version | head -n1)"
