#!/bin/bash
# test/suites/mm-selftests.sh - Linux's own mm selftests, of the booted
# kernel's version, in every module mode, their verdicts compared with
# the module unloaded.
#
# Usage (inside the lab's Dom0, from the clone's root, as root):
#   test/lab/run --linux 6.12 --xen-version 4.20 -- \
#       bash test/suites/mm-selftests.sh
#   test/lab/run --linux 6.12 --xen-version 4.20 \
#       --env XPS_MM_SELFTESTS=all -- bash test/suites/mm-selftests.sh
# The programs are the booted kernel's own tools/testing/selftests/mm
# (`vm` in 6.1), built on the lab's host by test/lab/run (Dom0 finds them
# in $XPS_MM_SELFTESTS_BIN, their build log in build.log there); the
# table below (PROGS) says which run, with what arguments, in which set,
# and which are left out and why.
#
# Modes, in this order: unloaded (rmmod xen_ptswap), batched (modprobe
# xen_ptswap), sync (mode=sync), noswap (mode=noswap).  On a Xen without
# XENFEAT_mmu_pt_update_swap (bit 21 of
# /sys/hypervisor/properties/features clear: a stock Xen) the module
# refuses batched and sync (module.sh), so they are left out with a note.
# Each mode runs every chosen program once, each in a fresh scratch
# folder as root (on-fault-limit as nobody, as the kernel's
# run_vmtests.sh runs it; mremap_test with vm.overcommit_memory 1, put
# back after it), under a hang guard (its limit in the table, seconds
# under QEMU's software CPU); KSM's settings are put back after each
# program (ksm_functional_tests leaves KSM running).
# A run's verdict is its exit status, as kselftest's: 0 pass, 4 skip,
# anything else fail; a run the hang guard kills fails.
#
# Checks, for each program and module mode M ("M/PROGRAM"):
#   - passed in M: PASS;
#   - skipped in M: if unloaded skipped too, a "# skipped" note, neither
#     PASS nor FAIL; else FAIL (the mode hid the test);
#   - failed in M: M and unloaded are run again until each has
#     XPS_MM_REPEAT runs (unloaded's runs serve every mode; M's are not
#     repeated when unloaded failed all of its runs).  The rule: M FAILs
#     if it failed clearly more often than unloaded, a one-sided Fisher
#     exact test on the two failure counts with p < 0.05 (with 5 runs
#     each: 4 or 5 failures against none, or 5 against one); else PASS,
#     with a note of the counts.  Where unloaded failed every run (a
#     program that cannot pass in a PV Dom0, see the table), M's first
#     run must still pass as many subtests and fail no more than
#     unloaded's first run, by their "Totals" counts.
#     XPS_MM_REPEAT=1: no repeats, M FAILs if it failed and unloaded's
#     run did not (the subtest counts as above if both failed);
#   - M/module-counters: the module's counters after M's first pass over
#     the programs: it cleared PTEs (calls > 0), with no failed hypercall
#     and no fallback (correctness.sh's module-counters);
#   - M/config: the module loaded in mode M (and unloaded for
#     unloaded/config);
#   - build: every chosen program was built (else build-PROGRAM with the
#     compiler's first error), selftests-version: they are the booted
#     kernel's version;
#   - an "@exact" program of the table (zap_dirty_shared): M/PROGRAM, for
#     unloaded too, passes only if its first run in M passed with no
#     subtest skipped (no repeats, no Fisher test);
#   - last, lib.sh's end_checks: kernel-log (no WARNING, BUG, Oops, Bad
#     page, Bad rss-counter, lockdep report in the kernel log since the
#     start; each run's kernel trouble is a "# kernel log after" note as
#     it happens) and end/xen-console-clean (Xen's console ring, with the
#     correctness programs' xen_console).
# Unloaded's own verdicts are notes only, but for "@exact" programs: a
# program that fails without the module is the kernel's or the test's,
# not the module's.  The
# verdicts of every run, per mode, are "# verdicts" notes at the end.
#
# Output: "PASS: <check>", "FAIL: <check>: <why>", "# ..." notes (each
# run's verdict and time as it ends), "N passed, N failed" last; exit
# status 0 iff nothing failed.
# Environment: XPS_MM_SELFTESTS (fast, the default: the "fast" programs;
# all: every program of the table), XPS_MM_REPEAT (runs per mode when a
# module mode fails, 5; 1, or at least 4: with 2 or 3 runs no count is
# significant), XPS_MM_MODES (the module modes, default "batched sync
# noswap"; unloaded always runs), XPS_MM_ONLY (program names of the
# table, comma- or space-separated: only those), XPS_MM_SELFTESTS_BIN
# (the built programs; test/lab/run sets it), XPS_CORRECTNESS_BIN
# (xen_console, for end/xen-console-clean).

# The whole script is one compound command, read before it runs, so
# editing this file does not upset a run in progress.
{
set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # start_suite (lib.sh) works from $REPO
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-mm-selftests
KSM=/sys/kernel/mm/ksm
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"

# ------------------------------------------------------------- the table
# NAME, SET (fast: in both sets; all: only in "all"), the Linux versions
# whose selftests have it (comma-separated), LIMIT (the hang guard, s),
# then the command: the program of the selftests' folder and its
# arguments (as the kernel's run_vmtests.sh gives them), "@nobody" first
# to run it as nobody, "@exact" for a program whose every subtest must
# pass in every mode, unloaded included (no repeats or Fisher test: one
# failure fails the mode; a subtest skipped, even with exit status 0, is
# a skip, and unloaded's skip fails: the lab could not see what it checks),
# "@overcommit" with vm.overcommit_memory 1
# (mremap_test maps 2 GiB, more than Dom0's 1.5 GiB, of which it touches
# its 4 MiB threshold: the heuristic refuses the mapping, 4 of its
# subtests failed so in every mode of lab run 20261204-000019-1215).
# The fast set: the programs that clear PTEs by paths of their own
# (zap, MADV_PAGEOUT, mremap, fork and COW, KSM's merging, userfaultfd's
# copy, zeropage and write protection) and took at most 10 s per mode in
# lab run 20261204-002949-19429 (the whole set 272-288 s per mode
# there).  6.1's and 7.3's lines follow their run_vmtests.sh and have not
# run in the lab.
# zap_dirty_shared is not the kernel's but the series': the selftest of
# test/linux-upstream/7.3/0010 (stores through writable clean PTEs of a
# memfd, zapped by MADV_DONTNEED, munmap(), a child's exit, and
# MADV_DONTNEED or mmap(MAP_FIXED) while threads on the other CPUs store,
# must read back after MADV_PAGEOUT), which test/lab/run
# builds into every version's mm folder (not 6.1's).
# uffd-unit-tests runs one group of its tests per
# line (-f is a substring filter), so that a flaky group is repeated
# alone; with XPS_MM_SELFTESTS=all a note names any test of its -l list
# that no line runs.
#
# Left out, and why:
# - the hugetlb programs (hugepage-*, hugetlb-*, hugetlb_*, map_hugetlb,
#   thuge-gen, write_to_hugetlbfs, charge_reserved_hugetlb.sh,
#   hugetlb_reparenting_test.sh, compaction_test, which needs huge
#   pages, and uffd-stress's and userfaultfd's hugetlb types): a Xen PV
#   domain has no huge pages (Xen hides PSE from it, and x86's
#   hugepages_supported() needs PSE);
# - the THP programs (khugepaged, transhuge-stress, split_huge_page_test,
#   folio_split_race_test, prctl_thp_disable, ksm_tests -H): for the same
#   reason has_transparent_hugepage() is false, no THP; 6.12.117's
#   khugepaged does not build either (KSFT_SKIP undeclared);
# - protection_keys_*, pkey_sighandler_tests_*: no protection keys (the
#   lab's qemu64 CPU has no PKU, and Xen offers none to PV domains);
# - migration, ksm_tests -N: two NUMA nodes; the lab has one;
# - gup_test: CONFIG_GUP_TEST (Debian's configs and the lab's leave it
#   unset); hmm-tests, test_hmm.sh: CONFIG_TEST_HMM (docs/testing.md,
#   What no suite reaches); test_vmalloc.sh, test_page_frag.sh: their
#   test modules, kernel-side tests of no user page table;
# - memory-failure, hugetlb-read-hwpoison, hugetlb-soft-offline: they
#   poison or offline Dom0's pages (run_vmtests.sh's destructive ones);
# - virtual_address_range, va_high_addr_switch, va_128TBswitch: address
#   space layout, no PTE cleared (above 47 bits needs 5-level paging,
#   which qemu64 lacks; virtual_address_range maps 128 TiB and took 25 s
#   on the lab's host itself);
# - ksm_tests -P: a timing of 100 MiB of merging, not a check;
# - nothing of what runs fails for the module: in lab run
#   20261204-000019-1215 (6.12, Xen 4.20, one run per mode) three
#   failed in every mode, the module's and unloaded, for want of huge
#   pages; they stay in "all" for their other subtests (same_failure):
#   soft-dirty (14 of 15 planned results: its THP test skips one fewer
#   than it plans), pagemap_ioctl (bails out at its 65th of 115, when
#   memfd_create(MFD_HUGETLB) fails) and uffd-unit-move (move-pmd
#   divides by the PMD size, 0 without THP: SIGFPE after the move test);
# - run_vmtests.sh and 7.3's ksft_*.sh: the runners; this suite runs the
#   programs itself.
progs_table() {
	cat <<'EOF'
madv_populate         fast 6.1,6.12,6.18,7.3 300 madv_populate
mremap_dontunmap      fast 6.1,6.12,6.18,7.3 300 mremap_dontunmap
mrelease_test         fast 6.1,6.12,6.18,7.3 300 mrelease_test
droppable             fast 6.12,6.18,7.3     300 droppable
mkdirty               fast 6.12,6.18,7.3     300 mkdirty
zap_dirty_shared      fast 6.12,6.18,7.3     300 @exact zap_dirty_shared
map_populate          fast 6.1,6.12,6.18,7.3 300 map_populate
ksm-merge             fast 6.1,6.12,6.18,7.3 300 ksm_tests -M -p 10
ksm-unmerge           fast 6.1,6.12,6.18,7.3 300 ksm_tests -U
ksm-zero-pages        fast 6.1,6.12,6.18,7.3 300 ksm_tests -Z -p 10 -z 0
ksm-use-zero-pages    fast 6.1,6.12,6.18,7.3 300 ksm_tests -Z -p 10 -z 1
cow                   fast 6.12,6.18,7.3     600 cow
mremap_test           fast 6.1,6.12,6.18,7.3 600 @overcommit mremap_test
uffd-unit-zeropage    fast 6.12,6.18,7.3     300 uffd-unit-tests -f zeropage
uffd-unit-wp-unpop    fast 6.12,6.18,7.3     300 uffd-unit-tests -f wp-unpopulated
uffd-unit-wp-fork     fast 6.12,6.18,7.3     300 uffd-unit-tests -f wp-fork
uffd-stress-anon      fast 6.12,6.18,7.3     600 uffd-stress anon 20 16
userfaultfd-anon      fast 6.1          900 userfaultfd anon 20 16
mlock2-tests          all 6.1,6.12,6.18,7.3 300 mlock2-tests
map_fixed_noreplace   all 6.1,6.12,6.18,7.3 300 map_fixed_noreplace
mlock-random-test     all 6.1,6.12,6.18,7.3 300 mlock-random-test
on-fault-limit        all 6.1,6.12,6.18,7.3 300 @nobody on-fault-limit
memfd_secret          all 6.1,6.12,6.18,7.3 300 memfd_secret
mdwe_test             all 6.12,6.18,7.3     300 mdwe_test
mseal_test            all 6.12,6.18,7.3     300 mseal_test
seal_elf              all 6.12         300 seal_elf
gup_longterm          all 6.12,6.18,7.3     300 gup_longterm
uffd-unit-register    all 6.12,6.18,7.3     300 uffd-unit-tests -f register-ioctls
soft-dirty            all  6.1,6.12,6.18,7.3 300 soft-dirty
ksm_functional_tests  all  6.12,6.18,7.3     600 ksm_functional_tests
pagemap_ioctl         all  6.12,6.18,7.3     600 pagemap_ioctl
guard-regions         all  6.18,7.3          900 guard-regions
process_madv          all  6.18,7.3          900 process_madv
merge                 all  6.18,7.3          900 merge
rmap                  all  6.18,7.3          900 rmap
pfnmap                all  6.18,7.3          900 pfnmap
uffd-wp-mremap        all  6.18,7.3          900 uffd-wp-mremap
uffd-unit-move        all  6.12,6.18,7.3     300 uffd-unit-tests -f move
uffd-unit-minor       all  6.12,6.18,7.3     600 uffd-unit-tests -f minor
uffd-unit-rwp         all  7.3          900 uffd-unit-tests -f rwp
uffd-unit-sigbus      all  6.12,6.18,7.3     600 uffd-unit-tests -f sigbus
uffd-unit-events      all  6.12,6.18,7.3     900 uffd-unit-tests -f events
uffd-unit-poison      all  6.12,6.18,7.3     900 uffd-unit-tests -f poison
uffd-unit-mmap-chg    all  6.18,7.3          900 uffd-unit-tests -f mmap-changing
uffd-stress-shmem     all  6.12,6.18,7.3     600 uffd-stress shmem 20 16
uffd-stress-shmem-priv all 6.12,6.18,7.3     600 uffd-stress shmem-private 20 16
userfaultfd-anon-dev  all  6.1          900 userfaultfd anon:dev 20 16
userfaultfd-shmem     all  6.1          900 userfaultfd shmem 20 16
userfaultfd-shmem-dev all  6.1          900 userfaultfd shmem:dev 20 16
EOF
}

# --------------------------------------------------------------- helpers
# The kernel's trouble words, defused for notes (test/check scans the
# serial log, which the notes reach, for "WARNING: " and the like).
# Each run's bookkeeping uses builtins where it can: a process started
# under QEMU's software CPU, from the host's root over 9p, costs a good
# part of a second, and the fast set has a hundred runs.
# defused TEXT: TEXT with those words defused, without a process.
defused() {
	local t=${1//WARNING: /WARNING }
	t=${t//BUG: /BUG }
	t=${t//Oops/Oops-}
	t=${t//Bad page/Bad-page}
	t=${t//Bad rss/Bad-rss}
	printf '%s\n' "${t//general protection fault/general-protection fault}"
}
# defuse: the same as a filter, stdin to stdout (nothing for no input).
defuse() {
	local t
	t=$(cat)
	[ -z "$t" ] || defused "$t"
}

declare -A KSM0
KSM_FILES="use_zero_pages pages_to_scan sleep_millisecs max_page_sharing run"
ksm_save() {
	local f
	for f in $KSM_FILES; do
		[ -r "$KSM/$f" ] && KSM0[$f]=$(cat "$KSM/$f")
	done
}
ksm_restore() {
	local f cur
	for f in $KSM_FILES; do
		[ -n "${KSM0[$f]:-}" ] || continue
		cur=
		read -r cur <"$KSM/$f" 2>/dev/null
		[ "$cur" = "${KSM0[$f]}" ] || echo "${KSM0[$f]}" >"$KSM/$f" 2>/dev/null
	done
}

# klog_run TAG: the kernel log since the last read, into $KLOG (for
# end_checks' kernel-log), trouble in it as a note.
klog_run() {
	local log hits
	log=$(dmesg -c 2>&1)
	[ -n "$log" ] || return 0
	printf '== %s\n%s\n' "$1" "$log" >>"$KLOG"
	[[ $log =~ $BAD_LOG ]] || return 0
	hits=$(grep -E "$BAD_LOG" <<<"$log" | head -n 3 | tr '\n' '|')
	note "kernel log after $1: $(defuse <<<"${hits%|}")"
}

# mode_set MODE: the module unloaded (unloaded) or loaded in MODE; on
# failure prints why.
mode_set() {
	local m=$1 out args=()
	if xps_loaded; then
		out=$(rmmod xen_ptswap 2>&1) || { echo "rmmod xen_ptswap failed: $out"; return 1; }
	fi
	[ "$m" = unloaded ] && return 0
	[ "$m" = batched ] || args=("mode=$m")
	out=$(modprobe xen_ptswap "${args[@]}" 2>&1) || {
		echo "modprobe xen_ptswap ${args[*]} failed: $out; kernel log: $(dmesg | grep xen_ptswap | tail -n 1)"
		return 1
	}
	out=$(cat /sys/module/xen_ptswap/parameters/mode 2>/dev/null)
	[ "$out" = "$m" ] || { echo "loaded, but parameters/mode is '$out', not '$m'"; return 1; }
}

# fisher A N1 B N2: the one-sided p of Fisher's exact test that A
# failures of N1 runs are more than B of N2 by chance: the chance, with
# A+B failures among N1+N2 runs dealt at random, that N1's runs get A or
# more of them.
fisher() {
	awk -v a="$1" -v n1="$2" -v b="$3" -v n2="$4" '
	function lc(n, k,  i, s) { s = 0; for (i = 1; i <= k; i++) s += log(n - k + i) - log(i); return s }
	BEGIN {
		k = a + b; p = 0
		for (x = a; x <= k && x <= n1; x++)
			if (k - x <= n2) p += exp(lc(n1, x) + lc(n2, k - x) - lc(n1 + n2, k))
		printf "%.3f\n", p
	}'
}

# The verdict letters of HIST: p pass, s skip, f fail, t hang guard.
declare -A CMD LIMIT RUNS FAILS FIRST HIST WHY TPASS TFAIL
ids=()

# run_once MODE NAME: one run of program NAME in the current mode.
run_once() {
	local mode=$1 id=$2 n out rc t v why sum sum2 argv pre=() oc=
	n=$((${RUNS[$mode|$id]:-0} + 1))
	out=$WORK/out/$mode.$id.$n
	read -r -a argv <<<"${CMD[$id]}"
	while :; do
		case ${argv[0]} in
		@nobody) pre=(setpriv --reuid=nobody --regid=nogroup --clear-groups) ;;
		@exact) ;;
		@overcommit) oc=$(cat /proc/sys/vm/overcommit_memory) && echo 1 >/proc/sys/vm/overcommit_memory ;;
		*) break ;;
		esac
		argv=("${argv[@]:1}")
	done
	# A fresh, empty scratch folder (a new one only if the last run
	# left something there).
	local left
	shopt -s nullglob
	left=("$WORK/cwd"/* "$WORK/cwd"/.[!.]*)
	shopt -u nullglob
	if [ ! -d "$WORK/cwd" ] || [ ${#left[@]} -gt 0 ]; then
		rm -rf "$WORK/cwd"
		mkdir -m 1777 "$WORK/cwd"
	fi
	t=$SECONDS
	# Not exec'd: a program killed by a signal is reported by this
	# subshell, into $out, as "... Floating point exception".
	(cd "$WORK/cwd" || exit 125; "${pre[@]}" timeout -k 10 "${LIMIT[$id]}" "$MBIN/${argv[0]}" "${argv[@]:1}"; exit $?) \
		>"$out" 2>&1 </dev/null
	rc=$?
	t=$((SECONDS - t))
	[ -z "$oc" ] || echo "$oc" >/proc/sys/vm/overcommit_memory
	ksm_restore
	sum=$(grep -E 'Totals:|SUMMARY|unit tests: pass=' "$out")
	sum=${sum##*$'\n'}
	sum=${sum#\# }
	case $rc in
	0) v=p why=pass ;;
	4) v=s why="skip: $(grep -m1 -E 'SKIP|skip' "$out" | sed 's/^# *//' | cut -c1-160)" ;;
	124|137) v=t why="fail: killed by the hang guard after ${LIMIT[$id]} s" ;;
	*)
		v=f
		why="fail: status $rc"
		[ "$rc" -gt 128 ] && why+=" (signal $((rc - 128)))"
		sum2=$(grep -E '^not ok|Bail out|FAIL|failed|Planned tests' "$out" | head -n 3 | cut -c1-120 | tr '\n' '|' | sed 's/|$//')
		why+=${sum2:+: $sum2} ;;
	esac
	# An @exact program's subtest skipped with exit status 0 (kselftest's
	# ksft_finished() counts skips as passes) is a skip.
	if [ "$v" = p ] && is_exact "$id" && [[ $sum =~ \ skip:([1-9][0-9]*) ]]; then
		v=s why="skip: ${BASH_REMATCH[1]} subtest(s): $(grep -m1 -E '# SKIP|^# .*(kept|MADV_PAGEOUT)' "$out" | sed 's/^# *//' | cut -c1-160)"
	fi
	if [ -z "${FIRST[$mode|$id]:-}" ]; then
		FIRST[$mode|$id]=$v
		WHY[$mode|$id]=$why
		# The first run's subtest counts (kselftest's Totals line,
		# uffd-unit-tests' own).
		[[ $sum =~ (Totals: pass:|unit tests: pass=)([0-9]+) ]] && TPASS[$mode|$id]=${BASH_REMATCH[2]}
		[[ $sum =~ \ fail[:=]([0-9]+) ]] && TFAIL[$mode|$id]=${BASH_REMATCH[1]}
	fi
	RUNS[$mode|$id]=$n
	case $v in f|t) FAILS[$mode|$id]=$((${FAILS[$mode|$id]:-0} + 1)) ;; esac
	HIST[$mode|$id]=${HIST[$mode|$id]:-}$v
	defused "# $mode/$id run $n: $why, $t s${sum:+ ($sum)}"
	# An @exact program's own notes (what its subtests saw), first run.
	if [ "$n" = 1 ] && { [ "$v" = p ] || [ "$v" = s ]; } && is_exact "$id"; then
		grep -E '^# ' "$out" | grep -v 'Totals:' | head -n 10 | awk -v p="# $mode/$id: " '{ print p $0 }' | defuse
	fi
	[ "$v" = p ] || [ "$v" = s ] || tail -n 5 "$out" | awk -v p="# $mode/$id: " '{ print p $0 }' | defuse
	klog_run "$mode/$id run $n"
}

# is_exact NAME: true if the table marks NAME "@exact".
is_exact() {
	[[ ${CMD[$1]} == *@exact* ]]
}

# verdict_of MODE NAME: pass, skip or fail, of the first run.
verdict_of() {
	case ${FIRST[$1|$2]:-} in p) echo pass ;; s) echo skip ;; f|t) echo fail ;; *) echo none ;; esac
}

# same_failure M NAME: NAME failed in M, and in every run unloaded made:
# the failure is not the module's, but the subtests before it (or beside
# it) still count: M's first run must pass as many and fail no more than
# unloaded's first run did, where both printed their counts.
same_failure() {
	local m=$1 id=$2 pm=${TPASS[$1|$2]:-} pu=${TPASS[unloaded|$2]:-}
	local fm=${TFAIL[$1|$2]:-} fu=${TFAIL[unloaded|$2]:-}
	if [ -n "$pm" ] && [ -n "$pu" ] && { [ "$pm" -lt "$pu" ] || [ "${fm:-0}" -gt "${fu:-0}" ]; }; then
		fail "$m/$id" "fails as unloaded does, but its subtests passed $pm and failed ${fm:-?} against unloaded's $pu and ${fu:-?}: ${WHY[$m|$id]}"
	else
		note "$m/$id: failed, as unloaded did in all its ${FAILS[unloaded|$id]} runs: not the module's${pm:+ (subtests passed: $pm, unloaded $pu)}"
		pass "$m/$id"
	fi
}

# ------------------------------------------------------------------ setup
start_suite
SET=${XPS_MM_SELFTESTS:-fast}
REPEAT=${XPS_MM_REPEAT:-5}
MBIN=${XPS_MM_SELFTESTS_BIN:-}
case $SET in fast|all) ;; *) fail setup "XPS_MM_SELFTESTS must be fast or all, not '$SET'"; finish ;; esac
if ! [[ $REPEAT =~ ^[0-9]+$ ]] || [ "$REPEAT" = 0 ] || [ "$REPEAT" = 2 ] || [ "$REPEAT" = 3 ]; then
	fail setup "XPS_MM_REPEAT must be 1 (no repeats) or at least 4, not '$REPEAT' (with 2 or 3 runs no failure count is significant)"
	finish
fi
modes=(unloaded)
for m in ${XPS_MM_MODES:-batched sync noswap}; do
	case $m in
	batched|sync|noswap) modes+=("$m") ;;
	unloaded) ;;
	*) fail setup "XPS_MM_MODES: '$m' is not batched, sync or noswap"; finish ;;
	esac
done
feat=$(cat /sys/hypervisor/properties/features 2>/dev/null)
if [[ ! $feat =~ ^[0-9a-fA-F]+$ ]] || [ $(((16#$feat >> 21) & 1)) = 0 ]; then
	kept=()
	for m in "${modes[@]}"; do
		case $m in
		batched|sync) note "mode $m: not on this Xen (no XENFEAT_mmu_pt_update_swap in features '${feat:-unknown}': the module refuses it)" ;;
		*) kept+=("$m") ;;
		esac
	done
	modes=("${kept[@]}")
fi
ver=$(uname -r | grep -oE '^[0-9]+\.[0-9]+')
note "mm-selftests: set $SET, kernel $(uname -r), modes ${modes[*]}, repeats $REPEAT, Xen features ${feat:-unknown}"

if [ -z "$MBIN" ] || [ ! -r "$MBIN/version" ]; then
	fail setup "cannot run because no selftests were built for this kernel (\$XPS_MM_SELFTESTS_BIN '${MBIN}': test/lab/run builds them for the kernels it builds, not for --kernel stock)"
	finish
fi
read -r bver bsrc bdir <"$MBIN/version"
if [ "$bver" = "$ver" ]; then
	pass selftests-version
	note "selftests/$bdir of Linux $bver ($bsrc), built on the lab's host"
else
	fail selftests-version "built from Linux $bver's tree, but the kernel is $(uname -r)"
	finish
fi

# The table's lines for this version and set (and XPS_MM_ONLY).
only=" ${XPS_MM_ONLY:-} "
only=${only//,/ }
declare -A seen_bin
build_ok=1
while read -r id tier vers limit cmd; do
	[[ ",$vers," == *",$ver,"* ]] || continue
	[ "$SET" = all ] || [ "$tier" = fast ] || continue
	[ -z "${XPS_MM_ONLY:-}" ] || [[ $only == *" $id "* ]] || continue
	prog=$(sed -E 's/^(@[a-z]+ )*//; s/ .*//' <<<"$cmd")
	if [ ! -x "$MBIN/$prog" ]; then
		if [ -z "${seen_bin[$prog]:-}" ]; then
			fail "build-$prog" "not built: $(grep -m1 -E "^$prog\.c:.*error" "$MBIN/build.log" 2>/dev/null || echo "see build.log")"
			seen_bin[$prog]=1
		fi
		build_ok=0
		continue
	fi
	ids+=("$id")
	CMD[$id]=$cmd
	LIMIT[$id]=$limit
done <<<"$(progs_table)"
[ $build_ok = 1 ] && pass build
if [ ${#ids[@]} = 0 ]; then
	fail setup "no program of the table for Linux $ver, set $SET, XPS_MM_ONLY '${XPS_MM_ONLY:-}'"
	finish
fi
note "programs: ${ids[*]}"

# uffd-unit-tests' tests that no line runs (a newer version's).
if [ "$SET" = all ] && [ -z "${XPS_MM_ONLY:-}" ] && [ -x "$MBIN/uffd-unit-tests" ]; then
	filters=()
	for id in "${ids[@]}"; do
		[[ ${CMD[$id]} == "uffd-unit-tests -f "* ]] && filters+=("${CMD[$id]#uffd-unit-tests -f }")
	done
	missed=
	for t in $("$MBIN/uffd-unit-tests" -l 2>/dev/null); do
		hit=0
		for f in "${filters[@]}"; do [[ $t == *"$f"* ]] && hit=1; done
		[ $hit = 1 ] || missed+=" $t"
	done
	[ -z "$missed" ] || note "uffd-unit-tests: tests no line of the table runs:$missed"
fi

mkdir -p "$WORK/out"
BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && "$BIN/xen_console" clear >/dev/null 2>&1
ksm_save
t_all=$SECONDS

# ------------------------------------------ every mode, every program once
ran=()
for m in "${modes[@]}"; do
	t0=$SECONDS
	if ! why=$(mode_set "$m"); then
		fail "$m/config" "$why"
		klog_run "$m/config"
		if [ "$m" = unloaded ]; then
			fail programs "cannot run because without unloaded's verdicts there is nothing to compare with"
			end_checks "$KLOG"
			finish
		fi
		continue
	fi
	pass "$m/config"
	klog_run "$m/config"
	ran+=("$m")
	for id in "${ids[@]}"; do
		run_once "$m" "$id"
	done
	[ "$m" = unloaded ] || counters_check "$m/module-counters" "$m: "
	note "mode $m: ${#ids[@]} programs, $((SECONDS - t0)) s"
done

# -------------------------------------------------------------- repeats
# Which programs failed in a module mode; unloaded first, then each mode.
if [ "$REPEAT" -gt 1 ]; then
	again=()
	for id in "${ids[@]}"; do
		is_exact "$id" && continue	# no repeats: one failure fails
		for m in "${ran[@]:1}"; do
			[ "$(verdict_of "$m" "$id")" = fail ] && { again+=("$id"); break; }
		done
	done
	if [ ${#again[@]} -gt 0 ]; then
		t0=$SECONDS
		note "repeats: ${again[*]}, up to $REPEAT runs per mode"
		if why=$(mode_set unloaded); then
			for id in "${again[@]}"; do
				while [ "${RUNS[unloaded|$id]}" -lt "$REPEAT" ]; do run_once unloaded "$id"; done
			done
			for m in "${ran[@]:1}"; do
				todo=()
				for id in "${again[@]}"; do
					[ "$(verdict_of "$m" "$id")" = fail ] || continue
					[ "${FAILS[unloaded|$id]:-0}" -lt "${RUNS[unloaded|$id]}" ] && todo+=("$id")
				done
				[ ${#todo[@]} -gt 0 ] || continue
				if ! why=$(mode_set "$m"); then
					fail "$m/config-repeats" "$why"
					continue
				fi
				for id in "${todo[@]}"; do
					while [ "${RUNS[$m|$id]}" -lt "$REPEAT" ]; do run_once "$m" "$id"; done
				done
			done
		else
			fail unloaded/config-repeats "$why"
		fi
		note "repeats: $((SECONDS - t0)) s"
	fi
fi
why=$(mode_set unloaded) || fail unloaded/config-at-end "$why"
ksm_restore

# ------------------------------------------------------------ the checks
for id in "${ids[@]}"; do
	u=$(verdict_of unloaded "$id")
	[ "$u" = none ] && u=unknown
	[ "$u" = pass ] || note "unloaded/$id: ${WHY[unloaded|$id]:-not run}"
	if is_exact "$id"; then
		for m in "${ran[@]}"; do
			case $(verdict_of "$m" "$id") in
			pass) pass "$m/$id" ;;
			none) fail "$m/$id" "did not run" ;;
			*) fail "$m/$id" "${WHY[$m|$id]} (every run of this program must pass)" ;;
			esac
		done
		continue
	fi
	for m in "${ran[@]:1}"; do
		fm=${FAILS[$m|$id]:-0} nm=${RUNS[$m|$id]:-0}
		fu=${FAILS[unloaded|$id]:-0} nu=${RUNS[unloaded|$id]:-0}
		case $(verdict_of "$m" "$id") in
		pass) pass "$m/$id" ;;
		skip)
			if [ "$u" = skip ]; then
				note "skipped: $m/$id: ${WHY[$m|$id]#skip: } (unloaded skipped too)"
			else
				fail "$m/$id" "skipped where unloaded's first run was $u: ${WHY[$m|$id]#skip: }"
			fi ;;
		fail)
			if { [ "$REPEAT" = 1 ] && [ "$fu" -gt 0 ]; } || { [ "$nu" -gt 0 ] && [ "$fu" = "$nu" ]; }; then
				same_failure "$m" "$id"
			elif [ "$REPEAT" = 1 ]; then
				fail "$m/$id" "${WHY[$m|$id]} (unloaded: $u; XPS_MM_REPEAT=1, no repeats)"
			else
				p=$(fisher "$fm" "$nm" "$fu" "$nu")
				if awk -v p="$p" 'BEGIN { exit !(p < 0.05) }'; then
					fail "$m/$id" "failed $fm of $nm runs, unloaded $fu of $nu: more often (one-sided Fisher exact p = $p < 0.05); first: ${WHY[$m|$id]}"
				else
					note "$m/$id: failed $fm of $nm runs, unloaded $fu of $nu: not clearly more often (one-sided Fisher exact p = $p)"
					pass "$m/$id"
				fi
			fi ;;
		*) fail "$m/$id" "did not run" ;;
		esac
	done
done

note "verdicts per mode, every run (p pass, s skip, f fail, t hang guard):"
for id in "${ids[@]}"; do
	line=
	for m in "${ran[@]}"; do line+=" $m ${HIST[$m|$id]:--}"; done
	note "  $id:$line"
done
note "mm-selftests ($SET): ${#ids[@]} programs, modes ${ran[*]}: $((SECONDS - t_all)) s"
end_checks "$KLOG"
rm -rf "$WORK/cwd"
finish
}
