#!/usr/bin/env bash
# Install everything vmx needs to build, boot test guests and run its tests.
# Idempotent: does nothing when everything is already there.
# Sources: Debian's bookworm and bookworm-backports registries only.
set -euo pipefail

PKGS=(build-essential sparse qemu-system-x86 busybox-static xdp-tools bpftool
      libbpf-dev libxdp-dev clang llvm ethtool iproute2 iputils-ping iperf3
      tcpdump socat pciutils python3 python3-yaml rsync kmod zstd xz-utils
      cpio file bc flex bison libelf-dev)
# The test device's QEMU (tools/testdev/build.sh, run by tools/run-tests.sh):
# its build dependencies, plus meson >= 1.5 from bookworm-backports below
# (bookworm's 1.0.1 is too old for QEMU 10.0). build.sh adds the deb-src
# entries and fetches the source itself.
PKGS+=(libglib2.0-dev libpixman-1-dev ninja-build pkg-config python3-venv
       dpkg-dev)

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "setup: must run as root (apt-get install)" >&2
		exit 1
	fi
}

have_612() { ls -d /usr/src/linux-headers-6.12.*-amd64 >/dev/null 2>&1 &&
	     ls /boot/vmlinuz-6.12.*-amd64 >/dev/null 2>&1; }
have_61() { ls -d /usr/src/linux-headers-6.1.0-*-amd64 >/dev/null 2>&1 &&
	    ls /boot/vmlinuz-6.1.0-*-amd64 >/dev/null 2>&1; }
have_src() { ls /usr/src/linux-source-6.12.tar.* >/dev/null 2>&1; }
meson_ok() {
	local v
	v=$(meson --version 2>/dev/null) || return 1
	dpkg --compare-versions "$v" ge 1.5
}
missing_pkgs() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || echo "$p"
	done
}

if have_612 && have_61 && have_src && meson_ok && [ -z "$(missing_pkgs)" ]; then
	exit 0
fi
need_root
export DEBIAN_FRONTEND=noninteractive

BP=/etc/apt/sources.list.d/vmx-bookworm-backports.sources
if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat >"$BP" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
apt-get update -q

missing=$(missing_pkgs)
# shellcheck disable=SC2086
[ -z "$missing" ] || apt-get install -y -q --no-install-recommends $missing

if ! meson_ok; then
	apt-get install -y -q --no-install-recommends -t bookworm-backports meson
fi
if ! have_612; then
	apt-get install -y -q --no-install-recommends -t bookworm-backports \
		linux-image-amd64 linux-headers-amd64
fi
if ! have_src; then
	apt-get install -y -q --no-install-recommends -t bookworm-backports \
		linux-source-6.12
fi
if ! have_61; then
	# bookworm's own 6.1 kernel: newest linux-image-6.1.0-N-amd64 in the
	# archive (not the metapackage, which backports now points at 6.12).
	v=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' |
	    awk '{print $1}' | sed 's/linux-image-//' | sort -V | tail -n1)
	if [ -z "$v" ]; then
		echo "setup: no 6.1 kernel found in the archive" >&2
		exit 1
	fi
	apt-get install -y -q --no-install-recommends \
		"linux-image-$v" "linux-headers-$v"
fi
echo "setup: done"
