#!/bin/bash
# test/suites/module.sh - the xen_ptswap module in the lab's Dom0 (issue 4).
#
# Runs inside Dom0 from /xps (see test/lab/run); what it checks depends on
# what booted ($XPS_LAB_XEN, $XPS_LAB_KERNEL):
#   patched Xen + patched or debug kernel: bad parameter, KUnit deferral rule, the
#     256 MiB MADV_DONTNEED run without and with the module (both modes,
#     private dirty and shared clean memory): counters, ptwr emulations,
#     exceptions, mmu_update calls; the dirty run's queued clears in
#     MMU_PT_CLEAR_RUN runs by default (fewer than one mmu_update request
#     per 8 pages) and with runs=0 one request per clear
#     (batched_runs_ab); rmmod restores the old op;
#     ($XPS_MODULE_MIB: the size in MiB, default 256; every run's lines
#     take 64: the checks are per PTE, the counts scale with the size);
#     $XPS_MODULE_CYCLES (default 100) load/use/unload cycles while two
#     processes keep unmapping (every run's lines take 5; the
#     preemptible unload's cycles are preempt-unload.sh's:
#     test/suites/SUITES).
#     Mode noswap (the stock-Xen mode) on the same runs: dirty entries
#     queued (no ptwr emulation), writable clean ones trapped (about one
#     ptwr emulation per PTE), never a swap.  The default mode=auto
#     chooses batched (check_auto: the parameter, the "installed" line and
#     the stats file's mode line), and `tools/xen-ptswap status` exits 0,
#     and 1 on a copy of the counters with a broken invariant
#     (check_status).
#   stock Xen (4.17 or 4.20) + patched kernel: modprobe mode=batched fails
#     with EOPNOTSUPP, says so and names mode=noswap; the default mode=auto
#     loads as noswap (check_auto, check_status); mode=noswap loads and its
#     clears keep the data of private and shared memory, queued and
#     trapped.
#   feature-only Xen (--xen feature-only: bit 21 set, no sub-op) + patched
#     kernel: the load-time probe refuses mode=batched with EOPNOTSUPP,
#     exactly one kernel log line saying so, nothing installed (no module,
#     no debugfs directory, the pv-op slot still the default), nothing else
#     logged; the default mode=auto loads as noswap after the failed probe.
#   stock kernel: modprobe fails with EOPNOTSUPP (no hook), says so.
#   native (no Xen): modprobe fails with ENODEV, says so.
# Prints one "PASS: <check>" or "FAIL: <check>: <reason>" line per check,
# and the measured numbers on "info:" lines.  Exit status 0 if every check
# passed.

set -u
CYCLES=${XPS_MODULE_CYCLES:-100}
[[ $CYCLES =~ ^[1-9][0-9]*$ ]] || { echo "FAIL: cycles: XPS_MODULE_CYCLES must be a positive number, not '$CYCLES'"; exit 1; }

cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
T=$(mktemp -d /tmp/xps-module.XXXXXX)
PROG=$T/xps_dontneed
MIB=${XPS_MODULE_MIB:-256}
[[ $MIB =~ ^[1-9][0-9]*$ ]] || { echo "FAIL: dontneed-size: XPS_MODULE_MIB must be a positive number of MiB, not '$MIB'"; exit 1; }
bg_pids=()

# pass, fail, finish, the counters and the stats helpers (stats_load,
# stats_consistent, stats_settle), as in every suite.
# shellcheck source=test/suites/lib.sh
. "$REPO/test/suites/lib.sh"
info() { echo "info: $*"; }

cleanup() {
	local p

	for p in "${bg_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rmmod xen_ptswap_kunit 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

loaded() { grep -q '^xen_ptswap ' /proc/modules; }

# Kernel log lines added since the mark taken by dmesg_mark.
dmesg_mark() { dmesg >"$T/dmesg.mark"; }
dmesg_new() {
	dmesg >"$T/dmesg.now"
	tail -n +"$(($(wc -l <"$T/dmesg.mark") + 1))" "$T/dmesg.now"
}

# dmesg_clean CHECK: no oops, BUG or WARN since the last dmesg_mark.
dmesg_clean() {
	local bad

	bad=$(dmesg_new | grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace|RIP:' | head -n 3)
	if [ -z "$bad" ]; then
		pass "$1"
	else
		fail "$1" "kernel log: $(echo "$bad" | tr '\n' '|')"
	fi
}

# batched_runs_ab: with the module loaded by default on a patched Xen,
# queued clears go into MMU_PT_CLEAR_RUN runs (parameters/runs Y), and the
# batched measurement just made needed fewer than one mmu_update request
# (Xen's "page updates") per 8 pages, where one run per page table page
# needs 2 per 1000; then the same release with runs=N, one request per
# queued clear, must need at least one per page, with the statistics
# accounting for every clear as before.  Leaves the module loaded with
# its defaults.  Status 1 if it could not reload the module.
batched_runs_ab() {
	local runs_req=$M_req pages=$M_pages deferred=$S_deferred runs

	runs=$(cat /sys/module/xen_ptswap/parameters/runs 2>/dev/null)
	if [ "$runs" = Y ]; then
		pass runs-default-on
	else
		fail runs-default-on "parameters/runs is '$runs' on a patched Xen with the series' kernel: $(dmesg | grep -o 'xen_ptswap: installed, .*' | tail -n 1)"
	fi
	# Xen's counter must have counted something, and the clears been
	# queued, or few requests would prove nothing.
	if [ "$runs_req" -gt 0 ] && [ "$deferred" -ge "$pages" ] &&
		[ $((runs_req * 8)) -lt "$pages" ]; then
		pass dontneed-batched-runs-few-requests
	else
		fail dontneed-batched-runs-few-requests "$runs_req mmu_update requests, $deferred deferred clears for $pages pages"
	fi
	rmmod xen_ptswap || { fail runs-off-reload "rmmod xen_ptswap failed"; return 1; }
	if ! modprobe xen_ptswap runs=0 2>"$T/modprobe.err"; then
		fail runs-off-reload "$(cat "$T/modprobe.err")"
		return 1
	fi
	if ! measure batched-noruns -m "$MIB"; then
		fail dontneed-batched-noruns "the run failed: $(cat "$T/batched-noruns.err")"
	elif [ "$M_req" -ge "$M_pages" ] && [ "$S_deferred" -ge "$M_pages" ] &&
		[ $((S_unpinned + S_none + S_deferred + S_swapped + S_fallbacks)) -eq "$S_calls" ]; then
		pass dontneed-batched-noruns-one-request-per-clear
	else
		fail dontneed-batched-noruns-one-request-per-clear "requests=$M_req deferred=$S_deferred calls=$S_calls for $M_pages pages"
	fi
	info "mmu_update requests per 1000 PTEs, batched: runs=Y $((runs_req * 1000 / pages)), runs=N $((M_req * 1000 / M_pages))"
	rmmod xen_ptswap || { fail runs-off-reload "rmmod xen_ptswap failed"; return 1; }
	if ! modprobe xen_ptswap 2>"$T/modprobe.err"; then
		fail runs-off-reload "$(cat "$T/modprobe.err")"
		return 1
	fi
	pass runs-off-reload
}

# xp FILE NAME: the total of a xenperf counter from a saved `xenperf -f`.
xp() {
	awk -v n="$2" 'index($0, n " ") == 1 { sub(/.*T= */, ""); print $1; f = 1 }
		END { if (!f) print 0 }' "$1"
}

# xpvec FILE VECTOR: one element of Xen's "exceptions" array.
xpvec() {
	awk -v v="$2" 'index($0, "exceptions ") == 1 { sub(/.*T= */, "");
		print ($(v + 2) == "" ? 0 : $(v + 2)); f = 1 } END { if (!f) print 0 }' "$1"
}

# stdelta PREFIX NAME: a counter's growth from PREFIX.st0 to PREFIX.st1.
stdelta() {
	local before

	stats_load "$1.st0"
	before=${SV[$2]:-0}
	stats_load "$1.st1"
	echo $((${SV[$2]:-0} - before))
}

# measure LABEL ARGS...: run the helper once with ARGS; it snapshots
# Xen's perf counters and the module's counters right before and right
# after its madvise(MADV_DONTNEED) (-x), so the deltas cover the release
# and nothing else.  Leaves LABEL.{out,err,xp0,xp1,st0,st1} in $T and sets
# M_* (Xen, the run) and S_* (module counters) to the deltas.
measure() {
	local label=$1 l=$T/$1

	shift
	"$PROG" -x "$l" "$@" >"$l.out" 2>"$l.err" || return 1
	M_pages=$(sed -n 's/.*pages=\([0-9]*\).*/\1/p' "$l.out")
	M_ms=$(sed -n 's/.*ms=\([0-9.]*\).*/\1/p' "$l.out")
	M_spawnflt=$(sed -n 's/.*spawnflt=\([0-9]*\).*/\1/p' "$l.out")
	M_ptwr=$(($(xp "$l.xp1" "writable pt emulations") - $(xp "$l.xp0" "writable pt emulations")))
	M_exc=$(($(xp "$l.xp1" exceptions) - $(xp "$l.xp0" exceptions)))
	M_ud=$(($(xpvec "$l.xp1" 6) - $(xpvec "$l.xp0" 6)))
	M_mmu=$(($(xp "$l.xp1" "calls to mmu_update") - $(xp "$l.xp0" "calls to mmu_update")))
	M_req=$(($(xp "$l.xp1" "page updates") - $(xp "$l.xp0" "page updates")))
	S_calls=$(stdelta "$l" calls)
	S_unpinned=$(stdelta "$l" unpinned)
	S_none=$(stdelta "$l" none)
	S_deferred=$(stdelta "$l" deferred)
	S_swapped=$(stdelta "$l" swapped)
	S_hcall_errors=$(stdelta "$l" hcall_errors)
	S_fallbacks=$(stdelta "$l" fallbacks)
	S_native=$(stdelta "$l" native)
	info "$label: pages=$M_pages ms=$M_ms ptwr_emulations=$M_ptwr" \
		"exceptions=$M_exc (xenperf's own page faults: $M_spawnflt)" \
		"invalid_opcode=$M_ud mmu_update_calls=$M_mmu mmu_update_requests=$M_req" \
		"module: calls=$S_calls unpinned=$S_unpinned none=$S_none deferred=$S_deferred" \
		"swapped=$S_swapped hcall_errors=$S_hcall_errors fallbacks=$S_fallbacks native=$S_native"
}

# xen_uart_polled: true once Xen has switched its console UART from its
# interrupt to polling ("uart interrupt taking more than Nms, switched to
# polling" in xl dmesg: Xen 4.20 and later, drivers/char/ns16550.c, when
# one interrupt takes longer than a few ms, as a flood of console output
# under QEMU's software CPU can make it).  Each poll then runs
# __ns16550_poll() through run_in_exception_handler(), a ud2 of Xen's own,
# which Xen's "exceptions" counter counts as an invalid opcode: not a
# trap of Dom0's.
xen_uart_polled() {
	xl dmesg 2>/dev/null | grep -q 'uart interrupt taking more than .*switched to polling'
}

# no_trap_per_page CHECK: in the last measure(), fewer than 1 exception in
# 100 released pages beyond xenperf's own page faults, and no invalid
# opcode (a WARN's ud2) at all.  Once Xen polls its UART (above), its own
# invalid opcodes are left out of both counts, with a note: a WARN in
# Dom0 still fails the kernel-log checks.
no_trap_per_page() {
	local extra=$((M_exc - M_spawnflt)) ud=$M_ud

	if [ "$M_ud" -gt 0 ] && xen_uart_polled; then
		info "$1: Xen polls its console UART (xl dmesg: switched to polling), whose ud2 per poll Xen counts as an invalid opcode: $M_ud left out"
		extra=$((extra - M_ud))
		ud=0
	fi
	if [ $((extra * 100)) -lt "$M_pages" ] && [ "$ud" -eq 0 ]; then
		pass "$1"
	else
		fail "$1" "$extra exceptions beyond xenperf's page faults ($M_ud invalid opcode) for $M_pages pages"
	fi
}

# ptwr_under_1pct CHECK BASE: in the last measure(), fewer than 1 ptwr
# emulation per 100 of the run without the module.
ptwr_under_1pct() {
	if [ $((M_ptwr * 100)) -lt "$2" ]; then
		pass "$1"
	else
		fail "$1" "$M_ptwr ptwr emulations with the module, $2 without"
	fi
}

# expect_load_fails CHECK ERRNO_TEXT LOG_TEXT [MODPROBE ARGS]
expect_load_fails() {
	local check=$1 errtext=$2 logtext=$3 out

	shift 3
	dmesg_mark
	if out=$(modprobe xen_ptswap "$@" 2>&1); then
		fail "$check" "modprobe xen_ptswap $* succeeded"
		rmmod xen_ptswap 2>/dev/null
		return
	fi
	if ! echo "$out" | grep -q "$errtext"; then
		fail "$check" "modprobe said '$out', expected '$errtext'"
	elif ! dmesg_new | grep -q "xen_ptswap: .*$logtext"; then
		fail "$check" "no 'xen_ptswap: ...$logtext' line in the kernel log"
	elif loaded || [ -e /sys/kernel/debug/xen_ptswap ]; then
		fail "$check" "module or its debugfs directory left behind"
	else
		pass "$check"
	fi
	info "$check: modprobe said: $out"
	info "$check: kernel log: $(dmesg_new | grep 'xen_ptswap:' | tail -n 1)"
}

# The op pv_ops.mmu.ptep_get_and_clear holds, as test/ktest/ptswap_hook_test
# register=0 shows it (that module registers nothing), or "" if unreadable.
slot_op() {
	local ko=${XPS_KTEST:-/nonexistent}/ptswap_hook_test.ko op=""

	[ -f "$ko" ] && insmod "$ko" register=0 2>/dev/null || return 0
	op=$(cat /sys/kernel/debug/ptswap_hook_test/slot 2>/dev/null)
	rmmod ptswap_hook_test
	echo "${op%% *}"
}

# Xen advertises XENFEAT_mmu_pt_update_swap but fails sub-op 4 (-ENOSYS):
# the module's probe must refuse the load before it installs anything.
# check_auto CHECK MODE REASON: `modprobe xen_ptswap` without a mode (the
# default, mode=auto) loads, parameters/mode reads MODE, the kernel log's
# "installed" line says "mode=MODE (auto: REASON" and the stats file's
# first line is "mode MODE"; then rmmod.  PASS or FAIL CHECK.
check_auto() {
	local check=$1 want=$2 reason=$3 out got line

	dmesg_mark
	if ! out=$(modprobe xen_ptswap 2>&1); then
		fail "$check" "modprobe xen_ptswap (mode=auto) failed: $out; kernel log: $(dmesg_new | grep xen_ptswap | tail -n 1)"
		return
	fi
	got=$(cat /sys/module/xen_ptswap/parameters/mode)
	line=$(dmesg_new | grep -o 'xen_ptswap: installed, .*' | tail -n 1)
	stats_settle || SV_MODE="(unreadable: $(head -c 200 "$STATS" 2>&1 | tr '\n' ' '))"
	if [ "$got" != "$want" ]; then
		fail "$check" "parameters/mode is '$got', not '$want'"
	elif [[ $line != "xen_ptswap: installed, mode=$want (auto: $reason"* ]]; then
		fail "$check" "the load's line is '$line', not 'installed, mode=$want (auto: $reason...'"
	elif [ "$SV_MODE" != "$want" ]; then
		fail "$check" "the stats file's mode line names '$SV_MODE', not '$want'"
	else
		pass "$check"
	fi
	info "$check: $line"
	check_status "$check"
	rmmod xen_ptswap || fail "$check-rmmod" "rmmod xen_ptswap failed"
}

# check_status PREFIX: with the module loaded, `tools/xen-ptswap status`
# exits 0 (PREFIX-status-ok), and exits 1 naming the invariant when the
# counters it reads break one: a copy of the stats file with calls + 1
# (PREFIX-status-catches-calls), and with readback 1 (an expected-0
# counter: PREFIX-status-catches-expected-0).  --json parses.
check_status() {
	local p=$1 st=$REPO/tools/xen-ptswap out rc calls

	out=$("$st" status 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && ! grep -q FAIL <<<"$out"; then
		pass "$p-status-ok"
	else
		fail "$p-status-ok" "exit $rc: $(tr '\n' '|' <<<"$out")"
	fi
	sed 's/^/info: status: /' <<<"$out"
	if "$st" status --json | python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if d["ok"] and d["checks"] else 1)'; then
		pass "$p-status-json"
	else
		fail "$p-status-json" "--json did not parse or did not say ok"
	fi
	if ! stats_settle; then
		fail "$p-status-catches-calls" "cannot read $STATS"
		return
	fi
	cat "$STATS" >"$T/stats.copy"
	calls=$(awk '$1 == "calls" { print $2 }' "$T/stats.copy")
	sed "s/^calls $calls\$/calls $((calls + 1))/" "$T/stats.copy" >"$T/stats.bad"
	out=$("$st" status --stats "$T/stats.bad" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -q "^counters *FAIL *calls $((calls + 1)) != " <<<"$out"; then
		pass "$p-status-catches-calls"
	else
		fail "$p-status-catches-calls" "exit $rc: $(tr '\n' '|' <<<"$out")"
	fi
	sed 's/^readback .*/readback 1/' "$T/stats.copy" >"$T/stats.bad"
	out=$("$st" status --stats "$T/stats.bad" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -q "^expected-0 *FAIL *readback 1" <<<"$out"; then
		pass "$p-status-catches-expected-0"
	else
		fail "$p-status-catches-expected-0" "exit $rc: $(tr '\n' '|' <<<"$out")"
	fi
}

check_feature_only() {
	local out lines bad features op

	features=$(cat /sys/hypervisor/properties/features 2>/dev/null)
	if [ -n "$features" ] && [ $(((0x$features >> 21) & 1)) = 1 ]; then
		pass feature-only-bit-set
	else
		fail feature-only-bit-set "cannot run because bit 21 is clear in features '$features'"
		return
	fi
	dmesg_mark
	if out=$(modprobe xen_ptswap mode=batched 2>&1); then
		fail probe-refuses-load "modprobe xen_ptswap mode=batched succeeded on a Xen without the sub-op"
		rmmod xen_ptswap 2>/dev/null
		return
	fi
	info "modprobe said: $out"
	if echo "$out" | grep -q "Operation not supported"; then
		pass probe-refuses-load-eopnotsupp
	else
		fail probe-refuses-load-eopnotsupp "modprobe said '$out'"
	fi
	# The module's own lines; the kernel's "loading out-of-tree module
	# taints kernel." (once per boot, also prefixed xen_ptswap:) is not one.
	dmesg_new | sed 's/^\[[^]]*\] //' >"$T/probe.log"
	grep 'xen_ptswap' "$T/probe.log" | grep -v ': loading out-of-tree module taints kernel\.$' >"$T/probe.own"
	lines=$(wc -l <"$T/probe.own")
	info "kernel log: $(tr '\n' '|' <"$T/probe.own")"
	if [ "$lines" = 1 ] && grep -q '^xen_ptswap: .*a probe swap of one of our own entries failed' "$T/probe.own"; then
		pass probe-one-log-line-says-why
	else
		fail probe-one-log-line-says-why "$lines xen_ptswap lines: $(head -n 3 "$T/probe.own" | tr '\n' '|')"
	fi
	if loaded || [ -d /sys/module/xen_ptswap ] || [ -e /sys/kernel/debug/xen_ptswap ]; then
		fail probe-nothing-installed "module or its debugfs directory left behind"
	else
		pass probe-nothing-installed
	fi
	op=$(slot_op)
	if [ "$op" = xen_ptep_get_and_clear ]; then
		pass probe-slot-still-default
	else
		fail probe-slot-still-default "pv_ops.mmu.ptep_get_and_clear holds '${op:-unreadable: no ptswap_hook_test?}'"
	fi
	bad=$(grep -E "$BAD_LOG|Call Trace|RIP:" "$T/probe.log" | head -n 3)
	if [ -z "$bad" ]; then
		pass probe-kernel-log-clean
	else
		fail probe-kernel-log-clean "$(echo "$bad" | tr '\n' '|')"
	fi
	grep -v 'xen_ptswap' "$T/probe.log" | head -n 5 | sed 's/^/info: other kernel log line: /'
	# mode=auto takes the failed probe for a Xen without the sub-op.
	check_auto auto-probe-fails-noswap noswap "the probe swap failed"
}

# build_prog: $PROG, the MADV_DONTNEED helper: the lab's host build
# ($XPS_CORRECTNESS_BIN/xps_dontneed, test/lab/run) if there is one, else
# gcc here (a real Dom0).  Returns 1 after a FAIL if neither works.
build_prog() {
	local bin
	if bin=$(xps_correctness_bin) && [ -x "$bin/xps_dontneed" ]; then
		cp "$bin/xps_dontneed" "$PROG" && return 0
	fi
	if ! gcc -O2 -Wall -o "$PROG" "$REPO/test/prog/xps_dontneed.c" 2>"$T/gcc.err"; then
		fail prog-build "$(head -n 3 "$T/gcc.err" | tr '\n' ' ')"
		return 1
	fi
}

# ---------------------------------------------------------------- KUnit
# The top-level Kbuild builds xen_ptswap_kunit.ko beside xen_ptswap.ko for
# kernels with CONFIG_KUNIT; use the one installed, else the lab's build
# directory.  (Building it here is not an option: kbuild under QEMU's
# software CPU takes tens of minutes.)
kunit_module() {
	local ko

	ko=$(modinfo -n xen_ptswap_kunit 2>/dev/null) && [ -f "$ko" ] && { echo "$ko"; return 0; }
	for ko in "$(dirname "${XPS_MODULE:-/nonexistent}")/xen_ptswap_kunit.ko" \
		"${XPS_LAB_RUN:-/nonexistent}/modbuild/xen_ptswap_kunit.ko"; do
		[ -f "$ko" ] && { echo "$ko"; return 0; }
	done
	return 1
}

check_kunit() {
	local res=/sys/kernel/debug/kunit/xen_ptswap_defer/results
	local n=0 status name rest ko

	if ! ko=$(kunit_module); then
		fail kunit-run "cannot run because no xen_ptswap_kunit.ko was built for $(uname -r) (CONFIG_KUNIT?)"
		return
	fi
	info "kunit: $ko"
	dmesg_mark
	if ! insmod "$ko" 2>"$T/kunit.err"; then
		fail kunit-run "insmod: $(cat "$T/kunit.err")"
		return
	fi
	if [ ! -r "$res" ]; then
		fail kunit-run "cannot run because $res does not exist (CONFIG_KUNIT_DEBUGFS?)"
		rmmod xen_ptswap_kunit
		return
	fi
	cat "$res" >"$T/kunit.results"
	rmmod xen_ptswap_kunit
	# KTAP: indented "ok|not ok N [- ]case[ # SKIP ...]" per case, then
	# "ok|not ok 1 [- ]suite" unindented (6.1 writes no dash).
	# A skipped case is not a pass.
	sed -n -e '/# SKIP/s/^[[:space:]]\{1,\}\(not \)\{0,1\}ok [0-9]\{1,\} \(- \)\{0,1\}\([^ ]*\)\(.*\)/skip \3 \4/p' \
		-e 's/^[[:space:]]\{1,\}ok [0-9]\{1,\} \(- \)\{0,1\}\([^ ]*\).*/ok \2/p' \
		-e 's/^[[:space:]]\{1,\}not ok [0-9]\{1,\} \(- \)\{0,1\}\([^ ]*\)\(.*\)/not_ok \2 \3/p' \
		"$T/kunit.results" >"$T/kunit.cases"
	# 6.1 keeps 512 bytes of log per case (KUNIT_LOG_SIZE) for debugfs:
	# a case with many failed expectations loses its own "not ok" line
	# there, so failed cases are also taken from the kernel log.
	dmesg_new | sed -n 's/^\[[^]]*\] //; s/^[[:space:]]\{1,\}not ok [0-9]\{1,\} \(- \)\{0,1\}\([^ ]*\).*/\2/p' |
		sort -u | while read -r name; do
			grep -q "^[a-z_]* $name\( \|$\)" "$T/kunit.cases" || echo "not_ok $name (from the kernel log)"
		done >>"$T/kunit.cases"
	while read -r status name rest; do
		n=$((n + 1))
		case $status in
		ok) pass "kunit-$name" ;;
		skip) fail "kunit-$name" "skipped:$rest" ;;
		*) fail "kunit-$name" "not ok${rest:+ ${rest# }} (see the kernel log)" ;;
		esac
	done <"$T/kunit.cases"
	if [ "$n" -eq 0 ]; then
		fail kunit-run "no test case results in $res: $(head -n 5 "$T/kunit.results" | tr '\n' '|')"
	elif grep -qE '^ok [0-9]+ (- )?xen_ptswap_defer' "$T/kunit.results"; then
		pass kunit-suite
	else
		fail kunit-suite "$(grep -E '^(not )?ok' "$T/kunit.results" | head -n 1)"
		sed 's/^/info: kunit results: /' "$T/kunit.results" | head -n 60
	fi
}

# ------------------------------------------------- the 256 MiB MADV_DONTNEED
check_dontneed() {
	local base_ptwr base_mmu sync_mmu batched_mmu

	# Without the module: today's trapped native xchg, one per page.
	if ! measure without -m "$MIB"; then
		fail dontneed-without-module-traps-per-page "cannot run because xenperf or the helper failed: $(head -n 2 "$T/without.err" | tr '\n' ' ')"
		return
	fi
	base_ptwr=$M_ptwr base_mmu=$M_mmu
	if [ "$base_ptwr" -ge "$M_pages" ]; then
		pass dontneed-without-module-traps-per-page
	else
		fail dontneed-without-module-traps-per-page "$base_ptwr ptwr emulations for $M_pages pages"
	fi

	if ! modprobe xen_ptswap 2>"$T/modprobe.err"; then
		fail modprobe "$(cat "$T/modprobe.err")"
		return
	fi
	pass modprobe
	if [ "$(cat /sys/module/xen_ptswap/parameters/mode)" = batched ]; then
		pass mode-default-batched
	else
		fail mode-default-batched "mode is $(cat /sys/module/xen_ptswap/parameters/mode)"
	fi
	if [ "$(stat -c %a /sys/module/xen_ptswap/parameters/mode)" = 444 ]; then
		pass mode-read-only
	else
		fail mode-read-only "permissions $(stat -c %a /sys/module/xen_ptswap/parameters/mode)"
	fi

	# Batched, private memory written to: dirty entries, all deferred.
	if ! measure batched -m "$MIB"; then
		fail dontneed-batched "the run failed: $(cat "$T/batched.err")"
		return
	fi
	batched_mmu=$M_mmu
	if [ "$S_calls" -ge "$M_pages" ] && [ "$S_deferred" -ge "$M_pages" ]; then
		pass dontneed-batched-counts-every-page
	else
		fail dontneed-batched-counts-every-page "calls=$S_calls deferred=$S_deferred for $M_pages pages"
	fi
	if [ $((S_unpinned + S_none + S_deferred + S_swapped + S_fallbacks)) -eq "$S_calls" ]; then
		pass dontneed-batched-classes-sum-to-calls
	else
		fail dontneed-batched-classes-sum-to-calls "calls=$S_calls, classes sum to $((S_unpinned + S_none + S_deferred + S_swapped + S_fallbacks))"
	fi
	if [ "$S_hcall_errors" -eq 0 ] && [ "$S_fallbacks" -eq 0 ]; then
		pass dontneed-batched-no-hypercall-errors
	else
		fail dontneed-batched-no-hypercall-errors "hcall_errors=$S_hcall_errors fallbacks=$S_fallbacks"
	fi
	ptwr_under_1pct dontneed-batched-ptwr-under-1pct "$base_ptwr"
	no_trap_per_page dontneed-batched-no-trap-per-page
	batched_runs_ab || return

	# Batched, shared memory read-faulted: writable clean entries, never
	# deferred, one MMU_PT_UPDATE_SWAP each.
	if measure shared-clean -m "$MIB" -s -r; then
		if [ "$S_swapped" -ge "$M_pages" ] && [ "$S_deferred" -lt "$M_pages" ] &&
			[ "$S_hcall_errors" -eq 0 ]; then
			pass dontneed-writable-clean-swapped-not-deferred
		else
			fail dontneed-writable-clean-swapped-not-deferred "swapped=$S_swapped deferred=$S_deferred hcall_errors=$S_hcall_errors for $M_pages pages"
		fi
		ptwr_under_1pct dontneed-writable-clean-ptwr-under-1pct "$base_ptwr"
		no_trap_per_page dontneed-writable-clean-no-trap-per-page
	else
		fail dontneed-writable-clean-swapped-not-deferred "the run failed: $(cat "$T/shared-clean.err")"
	fi

	# Data survives batched clears (private pages read zero, shared keep
	# their data) over several rounds.
	if "$PROG" -m 32 -n 4 -c >/dev/null 2>"$T/check.err" &&
		"$PROG" -m 32 -n 4 -c -s >/dev/null 2>>"$T/check.err"; then
		pass dontneed-batched-data-intact
	else
		fail dontneed-batched-data-intact "$(head -n 1 "$T/check.err")"
	fi

	if ! rmmod xen_ptswap; then
		fail rmmod "rmmod xen_ptswap failed"
		return
	fi
	pass rmmod

	# Sync mode: one MMU_PT_UPDATE_SWAP per page, nothing deferred.
	if ! modprobe xen_ptswap mode=sync 2>"$T/modprobe.err"; then
		fail modprobe-sync "$(cat "$T/modprobe.err")"
		return
	fi
	if measure sync -m "$MIB"; then
		sync_mmu=$M_mmu
		if [ "$S_deferred" -eq 0 ] && [ "$S_swapped" -ge "$M_pages" ] &&
			[ $((S_unpinned + S_none + S_swapped + S_fallbacks)) -eq "$S_calls" ] &&
			[ "$S_hcall_errors" -eq 0 ]; then
			pass dontneed-sync-one-swap-per-page
		else
			fail dontneed-sync-one-swap-per-page "calls=$S_calls deferred=$S_deferred swapped=$S_swapped hcall_errors=$S_hcall_errors for $M_pages pages"
		fi
		ptwr_under_1pct dontneed-sync-ptwr-under-1pct "$base_ptwr"
		no_trap_per_page dontneed-sync-no-trap-per-page
		if [ "$sync_mmu" -ge "$M_pages" ] && [ "$batched_mmu" -lt "$sync_mmu" ]; then
			pass dontneed-batched-fewer-mmu-updates-than-sync
		else
			fail dontneed-batched-fewer-mmu-updates-than-sync "mmu_update calls: batched $batched_mmu, sync $sync_mmu, pages $M_pages"
		fi
		info "mmu_update calls per 1000 PTEs: without $((base_mmu * 1000 / M_pages)), batched $((batched_mmu * 1000 / M_pages)), sync $((sync_mmu * 1000 / M_pages))"
	else
		fail dontneed-sync-one-swap-per-page "the run failed: $(cat "$T/sync.err")"
	fi
	rmmod xen_ptswap || fail rmmod-sync "rmmod xen_ptswap failed"

	# After rmmod the old op is back: every clear traps again.
	if measure after -m "$MIB"; then
		if [ "$M_ptwr" -ge "$M_pages" ] && [ ! -e /sys/kernel/debug/xen_ptswap ]; then
			pass rmmod-restores-native-clear
		else
			fail rmmod-restores-native-clear "$M_ptwr ptwr emulations for $M_pages pages after rmmod"
		fi
	else
		fail rmmod-restores-native-clear "the run failed: $(cat "$T/after.err")"
	fi
}

# ---------------------------- mode noswap (the stock-Xen mode), patched Xen
# The same 256 MiB runs as check_dontneed with mode=noswap: what the
# deferral rule allows is queued exactly as in batched mode; a writable,
# clean entry is cleared with the native xchg, which Xen traps (one ptwr
# emulation each), never with MMU_PT_UPDATE_SWAP.
check_noswap_patched() {
	local base_ptwr

	if ! measure noswap-base -m "$MIB"; then
		fail noswap-dirty-queued "cannot run because the run without the module failed: $(cat "$T/noswap-base.err")"
		return
	fi
	base_ptwr=$M_ptwr
	if ! modprobe xen_ptswap mode=noswap 2>"$T/modprobe.err"; then
		fail modprobe-noswap "$(cat "$T/modprobe.err")"
		return
	fi
	pass modprobe-noswap
	if measure noswap-dirty -m "$MIB"; then
		if [ "$S_deferred" -ge "$M_pages" ] && [ "$S_swapped" -eq 0 ] &&
			[ $((S_unpinned + S_none + S_deferred + S_native + S_fallbacks)) -eq "$S_calls" ] &&
			[ "$S_hcall_errors" -eq 0 ]; then
			pass noswap-dirty-queued
		else
			fail noswap-dirty-queued "calls=$S_calls deferred=$S_deferred native=$S_native swapped=$S_swapped hcall_errors=$S_hcall_errors for $M_pages pages"
		fi
		ptwr_under_1pct noswap-dirty-ptwr-under-1pct "$base_ptwr"
		info "noswap, private dirty: ptwr emulations per 1000 PTEs $((M_ptwr * 1000 / M_pages)) (without the module $((base_ptwr * 1000 / M_pages)))"
	else
		fail noswap-dirty-queued "the run failed: $(cat "$T/noswap-dirty.err")"
	fi
	if measure noswap-clean -m "$MIB" -s -r; then
		if [ "$S_native" -ge "$M_pages" ] && [ "$S_swapped" -eq 0 ] &&
			[ "$S_deferred" -lt "$M_pages" ] && [ "$S_hcall_errors" -eq 0 ]; then
			pass noswap-writable-clean-trapped-not-swapped
		else
			fail noswap-writable-clean-trapped-not-swapped "native=$S_native swapped=$S_swapped deferred=$S_deferred hcall_errors=$S_hcall_errors for $M_pages pages"
		fi
		if [ "$M_ptwr" -ge "$M_pages" ]; then
			pass noswap-writable-clean-one-ptwr-per-pte
		else
			fail noswap-writable-clean-one-ptwr-per-pte "$M_ptwr ptwr emulations for $M_pages pages"
		fi
		info "noswap, shared clean: ptwr emulations per 1000 PTEs $((M_ptwr * 1000 / M_pages))"
	else
		fail noswap-writable-clean-trapped-not-swapped "the run failed: $(cat "$T/noswap-clean.err")"
	fi
	rmmod xen_ptswap || fail rmmod-noswap "rmmod xen_ptswap failed"
}

# ------------------------------ mode noswap on a Xen without the sub-op
# Stock Xen has no perf counters: the checks are the module's counters and
# the data.  Private and shared written memory (dirty entries: queued;
# the helper checks every page, 4 rounds of 32 MiB) and shared
# read-faulted memory (writable clean entries: the native xchg).
check_noswap_stock() {
	local out

	expect_load_fails load-stock-xen-sync-eopnotsupp "Operation not supported" \
		"mode=noswap" mode=sync
	dmesg_mark
	if ! out=$(modprobe xen_ptswap mode=noswap 2>&1); then
		fail modprobe-noswap-stock-xen "$out; kernel log: $(dmesg_new | grep xen_ptswap | tail -n 1)"
		return
	fi
	pass modprobe-noswap-stock-xen
	if ! stats_settle; then
		fail noswap-stock-xen-data-intact "cannot read $STATS: $(tr '\n' ' ' <"$STATS" 2>/dev/null)"
		rmmod xen_ptswap
		return
	fi
	local d0=${SV[deferred]:-0} n0=${SV[native]:-0}
	if "$PROG" -m 32 -n 4 -c >/dev/null 2>"$T/check.err" &&
		"$PROG" -m 32 -n 4 -c -s >/dev/null 2>>"$T/check.err" &&
		"$PROG" -m 32 -n 2 -s -r >/dev/null 2>>"$T/check.err"; then
		pass noswap-stock-xen-data-intact
	else
		fail noswap-stock-xen-data-intact "$(head -n 1 "$T/check.err")"
	fi
	if stats_settle && [ $((${SV[deferred]:-0} - d0)) -gt 0 ] &&
		[ $((${SV[native]:-0} - n0)) -gt 0 ] && [ "${SV[swapped]:-0}" -eq 0 ] &&
		[ "${SV[hcall_errors]:-0}" -eq 0 ]; then
		pass noswap-stock-xen-queues-and-traps
	else
		fail noswap-stock-xen-queues-and-traps "counters: $(tr '\n' ' ' <"$STATS") (want deferred and native growing, swapped and hcall_errors 0)"
	fi
	info "noswap on stock Xen: $(tr '\n' ' ' <"$STATS")"
	rmmod xen_ptswap || fail rmmod-noswap-stock-xen "rmmod xen_ptswap failed"
	dmesg_clean noswap-stock-xen-kernel-log
}

# ---------------------------------- $CYCLES cycles under unmapping load
check_cycles() {
	local i mode bad=0 why="" pid

	dmesg_mark
	# Two processes keep faulting and releasing memory (private dirty and
	# shared clean entries), checking their data every round.
	for a in "-c" "-c -s"; do
		# shellcheck disable=SC2086
		taskset -c 1 "$PROG" -m 16 -n 0 $a >/dev/null 2>"$T/bg.$$.$RANDOM.err" &
		bg_pids+=($!)
	done
	for i in $(seq 1 "$CYCLES"); do
		mode=batched
		[ $((i % 2)) -eq 0 ] && mode=sync
		if ! modprobe xen_ptswap mode=$mode 2>"$T/cyc.err"; then
			why="cycle $i: modprobe: $(cat "$T/cyc.err")"
			bad=1
			break
		fi
		if ! "$PROG" -m 4 -c >/dev/null 2>"$T/cyc.err"; then
			why="cycle $i: helper: $(cat "$T/cyc.err")"
			bad=1
		fi
		if ! stats_settle; then
			why="cycle $i: counters never consistent: $(cat "$STATS")"
			bad=1
		elif [ "${SV[calls]:-0}" -lt 1024 ] || [ "${SV[hcall_errors]:-0}" -ne 0 ]; then
			why="cycle $i: counters: $(cat "$STATS")"
			bad=1
		fi
		if ! rmmod xen_ptswap 2>"$T/cyc.err"; then
			why="cycle $i: rmmod: $(cat "$T/cyc.err")"
			bad=1
			break
		fi
		[ $bad = 1 ] && break
		[ $((i % 20)) -eq 0 ] && info "cycles: $i done"
	done
	for pid in "${bg_pids[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			why="$why background unmapper $pid exited with $?: $(cat "$T"/bg.*.err | head -n 1)"
			bad=1
		fi
		kill "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	bg_pids=()
	if [ $bad = 0 ]; then
		pass "cycles-$CYCLES-load-use-unload"
	else
		fail "cycles-$CYCLES-load-use-unload" "$why"
	fi
	dmesg_clean cycles-no-oops-or-warning
}

# ------------------------------------------------------------------- main
info "xen=${XPS_LAB_XEN:-?} kernel=${XPS_LAB_KERNEL:-?} $(uname -r)" \
	"features=$(cat /sys/hypervisor/properties/features 2>/dev/null || echo none)"

if ! modinfo xen_ptswap >/dev/null 2>&1; then
	fail modinfo "cannot run because the lab installed no xen_ptswap module for $(uname -r)"
	exit 1
fi

case ${XPS_LAB_KERNEL:-patched}/${XPS_LAB_XEN:-patched} in
native/*)
	expect_load_fails load-native-enodev "No such device" "not a Xen PV domain"
	;;
stock/*)
	expect_load_fails load-stock-kernel-eopnotsupp "Operation not supported" \
		"no pv_ops.mmu.ptep_get_and_clear hook"
	;;
patched/feature-only|debug/feature-only)
	check_feature_only
	;;
patched/stock|debug/stock|patched/stock-4.20|debug/stock-4.20)
	expect_load_fails load-stock-xen-eopnotsupp "Operation not supported" \
		"XENFEAT_mmu_pt_update_swap clear.*mode=noswap" mode=batched
	check_auto auto-stock-xen-noswap noswap "Xen does not offer MMU_PT_UPDATE_SWAP"
	build_prog || exit 1
	check_noswap_stock
	;;
patched/patched|debug/patched|patched/debug|debug/debug)
	expect_load_fails bad-mode-einval "Invalid argument" "invalid mode" mode=bogus
	check_auto auto-patched-xen-batched batched "Xen offers MMU_PT_UPDATE_SWAP and the probe swap passed"
	build_prog || exit 1
	check_kunit
	check_dontneed
	check_noswap_patched
	check_cycles
	;;
*)
	fail variant "cannot run because XPS_LAB_KERNEL/XPS_LAB_XEN is ${XPS_LAB_KERNEL:-}/${XPS_LAB_XEN:-}"
	;;
esac

finish
