#!/usr/bin/env bash
# offloads.sh - turn each changeable offload off and on again (TSO, TX and
# RX checksum, scatter-gather, GSO, GRO, LRO): ethtool -k shows the state
# asked for, TCP both ways and fragmented pings with it off, pings after it
# is back on, every feature as before at the end; fixed features refuse
# to change. Each of them is the device's offer at every revision: one
# vmx lists as fixed or not at all fails (the driver stopped offering it),
# unless the device itself disabled it.
# vmx-timeout: 300
source "$(dirname "$0")/lib.sh"

vmx_setup

export VMX_IPERF_TIME=1
traffic() {
	iperf_check || return 1
	iperf_check -R || return 1
	peer_ping -c 3 -i 0.05 -s 4000 "$DUT_IP" || return 1
	dut_ping -c 3 -i 0.05 -s 4000 "$PEER_IP"
}
pings() {
	peer_ping -c 3 -i 0.05 -s 4000 "$DUT_IP" || return 1
	dut_ping -c 3 -i 0.05 -s 4000 "$PEER_IP"
}
# feature NAME: "on"/"off", with " [fixed]" when it cannot change;
# fstate NAME: only "on"/"off"; fstates GROUP: "name on|off" of every
# feature but GROUP's members (ethtool -K GROUP on sets all of them, e.g.
# tso on also turns on tx-tcp-mangleid-segmentation, off by default).
feature() { ethtool -k "$DUT" | awk -v f="$1:" '$1 == f { $1 = ""; print substr($0, 2) }'; }
fstate() { feature "$1" | cut -d' ' -f1; }
fstates() {
	ethtool -k "$DUT" | awk -F': *' -v g="$1" 'NR > 1 {
		if ($1 !~ /^\t/) top = $1; else if (top == g) next
		split($2, a, " "); print $1, a[1] }'
}

# set_feature NAME on|off: ethtool -K, then ethtool -k must show it so.
set_feature() {
	ethtool -K "$DUT" "$1" "$2" || return 1
	wait_carrier "$DUT" 10 || return 1
	echo "ethtool -k after -K $1 $2: $1: $(feature "$1")"
	[ "$(fstate "$1")" = "$2" ] || { echo "$1 is not $2"; return 1; }
}

# off_on NAME: NAME off (ethtool -k says so), traffic; NAME on again (ethtool
# -k says so), pings; then every feature outside NAME's group is as it was.
off_on() {
	local orig
	fstates "$1" > "$VMX_TMP/k0"
	orig=$(fstate "$1")
	set_feature "$1" off || return 1
	traffic || return 1
	set_feature "$1" on || return 1
	pings || return 1
	[ "$orig" = on ] || set_feature "$1" off || return 1
	fstates "$1" > "$VMX_TMP/k1"
	diff "$VMX_TMP/k0" "$VMX_TMP/k1" > "$VMX_TMP/kdiff" ||
		{ echo "features not back as they were:"; cat "$VMX_TMP/kdiff"; return 1; }
}

for f in tcp-segmentation-offload tx-checksumming rx-checksumming \
	 scatter-gather generic-segmentation-offload generic-receive-offload \
	 large-receive-offload; do
	st=$(feature "$f")
	case "$st" in
	""|*fixed*)
		# every vmxnet3 revision offers these: only the device may take
		# TSO or LRO away (revision 9's disabled offloads, which the
		# test device sets with its disabled-offloads property)
		if { [ "$f" = tcp-segmentation-offload ] && why=$(testdev_disabled_offload "$DUT" tso); } ||
		   { [ "$f" = large-receive-offload ] && why=$(testdev_disabled_offload "$DUT" lro); }; then
			skip "$f off/on" "${st:-not listed}: $why"
		else
			check "$f changeable: vmx offers what the device offers (ethtool -k: ${st:-not listed})" false
		fi
		continue ;;
	esac
	check "$f off/on: ethtool -k shows each state, traffic flows" off_on "$f"
done

# A fixed feature cannot change: ethtool -K asking for the other state
# must leave it as it is and say so (non-zero exit or "Could not change").
fixed_refused() {
	local f st want out erc n=0 rc=0
	ethtool -k "$DUT" | awk -F': *' '/\[fixed\]/ { split($2, a, " "); print $1, a[1] }' \
		> "$VMX_TMP/fixed"
	while read -r f st; do
		want=on
		[ "$st" = on ] && want=off
		out=$(ethtool -K "$DUT" "$f" "$want" 2>&1)
		erc=$?
		n=$((n + 1))
		if [ "$(fstate "$f")" != "$st" ]; then
			echo "$f: fixed $st, $(fstate "$f") after ethtool -K $f $want"
			rc=1
		elif [ $erc = 0 ] && ! printf '%s\n' "$out" | grep -q "Could not change"; then
			echo "$f: ethtool -K $f $want accepted silently: $out"
			rc=1
		fi
	done < "$VMX_TMP/fixed"
	echo "$n fixed features: $(awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $1, $2 }' "$VMX_TMP/fixed")"
	echo "last refusal (exit $erc): $(printf '%s' "$out" | tr '\n' ' ')"
	[ $n -gt 0 ] && [ $rc = 0 ]
}
check "fixed features refuse ethtool -K and keep their state" fixed_refused
check "traffic after the refusals" traffic

vmx_done
