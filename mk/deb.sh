#!/bin/bash
# mk/deb.sh - the Debian packages of xen-ptswap: xen-ptswap-dkms (the
# module's DKMS source, Architecture all) and xen-ptswap-tools (the status
# command, ab-run and its benchmarks, the bpftrace scripts; amd64), from
# the packaging in mk/debian/.  `make deb` runs it.
#
# Usage: mk/deb.sh [--out DIR] [--keep]
#   (make deb [DEB_DIR=DIR])
#   --out DIR   where the .debs go (default out/deb/ of the tree); the
#               older xen-ptswap-{dkms,tools} .debs there are removed first
#   --keep      keep the scratch folder (printed); otherwise it is removed
#
# How: the build dependencies are checked first (the list below:
# mk/debian/control's and build-essential); as root the missing ones are installed with
# apt-get, otherwise the script names them and stops.  The files the
# packages need (dkms.conf, Kbuild, module/, include/, tools/, LICENSE,
# LICENSES/) and mk/debian/ as debian/ are copied into a scratch folder
# under $TMPDIR (default /var/tmp), debian/changelog is written from
# mk/debian/changelog.in with dkms.conf's PACKAGE_VERSION and the Debian
# revision 1 (the one place the version lives), and `dpkg-buildpackage
# -us -uc -b` builds there, so the tree itself is left as it was.
#
# Output: the .debs, .buildinfo and .changes in DIR; the last lines name
# the .debs ("deb: DIR/xen-ptswap-dkms_VERSION-1_all.deb").
# Exit status: 0 built; 1 bad arguments or no version in dkms.conf; 2 a
# build dependency is missing and cannot be installed (not root, or
# apt-get failed); 4 the build failed (the last lines of its log are
# printed; the scratch folder, with build.log, is kept).  Errors are one
# "deb: ..." line on stderr.

set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$REPO/out/deb keep=0
# What dpkg-buildpackage needs here: mk/debian/control's Build-Depends
# (debhelper-compat, dh-sequence-dkms, libxen-dev) and build-essential,
# the build dependency every Debian package has without naming it (Debian
# Policy 4.2), which dpkg-checkbuilddeps requires too (a minimal Debian 13
# system lacks it: test/debian13-userland).  Debian 12 and 13 names.
BUILD_DEPS=(build-essential debhelper dh-dkms libxen-dev)

die() { local rc=$1; shift; echo "deb: $*" >&2; exit "$rc"; }
note() { echo "deb: $*"; }
usage() { sed -n '/^# Usage:/,/^#   --keep/p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case $1 in
	--out)
		if [ $# -lt 2 ] || [ -z "$2" ]; then die 1 "--out needs a folder (mk/deb.sh -h)"; fi
		out=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die 1 "unknown argument '$1' (mk/deb.sh -h)" ;;
	esac
done

VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
[[ $VER =~ ^[0-9][A-Za-z0-9.+~]*$ ]] ||
	die 1 "no usable PACKAGE_VERSION in $REPO/dkms.conf (found '$VER')"

scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/xps-deb.XXXXXX") || die 2 "cannot make a scratch folder in ${TMPDIR:-/var/tmp}"
src=$scratch/xen-ptswap-$VER
mkdir -p "$src"
cleanup() { [ $keep = 1 ] || rm -rf "$scratch"; }
trap cleanup EXIT

# ensure_build_deps: every package of BUILD_DEPS installed, or installed
# now with apt-get (as root; its output in $scratch/apt.log, kept on
# failure); exits 2 when one is missing otherwise.
ensure_build_deps() {
	local missing=() p
	for p in "${BUILD_DEPS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] ||
		die 2 "missing build dependencies: ${missing[*]}; install them with: sudo apt-get install --no-install-recommends ${missing[*]}"
	note "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >"$scratch/apt.log" 2>&1
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >>"$scratch/apt.log" 2>&1; then
		keep=1
		die 2 "apt-get install ${missing[*]} failed, see $scratch/apt.log"
	fi
}
ensure_build_deps

cp -r "$REPO/dkms.conf" "$REPO/Kbuild" "$REPO/module" "$REPO/include" "$REPO/tools" \
	"$REPO/LICENSE" "$REPO/LICENSES" "$src/" || die 4 "cannot copy the tree into $src"
cp -r "$REPO/mk/debian" "$src/debian" || die 4 "cannot copy mk/debian into $src"
# Leftovers of `make module` or of the lab in the copy: never packaged
# (/usr/src gets module/ and include/ as they are; tools/ is cleaned by
# debian/rules).
find "$src/module" "$src/include" "$src/tools" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' \
	-o -name '*.mod.c' -o -name '.*.cmd' -o -name Module.symvers -o -name modules.order \
	-o -name .tmp_versions -o -name __pycache__ \) -prune -exec rm -rf {} +

# debian/changelog: the version from dkms.conf, the date of the tree's
# last commit (a clone builds the same package twice), else now.
describe=$(git -C "$REPO" describe --always --dirty 2>/dev/null) || describe="an unknown commit (no git)"
date=$(git -C "$REPO" log -1 --format=%aD 2>/dev/null) && [ -n "$date" ] || date=$(date -R)
if ! sed -e "s|@VERSION@|$VER|" -e "s|@DESCRIBE@|$describe|" -e "s|@DATE@|$date|" \
	"$src/debian/changelog.in" >"$src/debian/changelog"; then
	die 4 "cannot write $src/debian/changelog"
fi
rm "$src/debian/changelog.in"

note "building xen-ptswap $VER-1 in $src (log: $scratch/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1; then
	keep=1
	tail -n 15 "$scratch/build.log" >&2
	die 4 "dpkg-buildpackage failed; the scratch folder and its build.log are kept: $scratch"
fi

mkdir -p "$out" || die 2 "cannot make $out"
rm -f "$out"/xen-ptswap-dkms_*.deb "$out"/xen-ptswap-tools_*.deb \
	"$out"/xen-ptswap_*.buildinfo "$out"/xen-ptswap_*.changes
cp "$scratch"/xen-ptswap-dkms_"$VER"-1_*.deb "$scratch"/xen-ptswap-tools_"$VER"-1_*.deb \
	"$scratch"/xen-ptswap_"$VER"-1_*.buildinfo "$scratch"/xen-ptswap_"$VER"-1_*.changes "$out/" ||
	die 4 "the build made no xen-ptswap $VER-1 packages (see $scratch/build.log)"
[ $keep = 1 ] && note "scratch folder kept: $scratch"
for f in "$out"/xen-ptswap-dkms_"$VER"-1_*.deb "$out"/xen-ptswap-tools_"$VER"-1_*.deb; do
	note "$f"
done
