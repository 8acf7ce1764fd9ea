#!/bin/bash
# test/suites/kernel-deb.sh - the Dom0 half of test/kernel-deb: the lab
# booted the vmlinuz of a linux-image .deb of mk/kernel-deb.sh --config
# lab --tree lab (the lab's configuration: the lab's initramfs needs its
# built-in virtio and 9p) as Dom0
# (test/lab/run --kernel-image, --no-module); this installs that kernel's
# packages the way an operator does and loads the xen_ptswap module that
# DKMS built on the host against the headers package.
#
# Needs (from test/kernel-deb, through --env): $XPS_KDEB_DIR, a host
# folder (visible in Dom0: the host's root is Dom0's) with debs/*.deb,
# headers/ (the headers package unpacked) and the DKMS tarball
# xen-ptswap-VERSION-REL.tar.gz (dkms mktarball --binaries-only,
# test/dkms-host-build), and $XPS_KDEB_REL, the packages' kernel
# release.  Not a SUITES line: the packages must exist
# before the boot.
#
# Checks: running-release (uname -r is the packages'), running-image (the
# booted file is the package's /boot/vmlinuz-REL, its version string the
# running kernel's), running-config (/proc/config.gz is the package's
# /boot/config-REL), unpack (the image package's /boot and
# /lib/modules/REL in place, the headers package's tree as
# /lib/modules/REL/build), dkms-ldtarball, dkms-install (into
# /lib/modules/REL/updates/dkms, vermagic REL), modprobe (and
# /sys/module/xen_ptswap), stats (64 MiB of MADV_DONTNEED counted,
# deferred, no hypercall error, data intact), rmmod, klog-clean.  Runs in
# the overlay root: nothing persists.
# Prints "PASS: <check>" or "FAIL: <check>: <why>" per check, "N passed,
# N failed" last; exit status 0 iff nothing failed.

set -u
cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
WORK=/tmp/xps-kernel-deb-suite
# shellcheck source=test/suites/lib.sh
. "$REPO/test/suites/lib.sh"
start_suite

NAME=xen-ptswap
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")
D=${XPS_KDEB_DIR:-} REL=${XPS_KDEB_REL:-}
if [ -z "$D" ] || [ -z "$REL" ] || [ ! -d "$D/debs" ]; then
	fail setup "cannot run because XPS_KDEB_DIR or XPS_KDEB_REL is not set: test/kernel-deb runs this suite"
	finish
fi
shopt -s nullglob
img=("$D/debs/linux-image-${REL}_"*.deb)
hdr=("$D/debs/linux-headers-${REL}_"*.deb)
shopt -u nullglob
tarball=$D/$NAME-$VER-$REL.tar.gz
if [ ${#img[@]} != 1 ] || [ ${#hdr[@]} != 1 ] || [ ! -f "$tarball" ]; then
	fail setup "cannot run because $D lacks debs/linux-image-${REL}_*.deb, debs/linux-headers-${REL}_*.deb or $(basename "$tarball")"
	finish
fi
note "kernel $(uname -r) $(uname -v), image ${XPS_LAB_KERNEL_IMAGE:-?}"

# ------------------------------------------------ the kernel that is running
if [ "$(uname -r)" = "$REL" ]; then
	pass running-release
else
	fail running-release "uname -r is $(uname -r), the packages' release is $REL"
fi
mkdir -p "$WORK/image"
dpkg-deb -x "${img[0]}" "$WORK/image"
pimg=$WORK/image/boot/vmlinuz-$REL
# The version string in the bzImage header: "REL (user@host) #N SMP ... date".
pver=$(file -b "$pimg" 2>/dev/null | sed -n 's/.*, version \(.*\), RO-rootFS.*/\1/p')
if [ -n "${XPS_LAB_KERNEL_IMAGE:-}" ] && cmp -s "$pimg" "$XPS_LAB_KERNEL_IMAGE" &&
	[[ $pver == "$(uname -r) "*" $(uname -v)" ]]; then
	pass running-image
else
	fail running-image "booted '${XPS_LAB_KERNEL_IMAGE:-}', the package's image says '$pver', running: $(uname -r) $(uname -v)"
fi
if [ -r /proc/config.gz ] && zcat /proc/config.gz | cmp -s - "$WORK/image/boot/config-$REL"; then
	pass running-config
else
	fail running-config "/proc/config.gz differs from the package's /boot/config-$REL (or is missing)"
fi

# ------------------------------------------- the packages' files in place
# The image package's /boot and /lib/modules/REL (unpacked above) copied
# into the overlay root, and the headers as unpacked on the host: `dpkg
# -i` of both took longer than the whole 30-minute boot under QEMU's
# software CPU (dpkg reading the host's file lists over 9p, then 8,000
# header files), so test/kernel-deb checks the packages' installability
# on the host with dpkg --no-act instead.  Not `dpkg-deb -x PKG /`: its
# ./lib directory would replace merged-/usr's /lib symlink, and with it
# the dynamic loader.  test/lab/dom0-run.sh linked /lib/modules/REL/build
# to the lab's tree.
rm -f "/lib/modules/$REL/build"
if cp -a "$WORK/image/boot/." /boot/ 2>"$WORK/unpack.err" &&
	cp -a "$WORK/image/lib/modules/$REL" /lib/modules/ 2>>"$WORK/unpack.err" &&
	[ -f "/boot/vmlinuz-$REL" ] && [ -f "/lib/modules/$REL/modules.builtin" ] &&
	ln -s "$D/headers/usr/src/linux-headers-$REL" "/lib/modules/$REL/build" &&
	[ -f "/lib/modules/$REL/build/Makefile" ]; then
	pass unpack
else
	fail unpack "$(head -n 2 "$WORK/unpack.err" | tr '\n' ' ') (image files or $D/headers/usr/src/linux-headers-$REL missing)"
fi
if make -s -f "$REPO/mk/module.mk" module-dkms-src >"$WORK/src.out" 2>&1 &&
	dkms ldtarball "$tarball" >"$WORK/ldtarball.out" 2>&1 &&
	[ -f "/var/lib/dkms/$NAME/$VER/$REL/x86_64/module/xen_ptswap.ko" ]; then
	pass dkms-ldtarball
else
	fail dkms-ldtarball "$(cat "$WORK/src.out" "$WORK/ldtarball.out" | grep -v 'if /proc' | tail -n 3 | tr '\n' ' ')"
fi
path=
if dkms install -m "$NAME" -v "$VER" -k "$REL" >"$WORK/install.out" 2>&1; then
	path=$(modinfo -n xen_ptswap 2>/dev/null)
	magic=$(modinfo -F vermagic xen_ptswap 2>/dev/null)
	case $path:$magic in
	/lib/modules/"$REL"/updates/dkms/*:"$REL "*) pass dkms-install ;;
	*) fail dkms-install "modinfo finds '$path', vermagic '$magic'" ;;
	esac
else
	fail dkms-install "$(tail -n 3 "$WORK/install.out" | tr '\n' ' ')"
fi
note "dkms status: $(dkms status 2>&1 | grep -v 'if /proc\|/dev/fd' | tr '\n' ' ')"

# ------------------------------------------------------------- the module
if modprobe xen_ptswap 2>"$WORK/modprobe.err" && xps_loaded; then
	pass modprobe
	note "$(dmesg | grep -m1 'xen_ptswap: installed')"
else
	fail modprobe "$(cat "$WORK/modprobe.err") $(dmesg | grep 'xen_ptswap:' | tail -n 1)"
fi
if xps_loaded; then
	prog=
	if bin=$(xps_correctness_bin) && [ -x "$bin/xps_dontneed" ]; then prog=$bin/xps_dontneed; fi
	pages=$((64 * 256))
	if [ -z "$prog" ]; then
		fail stats "cannot run because the lab built no xps_dontneed (\$XPS_CORRECTNESS_BIN)"
	elif ! "$prog" -m 64 -c >"$WORK/dontneed.out" 2>&1; then
		fail stats "xps_dontneed -m 64 -c failed: $(tail -n 2 "$WORK/dontneed.out" | tr '\n' ' ')"
	else
		calls=$(stat_of calls) deferred=$(stat_of deferred) errs=$(stat_of hcall_errors)
		if [ "${calls:-0}" -ge "$pages" ] && [ "${deferred:-0}" -gt 0 ] && [ "${errs:-1}" = 0 ]; then
			pass stats
		else
			fail stats "calls=${calls:-?} deferred=${deferred:-?} hcall_errors=${errs:-?} for $pages pages ($STATS)"
		fi
		note "stats: $(tr '\n' ' ' <"$STATS")"
	fi
	if rmmod xen_ptswap 2>"$WORK/rmmod.err" && ! xps_loaded; then
		pass rmmod
	else
		fail rmmod "$(cat "$WORK/rmmod.err")"
	fi
fi
if ! dmesg >"$WORK/dmesg.txt" 2>&1 || [ ! -s "$WORK/dmesg.txt" ]; then
	fail klog-clean "cannot read the kernel log"
elif grep -E "$BAD_LOG" "$WORK/dmesg.txt" >"$WORK/bad.log"; then
	fail klog-clean "$(head -n 1 "$WORK/bad.log")"
else
	pass klog-clean
fi
finish
