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

cd /xps || exit 125
exec /bin/bash /xps-lab/cmd.sh
