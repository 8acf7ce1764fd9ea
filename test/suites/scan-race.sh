#!/bin/bash
# test/suites/scan-race.sh - PAGEMAP_SCAN's write-protect loop racing
# zaps and faults, with the window that test/linux-patch/6.12/0007 closes
# held open: Linux 6.12's pagemap_scan_pmd_entry() dropped the PTE lock
# before it left lazy MMU mode, so the uffd-wp updates it queued could
# land after another CPU had zapped or faulted the page (a write lost, a
# freed page mapped again).  A stock bug: it needs no module, and the
# module does not widen it.
#
# Usage (inside the lab's Dom0, from the clone's root, as root; needs the
# 6.12 debug kernel, whose test-only debugfs xen_lazy_leave_delay_us,
# test/lab/linux-test-patch/6.12/0004, holds the window open):
#   test/lab/run --kernel debug --linux 6.12 --xen-version 4.20 -- \
#       bash test/suites/scan-race.sh
# Red run, without the fix:
#   XPS_LAB_LINUX_EXCLUDE=0007 test/lab/run --kernel debug --linux 6.12 \
#       --xen-version 4.20 -- bash test/suites/scan-race.sh
#
# Unloaded, then with xen_ptswap loaded in mode=batched: runs
# test/correctness/pagemap_scan -d XPS_SCAN_DELAY_US (see its header: its
# scanning thread busy-waits that long before each scan's queued updates
# are issued, while a writer on the other CPU writes and zaps).  Checks,
# each prefixed with unloaded/ or batched/: module-loaded (batched); the
# program's own (pagemap-scan-*: no write lost, memory equal to its
# pre-copy, released pages read as zero); then scan-race-kernel-log (no
# WARNING, BUG, Oops, Bad page, Bad rss-counter, page_table_check report,
# lockdep splat).
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes,
# "N passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_SCAN_DELAY_US (200), XPS_SCAN_ROUNDS (race scans, 100),
# XPS_CORRECTNESS_BIN (prebuilt programs; else built into /tmp),
# XPS_PROG_TIMEOUT (hang guard, 300 s).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-scan-race
DELAY_US=${XPS_SCAN_DELAY_US:-200}
ROUNDS=${XPS_SCAN_ROUNDS:-100}
LIMIT=${XPS_PROG_TIMEOUT:-300}

# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
BAD_LOG="$BAD_LOG|page_table_check"

start_suite
note "scan-race: kernel $(uname -r), delay $DELAY_US us, $ROUNDS rounds"
correctness_prog_dir pagemap_scan
[ -e /sys/kernel/debug/xen_lazy_leave_delay_us ] ||
	note "no /sys/kernel/debug/xen_lazy_leave_delay_us (not the lab's 6.12 or 6.18 debug kernel): the program fails as cannot run"

for mode in unloaded batched; do
	xps_loaded && rmmod xen_ptswap 2>/dev/null
	if [ $mode = batched ]; then
		if ! out=$(modprobe xen_ptswap mode=batched 2>&1); then
			fail "$mode/module-loaded" "modprobe xen_ptswap mode=batched failed: $out"
			continue
		fi
		pass "$mode/module-loaded"
	fi
	timeout -k 10 "$LIMIT" "$bin/pagemap_scan" -d "$DELAY_US" "$ROUNDS" \
		>"$WORK/$mode.out" 2>"$WORK/$mode.out.err" </dev/null
	take_verdicts "$mode/pagemap_scan" "$mode/" "$WORK/$mode.out" $? "$LIMIT"
	echo 0 >/sys/kernel/debug/xen_lazy_leave_delay_us 2>/dev/null
	rmmod xen_ptswap 2>/dev/null
done

klog_take "$KLOG"
klog_check scan-race-kernel-log "$KLOG"
finish
