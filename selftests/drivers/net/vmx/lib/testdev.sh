# shellcheck shell=bash
# lib/testdev.sh - the QEMU monitor and the project's test device, for the
# vmx selftests (sourced by lib.sh; tools/guest-suite.sh sources it too,
# for the test device's violation counts).

# ------------------------------------------------------------ QEMU monitor

# hmp_port: /dev node of the virtio-serial port "vmx.monitor" that
# tools/vm.sh --guest-monitor relays to QEMU's monitor (no udev here: the
# name is only in sysfs; devtmpfs made the node).
hmp_port() {
	local p n
	for p in /sys/class/virtio-ports/*; do
		[ -r "$p/name" ] || continue
		read -r n < "$p/name"
		[ "$n" = vmx.monitor ] && [ -c "/dev/${p##*/}" ] &&
			{ echo "/dev/${p##*/}"; return 0; }
	done
	return 1
}

# have_hmp: the guest can reach the QEMU monitor.
have_hmp() { hmp_port >/dev/null; }

# hmp CMD...: run one HMP command on the QEMU monitor (e.g. hmp "set_link
# nic1 off", hmp "device_del nic2"; NIC ids are nicN in PCI order) and print
# its output. Returns 2 when there is no monitor channel or no reply within
# VMX_HMP_TIMEOUT seconds (default 30), 1 when QEMU refused the command or
# printed an error ("Error: Device 'nic9' not found", "unknown command"),
# 0 otherwise.
hmp() {
	local port fd line tag="$$.$RANDOM" state=0 rc=2
	port=$(hmp_port) ||
		{ echo "hmp: no QEMU monitor channel (tools/vm.sh --guest-monitor)"; return 2; }
	exec {fd}<>"$port" || return 2
	printf '%s\t%s\n' "$tag" "$*" >&"$fd"
	while IFS= read -r -t "${VMX_HMP_TIMEOUT:-30}" line <&"$fd"; do
		case "$line" in
		"vmx-hmp-begin $tag") state=1 ;;
		"vmx-hmp-end $tag "*) rc=${line##* }; state=2; break ;;
		*) [ $state = 1 ] && printf '%s\n' "$line" ;;
		esac
	done
	exec {fd}>&-
	[ $state = 2 ] || { echo "hmp: no reply to '$*'"; return 2; }
	return "$rc"
}

# ------------------------------------------------------------ test device
# The project's vmxnet3 test device (tools/testdev, tools/vm.sh --nic
# vmxnet3t[:PROPS]): vm.sh exports VMX_TESTDEV_NICS="nicN:PROP=VAL,... ..."
# (one word per test-device NIC, QOM id and the properties it was given,
# defaults first); its counters are QOM properties read with qom-get over
# the guest monitor (hmp, so the guest needs --guest-monitor). Property
# and counter names: tools/testdev/README.md.

# testdev_nics: the QOM ids (nic1, nic3, ...) of the test-device NICs.
testdev_nics() {
	local w
	for w in ${VMX_TESTDEV_NICS:-}; do
		echo "${w%%:*}"
	done
}

# have_testdev [PROP=VAL]: the guest has a test-device NIC (one whose
# properties, as vm.sh set them, end up with PROP=VAL).
have_testdev() {
	local n
	for n in $(testdev_nics); do
		[ $# = 0 ] && return 0
		[ "$(testdev_prop "$n" "${1%%=*}")" = "${1#*=}" ] && return 0
	done
	return 1
}

# testdev_props NIC: the properties vm.sh gave test-device NIC nicN, as
# it wrote them ("PROP=VAL,PROP=VAL,...", defaults first); fails when nicN
# is not a test-device NIC.
testdev_props() {
	local w
	for w in ${VMX_TESTDEV_NICS:-}; do
		[ "${w%%:*}" = "$1" ] && { echo "${w#*:}"; return 0; }
	done
	return 1
}

# testdev_prop NIC PROP: the value vm.sh gave property PROP of test-device
# NIC nicN (the last setting wins); empty when not set there.
testdev_prop() {
	local a p v=
	IFS=, read -r -a a <<<"$(testdev_props "$1")"
	for p in "${a[@]}"; do
		[ "${p%%=*}" = "$2" ] && v=${p#*=}
	done
	echo "$v"
}

# testdev_nic_of IF: the QOM id (nicN) of the NIC behind interface IF.
# vm.sh gives NIC N the permanent MAC 52:54:00:12:34:NN (hex).
testdev_nic_of() {
	local m
	m=$(ethtool -P "$1" 2>/dev/null | awk '{ print $NF }')
	[[ "$m" == 52:54:00:12:34:* ]] || { echo "testdev_nic_of: $1 has permanent MAC '$m', not one of vm.sh's" >&2; return 1; }
	echo "nic$((16#${m##*:}))"
}

# testdev_disabled_offload IF tso|lro: the device behind IF takes that
# offload away itself - a test device offering revision 9 whose
# disabled-offloads property (GET_DISABLED_OFFLOADS: bit 0 TSO, bit 1 LRO)
# has its bit set - and prints why. Fails otherwise: no other vmxnet3
# device (stock QEMU's included) disables an offload. Read from vm.sh's
# properties, not from what the driver reports.
testdev_disabled_offload() {
	local nic rev off bit
	case "$2" in
	tso) bit=1 ;;
	lro) bit=2 ;;
	*) echo "testdev_disabled_offload: no offload '$2'" >&2; return 1 ;;
	esac
	nic=$(testdev_nic_of "$1" 2>/dev/null) || return 1
	rev=$(testdev_prop "$nic" max-revision)
	off=$(testdev_prop "$nic" disabled-offloads)
	[ "${rev:-1}" -ge 9 ] && [ $((${off:-0} & bit)) != 0 ] || return 1
	echo "the device disabled it ($nic: max-revision=$rev, disabled-offloads=$off)"
}

# lro_offered STATE NAME...: STATE is the DUT's large-receive-offload
# value in ethtool -k. Every vmxnet3 revision offers LRO and both drivers
# let it change, so only the device may take it away (testdev_disabled_offload):
# returns 0 when STATE is changeable; otherwise skips the checks NAME...
# where the device disabled LRO, or fails "LRO changeable" where it did
# not (the driver withholds what the device offers), and returns 1.
lro_offered() {
	local st=$1 why n
	shift
	case "$st" in
	""|*fixed*) ;;
	*) return 0 ;;
	esac
	if why=$(testdev_disabled_offload "$DUT" lro); then
		for n in "$@"; do skip "$n" "LRO ${st:-not listed}: $why"; done
	else
		fail "LRO changeable: the driver offers what the device offers" \
			"ethtool -k $DUT: large-receive-offload: ${st:-not listed}; the device did not disable LRO"
	fi
	return 1
}

# testdev_iface_with PROP [ABOVE]: the first vmx interface whose test
# device vm.sh gave property PROP (with a value above ABOVE, if given);
# fails when there is none.
testdev_iface_with() {
	local i nic v
	for i in $(dut_ifaces); do
		nic=$(testdev_nic_of "$i" 2>/dev/null) || continue
		v=$(testdev_prop "$nic" "$1")
		[ -n "$v" ] || continue
		[ -z "${2:-}" ] || [ "$v" -gt "$2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# testdev_stat NIC PROP: one counter of the test device (qom-get), NIC a
# QOM id (nicN) or an interface name, PROP with or without "stat-"
# (testdev_stat eth0 violations, testdev_stat nic1 stat-rx-data-ring).
# Prints the number; fails (message on stderr) when it cannot be read.
testdev_stat() {
	local nic=$1 prop=$2 out
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	[[ "$prop" == stat-* ]] || prop=stat-$prop
	out=$(hmp "qom-get $nic $prop") ||
		{ echo "testdev_stat: qom-get $nic $prop: $out" >&2; return 1; }
	out=${out//$'\r'/}
	[[ "$out" =~ ^[0-9]+$ ]] ||
		{ echo "testdev_stat: qom-get $nic $prop answered '$out'" >&2; return 1; }
	echo "$out"
}

# testdev_queue_sum NIC STAT N: a per-queue counter of the test device
# added up over queues 0..N-1 (STAT without the queue number:
# testdev_queue_sum eth3 tx-bytes-queue 4 reads stat-tx-bytes-queue0..3);
# fails when one cannot be read.
testdev_queue_sum() {
	local q v s=0
	for ((q = 0; q < $3; q++)); do
		v=$(testdev_stat "$1" "$2$q") || return 1
		s=$((s + v))
	done
	echo "$s"
}

# testdev_queue_snap NIC NRX NQ NX: the device's per-queue frame counts as
# snap lines (for sdelta): td_rxQ (delivered to RX queue Q,
# stat-rx-queueQ) for Q < NRX, and td_xdptxX (sent from XDP TX queue X:
# the device's TX queue NQ + X, after the NQ stack queues) for X < NX.
testdev_queue_snap() {
	local q v
	for ((q = 0; q < $2; q++)); do
		v=$(testdev_stat "$1" "rx-queue$q") || return 1
		echo "td_rx$q $v"
	done
	for ((q = 0; q < $4; q++)); do
		v=$(testdev_stat "$1" "tx-queue$(($3 + q))") || return 1
		echo "td_xdptx$q $v"
	done
}

# testdev_set NIC PROP VALUE: qom-set a property of a test-device NIC, e.g.
# testdev_set nic1 fault link-flap (NIC as for testdev_stat).
testdev_set() {
	local nic=$1
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	hmp "qom-set $nic $2 $3"
}

# testdev_violations: the sum of stat-violations (strict-mode violations,
# counted since the NIC was created) over every test-device NIC; 0 when
# there is none. Fails when one cannot be read.
testdev_violations() {
	local n v s=0
	for n in $(testdev_nics); do
		v=$(testdev_stat "$n" violations) || return 1
		s=$((s + v))
	done
	echo "$s"
}

# testdev_nic_violations NIC: "KIND=COUNT" for every strict-mode
# violation kind with a non-zero count on one test-device NIC (nicN or an
# interface), on one line; empty when there is none.
testdev_nic_violations() {
	local k v out=()
	for k in ring-config rx-desc tx-desc tx-chain dma tx-gen rx-gen \
	    tx-reuse rx-owned intr-block tx-oversize rx-buf-size tso-hlen \
	    tso-seed csum-offset csum-seed; do
		v=$(testdev_stat "$1" "violation-$k") || return 1
		[ "$v" = 0 ] || out+=("$k=$v")
	done
	echo "${out[*]}"
}

# testdev_violation_kinds: "nicN stat-violation-KIND COUNT" for every
# violation kind with a non-zero count, on every test-device NIC.
testdev_violation_kinds() {
	local n kv w
	for n in $(testdev_nics); do
		kv=$(testdev_nic_violations "$n") || return 1
		for w in $kv; do
			echo "$n stat-violation-${w%%=*} ${w#*=}"
		done
	done
}

# qom_get NIC PROP: a QOM property of any NIC QEMU holds (nicN, stock
# vmxnet3 included), as the monitor prints it, without quotes: qom_get
# nic1 mac prints the MAC the device holds (the one MACL/MACH read back).
qom_get() {
	local out
	out=$(hmp "qom-get $1 $2") ||
		{ echo "qom_get: qom-get $1 $2: $out" >&2; return 1; }
	out=${out//$'\r'/}
	out=${out//\"/}
	echo "$out"
}

# testdev_tx_summary NIC: the test device's tx-desc-summary (patch 0028)
# of NIC (nicN or an interface): one line per distinct tuple of the TX
# descriptor fields the driver chose since the summary was last cleared,
# with its count ("om=3 hlen=54 msscof=1448 ti=0 tci=0 oco=0 ext1=0 dr=0
# cq=1 ndesc=2 len=32769-65536: 12"), sorted, then "other: N" if more than
# 64 tuples came; nothing when no packet was sent. HMP prints the string
# JSON-quoted with its newlines as \n (qom_get would leave them so): undone
# here. Fails (message on stderr) when it cannot be read.
testdev_tx_summary() {
	local nic=$1 out
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	out=$(hmp "qom-get $nic tx-desc-summary") ||
		{ echo "testdev_tx_summary: qom-get $nic tx-desc-summary: $out" >&2; return 1; }
	out=${out//$'\r'/}
	[[ "$out" == \"*\" ]] ||
		{ echo "testdev_tx_summary: qom-get $nic tx-desc-summary answered '$out'" >&2; return 1; }
	out=${out#\"}
	out=${out%\"}
	printf '%s' "${out//\\n/$'\n'}"
}

# testdev_tx_summary_reset NIC: clear NIC's tx-desc-summary (nothing else
# does: not RESET_DEV, not a PCI reset), e.g. before the traffic a test
# compares.
testdev_tx_summary_reset() {
	local nic=$1
	[[ "$nic" =~ ^nic[0-9]+$ ]] || nic=$(testdev_nic_of "$nic") || return 1
	hmp "qom-set $nic tx-desc-summary-reset 1" >/dev/null
}

# toeplitz KEY DATA: the Toeplitz hash (decimal) of DATA under KEY, both
# hex bytes with or without colons (the hash every vmxnet3 RSS device
# computes; IPv4 TCP input: source address, destination address, source
# port, destination port, network order). Computed here, independently of
# the driver and the device; checked against Microsoft's verification
# suite (its key, 66.9.149.187:2794 -> 161.142.100.80:1766: 0x51ccc178).
toeplitz() {
	local k=${1//:/} d=${2//:/} kb='' db='' i j b h=0
	for ((i = 0; i < ${#k}; i += 2)); do
		b=$((16#${k:i:2}))
		for ((j = 7; j >= 0; j--)); do kb+=$(((b >> j) & 1)); done
	done
	for ((i = 0; i < ${#d}; i += 2)); do
		b=$((16#${d:i:2}))
		for ((j = 7; j >= 0; j--)); do db+=$(((b >> j) & 1)); done
	done
	((${#kb} >= ${#db} + 32)) || { echo "toeplitz: key too short" >&2; return 1; }
	for ((i = 0; i < ${#db}; i++)); do
		[ "${db:i:1}" = 1 ] && h=$((h ^ 2#${kb:i:32}))
	done
	echo "$h"
}
