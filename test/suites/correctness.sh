#!/bin/bash
# test/suites/correctness.sh - every PTE-clearing caller path, checked by
# memory contents and returned state, in one module configuration.
#
# Usage (inside the lab's Dom0, from the clone's root, as root):
#   bash test/suites/correctness.sh unloaded|batched|sync|noswap|builtin
# or with XPS_CORRECTNESS_CONFIG set; test/suites/correctness-<config>.sh
# are the wrappers test/suites/SUITES lists.
#   unloaded  rmmod xen_ptswap if it is loaded
#   batched   modprobe xen_ptswap            (mode=batched, the default)
#   sync      modprobe xen_ptswap mode=sync
#   noswap    modprobe xen_ptswap mode=noswap (the stock-Xen mode: also
#             on a Xen without MMU_PT_UPDATE_SWAP)
#   builtin   no module: the upstream form's built-in batched clear
#             (test/linux-upstream/), switched on through
#             /sys/module/xen/parameters/batched_pte_clear; its counters
#             are /sys/kernel/debug/xen_pv_mmu/pte_clear_stats, and the
#             stress phase flips the switch instead of reloading a module
# The verdicts must be the same in all of them.
#
# What it does: builds test/correctness/*.c (see build(): in the lab the
# host has built them already), runs each
# program (first gntdev_lock: /dev/xen/gntdev's ioctls and lock order,
# first so that lockdep, which turns itself off after its first report,
# still checks the rest; then one caller path each: munmap, MADV_DONTNEED, MADV_FREE +
# reclaim, mremap, exec, foreign mappings, fork/COW, mprotect, userfaultfd
# WP markers on shmem, PAGEMAP_SCAN dirty tracking with asynchronous
# userfaultfd WP (Linux 6.7 and later), UFFDIO_MOVE of anonymous pages,
# pinned and not (Linux 6.8 and later), MAP_SHARED files on ext4 on a loop
# device, the shmem dirty-bit race, SMP races), then stress-ng's vm, madvise,
# mremap, mmap, fork and memfd stressors with --verify while a loop unloads
# and loads the module (batched and sync only).  After each program the
# kernel log is read and cleared (dmesg -c); WARNING, BUG, Oops, Bad
# rss-counter, Bad page or a lockdep report fail that program's
# "-kernel-log" check; at the
# end Xen's console ring (read from Dom0) must show no crash or L1
# validation error since the start, and lockdep, where the kernel has
# it, must still be on (lockdep-on).  With
# the module loaded its counters are checked too (no failed hypercall;
# batched both defers and swaps, sync never defers).
#
# A program that exits with status 77 and prints only "# not applicable:
# <why>" tests what this kernel lacks (pagemap_scan before Linux 6.7,
# uffd_move before 6.8): it is a "# skipped: <name>: <why> (not on this
# kernel)" note, neither PASS nor FAIL; its kernel log goes to the next
# program's check.
#
# Output: one "PASS: <check>" or "FAIL: <check>: <reason>" line per check,
# "# ..." lines for information, and "N passed, N failed" at the end.
# Exit status 0 if nothing failed.
# Environment: XPS_STRESS_SECONDS (default 20), XPS_PROG_TIMEOUT (a hang
# guard per program, default 300 s), XPS_RACE_ROUNDS (shmem_race, 48),
# XPS_CORRECTNESS_SKIP (programs, and "stress" for stress-ng, that this
# run leaves out, separated by spaces or commas (test/lab/run --env takes
# no spaces): where they cannot run, e.g. inside a DomU,
# test/suites/guest-module.sh; each is named in a "# skipped" note).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
SRC=$REPO/test/correctness
BIN=/tmp/xps-correctness
WORK=/tmp/xps-correctness-work
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"

cfg=${1:-${XPS_CORRECTNESS_CONFIG:-}}

case $cfg in
unloaded|batched|sync|noswap|builtin) ;;
*)
	echo "usage: $0 unloaded|batched|sync|noswap|builtin (or XPS_CORRECTNESS_CONFIG)" >&2
	exit 2 ;;
esac
# The upstream form's switch and counters (builtin).
KNOB=$BUILTIN_KNOB
[ "$cfg" = builtin ] && STATS=$BUILTIN_STATS
# knob_write Y|N: write the switch; its error message on stdout, status 1.
knob_write() { { echo "$1" >"$KNOB"; } 2>&1; }
[ "$(id -u)" = 0 ] || { fail setup "cannot run because the suite needs root"; finish; }

# ------------------------------------------------------------- the module
module_args() {
	case $cfg in sync|noswap) echo "mode=$cfg" ;; *) ;; esac
}

# Loads (batched, sync) or unloads (unloaded) the module; 0 on success,
# else prints why on stdout.
module_configure() {
	local out
	if xps_loaded; then
		out=$(rmmod xen_ptswap 2>&1) || { echo "rmmod xen_ptswap failed: $out"; return 1; }
	fi
	[ "$cfg" = unloaded ] && return 0
	if [ "$cfg" = builtin ]; then
		[ -e "$KNOB" ] || { echo "no $KNOB: not a kernel of the upstream form (test/linux-upstream/)"; return 1; }
		out=$(knob_write Y) || { echo "writing Y to $KNOB failed (Xen without XENFEAT_mmu_pt_update_swap?): $out"; return 1; }
		[ "$(cat "$KNOB")" = Y ] || { echo "$KNOB reads '$(cat "$KNOB")' after writing Y"; return 1; }
		return 0
	fi
	# shellcheck disable=SC2046
	out=$(modprobe xen_ptswap $(module_args) 2>&1) || {
		echo "modprobe xen_ptswap $(module_args) failed (module not built or not installed?): $out; kernel log: $(dmesg | grep -i xen_ptswap | tail -n 1)"
		return 1
	}
	local mode
	mode=$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)
	[ "$mode" = "$cfg" ] || { echo "loaded, but parameters/mode is '$mode', not '$cfg'"; return 1; }
	return 0
}

check_counters() {
	local who=module
	[ "$cfg" = builtin ] && who=builtin
	counters_check "$who-counters" "" "$who" || return
	local deferred=${SV[deferred]} swapped=${SV[swapped]}
	case $cfg in
	batched|builtin)
		if [ "$deferred" -gt 0 ] && [ "$swapped" -gt 0 ]; then
			pass $who-batched-both-paths
		else
			fail $who-batched-both-paths "deferred=$deferred swapped=$swapped: the programs should exercise both"
		fi ;;
	sync)
		if [ "$deferred" = 0 ] && [ "$swapped" -gt 0 ]; then
			pass module-sync-never-defers
		else
			fail module-sync-never-defers "deferred=$deferred swapped=$swapped (want 0 and > 0)"
		fi ;;
	noswap)
		local native=${SV[native]:-0}
		if [ "$deferred" -gt 0 ] && [ "$native" -gt 0 ] && [ "$swapped" = 0 ]; then
			pass module-noswap-defers-and-traps-never-swaps
		else
			fail module-noswap-defers-and-traps-never-swaps "deferred=$deferred native=$native swapped=$swapped (want > 0, > 0 and 0)"
		fi ;;
	esac
}

# --------------------------------------------------------------- helpers
# skip_listed NAME: NAME is in $XPS_CORRECTNESS_SKIP; skipped NAME: the
# same, and says so.
skip_listed() {
	local list=" ${XPS_CORRECTNESS_SKIP:-} "

	case ${list//,/ } in *" $1 "*) return 0 ;; esac
	return 1
}
skipped() {
	skip_listed "$1" || return 1
	note "skipped: $1 (XPS_CORRECTNESS_SKIP)"
}

# Reads and clears the kernel log; FAIL if it has kernel trouble in it,
# and keep the first report as "# kernel log:" notes (where the log is
# gone afterwards, in a guest for example, that is all there is of it).
# $XPS_KLOG_ALLOW (an ERE, default none): trouble lines that match it are
# not failures, only "# kernel log allowed:" notes (guest-module.sh sets
# it in the guest, with its reason there).  A note quotes the line with
# "WARNING " for "WARNING: ", so that test/check's scan of the boot's
# serial log, which the note reaches, does not take it for a warning of
# Dom0's own.
kernel_log_check() {
	local name=$1 log hits
	log=$(dmesg -c 2>&1)
	hits=$(echo "$log" | grep -E "$BAD_LOG" || true)
	if [ -n "$hits" ] && [ -n "${XPS_KLOG_ALLOW:-}" ]; then
		echo "$hits" | grep -E "$XPS_KLOG_ALLOW" | sed 's/^/# kernel log allowed: /; s/WARNING: /WARNING /'
		hits=$(echo "$hits" | grep -vE "$XPS_KLOG_ALLOW" || true)
	fi
	if [ -n "$hits" ]; then
		fail "$name-kernel-log" "$(echo "$hits" | head -n 3 | tr '\n' '|')"
		echo "$log" | grep -E -m 1 -A 30 "$BAD_LOG" | sed 's/^/# kernel log: /'
	else
		pass "$name-kernel-log"
	fi
}

# run_prog NAME CMD [ARG...]: run a program, pass its PASS/FAIL lines on,
# fail it if it died without saying why, then check the kernel log.  Status
# 77 with no verdict and a "# not applicable:" line: a skipped note only.
run_prog() {
	local name=$1 t0=$SECONDS limit=${XPS_PROG_TIMEOUT:-300} why
	shift
	skipped "${1##*/}" && return
	if [ ! -x "$1" ]; then
		fail "$name" "cannot run because $1 did not build"
		return
	fi
	timeout -k 10 "$limit" "$@" >"$WORK/$name.out" 2>"$WORK/$name.out.err" </dev/null
	local rc=$?
	note "$name: $((SECONDS - t0)) s"
	# busybox's timeout (a guest's, test/lab/guest/init) exits with the
	# program's status, 143 after its SIGTERM; coreutils' exits with 124.
	[ $rc = 143 ] && [ $((SECONDS - t0)) -ge "$limit" ] && rc=124
	why=$(sed -n 's/^# not applicable: //p' "$WORK/$name.out" | head -n 1)
	if [ $rc = 77 ] && [ -n "$why" ] && ! grep -qE '^(PASS|FAIL): ' "$WORK/$name.out"; then
		note "skipped: $name: $why (not on this kernel)"
		return
	fi
	take_verdicts "$name" "" "$WORK/$name.out" $rc "$limit"
	kernel_log_check "$name"
}

# Finds or builds the programs (test/correctness/Makefile).  In the lab,
# test/lab/run has built them on the host before booting and exports
# XPS_CORRECTNESS_BIN (gcc on QEMU's software CPU takes about a minute a
# program); elsewhere (a real Dom0) they are built here into $BIN.  A
# program that fails to build fails "build-<name>" with gcc's first error.
build() {
	local src name out log=$BIN.log ok=1 n=0
	if [ -n "${XPS_CORRECTNESS_BIN:-}" ] && [ -d "$XPS_CORRECTNESS_BIN" ]; then
		BIN=$XPS_CORRECTNESS_BIN
		log=$BIN/build.log
		note "build: programs built on the lab's host, in $BIN"
	else
		rm -rf "$BIN"
		make -k -C "$SRC" O="$BIN" >"$log" 2>&1
	fi
	for src in "$SRC"/*.c; do
		name=${src##*/}
		name=${name%.c}
		if [ -x "$BIN/$name" ]; then
			n=$((n + 1))
			continue
		fi
		skip_listed "$name" && continue
		out=$(grep -m1 -E "^$name\.c:.*(error|warning)" "$log" 2>/dev/null)
		fail "build-$name" "${out:-not built, see $log}"
		ok=0
	done
	note "build: $n programs"
	[ $ok = 1 ] && pass build
}

# ------------------------------------------------------------ file tests
ext4_img=$WORK/ext4.img
ext4_dir=$WORK/ext4
loopdev=

# Kernels with these as modules (Debian's): load them; built in: no-op.
modprobe loop 2>/dev/null
modprobe xen-privcmd 2>/dev/null
modprobe xen-gntdev 2>/dev/null	# gntdev_lock; built in in the lab's kernels

ext4_mount() {
	mount -t ext4 "$loopdev" "$ext4_dir" 2>&1
}

file_tests() {
	local out
	skipped file_shared && return
	if ! truncate -s 96M "$ext4_img" || ! mkdir -p "$ext4_dir"; then
		fail file-shared "cannot run because $WORK is not writable"
		return
	fi
	if ! out=$(mkfs.ext4 -q -F "$ext4_img" 2>&1); then
		fail file-shared "cannot run because mkfs.ext4 failed: $out"
		return
	fi
	if ! loopdev=$(losetup -f --show "$ext4_img" 2>&1); then
		fail file-shared "cannot run because losetup failed: $loopdev"
		loopdev=
		return
	fi
	if ! out=$(ext4_mount); then
		fail file-shared "cannot run because mounting $loopdev failed: $out"
	else
		run_prog file_shared "$BIN/file_shared" "$ext4_dir"
		# Unmount and mount again: the data must be on the disk.
		sync
		if ! out=$(umount "$ext4_dir" 2>&1); then
			fail file-shared-remount "umount failed: $out"
		elif ! out=$(ext4_mount); then
			fail file-shared-remount "mount again failed: $out"
		else
			run_prog file_shared_verify "$BIN/file_shared" "$ext4_dir" verify
		fi
		umount "$ext4_dir" 2>/dev/null
	fi
	losetup -d "$loopdev" 2>/dev/null
	rm -f "$ext4_img"
}

# ----------------------------------------------------------------- stress
stress() {
	local secs=${XPS_STRESS_SECONDS:-20} rc log=$WORK/stress-ng.log stop=$WORK/stress.stop
	local res=$WORK/reload.res loop_pid='' t0=$SECONDS
	skipped stress && return
	if ! command -v stress-ng >/dev/null; then
		fail stress-ng "cannot run because stress-ng is not installed"
		return
	fi
	rm -f "$stop" "$res"
	if [ "$cfg" != unloaded ]; then
		# While the stressors run: switch the built-in clear off and on
		# (builtin), or unload and load the module (the others).
		if [ "$cfg" = builtin ]; then
			stress_off() { knob_write N; }
			stress_on() { knob_write Y; }
		else
			stress_off() { rmmod xen_ptswap 2>&1; }
			# shellcheck disable=SC2046
			stress_on() { modprobe xen_ptswap $(module_args) 2>&1; }
		fi
		(
			cycles=0 errors=0 last=
			while [ ! -e "$stop" ]; do
				if ! last=$(stress_off); then errors=$((errors + 1)); fi
				sleep 0.3
				if ! last=$(stress_on); then errors=$((errors + 1)); fi
				cycles=$((cycles + 1))
				sleep 0.3
			done
			echo "$cycles $errors $last" >"$res"
		) &
		loop_pid=$!
	fi
	# As an unprivileged user: as root, stress-ng's madvise stressor also
	# poisons pages (MADV_HWPOISON) where the kernel has memory failure
	# handling, which is not a PTE-clearing path of ours and would leave
	# poisoned pages in a real Dom0.
	mkdir -p "$WORK/stress" && chmod 1777 "$WORK/stress"
	(cd "$WORK/stress" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		stress-ng --temp-path "$WORK/stress" --timeout "${secs}s" --verify --metrics-brief \
		--vm 1 --vm-bytes 32M --madvise 1 --mremap 1 --mremap-bytes 8M \
		--mmap 1 --mmap-bytes 16M --fork 1 --memfd 1 --memfd-bytes 16M) >"$log" 2>&1
	rc=$?
	touch "$stop"
	[ -n "$loop_pid" ] && wait "$loop_pid"
	sed 's/^/# stress-ng: /' "$log" | grep -vE 'dispatching|stressor +bogo|\(secs\)' | head -n 30
	if [ $rc = 0 ] && grep -q '] successful run completed' "$log"; then
		pass stress-ng-verify
	else
		fail stress-ng-verify "exit status $rc: $(grep -m2 -iE 'fail|error|verif' "$log" | tr '\n' '|')"
	fi
	if [ -n "$loop_pid" ]; then
		# What the loop beside stress-ng did: flip the built-in clear's
		# switch (builtin) or unload and load the module (the others).
		local cycles errors last check did what
		if [ "$cfg" = builtin ]; then
			check=stress-knob-toggle did="the built-in clear was switched off and on"
			what="failed writes of $KNOB"
		else
			check=stress-module-reload did="the module was unloaded and loaded"
			what="rmmod/modprobe failures"
		fi
		read -r cycles errors last <"$res" 2>/dev/null || cycles=0
		if [ "${cycles:-0}" -gt 0 ] && [ "${errors:-1}" = 0 ]; then
			pass "$check"
			note "$did $cycles times during stress-ng"
		else
			fail "$check" "${cycles:-0} cycles, ${errors:-?} $what, last: ${last:-}"
		fi
		if [ "$cfg" = builtin ]; then
			echo Y >"$KNOB" 2>/dev/null
		elif ! xps_loaded; then
			# shellcheck disable=SC2046
			modprobe xen_ptswap $(module_args) >/dev/null 2>&1
		fi
	fi
	note "stress: $((SECONDS - t0)) s"
	kernel_log_check stress
}

# ------------------------------------------------------------------- main
note "correctness: configuration $cfg, kernel $(uname -r), Xen features $(cat /sys/hypervisor/properties/features 2>/dev/null || echo unknown)"
rm -rf "$WORK" && mkdir -p "$WORK"
dmesg -c >/dev/null 2>&1

if why=$(module_configure); then
	pass "module-config-$cfg"
else
	fail "module-config-$cfg" "$why"
	fail programs "cannot run in configuration $cfg because the module could not be set up"
	finish
fi
kernel_log_check module-config
# With lockdep (the debug kernel) it must be on now and still at the end:
# it turns itself off after its first report, leaving the rest unchecked.
lockdep=$(lockdep_state)
if [ -z "$lockdep" ]; then
	note "no lockdep in this kernel (/proc/lockdep_stats): the debug kernel has it"
elif [ "$lockdep" != 1 ]; then
	fail lockdep-on "lockdep was off before the programs ran (a report or a taint since boot, taint $(cat /proc/sys/kernel/tainted): see the earlier kernel-log checks)"
	lockdep=
fi

t0=$SECONDS
build
note "build: $((SECONDS - t0)) s"
[ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
run_prog gntdev_lock "$BIN/gntdev_lock"
run_prog munmap "$BIN/munmap"
run_prog dontneed "$BIN/dontneed"
file_tests
run_prog madv_free "$BIN/madv_free"
run_prog mremap "$BIN/mremap"
run_prog exec_args "$BIN/exec_args"
run_prog fork_cow "$BIN/fork_cow"
run_prog mprotect "$BIN/mprotect"
run_prog uffd_wp "$BIN/uffd_wp"
run_prog pagemap_scan "$BIN/pagemap_scan"
run_prog uffd_move "$BIN/uffd_move"
run_prog foreign "$BIN/foreign"
run_prog shmem_race "$BIN/shmem_race" "${XPS_RACE_ROUNDS:-48}"
run_prog smp_race "$BIN/smp_race"
[ "$cfg" != unloaded ] && check_counters

stress

run_prog xen_console "$BIN/xen_console" check

# The configuration still holds at the end.
if [ "$cfg" = unloaded ]; then
	if xps_loaded; then
		fail module-config-at-end "xen_ptswap is loaded"
	else
		pass module-config-at-end
	fi
elif [ "$cfg" = builtin ]; then
	if [ "$(cat "$KNOB" 2>/dev/null)" = Y ] && ! xps_loaded; then
		pass module-config-at-end
	else
		fail module-config-at-end "$KNOB reads '$(cat "$KNOB" 2>/dev/null)', module loaded: $(xps_loaded && echo yes || echo no)"
	fi
elif [ "$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)" = "$cfg" ]; then
	pass module-config-at-end
else
	fail module-config-at-end "xen_ptswap is not loaded with mode=$cfg"
fi
if [ -n "$lockdep" ]; then
	if [ "$(lockdep_state)" = 1 ]; then
		pass lockdep-on
	else
		fail lockdep-on "lockdep switched itself off during the programs (a report or a taint: see the kernel-log checks)"
	fi
fi
rm -rf "$WORK"
[ "$BIN" = "${XPS_CORRECTNESS_BIN:-}" ] || rm -rf "$BIN" "$BIN.log"
note "correctness ($cfg): $SECONDS s in all"
finish
