#!/usr/bin/env bash
# kselftests-install.sh - install the kernel's own NIC driver selftests
# (tools/testing/selftests/drivers/net and drivers/net/hw of the 6.12 tree)
# from the linux-source-6.12 tarball into .cache/kselftests/<version>/,
# outside git, for selftests/drivers/net/vmx/kselftests.sh to run in a guest.
#
# Usage:
#   tools/kselftests-install.sh            install (nothing to do when the
#                                          cache already matches the tarball)
#   tools/kselftests-install.sh --dir      print the install directory
#   tools/kselftests-install.sh -h|--help
#
# Environment:
#   KSFT_TARBALL  kernel source tarball (default: /usr/src/linux-source-6.12.tar.xz
#                 or .tar.bz2, installed by tools/setup.sh)
#   KSFT_CACHE    cache top (default: <project>/.cache/kselftests)
#
# Only the paths the tests use are extracted, in the kernel tree's layout, so
# the tests' "in tree" path logic finds the rest: the driver tests and their
# python library, the net selftest python library, the YNL python library
# (tools/net/ynl/lib) and the netlink specs it reads
# (Documentation/netlink/specs). The directory is named after the Debian
# version of linux-source-6.12; a ".installed" stamp records the tarball's
# size and mtime and the path list, and a different stamp means a fresh
# extraction (into a temporary directory, renamed into place when complete).
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

die() { echo "$ME: $*" >&2; exit 1; }

case "${1:-}" in
-h|--help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
--dir|"") ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

tarball=${KSFT_TARBALL:-}
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

if [ "${1:-}" = --dir ]; then
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
trap 'rm -rf "$tmp"' EXIT

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
