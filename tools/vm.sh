#!/usr/bin/env bash
# vm.sh - boot an installed Debian kernel under QEMU and run one command in it.
#
# Usage:
#   tools/vm.sh [options] [-- command [args...]]
#
# Options:
#   --kernel K      6.12 | 6.1 | <full version>   (default: newest 6.12 in /boot)
#                   "6.1" picks the newest /boot/vmlinuz-6.1.*; a full version
#                   such as 6.12.95+deb12-amd64 is used as is. "debug" is
#                   the project's debug 6.12 (KASAN, lockdep, kmemleak,
#                   DMA-API debug, fault injection), cached by
#                   tools/kernels/build.sh (make kernels); it is never
#                   built here. The guest sees its modules at
#                   /lib/modules/$(uname -r) (a link to the cache).
#                   "newest" is the newest kernel Debian ships as source
#                   (7.x, non-debug), cached by tools/kernels/newest.sh,
#                   booted the same way.
#   --nic TYPE      vmxnet3 | vmxnet3t[:PROP=VAL,...] | virtio; repeatable, in
#                   PCI order. All these NICs join one QEMU hub (hubid 0): a
#                   private wire inside the guest. vmxnet3t is the project's
#                   test device (tools/testdev: revisions up to 9, RX data
#                   ring, RSS, strict checks, counters...), by default
#                   max-revision=9,rss=on,strict=on; PROPs as in
#                   tools/testdev/README.md, e.g. vmxnet3t:max-revision=3 or
#                   vmxnet3t:msix=off. A guest with any vmxnet3t NIC runs the
#                   test device's QEMU (tools/testdev/build.sh builds it once
#                   and then prints the cached binary); its plain vmxnet3
#                   NICs are then that QEMU's revision 1 model. The guest
#                   gets VMX_TESTDEV_NICS="nicN:PROPS ..." (one word per
#                   test-device NIC, with the defaults; empty: none).
#                   Default (without --tap): --nic vmxnet3 --nic virtio.
#   --tap-nic TYPE  the vmxnet3 NIC of --tap: vmxnet3 (default) or
#                   vmxnet3t[:PROP=VAL,...].
#   --tap           add a vmxnet3 NIC and a virtio-net NIC joined through two
#                   vnet_hdr taps on a bridge (MTU 9000) inside a private host
#                   network namespace made for this run and deleted afterwards.
#                   Large frames, TSO from the peer and LRO need this; a hub
#                   carries MTU-sized frames only. Tap NICs come first in PCI
#                   order, then any --nic ones.
#   --hotplug       put every NIC behind its own pcie-root-port (ids rpN) with
#                   device id nicN, so that "device_del nicN" on the monitor
#                   hot-unplugs it.
#   --monitor PATH  QEMU HMP monitor on unix socket PATH (e.g. for device_del).
#   --guest-monitor give the guest the QEMU monitor: a virtio-serial port
#                   named "vmx.monitor" (added after the NICs, so their PCI
#                   addresses do not move) relayed by tools/hmp-relay.py to
#                   QEMU's QMP socket; the guest writes "ID<TAB>HMP command"
#                   lines and reads the output framed by "vmx-hmp-begin ID" /
#                   "vmx-hmp-end ID RC" (hmp, have_hmp in the selftests'
#                   lib/testdev.sh). Sets VMX_GUEST_MONITOR=1 in the
#                   guest. Combine with --hotplug for "device_del nicN".
#   --pm-9p         the three 9p shares (root, project, run) each behind its
#                   own pcie-root-port with x-pcie-pm-no-soft-reset=on (QEMU
#                   8.2+: the test device's QEMU, not Debian 12's 7.2), so
#                   that a system suspend (mem, freeze) does not reset them:
#                   Linux's virtio_pci then skips their freeze/restore
#                   (Linux's 9p has none and would hang after the reset).
#                   Hibernation still resets them.
#   --ramroot       the guest's root is a tmpfs filled at boot (tools/ramroot.py:
#                   the files of the Debian packages the tests use, their
#                   libraries, the modules of the virtio devices, vmxnet3
#                   and the tunnels, VLANs, veth and pktgen), not the
#                   host's / over 9p; the project's top-level files, tools/,
#                   selftests/ and build/$KVER are copied in, and what the
#                   command writes there is copied back to the project
#                   afterwards. Nothing is on 9p while the command runs
#                   (the 9p modules are unloaded), so the guest survives
#                   hibernation, which resets every virtio device.
#   --swap MB       a virtio disk of MB (a sparse file of this run), /dev/vda
#                   in the guest (VMX_SWAP_DEV), for a hibernation image;
#                   implies --ramroot. The guest may reboot (hibernation's
#                   "reboot" mode): its second stage then restores the image
#                   it finds there; a reboot without one ends the run.
#   --hostproc      share the host's /proc read-only as 9p tag "hostproc"
#                   (the benchmark reads QEMU's own threads' CPU time from it:
#                   /proc/self there is QEMU; its vCPU threads are named
#                   "CPU n/TCG" or "CPU n/KVM").
#   --iommu         shorthand: -device intel-iommu before the NICs, and
#                   "intel_iommu=on iommu.strict=1" on the kernel command line.
#   --append ARGS   extra kernel command line (swiotlb=force, pci=nomsi, ...).
#   --qemu ARGS     extra QEMU arguments (word-split), placed before the NICs,
#                   e.g. --qemu "-device intel-iommu".
#   --smp N         vCPUs (default 2).   --mem MB   memory (default 2048).
#   --tcg-thread single|multi
#                   TCG threading (default multi, or $VMX_TCG_THREAD); single
#                   runs all vCPUs in one host thread.
#   --timeout S     kill QEMU after S seconds and fail (default 900).
#   --log FILE      write the guest console to FILE (truncated first).
#   --quiet         do not copy the console to stdout (only to --log).
#   --env VAR=VAL   export VAR in the guest; repeatable. Every VMX_* and
#                   TESTS variable of the caller is passed on as well.
#   --dir DIR       project tree shared writable into the guest at the same
#                   path, and the guest command's cwd (default: this repo).
#   -h | --help
#
# Everything after "--" runs as root in the guest under bash, cwd = project
# dir, each argument kept as one word; use -- bash -c '...' for a pipeline.
# Without a command, an interactive shell is started on the console (needs a
# terminal; leave QEMU with Ctrl-a x).
#
# Guest: host / shared read-only over 9p with a tmpfs overlay (so every host
# binary and /lib/modules/$KVER are there), the project dir writable over 9p,
# tmpfs on /tmp and /run, bpffs on /sys/fs/bpf, debugfs, lo up. No udev: no
# module autoloading, interfaces are eth0.. in PCI order. MACs are
# 52:54:00:12:34:NN with NN the NIC's position (01, 02, ...).
#
# Exit status: the command's own exit status; 124 when --timeout killed
# QEMU; 125 when the guest ended without reporting a status (panic, crash);
# 2 for a usage error; 3 when the kernel, QEMU or the initramfs is missing.
#
# The initramfs (busybox-static + 9p/overlay modules of that kernel) is built
# on demand and cached in .cache/initramfs/ (rebuilt when stale).
# QEMU: qemu-system-x86_64 from PATH (Debian's, the stock device), the test
# device's build when a NIC is vmxnet3t; VMX_QEMU=PATH overrides both.
# KVM is used when a probe boot proves /dev/kvm runs a guest (remembered per
# host boot in .cache/kvm-probe.*), TCG (-cpu max) if not; VMX_ACCEL=kvm|tcg
# forces either.
#
# Examples:
#   tools/vm.sh -- uname -r
#   tools/vm.sh --kernel 6.1 --nic vmxnet3 --nic vmxnet3 --nic virtio -- ip -br link
#   tools/vm.sh --iommu --append swiotlb=force -- bash -c 'dmesg | grep -i dmar'
#   tools/vm.sh --tap --log /tmp/tap.log -- selftests/drivers/net/vmx/lro.sh
set -u

ME=vm.sh
TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJ=$(cd "$TOOLS_DIR/.." && pwd)

KERNEL=6.12
NICS=()
TAP=0
TAP_NIC=vmxnet3
# what a test-device NIC offers unless its PROPs say otherwise
TESTDEV_DEFAULTS="max-revision=9,rss=on,strict=on"
HOTPLUG=0
PM_9P=0
RAMROOT=0
SWAP_MB=0
MONITOR=
GUEST_MON=0
APPEND=
QEMU_EXTRA=()
SMP=2
TCG_THREAD=${VMX_TCG_THREAD:-multi}
MEM=2048
TIMEOUT=900
LOG=
QUIET=0
ENVS=()
CMD=()

die() { echo "$ME: $*" >&2; exit 2; }
fatal() { echo "$ME: $*" >&2; exit 3; }
usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) [ $# -ge 2 ] || die "--kernel needs a value"; KERNEL=$2; shift ;;
	--nic) [ $# -ge 2 ] || die "--nic needs a value"
		case "$2" in vmxnet3|virtio|vmxnet3t|vmxnet3t:*) NICS+=("$2") ;;
		*) die "--nic: unknown type '$2' (vmxnet3|vmxnet3t[:PROPS]|virtio)" ;; esac
		shift ;;
	--tap) TAP=1 ;;
	--tap-nic) [ $# -ge 2 ] || die "--tap-nic needs a value"
		case "$2" in vmxnet3|vmxnet3t|vmxnet3t:*) TAP_NIC=$2 ;;
		*) die "--tap-nic: vmxnet3 or vmxnet3t[:PROPS], not '$2'" ;; esac
		shift ;;
	--hotplug) HOTPLUG=1 ;;
	--pm-9p) PM_9P=1 ;;
	--ramroot) RAMROOT=1 ;;
	--swap) [ $# -ge 2 ] || die "--swap needs a size in MB"; SWAP_MB=$2; RAMROOT=1; shift ;;
	--hostproc) QEMU_EXTRA+=(-virtfs "local,path=/proc,mount_tag=hostproc,security_model=none,readonly=on,multidevs=remap") ;;
	--monitor) [ $# -ge 2 ] || die "--monitor needs a path"; MONITOR=$2; shift ;;
	--guest-monitor) GUEST_MON=1 ;;
	--iommu) QEMU_EXTRA+=(-device intel-iommu)
		APPEND="$APPEND intel_iommu=on iommu.strict=1" ;;
	--append) [ $# -ge 2 ] || die "--append needs a value"; APPEND="$APPEND $2"; shift ;;
	--qemu) [ $# -ge 2 ] || die "--qemu needs a value"
		# shellcheck disable=SC2206
		QEMU_EXTRA+=($2); shift ;;
	--smp) [ $# -ge 2 ] || die "--smp needs a value"; SMP=$2; shift ;;
	--mem) [ $# -ge 2 ] || die "--mem needs a value"; MEM=$2; shift ;;
	--tcg-thread) [ $# -ge 2 ] || die "--tcg-thread needs single|multi"
		TCG_THREAD=$2; shift ;;
	--timeout) [ $# -ge 2 ] || die "--timeout needs a value"; TIMEOUT=$2; shift ;;
	--log) [ $# -ge 2 ] || die "--log needs a file"; LOG=$2; shift ;;
	--quiet) QUIET=1 ;;
	--env) [ $# -ge 2 ] || die "--env needs VAR=VAL"
		[[ "$2" == [A-Za-z_]*=* ]] || die "--env: expected VAR=VAL, got '$2'"
		ENVS+=("$2"); shift ;;
	--dir) [ $# -ge 2 ] || die "--dir needs a directory"
		PROJ=$(cd "$2" && pwd) || die "--dir: no such directory '$2'"; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; CMD=("$@"); break ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	shift
done

[[ "$SMP" =~ ^[0-9]+$ ]] || die "--smp: not a number: $SMP"
[[ "$MEM" =~ ^[0-9]+$ ]] || die "--mem: not a number: $MEM"
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die "--timeout: not a number: $TIMEOUT"
[[ "$SWAP_MB" =~ ^[0-9]+$ ]] || die "--swap: not a number: $SWAP_MB"
case "$TCG_THREAD" in single|multi) ;; *) die "--tcg-thread: single or multi, not '$TCG_THREAD'" ;; esac
[ $TAP = 1 ] || [ ${#NICS[@]} -gt 0 ] || NICS=(vmxnet3 virtio)
if [ ${#CMD[@]} -eq 0 ] && ! [ -t 0 ]; then
	die "no command given and stdin is not a terminal"
fi

# ---------------------------------------------------------------- kernel
# resolve_kernel SPEC: print the full version of an installed kernel.
resolve_kernel() {
	local spec=$1 v best=
	if [ -e "/boot/vmlinuz-$spec" ]; then
		echo "$spec"; return 0
	fi
	for f in /boot/vmlinuz-"$spec".*; do
		[ -e "$f" ] || continue
		v=${f#/boot/vmlinuz-}
		[ -d "/lib/modules/$v" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -n "$best" ] || return 1
	echo "$best"
}
# MODROOT: where lib/modules/$KVER is ("" = /); the guest links it into place.
MODROOT=
# the initramfs cache's name: one per kernel build
INITRD_NAME=
if [ "$KERNEL" = debug ] || [ "$KERNEL" = newest ]; then
	# the kernels tools/kernels builds: cache dir from their script
	kbuild=build.sh
	[ "$KERNEL" = newest ] && kbuild=newest.sh
	kdir=$("$TOOLS_DIR/kernels/$kbuild" --cached) ||
		fatal "the $KERNEL kernel is not built: run tools/kernels/$kbuild"
	KVER=$(cat "$kdir/kver")
	VMLINUZ=$kdir/bzImage
	MODROOT=$kdir/modules
	INITRD_NAME=${kdir##*/}
else
	KVER=$(resolve_kernel "$KERNEL") ||
		fatal "no installed kernel matches '$KERNEL' (have: $(cd /boot && ls vmlinuz-* 2>/dev/null | sed 's/vmlinuz-//' | tr '\n' ' ')); run tools/setup.sh"
	VMLINUZ=/boot/vmlinuz-$KVER
fi
MODDIR=$MODROOT/lib/modules/$KVER
[ -r "$VMLINUZ" ] || fatal "$VMLINUZ not readable"
[ -d "$MODDIR" ] || fatal "$MODDIR missing"
# QEMU binary: VMX_QEMU overrides; a guest with a test-device NIC runs the
# test device's QEMU (tools/testdev/build.sh builds it once, then prints
# the cached binary).
QEMU_BIN=${VMX_QEMU:-}
if [ -z "$QEMU_BIN" ]; then
	QEMU_BIN=qemu-system-x86_64
	case " ${NICS[*]} $TAP_NIC " in *" vmxnet3t"*)
		QEMU_BIN=$("$TOOLS_DIR/testdev/build.sh") ||
			fatal "the vmxnet3 test device did not build (tools/testdev/build.sh)" ;;
	esac
fi
command -v "$QEMU_BIN" >/dev/null || fatal "$QEMU_BIN not installed; run tools/setup.sh"
# make coverage (tools/coverage/README.md): VMX_COVERAGE=DIR, inside the
# project (the guest writes there), runs the guest under TCG with the
# vmxcount plugin recording the blocks executed in module space into
# DIR/TAG.tb; the guest's lib/driver.sh writes where each vmx load put its
# sections into DIR/TAG.loads; DIR/TAG.kver is the kernel. TAG:
# VMX_COVERAGE_TAG (run-tests.sh: the group), else one of this run's own.
if [ -n "${VMX_COVERAGE:-}" ]; then
	mkdir -p "$VMX_COVERAGE" || fatal "VMX_COVERAGE: cannot create $VMX_COVERAGE"
	VMX_COVERAGE=$(cd "$VMX_COVERAGE" && pwd)
	case "$VMX_COVERAGE/" in
	"$PROJ"/*) ;;
	*) fatal "VMX_COVERAGE must be inside $PROJ (the guest writes its load addresses there)" ;;
	esac
	export VMX_COVERAGE
	export VMX_COVERAGE_TAG=${VMX_COVERAGE_TAG:-vm-$(date +%Y%m%d-%H%M%S)-$$}
	[ "${VMX_ACCEL:-auto}" != kvm ] || fatal "VMX_COVERAGE needs TCG (the plugin), not VMX_ACCEL=kvm"
	case " ${QEMU_EXTRA[*]} " in *" -plugin "*)
		fatal "VMX_COVERAGE: this guest already loads a plugin (--qemu -plugin)" ;;
	esac
	VMX_ACCEL=tcg
	cov_plugin=$("$TOOLS_DIR/count/build.sh" "$QEMU_BIN") ||
		fatal "the coverage plugin did not build (tools/count/build.sh $QEMU_BIN)"
	QEMU_EXTRA+=(-plugin "$cov_plugin/vmxcount.so,out=$VMX_COVERAGE/$VMX_COVERAGE_TAG.marks,io=off,insns=off,cov=$VMX_COVERAGE/$VMX_COVERAGE_TAG.tb")
	echo "$KVER" >"$VMX_COVERAGE/$VMX_COVERAGE_TAG.kver"
fi
[ -x /bin/busybox ] || fatal "/bin/busybox missing; run tools/setup.sh (busybox-static)"

# ---------------------------------------------------------------- initramfs
# The first-stage /init, run by busybox inside the initramfs.
init_script() {
	cat <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
# vm.sh --ramroot appended a second archive holding rr/: the root is a
# tmpfs filled from it, nothing of the host's root is mounted, and the 9p
# modules wait for the second stage (which unloads them around the command)
if [ -d /rr ]; then
	mount -t tmpfs -o mode=0755 tmpfs /newroot
	cp -a /rr/. /newroot/ || { echo "init: cannot fill the RAM root"; sleep 1; poweroff -f; }
	mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp /newroot/run \
		/newroot/root /newroot/mnt /newroot/var/tmp /newroot/.vmx-modules
	cp /modules.list /modules/* /newroot/.vmx-modules/
	cp /stage2 /newroot/.vmx-stage2
	for d in proc sys dev; do mount --move /$d /newroot/$d; done
	exec switch_root /newroot /bin/sh /.vmx-stage2
fi
for m in $(cat /modules.list); do
	insmod "/modules/$m" || echo "init: insmod $m failed"
done
opts=trans=virtio,version=9p2000.L,msize=512000
i=0
until mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower; do
	i=$((i + 1))
	if [ $i -ge 50 ]; then
		echo "init: cannot mount the host root over 9p"
		sleep 1; poweroff -f
	fi
	sleep 0.1
done
mount -t tmpfs -o mode=0755 tmpfs /ovl
mkdir -p /ovl/upper /ovl/work
if ! mount -t overlay -o lowerdir=/lower,upperdir=/ovl/upper,workdir=/ovl/work \
		overlay /newroot; then
	echo "init: overlay mount failed"; sleep 1; poweroff -f
fi
cp /stage2 /newroot/.vmx-stage2
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot /bin/sh /.vmx-stage2
EOF
}

# The second stage, run by the host's /bin/sh inside the new root.
stage2_script() {
	cat <<'EOF'
#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=${TERM:-linux}
opts=trans=virtio,version=9p2000.L,msize=512000
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm /run/vmx /run/lock
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# what udev would make: bash process substitution (<(...)) needs /dev/fd
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mount -t bpf -o mode=0700 bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
RAMROOT=0
[ -d /.vmx-modules ] && RAMROOT=1
# ninep_on / ninep_off: load and unload the 9p transport (RAM root only:
# with nothing bound to the 9p devices, a hibernation can reset them)
ninep_on() {
	for m in $(cat /.vmx-modules/modules.list); do
		grep -q "^${m%.ko} " /proc/modules || insmod "/.vmx-modules/$m" ||
			echo "stage2: insmod $m failed"
	done
}
ninep_off() {
	for m in $(tac /.vmx-modules/modules.list); do
		case $m in 9p.ko|9pnet_virtio.ko|9pnet.ko|netfs.ko|fscache.ko) rmmod "${m%.ko}" ;; esac
	done
}
if [ $RAMROOT = 1 ]; then
	# A swap disk holding a hibernation image: this boot is its restore
	# (writing the disk's device number to /sys/power/resume loads the
	# image and returns only if that fails).
	ninep_on   # with virtio_pci, a module on 6.1, before virtio_blk
	modprobe -q virtio_blk
	if [ -b /dev/vda ]; then
		sig=$(dd if=/dev/vda bs=1 skip=4086 count=10 2>/dev/null | tr -d '\0')
		if [ "$sig" = S1SUSPEND ]; then
			echo "vm: restoring the hibernation image on /dev/vda"
			cat /sys/block/vda/dev >/sys/power/resume
			echo "vm: restoring the hibernation image failed"
			/bin/busybox poweroff -f
		fi
	fi
	mkdir -p /mnt/vmxrun /mnt/vmxproj /run/vmx
	mount -t 9p -o "$opts" vmxrun /mnt/vmxrun || echo "stage2: cannot mount vmxrun"
	if [ -e /mnt/vmxrun/booted ]; then
		echo "vm: the guest rebooted without a hibernation image (panic?)"
		umount /mnt/vmxrun; /bin/busybox poweroff -f
	fi
	: >/mnt/vmxrun/booted
	cp /mnt/vmxrun/env /mnt/vmxrun/cmd /run/vmx/
	. /run/vmx/env
	# the project's scripts and the driver built for this kernel
	mount -t 9p -o "$opts" vmxproj /mnt/vmxproj || echo "stage2: cannot mount vmxproj"
	mkdir -p "$VMX_GUEST_PROJ/build"
	(cd /mnt/vmxproj && find . -maxdepth 1 -type f -exec cp -a {} "$VMX_GUEST_PROJ/" \; &&
		cp -a tools selftests "$VMX_GUEST_PROJ/" &&
		{ [ ! -d "build/$(uname -r)" ] || cp -a "build/$(uname -r)" "$VMX_GUEST_PROJ/build/"; }) ||
		echo "stage2: cannot copy the project into the RAM root"
	umount /mnt/vmxproj /mnt/vmxrun
	ninep_off
	touch /run/vmx/start
else
	mount -t 9p -o "$opts" vmxrun /run/vmx || echo "stage2: cannot mount vmxrun"
	. /run/vmx/env
fi
# a kernel whose modules are not in the host's /lib/modules (--kernel debug)
if [ -n "${VMX_GUEST_MODDIR:-}" ] && [ ! -e "/lib/modules/$(uname -r)" ]; then
	mkdir -p /lib/modules   # a RAM root may have none
	ln -s "$VMX_GUEST_MODDIR" "/lib/modules/$(uname -r)"
fi
# the checkout may live under /tmp or /run, now fresh tmpfs mounts
mkdir -p "$VMX_GUEST_PROJ"
[ $RAMROOT = 1 ] ||
	mount -t 9p -o "$opts" vmxproj "$VMX_GUEST_PROJ" || echo "stage2: cannot mount vmxproj"
# the QEMU monitor port (vm.sh --guest-monitor); virtio_console is a
# module on 6.1 and nothing autoloads modules here
[ "${VMX_GUEST_MONITOR:-0}" = 1 ] && modprobe virtio_console
hostname vmx-guest
ip link set lo up
# Keep netstamp_needed_key enabled for the guest's life: every ping and
# tcpdump would otherwise flip it, and each flip patches kernel text with
# int3, which multi-threaded TCG races with ("Oops: int3" seen here).
# -4: without it ping also opens an ICMPv6 socket it never reads, whose
# full receive queue holds the NIC's page_pool pages (16 of them stayed
# in flight after IPv6 fragmented pings, reported as a page_pool leak).
ping -4 -q -i 100000 127.0.0.1 >/dev/null 2>&1 &
cd "$VMX_GUEST_PROJ" || cd /
echo "vm: kernel $(uname -r), command starting" >/dev/kmsg
if [ -s /run/vmx/cmd ]; then
	/bin/bash /run/vmx/cmd
	rc=$?
else
	setsid -c /bin/bash -l
	rc=$?
fi
if [ $RAMROOT = 1 ]; then
	# what the command wrote in the project (results) goes back to it
	cd /
	ninep_on
	mount -t 9p -o "$opts" vmxproj /mnt/vmxproj &&
		(cd "$VMX_GUEST_PROJ" && find . -newer /run/vmx/start -type f -print0 |
			xargs -0 -r cp -a --parents -t /mnt/vmxproj) ||
		echo "stage2: cannot copy the results back to the project"
	umount /mnt/vmxproj
	mount -t 9p -o "$opts" vmxrun /run/vmx || echo "stage2: cannot mount vmxrun"
fi
echo "$rc" >/run/vmx/rc.tmp && mv /run/vmx/rc.tmp /run/vmx/rc
sync
cd /
/bin/busybox poweroff -f
EOF
}

# decompress_ko SRC DST: copy a module, decompressing .xz/.zst/.gz.
decompress_ko() {
	case "$1" in
	*.ko.xz) xz -dc "$1" >"$2" ;;
	*.ko.zst) zstd -qdc "$1" >"$2" ;;
	*.ko.gz) gzip -dc "$1" >"$2" ;;
	*.ko) cp "$1" "$2" ;;
	*) return 1 ;;
	esac
}

build_initramfs() {
	local out=$1 tmp m f name list=() seen=" "
	tmp=$(mktemp -d "${out%/*}/build.XXXXXX") || return 1
	mkdir -p "$tmp"/{bin,dev,proc,sys,modules,lower,ovl,newroot}
	cp /bin/busybox "$tmp/bin/busybox" || return 1
	# virtio_pci is a module on 6.1 (built in on 6.12): load it first.
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		while read -r kind f _; do
			[ "$kind" = insmod ] || continue
			case "$seen" in *" $f "*) continue ;; esac
			seen="$seen$f "
			list+=("$f")
		done < <(modprobe --show-depends -S "$KVER" ${MODROOT:+-d "$MODROOT"} "$m" 2>/dev/null)
	done
	[ ${#list[@]} -gt 0 ] || { echo "$ME: no 9p modules for $KVER" >&2; return 1; }
	: >"$tmp/modules.list"
	for f in "${list[@]}"; do
		name=$(basename "$f"); name=${name%%.ko*}.ko
		decompress_ko "$f" "$tmp/modules/$name" || {
			echo "$ME: cannot unpack $f" >&2; return 1; }
		echo "$name" >>"$tmp/modules.list"
	done
	init_script >"$tmp/init"
	stage2_script >"$tmp/stage2"
	chmod 755 "$tmp/init" "$tmp/stage2"
	(cd "$tmp" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$tmp.cpio.gz" || return 1
	rm -rf "$tmp"
	mv -f "$tmp.cpio.gz" "$out"
}

CACHE=$PROJ/.cache
mkdir -p "$CACHE/initramfs" "$CACHE/runs" || fatal "cannot create $CACHE"
[ -e "$CACHE/.gitignore" ] || echo '*' >"$CACHE/.gitignore"
INITRD=$CACHE/initramfs/${INITRD_NAME:-$KVER}.cpio.gz
stale=0
if [ ! -s "$INITRD" ]; then
	stale=1
else
	for f in "${BASH_SOURCE[0]}" /bin/busybox "$MODDIR/modules.dep"; do
		[ "$f" -nt "$INITRD" ] && stale=1
	done
fi
if [ $stale = 1 ]; then
	build_initramfs "$INITRD" || fatal "initramfs build for $KVER failed"
fi

# ---------------------------------------------------------------- run dir
RUN=$(mktemp -d "$CACHE/runs/run.XXXXXX") || fatal "mktemp failed"
NETNS=
QPID=
RELAY_PID=
SOCKDIR=
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	[ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null
	[ -n "$NETNS" ] && ip netns del "$NETNS" 2>/dev/null
	[ -n "$SOCKDIR" ] && rm -rf "$SOCKDIR"
	rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# testdev_nics: "nicN:PROPS" for every test-device NIC (the selftests'
# lib/testdev.sh can tell which vmxnet3 NIC offers what; qom-get nicN
# stat-... reads its counters).
testdev_nics() {
	local n i=0 all=()
	[ $TAP = 1 ] && all+=("$TAP_NIC" virtio)
	all+=("${NICS[@]}")
	for n in "${all[@]}"; do
		i=$((i + 1))
		case "$n" in
		vmxnet3t) printf 'nic%d:%s ' $i "$TESTDEV_DEFAULTS" ;;
		vmxnet3t:*) printf 'nic%d:%s,%s ' $i "$TESTDEV_DEFAULTS" "${n#vmxnet3t:}" ;;
		esac
	done
}
{
	printf 'export VMX_GUEST_PROJ=%q\n' "$PROJ"
	# the tests work around known QEMU device-model bugs by version
	printf 'export VMX_QEMU_VERSION=%q\n' \
		"$("$QEMU_BIN" --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p')"
	# the test device's properties per vmxnet3 NIC (empty: stock model)
	printf 'export VMX_TESTDEV_NICS=%q\n' "$(testdev_nics)"
	while IFS='=' read -r k _; do
		[[ "$k" == VMX_* || "$k" == TESTS ]] || continue
		printf 'export %s=%q\n' "$k" "${!k}"
	done < <(env | grep -E '^(VMX_[A-Za-z0-9_]*|TESTS)=' )
	for e in "${ENVS[@]}"; do
		printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
	done
	echo "export VMX_GUEST_MONITOR=$GUEST_MON"
	echo "export VMX_RAMROOT=$RAMROOT"
	[ "$SWAP_MB" = 0 ] || echo "export VMX_SWAP_DEV=/dev/vda"
	[ -n "$MODROOT" ] && printf 'export VMX_GUEST_MODDIR=%q\n' "$MODDIR"
} >"$RUN/env"
if [ ${#CMD[@]} -gt 0 ]; then
	{ printf '%q ' "${CMD[@]}"; echo; } >"$RUN/cmd"
else
	: >"$RUN/cmd"
fi

# The RAM root: the initramfs with the archive of tools/ramroot.py after it
# (the kernel unpacks both), for this run only.
if [ $RAMROOT = 1 ]; then
	python3 "$TOOLS_DIR/ramroot.py" --kver "$KVER" ${MODROOT:+--moddir "$MODROOT"} \
		--module virtio_blk --module vmxnet3 --module virtio_net \
		--module virtio_console --module 8021q --module vxlan \
		--module geneve --module veth --module pktgen \
		"$RUN/ramroot.cpio.gz" || fatal "cannot build the RAM root (tools/ramroot.py)"
	cat "$INITRD" "$RUN/ramroot.cpio.gz" >"$RUN/initrd" || fatal "cannot write $RUN/initrd"
	rm -f "$RUN/ramroot.cpio.gz"
	INITRD=$RUN/initrd
fi

# ---------------------------------------------------------------- qemu
# kvm_ok: does KVM run a guest here? /dev/kvm may exist and still refuse
# Debian kernels (kvm_pvm: nested PVM). Only a boot proves it: the kernel
# must print its banner within 30 s. The answer is kept per host boot.
kvm_ok() {
	local boot f out
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || { KVM_WHY="no usable /dev/kvm"; return 1; }
	boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)
	f=$CACHE/kvm-probe.$boot
	if [ ! -s "$f" ]; then
		rm -f "$CACHE"/kvm-probe.*
		out=$(timeout -k 5 30 "$QEMU_BIN" -nodefaults -machine q35 \
			-accel kvm -cpu host -m 256 -display none -no-reboot \
			-kernel "$VMLINUZ" -append "console=ttyS0 panic=-1" \
			-serial stdio </dev/null 2>&1 | head -c 65536)
		if grep -q "Linux version" <<<"$out"; then
			echo ok >"$f"
		else
			echo "failed: $(grep -m1 -iE 'error|fail|assert' <<<"$out" | cut -c1-120)" >"$f"
		fi
	fi
	KVM_WHY=$(cat "$f")
	[ "$KVM_WHY" = ok ]
}

ACCEL=(-accel "tcg,thread=$TCG_THREAD" -cpu max)
MACHINE=q35
use_kvm=0
case "${VMX_ACCEL:-auto}" in
kvm) use_kvm=1 ;;
tcg) ;;
auto)
	if kvm_ok; then
		use_kvm=1
	elif [ -e /dev/kvm ]; then
		echo "$ME: /dev/kvm does not run a guest here ($KVM_WHY); using TCG (VMX_ACCEL=kvm|tcg forces)" >&2
	fi ;;
*) die "VMX_ACCEL: kvm, tcg or auto, not '$VMX_ACCEL'" ;;
esac
if [ $use_kvm = 1 ]; then
	ACCEL=(-accel kvm -cpu host)
	# An intel-iommu with interrupt remapping needs the split irqchip
	# under KVM; TCG has no in-kernel irqchip at all.
	case " ${QEMU_EXTRA[*]} " in *intel-iommu*) MACHINE="q35,kernel-irqchip=split" ;; esac
fi

QEMU=("$QEMU_BIN" -nodefaults -name "vmx,debug-threads=on"
      -machine "$MACHINE" "${ACCEL[@]}"
      -smp "$SMP" -m "$MEM" -display none
      -kernel "$VMLINUZ" -initrd "$INITRD"
      -append "console=ttyS0 quiet panic=-1 rdinit=/init $APPEND"
)
# A guest hibernating to its swap disk reboots to restore (the second
# stage ends a run that reboots without an image); any other ends on reboot.
[ "$SWAP_MB" != 0 ] || QEMU+=(-no-reboot)
# the 9p shares: TAG PATH [readonly]
shares=("hostroot / readonly" "vmxproj $PROJ" "vmxrun $RUN")
for i in "${!shares[@]}"; do
	read -r tag path ro <<< "${shares[$i]}"
	ro=${ro:+,readonly=on}
	if [ "$PM_9P" = 1 ]; then
		QEMU+=(-fsdev "local,id=fs9p$i,path=$path,security_model=none,multidevs=remap$ro"
		       -device "pcie-root-port,id=rp9p$i,chassis=$((200 + i)),slot=$((200 + i))"
		       -device "virtio-9p-pci,fsdev=fs9p$i,mount_tag=$tag,bus=rp9p$i,x-pcie-pm-no-soft-reset=on")
	else
		QEMU+=(-virtfs "local,path=$path,mount_tag=$tag,security_model=none,multidevs=remap$ro")
	fi
done
if [ -n "$MONITOR" ]; then
	QEMU+=(-monitor "unix:$MONITOR,server=on,wait=off")
fi
if [ ${#CMD[@]} -gt 0 ]; then
	QEMU+=(-serial stdio)
else
	QEMU+=(-serial mon:stdio)
fi
QEMU+=("${QEMU_EXTRA[@]}")

nicno=0
# add_nic TYPE NETDEV-ARGS
add_nic() {
	local model mac bus='' props=''
	nicno=$((nicno + 1))
	case "$1" in
	vmxnet3) model=vmxnet3 ;;
	vmxnet3t) model=vmxnet3; props=",$TESTDEV_DEFAULTS" ;;
	vmxnet3t:*) model=vmxnet3; props=",$TESTDEV_DEFAULTS,${1#vmxnet3t:}" ;;
	virtio) model=virtio-net-pci ;;
	esac
	mac=$(printf '52:54:00:12:34:%02x' $nicno)
	if [ $HOTPLUG = 1 ]; then
		QEMU+=(-device "pcie-root-port,id=rp$nicno,chassis=$nicno,slot=$nicno")
		bus=",bus=rp$nicno"
	fi
	QEMU+=(-netdev "$2" -device "$model,netdev=n$nicno,mac=$mac,id=nic$nicno,romfile=$bus$props")
}
if [ $TAP = 1 ]; then
	add_nic "$TAP_NIC" "tap,id=n1,ifname=tap0,script=no,downscript=no,vnet_hdr=on"
	add_nic virtio "tap,id=n2,ifname=tap1,script=no,downscript=no,vnet_hdr=on"
fi
for n in "${NICS[@]}"; do
	add_nic "$n" "hubport,id=n$((nicno + 1)),hubid=0"
done
# After the NICs, so that their PCI addresses stay what they are without it.
if [ "$SWAP_MB" != 0 ]; then
	truncate -s "${SWAP_MB}M" "$RUN/swap.img" || fatal "cannot create $RUN/swap.img"
	QEMU+=(-drive "file=$RUN/swap.img,if=none,id=swap,format=raw,cache=unsafe"
	       -device virtio-blk-pci,drive=swap)
fi
# Unix socket paths are limited to 108 bytes: keep them short, in /tmp.
if [ $GUEST_MON = 1 ]; then
	SOCKDIR=$(mktemp -d /tmp/vmx-mon.XXXXXX) || fatal "mktemp failed"
	# shellcheck disable=SC2054  # commas inside QEMU option values
	QEMU+=(-qmp "unix:$SOCKDIR/qmp,server=on,wait=off"
	       -chardev "socket,id=vmxmon,path=$SOCKDIR/port,server=on,wait=off"
	       -device virtio-serial-pci,id=vmxser
	       -device virtserialport,bus=vmxser.0,name=vmx.monitor,chardev=vmxmon)
	python3 "$TOOLS_DIR/hmp-relay.py" "$SOCKDIR/qmp" "$SOCKDIR/port" </dev/null &
	RELAY_PID=$!
fi

RUNNER=()
if [ $TAP = 1 ]; then
	NETNS=vmxtap-$$-$RANDOM
	ip netns add "$NETNS" || fatal "cannot create netns $NETNS (need root)"
	ip -n "$NETNS" link set lo up
	ip -n "$NETNS" link add br0 type bridge || fatal "cannot create bridge"
	for d in tap0 tap1; do
		ip -n "$NETNS" tuntap add dev $d mode tap vnet_hdr || fatal "cannot create $d"
		ip -n "$NETNS" link set $d mtu 9000 master br0 up
	done
	ip -n "$NETNS" link set br0 mtu 9000 up
	RUNNER=(ip netns exec "$NETNS")
fi

if [ -n "$LOG" ]; then
	mkdir -p "$(dirname "$LOG")"
	: >"$LOG" || fatal "cannot write $LOG"
fi
SINK=(cat)
if [ -n "$LOG" ] && [ $QUIET = 1 ]; then
	SINK=(sh -c 'cat >>"$1"' sink "$LOG")
elif [ -n "$LOG" ]; then
	SINK=(tee -a "$LOG")
elif [ $QUIET = 1 ]; then
	SINK=(sh -c 'cat >/dev/null')
fi

start=$(date +%s)
if [ ${#CMD[@]} -gt 0 ]; then
	"${RUNNER[@]}" timeout -k 10 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 |
		sed -u '/warning: hub 0 is not connected to host network/d' |
		"${SINK[@]}"
	qrc=${PIPESTATUS[0]}
else
	"${RUNNER[@]}" timeout -k 10 "$TIMEOUT" "${QEMU[@]}"
	qrc=$?
fi
elapsed=$(( $(date +%s) - start ))

note() {
	echo "$ME: $*" >&2
	[ -n "$LOG" ] && echo "$ME: $*" >>"$LOG"
}
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	note "TIMEOUT: guest killed after ${TIMEOUT}s (kernel $KVER)"
	exit 124
fi
if [ ! -s "$RUN/rc" ]; then
	note "guest ended without an exit status (qemu rc=$qrc, ${elapsed}s, kernel $KVER): crash or panic?"
	exit 125
fi
rc=$(cat "$RUN/rc")
[[ "$rc" =~ ^[0-9]+$ ]] || { note "bad exit status '$rc'"; exit 125; }
[ -n "$LOG" ] && echo "$ME: guest command exited $rc after ${elapsed}s (kernel $KVER)" >>"$LOG"
exit "$rc"
