# lib/faultinj.sh - fault injection aimed at vmx (failslab and
# fail_page_alloc with a stack filter: the debug kernel of tools/kernels).
# Sourced by lib.sh. faults.sh sweeps every allocation point with these;
# other tests refuse the allocations of one operation.

FI=/sys/kernel/debug
FI_ATTRS="failslab fail_page_alloc"
FI_TIMES=1000000

# have_fi: the kernel injects faults with a stack filter (prints why not).
have_fi() {
	local a
	for a in $FI_ATTRS; do
		[ -e "$FI/$a/require-start" ] || { echo "no $FI/$a/require-start (FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_STACKTRACE_FILTER, debugfs)"; return 1; }
	done
	[ -e /proc/self/fail-nth ] || { echo "no /proc/self/fail-nth"; return 1; }
}

# fi_set ATTR FILE VALUE: one fault-injection setting.
fi_set() { echo "$3" > "$FI/$1/$2"; }

# vmx_text_range: "START END" of the loaded vmx module's code (executable
# sections but .init/.exit text), as 0x... for require-start/-end.
vmx_text_range() {
	local ko name size a lo='' hi='' s e
	ko=$(vmx_ko_path)
	while read -r name size; do
		[ -r "/sys/module/vmx/sections/$name" ] || continue
		read -r a < "/sys/module/vmx/sections/$name"
		s=$((a)); e=$((a + 16#$size))
		[ "$s" != 0 ] || { echo "section $name at address 0 (kptr_restrict?)" >&2; return 1; }
		if [ -z "$lo" ] || [ "$s" -lt "$lo" ]; then lo=$s; fi
		if [ -z "$hi" ] || [ "$e" -gt "$hi" ]; then hi=$e; fi
	done < <(readelf -SW "$ko" | sed -n 's/^ *\[ *[0-9]*\] *//p' |
		awk '$7 ~ /X/ && $1 !~ /^\.(init|exit)\./ { print $1, $5 }')
	[ -n "$lo" ] || { echo "no code section of $ko under /sys/module/vmx/sections" >&2; return 1; }
	printf '%#x %#x\n' "$lo" "$hi"
}

# ksym_range NAME: "START END" of the kernel function NAME (END: where
# the next symbol starts), from /proc/kallsyms (address order).
ksym_range() {
	awk -v n="$1" 'f { printf "0x%s 0x%s\n", s, $1; found = 1; exit }
		$3 == n && $2 ~ /^[Tt]$/ && $1 !~ /^0+$/ { f = 1; s = $1 }
		END { if (!found) exit 1 }' /proc/kallsyms
}

# fi_arm [FUNC]: both attrs aimed at vmx's code, or at kernel function
# FUNC (default VMX_FAULT_WITHIN; "" for vmx's code), probability 0 (only
# fail-nth or an explicit fi_on injects).
fi_arm() {
	local a r what="vmx code" within=${1-${VMX_FAULT_WITHIN:-}}
	if [ -n "$within" ]; then
		read -r -a r <<<"$(ksym_range "$within")"
		[ ${#r[@]} = 2 ] || { echo "no kernel function $within in /proc/kallsyms"; return 1; }
		what="$within on the stack"
	else
		read -r -a r <<<"$(vmx_text_range)"
	fi
	[ ${#r[@]} = 2 ] || return 1
	for a in $FI_ATTRS; do
		fi_set $a probability 0 && fi_set $a interval 1 && fi_set $a space 0 &&
		fi_set $a times $FI_TIMES && fi_set $a verbose "${VMX_FAULT_VERBOSE:-1}" &&
		fi_set $a task-filter N && fi_set $a ignore-gfp-wait N &&
		fi_set $a stacktrace-depth 32 &&
		fi_set $a require-start "${r[0]}" && fi_set $a require-end "${r[1]}" &&
		fi_set $a reject-start 0 && fi_set $a reject-end 0 || return 1
	done
	fi_set fail_page_alloc min-order 0 && fi_set fail_page_alloc ignore-gfp-highmem N &&
		fi_set failslab cache-filter N || return 1
	echo "failslab, fail_page_alloc: require ${r[0]}..${r[1]} ($what), ignore-gfp-wait N, min-order 0"
}

# fi_on ATTR... / fi_off: every allocation from vmx code fails (probability
# 100) / none does.
fi_on() { local a; for a in "$@"; do fi_set "$a" probability 100; done; }
fi_off() { local a; for a in $FI_ATTRS; do fi_set $a probability 0; done; }
