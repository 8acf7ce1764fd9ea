#!/bin/bash
# test/suites/pending-dirty.sh - a read-only, clean PTE cleared while a TLB
# flush is pending for its mm: the module must not queue that clear, since
# a CPU with a stale writable TLB entry can set D in the live entry before
# the queued clear lands (module/defer.h).
#
# Usage (inside the lab's Dom0, from the clone's root, as root; needs the
# debug kernel, whose test-only debugfs xps_test_zap/ plays that CPU,
# test/lab/linux-test-patch/VERSION/0002):
#   test/lab/run --kernel debug -- bash test/suites/pending-dirty.sh
#
# For each of mode=batched and mode=noswap (the two modes that queue
# clears): loads xen_ptswap in that mode, runs
# test/correctness/pending_dirty (see its header) and unloads the module.
# Checks, each prefixed with the mode: module-loaded; the program's
# pending-dirty-queued (its control: dirty anonymous clears were queued
# and seen) and pending-dirty-kept (no read-only clean clear was queued
# while the flush was pending); pending-dirty-counters (no failed
# hypercall, no readback); then pending-dirty-kernel-log (no WARNING, BUG,
# Oops, page_table_check report, lockdep splat).
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes,
# "N passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_CORRECTNESS_BIN (prebuilt programs; else built into
# /tmp), XPS_PROG_TIMEOUT (hang guard, 300 s).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-pending-dirty

# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
BAD_LOG="$BAD_LOG|page_table_check"

start_suite
note "pending-dirty: kernel $(uname -r), Xen features $(cat /sys/hypervisor/properties/features 2>/dev/null || echo unknown)"
correctness_prog_dir pending_dirty
if [ -d /sys/kernel/debug/xps_test_zap ]; then
	# A pending flush that an earlier run left marked ends here.
	echo 0 >/sys/kernel/debug/xps_test_zap/pending
else
	note "no /sys/kernel/debug/xps_test_zap (not the lab's debug kernel): the program's checks fail as cannot run"
fi

for mode in batched noswap; do
	xps_loaded && rmmod xen_ptswap 2>/dev/null
	if ! out=$(modprobe xen_ptswap mode=$mode 2>&1); then
		fail "$mode/module-loaded" "modprobe xen_ptswap mode=$mode failed: $out"
		continue
	fi
	pass "$mode/module-loaded"
	timeout -k 10 "${XPS_PROG_TIMEOUT:-300}" "$bin/pending_dirty" >"$WORK/$mode.out" 2>"$WORK/$mode.out.err" </dev/null
	take_verdicts "$mode/pending_dirty" "$mode/" "$WORK/$mode.out" $? "${XPS_PROG_TIMEOUT:-300}"
	note "$mode: module counters: $(tr '\n' ' ' <"$STATS" 2>/dev/null)"
	if [ "$(stat_of hcall_errors)" = 0 ] && [ "$(stat_of readback)" = 0 ]; then
		pass "$mode/pending-dirty-counters"
	else
		fail "$mode/pending-dirty-counters" "hcall_errors $(stat_of hcall_errors), readback $(stat_of readback) (want 0 and 0)"
	fi
	rmmod xen_ptswap 2>/dev/null
done

klog_take "$KLOG"
klog_check pending-dirty-kernel-log "$KLOG"
finish
