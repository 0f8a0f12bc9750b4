# shellcheck shell=bash
# lib/base.sh - what every user of the vmx selftest library shares, the
# tests (lib.sh sources this first) and the guest tools (lib/tool.sh:
# tools/demo.sh --guest, tools/bench-guest.sh): the settings (where the
# project is, the driver under test, the topology's netns, addresses and
# interface variables) and waiting (wait_for, scaled). Sourcing it starts
# nothing.

_vmx_base=${BASH_SOURCE[0]%/*}
[ "$_vmx_base" != "${BASH_SOURCE[0]}" ] || _vmx_base=.
VMX_LIB_DIR=$(cd "$_vmx_base/.." && pwd)
VMX_PROJECT=${VMX_PROJECT:-$(cd "$VMX_LIB_DIR/../../../.." && pwd)}
VMX_DRIVER=${VMX_DRIVER:-vmx}
VMX_DRIVER_NAME=${VMX_DRIVER_NAME:-$VMX_DRIVER}

PEER_NS=peer
DUT_IP=10.99.0.1
PEER_IP=10.99.0.2
DUT_IP6=fd99::1
PEER_IP6=fd99::2
# A unicast MAC/IP nobody owns, for filter tests.
FOREIGN_IP=10.99.0.77
FOREIGN_MAC=02:00:00:00:00:77

DUT=
DUT2=
PEER=

# kernel_release: what uname -r prints, without a process (a fork and
# exec costs tens of milliseconds under TCG).
kernel_release() {
	local r
	read -r r < /proc/sys/kernel/osrelease
	echo "$r"
}

# ------------------------------------------------------------ waiting

# wait_for TIMEOUT_S CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	local end=$(( ${EPOCHREALTIME/./} / 1000 + $1 * 1000 ))
	shift
	while ! "$@"; do
		[ $(( ${EPOCHREALTIME/./} / 1000 )) -lt $end ] || return 1
		sleep 0.1
	done
}

# scaled SECS: SECS times the group's VMX_TIMEOUT_SCALE (3 on the debug
# kernel, where everything, a Python start included, takes about 4x as
# long): for the idle timeout of a receiver started before its sender.
scaled() { echo $(($1 * ${VMX_TIMEOUT_SCALE:-1})); }
