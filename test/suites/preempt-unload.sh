#!/bin/bash
# test/suites/preempt-unload.sh - 100 load/unload cycles of xen_ptswap
# under load, on a fully preemptible Dom0.
#
# Usage (inside the lab's Dom0, from the clone's root, as root; Dom0 booted
# with preempt=full, which the lab's PREEMPT_DYNAMIC kernels take):
#   test/lab/run --append preempt=full -- bash test/suites/preempt-unload.sh
#   (also --kernel debug: lockdep, DEBUG_ATOMIC_SLEEP, PAGE_TABLE_CHECK)
#
# rmmod must not return while a preempted task can still be inside the
# module's ptep_get_and_clear() (the slot's unregister waits for an RCU
# and an RCU-tasks grace period, patch 0003).  So: check that
# /sys/kernel/debug/sched/preempt selects "(full)"; start background load
# that clears PTEs all the time, checked by contents (the correctness
# programs munmap, dontneed, shmem_race, smp_race in loops; stress-ng
# --vm --vm-method all --verify; stress-ng --fork, whose exiting
# children's vmalloc'ed kernel stacks are vfree'd from a workqueue, and
# the module loads themselves, both of which vunmap kernel PTEs through
# the op (not --pthread: see bg_stress);
# a kprobe on __vunmap_range_noflush counts them); then XPS_CYCLES (100)
# cycles of modprobe xen_ptswap (mode=batched and mode=sync in turn),
# counters read while loaded, rmmod; then stop the load.  Checks: every
# background program's verdicts passed, the counters were consistent with
# no failed hypercall in every cycle, and the kernel log has no WARNING:,
# BUG: (scheduling while atomic, sleeping in atomic context), Oops, Bad
# page, Bad rss-counter or lockdep report ("possible ... locking",
# "inconsistent lock state"); with lockdep, it was still on at the end.
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes (progress
# every 20 cycles), "N passed, N failed" last; exit status 0 iff nothing
# failed.  Environment: XPS_CYCLES (100), XPS_BG_NICE (nice of the load,
# 19: it runs whenever the cycles wait, e.g. for rmmod's grace periods,
# and the cycles' tasks preempt it when they wake),
# XPS_PROG_TIMEOUT (hang guard per program run, 600 s).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-preempt-unload
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"

CYCLES=${XPS_CYCLES:-100}
NICE=${XPS_BG_NICE:-19}
PREEMPT=/sys/kernel/debug/sched/preempt
KLOG=$WORK/klog
STOP=$WORK/stop
TR=
KPROBE=
bg_pids=()

xps_require_root
cd "$REPO" || exit 2
rm -rf "$WORK" && mkdir -p "$WORK"

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p
	touch "$STOP" 2>/dev/null
	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	kprobe_off
}
trap cleanup EXIT

# ----------------------------------------------------- vunmap kprobe
kprobe_on() {
	local f
	for TR in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -e "$TR/kprobe_events" ] && break
		mountpoint -q "$TR" || mount -t tracefs nodev "$TR" 2>/dev/null
		[ -e "$TR/kprobe_events" ] && break
	done
	[ -e "$TR/kprobe_events" ] || return 1
	for f in __vunmap_range_noflush vunmap_range_noflush free_vmap_area_noflush; do
		if echo "p:xps_vunmap $f" >>"$TR/kprobe_events" 2>/dev/null; then
			if echo 1 >"$TR/events/kprobes/xps_vunmap/enable" 2>/dev/null; then
				KPROBE=$f
				return 0
			fi
			echo "-:xps_vunmap" >>"$TR/kprobe_events" 2>/dev/null
		fi
	done
	return 1
}

kprobe_hits() {
	[ -n "$KPROBE" ] && awk '$1 == "xps_vunmap" { print $2 }' "$TR/kprobe_profile" 2>/dev/null
}

kprobe_off() {
	[ -n "$KPROBE" ] || return 0
	echo 0 >"$TR/events/kprobes/xps_vunmap/enable" 2>/dev/null
	echo "-:xps_vunmap" >>"$TR/kprobe_events" 2>/dev/null
	KPROBE=
}

# ------------------------------------------------------ background load
# bg_prog NAME CMD...: run CMD again and again until $STOP exists; writes
# "<runs> <runs that failed> <first FAIL or why>" to $WORK/NAME.res.
bg_prog() {
	local name=$1 runs=0 nbad=0 whyrun='' rc v p f first
	shift
	(
		while [ ! -e "$STOP" ]; do
			nice -n "$NICE" timeout -k 10 "${XPS_PROG_TIMEOUT:-600}" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
			rc=$?
			runs=$((runs + 1))
			v=$(prog_verdicts "$WORK/$name.out")
			read -r p f first <<<"$v"
			if [ "$rc" != 0 ] || [ "$f" != 0 ] || [ "$p" = 0 ]; then
				nbad=$((nbad + 1))
				[ -z "$whyrun" ] && whyrun="run $runs: status $rc, $p PASS, $f FAIL${first:+: $first}$(head -c 200 "$WORK/$name.err" | tr '\n' ' ')"
			fi
			echo "$runs $nbad $whyrun" >"$WORK/$name.res"
		done
	) &
	bg_pids+=($!)
}

# stress-ng in 30 s runs, as nobody (as root its madvise/vm stressors may
# poison pages), each run must verify and complete.  --fork, not
# --pthread: 0.15.06's pthread stressor can leave a thread unjoined when
# its timeout lands right after a pthread_create(), and that thread then
# faults on the stressor's reused stack frame (CI of 3b900fc, lab run
# 20261207-213609-13270; test/lab/selftest stress_ng_pthread).
bg_stress() {
	local runs=0 nbad=0 whyrun='' rc
	mkdir -p "$WORK/stress" && chmod 1777 "$WORK/stress"
	(
		cd "$WORK/stress" || exit 1
		while [ ! -e "$STOP" ]; do
			nice -n "$NICE" setpriv --reuid=nobody --regid=nogroup --clear-groups \
				stress-ng --temp-path "$WORK/stress" --timeout 30s --verify --metrics-brief \
				--vm 2 --vm-bytes 4M --vm-method all \
				--fork 1 --fork-max 8 >"$WORK/stress-ng.log" 2>&1
			rc=$?
			runs=$((runs + 1))
			if [ "$rc" != 0 ] || ! grep -q '] successful run completed' "$WORK/stress-ng.log"; then
				nbad=$((nbad + 1))
				[ -z "$whyrun" ] && whyrun="run $runs: status $rc: $(grep -m2 -iE 'fail|error|verif' "$WORK/stress-ng.log" | tr '\n' '|')"
			fi
			echo "$runs $nbad $whyrun" >"$WORK/stress-ng.res"
		done
	) &
	bg_pids+=($!)
}

# ------------------------------------------------------------- cycles
# One cycle: load with MODE, let the load clear PTEs through the op for a
# moment, read the counters, unload.  Sets $why on trouble; returns 2
# if the module could not be loaded or unloaded (the cycles stop).
cycle() {
	local i=$1 mode=$2 m ta tb tc
	ta=$EPOCHREALTIME
	if ! modprobe xen_ptswap mode="$mode" 2>"$WORK/cycle.err"; then
		bad "cycle $i: modprobe xen_ptswap mode=$mode: $(<"$WORK/cycle.err")"
		return 2
	fi
	tb=$EPOCHREALTIME
	read -r m </sys/module/xen_ptswap/parameters/mode
	[ "$m" = "$mode" ] || bad "cycle $i: parameters/mode is '$m', not $mode"
	nap 0.2
	if ! stats_settle; then
		bad "cycle $i ($mode): counters never consistent: $(tr '\n' ' ' <"$STATS" 2>/dev/null)"
	elif [ "${SV[hcall_errors]}" != 0 ]; then
		bad "cycle $i ($mode): hcall_errors ${SV[hcall_errors]}"
	elif [ "$mode" = sync ] && [ "${SV[deferred]}" != 0 ]; then
		bad "cycle $i (sync): deferred ${SV[deferred]}"
	else
		total_calls=$((total_calls + SV[calls]))
		total_swapped=$((total_swapped + SV[swapped]))
		total_deferred=$((total_deferred + SV[deferred]))
	fi
	tc=$EPOCHREALTIME
	if ! rmmod xen_ptswap 2>"$WORK/cycle.err"; then
		bad "cycle $i: rmmod xen_ptswap: $(<"$WORK/cycle.err")"
		return 2
	fi
	ms_between "$ta" "$tb"
	ms_load=$((ms_load + ms_out))
	ms_between "$tc" "$EPOCHREALTIME"
	ms_unload=$((ms_unload + ms_out))
	return 0
}

# nap SECONDS: sleep without starting a process (a fork and exec take
# up to a second under QEMU's software CPU with the load running).
# (A FIFO opened read-write that nobody writes to.)
mkfifo "$WORK/nap.fifo" && exec {nap_fd}<>"$WORK/nap.fifo"
nap() { read -r -t "$1" -u "$nap_fd" _; }

# ms_between T0 T1: milliseconds between two $EPOCHREALTIME values
# (printf -v: no subshell).
ms_between() {
	local a=${1/./} b=${2/./}
	printf -v ms_out '%d' $(((10#$b - 10#$a) / 1000))
}

# The first thing that went wrong in the cycles.
bad() { [ -n "$why" ] || why=$1; }

# ------------------------------------------------------------------- main
note "preempt-unload: kernel $(uname -r) (${XPS_LAB_KERNEL:-?}), Xen ${XPS_LAB_XEN:-?}, cmdline: $(cat /proc/cmdline)"
if [ ! -r "$PREEMPT" ]; then
	fail preempt-full "cannot run because $PREEMPT does not exist (kernel without CONFIG_PREEMPT_DYNAMIC, or debugfs not mounted)"
	finish
fi
note "$PREEMPT: $(cat "$PREEMPT")"
if grep -q '(full)' "$PREEMPT"; then
	pass preempt-full
else
	fail preempt-full "$PREEMPT reads '$(cat "$PREEMPT")', not '(full)': boot Dom0 with preempt=full (test/lab/run --append preempt=full)"
	fail cycles "not run: the suite must run on a fully preemptible Dom0"
	finish
fi
if ! BIN=$(xps_correctness_bin); then
	fail background-load "cannot run because the correctness programs are not built (\$XPS_CORRECTNESS_BIN='${XPS_CORRECTNESS_BIN:-}'; the lab builds them on the host)"
	finish
fi
if ! command -v stress-ng >/dev/null; then
	fail background-load "cannot run because stress-ng is not installed"
	finish
fi
lockdep=
if [ -r /proc/lockdep_stats ]; then
	lockdep=$(lockdep_state)
	note "lockdep: debug_locks $lockdep at the start"
	if [ "$lockdep" != 1 ]; then
		fail lockdep-on "lockdep was already off before the cycles (an earlier report?): $(dmesg | grep -m1 -iE 'possible|lockdep|inconsistent')"
		lockdep=
	fi
else
	note "no lockdep in this kernel (/proc/lockdep_stats): the debug kernel has it"
fi
xps_loaded && rmmod xen_ptswap
dmesg -c >/dev/null 2>&1
: >"$KLOG"
[ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
kprobe_on || note "no kprobe on vunmap could be set (tracefs/kprobe_events): vunmaps are not counted"
note "vunmap counted at: ${KPROBE:-nothing}"

t_all=$SECONDS
bg_prog munmap "$BIN/munmap"
bg_prog dontneed "$BIN/dontneed"
bg_prog shmem_race "$BIN/shmem_race" 4
bg_prog smp_race "$BIN/smp_race"
bg_stress
sleep 5

why=
total_calls=0 total_swapped=0 total_deferred=0 ms_load=0 ms_unload=0
v0=$(kprobe_hits)
t0=$SECONDS
tmax=0
done_cycles=0
for ((i = 1; i <= CYCLES; i++)); do
	mode=batched
	[ $((i % 2)) = 0 ] && mode=sync
	tc=$SECONDS
	cycle "$i" "$mode"
	rc=$?
	[ $((SECONDS - tc)) -gt "$tmax" ] && tmax=$((SECONDS - tc))
	[ $rc = 2 ] && break
	done_cycles=$i
	if [ $((i % 20)) = 0 ]; then
		klog_take "$KLOG"
		note "cycles: $i/$CYCLES in $((SECONDS - t0)) s (modprobe $((ms_load / i)) ms, rmmod $((ms_unload / i)) ms on average); calls $total_calls, deferred $total_deferred, swapped $total_swapped; vunmaps $(($(kprobe_hits || echo 0) - ${v0:-0})); kernel log bad lines: $(grep -cE "$BAD_LOG" "$KLOG")"
	fi
	nap 0.1
done
t_cycles=$((SECONDS - t0))
v1=$(kprobe_hits)

# Stop the load; each loop finishes the run it is in.
touch "$STOP"
t1=$SECONDS
for p in "${bg_pids[@]}"; do
	wait "$p"
done
bg_pids=()
note "background load stopped in $((SECONDS - t1)) s"
klog_take "$KLOG"

if [ -z "$why" ] && [ "$done_cycles" = "$CYCLES" ]; then
	pass "cycles-$CYCLES-load-unload"
else
	fail "cycles-$CYCLES-load-unload" "${why:-stopped after $done_cycles cycles}"
fi
n=$((done_cycles > 0 ? done_cycles : 1))
note "cycles: $done_cycles in $t_cycles s ($((t_cycles * 10 / n)) ds a cycle, longest $tmax s; modprobe $((ms_load / n)) ms, rmmod $((ms_unload / n)) ms on average); background load niced $NICE"
if [ "$total_calls" -gt 0 ] && [ "$total_swapped" -gt 0 ] && [ "$total_deferred" -gt 0 ]; then
	pass cycles-counters-sane
	note "counters over the cycles: calls $total_calls, deferred $total_deferred, swapped $total_swapped, no hcall_errors"
else
	fail cycles-counters-sane "calls $total_calls deferred $total_deferred swapped $total_swapped over all cycles (want all > 0)"
fi
if [ -z "$KPROBE" ]; then
	fail vunmap-during-cycles "cannot run because no kprobe could count vunmaps (CONFIG_KPROBE_EVENTS, tracefs)"
elif [ $((v1 - v0)) -gt 0 ]; then
	pass vunmap-during-cycles
	note "$KPROBE ran $((v1 - v0)) times during the cycles"
else
	fail vunmap-during-cycles "$KPROBE ran $((v1 - v0)) times during the cycles"
fi
kprobe_off

for name in munmap dontneed shmem_race smp_race stress-ng; do
	if [ ! -r "$WORK/$name.res" ]; then
		fail "background-$name" "finished no run during the cycles"
		continue
	fi
	read -r runs bad rest <"$WORK/$name.res"
	if [ "$bad" = 0 ] && [ "$runs" -gt 0 ]; then
		pass "background-$name"
		note "$name: $runs runs, all passed"
	else
		fail "background-$name" "$bad of $runs runs failed: $rest"
	fi
done

if xps_loaded || [ -e /sys/kernel/debug/xen_ptswap ]; then
	fail unloaded-at-end "xen_ptswap or its debugfs directory is still there"
else
	pass unloaded-at-end
fi
klog_check kernel-log "$KLOG"
grep -E 'rcu.*(stall|detected)|blocked for more than' "$KLOG" | head -n 3 | sed 's/^/# kernel log: /'
if [ -n "$lockdep" ]; then
	l=$(lockdep_state)
	if [ "$l" = 1 ]; then
		pass lockdep-on
	else
		fail lockdep-on "debug_locks is $l after the cycles: lockdep reported something and switched itself off"
	fi
fi
if [ -x "$BIN/xen_console" ]; then
	"$BIN/xen_console" check >"$WORK/xc.out" 2>&1
	while IFS= read -r line; do
		case $line in
		PASS:\ *) pass "${line#PASS: }" ;;
		FAIL:\ *) echo "$line"; failed=$((failed + 1)) ;;
		esac
	done <"$WORK/xc.out"
fi
note "preempt-unload: $((SECONDS - t_all)) s with the load, cycles $t_cycles s"
rm -rf "$WORK"
trap - EXIT
finish
