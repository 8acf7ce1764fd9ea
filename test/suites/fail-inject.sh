#!/bin/bash
# test/suites/fail-inject.sh - MMU_PT_UPDATE_SWAP failing on purpose.
#
# Usage (inside the lab's Dom0, from the clone's root, as root; the debug
# kernel, the only lab kernel with CONFIG_FAULT_INJECTION_DEBUG_FS):
#   test/lab/run --kernel debug -- bash test/suites/fail-inject.sh
#
# The module's fail_swap fault-injection attributes
# (/sys/kernel/debug/xen_ptswap/fail_swap/, module/hypercall.c) make a
# chosen share of its MMU_PT_UPDATE_SWAP calls fail with -EINVAL before
# they reach Xen; module/clear.c must then clear the entry with the native
# xchg (trapped and emulated, exact), count hcall_errors and fallbacks and
# warn once per load.  For mode=batched and then mode=sync (every clear of
# a pinned, non-none entry a swap) the correctness programs that clear
# writable clean entries (the ones batched mode swaps) run with
# XPS_FAIL_PCT (default 10) % of the swaps failing, then a few of them
# with 100 %, then one with 0 %.  Checks, per phase: every program's own
# checks of memory contents pass; hcall_errors grew and equals fallbacks;
# calls = unpinned + none + deferred + swapped + fallbacks; at 100 % no
# swap succeeded; at 0 % hcall_errors no longer grows.  Then the
# write-back edge, in batched mode: fail_swap_writeback lets XPS_FAIL_PCT %
# of the swaps clear the entry and then report -EFAULT with the old value
# dropped; the module must return the value it read before and never
# clear again natively: lost_old grew and equals hcall_errors' growth,
# fallbacks did not grow, data intact; and with every old value lost
# (100 %), lost_dirty: no page of a file that writes back is reported
# dirty (exiting processes' text would otherwise be: 9p BUG()s writing
# it back), a read-only shmem page is.  Per load: exactly one
# "MMU_PT_UPDATE_SWAP failed" warning and one "cleared an entry but failed
# to return it" warning, and no WARNING:, BUG:, Oops,
# Bad page, Bad rss-counter or failed multicall in the kernel log; at the
# end Xen's console ring has no L1 validation error or crash.
# Last, page table updates that Xen refuses (mmu_phase): the debug
# kernel's test-only fail_xen_mmu_update has Xen refuse one more call
# appended to a lazy MMU multicall batch of a zap, after its real updates
# (a refused call that carries no deferred clear), then one immediate
# set_pte(); the kernel must warn, taint and count both refusals (no
# released page stays mapped), the module must queue no clear after the
# first (counter sync_after_failure) and say so once, and refuse a new
# load in batched and noswap mode (sync loads).
# With XPS_FAIL_CLEAR=1 the suite does only this instead, in a boot of its
# own (clear_phase): fail_xen_mmu_clear has Xen refuse the first request
# of a MADV_FREE batch, a clear the module queued, which leaves the rest
# of that mmu_update undone; the kernel must panic in xen_mc_flush()
# (xen_queue_pte_clear(), the series' "panic when Xen refuses a
# multicall" patch) before the page can be freed or the entry cleared out
# of order.  The suite announces the panic
# to the lab ("XPS-LAB: panic expected", test/lab/run), which reports it
# as "PASS: panic-expected"; a kernel that goes on FAILs mmu-fail-clear.
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes,
# "N passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_FAIL_PCT (10), XPS_RACE_ROUNDS (shmem_race rounds, 16),
# XPS_PROG_TIMEOUT (hang guard per program, 600 s), XPS_FAIL_SHORT (1:
# mode=sync runs only its XPS_FAIL_PCT % phase, with the programs of the
# 100 % phase; 0, the default, every phase in both modes), XPS_FAIL_MODES
# (the modes whose phases run, "batched sync"; "" runs only the last
# phase, which needs none of them), XPS_FAIL_CLEAR (1: only the refused
# clear, which ends the boot; 0, the default: everything else).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-fail-inject
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"

FAIL_DIR=/sys/kernel/debug/xen_ptswap/fail_swap
WB_DIR=/sys/kernel/debug/xen_ptswap/fail_swap_writeback
PCT=${XPS_FAIL_PCT:-10}
SHORT=${XPS_FAIL_SHORT:-0}
ROUNDS=${XPS_RACE_ROUNDS:-16}
WARN_RE='xen_ptswap: MMU_PT_UPDATE_SWAP failed'
LOST_RE='xen_ptswap: MMU_PT_UPDATE_SWAP cleared an entry but failed to return it'
MMU_DIR=/sys/kernel/debug/fail_xen_mmu_update
MMU_CLEAR_DIR=/sys/kernel/debug/fail_xen_mmu_clear
PANIC_RE='Xen refused a multicall that carried deferred PTE clears'
MMU_RE='xen_ptswap: Xen refused a page table update'
ext4_dir=$WORK/ext4
loopdev=
BIN=
KLOG=

xps_require_root
cd "$REPO" || exit 2
rm -rf "$WORK" && mkdir -p "$WORK"

# ------------------------------------------------------------ helpers
# run_prog PHASE NAME CMD [ARG...]: the program's PASS/FAIL lines, as
# PHASE/<check>; FAIL if it hung, died silently or said nothing.
run_prog() {
	local phase=$1 name=$2 t0=$SECONDS limit=${XPS_PROG_TIMEOUT:-600}
	shift 2
	timeout -k 10 "$limit" "$@" >"$WORK/$phase.$name.out" \
		2>"$WORK/$phase.$name.out.err" </dev/null
	local rc=$?
	note "$phase/$name: $((SECONDS - t0)) s"
	take_verdicts "$phase/$name" "$phase/" "$WORK/$phase.$name.out" $rc "$limit"
	klog_take "$KLOG"
}

# The MAP_SHARED file test needs ext4 on a loop device: made once.
ext4_setup() {
	local img=$WORK/ext4.img out
	modprobe loop 2>/dev/null
	truncate -s 96M "$img" && mkdir -p "$ext4_dir" || return 1
	out=$(mkfs.ext4 -q -F "$img" 2>&1) || { note "mkfs.ext4: $out"; return 1; }
	loopdev=$(losetup -f --show "$img" 2>&1) || { note "losetup: $loopdev"; loopdev=; return 1; }
}

# ext4_mount CHECK: mount the ext4 loop device on $ext4_dir; FAIL CHECK
# and return 1 if it cannot be.
ext4_mount() {
	local out
	if [ -z "$loopdev" ]; then
		fail "$1" "cannot run because the ext4 loop device could not be set up"
		return 1
	fi
	if ! out=$(mount -t ext4 "$loopdev" "$ext4_dir" 2>&1); then
		fail "$1" "cannot run because mounting $loopdev failed: $out"
		return 1
	fi
}

# file_test PHASE: file_shared writes and checks, unmount, mount, verify.
file_test() {
	local out
	ext4_mount "$1/file_shared" || return
	run_prog "$1" file_shared "$BIN/file_shared" "$ext4_dir"
	sync
	if ! out=$(umount "$ext4_dir" 2>&1); then
		fail "$1/file-shared-remount" "umount failed: $out"
	elif ! out=$(mount -t ext4 "$loopdev" "$ext4_dir" 2>&1); then
		fail "$1/file-shared-remount" "mount again failed: $out"
	else
		run_prog "$1" file_shared_verify "$BIN/file_shared" "$ext4_dir" verify
	fi
	umount "$ext4_dir" 2>/dev/null
}

# lost_dirty_test PHASE: lost_dirty on the ext4 loop device, every old
# value lost (the phase runs at 100 %): pages of a file opened read-only
# and written-back pages of a shared file stay clean, a read-only shmem
# page is reported dirty.
lost_dirty_test() {
	ext4_mount "$1/lost_dirty" || return
	run_prog "$1" lost_dirty "$BIN/lost_dirty" "$ext4_dir" lost
	umount "$ext4_dir" 2>/dev/null
}

# fail_set DIR PCT: the fault attribute DIR picks PCT % of the swaps,
# every call eligible (interval 1), no limit (times -1), silent (verbose 0:
# a stack dump per failure would take ages under QEMU's software CPU).
fail_set() {
	attr_write "$1" interval:1 times:-1 verbose:0 space:0 task-filter:N stacktrace-depth:0 "probability:$2" &&
		[ "$(cat "$1/probability")" = "$2" ] && [ "$(cat "$1/times")" = -1 ]
}

# attr_write DIR NAME:VALUE...: write each VALUE to DIR/NAME in order,
# skipping a NAME the kernel lacks; note and return 1 at the first that
# cannot be written.
attr_write() {
	local dir=$1 f v
	shift
	for f in "$@"; do
		v=${f#*:}
		f=$dir/${f%%:*}
		[ -e "$f" ] || continue
		echo "$v" >"$f" 2>/dev/null || { note "could not write $v to $f"; return 1; }
	done
}

# load MODE: (re)load the module; FAIL and return 1 if it or fail_swap
# is missing.
load() {
	local mode=$1 out
	if xps_loaded; then
		rmmod xen_ptswap || { fail "$mode-load" "rmmod xen_ptswap failed"; return 1; }
	fi
	if ! out=$(modprobe xen_ptswap mode="$mode" 2>&1); then
		fail "$mode-load" "modprobe xen_ptswap mode=$mode: $out; $(dmesg | grep xen_ptswap | tail -n 1)"
		return 1
	fi
	pass "$mode-load"
	if [ ! -d "$FAIL_DIR" ] || [ ! -d "$WB_DIR" ]; then
		fail "$mode-fail-swap-attributes" "cannot run because $FAIL_DIR or $WB_DIR does not exist: kernel $(uname -r) lacks CONFIG_FAULT_INJECTION_DEBUG_FS (only the lab's debug kernel, test/lab/run --kernel debug, has it)"
		return 1
	fi
	# Off at every load: probability 0 and the framework's default times 1.
	if [ "$(cat "$FAIL_DIR/probability")" = 0 ] && [ "$(cat "$WB_DIR/probability")" = 0 ]; then
		pass "$mode-fail-swap-off-at-load"
	else
		fail "$mode-fail-swap-off-at-load" "probability is $(cat "$FAIL_DIR/probability") (fail_swap), $(cat "$WB_DIR/probability") (fail_swap_writeback) right after modprobe"
	fi
}

# start_phase TAG MODE DIR PCT: the fault attribute DIR (fail_swap or
# fail_swap_writeback) picks PCT % of the swaps from now on; the counters
# settled into SV.  FAIL and return 1 if DIR cannot be set.
start_phase() {
	if ! fail_set "$3" "$4"; then
		fail "$1-set-probability" "could not set $3 to $4 % (times -1)"
		return 1
	fi
	note "$1: mode=$2, ${3##*/} probability $4 %"
	stats_settle
}

# run_progs TAG PROG...: the correctness programs of a phase.
run_progs() {
	local tag=$1 p
	shift
	for p in "$@"; do
		case $p in
		shmem_race) run_prog "$tag" shmem_race "$BIN/shmem_race" "$ROUNDS" ;;
		file_shared) file_test "$tag" ;;
		lost_dirty) lost_dirty_test "$tag" ;;
		*) run_prog "$tag" "$p" "$BIN/$p" ;;
		esac
	done
}

# phase TAG MODE PCT PROG...: run PROGs with PCT % of the swaps failing
# (fail_swap), then check the counters' growth over the phase.
phase() {
	local tag=$1 mode=$2 pct=$3 p t0=$SECONDS
	shift 3
	start_phase "$tag" "$mode" "$FAIL_DIR" "$pct" || return
	local -A B
	for p in calls unpinned none deferred swapped hcall_errors fallbacks lost_old; do B[$p]=${SV[$p]:-0}; done
	run_progs "$tag" "$@"
	if ! stats_settle; then
		fail "$tag-counters-consistent" "never calls = unpinned+none+deferred+swapped+fallbacks with hcall_errors = fallbacks: $(tr '\n' ' ' <"$STATS")"
		return
	fi
	pass "$tag-counters-consistent"
	local d_calls=$((SV[calls] - B[calls])) d_def=$((SV[deferred] - B[deferred]))
	local d_swap=$((SV[swapped] - B[swapped])) d_err=$((SV[hcall_errors] - B[hcall_errors]))
	local d_fb=$((SV[fallbacks] - B[fallbacks])) d_lost=$((${SV[lost_old]:-0} - B[lost_old]))
	note "$tag: over $((SECONDS - t0)) s: calls +$d_calls deferred +$d_def swapped +$d_swap hcall_errors +$d_err fallbacks +$d_fb lost_old +$d_lost"
	if [ "$d_lost" != 0 ]; then
		fail "$tag-no-lost-old" "lost_old +$d_lost with only fail_swap on"
	fi
	if [ "$pct" -gt 0 ]; then
		if [ "$d_err" -gt 0 ] && [ "$d_err" -eq "$d_fb" ]; then
			pass "$tag-swap-failures-fall-back"
		else
			fail "$tag-swap-failures-fall-back" "hcall_errors +$d_err, fallbacks +$d_fb (want > 0 and equal)"
		fi
		[ $((d_err + d_swap)) -gt 0 ] && note "$tag: $((d_err * 1000 / (d_err + d_swap) / 10)).$((d_err * 1000 / (d_err + d_swap) % 10)) % of the swaps failed (asked $pct %)"
	fi
	if [ "$pct" = 100 ]; then
		if [ "$d_swap" = 0 ]; then
			pass "$tag-no-swap-succeeds"
		else
			fail "$tag-no-swap-succeeds" "swapped +$d_swap at probability 100"
		fi
	elif [ "$pct" = 0 ]; then
		if [ "$d_err" = 0 ] && [ "$d_fb" = 0 ] && [ "$d_swap" -gt 0 ]; then
			pass "$tag-hcall-errors-stop-growing"
		else
			fail "$tag-hcall-errors-stop-growing" "hcall_errors +$d_err, fallbacks +$d_fb, swapped +$d_swap (want 0, 0, > 0)"
		fi
	elif [ "$d_swap" -le 0 ]; then
		fail "$tag-some-swaps-succeed" "swapped +$d_swap at $pct %"
	else
		pass "$tag-some-swaps-succeed"
	fi
	case $mode in
	batched)
		if [ "$d_def" -gt 0 ]; then pass "$tag-deferred-clears-too"; else fail "$tag-deferred-clears-too" "deferred +$d_def: the programs should defer dirty entries"; fi ;;
	sync)
		if [ "$d_def" = 0 ]; then pass "$tag-never-defers"; else fail "$tag-never-defers" "deferred +$d_def in mode=sync"; fi ;;
	esac
}

# wb_phase TAG MODE PCT PROG...: run PROGs with fail_swap_writeback
# picking PCT % of the swaps: each is done by Xen, then reported as failed
# after the exchange with its old value dropped (the sub-op's write-back
# edge).  The module must return the value it read before, never clear
# again with a native xchg (that would return none: a leaked page, an rss
# counter off, which the kernel log check catches); the programs' data
# checks show no write was lost.
wb_phase() {
	local tag=$1 mode=$2 pct=$3 p t0=$SECONDS
	shift 3
	start_phase "$tag" "$mode" "$WB_DIR" "$pct" || return
	local -A B
	for p in swapped hcall_errors fallbacks lost_old; do B[$p]=${SV[$p]:-0}; done
	run_progs "$tag" "$@"
	fail_set "$WB_DIR" 0 || note "could not set $WB_DIR back to 0 %"
	if ! stats_settle; then
		fail "$tag-counters-consistent" "never calls = unpinned+none+deferred+swapped+fallbacks with hcall_errors = fallbacks + lost_old: $(tr '\n' ' ' <"$STATS")"
		return
	fi
	pass "$tag-counters-consistent"
	local d_swap=$((SV[swapped] - B[swapped])) d_err=$((SV[hcall_errors] - B[hcall_errors]))
	local d_fb=$((SV[fallbacks] - B[fallbacks])) d_lost=$((${SV[lost_old]:-0} - B[lost_old]))
	note "$tag: over $((SECONDS - t0)) s: swapped +$d_swap hcall_errors +$d_err fallbacks +$d_fb lost_old +$d_lost"
	# swapped counts the lost ones too, and the swaps of other tasks
	# after the probability went back to 0: at 100 % at least as many.
	local cmp=-gt want=">"
	[ "$pct" = 100 ] && cmp=-ge want=">="
	if [ "$d_lost" -gt 0 ] && [ "$d_err" -eq "$d_lost" ] && [ "$d_fb" = 0 ] && [ "$d_swap" "$cmp" "$d_lost" ]; then
		pass "$tag-lost-old-never-falls-back"
	else
		fail "$tag-lost-old-never-falls-back" "lost_old +$d_lost, hcall_errors +$d_err, fallbacks +$d_fb, swapped +$d_swap (want lost_old > 0 = hcall_errors, no fallback, swapped $want lost_old)"
	fi
}

# load_checks MODE: the kernel log of this load.
load_checks() {
	local mode=$1 n
	klog_take "$KLOG"
	n=$(grep -c "$WARN_RE" "$KLOG")
	if [ "$n" = 1 ] && grep -q "$WARN_RE (error -22)" "$KLOG"; then
		pass "$mode-one-warning-per-load"
	else
		fail "$mode-one-warning-per-load" "$n '$WARN_RE' lines (want exactly 1, error -22): $(grep "$WARN_RE" "$KLOG" | head -n 2 | tr '\n' '|')"
	fi
	note "$mode: $(grep -m1 "$WARN_RE" "$KLOG" | sed 's/^\[[^]]*\] //')"
	n=$(grep -c "$LOST_RE" "$KLOG")
	if [ "$mode" != batched ]; then
		[ "$n" = 0 ] || fail "$mode-no-lost-old-warning" "$n '$LOST_RE' lines without fail_swap_writeback"
	elif [ "$n" = 1 ] && grep -q "$LOST_RE (error -14)" "$KLOG"; then
		pass "$mode-one-lost-old-warning-per-load"
	else
		fail "$mode-one-lost-old-warning-per-load" "$n '$LOST_RE' lines (want exactly 1, error -14)"
	fi
	klog_check "$mode-kernel-log" "$KLOG"
	if grep -q 'multicall(s) failed' "$KLOG"; then
		fail "$mode-no-failed-deferred-clear" "$(grep -m1 -A1 'multicall(s) failed' "$KLOG" | tr '\n' '|')"
	else
		pass "$mode-no-failed-deferred-clear"
	fi
}

# mmu_start TAG DIR: the start of mmu_phase and clear_phase: TAG's kernel
# log, the test-only fault attribute DIR present, the module loaded
# batched afresh and its counters settled (in SV); 1, having FAILed a
# check, if any of that went wrong.
mmu_start() {
	local tag=$1 dir=$2 out
	KLOG=$WORK/klog.$tag
	: >"$KLOG"
	if [ ! -d "$dir" ]; then
		fail "$tag-attribute" "cannot run because $dir does not exist: the kernel lacks the lab's test-only fail_xen_mmu_update patch (test/lab/run --kernel debug has it)"
		return 1
	fi
	xps_loaded && rmmod xen_ptswap
	if ! out=$(modprobe xen_ptswap mode=batched 2>&1); then
		fail "$tag-load" "modprobe xen_ptswap mode=batched: $out; $(dmesg | grep xen_ptswap | tail -n 1)"
		return 1
	fi
	pass "$tag-load"
	stats_settle || { fail "$tag-counters-consistent" "before: $(tr '\n' ' ' <"$STATS")"; return 1; }
}

# mmu_phase: page table updates that Xen refuses, the last phase of the
# boot (what it leaves, refused updates counted since boot, lasts until a
# reboot).  The debug kernel's test-only fault attributes
# (test/lab/linux-test-patch/VERSION/0003-*.patch): fail_xen_mmu_update
# has Xen refuse one more mmu_update, issued after the real ones, in a
# batch or an immediate set_pte() it picks.  xen_mc_flush() and
# __xen_set_pte() warn (tainting the kernel) and count them in
# xen_mmu_failures() (the series' 0003); the batch's refused call carries
# no deferred clear, so the kernel goes on.  mmu_fail update has one batch
# of a zap that queued clears refused, then one immediate update of a
# copy-on-write fault.  The module, loaded batched, must queue no clear
# after the first and say so once; a new load must refuse batched and
# noswap and accept sync.
mmu_phase() {
	local tag=mmu t0=$SECONDS out n taint0 taint
	mmu_start "$tag" "$MMU_DIR" || return
	taint0=$(cat /proc/sys/kernel/tainted)
	if [ "${SV[mmu_failures]:-x}" = 0 ] && [ $((taint0 >> 9 & 1)) = 0 ]; then
		pass "$tag-none-refused-before"
	else
		fail "$tag-none-refused-before" "mmu_failures is '${SV[mmu_failures]:-missing}', taint $taint0 (want 0 and no W) before the injection"
		return
	fi
	local -A B
	for n in deferred swapped sync_after_failure; do B[$n]=${SV[$n]:-0}; done
	# Marked tasks only, silent (the kernel's warnings say enough), and
	# no failure left (times 0) until mmu_fail arms one; probability last,
	# so that no other task can take one meanwhile.
	if ! attr_write "$MMU_DIR" task-filter:Y verbose:0 space:0 interval:1 stacktrace-depth:0 times:0 probability:100; then
		fail "$tag-set-attribute" "could not set $MMU_DIR (the note above says which file)"
		return
	fi
	note "$tag: fail_xen_mmu_update armed: probability 100 %, marked tasks only, times set by mmu_fail"
	run_prog "$tag" mmu_fail "$BIN/mmu_fail" update "$MMU_DIR"
	echo 0 >"$MMU_DIR/probability" 2>/dev/null
	stats_settle || { fail "$tag-counters-consistent" "after mmu_fail: $(tr '\n' ' ' <"$STATS")"; return; }
	pass "$tag-counters-consistent"
	local d_def=$((SV[deferred] - B[deferred])) d_sync=$((${SV[sync_after_failure]:-0} - B[sync_after_failure]))
	note "$tag: mmu_fail: deferred +$d_def, sync_after_failure +$d_sync, mmu_failures ${SV[mmu_failures]:-?}"
	if [ "${SV[mmu_failures]:-0}" = 2 ]; then
		pass "$tag-both-refusals-counted"
	else
		fail "$tag-both-refusals-counted" "mmu_failures is '${SV[mmu_failures]:-missing}' (want 2: one batch, one immediate update)"
	fi
	# The refused batch's own clears were queued before it failed.
	if [ "$d_def" -gt 0 ] && [ "$d_sync" -gt 0 ]; then
		pass "$tag-queued-until-the-refusal"
	else
		fail "$tag-queued-until-the-refusal" "deferred +$d_def, sync_after_failure +$d_sync (want both > 0)"
	fi
	for n in deferred swapped sync_after_failure; do B[$n]=${SV[$n]:-0}; done
	run_progs "$tag" dontneed munmap
	stats_settle || { fail "$tag-counters-consistent-after" "$(tr '\n' ' ' <"$STATS")"; return; }
	d_def=$((SV[deferred] - B[deferred])) d_sync=$((${SV[sync_after_failure]:-0} - B[sync_after_failure]))
	local d_swap=$((SV[swapped] - B[swapped]))
	note "$tag: after the refusals: deferred +$d_def, swapped +$d_swap, sync_after_failure +$d_sync"
	if [ "$d_def" = 0 ] && [ "$d_sync" -gt 0 ] && [ "$d_swap" -ge "$d_sync" ]; then
		pass "$tag-no-clear-queued-after"
	else
		fail "$tag-no-clear-queued-after" "deferred +$d_def, sync_after_failure +$d_sync, swapped +$d_swap (want 0, > 0, >= sync_after_failure)"
	fi
	rmmod xen_ptswap || fail "$tag-rmmod" "rmmod xen_ptswap failed"
	klog_take "$KLOG"
	local nmc nwmc nwpte
	nmc=$(grep -c 'multicall(s) failed' "$KLOG")
	nwmc=$(grep -c 'WARNING: .*multicalls\.c' "$KLOG")
	nwpte=$(grep -c 'WARNING: .*mmu_pv\.c' "$KLOG")
	if [ "$nmc" = 1 ] && [ "$nwmc" = 1 ] && [ "$nwpte" = 1 ]; then
		pass "$tag-kernel-warns"
	else
		fail "$tag-kernel-warns" "$nmc 'multicall(s) failed' lines, $nwmc WARNINGs in multicalls.c, $nwpte in mmu_pv.c (want 1 of each)"
	fi
	note "$tag: $(grep -m1 -A1 'multicall(s) failed' "$KLOG" | sed 's/^\[[^]]*\] //' | tr '\n' '|')"
	note "$tag: $(grep -m1 'WARNING: .*mmu_pv\.c' "$KLOG" | sed 's/^\[[^]]*\] //')"
	n=$(grep -c "$MMU_RE" "$KLOG")
	if [ "$n" = 1 ]; then
		pass "$tag-module-says-once"
	else
		fail "$tag-module-says-once" "$n '$MMU_RE' lines (want 1)"
	fi
	taint=$(cat /proc/sys/kernel/tainted)
	if [ $((taint >> 9 & 1)) = 1 ]; then
		pass "$tag-kernel-tainted"
	else
		fail "$tag-kernel-tainted" "/proc/sys/kernel/tainted is $taint: no W (bit 9)"
	fi
	# A new load: batched and noswap refused with one line, sync accepted.
	local m
	for m in batched noswap; do
		dmesg -c >>"$KLOG" 2>&1
		if out=$(modprobe xen_ptswap mode=$m 2>&1); then
			fail "$tag-refuses-$m" "modprobe xen_ptswap mode=$m loaded after refused updates"
			rmmod xen_ptswap
		elif [ "$(dmesg | grep -c 'xen_ptswap: Xen refused 2 page table update(s) since boot')" = 1 ]; then
			pass "$tag-refuses-$m"
		else
			fail "$tag-refuses-$m" "refused without its log line: $out; $(dmesg | grep xen_ptswap | tail -n 1)"
		fi
	done
	if out=$(modprobe xen_ptswap mode=sync 2>&1); then
		pass "$tag-loads-sync"
		run_progs "$tag-sync" munmap
		rmmod xen_ptswap || fail "$tag-sync-rmmod" "rmmod xen_ptswap failed"
	else
		fail "$tag-loads-sync" "modprobe xen_ptswap mode=sync: $out; $(dmesg | grep xen_ptswap | tail -n 1)"
	fi
	klog_take "$KLOG"
	# Nothing else bad: the two warnings and the batch's report are expected.
	local rest
	rest=$(grep -vE 'WARNING: .*(multicalls|mmu_pv)\.c' "$KLOG" | grep -E "$BAD_LOG" | grep -v 'multicall(s) failed' | head -n 3)
	if [ -z "$rest" ]; then
		pass "$tag-kernel-log"
	else
		fail "$tag-kernel-log" "kernel log: $(echo "$rest" | tr '\n' '|')"
	fi
	note "$tag: $((SECONDS - t0)) s"
}

# clear_phase: XPS_FAIL_CLEAR=1, the boot's only phase, since it ends the
# boot.  The module loaded batched (nothing refused before: it would not
# queue), fail_xen_mmu_clear armed for marked tasks, then mmu_fail clear:
# a MADV_FREE whose first batch Xen refuses at its first request, a clear
# the module queued.  The kernel must panic with PANIC_RE; the suite tells
# the lab so first ("XPS-LAB: panic expected", test/lab/run), with its
# verdict so far.  If mmu_fail returns, the kernel went on: its FAIL says
# what became of the pages, and the kernel log what the kernel said.
clear_phase() {
	local tag=clear
	mmu_start "$tag" "$MMU_CLEAR_DIR" || return
	if [ "${SV[mmu_failures]:-x}" = 0 ]; then
		pass "$tag-none-refused-before"
	else
		fail "$tag-none-refused-before" "mmu_failures is '${SV[mmu_failures]:-missing}' (want 0: the module queues nothing after a refusal)"
		return
	fi
	if ! attr_write "$MMU_CLEAR_DIR" task-filter:Y verbose:0 space:0 interval:1 stacktrace-depth:0 times:0 probability:100; then
		fail "$tag-set-attribute" "could not set $MMU_CLEAR_DIR (the note above says which file)"
		return
	fi
	note "$tag: fail_xen_mmu_clear armed: probability 100 %, marked tasks only; the kernel should panic with '$PANIC_RE'"
	echo "XPS-LAB: panic expected $([ "$failed" = 0 ] && echo 0 || echo 1) $PANIC_RE"
	sync
	sleep 1
	run_prog "$tag" mmu_fail "$BIN/mmu_fail" clear "$MMU_CLEAR_DIR"
	echo 0 >"$MMU_CLEAR_DIR/probability" 2>/dev/null
	klog_take "$KLOG"
	note "$tag: the kernel went on; its log: $(grep -E "multicall\(s\) failed|re-issued|$BAD_LOG" "$KLOG" | head -n 4 | sed 's/^\[[^]]*\] //' | tr '\n' '|')"
	rmmod xen_ptswap 2>/dev/null
}

# ------------------------------------------------------------------- main
note "fail-inject: kernel $(uname -r) (${XPS_LAB_KERNEL:-?}), Xen ${XPS_LAB_XEN:-?}, probability $PCT %, shmem_race $ROUNDS rounds"
if ! BIN=$(xps_correctness_bin); then
	fail programs "cannot run because the correctness programs are not built (\$XPS_CORRECTNESS_BIN='${XPS_CORRECTNESS_BIN:-}'; the lab builds them on the host)"
	finish
fi
dmesg -c >/dev/null 2>&1
[ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
if [ "${XPS_FAIL_CLEAR:-0}" = 1 ]; then
	clear_phase
	rm -rf "$WORK"
	finish
fi
ext4_setup || note "ext4 setup failed: file_shared will FAIL"
xps_loaded && rmmod xen_ptswap

# The programs that clear writable clean entries (swapped in batched mode).
ALL_PROGS=(dontneed munmap shmem_race file_shared madv_free fork_cow mremap smp_race)
HARD_PROGS=(dontneed munmap shmem_race mremap)
t_all=$SECONDS
for mode in ${XPS_FAIL_MODES-batched sync}; do
	KLOG=$WORK/klog.$mode
	: >"$KLOG"
	t0=$SECONDS
	if ! load "$mode"; then
		klog_take "$KLOG"
		continue
	fi
	if [ "$mode" = sync ] && [ "$SHORT" = 1 ]; then
		# The fallback is batched mode's code: one phase, to see
		# that sync mode never defers while swaps fail.
		phase "$mode-${PCT}pct" "$mode" "$PCT" "${HARD_PROGS[@]}"
	else
		phase "$mode-${PCT}pct" "$mode" "$PCT" "${ALL_PROGS[@]}"
		phase "$mode-100pct" "$mode" 100 "${HARD_PROGS[@]}"
		phase "$mode-0pct" "$mode" 0 dontneed munmap
	fi
	# The write-back edge is one path whatever the mode: batched only.
	if [ "$mode" = batched ]; then
		wb_phase "$mode-writeback-${PCT}pct" "$mode" "$PCT" dontneed munmap file_shared fork_cow
		# Which lost values are reported dirty: every one lost.
		wb_phase "$mode-writeback-100pct" "$mode" 100 lost_dirty
	fi
	# rmmod first: its kernel log (the slot's unregister) belongs to this load.
	rmmod xen_ptswap || fail "$mode-rmmod" "rmmod xen_ptswap failed"
	load_checks "$mode"
	note "$mode: $((SECONDS - t0)) s"
done

mmu_phase
[ -x "$BIN/xen_console" ] && run_prog end xen_console "$BIN/xen_console" check
[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
rm -rf "$WORK"
note "fail-inject: $((SECONDS - t_all)) s in all"
finish
