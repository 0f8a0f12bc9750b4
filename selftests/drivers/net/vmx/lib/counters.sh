# shellcheck shell=bash
# lib/counters.sh - counters, for the vmx selftests (sourced by lib.sh):
# sysfs and ethtool -S values, snapshots of them and their deltas, the
# /proc/net/snmp protocol counters, queue statistics over netlink
# (qstats), and the error counters vmx_done checks.

# Interface counter from sysfs: stat_of IF NAME (this netns).
stat_of() { cat "/sys/class/net/$1/statistics/$2"; }

# Standard counters of the DUT: rx_packets tx_packets rx_bytes tx_bytes.
dut_counters() {
	local c
	for c in rx_packets tx_packets rx_bytes tx_bytes; do
		printf '%s ' "$(stat_of "$DUT" $c)"
	done
}

# not_backwards "BEFORE" "AFTER": no dut_counters value went down.
not_backwards() {
	local b=($1) a=($2) i
	for i in 0 1 2 3; do
		[ "${a[i]}" -ge "${b[i]}" ] || return 1
	done
}

# estat IF REGEX: sum of the ethtool -S counters whose whole name matches
# REGEX (e.g. 'rx[0-9]+_xdp_drop'); 0 when none matches.
estat() {
	ethtool -S "$1" | awk -v re="^($2)$" '
		{ n = $1; sub(":$", "", n) } n ~ re { s += $2 } END { printf "%d\n", s }'
}

# link_stat IF FIELD (this netns) / peer_link_stat FIELD: rtnl counters.
link_stat() { stat_of "$1" "$2"; }
peer_link_stat() { pexec cat "/sys/class/net/$PEER/statistics/$1"; }

# snap IF: "name value" per ethtool -S counter of IF (this netns), plus
# every rtnl counter (/sys/class/net/IF/statistics) as link_<name> and the
# interrupts per vector: irq_<dev>-rxtx-N, irq_<dev>-xdp-tx, irq_<dev>.
snap() {
	local f v
	ethtool -S "$1" | awk -F': *' 'NR > 1 { gsub(/^ +/, "", $1); print $1, $2 }'
	for f in /sys/class/net/"$1"/statistics/*; do
		read -r v < "$f" && echo "link_${f##*/} $v"
	done
	awk -v d="$1" '$1 ~ /^[0-9]+:$/ && ($NF == d || index($NF, d "-") == 1) {
		s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i
		print "irq_" $NF, s }' /proc/interrupts
}
peer_snap() {
	local f
	for f in rx_packets rx_dropped rx_missed_errors tx_packets; do
		echo "link_$f $(peer_link_stat $f)"
	done
}

# sdelta BEFORE AFTER REGEX: summed change of the counters named REGEX.
sdelta() {
	awk -v re="^($3)$" 'FNR == NR { b[$1] = $2; next }
		$1 ~ re { s += $2 - b[$1] } END { printf "%d\n", s }' "$1" "$2"
}

# smoved BEFORE AFTER: print "name before -> after" for every counter of
# two snaps that changed (names in both); fails when one did.
smoved() {
	awk 'FNR == NR { b[$1] = $2; next }
		($1 in b) && b[$1] != $2 { print $1, b[$1], "->", $2; m = 1 }
		END { exit m }' "$1" "$2"
}

# near A B PCT [SLACK]: |A - B| <= B * PCT / 100 + SLACK
near() {
	local d=$(($1 - $2))
	[ $d -lt 0 ] && d=$((-d))
	[ $((d * 100)) -le $(($2 * $3 + ${4:-0} * 100)) ]
}

# snmp_field PROTO FIELD: the FIELD column of the PROTO row ("Tcp",
# "Icmp", "Udp", ...) of /proc/net/snmp text read on stdin. This netns:
# snmp_field Tcp OutSegs </proc/net/snmp; the peer's:
# pexec cat /proc/net/snmp | snmp_field Udp NoPorts.
snmp_field() {
	awk -v p="$1:" -v f="$2" '$1 == p { if (!h) { for (i = 2; i <= NF; i++) n[i] = $i; h = 1 }
		else for (i = 2; i <= NF; i++) if (n[i] == f) print $i }'
}

# ------------------------------------------------------------ queue statistics
# Queue statistics over the netdev netlink family (qstats-get, kernel
# 6.10+), read with nlstats.py as user nobody: the request needs no
# privilege, so any local user can make the driver answer it.
VMX_NLSTATS=$VMX_LIB_DIR/nlstats.py

# nl_qstats dev|queue IF: nlstats.py's output for IF (see nlstats.py).
nl_qstats() {
	local idx
	idx=$(cat "/sys/class/net/$2/ifindex") || return 1
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env PYTHONDONTWRITEBYTECODE=1 python3 "$VMX_NLSTATS" "$1" "$idx"
}

# qstat_dev IF FIELD: one device-scope qstats counter of IF (e.g.
# rx-alloc-fail); empty when the kernel or the driver has none.
qstat_dev() {
	nl_qstats dev "$1" | awk -v f="$2" '$1 == f { print $2 }'
}

# have_qstats: this kernel answers qstats-get (6.1 has no netdev family).
have_qstats() {
	nl_qstats dev lo >/dev/null 2>&1
	[ $? != 2 ]
}

# qstats_totals IF: device-scope "rx-packets tx-packets rx-bytes tx-bytes"
# of IF (the order of dut_counters, for not_backwards); fails when one is
# missing or the dump failed.
qstats_totals() {
	local out
	out=$(nl_qstats dev "$1") || { printf '%s\n' "$out"; return 1; }
	printf '%s\n' "$out" | awk '{ v[$1] = $2 }
		END { n = split("rx-packets tx-packets rx-bytes tx-bytes", k, " ")
		      for (i = 1; i <= n; i++) {
			if (!(k[i] in v)) { print "no " k[i] " in qstats-get"; exit 1 }
			printf "%s%s", v[k[i]], (i < n ? " " : "\n") } }'
}

# ------------------------------------------------------------ error counters

# dut_error_counters IF: print the error counters of IF that are not zero:
# every queue's TX timeouts (sysfs) and, for vmx, bad completions
# (rxN/txN/xdptxN_bad_desc) and resets beyond those dut_forced_reset did
# on IF plus the test header's "# vmx-expects: resets<=N" (lib/log.sh).
dut_error_counters() {
	local f n r b
	r=$(grep -cx "$1" "$VMX_TMP/forced-resets" 2>/dev/null)
	# (a bound the log check refuses counts as none here)
	b=$(vmx_resets_bound 2>/dev/null) || b=0
	r=$((${r:-0} + b))
	for f in /sys/class/net/"$1"/queues/tx-*/tx_timeout; do
		[ -r "$f" ] || continue
		read -r n < "$f"
		[ "$n" = 0 ] || echo "$1 ${f#/sys/class/net/"$1"/queues/} timeouts: $n"
	done
	[ "$VMX_DRIVER" = vmx ] || return 0
	ethtool -S "$1" 2>/dev/null | awk -v ifc="$1" -v r="$r" '
		$1 ~ /_bad_desc:$/ && $2 != 0 { print ifc, $1, $2 }
		$1 == "resets:" && $2 > r + 0 { print ifc, $1, $2, "(allowed: " r + 0 ", forced + vmx-expects)" }'
}

# Error counters of every interface of the driver under test in this netns.
_vmx_counters_check() {
	local i out=
	for i in $(dut_ifaces); do
		out+=$(dut_error_counters "$i")$'\n'
	done
	[ -z "${out//$'\n'/}" ] && return 0
	printf '%s' "$out"
	return 1
}
