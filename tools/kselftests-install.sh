#!/usr/bin/env bash
# kselftests-install.sh - install the kernel's own NIC driver selftests
# (tools/testing/selftests/drivers/net and drivers/net/hw) into
# .cache/kselftests/<version>/, outside git, for
# selftests/drivers/net/vmx/kselftests.sh to run in a guest: the 6.12 tree's
# from the linux-source-6.12 tarball (default), or the newest kernel's own
# copies from its unpacked source tree (--newest, KSFT_SRC).
#
# Usage:
#   tools/kselftests-install.sh            install the 6.12 tests (nothing to
#                                          do when the cache matches the tarball)
#   tools/kselftests-install.sh --newest   install the tests of the newest
#                                          kernel's tree (tools/kernels/newest.sh;
#                                          its sources are unpacked before its
#                                          build starts, so this works while the
#                                          kernel is still being compiled)
#   tools/kselftests-install.sh [--newest] --dir
#                                          print the install directory
#   tools/kselftests-install.sh -h|--help
#
# Environment:
#   KSFT_TARBALL  kernel source tarball (default: /usr/src/linux-source-6.12.tar.xz
#                 or .tar.bz2, installed by tools/setup.sh)
#   KSFT_SRC      an unpacked kernel source tree to install from instead of
#                 the tarball (what --newest sets to the newest kernel's src/)
#   KSFT_NAME     install directory name for KSFT_SRC (default: the name of
#                 the tree's parent directory when it starts with the tree's
#                 version, e.g. 7.3.4-newest-<hash>, else <version>-src); it
#                 must start with the kernel's major.minor: kselftests.sh
#                 picks the install by the running kernel's major.minor
#   KSFT_CACHE    cache top (default: <project>/.cache/kselftests)
#   CLANG, CC     compilers for the tree install (default clang, gcc)
#
# Only the paths the tests use are installed, in the kernel tree's layout, so
# the tests' "in tree" path logic finds the rest (no kselftest-list.txt is
# written: that would switch lib/py to the "installed" layout): the driver
# tests and their python library, the net selftest python library, the YNL
# python library (6.12: tools/net/ynl/lib; newer trees: tools/net/ynl/pyynl)
# and the netlink specs it reads (Documentation/netlink/specs). The
# directory of the tarball install is named after the Debian version of
# linux-source-6.12. A ".installed" stamp records the source (the tarball's
# size and mtime; for a tree, a digest of the installed sources' names, sizes
# and mtimes and of this script) and a different stamp means a fresh install
# (into a temporary directory, renamed into place when complete). A tree
# install replaces older installs of the same major.minor (an older build of
# the newest kernel), so that kselftests.sh finds this one.
#
# A tree install also builds what newer tests run, like the kernel's
# Makefiles would, into the same places: the XDP programs of net/lib and
# drivers/net/hw (*.bpf.c -> *.bpf.o, with clang --target=bpf, the tree's
# libbpf headers and its UAPI headers, prepared into a scratch directory as
# headers_install would, without touching the tree) and the helpers
# net/lib/{csum,gro,xdp_helper}, drivers/net/{napi_id_helper,so_txtime}
# (with gcc). The YNL C programs (psp_responder, toeplitz, ncdevmem) and
# iou-zcrx are not built: their tests are excluded (kselftests.sh). A build
# failure is reported and recorded in .build-failed; the install goes on (the
# tests needing that file fail on their own).
#
# A tree install also puts a newer ethtool into bin/ (kselftests.sh puts it
# first in PATH for that tree's tests): the newer tests read ethtool --json
# -g/-l/-c/-x (and every test waiting for its statistics reads -c through
# lib/py's wait_hw_stats_settle), which bookworm's ethtool 6.1 refuses ("bad
# command line argument(s)"; its JSON output covers -k only; trixie's 6.14
# still has none for -l). It is the ethtool binary package of Debian's
# testing suite (KSFT_ETHTOOL_SUITE, default forky: ethtool 7.2), fetched
# with `apt-get download` through an apt state of its own under
# <cache>/.apt-<suite>/ (only that suite, signed by Debian's trixie key; the
# system's apt sources and status are never touched, nothing is installed),
# verified by apt and unpacked with dpkg-deb; it needs only libc6 >= 2.34 and
# libmnl0, which bookworm has. The .deb stays in that directory, so a later
# install works offline; without it the tests run with the system's ethtool
# (a warning says so). KSFT_ETHTOOL=0 skips this.
#
# Needs python3 and python3-yaml in the guest (the tests load the specs
# without jsonschema validation).
set -u

ME=kselftests-install
TOOLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJ=$(cd "$TOOLS_DIR/.." && pwd)
CACHE=${KSFT_CACHE:-$PROJ/.cache/kselftests}
PKG=linux-source-6.12

# Members of the tarball (below its top directory) to extract; "*" does not
# match "/" (tar --no-wildcards-match-slash).
PATHS=(
	'tools/testing/selftests/drivers/net/README.rst'
	'tools/testing/selftests/drivers/net/Makefile'
	'tools/testing/selftests/drivers/net/*.py'
	'tools/testing/selftests/drivers/net/*.sh'
	'tools/testing/selftests/drivers/net/lib/py/*.py'
	'tools/testing/selftests/drivers/net/hw/Makefile'
	'tools/testing/selftests/drivers/net/hw/settings'
	'tools/testing/selftests/drivers/net/hw/*.py'
	'tools/testing/selftests/drivers/net/hw/*.sh'
	'tools/testing/selftests/drivers/net/hw/lib/py/*.py'
	'tools/testing/selftests/net/lib/py/*.py'
	'tools/net/ynl/lib/*.py'
	'Documentation/netlink/specs/*.yaml'
)

# Files of a source tree (KSFT_SRC) to install, as globs below its top; a
# "?" in front marks an optional one (not in every version).
TREE_PATHS=(
	'tools/testing/selftests/drivers/net/README.rst'
	'tools/testing/selftests/drivers/net/Makefile'
	'?tools/testing/selftests/drivers/net/settings'
	'tools/testing/selftests/drivers/net/*.py'
	'?tools/testing/selftests/drivers/net/*.sh'
	'?tools/testing/selftests/drivers/net/*.c'
	'tools/testing/selftests/drivers/net/lib/py/*.py'
	'?tools/testing/selftests/drivers/net/lib/sh/*.sh'
	'tools/testing/selftests/drivers/net/hw/Makefile'
	'?tools/testing/selftests/drivers/net/hw/settings'
	'tools/testing/selftests/drivers/net/hw/*.py'
	'tools/testing/selftests/drivers/net/hw/*.sh'
	'?tools/testing/selftests/drivers/net/hw/*.bpf.c'
	'tools/testing/selftests/drivers/net/hw/lib/py/*.py'
	'tools/testing/selftests/net/lib/py/*.py'
	'?tools/testing/selftests/net/lib/sh/*.sh'
	'?tools/testing/selftests/net/lib/*.c'
	'?tools/testing/selftests/net/lib/*.h'
	'?tools/testing/selftests/net/lib.sh'
	'?tools/testing/selftests/net/forwarding/lib.sh'
	'?tools/testing/selftests/kselftest/ktap_helpers.sh'
	'?tools/testing/selftests/kselftest.h'
	'?tools/net/ynl/lib/*.py'
	'?tools/net/ynl/pyynl/*.py'
	'?tools/net/ynl/pyynl/lib/*.py'
	'Documentation/netlink/specs/*.yaml'
)

# What a tree install builds: "OUTPUT SOURCE" below
# tools/testing/selftests; *.bpf.o with clang, the rest with gcc. A line
# whose source is not in the tree is left out.
BUILD=(
	'net/lib/xdp_dummy.bpf.o net/lib/xdp_dummy.bpf.c'
	'net/lib/xdp_native.bpf.o net/lib/xdp_native.bpf.c'
	'net/lib/xdp_metadata.bpf.o net/lib/xdp_metadata.bpf.c'
	'drivers/net/hw/nk_forward.bpf.o drivers/net/hw/nk_forward.bpf.c'
	'drivers/net/hw/nk_primary_rx_redirect.bpf.o drivers/net/hw/nk_primary_rx_redirect.bpf.c'
	'net/lib/csum net/lib/csum.c'
	'net/lib/gro net/lib/gro.c'
	'net/lib/xdp_helper net/lib/xdp_helper.c'
	'drivers/net/napi_id_helper drivers/net/napi_id_helper.c'
	'drivers/net/so_txtime drivers/net/so_txtime.c'
)

die() { echo "$ME: $*" >&2; exit 1; }
warn() { echo "$ME: $*" >&2; }

newest=0
want_dir=0
for a in "$@"; do
	case "$a" in
	-h|--help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
	--dir) want_dir=1 ;;
	--newest) newest=1 ;;
	*) die "unknown argument '$a' (see --help)" ;;
	esac
done

# ---- the newest kernel's tree: its cache dir, built or not ----
if [ $newest = 1 ]; then
	kdir=$("$TOOLS_DIR/kernels/newest.sh" --cached 2>/dev/null) || kdir=
	if [ -z "$kdir" ]; then
		id=$("$TOOLS_DIR/kernels/newest.sh" --id) || die "tools/kernels/newest.sh --id failed"
		kdir=${VMX_KERNEL_CACHE:-/var/cache/vmx-kernels}/$id
	fi
	[ -f "$kdir/src/tools/testing/selftests/drivers/net/Makefile" ] ||
		die "no unpacked source tree in $kdir/src: run tools/kernels/newest.sh (make kernel-newest)"
	KSFT_SRC=$kdir/src
	: "${KSFT_NAME:=$(basename "$kdir")}"
fi

# ---- the 6.12 tarball ----
install_tarball() {
	local tarball=${KSFT_TARBALL:-} t ver dest stamp top tmp pats p
	if [ -z "$tarball" ]; then
		for t in /usr/src/$PKG.tar.xz /usr/src/$PKG.tar.bz2; do
			[ -f "$t" ] && { tarball=$t; break; }
		done
	fi
	[ -f "$tarball" ] ||
		die "no kernel source tarball (/usr/src/$PKG.tar.*): run tools/setup.sh (installs $PKG)"

	ver=$(dpkg-query -W -f '${Version}' "$PKG" 2>/dev/null)
	[ -n "$ver" ] || ver=$(basename "$tarball" | sed 's/^linux-source-//; s/\.tar\..*$//')
	dest=$CACHE/$ver

	if [ $want_dir = 1 ]; then
		echo "$dest"
		exit 0
	fi

	stamp="tarball $tarball $(stat -c '%s %Y' "$tarball")
paths ${PATHS[*]}"
	if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$stamp" ]; then
		echo "$ME: $dest is up to date"
		exit 0
	fi

	top=$(tar -tf "$tarball" 2>/dev/null | head -n 1)
	top=${top%%/*}
	[ -n "$top" ] || die "cannot read $tarball"

	mkdir -p "$CACHE" || die "cannot create $CACHE"
	tmp=$(mktemp -d "$CACHE/.install.XXXXXX") || die "cannot create a directory in $CACHE"
	# shellcheck disable=SC2064  # expand now
	trap "rm -rf '$tmp'" EXIT

	echo "$ME: extracting the driver selftests of $tarball into $dest"
	pats=()
	for p in "${PATHS[@]}"; do
		pats+=("$top/$p")
	done
	tar -xf "$tarball" -C "$tmp" --strip-components=1 --wildcards \
		--no-wildcards-match-slash "${pats[@]}" || die "extraction from $tarball failed"

	# Every pattern must have matched something.
	for p in "${PATHS[@]}"; do
		# shellcheck disable=SC2086  # the pattern is meant to glob
		set -- "$tmp"/$p
		[ -e "$1" ] || die "$p: not in $tarball"
	done

	echo "$stamp" > "$tmp/.installed"
	rm -rf "$dest"
	mv "$tmp" "$dest" || die "cannot move the tree to $dest"
	trap - EXIT
	echo "$ME: installed $(find "$dest" -type f | wc -l) files in $dest"
}

# tree_version SRC: VERSION.PATCHLEVEL.SUBLEVEL of a kernel tree's Makefile.
tree_version() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		$1 == "SUBLEVEL" { s = $2 } END { if (v != "") print v "." p "." s }' "$1/Makefile"
}

# uapi_headers SRC OUT: the tree's UAPI headers (include/uapi, the x86 ones
# and the generated x86 ones, present once the build has prepared the tree)
# into OUT, with headers_install's clean-ups of kernel-only annotations.
uapi_headers() {
	local src=$1 out=$2 d f
	for d in include/uapi arch/x86/include/uapi arch/x86/include/generated/uapi; do
		[ -d "$src/$d" ] || continue
		(cd "$src/$d" && find . -name '*.h') | while read -r f; do
			mkdir -p "$out/${f%/*}"
			sed -E \
				-e 's/([[:space:](])(__user|__force|__iomem)[[:space:]]/\1/g' \
				-e 's/__attribute_const__([[:space:]]|$)/\1/g' \
				-e 's@^#include <linux/compiler(|_types)\.h>@@' \
				-e 's/(^|[^a-zA-Z0-9])__packed([^a-zA-Z0-9_]|$)/\1__attribute__((packed))\2/g' \
				-e 's/(^|[[:space:](])(inline|asm|volatile)([[:space:](]|$)/\1__\2__\3/g' \
				"$src/$d/$f" > "$out/$f"
		done
	done
	# asm-generic fallbacks the x86 generated directory would provide
	# when the tree has not been prepared yet
	for f in "$out"/asm-generic/*.h; do
		[ -e "$out/asm/${f##*/}" ] && continue
		mkdir -p "$out/asm"
		printf '#include <asm-generic/%s>\n' "${f##*/}" > "$out/asm/${f##*/}"
	done
}

# build_helpers SRC DEST: build BUILD's programs in DEST (a tree install).
build_helpers() {
	local src=$1 dest=$2 ksft=$2/tools/testing/selftests scratch line out in
	local clang=${CLANG:-clang} cc=${CC:-gcc} failed=() sys rc
	scratch=$dest/.build
	mkdir -p "$scratch/include/bpf" || return 1
	uapi_headers "$src" "$scratch/include"
	# libbpf's headers of the same tree; bpf_helper_defs.h is generated
	# from its bpf.h, as libbpf's Makefile does
	cp "$src"/tools/lib/bpf/bpf_helpers.h "$src"/tools/lib/bpf/bpf_endian.h \
		"$src"/tools/lib/bpf/bpf_tracing.h "$src"/tools/lib/bpf/bpf_core_read.h \
		"$scratch/include/bpf/" 2>/dev/null
	python3 "$src/scripts/bpf_doc.py" --header --file "$src/tools/include/uapi/linux/bpf.h" \
		> "$scratch/include/bpf/bpf_helper_defs.h" 2> "$scratch/bpf_doc.log" ||
		warn "bpf_helper_defs.h: scripts/bpf_doc.py failed ($(tail -n 1 "$scratch/bpf_doc.log"))"
	# the host's system include directories, after the tree's (bpf.mk)
	sys=$("$clang" -v -E - < /dev/null 2>&1 |
		sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
	for line in "${BUILD[@]}"; do
		out=${line%% *}
		in=${line#* }
		[ -f "$ksft/$in" ] || continue
		rc=0
		case "$out" in
		*.bpf.o)
			if ! command -v "$clang" > /dev/null; then
				failed+=("$out (no $clang)")
				continue
			fi
			# shellcheck disable=SC2086  # $sys is a list of options
			"$clang" -O2 -g --target=bpf -D__EXPORTED_HEADERS__ \
				-I "$scratch/include" $sys -c "$ksft/$in" -o "$ksft/$out" \
				> "$scratch/build.log" 2>&1 || rc=$?
			;;
		*)
			"$cc" -Wall -O2 -g -D__EXPORTED_HEADERS__ -isystem "$scratch/include" \
				-I "$ksft" -I "$ksft/net/lib" -o "$ksft/$out" "$ksft/$in" \
				> "$scratch/build.log" 2>&1 || rc=$?
			;;
		esac
		if [ $rc = 0 ] && [ -f "$ksft/$out" ]; then
			echo "$ME: built $out"
		else
			sed 's/^/    /' "$scratch/build.log" | tail -n 15 >&2
			failed+=("$out")
		fi
	done
	rm -rf "$scratch"
	if [ ${#failed[@]} -gt 0 ]; then
		printf '%s\n' "${failed[@]}" > "$dest/.build-failed"
		warn "NOT BUILT: ${failed[*]} (the tests that need them will fail)"
	fi
	return 0
}

# fetch_ethtool DEST: a newer ethtool into DEST/bin (see above).
fetch_ethtool() {
	local dest=$1 suite=${KSFT_ETHTOOL_SUITE:-forky} a deb x
	local keyring=/usr/share/keyrings/debian-archive-trixie-automatic.gpg
	[ "${KSFT_ETHTOOL:-1}" != 0 ] || return 0
	a=$CACHE/.apt-$suite
	mkdir -p "$a/state/lists/partial" "$a/cache/archives/partial" "$a/dl" || return 1
	[ -f "$a/state/status" ] || : > "$a/state/status"
	echo "deb [signed-by=$keyring] http://deb.debian.org/debian $suite main" > "$a/sources.list"
	local o=(-q -o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::Etc::preferencesparts=- -o Dir::State="$a/state"
		-o Dir::State::status="$a/state/status" -o Dir::Cache="$a/cache"
		-o APT::Architecture=amd64 -o APT::Sandbox::User=root)
	if [ -r "$keyring" ] && apt-get "${o[@]}" update > "$a/update.log" 2>&1 &&
		(cd "$a/dl" && apt-get "${o[@]}" download ethtool > "$a/download.log" 2>&1); then
		:
	else
		warn "could not fetch $suite's ethtool (see $a/*.log); using the last one fetched, if any"
	fi
	deb=$(ls -t "$a"/dl/ethtool_*_amd64.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		warn "no newer ethtool: the tests run with the system's $(ethtool --version 2>/dev/null)"
		return 0
	fi
	x=$(mktemp -d "$a/x.XXXXXX") || return 1
	if dpkg-deb -x "$deb" "$x" && "$x/usr/sbin/ethtool" --version > /dev/null 2>&1; then
		mkdir -p "$dest/bin"
		cp "$x/usr/sbin/ethtool" "$dest/bin/ethtool"
		echo "$ME: bin/ethtool: $("$dest/bin/ethtool" --version) (from ${deb##*/})"
	else
		warn "${deb##*/} does not run here: the tests run with the system's ethtool"
	fi
	rm -rf "$x"
	# older downloads
	ls -t "$a"/dl/ethtool_*_amd64.deb | tail -n +2 | xargs -r rm -f
	return 0
}

# ---- a source tree (KSFT_SRC, --newest) ----
install_tree() {
	local src=${KSFT_SRC%/} ver name dest stamp tmp p opt files=() f mm d
	[ -f "$src/Makefile" ] || die "KSFT_SRC=$src: not a kernel source tree"
	src=$(cd "$src" && pwd)
	ver=$(tree_version "$src")
	[ -n "$ver" ] || die "$src/Makefile: no kernel version"
	name=${KSFT_NAME:-}
	if [ -z "$name" ]; then
		name=$(basename "$(dirname "$src")")
		case "$name" in "$ver"*) ;; *) name=$ver-src ;; esac
	fi
	mm=${ver%.*}
	case "$name" in
	"$mm".*) ;;
	*) die "install name '$name' does not start with $mm. (kselftests.sh picks installs by the running kernel's major.minor)" ;;
	esac
	dest=$CACHE/$name

	if [ $want_dir = 1 ]; then
		echo "$dest"
		exit 0
	fi

	# the files, in TREE_PATHS order
	for p in "${TREE_PATHS[@]}"; do
		opt=0
		case "$p" in \?*) opt=1; p=${p#\?} ;; esac
		# shellcheck disable=SC2086  # the pattern is meant to glob
		set -- "$src"/$p
		if [ ! -e "$1" ]; then
			[ $opt = 1 ] && continue
			die "$p: not in $src"
		fi
		for f in "$@"; do files+=("${f#"$src"/}"); done
	done
	case " ${files[*]} " in
	*" tools/net/ynl/lib/"*|*" tools/net/ynl/pyynl/lib/"*) ;;
	*) die "no YNL python library in $src (tools/net/ynl/lib or tools/net/ynl/pyynl/lib)" ;;
	esac

	stamp="tree $src $ver
sources $(cd "$src" && stat -c '%n %s %Y' "${files[@]}" | md5sum | cut -d' ' -f1)
script $(md5sum < "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
	if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$stamp" ]; then
		echo "$ME: $dest is up to date"
		exit 0
	fi

	mkdir -p "$CACHE" || die "cannot create $CACHE"
	tmp=$(mktemp -d "$CACHE/.install.XXXXXX") || die "cannot create a directory in $CACHE"
	# shellcheck disable=SC2064  # expand now
	trap "rm -rf '$tmp'" EXIT

	echo "$ME: copying the driver selftests of $src ($ver) into $dest"
	(cd "$src" && cp --parents -p "${files[@]}" "$tmp/") || die "copy from $src failed"
	build_helpers "$src" "$tmp" || die "cannot build in $tmp"
	fetch_ethtool "$tmp"

	echo "$stamp" > "$tmp/.installed"
	rm -rf "$dest"
	mv "$tmp" "$dest" || die "cannot move the tree to $dest"
	trap - EXIT
	# older installs of the same major.minor (earlier builds of the newest
	# kernel) would compete with this one in kselftests.sh
	for d in "$CACHE/$mm".*/; do
		d=${d%/}
		[ -d "$d" ] && [ "$d" != "$dest" ] || continue
		echo "$ME: removing the older install $d"
		rm -rf "$d"
	done
	echo "$ME: installed $(find "$dest" -type f | wc -l) files in $dest"
}

if [ -n "${KSFT_SRC:-}" ]; then
	install_tree
else
	install_tarball
fi
