#!/bin/bash
# Runs inside the lab's Dom0 (or native-floor) chroot, called by
# test/lab/init.  Makes /lib/modules/$(uname -r) usable (build link to the
# kernel tree, the xen_ptswap module installed and depmod'ed), then runs the
# command test/lab/run wrote to /xps-lab/cmd.sh from /xps (the clone) and
# exits with its status.

set -a
# shellcheck source=/dev/null
. /xps-lab/env
set +a
export HOME=/root LANG=C.UTF-8 TERM=dumb
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# A toolstack of test/lab/xen-tools (test/lab/run --env XPS_XEN_TOOLS=PREFIX,
# e.g. for a Xen 4.20 hypervisor, which Debian 12's xen-utils-4.17 cannot
# drive): its sbin/ and bin/ first on PATH, so that xl, xenperf, xenstore-*
# and test/lab/xl-guest's daemons are the matching ones.  No library path:
# its programs carry an rpath to PREFIX/lib (xen-tools configures with
# --enable-rpath), so Debian's own programs keep Debian's libraries.
if [ -n "${XPS_XEN_TOOLS:-}" ]; then
	if [ ! -x "$XPS_XEN_TOOLS/sbin/xl" ]; then
		echo "dom0-run: XPS_XEN_TOOLS=$XPS_XEN_TOOLS holds no sbin/xl (not a prefix of test/lab/xen-tools)" >&2
		exit 125
	fi
	export PATH=$XPS_XEN_TOOLS/sbin:$XPS_XEN_TOOLS/bin:$PATH
fi

rel=$(uname -r)
mods=/lib/modules/$rel
mkdir -p "$mods"
if [ -n "$XPS_KSRC" ] && [ -d "$XPS_KSRC" ]; then
	ln -sfn "$XPS_KSRC" "$mods/build"
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[ -f "$XPS_KSRC/$f" ] && cp "$XPS_KSRC/$f" "$mods/"
	done
fi
if [ -f /xps-lab/xen_ptswap.ko ]; then
	mkdir -p "$mods/extra"
	cp /xps-lab/xen_ptswap.ko "$mods/extra/"
	export XPS_MODULE=$mods/extra/xen_ptswap.ko
fi
depmod -a 2>/dev/null

# Bring the loopback interface up for tools that want it.
ip link set lo up 2>/dev/null

# Whether the emulated CPU keeps RFLAGS across CMPXCHG16B: QEMU 7.2, the
# lab's, does not, and a single-step #DB that follows looks like the
# kernel's (test/qemu-flags/cmpxchg16b-flags.c, built by test/lab/run;
# docs/testing.md, "Failures explained").  Reported on the console for
# the serial log, not fatal.
echo "XPS-LAB: cpu: cmpxchg16b-flags: $(/xps-lab/cmpxchg16b-flags)"

cd /xps || exit 125
exec /bin/bash /xps-lab/cmd.sh
