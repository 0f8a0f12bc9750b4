#!/usr/bin/env bash
# mode.sh - the guest runs in the mode its group claims. tools/run-tests.sh
# runs it first in every group, with VMX_MODE naming the group's modes;
# when it fails, the rest of the group is not run (tools/guest-suite.sh).
#
# VMX_MODE: space-separated words
#   msix     the DUT's interrupts are MSI-X, as many vectors as the driver
#            must take (vmx: one per queue pair, min(CPUs, 8), + XDP TX +
#            events), each a PCI-MSIX line in /proc/interrupts
#   msi      one MSI vector (PCI-MSI line), no MSI-X
#   intx     no MSI at all: the DUT's legacy line is an IO-APIC interrupt
#            in /proc/interrupts that counts the DUT's traffic
#   swiotlb  swiotlb=force: bounce slots in use grow when the driver maps
#            its buffers (debugfs swiotlb/io_tlb_used)
#   iommu    the DUT is in an IOMMU group whose default domain is DMA in
#            strict mode (no flush queue), as the kernel log says
#   hotplug  the DUT sits in a hot-pluggable PCIe slot (device_del works)
#   monitor  the QEMU monitor answers (lib.sh hmp)
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

mode_msi() { expect_vectors msi 1; }

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

for m in $VMX_MODE; do
	if declare -F "mode_$m" >/dev/null; then
		check "mode $m in effect" "mode_$m"
	else
		fail "mode $m in effect" "unknown mode word '$m'"
	fi
done

vmx_done
