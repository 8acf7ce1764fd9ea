#!/bin/bash
# test/suites/hook.sh - ownership of pv_ops.mmu.ptep_get_and_clear
# (xen_register_ptep_get_and_clear(), test/linux-patch/6.1/0003) and
# xen_ptswap's op on a real pinned page table.
#
# Runs inside the lab's Dom0 from /xps (see test/lab/run), patched Xen and
# a patched kernel.  Uses three test modules the lab builds on the host
# into $XPS_KTEST: test/ktest/ptswap_hook_test (a second owner of the
# slot), test/ktest/ptswap_queue_test and test/ktest/ptswap_clear_test
# (with clear_run.py beside it).
#   order A:  xen_ptswap first, then the test owner is refused (EBUSY);
#             xen_ptswap keeps counting; the default is back after rmmod.
#   order B:  the test owner first, xen_ptswap refused (EBUSY, one log
#             line saying why); after rmmod xen_ptswap loads and works.
#   leak:     an owner unloading still registered: the kernel restores
#             the default and says so; unmapping still works.
#   queue:    the kernel's xen_queue_pte_clear() of 8 kernel entries that
#             span two page table pages, in one lazy MMU section: queued
#             (unchanged until the section ends), then each entry none
#             and every other entry of the area unchanged.
#   clear:    S1 (swap: a queued set_pte() is issued before the swap, the
#             raw value comes back), S2 (defer: queued in modes
#             batched and noswap, at once in mode sync), S3 (twice:
#             S2's entry cleared again in the same lazy section returns
#             none, not the stale value), S4 (ro: a read-only, clean
#             entry is cleared at once in every mode, never queued) and
#             S5 (unlazy: S2's entry outside lazy MMU mode is cleared at
#             once in every mode) on the caller's
#             own pinned page table, in all three modes, cross-checked
#             with the counters (noswap clears S1 with the native xchg).
#   the kernel log has no WARNING, BUG or Oops at the end.
# Prints "PASS: <check>", "FAIL: <check>: <why>", "# <note>" lines and
# last "N passed, N failed".  Exit status 0 if no check failed.

set -u

cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
T=$(mktemp -d /tmp/xps-hook.XXXXXX)
HOOK=ptswap_hook_test
CLEAR=ptswap_clear_test
QUEUE=ptswap_queue_test
HOOK_DIR=/sys/kernel/debug/$HOOK
STATS=/sys/kernel/debug/xen_ptswap/stats
DEFAULT_OP=xen_ptep_get_and_clear
XPS_OP=xps_ptep_get_and_clear
LEAK_LINE="xen: $HOOK unloaded without releasing ptep_get_and_clear; default restored"
npass=0
nfail=0

pass() { echo "PASS: $1"; npass=$((npass + 1)); }
fail() { echo "FAIL: $1: $2"; nfail=$((nfail + 1)); }
note() { echo "# $*"; }

loaded() { grep -q "^$1 " /proc/modules; }

cleanup() {
	local m

	for m in "$CLEAR" "$QUEUE" "$HOOK" xen_ptswap; do
		loaded "$m" && rmmod "$m"
	done
	rm -rf "$T"
}
trap cleanup EXIT

finish() {
	echo "$npass passed, $nfail failed"
	exit $((nfail > 0))
}

# Kernel log lines added since the last dmesg_mark, without timestamps.
dmesg_mark() { dmesg >"$T/dmesg.mark"; }
dmesg_new() {
	dmesg >"$T/dmesg.now"
	tail -n +"$(($(wc -l <"$T/dmesg.mark") + 1))" "$T/dmesg.now" | sed 's/^\[[^]]*\] //'
}

# xstat NAME: one counter of xen_ptswap (0 if it cannot be read).
xstat() {
	awk -v n="$1" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }' "$STATS" 2>/dev/null || echo 0
}

# workload MIB: map MIB private pages, write them, MADV_DONTNEED them,
# write them again and munmap them: every page cleared twice through
# ptep_get_and_clear().
workload() {
	python3 - "$1" <<'EOF'
import mmap, sys
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE)
for i in range(0, n, mmap.PAGESIZE):
    m[i] = 1
m.madvise(mmap.MADV_DONTNEED)
for i in range(0, n, mmap.PAGESIZE):
    if m[i] != 0:
        sys.exit("page %d kept its data after MADV_DONTNEED" % (i // mmap.PAGESIZE))
    m[i] = 2
m.close()
EOF
}

# hook_load CHECK ARGS...: insmod the hook test module with ARGS.
hook_load() {
	local check=$1

	shift
	if insmod "$HOOK_KO" "$@" 2>"$T/insmod.err"; then
		return 0
	fi
	fail "$check" "insmod $HOOK $*: $(cat "$T/insmod.err")"
	return 1
}

hook_unload() {
	rmmod "$HOOK" 2>"$T/rmmod.err" && return 0
	fail "$1" "rmmod $HOOK: $(cat "$T/rmmod.err")"
	return 1
}

# slot_is CHECK OP: the slot holds OP (as "%ps" prints it), read by the
# test module's register=0 instance (or by the loaded instance if there
# is one).
slot_is() {
	local check=$1 want=$2 got tmp=0

	if ! loaded "$HOOK"; then
		hook_load "$check" register=0 || return
		tmp=1
	fi
	got=$(cat "$HOOK_DIR/slot" 2>&1)
	[ $tmp = 1 ] && hook_unload "$check"
	case $got in
	"$want" | "$want "*) pass "$check" ;;
	*) fail "$check" "slot holds '$got', want $want" ;;
	esac
}

# expect_ebusy CHECK ERRFILE: a load failed with EBUSY.
expect_ebusy() {
	if grep -q 'Device or resource busy' "$2"; then
		pass "$1"
	else
		fail "$1" "load failed, but not with EBUSY: $(tr '\n' ' ' <"$2")"
	fi
}

# ktest_ko NAME: the lab's build of test/ktest/NAME, with its build log
# free of warnings.
ktest_ko() {
	local ko=${XPS_KTEST:-/nonexistent}/$1.ko log=${XPS_KTEST:-/nonexistent}/$1.build.log

	if [ ! -f "$ko" ]; then
		fail "$1-built" "cannot run because there is no $ko (XPS_KTEST='${XPS_KTEST:-}')"
		return 1
	fi
	if grep -q 'warning:' "$log" 2>/dev/null; then
		fail "$1-built" "$(grep -m1 'warning:' "$log")"
	else
		pass "$1-built"
	fi
	echo "$ko" >"$T/$1.path"
}

# ------------------------------------------------------------------ setup
note "xen=${XPS_LAB_XEN:-?} kernel=${XPS_LAB_KERNEL:-?} $(uname -r)"
case ${XPS_LAB_KERNEL:-patched}/${XPS_LAB_XEN:-patched} in
patched/patched | debug/patched | patched/debug | debug/debug) ;;
*)
	fail variant "cannot run because the suite needs patched Xen and a patched kernel, not ${XPS_LAB_KERNEL:-}/${XPS_LAB_XEN:-}"
	finish
	;;
esac
ktest_ko "$HOOK" || finish
HOOK_KO=$(cat "$T/$HOOK.path")
CLEAR_KO=
ktest_ko "$CLEAR" && CLEAR_KO=$(cat "$T/$CLEAR.path")
if loaded xen_ptswap; then
	note "xen_ptswap was loaded at start; unloading it"
	rmmod xen_ptswap || { fail setup "cannot unload xen_ptswap"; finish; }
fi
dmesg >"$T/dmesg.start"

slot_is slot-default-at-start "$DEFAULT_OP"

# counts_then_rmmod ORDER CHECK: with xen_ptswap the owner, CHECK that a
# 4 MiB workload goes through its op (calls grow by at least 1024, no
# failed hypercall), then ORDER-rmmod and ORDER-slot-default-after: it
# unloads and the slot is the default again.
counts_then_rmmod() {
	local order=$1 check=$2 c0 c1
	c0=$(xstat calls)
	if ! workload 4 2>"$T/work.err"; then
		fail "$check" "workload: $(tail -n 1 "$T/work.err")"
	else
		c1=$(xstat calls)
		if [ "$c1" -ge $((c0 + 1024)) ] && [ "$(xstat hcall_errors)" -eq 0 ]; then
			pass "$check"
		else
			fail "$check" "calls $c0 -> $c1 over 4 MiB cleared twice; $(tr '\n' ' ' <"$STATS")"
		fi
	fi
	if rmmod xen_ptswap 2>"$T/rmmod.err"; then
		pass "$order-rmmod"
	else
		fail "$order-rmmod" "$(cat "$T/rmmod.err")"
	fi
	slot_is "$order-slot-default-after" "$DEFAULT_OP"
}

# ---------------------------------------------- order A: xen_ptswap first
order_a() {
	if ! modprobe xen_ptswap 2>"$T/modprobe.err"; then
		fail a-modprobe "$(cat "$T/modprobe.err")"
		return
	fi
	pass a-modprobe
	slot_is a-slot-is-xen_ptswap "$XPS_OP"
	dmesg_mark
	if insmod "$HOOK_KO" 2>"$T/insmod.err"; then
		fail a-second-owner-refused "insmod $HOOK register=1 succeeded while xen_ptswap owns the slot"
		rmmod "$HOOK"
	else
		expect_ebusy a-second-owner-refused "$T/insmod.err"
	fi
	note "a: insmod said: $(cat "$T/insmod.err")"
	if loaded "$HOOK" || [ -e "$HOOK_DIR" ]; then
		fail a-refused-owner-left-nothing "$HOOK or its debugfs folder is still there"
	else
		pass a-refused-owner-left-nothing
	fi
	slot_is a-slot-still-xen_ptswap "$XPS_OP"
	counts_then_rmmod a a-xen_ptswap-still-counts
}

# ----------------------------------------- order B: the test owner first
order_b() {
	local c0 c1 lines n

	hook_load b-owner-loads || return
	pass b-owner-loads
	slot_is b-slot-is-owner "hook_ptep_get_and_clear"
	c0=$(cat "$HOOK_DIR/calls")
	if ! workload 4 2>"$T/work.err"; then
		fail b-owner-op-called "workload: $(tail -n 1 "$T/work.err")"
	else
		c1=$(cat "$HOOK_DIR/calls")
		if [ "$c1" -ge $((c0 + 1024)) ]; then
			pass b-owner-op-called
		else
			fail b-owner-op-called "the op's calls went $c0 -> $c1 over 4 MiB cleared twice"
		fi
	fi
	dmesg_mark
	if modprobe xen_ptswap 2>"$T/modprobe.err"; then
		fail b-xen_ptswap-refused "modprobe xen_ptswap succeeded while $HOOK owns the slot"
		rmmod xen_ptswap
	else
		expect_ebusy b-xen_ptswap-refused "$T/modprobe.err"
	fi
	note "b: modprobe said: $(cat "$T/modprobe.err")"
	# The kernel's own once-per-boot notices about out-of-tree or
	# unsigned modules are not the module's.
	lines=$(dmesg_new | grep '^xen_ptswap: ' |
		grep -v 'taints kernel\|module verification failed')
	n=$(printf '%s' "$lines" | grep -c .)
	if [ "$n" -eq 1 ] && echo "$lines" | grep -q 'owned by another module'; then
		pass b-xen_ptswap-one-log-line
	else
		fail b-xen_ptswap-one-log-line "$n new xen_ptswap lines, want 1 saying 'owned by another module': $(echo "$lines" | tr '\n' '|')"
	fi
	note "b: kernel log: $lines"
	if loaded xen_ptswap || [ -e /sys/kernel/debug/xen_ptswap ]; then
		fail b-refused-xen_ptswap-left-nothing "xen_ptswap or its debugfs folder is still there"
	else
		pass b-refused-xen_ptswap-left-nothing
	fi
	slot_is b-slot-still-owner "hook_ptep_get_and_clear"
	hook_unload b-owner-unloads && pass b-owner-unloads
	slot_is b-slot-default-after-owner "$DEFAULT_OP"
	if ! modprobe xen_ptswap 2>"$T/modprobe.err"; then
		fail b-xen_ptswap-loads-after "$(cat "$T/modprobe.err")"
		return
	fi
	pass b-xen_ptswap-loads-after
	counts_then_rmmod b b-xen_ptswap-counts
}

# -------------------------------- leak: an owner unloads still registered
check_leak() {
	hook_load leak-owner-loads leak=1 || return
	slot_is leak-slot-is-owner "hook_ptep_get_and_clear"
	dmesg_mark
	hook_unload leak-owner-unloads || return
	pass leak-owner-unloads
	if dmesg_new | grep -qF "$LEAK_LINE"; then
		pass leak-kernel-restores-and-says-so
	else
		fail leak-kernel-restores-and-says-so "no '$LEAK_LINE' in the kernel log: $(dmesg_new | tail -n 3 | tr '\n' '|')"
	fi
	slot_is leak-slot-default-after "$DEFAULT_OP"
	if workload 8 2>"$T/work.err"; then
		pass leak-unmapping-still-works
	else
		fail leak-unmapping-still-works "workload: $(tail -n 1 "$T/work.err")"
	fi
	if modprobe xen_ptswap 2>"$T/modprobe.err"; then
		pass leak-slot-free-again
		rmmod xen_ptswap || fail leak-rmmod "rmmod xen_ptswap failed"
	else
		fail leak-slot-free-again "modprobe xen_ptswap: $(cat "$T/modprobe.err")"
	fi
}

# --------------------------- queue: queued clears across a page table page
check_queue() {
	local c why

	ktest_ko "$QUEUE" || return
	dmesg_mark
	if insmod "$(cat "$T/$QUEUE.path")" 2>"$T/insmod.err"; then
		rmmod "$QUEUE" || fail queue-rmmod "rmmod $QUEUE failed"
	fi
	dmesg_new | grep "^$QUEUE: " >"$T/queue.log"
	why="$(grep -v ': PASS: ' "$T/queue.log" | tr '\n' '|')$(cat "$T/insmod.err")"
	for c in queued cleared neighbours run-queued run-cleared run-neighbours run-order \
		run-after-flush; do
		if grep -q "^$QUEUE: PASS: $c\$" "$T/queue.log"; then
			pass "queue-$c"
		else
			fail "queue-$c" "$why"
		fi
	done
	grep "^$QUEUE: entries " "$T/queue.log" | sed 's/^/# /'
}

# --------------------------- clear: xen_ptswap's op on a pinned page table
check_clear_mode() {
	local mode=$1 sc out rc why

	if ! modprobe xen_ptswap mode="$mode" 2>"$T/modprobe.err"; then
		fail "clear-$mode-modprobe" "$(cat "$T/modprobe.err")"
		return
	fi
	if ! insmod "$CLEAR_KO" 2>"$T/insmod.err"; then
		fail "clear-$mode-insmod" "$(cat "$T/insmod.err")"
		rmmod xen_ptswap
		return
	fi
	for sc in swap defer twice ro unlazy; do
		dmesg_mark
		out=$(python3 "$REPO/test/ktest/$CLEAR/clear_run.py" "$sc" 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			pass "clear-$mode-$sc"
		else
			why=$(dmesg_new | grep "^$CLEAR: FAIL: " | sed "s/^$CLEAR: FAIL: //" | tr '\n' '|')
			fail "clear-$mode-$sc" "${why:+$why }$out"
		fi
		dmesg_new | grep "^$CLEAR: " | grep -v ': PASS: \|: FAIL: ' | sed "s/^/# /"
		note "clear-$mode-$sc: $out"
	done
	if echo "zz $mode swap" >"/sys/kernel/debug/$CLEAR/run" 2>"$T/bad.err"; then
		fail "clear-$mode-bad-input-einval" "a bad address was accepted"
	elif grep -q 'Invalid argument' "$T/bad.err"; then
		pass "clear-$mode-bad-input-einval"
	else
		fail "clear-$mode-bad-input-einval" "$(cat "$T/bad.err")"
	fi
	rmmod "$CLEAR" || fail "clear-$mode-rmmod" "rmmod $CLEAR failed"
	rmmod xen_ptswap || fail "clear-$mode-rmmod" "rmmod xen_ptswap failed"
}

order_a
order_b
check_leak
check_queue
if [ -n "$CLEAR_KO" ]; then
	check_clear_mode batched
	check_clear_mode sync
	check_clear_mode noswap
fi
slot_is slot-default-at-end "$DEFAULT_OP"

dmesg >"$T/dmesg.end"
bad=$(tail -n +"$(($(wc -l <"$T/dmesg.start") + 1))" "$T/dmesg.end" |
	grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' | head -n 3)
if [ -z "$bad" ]; then
	pass kernel-log-clean
else
	fail kernel-log-clean "$(echo "$bad" | tr '\n' '|')"
fi
finish
