#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# build-deb.sh - build the vmx-dkms Debian package ("make deb").
#
# Usage: tools/build-deb.sh [OUTDIR]      (default OUTDIR: build/deb)
#
# Copies the project (git's files when this is a checkout) to
# OUTDIR/vmx-<version>, writes debian/changelog there with the version from
# the VERSION file (the one place the version lives; Kbuild puts the same
# string in MODULE_VERSION and ethtool -i), runs dpkg-buildpackage (source
# and binary, unsigned) and lintian, which fails the build on any error.
# Leaves OUTDIR/vmx-dkms_<version>_all.deb, vmx_<version>.dsc/.tar.xz and the
# .changes; the source tree is not touched.
# Needs dpkg-dev, debhelper, dh-dkms, dkms and lintian (installed here when
# missing).
set -euo pipefail

PROJ=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$PROJ/build/deb}
ver=$(cat "$PROJ/VERSION")
[[ "$ver" =~ ^[0-9]+(\.[0-9]+)*$ ]] ||
	{ echo "build-deb: VERSION must be digits and dots, not '$ver'" >&2; exit 1; }
# The packaging tools (only this target needs them; the guest test needs
# dkms itself): installed from Debian's registry when missing, as root.
missing=
for c in dpkg-buildpackage dh dh_dkms lintian dkms; do
	command -v "$c" >/dev/null || missing=1
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] ||
		{ echo "build-deb: packaging tools missing and not root to install them" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		dpkg-dev debhelper dh-dkms dkms lintian
fi

OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
rm -rf "${OUT:?}"/vmx-[0-9]* "$OUT"/vmx_* "$OUT"/vmx-dkms_*
src=$OUT/vmx-$ver
mkdir -p "$src"

# The tree: git's tracked and new (not ignored) files, else everything but
# build products.
cd "$PROJ"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -f "$f" ] && printf '%s\0' "$f"
		done | xargs -0 cp --parents -t "$src"
	rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
	when=$(git log -1 --format=%cD 2>/dev/null || date -R)
else
	tar -C "$PROJ" --exclude=./build --exclude=./results --exclude=./.cache \
		--exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$src" -xf -
	rev=unknown
	when=$(date -R)
fi

maint=$(sed -n 's/^Maintainer: //p' "$src/debian/control")
cat > "$src/debian/changelog" <<EOC
vmx ($ver) unstable; urgency=medium

  * vmx $ver, built from revision $rev.

 -- $maint  $when
EOC

cd "$src"
nice -n 10 dpkg-buildpackage -us -uc -tc
cd "$OUT"
changes=vmx_${ver}_$(dpkg --print-architecture).changes
echo "build-deb: lintian $changes"
nice -n 10 lintian --fail-on error --info "$changes"
echo "build-deb: $OUT/vmx-dkms_${ver}_all.deb"
