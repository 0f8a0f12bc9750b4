#!/usr/bin/env bash
# run.sh - make coverage: run test groups with coverage on (VMX_COVERAGE,
# tools/vm.sh: the vmxcount TCG plugin records the blocks the guest runs
# in module space), then tools/coverage/report.py: per-file and
# per-function figures for vmx_*.c (each guest through its kernel's build of
# vmx, the union by source line) and the functions never entered.
#
# Usage: tools/coverage/run.sh [--default] [GROUP...]
#   no GROUP: COVERAGE_GROUPS, else the default groups: those of the
#   default run-tests.sh run (make test) but benchsmoke (its guest loads
#   the plugin itself); core61 is counted through the 6.1 build of vmx
#   (report.py maps each guest through the build of its kernel).
#   --default GROUP...: the default groups, then GROUP... (make
#   coverage-all: those of test-extra and test-debug)
#
# Environment:
#   VMX_COVERAGE=DIR  where the records and the report go (default
#                     results/coverage-<date-time>; inside the project)
#   RESULTS=DIR       run-tests.sh's results (default VMX_COVERAGE/tests)
#   anything run-tests.sh reads (SKIP_CHECK=1, TESTS=..., ...)
#
# Exit status: report.py's; the tests' verdict is in the run-tests.sh
# summary above the report (a failing test still covers what it ran).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$TOP" || exit 1
default_groups() {
	tools/run-tests.sh --list | awk '
		/^[a-z]/ { if (g != "") print g; g = ($2 == "kernel" && $1 != "benchsmoke") ? $1 : "" }
		/only when named/ { g = "" }
		END { if (g != "") print g }'
}
# The run lasts hours: everything below is in main(), read whole before it
# starts, so that a checkout changing this file meanwhile cannot make bash
# read on from the old offset in the new text.
main() {
	local groups=() start trc
	if [ "${1:-}" = --default ]; then
		shift
		mapfile -t groups < <(default_groups)
		groups+=("$@")
	elif [ $# -gt 0 ]; then
		groups=("$@")
	elif [ -n "${COVERAGE_GROUPS:-}" ]; then
		read -r -a groups <<<"$COVERAGE_GROUPS"
	else
		mapfile -t groups < <(default_groups)
	fi
	[ ${#groups[@]} -gt 0 ] || { echo "coverage: no groups" >&2; exit 2; }
	export VMX_COVERAGE=${VMX_COVERAGE:-$TOP/results/coverage-$(date +%Y%m%d-%H%M%S)}
	mkdir -p "$VMX_COVERAGE"
	VMX_COVERAGE=$(cd "$VMX_COVERAGE" && pwd)
	export RESULTS=${RESULTS:-$VMX_COVERAGE/tests}
	echo "coverage: groups ${groups[*]}; records in $VMX_COVERAGE"
	start=$(date +%s)
	tools/run-tests.sh "${groups[@]}"
	trc=$?
	echo "coverage: the groups took $(( $(date +%s) - start ))s (run-tests.sh exit status $trc)"
	python3 tools/coverage/report.py --annotate "$VMX_COVERAGE"
}
main "$@"
exit
