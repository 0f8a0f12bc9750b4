#!/usr/bin/env bash
# bench.sh - `make bench`: vmx against the in-tree vmxnet3, same guest, same
# generator, drivers loaded in turn, several rounds. Not a pass/fail test.
#
# Usage: tools/bench.sh [--quick]
#   --quick   one round, 1 s cells, 64-byte frames, no TCP (a smoke run)
# Env: BENCH_ROUNDS, BENCH_SECS, BENCH_SIZES, BENCH_DRIVERS, BENCH_TCP,
#      BENCH_MTUS (see tools/bench-guest.sh), BENCH_KERNEL (default 6.12).
# Output: a table on stdout and results/bench-<stamp>.json (raw lines and
# medians); the guest logs are results/bench-<stamp>-r<round>.log.
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
# One guest per round, both drivers loaded in turn in it: a guest that
# crashes (TCG has been seen to oops under either driver) costs one round,
# which is reported, and the next round boots afresh.
rounds=${BENCH_ROUNDS:-3}
envs=()
for v in $(compgen -e | grep '^BENCH_' | grep -v '^BENCH_ROUNDS$'); do
	envs+=(--env "$v=${!v}")
done
failed=0
for r in $(seq "$rounds"); do
	tools/vm.sh --kernel "${BENCH_KERNEL:-6.12}" --tap --hostproc "${envs[@]}" \
		--env BENCH_ROUNDS=1 --env BENCH_FIRST_ROUND="$r" \
		--nic vmxnet3 --nic vmxnet3 --nic virtio --timeout 3600 --quiet \
		--log "results/bench-$stamp-r$r.log" -- tools/bench-guest.sh "$raw" ||
	{
		echo "bench: round $r: guest failed, see results/bench-$stamp-r$r.log" >&2
		grep -m3 -E 'BUG:|Oops|RIP:' "results/bench-$stamp-r$r.log" >&2
		failed=$((failed + 1))
	}
done
[ -s "$raw" ] || { echo "bench: no measurement" >&2; exit 1; }
[ "$failed" = 0 ] || echo "bench: $failed of $rounds rounds ended in a guest crash" >&2
python3 tools/bench_report.py "$raw" "results/bench-$stamp.json" \
	"$(uname -r)" "$(qemu-system-x86_64 --version | head -n1)"
