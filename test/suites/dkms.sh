#!/bin/bash
# test/suites/dkms.sh - DKMS packaging of xen_ptswap in the lab's Dom0
# (issue 7): the dkms.conf and Kbuild at the top of the repo.
#
# On the patched lab kernel: `dkms add`, `dkms build`, `dkms install`,
# then modprobe loads the DKMS-built module and rmmod removes it.
#
# Booted with `test/lab/run --dkms` ($XPS_DKMS_TARBALL set), the build is
# DKMS's on the host, against the same kernel tree, and Dom0 loads its
# binaries with `dkms ldtarball`, as DKMS's manual describes for building
# on one machine and installing on others: dkms-ldtarball (which also
# adds the module) replaces dkms-add, and the host's verdicts
# (dkms-host-build, dkms-host-mktarball, from $XPS_DKMS_HOST) and
# dkms-ldtarball-built replace dkms-build-lab-kernel; the rest is the
# same.
# Compiling under QEMU's software CPU took 15 minutes of the suite's 16
# (make check, 2026-12-01); the whole matrix (test/check --full) keeps
# the in-Dom0 build.  The
# build against Debian's stock 6.1 headers runs on the host instead
# (test/dkms-stock, in every `make check`): compiling under QEMU's
# software CPU took ten minutes for it.  Runs in the overlay root, so
# nothing persists.
# Prints one "PASS: <check>" or "FAIL: <check>: <reason>" line per check.

set -u

cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
T=$(mktemp -d /tmp/xps-dkms.XXXXXX)
REL=$(uname -r)
NAME=xen-ptswap
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
failed=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; failed=1; }
info() { echo "info: $*"; }
trap 'rm -rf "$T"' EXIT

# The built module and the make log DKMS keeps for kernel $1.
dkms_ko() { echo "/var/lib/dkms/$NAME/$VER/$1/x86_64/module/xen_ptswap.ko"; }
dkms_log() { echo "/var/lib/dkms/$NAME/$VER/$1/x86_64/log/make.log"; }

# build_ok CHECK KERNEL: dkms build for KERNEL, no compiler warning.
build_ok() {
	if ! dkms build -m "$NAME" -v "$VER" -k "$2" >"$T/build-$2.out" 2>&1; then
		fail "$1" "$(tail -n 5 "$T/build-$2.out" | tr '\n' ' ')"
		return 1
	fi
	if grep -q 'warning:' "$(dkms_log "$2")" 2>/dev/null; then
		fail "$1" "$(grep -m1 'warning:' "$(dkms_log "$2")")"
		return 1
	fi
	pass "$1"
}

# has_hook KO: was KO built with the hook (Kbuild's build-time check)?
has_hook() { nm "$1" 2>/dev/null | grep -q ' U xen_register_ptep_get_and_clear$'; }

if [ -z "$VER" ]; then
	fail dkms-conf "no PACKAGE_VERSION in dkms.conf"
	exit 1
fi
info "dkms $(dkms --version 2>&1), kernel $REL, xen=${XPS_LAB_XEN:-?} kernel=${XPS_LAB_KERNEL:-?}"

# Install the source the way a user does: make module-dkms-src, then dkms
# add; or, with the host's tarball, dkms ldtarball, which adds the module
# from that source and loads the host's build of it (a binaries-only
# tarball needs the source in /usr/src, and ldtarball refuses a module
# that is already added).
if [ -n "${XPS_DKMS_HOST:-}" ]; then
	add=(ldtarball "${XPS_DKMS_TARBALL:-/nonexistent}") check=dkms-ldtarball
else
	add=(add -m "$NAME" -v "$VER") check=dkms-add
fi
if make -s -f "$REPO/mk/module.mk" module-dkms-src >"$T/src.out" 2>&1 &&
	dkms "${add[@]}" >"$T/add.out" 2>&1; then
	pass $check
else
	fail $check "$(cat "$T/src.out" "$T/add.out" | grep -v 'not function properly if /proc' | tail -n 3 | tr '\n' ' ')"
	[ -n "${XPS_DKMS_HOST:-}" ] && [ -r "$XPS_DKMS_HOST" ] && grep '^FAIL: ' "$XPS_DKMS_HOST"
	exit 1
fi

# get_built CHECK: the module built for this kernel in DKMS's tree: by
# `dkms build` here, or on the host (--dkms: its verdicts, then the
# module that ldtarball loaded).
get_built() {
	local line
	if [ -z "${XPS_DKMS_HOST:-}" ]; then
		build_ok "$1" "$REL"
		return
	fi
	while IFS= read -r line; do
		case $line in
		PASS:*|FAIL:*) echo "$line"; [[ $line == FAIL:* ]] && failed=1 ;;
		esac
	done <"$XPS_DKMS_HOST"
	info "dkms status: $(dkms status -m "$NAME" -v "$VER" -k "$REL" 2>&1 | grep -v 'if /proc' | tr '\n' ' ')"
	if [ ! -f "$(dkms_ko "$REL")" ]; then
		fail dkms-ldtarball-built "no $(dkms_ko "$REL") after dkms ldtarball"
		return 1
	fi
	pass dkms-ldtarball-built
}

if [ "${XPS_LAB_KERNEL:-patched}" = patched ]; then
	if get_built dkms-build-lab-kernel; then
		if has_hook "$(dkms_ko "$REL")"; then
			pass dkms-build-lab-kernel-has-hook
		else
			fail dkms-build-lab-kernel-has-hook "Kbuild did not find the hook in /lib/modules/$REL/build"
		fi
		# Let only the DKMS copy answer to the name xen_ptswap.
		rm -f "/lib/modules/$REL/extra/xen_ptswap.ko"
		if dkms install -m "$NAME" -v "$VER" -k "$REL" >"$T/install.out" 2>&1; then
			pass dkms-install
		else
			fail dkms-install "$(tail -n 3 "$T/install.out" | tr '\n' ' ')"
		fi
		path=$(modinfo -n xen_ptswap 2>/dev/null)
		info "modinfo -n xen_ptswap: $path"
		case $path in
		*/updates/dkms/*|*/extra/*) pass dkms-install-path ;;
		*) fail dkms-install-path "modinfo finds '$path'" ;;
		esac
		case ${XPS_LAB_XEN:-patched} in patched|debug) sub_op=1 ;; *) sub_op= ;; esac
		if [ -n "$sub_op" ]; then
			if modprobe xen_ptswap 2>"$T/modprobe.err" &&
				grep -q '^xen_ptswap ' /proc/modules; then
				pass dkms-modprobe
			else
				fail dkms-modprobe "$(cat "$T/modprobe.err")"
			fi
			if rmmod xen_ptswap 2>"$T/rmmod.err" &&
				! grep -q '^xen_ptswap ' /proc/modules; then
				pass dkms-rmmod
			else
				fail dkms-rmmod "$(cat "$T/rmmod.err")"
			fi
		else
			info "dkms-modprobe not run: Xen ${XPS_LAB_XEN:-} has no MMU_PT_UPDATE_SWAP"
		fi
	fi
fi

# Debian's stock 6.1 headers, if the host has them: builds, no hook.
dkms remove -m "$NAME" -v "$VER" --all >/dev/null 2>&1
exit $failed
