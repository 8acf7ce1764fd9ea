#!/bin/bash
# test/suites/xen-swap.sh - Xen's MMU_PT_UPDATE_SWAP and MMU_PT_CLEAR_RUN
# sub-ops and their feature bits, checked from the lab's Dom0 (issues 3
# and 34).
#
# Runs inside Dom0 from /xps (see test/lab/run).  Builds
# test/ktest/ptswap_xen_test against the running kernel, loads it with
# expect=patched (patched or debug Xen) or expect=stock and prints the
# module's checks; around them checks
# the feature bits as /sys/hypervisor shows them, that include/xen_ptswap_abi.h
# agrees with the patched Xen's public headers ($XPS_XEN_TREE), a bad
# parameter, the kernel log and unloading.
#   patched Xen: the sub-ops' behaviour (see the module's checks)
#   debug Xen:   the same on the patched Xen built with CONFIG_DEBUG=y
#                (--xen debug), and that Xen's console says debug=y
#   stock Xen:   bits 21 and 22 clear, and a swap and a run request each
#                fail changing nothing
# Prints one "PASS: <check>" or "FAIL: <check>: <reason>" line per check,
# "info:" lines with what the module logged.  Exit status 0 if all passed.

set -u

cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
T=$(mktemp -d /tmp/xps-xen-swap.XXXXXX)
MOD=ptswap_xen_test
RESULTS=/sys/kernel/debug/$MOD/results
failed=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; failed=1; }

cleanup() {
	grep -q "^$MOD " /proc/modules && rmmod "$MOD"
	rm -rf "$T"
}
trap cleanup EXIT

# abi_value FILE NAME: the number NAME is #defined to in FILE.
abi_value() {
	awk -v n="$2" '$1 == "#define" && $2 == n { print $3; exit }' "$1"
}

xen=${XPS_LAB_XEN:-}
case $xen in
patched|debug) want_bit=1 expect=patched ;;
stock) want_bit=0 expect=stock ;;
*)
	fail setup "cannot run because XPS_LAB_XEN is '$xen', not patched, debug or stock"
	exit 1 ;;
esac

# A debug Xen's banner says so: the serial log, which the lab's run folder
# (/xps-lab) holds (xl dmesg would need xenstored).
if [ "$xen" = debug ]; then
	banner=$(tr -d '\r' </xps-lab/serial.log 2>/dev/null | grep -a -m1 'Xen version')
	case $banner in
	*debug=y*) pass xen-is-debug-build ;;
	*) fail xen-is-debug-build "Xen's banner in /xps-lab/serial.log: '${banner:-none}'" ;;
	esac
fi

# The bits as Linux shows them, independent of the module.
features=$(cat /sys/hypervisor/properties/features 2>/dev/null)
bit=$(abi_value include/xen_ptswap_abi.h XENFEAT_mmu_pt_update_swap)
run_bit=$(abi_value include/xen_ptswap_abi.h XENFEAT_mmu_pt_clear_run)
for b in "sysfs-feature-bit:$bit" "sysfs-run-feature-bit:$run_bit"; do
	name=${b%%:*} n=${b#*:}
	if [ -z "$features" ] || [ -z "$n" ]; then
		fail "$name" "cannot run because /sys/hypervisor/properties/features is '$features' or the ABI header has no bit"
	elif [ $(((0x$features >> n) & 1)) = "$want_bit" ]; then
		pass "$name"
	else
		fail "$name" "features $features: bit $n is $(((0x$features >> n) & 1)) on $xen Xen"
	fi
done

if [ "$expect" = patched ]; then
	tree=${XPS_XEN_TREE:-}
	pub=$tree/xen/include/public
	if [ -z "$tree" ] || [ ! -f "$pub/xen.h" ] || [ ! -f "$pub/features.h" ]; then
		fail abi-header-matches-xen "cannot run because the patched Xen tree '$tree' has no public headers"
	else
		ours_op=$(abi_value include/xen_ptswap_abi.h MMU_PT_UPDATE_SWAP)
		xen_op=$(abi_value "$pub/xen.h" MMU_PT_UPDATE_SWAP)
		xen_bit=$(abi_value "$pub/features.h" XENFEAT_mmu_pt_update_swap)
		ours_run=$(abi_value include/xen_ptswap_abi.h MMU_PT_CLEAR_RUN)
		xen_run=$(abi_value "$pub/xen.h" MMU_PT_CLEAR_RUN)
		xen_run_bit=$(abi_value "$pub/features.h" XENFEAT_mmu_pt_clear_run)
		if [ -n "$xen_op" ] && [ "$ours_op" = "$xen_op" ] &&
		   [ -n "$xen_bit" ] && [ "$bit" = "$xen_bit" ] &&
		   [ -n "$xen_run" ] && [ "$ours_run" = "$xen_run" ] &&
		   [ -n "$xen_run_bit" ] && [ "$run_bit" = "$xen_run_bit" ]; then
			pass abi-header-matches-xen
		else
			fail abi-header-matches-xen "ours: sub-ops '$ours_op' '$ours_run' bits '$bit' '$run_bit'; Xen's: sub-ops '$xen_op' '$xen_run' bits '$xen_bit' '$xen_run_bit'"
		fi
	fi
fi

cp -r test/ktest/$MOD "$T/" || { fail module-builds "cannot copy the sources"; exit 1; }
start=$(date +%s)
if [ -f "${XPS_KTEST:-/nonexistent}/$MOD.ko" ]; then
	# The lab built it on the host against this kernel (kbuild under
	# QEMU's software CPU takes many minutes); its log is beside it.
	cp "$XPS_KTEST/$MOD.ko" "$T/$MOD/" || { fail module-builds "cannot copy $XPS_KTEST/$MOD.ko"; exit 1; }
	if grep -q 'warning:' "$XPS_KTEST/$MOD.build.log"; then
		fail module-builds "$(grep -m1 'warning:' "$XPS_KTEST/$MOD.build.log")"
	else
		pass module-builds
	fi
elif make -C "/lib/modules/$(uname -r)/build" M="$T/$MOD" XPS_INCLUDE="$REPO/include" \
	modules >"$T/build.log" 2>&1; then
	if grep -q 'warning:' "$T/build.log"; then
		fail module-builds "$(grep -m1 'warning:' "$T/build.log")"
	else
		pass module-builds
	fi
	echo "info: building the module in Dom0 took $(($(date +%s) - start)) s"
else
	fail module-builds "$(grep -m1 -E 'error|Error' "$T/build.log")"
	exit 1
fi

if insmod "$T/$MOD/$MOD.ko" expect=neither 2>"$T/insmod.err"; then
	rmmod "$MOD"
	fail bad-parameter-refused "expect=neither loaded"
elif grep -q 'Invalid parameters\|Invalid argument' "$T/insmod.err"; then
	pass bad-parameter-refused
else
	fail bad-parameter-refused "$(cat "$T/insmod.err")"
fi

dmesg >"$T/dmesg.0"
if ! insmod "$T/$MOD/$MOD.ko" expect="$expect" 2>"$T/insmod.err"; then
	fail module-loads "$(cat "$T/insmod.err")"
	exit 1
fi
pass module-loads
if [ ! -r "$RESULTS" ]; then
	fail module-results "no $RESULTS"
else
	n=0
	while IFS= read -r line; do
		echo "$line"
		case $line in FAIL:*) failed=1 ;; esac
		n=$((n + 1))
	done <"$RESULTS"
	[ $n -gt 1 ] || fail module-results "only $n result lines"
fi
dmesg >"$T/dmesg.1"
tail -n +"$(($(wc -l <"$T/dmesg.0") + 1))" "$T/dmesg.1" >"$T/dmesg.new"
grep "$MOD: " "$T/dmesg.new" | grep -v ': PASS: \|: FAIL: ' | sed 's/^.*'"$MOD"': /info: /'
bad=$(grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' "$T/dmesg.new" | head -n 3)
if [ -z "$bad" ]; then
	pass kernel-log-clean
else
	fail kernel-log-clean "$(echo "$bad" | tr '\n' '|')"
fi

if rmmod "$MOD"; then
	pass module-unloads
else
	fail module-unloads "rmmod failed"
fi

exit $failed
