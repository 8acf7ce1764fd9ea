#!/bin/bash
# test/suites/zap-translations.sh - how many times a zap translates each
# entry's machine frame number on Xen PV, counted with
# tools/zap_translations.bt: xen_pte_val() calls within madvise() and
# munmap() calls over the entries the kernel's own op cleared.
#
# Usage (inside the lab's Dom0, from the clone's root, as root, on a
# release kernel of test/linux-patch/VERSION/: the debug kernels' page
# table checker translates each cleared entry once more, by design):
#   test/lab/run --linux 6.12 --xen-version 4.20 -- bash test/suites/zap-translations.sh
#
# A Xen PV kernel's pte_val() and pte_pfn() are a pv-op call (an M2P
# lookup checked against the P2M) that the compiler cannot drop.  A zap
# needs one per present entry that has a page (vm_normal_page()'s PFN)
# and none for a special entry of a PFN map; the series' mm patches
# (6.1 0010, 6.12 0010-0011, 6.18 0011-0012, 7.3 0012-0013) remove the
# others.  Expected translations per zapped entry, module unloaded:
#   dirty private memory (madv-bench -s 16M)           1
#   clean shared memory read in (madv-bench -s 16M -c) 1
#   privcmd mappings of Dom0's own frames, read-only
#   (foreign-bench -n 4096: special entries of a
#   VM_PFNMAP mapping)                                 0 on 6.1 and 6.12;
#                                                      1 on 6.18 and 7.3,
#                                                      whose
#                                                      __vm_normal_page()
#                                                      takes the PFN as
#                                                      an argument
# Checks, one line each (the counts on "info:" lines):
#   zt-tools-build            make -C tools builds the two benchmarks
#   zt-dirty, zt-clean, zt-privcmd
#                             module unloaded: the entries cleared through
#                             the kernel's op are at least the pages the
#                             command zapped (4096; the probe saw the zap),
#                             and translations / entries <= the expected
#                             count above + 0.01 (a few translations of
#                             the calls' other work)
#   zt-dirty-batched, zt-clean-batched, zt-privcmd-batched
#                             xen_ptswap loaded in mode=batched (each
#                             fails if it cannot load): its clear adds no
#                             translation (no more than unloaded's count
#                             + 0.01 per page the command zaps, 41: the
#                             calls' other work varies by a few, 13 and 14
#                             in one boot, lab run 20261207-060041-16656)
#   zt-kernel-log             no WARNING, BUG, Oops or lockdep report in
#                             the kernel log meanwhile
# Output: "PASS: <check>", "FAIL: <check>: <why>", "info: ..." and
# "# ..." lines, "N passed, N failed" last; exit status 0 iff nothing
# failed.

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-zap-translations

# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
info() { echo "info: $*"; }

start_suite
note "zap-translations: kernel $(uname -r)"

# The expected translations per entry of a special entry of a PFN map.
case $(uname -r) in
6.1.* | 6.1-* | 6.12.* | 6.12-*) special=0 ;;
*) special=1 ;;
esac

if make -s -C tools madv-bench foreign-bench >"$WORK/make.out" 2>&1 &&
	[ -x tools/madv-bench ] && [ -x tools/foreign-bench ]; then
	pass zt-tools-build
else
	fail zt-tools-build "$(tail -c 300 "$WORK/make.out")"
	finish
fi
[ -e /dev/xen/privcmd ] || modprobe xen_privcmd 2>/dev/null

# count OUT NAME: the value of bpftrace map @NAME[...] in OUT, 0 if absent.
count() {
	local n
	n=$(sed -n "s/^@$2\[[^]]*\]: \([0-9]*\)$/\1/p" "$1" | head -n1)
	echo "${n:-0}"
}

# The unloaded runs' translations, by check name, for the batched runs.
declare -A unloaded

# trace CHECK CMD OUT: tools/zap_translations.bt around CMD into OUT; on
# failure fail CHECK with bpftrace's output and return 1.
trace() {
	timeout -s KILL 900 bpftrace -B none -c "$2" tools/zap_translations.bt >"$3" 2>&1 && return 0
	fail "$1" "bpftrace failed: $(head -c 300 "$3" | tr '\n' '|')"
	return 1
}

# zt CHECK WANT CMD: runs CMD under tools/zap_translations.bt with the
# module unloaded; WANT: the expected translations per entry.  Records
# the translations in unloaded[CHECK].
zt() {
	local check=$1 want=$2 cmd=$3 out=$WORK/$1.out t e
	trace "$check" "$cmd" "$out" || return
	t=$(count "$out" translations)
	e=$(count "$out" entries)
	unloaded[$check]=$t
	info "$check: $t translations for $e entries ($cmd)"
	if [ "$e" -lt 4096 ]; then
		fail "$check" "the kernel's op cleared $e entries, want >= 4096: $(grep '^@' "$out" | tr '\n' '|')"
	elif [ "$((t * 100))" -gt "$((e * (want * 100 + 1)))" ]; then
		fail "$check" "$t translations for $e zapped entries: more than $want per entry"
	else
		pass "$check"
	fi
}

# zt_loaded CHECK CMD: the same with xen_ptswap loaded; no more
# translations than unloaded[CHECK] + SLACK.
SLACK=41	# 0.01 per page of the commands' 4096
zt_loaded() {
	local check=$1-batched cmd=$2 out=$WORK/$1-batched.out t ref
	ref=${unloaded[$1]:-}
	if [ -z "$ref" ]; then
		fail "$check" "no unloaded count to compare with"
		return
	fi
	trace "$check" "$cmd" "$out" || return
	t=$(count "$out" translations)
	info "$check: $t translations ($cmd; unloaded: $ref)"
	if [ "$t" -gt "$((ref + SLACK))" ]; then
		fail "$check" "$t translations with the module, $ref without (more than $SLACK more)"
	else
		pass "$check"
	fi
}

DIRTY="tools/madv-bench -s 16M -r 1"
CLEAN="tools/madv-bench -s 16M -r 1 -c"
PRIVCMD="tools/foreign-bench -n 4096 -r 1"

xps_loaded && rmmod xen_ptswap 2>/dev/null
zt zt-dirty 1 "$DIRTY"
zt zt-clean 1 "$CLEAN"
zt zt-privcmd "$special" "$PRIVCMD"

if modprobe xen_ptswap mode=batched 2>"$WORK/modprobe.err"; then
	zt_loaded zt-dirty "$DIRTY"
	zt_loaded zt-clean "$CLEAN"
	zt_loaded zt-privcmd "$PRIVCMD"
	rmmod xen_ptswap 2>/dev/null
else
	for c in zt-dirty zt-clean zt-privcmd; do
		fail "$c-batched" "modprobe xen_ptswap mode=batched: $(head -c 200 "$WORK/modprobe.err")"
	done
fi

klog_take "$KLOG"
klog_check zt-kernel-log "$KLOG"
finish
