# shellcheck shell=bash
# test/suites/lib.sh - helpers shared by correctness.sh, fail-inject.sh,
# guest.sh, guest-module.sh, madv-race.sh, module.sh and preempt-unload.sh
# (sourced, not a suite: SUITES does not list it).
#
# Conventions of every suite: one "PASS: <check>" or "FAIL: <check>:
# <why>" line per check, "# ..." notes, "N passed, N failed" last, exit
# status 0 iff nothing failed.  A check that cannot run FAILs and says why.
# Needs: $WORK (a scratch directory the suite owns), for the helpers that
# write there.

passed=0
failed=0
STATS=/sys/kernel/debug/xen_ptswap/stats
# The upstream form's built-in clear (test/linux-upstream/): its switch
# (Y or N) and its counters, with the module's names (read by the suites
# that source this file).
# shellcheck disable=SC2034
BUILTIN_KNOB=/sys/module/xen/parameters/batched_pte_clear
# shellcheck disable=SC2034
BUILTIN_STATS=/sys/kernel/debug/xen_pv_mmu/pte_clear_stats
# Kernel log lines that fail a suite (test/check's serial-log scan and
# correctness.sh's BAD_LOG, plus what lockdep, DEBUG_ATOMIC_SLEEP and
# the scheduler print).
BAD_LOG='WARNING:|BUG:|Oops|Bad page|Bad rss-counter|general protection fault|kernel BUG|scheduling while atomic|possible .*locking|inconsistent lock state|suspicious RCU usage|multicall\(s\) failed'

pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1: $2"; failed=$((failed + 1)); }
note() { echo "# $*"; }

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}

xps_require_root() {
	[ "$(id -u)" = 0 ] || { fail setup "cannot run because the suite needs root"; finish; }
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
}

# start_suite: a Dom0 suite's start: as root (xps_require_root), in $REPO,
# a fresh $WORK, an empty $KLOG ($WORK/klog) for end_checks, the kernel log
# read and cleared.
start_suite() {
	xps_require_root
	cd "$REPO" || exit 2
	rm -rf "$WORK" && mkdir -p "$WORK"
	KLOG=$WORK/klog
	: >"$KLOG"
	dmesg -c >/dev/null 2>&1
}

# The correctness programs: built on the lab's host ($XPS_CORRECTNESS_BIN).
xps_correctness_bin() {
	if [ -n "${XPS_CORRECTNESS_BIN:-}" ] && [ -x "$XPS_CORRECTNESS_BIN/munmap" ]; then
		echo "$XPS_CORRECTNESS_BIN"
		return 0
	fi
	return 1
}

# correctness_prog_dir NAME: the directory with the correctness program
# NAME, the lab's prebuilt ones ($XPS_CORRECTNESS_BIN) or else NAME built
# into $WORK/bin; on a failed build, fails check build-NAME and finishes
# the suite.  Sets bin.
correctness_prog_dir() {
	local out
	bin=$(xps_correctness_bin) && return 0
	bin=$WORK/bin
	if ! out=$(make -C "$REPO/test/correctness" O="$bin" "$bin/$1" 2>&1); then
		fail "build-$1" "$(echo "$out" | tail -n 1)"
		finish
	fi
}

xps_loaded() { [ -d /sys/module/xen_ptswap ]; }

# lockdep_state: lockdep's debug_locks (1 while it checks, 0 once a report
# switched it off); empty without lockdep (/proc/lockdep_stats).
lockdep_state() { awk '/debug_locks:/ { print $2 }' /proc/lockdep_stats 2>/dev/null; }

# One counter of the module's stats file (empty if unreadable).
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$STATS" 2>/dev/null; }

# stats_load FILE: counters into SV[name] with builtins only, the mode
# line's name into SV_MODE (empty if the file has none).  The file
# is read to its end at once: a seq_file read line by line (`while read`
# seeks back after each line) is generated anew at each seek, so
# counters that grow meanwhile shift the text and tear lines.
declare -A SV
# SV_MODE is read by the suites that source this file.
# shellcheck disable=SC2034
SV_MODE=
# shellcheck disable=SC2034
stats_load() {
	local k v text
	SV=()
	[ -r "$1" ] || return 1
	# single_open seq_file: sequential reads come from one generated text
	read -r -d '' text <"$1"
	SV_MODE=
	while read -r k v; do
		# The first line names the mode in force ("mode batched").
		if [ "$k" = mode ] && [[ $v =~ ^(batched|sync|noswap)$ ]]; then
			SV_MODE=$v
			continue
		fi
		[[ $k =~ ^[a-z_]+$ && $v =~ ^[0-9]+$ ]] || return 1
		SV[$k]=$v
	done <<<"$text"
	[ -n "${SV[calls]:-}" ]
}

# In SV: calls = unpinned + none + deferred + swapped + fallbacks + native
# and hcall_errors = fallbacks + lost_old (lost_old: a swap that failed
# after clearing the entry, counted in swapped too; native: mode noswap's
# trapped xchg; each absent before its counter existed).
stats_consistent() {
	[ "${SV[calls]:-0}" -eq $((${SV[unpinned]:-0} + ${SV[none]:-0} +
		${SV[deferred]:-0} + ${SV[swapped]:-0} + ${SV[fallbacks]:-0} +
		${SV[native]:-0})) ] &&
		[ "${SV[hcall_errors]:-0}" -eq $((${SV[fallbacks]:-0} + ${SV[lost_old]:-0})) ]
}

# stats_settle: the live counters into SV, consistent.  They are per-CPU
# sums read without a lock while other CPUs may be clearing PTEs, so read
# until one copy is consistent (50 tries).
stats_settle() {
	local _
	for _ in {1..50}; do
		stats_load "$STATS" && stats_consistent && return 0
	done
	return 1
}

# counters_check CHECK [PREFIX [WHO]]: the batched clear's counters ($STATS)
# after a workload ran with it on (WHO: "module", the default, or
# "builtin", the upstream form's): PASS CHECK when some clear went through
# the op (calls > 0), no hypercall failed and none fell back; their line
# as a "# PREFIXWHO counters: ..." note.  Returns 1 (after a FAIL) if
# $STATS cannot be read or never adds up, else 0 with the counters in SV
# for the caller's own checks.
counters_check() {
	local check=$1 prefix=${2:-} who=${3:-module}
	if [ ! -r "$STATS" ]; then
		fail "$check" "cannot run because $STATS is missing (debugfs not mounted?)"
		return 1
	fi
	if ! stats_settle; then
		fail "$check" "cannot parse $STATS, or its counters never add up: $(tr '\n' ' ' <"$STATS")"
		return 1
	fi
	note "${prefix}$who counters: $(tr '\n' ' ' <"$STATS")"
	if [ "${SV[calls]}" -gt 0 ] && [ "${SV[hcall_errors]}" = 0 ] && [ "${SV[fallbacks]}" = 0 ]; then
		pass "$check"
	else
		fail "$check" "calls=${SV[calls]} hcall_errors=${SV[hcall_errors]} fallbacks=${SV[fallbacks]} (want calls > 0, no errors)"
	fi
	return 0
}

# Appends the kernel log to FILE and clears it (dmesg -c).
klog_take() { dmesg -c >>"$1" 2>&1; }

# klog_check CHECK FILE: FAIL if FILE has any line of $BAD_LOG.
klog_check() {
	local hits
	hits=$(grep -E "$BAD_LOG" "$2" 2>/dev/null | head -n 3)
	if [ -n "$hits" ]; then
		fail "$1" "kernel log: $(echo "$hits" | tr '\n' '|')"
	else
		pass "$1"
	fi
}

# end_checks KLOG: a suite's last checks in Dom0: its kernel log (taken
# into KLOG) has no $BAD_LOG line ("kernel-log"), and Xen's console ring
# no crash or L1 validation error since the suite's "xen_console clear"
# ("end/xen-console-clean", with $BIN/xen_console; output in $WORK).
end_checks() {
	klog_take "$1"
	klog_check kernel-log "$1"
	if [ -n "${BIN:-}" ] && [ -x "$BIN/xen_console" ]; then
		timeout -k 10 120 "$BIN/xen_console" check >"$WORK/xc.out" 2>"$WORK/xc.out.err"
		take_verdicts xen_console end/ "$WORK/xc.out" $? 120
	fi
}

# prog_verdicts OUT: "<passes> <fails> <first FAIL line>" of a program's
# output (its PASS:/FAIL: lines).
prog_verdicts() {
	local p f first
	p=$(grep -c '^PASS: ' "$1" 2>/dev/null)
	f=$(grep -c '^FAIL: ' "$1" 2>/dev/null)
	first=$(grep -m1 '^FAIL: ' "$1" 2>/dev/null)
	echo "${p:-0} ${f:-0} $first"
}

# take_verdicts TAG PREFIX OUT RC LIMIT: a finished program's results into
# this suite's.  OUT holds its stdout (stderr in OUT.err), RC its exit
# status, LIMIT the timeout it ran under (s).  Its "PASS: x"/"FAIL: x: y"
# lines count as PREFIX-prefixed checks, its other lines and the first 20
# of stderr become "# TAG: ..." notes.  FAILs TAG if the program hit the
# timeout (status 124 or 137), died with a status other than 0 without a
# FAIL line, or printed no verdict at all.
take_verdicts() {
	local tag=$1 prefix=$2 out=$3 rc=$4 limit=$5 line n=0
	while IFS= read -r line; do
		case $line in
		PASS:\ *) pass "$prefix${line#PASS: }"; n=$((n + 1)) ;;
		FAIL:\ *)
			echo "FAIL: $prefix${line#FAIL: }"
			failed=$((failed + 1))
			n=$((n + 1)) ;;
		*) echo "# $tag: $line" ;;
		esac
	done <"$out"
	sed "s|^|# $tag: |" "$out.err" 2>/dev/null | head -n 20
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "$tag" "did not finish within $limit s (hang?)"
	elif [ "$rc" != 0 ] && ! grep -q '^FAIL: ' "$out"; then
		fail "$tag" "exited with status $rc without a FAIL line"
	elif [ $n = 0 ]; then
		fail "$tag" "printed no PASS or FAIL line (status $rc)"
	fi
}
