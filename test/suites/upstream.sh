#!/bin/bash
# test/suites/upstream.sh - the upstream form of the Linux side
# (test/linux-upstream/7.3/), with no module: Xen PV installs the batched
# PTE clear itself at boot when Xen advertises XENFEAT_mmu_pt_update_swap.
#
# Usage (inside the lab's Dom0, from the clone's root, as root):
#   test/lab/run --linux 7.3 --series upstream -- bash test/suites/upstream.sh
#
# Checks, in order:
#   series                the lab booted the upstream form ($XPS_LAB_SERIES)
#   no-module             xen_ptswap is not loaded (nothing of it is built)
#   feature-advertised    Xen advertises XENFEAT_mmu_pt_update_swap (bit 21
#                         of /sys/hypervisor/properties/features)
#   installed-at-boot     the kernel logged at boot that it installed the
#                         batched clear
#   knob-exists           /sys/module/xen/parameters/batched_pte_clear reads Y
#   knob-refuses-garbage  writing "maybe" to it fails, the value stays
#   knob-off-bypasses     with N, a MADV_DONTNEED of 4 MiB of dirty memory
#                         does not reach the batched clear (its "calls"
#                         counter does not move)
#   knob-on-defers        with Y, the same zap queues at least 1024
#                         clears ("deferred"), with no hypercall error
#   swap-clean            with Y, a zap of 4 MiB of shared memory read in
#                         (clean, writable: not deferrable) swaps at least
#                         1024 entries with MMU_PT_UPDATE_SWAP ("swapped")
#   correctness/...       test/suites/correctness.sh builtin: the batched
#                         correctness programs, stress-ng with the knob
#                         flipped under it, the counters (its own checks,
#                         prefixed)
#   ab-ran                tools/ab-run --builtin --bench madv: knob off
#                         (trapped xchg) against on, in one boot, for
#                         $XPS_AB_ROUNDS rounds (default 5) of
#                         $XPS_AB_SIZE (default 64M)
#   ab-on-faster          the median with the knob on is below the one off
#   ab-off-traps          off: 900..1100 ptwr emulations per 1000 PTEs
#   ab-on-no-traps        on: at most 10 ptwr emulations and at least 900
#                         deferred clears per 1000 PTEs
#   kernel-log, end/...   end_checks (lib.sh)
# $XPS_UPSTREAM_SKIP: parts left out, space- or comma-separated:
# correctness, ab (each named in a "# skipped" note).
# The A/B's table, CSVs and the correctness output are copied into the lab
# run's folder (/xps-lab/upstream/, on the host under $XPS_CACHE/runs/RUN/).
# Output: PASS/FAIL lines, "N passed, N failed"; exit 0 iff nothing failed.

set -u
SUITES=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SUITES/../.." && pwd)
WORK=/tmp/xps-upstream
# shellcheck source=test/suites/lib.sh
. "$SUITES/lib.sh"
KNOB=$BUILTIN_KNOB
STATS=$BUILTIN_STATS
XENFEAT_mmu_pt_update_swap=21

boot_line=$(dmesg 2>/dev/null | grep -m1 'zapped PTEs are cleared with MMU_PT_UPDATE_SWAP')
start_suite
BIN=$(xps_correctness_bin) || BIN=
[ -n "$BIN" ] && [ -x "$BIN/xen_console" ] && "$BIN/xen_console" clear >/dev/null 2>&1
OUT=$WORK/out
mkdir -p "$OUT"
note "upstream: kernel $(uname -r), lab run ${XPS_LAB_RUN:-none}, Xen features $(cat /sys/hypervisor/properties/features 2>/dev/null || echo unknown)"

# zap KIND: one MADV_DONTNEED of 4 MiB (1024 pages): "dirty" private
# memory written to, or "clean" shared memory only read (as madv-bench -c).
zap() {
	python3 - "$1" <<'PY'
import mmap, sys
n = 4 << 20
if sys.argv[1] == "dirty":
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_NOHUGEPAGE)   # PTEs, as Xen PV has anyway
    for i in range(0, n, 4096):
        m[i] = 1
else:
    # Never written: a read fault maps the new shmem folio writable and
    # clean (a dirty folio would be mapped dirty: set_pte_range()).
    m = mmap.mmap(-1, n, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    s = 0
    for i in range(0, n, 4096):
        s += m[i]
m.madvise(mmap.MADV_DONTNEED)
PY
}

# delta NAME: how much counter NAME grew since the last stats_snap.
declare -A S0
stats_snap() { stats_settle || return 1; S0=(); local k; for k in "${!SV[@]}"; do S0[$k]=${SV[$k]}; done; }
delta() { echo $((${SV[$1]:-0} - ${S0[$1]:-0})); }

# ------------------------------------------------------------ the kernel
if [ "${XPS_LAB_SERIES:-}" = upstream ]; then
	pass series
else
	fail series "\$XPS_LAB_SERIES is '${XPS_LAB_SERIES:-}', not upstream: boot with test/lab/run --linux 7.3 --series upstream"
fi
if xps_loaded; then
	fail no-module "xen_ptswap is loaded"
else
	pass no-module
fi
feat=$(cat /sys/hypervisor/properties/features 2>/dev/null)
if [[ $feat =~ ^[0-9a-fA-F]+$ ]] && (((0x$feat >> XENFEAT_mmu_pt_update_swap) & 1)); then
	pass feature-advertised
else
	fail feature-advertised "features '$feat' lack bit $XENFEAT_mmu_pt_update_swap (a Xen without test/xen-patch/?)"
fi
if [ -n "$boot_line" ]; then
	pass installed-at-boot
	note "boot: ${boot_line#*] }"
else
	fail installed-at-boot "no 'zapped PTEs are cleared with MMU_PT_UPDATE_SWAP' line in the boot log"
fi

# --------------------------------------------------------------- the knob
knob=$(cat "$KNOB" 2>/dev/null)
if [ "$knob" = Y ]; then
	pass knob-exists
else
	fail knob-exists "$KNOB reads '${knob:-nothing (missing)}', want Y"
fi
if echo maybe >"$KNOB" 2>/dev/null; then
	fail knob-refuses-garbage "writing 'maybe' to $KNOB succeeded"
elif [ "$(cat "$KNOB" 2>/dev/null)" != "$knob" ]; then
	fail knob-refuses-garbage "refused, but it now reads '$(cat "$KNOB")'"
else
	pass knob-refuses-garbage
fi

if ! [ -r "$STATS" ]; then
	fail knob-off-bypasses "cannot run because $STATS is missing"
	fail knob-on-defers "cannot run because $STATS is missing"
	fail swap-clean "cannot run because $STATS is missing"
else
	note "counters at the start: $(tr '\n' ' ' <"$STATS")"
	if ! echo N 2>/dev/null >"$KNOB" || [ "$(cat "$KNOB")" != N ]; then
		fail knob-off-bypasses "cannot switch $KNOB to N (reads '$(cat "$KNOB" 2>/dev/null)')"
	elif ! stats_snap; then
		fail knob-off-bypasses "cannot read $STATS"
	else
		zap dirty
		stats_settle
		if [ "$(delta calls)" = 0 ]; then
			pass knob-off-bypasses
		else
			fail knob-off-bypasses "with N, 1024 zapped entries made $(delta calls) calls of the batched clear (want 0)"
		fi
	fi
	if ! echo Y 2>/dev/null >"$KNOB" || [ "$(cat "$KNOB")" != Y ]; then
		fail knob-on-defers "cannot switch $KNOB back to Y (reads '$(cat "$KNOB" 2>/dev/null)')"
	elif ! stats_snap; then
		fail knob-on-defers "cannot read $STATS"
	else
		zap dirty
		stats_settle
		d=$(delta deferred) e=$(delta hcall_errors)
		if [ "$d" -ge 1024 ] && [ "$e" = 0 ]; then
			pass knob-on-defers
		else
			fail knob-on-defers "with Y, 1024 dirty entries zapped: deferred +$d, hcall_errors +$e (want >= 1024 and 0)"
		fi
		note "dirty zap with Y: calls +$(delta calls) deferred +$d swapped +$(delta swapped)"
		stats_snap
		zap clean
		stats_settle
		s=$(delta swapped) e=$(delta hcall_errors)
		if [ "$s" -ge 1024 ] && [ "$e" = 0 ]; then
			pass swap-clean
		else
			fail swap-clean "with Y, 1024 clean writable entries zapped: swapped +$s, hcall_errors +$e (want >= 1024 and 0)"
		fi
		note "clean zap with Y: calls +$(delta calls) deferred +$(delta deferred) swapped +$s"
	fi
fi
klog_take "$KLOG"

# skip PART: PART is in $XPS_UPSTREAM_SKIP (and a note says so).
skip() {
	local list=${XPS_UPSTREAM_SKIP:-}
	case " ${list//,/ } " in *" $1 "*) note "skipped: $1 (XPS_UPSTREAM_SKIP)"; return 0 ;; esac
	return 1
}

# ------------------------------------------------------------ correctness
if ! skip correctness; then
t0=$SECONDS
bash "$SUITES/correctness.sh" builtin >"$OUT/correctness.out" 2>"$OUT/correctness.out.err"
rc=$?
grep -v '^[0-9]* passed, [0-9]* failed$' "$OUT/correctness.out" >"$WORK/c.out"
cp "$OUT/correctness.out.err" "$WORK/c.out.err"
take_verdicts correctness correctness/ "$WORK/c.out" $rc 3600
note "correctness.sh builtin: $((SECONDS - t0)) s, $(tail -n 1 "$OUT/correctness.out")"
echo Y >"$KNOB" 2>/dev/null
dmesg -c >/dev/null 2>&1	# correctness.sh checked its own kernel log
fi

# ------------------------------------------------------------- the A/B
if ! skip ab; then
rounds=${XPS_AB_ROUNDS:-5}
size=${XPS_AB_SIZE:-64M}
t0=$SECONDS
python3 "$REPO/tools/ab-run" --builtin --bench madv --size "$size" --rounds "$rounds" \
	--csv "$OUT/ab-madv.csv" --png none >"$OUT/ab-madv.out" 2>"$OUT/ab-madv.err"
rc=$?
sed 's/^/# ab-run: /' "$OUT/ab-madv.out"
grep -v '^ab-run: round ' "$OUT/ab-madv.err" | sed 's/^/# ab-run: /' | head -n 20
note "ab-run: $((SECONDS - t0)) s"
SUM=$OUT/ab-madv-summary.csv
# col VARIANT KEY: a value of the summary CSV.
col() {
	python3 - "$SUM" "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["variant"] == sys.argv[2]:
        print(r.get(sys.argv[3], ""))
PY
}
if [ $rc = 0 ] && [ -s "$SUM" ]; then
	pass ab-ran
	off=$(col off median_ms) on=$(col on median_ms)
	ratio=$(col on vs_unloaded)
	if python3 -c "import sys; sys.exit(not (float('$on') < float('$off')))" 2>/dev/null; then
		pass ab-on-faster
	else
		fail ab-on-faster "median ms on $on, off $off"
	fi
	note "A/B MADV_DONTNEED $size, $rounds rounds, run ${XPS_LAB_RUN:-?}: off $off ms, on $on ms, on/off $ratio"
	p_off=$(col off ptwr_per_k) p_on=$(col on ptwr_per_k) d_on=$(col on deferred_per_k)
	if python3 -c "import sys; sys.exit(not (900 <= float('$p_off') <= 1100))" 2>/dev/null; then
		pass ab-off-traps
	else
		fail ab-off-traps "ptwr per 1000 PTEs with the knob off: '$p_off' (want 900..1100)"
	fi
	if python3 -c "import sys; sys.exit(not (float('$p_on') <= 10 and float('$d_on') >= 900))" 2>/dev/null; then
		pass ab-on-no-traps
	else
		fail ab-on-no-traps "with the knob on: ptwr per 1000 PTEs '$p_on' (want <= 10), deferred '$d_on' (want >= 900)"
	fi
else
	fail ab-ran "tools/ab-run exited with status $rc: $(tail -n 2 "$OUT/ab-madv.err" | tr '\n' ' ')"
fi
[ "$(cat "$KNOB" 2>/dev/null)" = Y ] || note "the knob reads '$(cat "$KNOB" 2>/dev/null)' after the A/B"
fi

end_checks "$KLOG"
[ -d /xps-lab ] && cp -r "$OUT" /xps-lab/upstream 2>/dev/null
note "upstream: $SECONDS s in all"
finish
