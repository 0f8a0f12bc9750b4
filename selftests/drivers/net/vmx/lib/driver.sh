# shellcheck shell=bash
# lib/driver.sh - the driver under test, for the vmx selftests (sourced by
# lib.sh): loading and unloading it (VMX_DRIVER), the interfaces bound to
# it (DUT, DUT2), the device revision and capabilities it negotiated,
# forced resets, and the kernel version.

# vmx_ko_path: the vmx.ko dut_load loads: $VMX_KO when set (tools/demo.sh
# and tools/bench.sh build only the top-level vmx.ko), else the one make
# all-kernels built for the running kernel, else the top-level one.
vmx_ko_path() {
	local k="$VMX_PROJECT/build/$(kernel_release)/vmx.ko"
	if [ -n "${VMX_KO:-}" ]; then
		echo "$VMX_KO"
	elif [ -f "$k" ]; then
		echo "$k"
	else
		echo "$VMX_PROJECT/vmx.ko"
	fi
}

# Module name of the driver under test.
dut_module() {
	case "$VMX_DRIVER" in
	vmx) echo vmx ;;
	*) echo "$VMX_DRIVER" ;;
	esac
}

dut_loaded() { [ -d "/sys/module/$(dut_module)" ]; }

# PCI addresses of all vmxnet3 devices (15ad:07b0). The sysfs helpers avoid
# forking: every process costs tens of milliseconds under TCG.
vmxnet3_pci_devs() {
	local d v id
	for d in /sys/bus/pci/devices/*; do
		read -r v < "$d/vendor"
		read -r id < "$d/device"
		[ "$v" = 0x15ad ] && [ "$id" = 0x07b0 ] && echo "${d##*/}"
	done
	return 0
}

# nic_pci_devs: PCI addresses of every Ethernet controller (class
# 0x020000), whatever its driver, in PCI order (tools/vm.sh's --nic order).
nic_pci_devs() {
	local d c
	for d in /sys/bus/pci/devices/*; do
		read -r c < "$d/class"
		[ "$c" = 0x020000 ] && echo "${d##*/}"
	done
	return 0
}

# pci_ifname PCI-ADDR: the interface of that PCI device in this netns
# (a virtio NIC's hangs one level deeper, under virtioN/); nothing and
# status 1 when it has none (unbound, or moved to another netns).
pci_ifname() {
	local n
	for n in "/sys/bus/pci/devices/$1/net/"* "/sys/bus/pci/devices/$1/"virtio*/net/*; do
		[ -e "$n" ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

dut_load() {
	local ko v dep
	dut_loaded && return 0
	case "$VMX_DRIVER" in
	vmx)
		ko=$(vmx_ko_path)
		if [ ! -f "$ko" ]; then
			echo "vmx.ko not found (looked for $VMX_PROJECT/build/$(kernel_release)/vmx.ko and $VMX_PROJECT/vmx.ko)"
			return 1
		fi
		_vmx_ko_info "$ko"
		if [ "$_ko_vermagic" != "$(kernel_release)" ]; then
			echo "$ko is built for '$_ko_vermagic', running $(kernel_release)"
			return 1
		fi
		for dep in ${_ko_depends//,/ }; do
			[ -d "/sys/module/$dep" ] || modprobe "$dep" || return 1
		done
		insmod "$ko" ${VMX_MODULE_PARAMS:-} || return 1
		cov_record_load
		;;
	*)
		modprobe "$VMX_DRIVER"
		;;
	esac
}

# _vmx_ko_info KO: set _ko_vermagic (its kernel release) and _ko_depends
# (comma-separated) from modinfo, kept in /tmp for the guest's life and
# read again when KO is newer than what was kept (every test loads the
# driver, the load loops many times; two modinfo and their pipes cost
# about half a second under TCG).
_vmx_ko_info() {
	local c="/tmp/vmx-modinfo${1//\//_}" rest
	if [ ! -s "$c" ] || [ "$1" -nt "$c" ]; then
		_ko_vermagic=$(modinfo -F vermagic "$1" 2>/dev/null)
		_ko_depends=$(modinfo -F depends "$1" 2>/dev/null)
		# kept only when modinfo read it
		[ -z "$_ko_vermagic" ] || printf '%s\n%s\n' "$_ko_vermagic" "$_ko_depends" > "$c"
		_ko_vermagic=${_ko_vermagic%% *}
		return 0
	fi
	{ read -r _ko_vermagic rest; read -r _ko_depends; } < "$c"
}

# make coverage (tools/coverage): where this load of vmx put its code, for
# tools/coverage/report.py (VMX_COVERAGE and VMX_COVERAGE_TAG come from
# tools/vm.sh). Shell builtins only: a fork costs tens of ms under TCG.
# dut_load calls it; a test that loads vmx another way (modprobe of the
# DKMS package's module) calls it after the load. Nothing without vmx.
cov_record_load() {
	local s a out
	[ -n "${VMX_COVERAGE:-}" ] && [ -n "${VMX_COVERAGE_TAG:-}" ] || return 0
	[ -d /sys/module/vmx/sections ] || return 0
	out="$VMX_COVERAGE/$VMX_COVERAGE_TAG.loads"
	{
		echo "load ${EPOCHREALTIME:-}"
		for s in /sys/module/vmx/sections/.*text*; do
			[ -r "$s" ] && read -r a < "$s" && echo "${s##*/} $a"
		done
	} >> "$out" || echo "coverage: cannot write $out"
	return 0
}

# dut_retire WHAT: every interface of the driver under test is about to
# go (WHAT, one word: unload, unbind): while they still exist, the error
# counters of the instance going away are checked against the test's
# allowances (lib/counters.sh: a failure is a failed subtest "error
# counters before WHAT #K"). For a removal the library does not do itself
# (a package's modprobe -r); dut_unload and dut_unbind_all call it.
dut_retire() { _vmx_retire_instance "$1"; }

# dut_retire_ifaces WHAT IF...: interfaces IF... of the driver under test
# are about to go alone, the others staying (WHAT: unplug for a
# device_del, unbind for a sysfs unbind of their devices): their error
# counters are checked first, as dut_retire's; the others' when they go.
# Nothing to check without IF.
dut_retire_ifaces() {
	[ $# -gt 1 ] || return 0
	_vmx_retire_instance "$@"
}

# dut_unload [WRAPPER...]: unload the driver under test, WRAPPER running
# rmmod (e.g. "timeout 120", "taskset -c 0"); rmmod's exit status. First,
# while its interfaces still exist, their error counters are checked
# (dut_retire unload). Tests unload through here, never with rmmod of
# their own.
dut_unload() {
	dut_loaded || return 0
	dut_retire unload
	"$@" rmmod "$(dut_module)"
}

# dut_unbind_all: unbind every vmxnet3 device from the driver under test
# (sysfs), its interfaces going as with an unload: their error counters
# are checked first as dut_unload's ("error counters before unbind #K").
dut_unbind_all() {
	local pci drv=/sys/bus/pci/drivers/$VMX_DRIVER_NAME
	dut_retire unbind
	for pci in $(vmxnet3_pci_devs); do
		[ -e "$drv/$pci" ] || continue
		echo "$pci" > "$drv/unbind" || { echo "unbind $pci failed"; return 1; }
	done
}

# Interfaces in this netns whose device is bound to driver $1.
ifaces_by_driver() {
	local n drv
	for drv in /sys/bus/*/drivers/"$1"; do
		[ -d "$drv" ] || continue
		for n in /sys/class/net/*; do
			[ "$n/device/driver" -ef "$drv" ] && echo "${n##*/}"
		done
	done
	return 0
}

dut_ifaces() { ifaces_by_driver "$VMX_DRIVER_NAME"; }

# _count_is N CMD...: CMD prints at least N words.
_count_is() { local a; a=($("${@:2}")); [ ${#a[@]} -ge "$1" ]; }

# Wait until every vmxnet3 PCI device has an interface bound to the DUT driver.
wait_dut_ifaces() {
	local -a devs
	local want
	mapfile -t devs < <(vmxnet3_pci_devs)
	want=${#devs[@]}
	[ "$want" -gt 0 ] || { echo "no vmxnet3 PCI device in this guest"; return 1; }
	wait_for "${1:-10}" _count_is "$want" dut_ifaces ||
		{ echo "expected $want $VMX_DRIVER_NAME interfaces, have: $(dut_ifaces | xargs)"; return 1; }
}

# Load the driver and set DUT/DUT2.
# shellcheck disable=SC2034 # DUT2 is for the tests
dut_up_driver() {
	dut_load || { echo "loading $VMX_DRIVER failed"; return 1; }
	wait_dut_ifaces 10 || return 1
	local -a ifs
	mapfile -t ifs < <(dut_ifaces)
	DUT=${ifs[0]:-} DUT2=${ifs[1]:-}
	[ -n "$DUT" ]
}

# dut_revision: the negotiated device revision (ethtool -i), or nothing.
dut_revision() {
	ethtool -i "$DUT" | sed -n 's/^firmware-version: vmxnet3 rev \([0-9]*\)$/\1/p'
}

# caps_line IF: vmx's last "capabilities offered ... granted ..." log line
# for IF's device (revision 7+), without the timestamp; empty when none.
caps_line() {
	local bdf
	bdf=$(basename "$(readlink "/sys/class/net/$1/device")")
	dmesg | grep "vmx $bdf: capabilities offered" | tail -n 1 | sed 's/^\[[^]]*\] //'
}

# caps_granted LINE: the granted capability set of a caps_line (0x...).
caps_granted() { sed -n 's/.*granted \(0x[0-9a-f]*\|0\)$/\1/p' <<< "$1"; }

# dut_forced_reset: ethtool --reset DUT dedicated (vmx only), then wait
# until the driver's "resets" counter moved and the carrier is back.
dut_resets() { resets_of "$DUT"; }
_resets_above() { above "$1" dut_resets; }
dut_forced_reset() {
	local r0
	r0=$(dut_resets)
	[ -n "$r0" ] || { echo "no resets counter in ethtool -S $DUT"; return 1; }
	# declared for the error counter and kernel log checks of vmx_done
	echo "$DUT" >> "$VMX_TMP/forced-resets"
	ethtool --reset "$DUT" dedicated || return 1
	wait_for 15 _resets_above "$r0" || { echo "resets still $r0 after 15 s"; return 1; }
	echo "resets $r0 -> $(dut_resets); $(dmesg | grep 'resetting the device' | tail -n 1)"
	wait_carrier "$DUT" 10
}

# kernel_at_least MAJOR MINOR: the running kernel is MAJOR.MINOR or newer.
kernel_at_least() {
	local v
	v=$(kernel_release)
	IFS=. read -r -a v <<<"${v%%-*}"
	[ "${v[0]}" -gt "$1" ] || { [ "${v[0]}" = "$1" ] && [ "${v[1]}" -ge "$2" ]; }
}
