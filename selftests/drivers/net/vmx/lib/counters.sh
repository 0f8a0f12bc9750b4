# shellcheck shell=bash
# lib/counters.sh - counters, for the vmx selftests (sourced by lib.sh):
# sysfs and ethtool -S values, snapshots of them and their deltas, the
# /proc/net/snmp protocol counters, the lengths of the frames the peer
# receives (tc), queue statistics over netlink (qstats), and the error
# counters vmx_done checks.

# Interface counter from sysfs: stat_of IF NAME (this netns).
stat_of() { cat "/sys/class/net/$1/statistics/$2"; }

# above N CMD [ARG...]: CMD's output (a number) is above N; for wait_for,
# e.g. wait_for 10 above "$r0" resets_of eth1
above() { local n=$1; shift; [ "$("$@")" -gt "$n" ]; }
# tx_timeouts IF: the stack's TX watchdog timeouts of IF, every queue summed
tx_timeouts() { cat /sys/class/net/"$1"/queues/tx-*/tx_timeout | awk '{ s += $1 } END { print s + 0 }'; }
# resets_of IF: the device resets vmx made on IF (ethtool -S resets)
resets_of() { estat "$1" resets; }

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
	irq_counts irq_ "$1"
}

# irq_counts PREFIX NAME...: "PREFIX<vector> COUNT" for every interrupt
# vector named NAME or NAME-<suffix> (eth0, eth0-rxtx-0, virtio3-input.0),
# COUNT summed over the CPUs, in /proc/interrupts order.
irq_counts() {
	local p=$1
	shift
	awk -v p="$p" -v names="$*" 'BEGIN { n = split(names, nm, " ") }
		$1 ~ /^[0-9]+:$/ { for (j = 1; j <= n; j++) if ($NF == nm[j] || index($NF, nm[j] "-") == 1) {
		s = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i
		print p $NF, s; break } }' /proc/interrupts
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

# ------------------------------------------------------------ frame lengths at the peer
# How long the frames the peer receives are, each one as it came off the
# wire: tc on the peer's ingress (clsact) counts them by em_meta's
# pkt_len, the length after the Ethernet header (and after an 802.1Q tag,
# which the stack takes off before tc runs), with the peer's GRO off: its
# aggregates would be counted instead of the frames. Nothing is dropped.

# peer_len_watch MTU: from now on count the frames the peer receives that
# are longer than MTU after the Ethernet header (no wire of that MTU
# carries them), those of exactly MTU (full-size) and all of them; called
# again, with any MTU, the counts start again from 0. Turns the peer's GRO
# off until peer_len_unwatch.
peer_len_watch() {
	local t=(tc -n "$PEER_NS" filter add dev "$PEER" ingress protocol all)
	pexec ethtool -K "$PEER" gro off || return 1
	tc -n "$PEER_NS" qdisc replace dev "$PEER" clsact || return 1
	tc -n "$PEER_NS" filter del dev "$PEER" ingress 2>/dev/null
	"${t[@]}" pref 1 basic match "meta(pkt_len gt $1)" action pass &&
	"${t[@]}" pref 2 basic match "meta(pkt_len eq $1)" action pass &&
	"${t[@]}" pref 3 matchall action pass
}

# peer_len_counts: "LONGER FULL FRAMES BYTES" counted since peer_len_watch
# was called last: frames longer than its MTU, of exactly its MTU, all of
# them, and their bytes after the Ethernet header.
peer_len_counts() {
	tc -n "$PEER_NS" -s filter show dev "$PEER" ingress | awk '
		/^filter/ { for (i = 1; i < NF; i++) if ($i == "pref") p = $(i + 1) }
		/Sent [0-9]+ bytes [0-9]+ pkt/ { n[p] = $4; b += $2 }
		END { printf "%d %d %d %d\n", n[1], n[2], n[1] + n[2] + n[3], b }'
}

# peer_len_unwatch: the peer's counting filters gone, its GRO on again
# (the virtio peer's default; it stays with the interface when the netns
# goes, so a later test would find it off).
peer_len_unwatch() {
	tc -n "$PEER_NS" qdisc del dev "$PEER" clsact 2>/dev/null
	pexec ethtool -K "$PEER" gro on
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
# The error counters live in the driver's interfaces: an unload (or an
# unbind of every device) loses them. So every unload that goes through
# the library (dut_unload, dut_unbind_all, dut_retire) checks the instance
# going away first, and vmx_done checks the last one; an interface that
# goes alone (a hot unplug, an unbind of one device: dut_retire_ifaces)
# is checked by itself first, the others when they go. The allowances
# are the test's, not an instance's: "# vmx-expects: resets<=N" and
# "bad_desc<=N" (lib/log.sh) bound the sum over every instance and
# interface, so the counts of the instances already gone are kept in
# $VMX_TMP/err-state:
#   UNLOADS CHECKED RESETS BAD FORCED TIMEOUTS
# unloads (and unbinds, unplugs) so far, the current instance already
# checked (1: vmx_done's check, its cleanup's unload does not check
# again), resets beyond the forced ones and bad completions of the
# instances and interfaces checked so far, lines of
# $VMX_TMP/forced-resets (dut_forced_reset) those instances consumed,
# the stack's TX timeouts of the instances and interfaces checked so far.
# Shell builtins but one ethtool per interface: this runs before every
# unload, hundreds of times a run under TCG, where a fork costs tens of ms.

# The bounds are lib/log.sh's _VMX_RESETS_BOUND, _VMX_BAD_BOUND and
# _VMX_TO_BOUND (the test's header, read once).

_vmx_err_state() {
	_es_unloads=0 _es_checked=0 _es_resets=0 _es_bad=0 _es_forced=0 _es_to=0
	[ -r "$VMX_TMP/err-state" ] &&
		read -r _es_unloads _es_checked _es_resets _es_bad _es_forced _es_to < "$VMX_TMP/err-state"
	return 0
}
_vmx_err_state_save() {
	echo "$_es_unloads $_es_checked $_es_resets $_es_bad $_es_forced $_es_to" > "$VMX_TMP/err-state"
}

# _vmx_if_errors IF: reads the error counters of IF (in this netns):
# prints each non-zero one, "IF NAME VALUE" (TX timeouts per queue; for
# vmx also resets, the device-wide bad_desc and the per-queue
# rxN/txN/xdptxN_bad_desc that say where), and sets _ie_to (TX timeouts),
# _ie_resets and _ie_bad (ethtool -S bad_desc: every queue the interface
# ever had, where the per-queue counts go with their queues at ifdown).
_vmx_if_errors() {
	local f n name val
	_ie_to=0 _ie_resets=0 _ie_bad=0
	for f in /sys/class/net/"$1"/queues/tx-*/tx_timeout; do
		[ -r "$f" ] || continue
		read -r n < "$f"
		[ "$n" = 0 ] && continue
		echo "$1 ${f#/sys/class/net/"$1"/queues/} timeouts: $n"
		_ie_to=$((_ie_to + n))
	done
	[ "$VMX_DRIVER" = vmx ] || return 0
	while read -r name val; do
		case $name in
		resets:) _ie_resets=$val ;;
		bad_desc:) _ie_bad=$val ;;
		*_bad_desc:) ;;
		*) continue ;;
		esac
		[ "$val" = 0 ] || echo "$1 ${name%:} $val"
	done < <(ethtool -S "$1" 2>/dev/null)
	return 0
}

# _vmx_netns_errors VISIBLE: for the driver's interfaces moved into a
# named netns (only looked for when fewer than the PCI devices bound to
# the driver are VISIBLE here), _vmx_if_errors run in that netns; prints
# its lines and then "= TIMEOUTS RESETS BAD IF" per interface.
_vmx_netns_errors() {
	local d ns n=0
	for d in /sys/bus/pci/drivers/"$VMX_DRIVER_NAME"/0000:*; do
		[ -e "$d" ] && n=$((n + 1))
	done
	[ "$n" -gt "$1" ] || return 0
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		# shellcheck disable=SC2016 # expanded in the netns's shell
		ip netns exec "$ns" bash -c "VMX_DRIVER=$VMX_DRIVER
			$(declare -f _vmx_if_errors ifaces_by_driver)"'
			t=$(mktemp)
			for i in $(ifaces_by_driver "$1"); do
				_vmx_if_errors "$i" > "$t"
				sed "s/^/netns $2: /" "$t"
				echo "= $_ie_to $_ie_resets $_ie_bad $i"
			done
			rm -f "$t"' _ "$VMX_DRIVER_NAME" "$ns" 2>/dev/null
	done
}

# _vmx_instance_check [IF...]: the error counters of every interface of
# the driver's current instance (in this netns, and in named netns where
# some were moved), or only of IF... (in this netns: those going away
# alone), added to those of the instances and interfaces before it: TX
# timeouts (sysfs, every queue) summed over the test must stay within
# tx_timeouts<=N (0 without one); for vmx the bad completions
# (ethtool -S bad_desc) summed over the test must stay within bad_desc<=N,
# and the resets beyond those dut_forced_reset did on the interface,
# summed over the test, within resets<=N (both times VMX_TIMEOUT_SCALE).
# An instance fails only for what it added: one over the bound fails that
# instance, not every later one. Prints every non-zero error counter and,
# on failure, why; marks the instance checked (with IF...: marks those
# interfaces' forced resets used, "IF (gone)" in $VMX_TMP/forced-resets,
# still one line each for lib/log.sh, so that a later interface of the
# same name gets none of them). Returns 1 on failure.
_vmx_instance_check() {
	local ifc n i line rc=0 ur=0 ub=0 to=0 v=0
	local -a fr=() ns=()
	local -A forced=() only=()
	_vmx_err_state
	[ -r "$VMX_TMP/forced-resets" ] && mapfile -t fr < "$VMX_TMP/forced-resets"
	for ifc in "$@"; do only[$ifc]=1; done
	for ((i = _es_forced; i < ${#fr[@]}; i++)); do
		forced[${fr[i]}]=$((${forced[${fr[i]}]:-0} + 1))
	done
	# _acc IF: adds IF's _ie_* to the instance's sums
	_acc() {
		n=${forced[$1]:-0}
		[ "$_ie_resets" -gt "$n" ] && echo "$1 resets: $_ie_resets ($n forced with dut_forced_reset)"
		[ "$_ie_resets" -gt "$n" ] && ur=$((ur + _ie_resets - n))
		to=$((to + _ie_to)) ub=$((ub + _ie_bad))
	}
	if [ $# -gt 0 ]; then
		for ifc in "$@"; do
			_vmx_if_errors "$ifc"
			_acc "$ifc"
		done
		# their forced resets are used up; the other interfaces' stay
		for ((i = _es_forced; i < ${#fr[@]}; i++)); do
			[ -z "${only[${fr[i]}]:-}" ] || fr[i]="${fr[i]} (gone)"
		done
		[ ${#fr[@]} = 0 ] || printf '%s\n' "${fr[@]}" > "$VMX_TMP/forced-resets"
	else
		for ifc in $(dut_ifaces); do
			_vmx_if_errors "$ifc"
			_acc "$ifc"
			v=$((v + 1))
		done
		mapfile -t ns < <(_vmx_netns_errors "$v")
		for line in "${ns[@]}"; do
			case $line in
			"= "*) read -r _ _ie_to _ie_resets _ie_bad ifc <<<"$line"
				_acc "$ifc" ;;
			*) echo "$line" ;;
			esac
		done
		_es_forced=${#fr[@]} _es_checked=1
	fi
	_es_resets=$((_es_resets + ur)) _es_bad=$((_es_bad + ub)) _es_to=$((_es_to + to))
	_vmx_err_state_save
	if [ "$to" -gt 0 ] && [ "$_VMX_TO_BOUND" = 0 ]; then
		echo "TX timeouts: $to (none allowed)"
		rc=1
	elif [ "$to" -gt 0 ] && [ "$_es_to" -gt "$_VMX_TO_BOUND" ]; then
		echo "TX timeouts: $to here, $_es_to in the test; allowed $_VMX_TO_BOUND (vmx-expects: tx_timeouts<=N)"
		rc=1
	fi
	if [ "$ur" -gt 0 ] && [ "$_es_resets" -gt "$_VMX_RESETS_BOUND" ]; then
		echo "resets not forced: $ur here, $_es_resets in the test; allowed $_VMX_RESETS_BOUND (vmx-expects: resets<=N times VMX_TIMEOUT_SCALE)"
		rc=1
	fi
	if [ "$ub" -gt 0 ] && [ "$_es_bad" -gt "$_VMX_BAD_BOUND" ]; then
		echo "bad completions: $ub here, $_es_bad in the test; allowed $_VMX_BAD_BOUND (vmx-expects: bad_desc<=N times VMX_TIMEOUT_SCALE)"
		rc=1
	fi
	return $rc
}

# _vmx_counters_check: vmx_done's check of the last instance.
_vmx_counters_check() {
	_vmx_err_state
	echo "before unload #$((_es_unloads + 1)) (the test's last instance)"
	_vmx_instance_check
}

# _vmx_retire_instance WHAT [IF...]: the current instance goes away
# (WHAT, one word: unload, unbind), or only its interfaces IF... (WHAT:
# unplug, unbind). Unless vmx_done checked the instance already, check
# their error counters; a failure becomes the subtest "error counters
# before WHAT #K" (K counts this test's unloads, unbinds and unplugs),
# queued in $VMX_TMP/unload-fails and reported by the next ok/fail/skip
# of the test's own shell (the unload may run inside a check, or in a
# subshell). Returns 0: the removal goes on.
_vmx_retire_instance() {
	local what=$1 k checked
	shift
	_vmx_err_state
	k=$((_es_unloads + 1)) checked=$_es_checked
	if [ "$checked" != 1 ]; then
		if ! _vmx_instance_check "$@" > "$VMX_TMP/unload-fail.$k" 2>&1; then
			echo "$what $k" >> "$VMX_TMP/unload-fails"
		fi
		_vmx_err_state
	fi
	# a new instance is not checked yet; after interfaces that went
	# alone, the rest of this one is still as checked as it was
	_es_unloads=$k
	[ $# -gt 0 ] || _es_checked=0
	_vmx_err_state_save
	return 0
}

# _vmx_flush_unload_fails: report the queued failures of
# _vmx_retire_instance as failed subtests, on the test's TAP output (fd
# _vmx_tap: a check's output is redirected while its command runs). Only
# in the test's own shell: a subshell's subtest numbers are lost.
# shellcheck disable=SC2154 # _vmx_tap is opened by lib.sh
_vmx_flush_unload_fails() {
	local -a q
	local w k
	[ "$BASHPID" = $$ ] && [ -s "$VMX_TMP/unload-fails" ] || return 0
	mapfile -t q < "$VMX_TMP/unload-fails"
	: > "$VMX_TMP/unload-fails"
	for w in "${q[@]}"; do
		k=${w#* }
		_vmx_n=$((_vmx_n + 1)) _vmx_fail=$((_vmx_fail + 1)) _vmx_extra=$((_vmx_extra + 1))
		{
			sed 's/^/#   /' "$VMX_TMP/unload-fail.$k"
			echo "not ok $_vmx_n error counters before ${w%% *} #$k"
			echo "# the driver's error counters beyond what $VMX_TEST allows, lost with that ${w%% *}"
		} >&"$_vmx_tap"
	done
}

# bql_drained [IF]: no TX queue of IF (default the DUT) holds bytes in
# flight (BQL's inflight).
bql_drained() {
	local f v
	for f in /sys/class/net/"${1:-$DUT}"/queues/tx-*/byte_queue_limits/inflight; do
		read -r v <"$f"
		[ "$v" = 0 ] || return 1
	done
}

# if_error_counters IF: the non-zero error counters of IF, one per line
# (_vmx_if_errors), whatever the test's header allows: for a test that
# wants none on one interface.
if_error_counters() { _vmx_if_errors "$1"; }
