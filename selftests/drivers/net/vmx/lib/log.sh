# shellcheck shell=bash
# lib/log.sh - the kernel log checks of the vmx selftests, sourced by
# lib.sh (first of its parts: tools/guest-suite.sh sources lib.sh with
# VMX_LIB_LOGCHECK_ONLY=1 to get this file alone, for the log outside the
# tests and kmemleak). Which lines fail a test (VMX_DMESG_BAD and the
# driver's own), the check of the test's slice of the log vmx_done runs,
# what a test declares it causes on purpose, and kmemleak on the debug
# kernel.
#
# A test's header declares, every allowance bounded:
#   # vmx-expects: resets<=N     the driver's reset work may run N times
#                                (times VMX_TIMEOUT_SCALE, as the
#                                test's timeout), counted in "resetting
#                                the device" lines; each dut_forced_reset
#                                allows one more. The same bound holds
#                                the driver's "resets" counters, summed
#                                over every interface and every instance
#                                of the driver the test loads (each is
#                                checked before its unload)
#   # vmx-expects: bad_desc<=N   the driver may count N bad completions
#                                (ethtool -S rxN/txN/xdptxN_bad_desc,
#                                summed the same way; times
#                                VMX_TIMEOUT_SCALE)
#   # vmx-expects: tx_timeouts<=N
#                                the stack's TX watchdog may fire N
#                                times (sysfs queues/tx-*/tx_timeout,
#                                summed the same way; not scaled: the
#                                watchdog's period is fixed)
#   # vmx-expects-log: REGEX     a log message the test causes on purpose:
#                                REGEX (ERE) must match the whole message,
#                                the driver's "vmx 0000:00:04.0 eth0: "
#                                prefix left out (a line of another
#                                origin: its whole text), e.g.
#                                "MTU [0-9]+ not applied \(-[0-9]+\), keeping [0-9]+"
#                                A "Call Trace:" right after an allowed
#                                line (and the dump's CPU:/Hardware
#                                name: lines) is that line's dump.

# Regex of kernel log lines that fail a test, whoever prints them.
VMX_DMESG_BAD='WARNING:|BUG:|Oops|Call Trace|general protection fault|kernel BUG|UBSAN|KASAN|refcount_t:|list_(add|del) corruption|NETDEV WATCHDOG|DMAR: .*[Ff]ault|DMAR: \[DMA|swiotlb buffer is full|page allocation failure|unreferenced object|blocked for more than|soft lockup|rcu.*detected stall|Bad page|skb_over_panic|skb_under_panic|dma_map.*fail|DMA-API'
# The driver's own trouble, matched on its lines ("vmx 0000:01:00.0 eth0:
# ..."): on top of every line it logs at KERN_WARNING or worse
# (netdev_err: "txq 0 error", "device refused activation", "restart
# failed"...; netdev_warn: "RX rings reduced ...": a warning is the driver
# saying something went wrong, so a test that causes one declares it).
VMX_DMESG_DRV_BAD='bad completion|completion for index|resetting|timed out|transmit queue'
# Lines that match the above and are no trouble (CPU vulnerability advice).
VMX_DMESG_BENIGN='hw-vuln/'

# _vmx_drv_prefix: ERE of the prefix of the driver's lines, dev_*()'s
# "vmx 0000:00:04.0: " and netdev_*()'s "vmx 0000:00:04.0 eth0: " (an
# interface name holds no colon; "eth0 (unregistered)" is one too).
_vmx_drv_prefix() {
	echo "(vmx|${VMX_DRIVER_NAME:-vmx}) [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]( [^:]+)?: "
}

# The lines of a stack dump between the line that announced it and its
# "Call Trace:" (dump_stack_print_info: CPU, taints, machine, workqueue).
_VMX_DUMP_INFO='^[0-9]+ (CPU: |Tainted: |Hardware name: |Workqueue: |Stopper: |Sched_ext: )'

# kernel_log_bad [ALLOW]: read `dmesg -r` lines (raw: "<level>[time] msg")
# on stdin and print, without the prefix, those that fail a test: any line
# matching VMX_DMESG_BAD; any line of the driver under test at
# KERN_WARNING or worse or matching VMX_DMESG_DRV_BAD. Lines whose whole
# message (the driver's prefix left out) matches the ERE ALLOW, what the
# test declared it causes, do not count: ALLOW is matched as ^(ALLOW)$.
# Neither does a "Call Trace:" that follows an allowed line with only
# its dump's info lines between: the dump belongs to that line (fault
# injection and page allocation failures dump the stack after their own
# line; that line is what a test declares).
kernel_log_bad() {
	local drv i j
	local -a l
	local -A ok=()
	drv=$(_vmx_drv_prefix)
	# "LEVEL MESSAGE"; a continuation line of a multi-line record (no
	# "<level>[time]" of its own) becomes "- TEXT": never a message
	mapfile -t l < <(sed -E -e 's/^<([0-9]+)>\[[^]]*\] ?/\1 /' -e t -e 's/^/- /')
	[ ${#l[@]} -gt 0 ] || return 0
	# the allowed lines (numbers from 1), matched on the bare message
	if [ -n "${1:-}" ]; then
		for i in $(printf '%s\n' "${l[@]}" | sed -E -e 's/^[0-9]+ //' -e "s/^$drv//" |
				grep -nE -e "^($1)\$" | cut -d: -f1); do
			ok[$i]=1
		done
	fi
	for i in $(printf '%s\n' "${l[@]}" |
			grep -nE -e "^[0-9]+ .*($VMX_DMESG_BAD)" \
				-e "^[0-4] $drv" -e "^[0-9]+ $drv.*($VMX_DMESG_DRV_BAD)" |
			grep -Ev -e "^[0-9]+:.*($VMX_DMESG_BENIGN)" | cut -d: -f1); do
		[ -z "${ok[$i]:-}" ] || continue
		if [[ ${l[i - 1]} =~ ^[0-9]+\ Call\ Trace:$ ]]; then
			# look back over the dump's info lines for its announcer
			for ((j = i - 1; j >= 1 && j >= i - 8; j--)); do
				[[ ${l[j - 1]} =~ ^-\  || ${l[j - 1]} =~ $_VMX_DUMP_INFO ]] || break
			done
			[ "$j" -ge 1 ] && [ "$j" -ge $((i - 8)) ] && [ -n "${ok[$j]:-}" ] && continue
		fi
		printf '%s\n' "${l[i - 1]#* }"
	done
	return 0
}

# Lines of the kernel log since this test started.
# shellcheck disable=SC2154 # _vmx_marker is set by lib.sh
dmesg_since_start() {
	dmesg 2>/dev/null | awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 }'
}

# vmx_expects WORD: the test declares, in a "# vmx-expects: WORD..." header
# line, that WORD happens on purpose (guest-suite.sh reads "violations"
# itself; resets need a bound: _VMX_RESETS_BOUND).
vmx_expects() {
	grep -qE "^# vmx-expects:(.*[[:space:]])?$1([[:space:]]|\$)" <<< "$_VMX_HEADER"
}

# _vmx_header_bound WORD: N of the test's "# vmx-expects: WORD<=N" (0
# without one). Fails, saying why, on WORD without a bound: every
# allowance is bounded.
_vmx_header_bound() {
	local w l n=0
	local -a ws
	while IFS= read -r l; do
		[[ $l == "# vmx-expects:"* ]] || continue
		read -r -a ws <<< "${l#"# vmx-expects:"}"
		for w in "${ws[@]}"; do
			case $w in
			"$1<="*)
				n=${w#"$1"<=}
				[[ $n =~ ^[0-9]+$ ]] || { echo "vmx-expects: '$w': the bound is not a number"; return 1; } ;;
			"$1"*)
				echo "vmx-expects: '$w': $1 need a bound ($1<=N)"; return 1 ;;
			esac
		done
	done <<< "$_VMX_HEADER"
	echo "$n"
}

# The header's "# vmx-expects" lines, read once, when the library is
# sourced (each read of the test is a process, tens of milliseconds under
# TCG; the log check and every check before an unload use them).
_VMX_HEADER=$(grep -E '^# vmx-expects(-log)?:' "$0" 2>/dev/null)
# The test's bounds: N as written (_VMX_RESETS_N,
# _VMX_BAD_N) and N times the group's VMX_TIMEOUT_SCALE (3 on the debug
# kernel), as the test's timeout: resets and bad completions caused by
# traffic that runs for a time grow with the time it runs. A bound the
# header gets wrong counts as 0 and its message is kept (_VMX_RESETS_ERR,
# _VMX_BAD_ERR, _VMX_TO_ERR): the log check fails the test with it.
_VMX_RESETS_ERR='' _VMX_BAD_ERR='' _VMX_TO_ERR=''
_VMX_RESETS_N=$(_vmx_header_bound resets) ||
	{ _VMX_RESETS_ERR=$_VMX_RESETS_N; _VMX_RESETS_N=0; }
_VMX_BAD_N=$(_vmx_header_bound bad_desc) ||
	{ _VMX_BAD_ERR=$_VMX_BAD_N; _VMX_BAD_N=0; }
_VMX_TO_BOUND=$(_vmx_header_bound tx_timeouts) ||
	{ _VMX_TO_ERR=$_VMX_TO_BOUND; _VMX_TO_BOUND=0; }
_VMX_RESETS_BOUND=$((_VMX_RESETS_N * ${VMX_TIMEOUT_SCALE:-1}))
_VMX_BAD_BOUND=$((_VMX_BAD_N * ${VMX_TIMEOUT_SCALE:-1}))

# Resets forced with dut_forced_reset in this test (each allows one).
_vmx_forced_resets() {
	local l n=0
	if [ -r "$VMX_TMP/forced-resets" ]; then
		while IFS= read -r l; do
			[ -z "$l" ] || n=$((n + 1))
		done < "$VMX_TMP/forced-resets"
	fi
	echo "$n"
}

# Regex of the log messages this test expects ("# vmx-expects-log:" lines,
# one alternative each; "resetting the device" while resets are allowed,
# their number is checked by _vmx_log_verdict); empty: none.
_vmx_log_allowed() {
	local l r a=
	while IFS= read -r l; do
		[[ $l == "# vmx-expects-log:"* ]] || continue
		r=${l#"# vmx-expects-log:"}
		r=${r#"${r%%[! ]*}"}
		r=${r%"${r##*[![:space:]]}"}
		[ -z "$r" ] || a+="${a:+|}($r)"
	done <<< "$_VMX_HEADER"
	[ $((_VMX_RESETS_BOUND + $(_vmx_forced_resets))) -gt 0 ] && a="${a:+$a|}resetting the device"
	echo "$a"
}

# _vmx_log_verdict: read the test's slice of `dmesg -r` on stdin, print
# what fails the test: the lines kernel_log_bad rejects, more "resetting
# the device" lines than the header's resets<=N plus one per forced reset,
# a reset allowance without a bound. Returns 1 when it printed anything.
_vmx_log_verdict() {
	local slice bound forced n out why
	slice=$(cat)
	for out in "$_VMX_RESETS_ERR" "$_VMX_BAD_ERR" "$_VMX_TO_ERR"; do
		[ -z "$out" ] || { echo "$out"; return 1; }
	done
	bound=$_VMX_RESETS_BOUND
	forced=$(_vmx_forced_resets)
	n=$(printf '%s\n' "$slice" | sed -E 's/^<[0-9]+>\[[^]]*\] ?//' |
		grep -cE "^$(_vmx_drv_prefix)resetting the device\$")
	out=$(printf '%s\n' "$slice" | kernel_log_bad "$(_vmx_log_allowed)")
	if [ "$n" -gt $((bound + forced)) ]; then
		why="$forced forced with dut_forced_reset"
		[ "$bound" = 0 ] ||
			why+=", $bound by vmx-expects: resets<=$_VMX_RESETS_N times VMX_TIMEOUT_SCALE ${VMX_TIMEOUT_SCALE:-1}"
		# first: the kernel_log_check shows only the first 20 lines
		out="$n 'resetting the device' lines, more than the $((bound + forced)) allowed ($why)${out:+$'\n'$out}"
	fi
	[ -z "$out" ] && return 0
	printf '%s\n' "$out"
	return 1
}

# kernel_log_check: this test's kernel log slice (from its start marker
# on) passes _vmx_log_verdict. Fails when the marker itself is missing
# (the log wrapped or could not be written): an unread log is not a clean
# one.
# shellcheck disable=SC2154 # _vmx_marker is set by lib.sh
kernel_log_check() {
	local slice bad drv
	# the slice, read once; awk's status says whether the marker was there
	if ! slice=$(dmesg -r 2>/dev/null |
			awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 } END { exit !f }'); then
		echo "start marker '$_vmx_marker' not in the kernel log: cannot check it"
		return 1
	fi
	# Most slices hold no line the verdict looks at: one grep for any such
	# line (a superset of what it rejects, on the raw lines: a bad line
	# anywhere, a driver line at KERN_WARNING or worse, a driver line
	# naming trouble, resets included) spares its dozen processes.
	drv=$(_vmx_drv_prefix)
	if [ -z "$_VMX_RESETS_ERR$_VMX_BAD_ERR$_VMX_TO_ERR" ] &&
	   ! grep -qE -e "$VMX_DMESG_BAD" -e "^<[0-4]>\[[^]]*\] ?$drv" \
		-e "$drv.*($VMX_DMESG_DRV_BAD)" <<< "$slice"; then
		return 0
	fi
	bad=$(_vmx_log_verdict <<< "$slice") && return 0
	printf '%s\n' "$bad" | head -n 20
	echo "-- context:"
	dmesg_since_start | grep -F -A 12 -f <(printf '%s\n' "$bad" | head -n 5) | head -n 80
	return 1
}

# kernel_oopsed: an Oops/BUG since the test started (printed).
kernel_oopsed() {
	dmesg_since_start | grep -E -A 20 'Oops|BUG:|general protection fault' | head -n 40 | grep .
}

# -------------------------------- kmemleak (the debug kernel of tools/kernels)
# kmemleak keeps backtraces as addresses and names them when read: a frame
# in a module that has since been unloaded (vmx, after a test) shows as a
# bare address, "[<ffffffffc0a01234>] 0xffffffffc0a01234". (The functions
# need nothing else of lib.sh: guest-suite.sh uses them too.)

# have_kmemleak: this kernel has kmemleak and it is still on.
have_kmemleak() { [ -w /sys/kernel/debug/kmemleak ] && cat /sys/kernel/debug/kmemleak >/dev/null 2>&1; }

# kmemleak_scan: one scan (objects younger than 5 s are not reported yet),
# then print every suspected leak record not printed by an earlier call
# and forget them (echo clear: the next call prints only new ones).
kmemleak_scan() {
	echo scan > /sys/kernel/debug/kmemleak || return 1
	cat /sys/kernel/debug/kmemleak
	echo clear > /sys/kernel/debug/kmemleak
}

# kmemleak_vmx: the records of kmemleak_scan's output (stdin) whose
# backtrace has a vmx frame ("[vmx]") or a frame of an unloaded module (a
# bare address: vmx is the module the tests unload).
kmemleak_vmx() {
	awk '/^unreferenced object/ { if (r != "" && m) printf "%s", r; r = ""; m = 0 }
		{ r = r $0 "\n" }
		/\[vmx\]/ || /^ +\[<[0-9a-f]+>\] 0x[0-9a-f]+$/ { m = 1 }
		END { if (r != "" && m) printf "%s", r }'
}
