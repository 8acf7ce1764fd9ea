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
# It also reports what a failed *deferred* clear (the kernel's lazy
# multicall) would do; nothing can inject one without kernel changes.
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes,
# "N passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_FAIL_PCT (10), XPS_RACE_ROUNDS (shmem_race rounds, 16),
# XPS_PROG_TIMEOUT (hang guard per program, 600 s), XPS_FAIL_SHORT (1:
# mode=sync runs only its XPS_FAIL_PCT % phase, with the programs of the
# 100 % phase; 0, the default, every phase in both modes).

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
	local dir=$1 f v
	for f in interval:1 times:-1 verbose:0 space:0 task-filter:N stacktrace-depth:0 "probability:$2"; do
		v=${f#*:}
		f=$dir/${f%%:*}
		[ -e "$f" ] || continue
		echo "$v" >"$f" 2>/dev/null || { note "could not write $v to $f"; return 1; }
	done
	[ "$(cat "$dir/probability")" = "$2" ] && [ "$(cat "$dir/times")" = -1 ]
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

# What happens when a deferred clear fails: read from the running kernel's
# own sources and said as notes; nothing here can make one fail.
deferred_failure_notes() {
	local src
	src=/lib/modules/$(uname -r)/build/arch/x86/xen
	note "failed deferred clear: the module's deferred clear is the kernel's own set_pte() (xen_set_pte, MMU_NORMAL_PT_UPDATE, val 0)"
	note "  in lazy MMU mode xen_extend_mmu_update() appends it to the per-CPU multicall buffer, merged with the neighbouring set_pte()s into one mmu_update entry (up to 32 requests, MC_ARGS 512 bytes), pdone NULL"
	note "  xen_mc_flush(): HYPERVISOR_multicall() itself failing is BUG(); a failed entry (result < 0) is only WARN_ON(ret) plus pr_err '<n> of <m> multicall(s) failed: cpu <c>' and 'call <i>: op=1 arg=[<requests>] result=<errno>' (MC_DEBUG 0: no caller), then it carries on: no retry, no error to the caller"
	note "  Xen's do_mmu_update() stops at the first failing request (if (unlikely(rc)) break;), so that clear AND the requests queued after it in the same entry stay undone; Linux goes on to flush the TLB and free the pages, which stay mapped: a use-after-free that only the WARNING shows"
	note "  outside lazy MMU mode __xen_set_pte() issues HYPERVISOR_mmu_update(&u, 1, NULL, DOMID_SELF) and ignores its return value: a failure is silent (Xen's own gdprintk is compiled out of a release Xen)"
	note "  a clear (val 0) of an entry of one's own pinned L1 table cannot fail short of a kernel bug, as for every set_pte() today; this suite's BAD_LOG fails any 'multicall(s) failed' line"
	if [ -f "$src/multicalls.c" ]; then
		if grep -q 'if (WARN_ON(ret))' "$src/multicalls.c" && grep -q 'multicall(s) failed' "$src/multicalls.c"; then
			note "  checked in the running kernel's tree ($src/multicalls.c): WARN_ON(ret) and the 'multicall(s) failed' report are there"
		else
			note "  the running kernel's $src/multicalls.c differs from 6.1's: read it"
		fi
		grep -q 'HYPERVISOR_mmu_update(&u, 1, NULL, DOMID_SELF);' "$src/mmu_pv.c" &&
			note "  and $src/mmu_pv.c ignores the status of the immediate mmu_update in __xen_set_pte()"
	fi
	if [ -r /sys/kernel/debug/fail_function/injectable ]; then
		note "  fail_function: injectable xen/multicall functions: $(grep -iE 'xen|multicall|mmu' /sys/kernel/debug/fail_function/injectable | tr '\n' ' ' | head -c 200)"
	else
		note "  no fail_function (CONFIG_FAIL_FUNCTION) and no fault-injection point in xen_mc_flush(), xen_set_pte() or Xen's mmu_update: a failed deferred clear cannot be injected without changing the kernel or Xen; what is tested is that none happens here"
	fi
}

# ------------------------------------------------------------------- main
note "fail-inject: kernel $(uname -r) (${XPS_LAB_KERNEL:-?}), Xen ${XPS_LAB_XEN:-?}, probability $PCT %, shmem_race $ROUNDS rounds"
if ! BIN=$(xps_correctness_bin); then
	fail programs "cannot run because the correctness programs are not built (\$XPS_CORRECTNESS_BIN='${XPS_CORRECTNESS_BIN:-}'; the lab builds them on the host)"
	finish
fi
dmesg -c >/dev/null 2>&1
[ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
ext4_setup || note "ext4 setup failed: file_shared will FAIL"
xps_loaded && rmmod xen_ptswap

# The programs that clear writable clean entries (swapped in batched mode).
ALL_PROGS=(dontneed munmap shmem_race file_shared madv_free fork_cow mremap smp_race)
HARD_PROGS=(dontneed munmap shmem_race mremap)
t_all=$SECONDS
for mode in batched sync; do
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

deferred_failure_notes
[ -x "$BIN/xen_console" ] && run_prog end xen_console "$BIN/xen_console" check
[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null
rm -rf "$WORK"
note "fail-inject: $((SECONDS - t_all)) s in all"
finish
