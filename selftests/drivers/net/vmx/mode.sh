#!/usr/bin/env bash
# mode.sh - the guest runs in the mode its group claims. tools/run-tests.sh
# runs it first in every group, with VMX_MODE naming the group's modes;
# when it fails, the rest of the group is not run (tools/guest-suite.sh).
#
# VMX_MODE: space-separated words
#   msix     the DUT's interrupts are MSI-X, as many vectors as the driver
#            must take (vmx: one per queue pair, min(CPUs, 8), + XDP TX +
#            events), each a PCI-MSIX line in /proc/interrupts
#   msi      the DUT offers no MSI-X capability (the test device with
#            msix=off) and runs on one MSI vector (PCI-MSI line)
#   intx     no MSI at all: the DUT's legacy line is an IO-APIC interrupt
#            in /proc/interrupts that counts the DUT's traffic
#   swiotlb  swiotlb=force: bounce slots in use grow when the driver maps
#            its buffers (debugfs swiotlb/io_tlb_used)
#   iommu    the DUT is in an IOMMU group whose default domain is DMA in
#            strict mode (no flush queue), as the kernel log says
#   hotplug  the DUT sits in a hot-pluggable PCIe slot (device_del works)
#   monitor  the QEMU monitor answers (lib.sh hmp)
#   testdev  the DUT is the project's test device (tools/testdev) and every
#            test-device NIC has the properties vm.sh gave it
#            (VMX_TESTDEV_NICS), read back with qom-get; its violation
#            counter is readable
# vmx-timeout: 120
source "$(dirname "$0")/lib.sh"

[ -n "${VMX_MODE:-}" ] || { skip "group mode" "VMX_MODE not set"; vmx_done; }

# swiotlb: bounce slots in use before the driver maps anything
tlb=/sys/kernel/debug/swiotlb/io_tlb_used
TLB0=
[ -r "$tlb" ] && TLB0=$(cat "$tlb")

vmx_setup
BDF=$(basename "$(readlink -f "/sys/class/net/$DUT/device")")
PCI=/sys/bus/pci/devices/$BDF
log "DUT $DUT at $BDF, VMX_MODE='$VMX_MODE'"

# msi_modes: one word per MSI/MSI-X vector of the DUT ("msi" or "msix").
msi_modes() {
	local f
	for f in "$PCI"/msi_irqs/*; do
		[ -r "$f" ] && cat "$f"
	done
	return 0
}

# irq_line N: the /proc/interrupts line of IRQ N
irq_line() { awk -v i="$1:" '$1 == i' /proc/interrupts; }

# The vmx probe line: "... MSI-X with 4 vectors, 2 queue pairs max ..."
probe_line() { dmesg | grep -F " $BDF " | grep -E ' with [0-9]+ vectors?,' | tail -n1; }

# expect_vectors TYPE N: the DUT has N vectors, all of TYPE (msi|msix)
# in sysfs, each a PCI-MSI/PCI-MSIX line in /proc/interrupts (the chip
# name; 6.1 calls MSI-X lines PCI-MSI too and prints no PCI address), and
# (vmx) the probe line says so.
expect_vectors() {
	local type=$1 n=$2 modes i l lines=0 word
	modes=$(msi_modes | sort | uniq -c | xargs)
	echo "msi_irqs: ${modes:-none}"
	for i in $(cd "$PCI/msi_irqs" 2>/dev/null && echo *); do
		l=$(irq_line "$i")
		echo "$l"
		case "$type:$l" in
		# 6.1 names both kinds "PCI-MSI": msi_irqs says which
		msix:*PCI-MSI*) lines=$((lines + 1)) ;;
		msix:*) ;;
		msi:*PCI-MSIX*) ;;
		msi:*PCI-MSI*) lines=$((lines + 1)) ;;
		esac
	done
	[ "$modes" = "$n $type" ] || { echo "want $n $type vectors"; return 1; }
	[ "$lines" = "$n" ] || { echo "want $n $type lines in /proc/interrupts, have $lines"; return 1; }
	if [ "$VMX_DRIVER" = vmx ]; then
		word=MSI-X; [ "$type" = msi ] && word=MSI
		probe_line
		probe_line | grep -qE " $word with $n vectors?," ||
			{ echo "probe line does not say '$word with $n vector'"; return 1; }
	fi
}

mode_msix() {
	local q n
	q=$(nproc); [ "$q" -gt 8 ] && q=8
	if [ "$VMX_DRIVER" = vmx ]; then
		n=$((q + 2))
	else
		# the in-tree driver: one per queue pair (shared TX/RX) + events
		n=$(msi_modes | wc -l)
		[ "$n" -ge 2 ] || { echo "in-tree driver with $n MSI-X vectors"; return 1; }
	fi
	expect_vectors msix "$n"
}

# The device offers MSI and no MSI-X (lspci lists capabilities by name),
# and the driver runs on one MSI vector.
mode_msi() {
	local caps
	caps=$(lspci -vv -s "$BDF" 2>/dev/null | grep -E 'Capabilities: .*MSI')
	echo "$caps"
	grep -q 'MSI-X' <<<"$caps" && { echo "$BDF offers MSI-X"; return 1; }
	grep -q 'MSI:' <<<"$caps" || { echo "$BDF offers no MSI"; return 1; }
	expect_vectors msi 1
}

_irq_count() { awk -v i="$1:" '$1 == i { s = 0; for (c = 2; c <= NF && $c ~ /^[0-9]+$/; c++) s += $c; print s }' /proc/interrupts; }

mode_intx() {
	local irq line c0 c1
	[ -z "$(msi_modes)" ] || { echo "MSI vectors: $(msi_modes | xargs)"; return 1; }
	read -r irq < "$PCI/irq"
	line=$(irq_line "$irq")
	echo "irq $irq: $line"
	[[ "$line" == *IO-APIC* ]] || { echo "irq $irq is not an IO-APIC line"; return 1; }
	[[ "$line" == *"$DUT"* ]] || { echo "irq $irq does not name $DUT"; return 1; }
	c0=$(_irq_count "$irq")
	dut_ping -c 20 -i 0.02 "$PEER_IP" >/dev/null
	c1=$(_irq_count "$irq")
	echo "interrupts on irq $irq during 20 pings: $((c1 - c0))"
	[ $((c1 - c0)) -ge 20 ]
}

mode_swiotlb() {
	local t1
	# swiotlb=force or swiotlb=<slabs>,force
	grep -qE '(^| )swiotlb=([0-9]+,)?force( |$)' /proc/cmdline ||
		{ echo "no swiotlb=force: $(cat /proc/cmdline)"; return 1; }
	dmesg | grep -m1 'software IO TLB'
	[ -n "$TLB0" ] || { echo "no $tlb"; return 1; }
	t1=$(cat "$tlb")
	echo "bounce slots in use: $TLB0 before the driver, $t1 with $DUT up"
	[ "$t1" -gt "$TLB0" ] || { echo "the driver's mappings did not bounce"; return 1; }
	# and traffic goes through them: the pings must still work
	dut_ping -c 5 -i 0.05 -s 1400 "$PEER_IP"
}

mode_iommu() {
	local g type
	[ -e "$PCI/iommu_group" ] || { echo "$BDF is in no IOMMU group"; return 1; }
	g=$(basename "$(readlink -f "$PCI/iommu_group")")
	read -r type < "/sys/kernel/iommu_groups/$g/type"
	echo "IOMMU group $g: $(cd "/sys/kernel/iommu_groups/$g/devices" && echo *), type $type"
	dmesg | grep -E 'DMAR: IOMMU enabled|DMA domain TLB invalidation policy' | sed 's/^\[[^]]*\] //'
	# DMA-FQ would be the lazy (flush queue) domain, identity no IOMMU use
	[ "$type" = DMA ] || { echo "want default domain type DMA (strict), have $type"; return 1; }
	dmesg | grep -q 'DMA domain TLB invalidation policy: strict mode' ||
		{ echo "kernel does not say strict invalidation"; return 1; }
}

mode_hotplug() {
	local s a
	# a slot's address is domain:bus:device, e.g. 0000:01:00
	for s in /sys/bus/pci/slots/*; do
		[ -r "$s/address" ] || continue
		read -r a < "$s/address"
		[ "$a" = "${BDF%.*}" ] && { echo "slot ${s##*/} at $a"; return 0; }
	done
	echo "no hotplug slot holds $BDF: $(cat /sys/bus/pci/slots/*/address 2>/dev/null | xargs)"
	return 1
}

mode_monitor() {
	have_hmp || { echo "no QEMU monitor channel"; return 1; }
	hmp "info network" | show_grep 'model=vmxnet3'
}

# qom-get's answer for a property value as vm.sh wrote it (on/off are
# bools, which qom-get prints as true/false; numbers it prints in decimal).
_qom_value() {
	case "$1" in
	on) echo true ;; off) echo false ;;
	0x[0-9a-fA-F]*) echo $(($1)) ;;
	*) echo "$1" ;;
	esac
}

mode_testdev() {
	local n p v w got rc=0 a
	[ -n "$(testdev_nics)" ] || { echo "no test-device NIC (VMX_TESTDEV_NICS empty)"; return 1; }
	n=$(testdev_nic_of "$DUT") || return 1
	have_testdev || return 1
	case " $(testdev_nics | xargs) " in *" $n "*) ;;
	*) echo "DUT $DUT is $n, not a test-device NIC ($(testdev_nics | xargs))"; return 1 ;; esac
	for n in $(testdev_nics); do
		for w in ${VMX_TESTDEV_NICS}; do
			[ "${w%%:*}" = "$n" ] || continue
			IFS=, read -r -a a <<<"${w#*:}"
			for p in "${a[@]}"; do
				p=${p%%=*}
				v=$(_qom_value "$(testdev_prop "$n" "$p")")
				got=$(hmp "qom-get $n $p" | tr -d '\r')
				# a string property comes back as JSON: "drop"
				[[ "$got" =~ ^\"(.*)\"$ ]] && got=${BASH_REMATCH[1]}
				echo "$n $p: $got (want $v)"
				[ "$got" = "$v" ] || rc=1
			done
		done
		testdev_stat "$n" violations >/dev/null || rc=1
	done
	return $rc
}

for m in $VMX_MODE; do
	if declare -F "mode_$m" >/dev/null; then
		check "mode $m in effect" "mode_$m"
	else
		fail "mode $m in effect" "unknown mode word '$m'"
	fi
done

vmx_done
