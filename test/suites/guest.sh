#!/bin/bash
# test/suites/guest.sh - a PV DomU in the lab: save, restore and live
# migration with xen_ptswap loaded in Dom0, and MMU_PT_UPDATE_SWAP against
# the guest's page tables.
#
# Usage (inside the lab's Dom0, from the clone's root, as root, with memory
# for a guest):
#   test/lab/run --guest-mem 768 -- bash test/suites/guest.sh
#
# Starts the toolstack (xenstored, xenconsoled from Debian's xen-utils-4.17)
# and a 256 MiB PV guest with test/lab/xl-guest: the lab's kernel and an
# initramfs whose workload fills the guest's memory with a known pattern,
# keeps rewriting 5 % of it and checks all of it every second.  Then, with
# the module loaded in Dom0 (the toolstack maps the guest's memory through
# privcmd and unmaps it: special PTEs zapped in lazy MMU mode):
#   guest-create                 the guest came up and filled its memory
#   batched-save-restore         xl save, xl restore; the guest's next full
#                                check of its pattern passes
#   batched-migrate              xl migrate to this Dom0 (live: log-dirty
#                                rounds while the guest rewrites memory);
#                                the next full check passes
#   sync-migrate                 the same with mode=sync
#   batched-counters / sync-counters  the module's counters over those
#                                operations, consistent: batched queued
#                                the foreign mappings' special PTEs
#                                (deferred > 0), sync swapped every clear
#                                (swapped > 0, deferred 0); no failed
#                                MMU_PT_UPDATE_SWAP
#   pt-owner-swap-eperm, pt-owner-normal-update  test/correctness/
#                                xen_pt_owner against the guest: a swap with
#                                the guest as page-table owner is refused
#                                with -EPERM and changes nothing; a normal
#                                update there works as before
#   kernel-log                   nothing in Dom0's kernel log (BAD_LOG)
#   end/xen-console-clean        nothing in Xen's console ring
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes, "N
# passed, N failed" last; exit status 0 iff nothing failed.
# Environment: XPS_GUEST_MIB (256).

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-guest
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
XLG=$REPO/test/lab/xl-guest
GB=$REPO/tools/guest-bench
G=xpsg
MIB=${XPS_GUEST_MIB:-256}

start_suite
BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && [ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1

# op CHECK OP: one guest-bench operation, its time as a note.
op() {
	local check=$1 what=$2 out
	if out=$("$GB" "$what" "$G" 2>&1); then
		pass "$check"
		note "$check: $(echo "$out" | grep '^result ')"
	else
		fail "$check" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# counters MODE: the module's counters since its load.
counters() {
	local mode=$1
	if ! stats_settle; then
		fail "$mode-counters" "never consistent: $(tr '\n' ' ' <"$STATS" 2>/dev/null)"
		return
	fi
	note "$mode counters: $(tr '\n' ' ' <"$STATS")"
	# batched: the foreign mappings' special PTEs are queued; sync: every
	# clear of a pinned, non-none entry is a swap, nothing queued.
	# (Other Dom0 processes may swap a few writable clean entries in
	# batched mode: no claim on swapped there.)
	local ok=0
	if [ "$mode" = sync ]; then
		[ "${SV[swapped]:-0}" -gt 0 ] && [ "${SV[deferred]:-0}" = 0 ] && ok=1
	else
		[ "${SV[deferred]:-0}" -gt 0 ] && ok=1
	fi
	if [ $ok = 1 ] && [ "${SV[hcall_errors]:-0}" = 0 ]; then
		pass "$mode-counters"
	else
		fail "$mode-counters" "deferred ${SV[deferred]:-?}, swapped ${SV[swapped]:-?}, hcall_errors ${SV[hcall_errors]:-?} (want $([ "$mode" = sync ] && echo 'deferred 0, swapped > 0' || echo 'deferred > 0'), no errors)"
	fi
}

# load MODE
load() {
	local out
	xps_loaded && rmmod xen_ptswap
	if out=$(modprobe xen_ptswap mode="$1" 2>&1); then
		return 0
	fi
	fail "$1-load" "modprobe xen_ptswap mode=$1: $out; $(dmesg | grep xen_ptswap | tail -n 1)"
	return 1
}

t0=$SECONDS
if ! out=$("$XLG" create "$G" "$MIB" 2>&1); then
	fail guest-create "$out"
	klog_take "$KLOG"
	klog_check kernel-log "$KLOG"
	finish
fi
domid=$(echo "$out" | tail -n 1)
pass guest-create
note "guest $G (domain $domid, $MIB MiB) up and filled after $((SECONDS - t0)) s"

if load batched; then
	op batched-save-restore save
	op batched-migrate migrate
	counters batched
fi
if load sync; then
	op sync-migrate migrate
	counters sync
fi
xps_loaded && rmmod xen_ptswap

domid=$(xl domid "$G" 2>/dev/null)
if [ -z "$BIN" ] || [ ! -x "$BIN/xen_pt_owner" ]; then
	fail pt-owner "cannot run because test/correctness/xen_pt_owner is not built (\$XPS_CORRECTNESS_BIN='${XPS_CORRECTNESS_BIN:-}')"
elif [ -z "$domid" ]; then
	fail pt-owner "cannot run because guest $G is gone"
else
	timeout -k 10 120 "$BIN/xen_pt_owner" "$domid" >"$WORK/pt_owner.out" 2>"$WORK/pt_owner.out.err"
	take_verdicts pt-owner "" "$WORK/pt_owner.out" $? 120
	# The guest must survive both: its next full check passes.
	if out=$("$XLG" wait-check "$G" 300 2>&1); then
		pass pt-owner-guest-intact
	else
		fail pt-owner-guest-intact "$out"
	fi
fi

xl destroy "$G" >/dev/null 2>&1
note "guest console, last lines: $(tail -n 2 "$("$XLG" log "$G")" 2>/dev/null | tr -d '\r' | tr '\n' '|')"
end_checks "$KLOG"
note "guest suite: $((SECONDS - t0)) s"
finish
