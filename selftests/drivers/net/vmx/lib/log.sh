# shellcheck shell=bash
# lib/log.sh - the kernel log checks of the vmx selftests, sourced by
# lib.sh (first of its parts: tools/guest-suite.sh sources lib.sh with
# VMX_LIB_LOGCHECK_ONLY=1 to get this file alone, for the log outside the
# tests and kmemleak). Which lines fail a test (VMX_DMESG_BAD and the
# driver's own), the check of the test's slice of the log vmx_done runs,
# what a test declares it causes on purpose ("# vmx-expects:" header
# lines), and kmemleak on the debug kernel.

# Regex of kernel log lines that fail a test, whoever prints them.
VMX_DMESG_BAD='WARNING:|BUG:|Oops|Call Trace|general protection fault|kernel BUG|UBSAN|KASAN|refcount_t:|list_(add|del) corruption|NETDEV WATCHDOG|DMAR: .*[Ff]ault|DMAR: \[DMA|swiotlb buffer is full|page allocation failure|unreferenced object|blocked for more than|soft lockup|rcu.*detected stall|Bad page|skb_over_panic|skb_under_panic|dma_map.*fail|DMA-API'
# The driver's own trouble, matched on its lines ("vmx 0000:01:00.0 eth0:
# ..."): on top of every line it logs at KERN_ERR or worse (netdev_err:
# "txq 0 error", "device refused activation", "restart failed"...).
VMX_DMESG_DRV_BAD='bad completion|completion for index|resetting|timed out|transmit queue'
# Lines that match the above and are no trouble (CPU vulnerability advice).
VMX_DMESG_BENIGN='hw-vuln/'

# kernel_log_bad [ALLOW]: read `dmesg -r` lines (raw: "<level>[time] msg")
# on stdin and print, without the prefix, those that fail a test: any line
# matching VMX_DMESG_BAD; any line of the driver under test at KERN_ERR or
# worse or matching VMX_DMESG_DRV_BAD. Lines matching the regex ALLOW (what
# the test declared it expects) do not count.
kernel_log_bad() {
	local drv="(vmx|${VMX_DRIVER_NAME:-vmx}) [0-9a-f]{4}:[0-9a-f]{2}:"
	sed -E 's/^<([0-9]+)>\[[^]]*\] ?/\1 /' |
		grep -E -e "^[0-9]+ .*($VMX_DMESG_BAD)" \
			-e "^[0-3] $drv" -e "^[0-9]+ $drv.*($VMX_DMESG_DRV_BAD)" |
		grep -Ev -e "$VMX_DMESG_BENIGN" ${1:+-e "$1"} |
		sed -E 's/^[0-9]+ //'
	return 0
}

# Lines of the kernel log since this test started.
# shellcheck disable=SC2154 # _vmx_marker is set by lib.sh
dmesg_since_start() {
	dmesg 2>/dev/null | awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 }'
}

# vmx_expects WORD: the test declares, in a "# vmx-expects: WORD..." header
# line, that WORD happens on purpose. Words: resets (the driver's reset
# work runs: "resetting the device" lines and any resets count). Resets
# forced with dut_forced_reset need no header: each one allows one.
# A "# vmx-expects-log: REGEX" line names other kernel log lines the test
# causes on purpose (e.g. an error the driver must print).
vmx_expects() {
	grep -qE "^# vmx-expects:(.*[[:space:]])?$1([[:space:]]|\$)" "$0" 2>/dev/null
}

# Regex of the log lines this test expects (empty: none).
_vmx_log_allowed() {
	local a
	a=$(sed -n 's/^# vmx-expects-log: *//p' "$0" 2>/dev/null | paste -sd'|')
	{ vmx_expects resets || [ -s "$VMX_TMP/forced-resets" ]; } &&
		a="${a:+$a|}resetting the device\$"
	echo "$a"
}

# kernel_log_check: this test's kernel log slice (from its start marker
# on) holds no line kernel_log_bad rejects. Fails when the marker itself is
# missing (the log wrapped or could not be written): an unread log is not
# a clean one.
# shellcheck disable=SC2154 # _vmx_marker is set by lib.sh
kernel_log_check() {
	local bad
	if ! dmesg 2>/dev/null | grep -qF "$_vmx_marker"; then
		echo "start marker '$_vmx_marker' not in the kernel log: cannot check it"
		return 1
	fi
	bad=$(dmesg -r 2>/dev/null | awk -v m="$_vmx_marker" 'f { print } index($0, m) { f = 1 }' |
		kernel_log_bad "$(_vmx_log_allowed)")
	[ -z "$bad" ] && return 0
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
