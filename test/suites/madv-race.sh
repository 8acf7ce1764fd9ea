#!/bin/bash
# test/suites/madv-race.sh - madvise(MADV_COLD/MADV_PAGEOUT) splitting a
# large XFS page-cache folio while another CPU punches holes, truncates
# and zaps: the use-after-free that test/linux-patch/6.1/0004 fixes.
#
# Usage (inside the lab's Dom0, from the clone's root, as root; best on
# the debug kernel, whose test-only split_delay_ms knob widens the window
# and whose DEBUG_VM and PAGE_TABLE_CHECK report a freed page mapped):
#   test/lab/run --kernel debug -- bash test/suites/madv-race.sh
# Red run, without the fix:
#   XPS_LAB_LINUX_EXCLUDE="0004 0005" test/lab/run --kernel debug -- \
#       bash test/suites/madv-race.sh
#
# What it does: makes an XFS filesystem in a sparse file in /tmp (320 MiB:
# mkfs.xfs refuses less than 300 MB) and mounts it on a loop device; loads
# xen_ptswap with mode=batched (XPS_MADV_RACE_MODULE=0: unloads it
# instead); runs test/correctness/xfs_pageout_race (see its header) on a
# file there, with -d XPS_SPLIT_DELAY_MS if the kernel has the test-only
# /sys/kernel/debug/xps_test/split_delay_ms (the debug kernel): the split
# that each race window needs then busy-waits that long first; puts the
# knob's value back, unmounts, and reads the kernel log.
#
# Checks: module-batched (the module is loaded, mode=batched); the
# program's own (xfs-pageout-race-pending: no PTE madvise aged reads none
# while it splits with the PTE lock dropped; -mapping: no stale or freed
# page stays mapped; -file: pread() reads what was written, zeros in
# holes; -run);
# madv-race-umount; madv-race-kernel-log (no WARNING, BUG, Oops, Bad page
# [map|state], Bad rss-counter, page_table_check report, lockdep splat);
# madv-race-deferred (the module's deferred counter grew during the run:
# else the race was not run with deferred clears, and that fails too) and
# madv-race-counters (no failed hypercall).
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes,
# "N passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_MADV_RACE_ROUNDS (20), XPS_MADV_RACE_MIB (file size,
# a multiple of 4, 8), XPS_SPLIT_DELAY_MS (200), XPS_MADV_RACE_MODULE
# (1; 0 runs without the module), XPS_MADV_RACE_ZAP_ANYWAY (0; 1: the
# program's -k, zap even where the pending check failed, which without
# the fix on the debug kernel ends in a kernel BUG and a hang),
# XPS_PROG_TIMEOUT (hang guard, 900 s), XPS_CORRECTNESS_BIN (prebuilt
# programs; else built into /tmp).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
SRC=$REPO/test/correctness
WORK=/tmp/xps-madv-race
IMG=$WORK/xfs.img
MNT=$WORK/xfs
STATS=/sys/kernel/debug/xen_ptswap/stats
DELAY=/sys/kernel/debug/xps_test/split_delay_ms
USE_MODULE=${XPS_MADV_RACE_MODULE:-1}

# pass, fail, note, finish and the counters, as in every suite.
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
# lib.sh's, plus page_table_check's reports.
BAD_LOG="$BAD_LOG|page_table_check|Bad page map"
loopdev=
old_delay=

# Puts split_delay_ms back, unmounts, detaches and removes the image.
cleanup() {
	[ -n "$old_delay" ] && echo "$old_delay" >"$DELAY" 2>/dev/null
	old_delay=
	if mountpoint -q "$MNT" 2>/dev/null; then
		local out
		if out=$(umount "$MNT" 2>&1); then
			pass madv-race-umount
		else
			fail madv-race-umount "$out"
			umount -l "$MNT" 2>/dev/null
		fi
	fi
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
	loopdev=
	rm -rf "$WORK"
}

# -------------------------------------------------------------- setup
[ "$(id -u)" = 0 ] || { fail setup "cannot run because the suite needs root"; finish; }
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
cd "$REPO" || exit 2
note "madv-race: kernel $(uname -r), Xen features $(cat /sys/hypervisor/properties/features 2>/dev/null || echo unknown)"
rm -rf "$WORK" && mkdir -p "$MNT"
# Kernels with these as modules (Debian's): load them; built in: no-op.
modprobe loop 2>/dev/null
modprobe xfs 2>/dev/null

if [ "$USE_MODULE" = 0 ]; then
	if [ -d /sys/module/xen_ptswap ] && ! out=$(rmmod xen_ptswap 2>&1); then
		fail module-unloaded "rmmod xen_ptswap failed: $out"
		finish
	fi
	note "XPS_MADV_RACE_MODULE=0: xen_ptswap not loaded (Xen PV still queues set_pte in lazy MMU mode)"
else
	if [ -d /sys/module/xen_ptswap ] &&
	   [ "$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)" != batched ]; then
		rmmod xen_ptswap 2>/dev/null
	fi
	if ! out=$(modprobe xen_ptswap mode=batched 2>&1); then
		fail module-batched "modprobe xen_ptswap mode=batched failed: $out"
		finish
	fi
	mode=$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)
	if [ "$mode" = batched ]; then
		pass module-batched
	else
		fail module-batched "loaded, but parameters/mode is '$mode'"
		finish
	fi
fi

# The program: built on the lab's host, else here.
prog=
if [ -n "${XPS_CORRECTNESS_BIN:-}" ] && [ -x "$XPS_CORRECTNESS_BIN/xfs_pageout_race" ]; then
	prog=$XPS_CORRECTNESS_BIN/xfs_pageout_race
	note "xfs_pageout_race built on the lab's host, in $XPS_CORRECTNESS_BIN"
else
	bin=$WORK/bin
	if out=$(make -C "$SRC" O="$bin" "$bin/xfs_pageout_race" 2>&1); then
		prog=$bin/xfs_pageout_race
	else
		fail build-xfs_pageout_race "$(echo "$out" | grep -m1 -E 'error|warning' || echo "$out" | tail -n 1)"
		cleanup
		finish
	fi
fi

# XFS (large folios in its page cache) on a loop device.
if ! out=$(truncate -s 320M "$IMG" 2>&1); then
	fail setup "cannot run because $IMG cannot be made: $out"
	cleanup
	finish
fi
if ! out=$(mkfs.xfs -q -f "$IMG" 2>&1); then
	fail setup "cannot run because mkfs.xfs failed: $out"
	cleanup
	finish
fi
if ! loopdev=$(losetup -f --show "$IMG" 2>&1); then
	fail setup "cannot run because losetup failed: $loopdev"
	loopdev=
	cleanup
	finish
fi
if ! out=$(mount -t xfs "$loopdev" "$MNT" 2>&1); then
	fail setup "cannot run because mounting $loopdev (XFS) failed: $out"
	cleanup
	finish
fi

# The program sets split_delay_ms (-d) around each window's split only,
# and 0 for every other split; cleanup() puts the value found back.
delay_args=()
if [ -w "$DELAY" ]; then
	old_delay=$(cat "$DELAY")
	delay_args=(-d "${XPS_SPLIT_DELAY_MS:-200}")
	note "split_delay_ms ${XPS_SPLIT_DELAY_MS:-200} for the race's splits (was $old_delay): each busy-waits that long first"
else
	note "no $DELAY (not the lab's debug kernel): the race window is not widened, the race may pass unseen"
fi

[ "${XPS_MADV_RACE_ZAP_ANYWAY:-0}" = 1 ] && delay_args+=(-k)

# ---------------------------------------------------------------- run
# Free blocks per order (order 9 = a PMD-order folio), for the notes.
note "buddyinfo: $(grep -E 'Normal|DMA32' /proc/buddyinfo | tr -s ' ' | tr '\n' ';')"
dmesg -c >/dev/null 2>&1
deferred0=$(stat_of deferred)
errors0=$(stat_of hcall_errors)
out=$WORK/prog.out
t0=$SECONDS
# Its lines as they come: without the fix the kernel may hang or oops
# in the exit that follows a FAIL, and the FAIL must be seen anyway.
timeout -k 10 "${XPS_PROG_TIMEOUT:-900}" "$prog" -r "${XPS_MADV_RACE_ROUNDS:-20}" \
	-s "${XPS_MADV_RACE_MIB:-8}" "${delay_args[@]}" "$MNT/xps-race" 2>"$out.err" </dev/null |
	tee "$out" | while IFS= read -r line; do
		case $line in
		PASS:\ *|FAIL:\ *) echo "$line" ;;
		\#\ *) echo "# xfs_pageout_race: ${line#\# }" ;;
		*) echo "# xfs_pageout_race: $line" ;;
		esac
	done
rc=${PIPESTATUS[0]}
deferred1=$(stat_of deferred)
errors1=$(stat_of hcall_errors)
p=$(grep -c '^PASS: ' "$out")
f=$(grep -c '^FAIL: ' "$out")
passed=$((passed + p))
failed=$((failed + f))
n=$((p + f))
note "xfs_pageout_race: $((SECONDS - t0)) s, exit status $rc"
sed 's/^/# xfs_pageout_race: /' "$out.err" | head -n 20
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	fail xfs-pageout-race "did not finish within ${XPS_PROG_TIMEOUT:-900} s (hang?)"
elif [ "$rc" -gt 128 ]; then
	fail xfs-pageout-race "killed by signal $((rc - 128)) (a kernel oops kills the task too)"
elif [ "$rc" != 0 ] && ! grep -q '^FAIL: ' "$out"; then
	fail xfs-pageout-race "exited with status $rc without a FAIL line"
elif [ $n = 0 ]; then
	fail xfs-pageout-race "printed no PASS or FAIL line (status $rc)"
fi

cleanup

# The log after the unmount too: XFS and the final zap of the mappings.
hits=$(dmesg -c 2>&1 | grep -E "$BAD_LOG")
if [ -n "$hits" ]; then
	fail madv-race-kernel-log "$(echo "$hits" | head -n 3 | tr '\n' '|')"
	echo "$hits" | head -n 20 | sed 's/^/# kernel: /'
else
	pass madv-race-kernel-log
fi

if [ "$USE_MODULE" != 0 ]; then
	note "module counters: $(tr '\n' ' ' <"$STATS" 2>/dev/null)"
	if [ -z "$deferred0" ] || [ -z "$deferred1" ]; then
		fail madv-race-deferred "cannot read $STATS"
	elif [ "$deferred1" -gt "$deferred0" ]; then
		pass madv-race-deferred
		note "deferred clears during the run: $((deferred1 - deferred0))"
	else
		fail madv-race-deferred "the deferred counter did not grow ($deferred0 -> $deferred1): the race did not run with deferred clears"
	fi
	if [ -n "$errors0" ] && [ -n "$errors1" ] && [ "$errors1" = "$errors0" ]; then
		pass madv-race-counters
	else
		fail madv-race-counters "hcall_errors ${errors0:-?} -> ${errors1:-?} (want no failed MMU_PT_UPDATE_SWAP)"
	fi
fi
note "madv-race: $SECONDS s in all"
finish
