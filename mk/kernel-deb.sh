#!/bin/bash
# mk/kernel-deb.sh - Debian packages of a Dom0 kernel with this project's
# Linux series: linux-image-REL and linux-headers-REL (and the
# linux-libc-dev that the kernel's packaging always makes), built with the
# kernel's own `make bindeb-pkg` on a Debian 12 or Debian 13 x86-64 host.
# `make kernel-deb` runs it.
#
# Usage: mk/kernel-deb.sh [--linux 6.1|6.12|7.3] [--config FILE|lab]
#                         [--config-only] [--out DIR] [--localversion STRING]
#                         [--cache DIR] [--tree DIR|lab] [--keep]
#   (make kernel-deb LINUX=V KCONFIG=FILE|lab KDEB_CONFIG_ONLY=1
#                    KDEB_DIR=DIR KDEB_LOCALVERSION=STRING KTREE=DIR|lab)
#   --linux V       the Linux version: Debian's linux-source-V with
#                   test/linux-patch/V/*.patch applied.  Default: the
#                   version of the base configuration (the header of a
#                   kernel's .config names it) when the project has a
#                   series for it; 6.1 for the lab's configuration
#   --config FILE   the base configuration: FILE (a kernel .config)
#   --config lab    the base configuration: the lab's, sized for QEMU (no
#                   storage, network or Xen backend drivers for real
#                   hardware): the kernel's tinyconfig + test/lab/dom0.config
#                   + dom0-debian.config (6.12: dom0-debian-6.12.config)
#                   + dom0-V.config if there is one, as test/lab/run makes
#                   it; only when asked for.  (A file named lab: ./lab)
#                   Default: /boot/config-$(uname -r), the running kernel's
#                   configuration; without it, and without --config, the
#                   script refuses.  To every base except the lab's the
#                   options a Xen PV Dom0 with the series needs are added
#                   (NEEDED below), the Xen block and network backends as
#                   modules when off; `make olddefconfig` fills in the rest
#   --config-only   stop once the final .config is made and checked: print
#                   its path (DIR/config-REL) and the base it came from;
#                   builds nothing
#   --out DIR       where the .debs, the final configuration and the log go
#                   (default out/kernel-deb/ of the clone)
#   --localversion STRING  the release's suffix, CONFIG_LOCALVERSION
#                   (default -xen-ptswap: REL is e.g. 6.12.57-xen-ptswap;
#                   the lab's own kernels are -xen-ptswap-lab)
#   --cache DIR     where Debian's package lists and linux-source
#                   tarballs are kept between runs (default
#                   out/kernel-deb-cache/ of the clone)
#   --tree DIR      the lab's own test path (test/kernel-deb): start from
#                   DIR, a tree test/lab/run built (its "lab: kernel tree:"
#                   line) instead of Debian's source; needs --config
#   --tree lab      the same, asking test/lab/run (--kernel native
#                   --no-module --build-only: root, and the lab's
#                   packages) for the tree.  With --config lab the lab's
#                   build is reused and only what the release string
#                   reaches is recompiled
#   --keep          keep the scratch folder (printed); otherwise it is
#                   removed in the background when the script ends
#
# How: Debian's linux-source-V is downloaded with a private apt
# configuration (its own sources, lists and cache under the cache folder;
# the system's apt sources are not read or changed) from deb.debian.org:
# 6.1 from bookworm, bookworm-updates and bookworm-security, 6.12 from
# trixie, trixie-updates and trixie-security, 7.3 from trixie-backports;
# the newest version there is taken.  Its tarball is extracted into a
# scratch folder under $TMPDIR (default /var/tmp), the series applied with
# `patch -p1`, the configuration made and checked, and `make bindeb-pkg`
# run there.  The packages a kernel package build needs (build-essential, gcc, make,
# libc6-dev, bc, bison, flex, libelf-dev, libssl-dev, kmod, cpio, rsync,
# dpkg-dev, fakeroot, python3, xz-utils, patch; debhelper for 6.12 and
# 7.3; dwarves when the configuration has DEBUG_INFO_BTF; zstd, lz4 or
# lzop when it compresses with them) are installed with apt-get from the
# system's sources when missing (as root; otherwise the script names
# them and stops).  Nothing of the lab is installed.
#
# Output: "kernel-deb: ..." lines: the base, the source, the final
# configuration (DIR/config-REL, and DIR/config-REL.diff: what differs
# from the base), then the .debs in DIR ("kernel-deb: DIR/linux-image-
# ...deb").  The log is DIR/kernel-deb-V.log.
# Exit status: 0 built (with --config-only: the configuration written);
# 2 bad input: an unknown option or version, a missing --config file, no
# /boot/config-$(uname -r) and no --config, a base that is not an x86-64
# kernel's, a configuration that cannot keep an option NEEDED names, a
# --tree that is not V's or given without --config; 3 a missing
# prerequisite: a host that is not x86-64, packages not installed and no
# root to install them, Debian's package lists or linux-source-V out of
# reach; 4 the series does not apply, or `make olddefconfig` or the build
# failed; 5 test/lab/run could not provide the tree (--tree lab).
# Errors are one "kernel-deb: ..." line on stderr.

# The whole script is one compound command, read before it runs, so
# editing this file does not upset a run in progress.
{
set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
linux='' config='' config_only=0 out=$REPO/out/kernel-deb localversion=-xen-ptswap
cache=$REPO/out/kernel-deb-cache tree='' keep=0
# The options a Xen PV Dom0 kernel with the series and the module needs,
# NAME=y (built in) or NAME=ym (built in or a module): the pv-op the
# series adds exists only with XEN_PV (PARAVIRT_XXL); the Dom0 needs its
# console and the toolstack's interfaces (privcmd, evtchn, gntdev,
# xenfs, /sys/hypervisor); the module needs loading and unloading, and
# debugfs for its statistics.  Set on every base, then checked after
# olddefconfig: a refusal names the first one that did not stay set.
NEEDED=(MODULES=y MODULE_UNLOAD=y HYPERVISOR_GUEST=y PARAVIRT=y XEN=y XEN_PV=y
	PARAVIRT_XXL=y XEN_DOM0=y XEN_PV_DOM0=y HVC_XEN=y XEN_SYS_HYPERVISOR=y
	DEBUG_FS=y XEN_PRIVCMD=ym XEN_DEV_EVTCHN=ym XEN_GNTDEV=ym XENFS=ym)
# Backends a real Dom0 serves its guests with: turned on (as modules)
# when a base other than the lab's has them off; a note, not a refusal,
# when olddefconfig cannot keep them.
BACKENDS=(XEN_BACKEND=y XEN_BLKDEV_BACKEND=ym XEN_NETDEV_BACKEND=ym)

# die RC MESSAGE: print "kernel-deb: MESSAGE" on stderr, exit RC.
die() { local rc=$1; shift; echo "kernel-deb: $*" >&2; exit "$rc"; }
# note MESSAGE: print "kernel-deb: MESSAGE" on stdout.
note() { echo "kernel-deb: $*"; }
# usage: print the Usage block of the header.
usage() { sed -n '/^# Usage:/,/^#   --keep/p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case $1 in
	--linux|--config|--out|--localversion|--cache|--tree)
		[ $# -ge 2 ] || die 2 "$1 needs a value (mk/kernel-deb.sh -h)" ;;
	esac
	case $1 in
	--linux) linux=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	--config-only) config_only=1; shift ;;
	--out) out=$2; shift 2 ;;
	--localversion) localversion=$2; shift 2 ;;
	--cache) cache=$2; shift 2 ;;
	--tree) tree=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) die 2 "unknown argument '$1' (mk/kernel-deb.sh -h)" ;;
	esac
done
case $linux in ""|6.1|6.12|7.3) ;; *) die 2 "LINUX must be 6.1, 6.12 or 7.3 (the versions test/linux-patch/ has a series for), not '$linux'" ;; esac
[[ $localversion =~ ^[-+.a-z0-9]*$ ]] ||
	die 2 "LOCALVERSION '$localversion': only lower-case letters, digits and -+. make a valid package name"
[ "$(uname -m)" = x86_64 ] ||
	die 3 "this host is $(uname -m): the packages are built for x86-64 with the host's compiler, build them on an x86-64 Debian 12 or 13 host"
{ command -v apt-get && command -v dpkg-query; } >/dev/null ||
	die 3 "no apt-get or dpkg-query: this script builds on Debian 12 or 13 (docs/kernel-deb.md says how elsewhere)"

# --------------------------------------------------------- the base config
# base: the configuration file to start from (empty for the lab's recipe
# or the lab tree's own); base_what: how the messages name it.
base='' base_what=''
if [ -n "$tree" ] && [ -z "$config" ]; then
	die 2 "--tree (KTREE) builds from the lab's tree: say which configuration, KCONFIG=lab (--config lab: the tree's own, the lab's QEMU-sized one) or KCONFIG=FILE (--config FILE)"
elif [ "$config" = lab ]; then
	if [ -n "$tree" ]; then
		base_what="the lab's (the .config of the lab's tree, --config lab)"
	else
		base_what="the lab's (tinyconfig + test/lab/ fragments, --config lab): sized for QEMU, no drivers for real hardware"
	fi
elif [ -n "$config" ]; then
	[ -f "$config" ] || die 2 "KCONFIG '$config': no such file"
	base=$(realpath "$config")
	base_what="$base (--config)"
else
	base=/boot/config-$(uname -r)
	[ -f "$base" ] ||
		die 2 "no $base, the running kernel's configuration (the default): give your Dom0 kernel's configuration with KCONFIG=FILE (--config FILE), or KCONFIG=lab (--config lab) for the lab's QEMU-sized one, which has no drivers for real hardware"
	base_what="$base (the running kernel's)"
fi
base_ver=
if [ -n "$base" ]; then
	grep -qx 'CONFIG_X86_64=y' "$base" ||
		die 2 "$base_what is not an x86-64 kernel's configuration (no CONFIG_X86_64=y): a Xen PV Dom0 with the series is x86-64 only, give an x86-64 one with KCONFIG=FILE"
	base_ver=$(sed -n '1,5s|^# Linux/x86 \([0-9]*\.[0-9]*\)[^ ]* Kernel Configuration$|\1|p' "$base" | head -n 1)
fi

# ------------------------------------------------------------- the version
if [ -z "$linux" ]; then
	if [ -n "$tree" ] && [ "$tree" != lab ] && [ -f "$tree/Makefile" ]; then
		linux=$(awk '$2 == "=" && $1 ~ /^(VERSION|PATCHLEVEL)$/ { v[$1] = $3 }
			END { print v["VERSION"] "." v["PATCHLEVEL"] }' "$tree/Makefile")
	elif [ -n "$base" ]; then
		case $base_ver in
		6.1|6.12|7.3) linux=$base_ver ;;
		"") die 2 "$base_what names no Linux version in its first lines: give LINUX=6.1, 6.12 or 7.3" ;;
		6.18) die 2 "$base_what is Linux 6.18's, whose series (test/linux-patch/6.18/) this script does not build: Debian has no linux-source-6.18 (on Qubes OS, build it with Qubes' builder, docs/hosts/qubes.md); give LINUX=6.1, 6.12 or 7.3 (olddefconfig adapts the configuration to it)" ;;
		*) die 2 "$base_what is Linux $base_ver's, for which there is no series: give LINUX=6.1, 6.12 or 7.3 (olddefconfig adapts the configuration to it)" ;;
		esac
	else
		linux=6.1
	fi
	case $linux in 6.1|6.12|7.3) ;; *) die 2 "KTREE '$tree' is Linux '$linux', which has no series here" ;; esac
fi
if [ -n "$base_ver" ] && [ "$base_ver" != "$linux" ]; then
	note "the base configuration is Linux $base_ver's, the kernel $linux: olddefconfig drops what $linux lacks and gives its defaults to what $base_ver lacks (see the .diff below)"
fi

mkdir -p "$out" || die 2 "cannot create the output folder '$out'"
out=$(realpath "$out")
LOG=$out/kernel-deb-$linux.log
: >"$LOG" || die 2 "cannot write $LOG"
t_start=$SECONDS

# ------------------------------------------------------------ the packages
# missing_pkgs PKG...: prints, one a line, the PKGs dpkg does not list as
# installed.
missing_pkgs() {
	local p
	for p; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || echo "$p"
	done
}
# ensure_pkgs WHAT PKG...: installs the PKGs that are missing with
# apt-get from the system's sources (as root), or refuses (exit 3) naming
# them and WHAT needs them.
ensure_pkgs() {
	local what=$1 miss
	shift
	miss=$(missing_pkgs "$@" | tr '\n' ' ')
	miss=${miss% }
	[ -n "$miss" ] || return 0
	[ "$(id -u)" = 0 ] ||
		die 3 "$what needs packages that are not installed: apt-get install $miss (as root), or run this as root to have them installed"
	note "installing $miss ($what; apt-get, the system's sources)"
	# shellcheck disable=SC2086 # $miss: package names, one word each
	{
		DEBIAN_FRONTEND=noninteractive apt-get update -q &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $miss
	} >>"$LOG" 2>&1 || die 3 "apt-get install $miss failed, see $LOG"
}
# What making the configuration needs (kconfig is built with gcc, bison
# and flex; the source is an xz tarball); pahole before olddefconfig when
# the base has DEBUG_INFO_BTF, since kconfig drops BTF without it.
cfg_pkgs=(gcc make libc6-dev bison flex xz-utils patch python3)
[ -n "$base" ] && grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$base" && cfg_pkgs+=(dwarves)
ensure_pkgs "making the configuration" "${cfg_pkgs[@]}"

# ------------------------------------------------- Debian's linux-source-V
# fetch_source: sets SRC_TAR to Debian's linux-source-$linux tarball and
# SRC_VER to its package version, downloading the package into $cache
# once through a private apt configuration; dies (3) when Debian's
# package lists or the package are out of reach.
fetch_source() {
	local dist suites sec='' dir apt_o ver pkg=linux-source-$linux tmp
	case $linux in
	6.1) dist=bookworm suites="bookworm bookworm-updates" sec=bookworm-security ;;
	6.12) dist=trixie suites="trixie trixie-updates" sec=trixie-security ;;
	7.3) dist=trixie-backports suites=trixie-backports ;;
	esac
	dir=$cache/apt/$dist
	apt_o=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dir/sources"
	       -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
	       -o Dir::Etc::Preferences=/dev/null -o "Dir::Etc::PreferencesParts=$dir/preferences")
	mkdir -p "$dir/sources" "$dir/preferences" "$dir/lists/partial" \
		"$dir/cache/archives/partial" "$cache/src" || die 2 "cannot create the cache folder $cache"
	{
		printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$suites"
		[ -z "$sec" ] ||
			printf '\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$sec"
	} >"$dir/sources/debian.sources"
	# Lists fetched on first use and again when a day old.
	if [ -z "$(find "$dir/lists/.updated" -mtime -1 2>/dev/null)" ]; then
		note "reading Debian's package lists of $suites${sec:+ $sec} (private apt configuration in $dir)"
		apt-get "${apt_o[@]}" update -q >>"$LOG" 2>&1 ||
			die 3 "cannot read Debian's package lists of $suites${sec:+ $sec} from deb.debian.org (network?), see $LOG"
		touch "$dir/lists/.updated"
	fi
	ver=$(apt-cache "${apt_o[@]}" policy "$pkg" 2>>"$LOG" | awk '/Candidate:/ {print $2}')
	case $ver in ""|"(none)") die 3 "Debian's $suites${sec:+ $sec} has no $pkg, see $LOG" ;; esac
	SRC_VER=$ver
	SRC_TAR=$cache/src/${pkg}_$ver.tar.xz
	[ -f "$SRC_TAR" ] && return 0
	note "downloading $pkg $ver"
	tmp=$(mktemp -d "$cache/src/.dl.XXXXXX") || die 2 "cannot write to $cache/src"
	if ! (
		cd "$tmp" &&
		apt-get "${apt_o[@]}" download "$pkg=$ver" &&
		dpkg-deb --fsys-tarfile ./*.deb | tar -x -f - "./usr/src/$pkg.tar.xz" &&
		mv "usr/src/$pkg.tar.xz" "$SRC_TAR"
	) >>"$LOG" 2>&1; then
		rm -rf "$tmp"
		die 3 "cannot download $pkg=$ver, see $LOG"
	fi
	rm -rf "$tmp"
}

# ------------------------------------------------------------ scratch tree
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/xps-kernel-deb.XXXXXX") || die 3 "cannot make a scratch folder under ${TMPDIR:-/var/tmp}"
if [ $keep = 1 ]; then
	note "scratch folder: $WORK (kept)"
else
	# In the background: deleting a 2 GB tree took 2 to 3 minutes here
	# (ext4 mounted with discard), longer than the packaging.
	trap 'setsid rm -rf "$WORK" </dev/null >/dev/null 2>&1 &' EXIT
fi
reuse=0 t_copy=0 t_fetch=0 t_extract=0 PAHOLE_ARG=
if [ -z "$tree" ]; then
	t0=$SECONDS
	mkdir -p "$cache" || die 2 "cannot create the cache folder $cache"
	# One run at a time reads the lists and downloads.
	(
		flock 9
		fetch_source
		echo "$SRC_VER" >"$WORK/src-ver"
	) 9>"$cache/.lock" || exit $?
	SRC_VER=$(cat "$WORK/src-ver")
	SRC_TAR=$cache/src/linux-source-${linux}_$SRC_VER.tar.xz
	t_fetch=$((SECONDS - t0))
	t0=$SECONDS
	tar -C "$WORK" -xf "$SRC_TAR" >>"$LOG" 2>&1 || die 3 "cannot extract $SRC_TAR into $WORK (disk space?), see $LOG"
	SRC=$WORK/linux-source-$linux
	[ -f "$SRC/Makefile" ] || die 3 "$SRC_TAR has no linux-source-$linux/Makefile"
	n=0
	for p in "$REPO/test/linux-patch/$linux"/*.patch; do
		[ "${p##*/}" = 0000-cover-letter.patch ] && continue
		patch -d "$SRC" -p1 --no-backup-if-mismatch -s <"$p" >>"$LOG" 2>&1 ||
			die 4 "patch ${p##*/} of test/linux-patch/$linux/ does not apply to linux-source-$linux $SRC_VER, see $LOG"
		n=$((n + 1))
	done
	grep -qs xen_register_ptep_get_and_clear "$SRC/arch/x86/include/asm/xen/ptep.h" ||
		die 4 "the series of test/linux-patch/$linux/ applied but $SRC has no xen_register_ptep_get_and_clear()"
	t_extract=$((SECONDS - t0))
	note "source: Debian's linux-source-$linux $SRC_VER with the $n patches of test/linux-patch/$linux/ (${t_fetch} s fetching, ${t_extract} s extracting and patching)"
	# Plain gcc: a one-off build gains little from ccache, whose cache
	# folder would be one more thing to get right (as a user without a
	# home folder, "ccache gcc" fails kconfig's assembler check).
	CC_CMD=gcc
	ccache_dir=
else
	# The lab's tree of V, the lab's own test path.
	ensure_pkgs "the lab's tree" ccache
	if [ "$tree" = lab ]; then
		[ "$(id -u)" = 0 ] ||
			die 3 "test/lab/run provides the tree and needs root: run as root, or give KTREE=DIR (--tree DIR), DIR from the 'lab: kernel tree: DIR' line of 'sudo test/lab/run --linux $linux --kernel native --no-module --build-only'"
		note "asking test/lab/run for Linux $linux's tree (it builds it first if the lab has not)"
		# No XPS_LAB_LINUX_EXCLUDE: the packages carry the whole series.
		env -u XPS_LAB_LINUX_EXCLUDE "$REPO/test/lab/run" --linux "$linux" --kernel native \
			--no-module --build-only >>"$LOG" 2>&1 </dev/null ||
			die 5 "test/lab/run --linux $linux --build-only failed: $(grep '^lab: ' "$LOG" | tail -n 1), see $LOG"
		tree=$(sed -n 's/^lab: kernel tree: //p' "$LOG" | tail -n 1)
		[ -n "$tree" ] || die 5 "test/lab/run printed no 'kernel tree:' line, see $LOG"
	fi
	if [ ! -f "$tree/Makefile" ] || [ ! -f "$tree/.config" ]; then
		die 2 "KTREE '$tree' is not a configured Linux tree"
	fi
	tree_named=$tree
	tree=$(realpath "$tree")
	# Read, not `make kernelversion`: nothing runs in the lab's cache entry.
	kver=$(awk '$2 == "=" && $1 ~ /^(VERSION|PATCHLEVEL|SUBLEVEL)$/ { v[$1] = $3 }
		END { print v["VERSION"] "." v["PATCHLEVEL"] (v["SUBLEVEL"] != "" ? "." v["SUBLEVEL"] : "") }' "$tree/Makefile")
	case $kver in "$linux".*|"$linux") ;; *) die 2 "KTREE '$tree' is Linux '$kver', not $linux" ;; esac
	[ "$config" = lab ] && [ -f "$tree/vmlinux" ] && reuse=1
	t0=$SECONDS
	cp -a "$tree" "$WORK/linux-$kver" || die 3 "cannot copy $tree to $WORK (disk space?), see $LOG"
	t_copy=$((SECONDS - t0))
	SRC=$WORK/linux-$kver
	note "copied the lab's tree ($tree) in ${t_copy} s"
	# kbuild's saved commands and dependency lists are relative to the
	# tree, but not those of the host tools it builds with their own make
	# (objtool, with O= and srctree= absolute): they name the tree's old
	# place.  With the old commands kept, the new objtool binary would be
	# rebuilt and, since every object depends on it, the whole kernel
	# recompiled; point them at the copy (its files kept their timestamps).
	saved() { find "$SRC" \( -name '.*.cmd' -o -name '.*.d' \) -type f -print0 | xargs -0 grep -lZF -- "$1/"; }
	for old in "$tree" "${tree_named%/}"; do
		saved "$old" | xargs -0 -r sed -i "s|$old/|$SRC/|g"
		[ -z "$(saved "$old" | tr '\0' '\n')" ] || die 3 "cannot relocate the saved commands in $SRC"
	done
	# The lab's compiler command: kbuild rebuilds an object whose saved
	# command differs, so another CC would recompile everything.
	CC_CMD="ccache gcc"
	ccache_dir=
	[ -w "${XPS_CACHE:-/var/cache/xen-ptswap}/ccache" ] && ccache_dir=${XPS_CACHE:-/var/cache/xen-ptswap}/ccache
	# kconfig records pahole's version (CONFIG_PAHOLE_VERSION, 0 without
	# pahole) and syncs the config again when it changes: a tree the lab
	# configured before pahole (dwarves) was installed would get another
	# .config here.  Hide pahole from such a tree.
	tree_pahole=$(sed -n 's/^CONFIG_PAHOLE_VERSION=//p' "$tree/.config")
	if [ "$tree_pahole" = 0 ] && command -v pahole >/dev/null; then
		PAHOLE_ARG=PAHOLE=/nonexistent/pahole
	elif [ -n "$tree_pahole" ] && [ "$tree_pahole" != 0 ] &&
		[ "$(pahole --version 2>/dev/null | sed -E 's/v([0-9]+)\.([0-9]+)/\1\2/')" != "$tree_pahole" ]; then
		note "warning: the lab's tree was configured with pahole $tree_pahole, this host has $(pahole --version 2>/dev/null || echo none): the configuration will differ in CONFIG_PAHOLE_VERSION"
	fi
fi
# Since 6.3 the kernel's debian/rules uses debhelper.
dh=0
grep -qs 'dh_' "$SRC/scripts/package/debian/rules" && dh=1

# kmake ARG...: the kernel's make in $SRC, without anything of the make
# that may have called us (`make kernel-deb LINUX=... KCONFIG=...` would
# pass its variables down) or a LOCALVERSION of the environment (kbuild
# appends it to the release).
kmake() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS -u LOCALVERSION ${ccache_dir:+CCACHE_DIR="$ccache_dir"} \
		make -C "$SRC" CC="$CC_CMD" ${PAHOLE_ARG:+"$PAHOLE_ARG"} "$@"
}

# ------------------------------------------------------------------ config
t0=$SECONDS
cfg=$SRC/.config
if [ -n "$base" ]; then
	cp "$base" "$cfg" || die 3 "cannot copy $base"
elif [ -z "$tree" ]; then
	# The lab's recipe (test/lab/run's build_linux): the later fragments win.
	frags=("$REPO/test/lab/dom0.config")
	if [ "$linux" = 6.12 ]; then
		frags+=("$REPO/test/lab/dom0-debian-6.12.config")
	else
		frags+=("$REPO/test/lab/dom0-debian.config")
	fi
	[ -f "$REPO/test/lab/dom0-$linux.config" ] && frags+=("$REPO/test/lab/dom0-$linux.config")
	{
		kmake tinyconfig &&
		(cd "$SRC" && ./scripts/kconfig/merge_config.sh -m .config "${frags[@]}") &&
		kmake olddefconfig
	} >>"$LOG" 2>&1 || die 4 "the lab's configuration recipe failed, see $LOG"
fi
cp "$cfg" "$WORK/base.config"
if [ -n "$base" ]; then
	# A distribution's config names the certificates, the module signing
	# key and the like of its own build (Debian:
	# debian/certs/debian-uefi-certs.pem), which this tree lacks: build
	# without the certificates, and with a key kbuild makes
	# (certs/signing_key.pem).
	for o in SYSTEM_TRUSTED_KEYS: SYSTEM_REVOCATION_KEYS: SYSTEM_BLACKLIST_HASH_LIST: \
		EFI_SBAT_FILE: MODULE_SIG_KEY:certs/signing_key.pem; do
		want=${o#*:} o=${o%%:*}
		f=$(sed -n "s/^CONFIG_$o=\"\(.*\)\"$/\1/p" "$cfg")
		case $f in ""|pkcs11:*|"$want") continue ;; esac
		if [ ! -f "$f" ] && [ ! -f "$SRC/$f" ]; then
			note "CONFIG_$o=\"$f\" is not in the tree: set to \"$want\""
			"$SRC/scripts/config" --file "$cfg" --set-str "$o" "$want"
		fi
	done
fi
# on NAME=y|ym: whether the config has NAME at that value.
on() {
	local o=${1%%=*} v=${1#*=}
	if [ "$v" = ym ]; then grep -qxE "CONFIG_$o=(y|m)" "$cfg"; else grep -qx "CONFIG_$o=y" "$cfg"; fi
}
# turn_on NAME=y|ym...: sets each NAME that is not on (ym: as a module).
turn_on() {
	local o
	for o; do
		on "$o" && continue
		if [ "${o#*=}" = ym ]; then
			"$SRC/scripts/config" --file "$cfg" --module "${o%%=*}"
		else
			"$SRC/scripts/config" --file "$cfg" --enable "${o%%=*}"
		fi
	done
}
turn_on "${NEEDED[@]}"
[ "$config" = lab ] || turn_on "${BACKENDS[@]}"
"$SRC/scripts/config" --file "$cfg" --set-str LOCALVERSION "$localversion" \
	--disable LOCALVERSION_AUTO
# syncconfig: include/config/auto.conf, which kernelrelease reads.
{ kmake olddefconfig && kmake syncconfig; } >>"$LOG" 2>&1 || die 4 "make olddefconfig failed, see $LOG"
# depends_of NAME: prints the "depends on" conditions of option NAME in
# the x86 and generic Kconfig files of the tree, each in parentheses,
# joined with " && " (empty if none is found).
depends_of() {
	# shellcheck disable=SC2016 # an awk program
	find "$SRC" -path "$SRC/arch" -prune -o -name 'Kconfig*' -type f -print0 |
		cat - <(find "$SRC/arch/x86" -name 'Kconfig*' -type f -print0) |
		xargs -0 awk -v name="$1" '
			/^(menu)?config / { in_it = ($2 == name); next }
			/^[^ \t#]/ { in_it = 0 }
			in_it && /^[ \t]+depends on / {
				sub(/^[ \t]+depends on /, "")
				d = d (d == "" ? "" : " && ") "(" $0 ")"
			}
			END { print d }'
}
for o in X86_64=y "${NEEDED[@]}"; do
	on "$o" && continue
	want=y
	[ "${o#*=}" = ym ] && want="y or m"
	deps=$(depends_of "${o%%=*}")
	die 2 "CONFIG_${o%%=*} is not $want after make olddefconfig, and a Xen PV Dom0 with the series needs it: it depends on ${deps:-options that are off}; turn those on in $base_what and give the result with KCONFIG=FILE"
done
# The series makes XEN_PV select what builds TASKS_RCU on a preemptible
# kernel (synchronize_rcu_tasks() when the pv-op's owner unregisters).
if grep -qx 'CONFIG_PREEMPTION=y' "$cfg" && ! grep -qx 'CONFIG_TASKS_RCU=y' "$cfg"; then
	die 4 "CONFIG_PREEMPTION=y without CONFIG_TASKS_RCU=y: the series' Kconfig change (XEN_PV selects it) is missing from $SRC"
fi
if [ "$config" != lab ]; then
	for o in "${BACKENDS[@]}"; do
		on "$o" || note "warning: CONFIG_${o%%=*} is off after make olddefconfig (an option it depends on is off): guests get no ${o%%=*} from this Dom0 kernel"
	done
fi
rel=$(kmake -s kernelrelease 2>>"$LOG") || die 4 "make kernelrelease failed, see $LOG"
final=$out/config-$rel
cp "$cfg" "$final" || die 3 "cannot write $final"
ndiff='?'
if command -v python3 >/dev/null && [ -f "$SRC/scripts/diffconfig" ]; then
	python3 "$SRC/scripts/diffconfig" "$WORK/base.config" "$cfg" >"$final.diff" 2>>"$LOG" &&
		ndiff=$(grep -c . "$final.diff")
fi
t_config=$((SECONDS - t0))
note "base: $base_what"
note "config: $final (made and checked in ${t_config} s; changed from the base: $ndiff options, listed in $final.diff)"
if [ $config_only = 1 ]; then
	note "--config-only: stopping before the build, $((SECONDS - t_start)) s in all"
	exit 0
fi

# ------------------------------------------------------------------- build
# build-essential: dpkg-buildpackage, which bindeb-pkg runs, checks it
# as every Debian package's implicit build dependency (Debian Policy 4.2).
build_pkgs=(build-essential gcc make libc6-dev bc bison flex libelf-dev libssl-dev kmod
	cpio rsync dpkg-dev fakeroot python3 xz-utils)
[ $dh = 1 ] && build_pkgs+=(debhelper)
grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$cfg" && build_pkgs+=(dwarves)
grep -qxE 'CONFIG_(KERNEL|MODULE_COMPRESS|RD)_ZSTD=y' "$cfg" && build_pkgs+=(zstd)
grep -qxE 'CONFIG_KERNEL_LZ4=y' "$cfg" && build_pkgs+=(lz4)
grep -qxE 'CONFIG_KERNEL_LZO=y' "$cfg" && build_pkgs+=(lzop)
ensure_pkgs "the kernel package build" "${build_pkgs[@]}"
if grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$cfg" && ! command -v pahole >/dev/null; then
	# Otherwise the build fails at the final link, hours in.
	die 3 "the config has CONFIG_DEBUG_INFO_BTF=y, which needs pahole: apt-get install dwarves"
fi
if [ $reuse = 1 ]; then
	note "building $rel: the lab's build of Linux $linux reused, only what the release string reaches is recompiled"
else
	note "building $rel: a full build (hours with a distribution's configuration on 2 cores)"
fi
note "log: $LOG"
t0=$SECONDS
# DPKG_FLAGS=-d: the build dependencies debian/control lists are not all
# needed; the packages above are.  KBUILD_VERBOSE=0 in the environment:
# kbuild's short lines (newer debian/rules turns KBUILD_VERBOSE on when it
# is not set).  Not DEB_BUILD_OPTIONS=terse: with it dpkg-buildpackage
# appends " --no-print-directory" to MAKEFLAGS, and under Debian 13's GNU
# make 4.4 that lands after the "--" behind which the command line's
# variables sit: debian/rules stops with "No rule to make target
# '--no-print-directory'" (test/debian13-userland --build; Debian 12's
# make 4.3 built).
KBUILD_VERBOSE=0 kmake -j"$(nproc)" DPKG_FLAGS=-d bindeb-pkg >>"$LOG" 2>&1 ||
	die 4 "make bindeb-pkg failed: $(grep -m1 -E 'error:|Error [0-9]|\*\*\*' "$LOG" | cut -c1-200), see $LOG"
t_build=$((SECONDS - t0))
compiled=$(grep -c '^  CC ' "$LOG")

shopt -s nullglob
debs=("$WORK"/*.deb)
shopt -u nullglob
[ ${#debs[@]} -gt 0 ] || die 4 "make bindeb-pkg made no .deb, see $LOG"
for d in "${debs[@]}"; do mv -f "$d" "$out/" || die 3 "cannot move $d to $out"; done
for f in "$WORK"/*.buildinfo "$WORK"/*.changes; do [ -f "$f" ] && mv -f "$f" "$out/"; done
note "Linux $linux, release $rel: $compiled C files compiled, bindeb-pkg took ${t_build} s, ${t_copy} s copying, $((SECONDS - t_start)) s in all"
for d in "${debs[@]}"; do note "$out/${d##*/}"; done
exit 0
}
