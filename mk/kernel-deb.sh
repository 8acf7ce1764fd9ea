#!/bin/bash
# mk/kernel-deb.sh - Debian packages of a Dom0 kernel with this project's
# Linux series: linux-image-REL and linux-headers-REL (and the
# linux-libc-dev that the kernel's packaging always makes), built with the
# kernel's own `make bindeb-pkg`.  `make kernel-deb` runs it.
#
# Usage: mk/kernel-deb.sh [--linux 6.1|6.12|7.3] [--config FILE] [--out DIR]
#                         [--localversion STRING] [--tree DIR] [--keep]
#   (make kernel-deb LINUX=6.1 KCONFIG=FILE KDEB_DIR=DIR
#                    KDEB_LOCALVERSION=STRING KTREE=DIR)
#   --linux V       the Linux version (default 6.1): Debian's
#                   linux-source-V with test/linux-patch/V/*.patch applied
#   --config FILE   the kernel configuration (a .config; olddefconfig fills
#                   in what it lacks).  Default: the lab's configuration of
#                   V (test/lab/run's build of V: tinyconfig +
#                   test/lab/dom0.config + dom0-debian.config, + the
#                   version's dom0-V.config), never the build machine's
#                   own /boot/config-*
#   --out DIR       where the .debs go (default out/kernel-deb/ of the clone)
#   --localversion STRING  the release's suffix, CONFIG_LOCALVERSION
#                   (default -xen-ptswap: REL is e.g. 6.1.192-xen-ptswap;
#                   the lab's own kernels are -xen-ptswap-lab)
#   --tree DIR      start from DIR, a tree test/lab/run built (the "lab:
#                   kernel tree:" line of `test/lab/run --linux V --kernel
#                   native --no-module --build-only`), instead of asking
#                   test/lab/run for it: then nothing here needs root
#   --keep          keep the scratch folder (printed); otherwise it is
#                   removed in the background when the script ends
#
# How: test/lab/run (--kernel native --no-module --build-only) gets the
# lab's built tree of V (Debian's source, the series, the lab's config;
# cached under /var/cache/xen-ptswap/linux/<key>/src, built there first
# if the lab has not yet); the tree is copied with its timestamps
# (cp -a) into a scratch folder under $TMPDIR (default /var/tmp), so the
# lab's cache entry stays untouched; the config and LOCALVERSION are set;
# `make bindeb-pkg` runs there with the lab's compiler command (CC="ccache
# gcc") and the saved commands of objtool's own build pointed at the
# copy, so kbuild's saved commands match.  With the default config only
# what the release string reaches is recompiled (6.1: 14 files, 6.12: 8),
# then vmlinux is relinked and packaged: about 2 minutes on 2 cores
# (the lab's own "-xen-ptswap-lab" would save only those few compiles:
# the package's build number relinks vmlinux anyway).  With --config, kbuild
# rebuilds what the other configuration changes: in practice a full build.
#
# Output: the .debs in DIR; the last lines name them ("kernel-deb: DIR/
# linux-image-...deb").  The build log is DIR/kernel-deb-V.log.
# Exit status: 0 built; 1 bad arguments (unknown version, a missing
# --config file, a --tree that is not V's); 2 a missing prerequisite
# (root for test/lab/run, a tool); 3 test/lab/run could not provide the
# tree; 4 the configuration or the build failed.  Errors are one
# "kernel-deb: ..." line on stderr, naming the log.
# Needs: make, gcc, ccache, bc, bison, flex, libelf-dev, libssl-dev, kmod,
# cpio, dpkg-dev (test/lab/run installs them), rsync (the kernel's
# headers_install, for linux-libc-dev) and, for 6.12 and 7.3, debhelper
# (their debian/rules); root only for test/lab/run.

# The whole script is one compound command, read before it runs, so
# editing this file does not upset a run in progress.
{
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
linux=6.1 config='' out=$REPO/out/kernel-deb localversion=-xen-ptswap tree='' keep=0

die() { local rc=$1; shift; echo "kernel-deb: $*" >&2; exit "$rc"; }
note() { echo "kernel-deb: $*"; }
usage() { sed -n '/^# Usage:/,/^#   --keep/p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case $1 in
	--linux|--config|--out|--localversion|--tree)
		[ $# -ge 2 ] || die 1 "$1 needs a value (mk/kernel-deb.sh -h)" ;;
	esac
	case $1 in
	--linux) linux=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--localversion) localversion=$2; shift 2 ;;
	--tree) tree=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die 1 "unknown argument '$1' (mk/kernel-deb.sh -h)" ;;
	esac
done
case $linux in 6.1|6.12|7.3) ;; *) die 1 "LINUX must be 6.1, 6.12 or 7.3 (the versions test/linux-patch/ has a series for), not '$linux'" ;; esac
if [ -n "$config" ]; then
	[ -f "$config" ] || die 1 "KCONFIG '$config': no such file"
	config=$(realpath "$config")
fi
[[ $localversion =~ ^[-+.a-z0-9]*$ ]] ||
	die 1 "LOCALVERSION '$localversion': only lower-case letters, digits and -+. make a valid package name"
for t in make gcc ccache bc bison flex kmod cpio rsync dpkg-buildpackage dpkg-deb; do
	command -v "$t" >/dev/null || die 2 "$t is missing: apt-get install $(case $t in dpkg-*) echo dpkg-dev ;; *) echo "$t" ;; esac)"
done
mkdir -p "$out" || die 1 "cannot create the output folder '$out'"
out=$(realpath "$out")
LOG=$out/kernel-deb-$linux.log
: >"$LOG" || die 1 "cannot write $LOG"
t_start=$SECONDS

# ----------------------------------------------------- the lab's tree of V
if [ -z "$tree" ]; then
	[ "$(id -u)" = 0 ] ||
		die 2 "test/lab/run provides the tree and needs root: run as root, or give KTREE=DIR (--tree DIR), DIR from the 'lab: kernel tree: DIR' line of 'sudo test/lab/run --linux $linux --kernel native --no-module --build-only'"
	note "asking test/lab/run for Linux $linux's tree (it builds it first if the lab has not)"
	# No XPS_LAB_LINUX_EXCLUDE: the packages carry the whole series.
	env -u XPS_LAB_LINUX_EXCLUDE "$REPO/test/lab/run" --linux "$linux" --kernel native \
		--no-module --build-only >>"$LOG" 2>&1 </dev/null ||
		die 3 "test/lab/run --linux $linux --build-only failed: $(grep '^lab: ' "$LOG" | tail -n 1), see $LOG"
	tree=$(sed -n 's/^lab: kernel tree: //p' "$LOG" | tail -n 1)
	[ -n "$tree" ] || die 3 "test/lab/run printed no 'kernel tree:' line, see $LOG"
fi
if [ ! -f "$tree/Makefile" ] || [ ! -f "$tree/.config" ]; then
	die 1 "KTREE '$tree' is not a configured Linux tree"
fi
tree_named=$tree
tree=$(realpath "$tree")
# Read, not `make kernelversion`: nothing runs in the lab's cache entry.
kver=$(awk '$2 == "=" && $1 ~ /^(VERSION|PATCHLEVEL|SUBLEVEL)$/ { v[$1] = $3 }
	END { print v["VERSION"] "." v["PATCHLEVEL"] (v["SUBLEVEL"] != "" ? "." v["SUBLEVEL"] : "") }' "$tree/Makefile")
case $kver in "$linux".*|"$linux") ;; *) die 1 "KTREE '$tree' is Linux '$kver', not $linux" ;; esac
# Since 6.3 the kernel's debian/rules uses debhelper.
if grep -qs 'dh_' "$tree/scripts/package/debian/rules" && ! command -v dh_testdir >/dev/null; then
	die 2 "dh_testdir is missing: apt-get install debhelper (Linux $linux's bindeb-pkg uses it)"
fi
reuse=0
[ -z "$config" ] && [ -f "$tree/vmlinux" ] && reuse=1

# ------------------------------------------------------------ scratch copy
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/xps-kernel-deb.XXXXXX") || die 2 "cannot make a scratch folder under ${TMPDIR:-/var/tmp}"
if [ $keep = 1 ]; then
	note "scratch folder: $WORK (kept)"
else
	# In the background: deleting the 2 GB copy took 2 to 3 minutes here
	# (ext4 mounted with discard), longer than the packaging.
	trap 'setsid rm -rf "$WORK" </dev/null >/dev/null 2>&1 &' EXIT
fi
t0=$SECONDS
cp -a "$tree" "$WORK/linux-$kver" || die 2 "cannot copy $tree to $WORK (disk space?), see $LOG"
t_copy=$((SECONDS - t0))
SRC=$WORK/linux-$kver
note "copied the lab's tree ($tree) in ${t_copy} s"
# kbuild's saved commands and dependency lists are relative to the tree,
# but not those of the host tools it builds with their own make (objtool,
# with O= and srctree= absolute): they name the tree's old place.  With the
# old commands kept, the new objtool binary would be rebuilt and, since
# every object depends on it, the whole kernel recompiled; point them at
# the copy (its files kept their timestamps).
saved() { find "$SRC" \( -name '.*.cmd' -o -name '.*.d' \) -type f -print0 | xargs -0 grep -lZF -- "$1/"; }
for old in "$tree" "${tree_named%/}"; do
	saved "$old" | xargs -0 -r sed -i "s|$old/|$SRC/|g"
	[ -z "$(saved "$old" | tr '\0' '\n')" ] || die 2 "cannot relocate the saved commands in $SRC"
done

# The kernel's make, without anything of the make that may have called us
# (`make kernel-deb LINUX=... KCONFIG=...` would pass its variables down)
# or a LOCALVERSION of the environment (kbuild appends it to the
# release), and with the lab's compiler command: kbuild rebuilds an object whose
# saved command differs, so another CC would recompile everything.
CACHE=${XPS_CACHE:-/var/cache/xen-ptswap}
ccache_dir=
[ -w "$CACHE/ccache" ] && ccache_dir=$CACHE/ccache
kmake() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u LOCALVERSION ${ccache_dir:+CCACHE_DIR="$ccache_dir"} \
		make -C "$SRC" CC="ccache gcc" "$@"
}

# ------------------------------------------------------------------ config
if [ -n "$config" ]; then
	cp "$config" "$SRC/.config" || die 2 "cannot copy $config"
	# A distribution's config names the certificates and the module
	# signing key of its own build (Debian: debian/certs/...,
	# output/signing_key.pem), which this tree lacks: build without the
	# certificates, and with a key kbuild makes (certs/signing_key.pem).
	for o in SYSTEM_TRUSTED_KEYS: SYSTEM_REVOCATION_KEYS: MODULE_SIG_KEY:certs/signing_key.pem; do
		want=${o#*:} o=${o%%:*}
		f=$(sed -n "s/^CONFIG_$o=\"\(.*\)\"$/\1/p" "$SRC/.config")
		case $f in ""|pkcs11:*|"$want") continue ;; esac
		if [ ! -f "$f" ] && [ ! -f "$SRC/$f" ]; then
			note "CONFIG_$o=\"$f\" is not in the tree: set to \"$want\""
			"$SRC/scripts/config" --file "$SRC/.config" --set-str "$o" "$want"
		fi
	done
fi
"$SRC/scripts/config" --file "$SRC/.config" --set-str LOCALVERSION "$localversion" \
	--disable LOCALVERSION_AUTO
# syncconfig: include/config/auto.conf, which kernelrelease reads.
{ kmake olddefconfig && kmake syncconfig; } >>"$LOG" 2>&1 || die 4 "make olddefconfig failed, see $LOG"
for o in XEN_PV XEN_DOM0 MODULES; do
	grep -qx "CONFIG_$o=y" "$SRC/.config" ||
		note "warning: CONFIG_$o is not set: xen_ptswap needs a Xen PV Dom0 kernel with modules"
done
if grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$SRC/.config" && ! command -v pahole >/dev/null; then
	# Otherwise the build fails at the final link, hours in.
	die 2 "the config has CONFIG_DEBUG_INFO_BTF=y, which needs pahole: apt-get install dwarves, or disable it in KCONFIG (scripts/config --file KCONFIG --disable DEBUG_INFO_BTF)"
fi
rel=$(kmake -s kernelrelease 2>>"$LOG") || die 4 "make kernelrelease failed, see $LOG"

# ------------------------------------------------------------------- build
if [ $reuse = 1 ]; then
	note "building $rel: the lab's build of Linux $linux reused, only what the release string reaches is recompiled"
else
	what=${config:-the lab\'s config}
	note "building $rel: a full build with $what (hours with a distribution's config on 2 cores)"
fi
note "log: $LOG"
t0=$SECONDS
# DPKG_FLAGS=-d: the build dependencies debian/control lists (rsync among
# them) are not all needed; the check above names what is.
# DEB_BUILD_OPTIONS=terse: kbuild's short lines (newer debian/rules
# otherwise turns on KBUILD_VERBOSE).
DEB_BUILD_OPTIONS=terse kmake -j"$(nproc)" DPKG_FLAGS=-d bindeb-pkg >>"$LOG" 2>&1 ||
	die 4 "make bindeb-pkg failed: $(grep -m1 -E 'error:|Error [0-9]|\*\*\*' "$LOG" | cut -c1-200), see $LOG"
t_build=$((SECONDS - t0))
compiled=$(grep -c '^  CC ' "$LOG")

shopt -s nullglob
debs=("$WORK"/*.deb)
shopt -u nullglob
[ ${#debs[@]} -gt 0 ] || die 4 "make bindeb-pkg made no .deb, see $LOG"
for d in "${debs[@]}"; do mv -f "$d" "$out/" || die 2 "cannot move $d to $out"; done
for f in "$WORK"/*.buildinfo "$WORK"/*.changes; do [ -f "$f" ] && mv -f "$f" "$out/"; done
note "Linux $linux, release $rel: $compiled C files compiled, bindeb-pkg took ${t_build} s, ${t_copy} s copying, $((SECONDS - t_start)) s in all"
for d in "${debs[@]}"; do note "$out/${d##*/}"; done
exit 0
}
