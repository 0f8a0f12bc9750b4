#!/usr/bin/env bash
# dkms.sh - the vmx-dkms Debian package (tools/build-deb.sh, "make deb") as
# a user gets it: dpkg -i builds vmx with DKMS for the running kernel, the
# kernel package hook builds it for a kernel whose headers arrive later, the
# initramfs gets vmx where it carries vmxnet3, "modprobe vmx" next to a
# vmxnet3 that owns the NICs takes nothing and says so, vmx-switch moves a
# NIC from vmxnet3 to vmx and back under a ping with bounded loss, the
# module and ethtool -i report the package's version, the boot-time module
# loading (udev's "modprobe -b MODALIAS") gives the NICs to vmx, and
# dpkg -r hands them back to vmxnet3, removes the module and leaves
# vmxnet3 working, at the next boot too.
#
# Needs the package built on the host (the guest has no network):
# build/deb/vmx-dkms_<VERSION>_all.deb, or VMX_DEB=path. The guest's root is
# a throw-away overlay, so installing it here changes nothing on the host.
# Run it on both kernels (6.12 and 6.1): each builds for its own kernel at
# install time and for the other one through the kernel hook.
# The hang guard: dkms61 took 1340 s of the old 1500 with two guests on the
# two cores; VMX_DKMS_INITRAMFS=1 adds two update-initramfs runs of 15+ min.
# vmx-timeout: 3600
source "$(dirname "$0")/lib.sh"

VER=$(cat "$VMX_PROJECT/VERSION" 2>/dev/null)
DEB=${VMX_DEB:-$VMX_PROJECT/build/deb/vmx-dkms_${VER}_all.deb}
KVER=$(uname -r)
# update-initramfs (mkinitramfs, MODULES=most) takes well over 10 minutes
# under TCG: unless VMX_DKMS_INITRAMFS=1 the guest's update-initramfs.conf
# says update_initramfs=no (Debian's own switch), the postinst's decision
# is checked from its output and the initramfs content through the module
# resolution mkinitramfs uses (modprobe --show-depends).
INITRAMFS=${VMX_DKMS_INITRAMFS:-0}
# Lost replies allowed while one NIC changes driver under a 10/s ping.
MAX_LOST=${VMX_SWITCH_MAX_LOST:-40}
HIDDEN=

# ------------------------------------------------------------ helpers

# owners: "PCI driver" for every vmxnet3 NIC.
owners() {
	local d l
	for d in $(vmxnet3_pci_devs); do
		l=$(readlink "/sys/bus/pci/devices/$d/driver")
		echo "$d ${l##*/}"
	done
}

# all_on DRIVER: every vmxnet3 NIC is bound to DRIVER (prints owners).
all_on() {
	local o
	o=$(owners)
	echo "$o"
	[ -n "$o" ] && printf '%s\n' "$o" | awk -v d="$1" '$2 != d { bad = 1 } END { exit bad }'
}

iface_of_pci() {
	local n
	for n in "/sys/bus/pci/devices/$1"/net/*; do
		[ -e "$n" ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

# timed LABEL CMD...: run CMD, print its output and how long it took. Each
# output line is stamped with the seconds since the start and copied to the
# kernel log (the guest console shows a long dpkg run as it goes).
timed() {
	local label=$1 t0 rc l
	shift
	t0=$SECONDS
	"$@" 2>&1 | while IFS= read -r l; do
		printf '[%4d s] %s\n' $((SECONDS - t0)) "$l"
		echo "dkms.sh: $label: $l" > /dev/kmsg 2>/dev/null
	done
	rc=${PIPESTATUS[0]}
	echo "$label: $((SECONDS - t0)) s, exit $rc"
	return "$rc"
}

dkms_installed_for() {
	dkms status -m vmx -v "$VER" -k "$1" | tee /dev/stderr | grep -q ': installed'
}

# module_ok KVER: vmx.ko of the DKMS tree for KVER, built for KVER, with
# the package's version.
module_ok() {
	local k=$1 m v ver
	m=$(modinfo -k "$k" -n vmx 2>/dev/null) || { echo "no vmx module for $k"; return 1; }
	echo "$k: $m"
	case "$m" in
	/lib/modules/"$k"/updates/dkms/vmx.ko*) ;;
	*) echo "not DKMS's module"; return 1 ;;
	esac
	v=$(modinfo -F vermagic "$m" | awk '{ print $1 }')
	[ "$v" = "$k" ] || { echo "vermagic '$v', expected $k"; return 1; }
	ver=$(modinfo -F version "$m")
	[ "$ver" = "$VER" ] ||
		{ echo "modinfo version '$ver', package version $VER (MODULE_VERSION missing?)"; return 1; }
}

# rm_vmx: modprobe -r vmx, as the package's user would; the error counters
# of vmx's interfaces (if it has any) are checked first, as dut_unload's.
rm_vmx() {
	dut_loaded || return 0
	dut_retire unload
	modprobe -r vmx
}

# boot_modprobe: what udev does at boot, after unloading both drivers:
# "modprobe -b MODALIAS" for each vmxnet3 NIC.
boot_modprobe() {
	local d
	rm_vmx 2>/dev/null
	modprobe -r vmxnet3 || return 1
	[ -z "$(owners | awk '$2 != ""')" ] || { echo "NICs still bound"; owners; return 1; }
	for d in $(vmxnet3_pci_devs); do
		modprobe -b "$(cat "/sys/bus/pci/devices/$d/modalias")" || return 1
	done
	cov_record_load
	lsmod | grep -E '^(vmx|vmxnet3) '
}

# use_iface DRIVER: DUT := the first NIC's interface once it is on DRIVER.
_first_on() { [ "$(owners | awk 'NR == 1 { print $2 }')" = "$1" ] && [ -n "$(iface_of_pci "$NIC")" ]; }
use_iface() {
	wait_for 10 _first_on "$1" || { echo "$NIC is not on $1"; owners; return 1; }
	DUT=$(iface_of_pci "$NIC")
}

# switch_under_ping DRIVER: the peer pings DUT 10 times a second for 15 s;
# vmx-switch moves the first NIC to DRIVER 2 s in. Passes when the NIC is on
# DRIVER with its address (restored by vmx-switch), the last replies came
# back, and at most MAX_LOST replies were lost.
switch_under_ping() {
	local to=$1 p out tx rx last
	pexec ping -n -i 0.1 -c 150 -W 1 "$DUT_IP" > "$VMX_TMP/swping" 2>&1 &
	p=$!
	sleep 2
	# a NIC leaving vmx takes its interface's error counters along:
	# checked first, as an unbind's
	[ "$to" = vmx ] || dut_retire_ifaces unbind "$DUT"
	timed "vmx-switch $to $NIC" vmx-switch "$to" "$NIC"
	[ "$to" != vmx ] || cov_record_load
	wait $p
	use_iface "$to" || return 1
	ip -br addr show dev "$DUT"
	out=$(tail -n 3 "$VMX_TMP/swping")
	echo "$out"
	tx=$(echo "$out" | sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p')
	rx=$(echo "$out" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
	last=$(grep -o 'icmp_seq=[0-9]*' "$VMX_TMP/swping" | tail -n1 | cut -d= -f2)
	if [ -z "$tx" ] || [ -z "$rx" ]; then
		echo "no ping summary"
		return 1
	fi
	echo "lost $((tx - rx)) of $tx (at most $MAX_LOST), last reply seq ${last:-none}"
	ip addr show dev "$DUT" | grep -q "inet $DUT_IP/" || { echo "address not restored"; return 1; }
	[ $((tx - rx)) -le "$MAX_LOST" ] && [ "${last:-0}" -ge $((tx - 5)) ]
}

initrd_has_vmx() {
	lsinitramfs "/boot/initrd.img-$KVER" | grep -E '/updates/dkms/vmx\.ko|/vmx-dkms\.conf$'
}

# Leave the guest as the test found it, for the tests after this one.
# (dpkg -r's prerm unloads vmx: its interfaces are checked first.)
dkms_cleanup() {
	if dpkg-query -W -f='${Status}' vmx-dkms 2>/dev/null | grep -q 'ok installed'; then
		! dut_loaded || dut_retire unload
		dpkg -r vmx-dkms > /dev/null 2>&1
	fi
	[ -z "$HIDDEN" ] || mv "$HIDDEN.vmx-hidden" "$HIDDEN" 2>/dev/null
	HIDDEN=
	rm_vmx 2>/dev/null
	modprobe -r vmxnet3 2>/dev/null
}

finish() {
	dkms_cleanup
	vmx_done
}

die_test() {
	fail "${2:-setup}" "$1"
	finish
}

# ------------------------------------------------------------ test

vmx_setup --no-load
export DEBIAN_FRONTEND=noninteractive
# dkms uses bash's <(...), which needs /dev/fd; a system with udev has it,
# this guest's bare devtmpfs does not.
if [ ! -e /dev/fd ]; then
	ln -s /proc/self/fd /dev/fd
	log "made /dev/fd -> /proc/self/fd (no udev in this guest)"
fi
[ -n "$VER" ] || die_test "no VERSION file in $VMX_PROJECT"
[ -f "$DEB" ] || die_test "$DEB missing: run 'make deb' (tools/build-deb.sh) on the host first"
command -v dkms > /dev/null || die_test "dkms is not installed on the host (tools/setup.sh)"
NIC=$(vmxnet3_pci_devs | sed -n 1p)
[ -n "$NIC" ] || die_test "no vmxnet3 NIC in this guest"
# Another installed kernel with headers: its headers "arrive later".
OTHER=
for b in /lib/modules/*/build; do
	k=${b#/lib/modules/}
	k=${k%/build}
	[ "$k" != "$KVER" ] && [ -e "$b/include" ] && OTHER=$k
done
log "kernel $KVER, other kernel with headers: ${OTHER:-none}; package $DEB; NICs: $(vmxnet3_pci_devs | xargs)"

# The starting point: the in-tree driver has the NICs.
start_vmxnet3() {
	modprobe vmxnet3 || return 1
	use_iface vmxnet3 || return 1
	dut_addr_setup "$DUT" > /dev/null || return 1
	peer_ping -c 5 -i 0.2 "$DUT_IP"
}
check "before: vmxnet3 has the NICs, traffic flows" start_vmxnet3 ||
	die_test "vmxnet3 does not work without the package"

if [ "$INITRAMFS" != 1 ]; then
	sed -i 's/^update_initramfs=.*/update_initramfs=no/' /etc/initramfs-tools/update-initramfs.conf
fi
if [ -n "$OTHER" ]; then
	HIDDEN=/lib/modules/$OTHER/build
	mv "$HIDDEN" "$HIDDEN.vmx-hidden"
fi

install_pkg() {
	timed "dpkg -i" dpkg -i "$DEB" > "$VMX_TMP/dpkg-i.log"
	local rc=$?
	cat "$VMX_TMP/dpkg-i.log"
	[ $rc = 0 ] || return 1
	grep -q "Building initial module for $KVER" "$VMX_TMP/dpkg-i.log" ||
		{ echo "no DKMS build for $KVER in dpkg's output"; return 1; }
	dkms_installed_for "$KVER"
}
check "dpkg -i: DKMS builds and installs vmx for $KVER" install_pkg ||
	die_test "the package did not install" "dpkg -i"
check "module for $KVER: DKMS's, vermagic $KVER, version $VER" module_ok "$KVER"

if [ -n "$OTHER" ]; then
	check "dpkg -i tried every kernel: $OTHER skipped for its missing headers" \
		grep -A1 "Module build for kernel $OTHER was skipped" "$VMX_TMP/dpkg-i.log"
	mv "$HIDDEN.vmx-hidden" "$HIDDEN"
	HIDDEN=
	later() {
		timed "header_postinst.d/dkms $OTHER" /etc/kernel/header_postinst.d/dkms "$OTHER" || return 1
		dkms_installed_for "$OTHER" && module_ok "$OTHER"
	}
	check "headers of $OTHER installed later: the kernel hook builds vmx for it" later
else
	skip "kernel installed later" "no second kernel with headers in this guest"
fi

check "postinst updates the initramfs of $KVER (it carries vmxnet3)" \
	grep "initramfs of $KVER carries vmxnet3: adding vmx" "$VMX_TMP/dpkg-i.log"
if [ "$INITRAMFS" = 1 ]; then
	check "initramfs of $KVER now carries vmx and the softdep" initrd_has_vmx
else
	skip "initramfs content" "update-initramfs takes over 10 min under TCG; VMX_DKMS_INITRAMFS=1 runs it"
fi

softdep_order() {
	local o
	o=$(modprobe --show-depends vmxnet3)
	echo "$o"
	printf '%s\n' "$o" | grep -E '/(vmx|vmxnet3)\.ko' | head -n1 | grep -q '/updates/dkms/vmx\.ko'
}
check "boot: modprobe vmxnet3 loads vmx first (softdep)" softdep_order

# vmx next to a vmxnet3 that has the NICs: takes none, crashes nothing,
# says so in the kernel log.
coexist() {
	local n0 d new
	n0=$(dmesg | wc -l)
	modprobe vmx || return 1
	cov_record_load
	sleep 1
	all_on vmxnet3 || { echo "vmx took a NIC"; return 1; }
	[ -z "$(ifaces_by_driver vmx)" ] || { echo "vmx interfaces: $(ifaces_by_driver vmx)"; return 1; }
	peer_ping -c 5 -i 0.2 "$DUT_IP" || return 1
	new=$(dmesg | tail -n +$((n0 + 1)))
	echo "kernel log:"; printf '%s\n' "$new"
	for d in $(vmxnet3_pci_devs); do
		printf '%s\n' "$new" | grep -q "vmx: .*$d.*vmxnet3" ||
			{ echo "vmx said nothing about $d being vmxnet3's"; return 1; }
	done
}
check "modprobe vmx while vmxnet3 has the NICs: takes none, says so" coexist

check "vmx-switch vmx under ping: NIC on vmx, address kept, loss bounded" switch_under_ping vmx
vmx_traffic() {
	ethtool -i "$DUT" | show_grep "^version: $VER$" || { echo "ethtool -i version is not $VER"; return 1; }
	dut_ping -c 5 -i 0.2 "$PEER_IP" && iperf_check
}
check "vmx carries traffic, ethtool -i version $VER" vmx_traffic
check "vmx-switch vmxnet3 under ping: NIC back on vmxnet3, loss bounded" switch_under_ping vmxnet3

# The next boot: udev's modprobe for each NIC gives them all to vmx.
next_boot_vmx() {
	boot_modprobe || return 1
	all_on vmx || return 1
	use_iface vmx && dut_addr_setup "$DUT" > /dev/null && peer_ping -c 5 -i 0.2 "$DUT_IP"
}
check "next boot (modprobe -b MODALIAS): vmx has every NIC, traffic flows" next_boot_vmx

# dpkg -r while vmx has the NICs, under ping.
remove_pkg() {
	local p
	pexec ping -n -q -i 0.1 -c 100 -W 1 "$DUT_IP" > "$VMX_TMP/rmping" 2>&1 &
	p=$!
	sleep 1
	# the prerm hands vmx's NICs back and unloads it: its interfaces'
	# error counters are checked first, as dut_unload's
	dut_retire unload
	timed "dpkg -r" dpkg -r vmx-dkms > "$VMX_TMP/dpkg-r.log"
	local rc=$?
	cat "$VMX_TMP/dpkg-r.log"
	wait $p
	tail -n 2 "$VMX_TMP/rmping"
	[ $rc = 0 ] || return 1
	all_on vmxnet3 || return 1
	! lsmod | grep -q '^vmx ' || { echo "vmx still loaded"; return 1; }
	use_iface vmxnet3 && peer_ping -c 5 -i 0.2 "$DUT_IP"
}
check "dpkg -r: NICs back on vmxnet3 with their address, vmx unloaded" remove_pkg

gone() {
	local k rc=0
	for k in "$KVER" $OTHER; do
		ls /lib/modules/"$k"/updates/dkms/vmx.ko* 2>/dev/null && { echo "left: $k"; rc=1; }
	done
	[ -z "$(dkms status -m vmx)" ] || { dkms status -m vmx; rc=1; }
	[ ! -e /lib/modprobe.d/vmx-dkms.conf ] || { echo "softdep left"; rc=1; }
	modinfo vmx 2>/dev/null && { echo "modinfo still finds vmx"; rc=1; }
	if [ "$INITRAMFS" = 1 ] && initrd_has_vmx; then
		echo "the initramfs still carries vmx"
		rc=1
	fi
	return $rc
}
check "dpkg -r: module, softdep and initramfs entries gone for every kernel" gone

next_boot_vmxnet3() {
	boot_modprobe || return 1
	all_on vmxnet3 || return 1
	use_iface vmxnet3 && dut_addr_setup "$DUT" > /dev/null && peer_ping -c 5 -i 0.2 "$DUT_IP"
}
check "next boot after removal: vmxnet3 has every NIC, traffic flows" next_boot_vmxnet3

finish
